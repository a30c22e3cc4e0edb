"""ZeRO's stages against the replicated step, side by side in one run (notebook 12).

    .venv/bin/python benchmarks/zero.py [--devices 4] [--width 512] [--units 32] [--repeat 9]

A perceptron of ``--units`` dense layers of ``--width`` x ``--width`` (helpers.zero: one flat unit per
layer, padded to a multiple of k), Adam, float32, on k CPU stand-ins (the ZeroLayer spans CPU
stand-ins only: notebook 12's aside). It prints, as ratios (the goals of issue 38 in brackets;
nothing is asserted):

* memory per device, from MXNet's own storage counters in a fresh process on MXNet's synchronous
  engine, so that the peak is the step's own, the same in every run (helpers.zero.measure_stages,
  helpers.memory.in_fresh_process): what each stage keeps between steps, and the most it holds during a
  step, against the replicated step; and ZeRO-3's peak against 1/k of the replicated step's weights,
  gradients and Adam state plus one unit's whole float32 weights [<= 1.1];
* bytes sent per device and step (helpers.comm.CommStats): each stage / replicated, the replicated
  step summing with the ring [ZeRO-3: 1.5 +- 0.05];
* ZeRO-3's step with / without prefetching the next unit's gather, over an emulated link
  (helpers.link) on which one unit's gather takes what the unit's forward computes here (measured
  first, 20 layers in a row), in turn, round after round (helpers.timing.compare), on min(k, 2)
  stand-ins and ``--time-units`` layers of ``--time-width`` [<= 0.8]; and, from the profiler, the same
  ratio for the forward pass alone: in backward the gather runs beside the layer's weight-free work
  (its weight and bias gradients) even without prefetching, which leaves a prefetch little to hide
  there (notebook 12's aside).

On stand-ins the times measure this machine's cores, shared by the devices: a busy machine stretches
both steps (the ratio then drifts towards 1), and the per-layer costs of Python and the engine weigh
more than on GPUs.
"""
import argparse

import numpy as np
import mxnet as mx
from mxnet import nd

from helpers import zero
from helpers.comm import CommStats
from helpers.data import load_data_fashion_mnist
from helpers.link import Link
from helpers.memory import in_fresh_process
from helpers.sharding import adam_updaters
from helpers.timing import compare, time_it
from helpers.tracing import trace, traceable

STAGES = zero.STAGES + ('ZeRO-3 under autograd',)


def memory(k, sizes, batch):
    units = zero.mlp_units(sizes)
    n = sum(u.fan_in * u.fan_out + u.fan_out for u in units)
    unit = max(4 * -(-(u.fan_in * u.fan_out + u.fan_out) // k) * k for u in units)
    cases = [[k, s] for s in STAGES]
    found = dict(zip(STAGES, in_fresh_process('helpers.zero.measure_stages', cases, sizes, batch, synchronous=True)))
    kept = {s: max(f['weights']) + max(f['gradients']) + max(f['optimizer state']) for s, f in found.items()}
    peak = {s: max(f['peak']) for s, f in found.items()}
    print(f'memory per device, MB (busiest device; {n:,} parameters, {len(units)} units, k = {k}):')
    for s in STAGES:
        print(f'  {s:22s} kept {kept[s] / 1e6:8.2f}  ({kept[s] / kept["replicated"]:.3f} of replicated)   '
              f'peak {peak[s] / 1e6:8.2f}  ({peak[s] / peak["replicated"]:.3f})')
    bound = kept['replicated'] / k + unit
    print(f'  ZeRO-3 peak / (replicated / k + one unit\'s whole weights, {bound / 1e6:.2f} MB) = '
          f'{peak["ZeRO-3"] / bound:.3f}   [goal <= 1.1]')
    print(f'  ZeRO-3 kept / (replicated / k) = {kept["ZeRO-3"] / (kept["replicated"] / k):.4f} (the padding)')


def traffic(devices, sizes, X, y):
    units = zero.mlp_units(sizes)
    flats = zero.init_mlp(units, 0)
    sent = {}
    for s in zero.STAGES:
        stats = CommStats()
        zero.step(s, X, y, zero.build(s, flats, units, devices), devices, adam_updaters(devices, 1e-3, len(y)),
                  send=stats.send)
        sent[s] = max(stats.per_device(devices))
    print(f'bytes sent per device and step (k = {len(devices)}): ' +
          ', '.join(f'{s} {sent[s] / 1e6:.2f} MB ({sent[s] / max(sent["replicated"], 1):.3f})' for s in zero.STAGES) +
          '   [ZeRO-3 / replicated: 1.5 +- 0.05]')


def prefetching(devices, width, n_units, batch, repeat):
    k = len(devices)
    units = zero.mlp_units([width] * (n_units + 1))
    flats = zero.init_mlp(units, 0)
    rng = np.random.default_rng(0)
    X = nd.array(rng.standard_normal((batch, width)), dtype='float32')
    y = nd.array(rng.integers(0, width, batch), dtype='float32')
    xs = [nd.ones((batch // k, width), ctx=d) for d in devices]
    ws = [flats[0].copyto(d) for d in devices]
    compute = min(time_it(lambda: [[zero.dense(x, w, units[0]) for x, w in zip(xs, ws)] for _ in range(20)],
                          repeat=3) for _ in range(3)) / 20
    chunk = 4 * -(-flats[0].size // k)
    link = Link(alpha=1e-4, bandwidth=chunk * (k - 1) / compute)
    print(f'one {width} x {width} unit computes its forward in {compute * 1e3:.2f} ms on {k} stand-ins; '
          f'its gather over {link}: {(k - 1) * link.seconds(chunk) * 1e3:.2f} ms')
    runs = {}
    for p in (False, True):
        model, updaters = zero.build('ZeRO-3', flats, units, devices), adam_updaters(devices, 1e-3, batch)
        runs[p] = lambda p=p, m=model, u=updaters: zero.train_batch_zero(X, y, m, devices, u, link.send, p)
    t = compare({'without': runs[False], 'with': runs[True]}, repeat=repeat)
    print(f'ZeRO-3 step over the link: without prefetching {t["without"] * 1e3:.0f} ms, with {t["with"] * 1e3:.0f} ms; '
          f'with / without = {t["with"] / t["without"]:.3f}   [goal <= 0.8]')
    # Where the step's forward ends, round after round: the backward's gather already runs beside the
    # layer's weight-free work (dz' x, db), prefetched or not (notebook 12's aside).
    forward = {p: [] for p in runs}
    for _ in range(repeat):
        for p, run in runs.items():
            forward[p].append(zero.forward_end(trace(run)[1]))
    f = {p: np.median(ms) for p, ms in forward.items()}
    print(f'  its forward alone (traced, medians): without {f[False]:.0f} ms, with {f[True]:.0f} ms; '
          f'with / without = {f[True] / f[False]:.3f}')


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--devices', type=int, default=4)
    p.add_argument('--width', type=int, default=512, help='width of the memory and bytes model')
    p.add_argument('--units', type=int, default=32, help='units (layers) of the memory and bytes model')
    p.add_argument('--time-width', type=int, default=1024)
    p.add_argument('--time-units', type=int, default=6)
    p.add_argument('--batch', type=int, default=512, help='batch of the timed steps and of the byte count')
    p.add_argument('--repeat', type=int, default=9)
    args = p.parse_args()
    devices = [mx.cpu(i) for i in range(args.devices)]
    sizes = [args.width] * (args.units + 1)
    print(f'{args.devices} CPU stand-ins; Adam, float32')
    if len(traceable(devices)) == len(devices):
        memory(len(devices), sizes, 8)
    else:
        print(f'memory: not measured (MXNet counts memory per CPU stand-in only for {len(traceable(devices))} here)')
    X, y = next(iter(load_data_fashion_mnist(args.batch, n_train=args.batch, seed=0)[0]))
    traffic(devices, [784] + sizes[1:], X, y)
    if len(devices) > 1:
        prefetching(devices[:2], args.time_width, args.time_units, args.batch, args.repeat)


if __name__ == '__main__':
    main()
