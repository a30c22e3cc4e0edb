"""The emulated link (helpers.link) against the alpha-beta model, side by side in one run (notebooks
04 and 10).

    .venv/bin/python benchmarks/link.py [--quick] [--repeat 3]

1. **Allreduce.** Notebook 04's naive and ring allreduce over one link, at k = 2, 4 and 8 and at sizes
   from latency-dominated (4 KiB per device) to bandwidth-dominated (16 MiB), each against its model
   (helpers.costmodel, with alpha raised by the emulator's own cost per message, helpers.link.overhead,
   and gamma by the stand-ins' additions). One line per case: ``measured/model <case> <ratio>``; then
   naive/ring at each k on the largest size. Goal: every ratio within 0.85-1.15; naive/ring >= 5 at
   k = 8 (the model: 7.5).
2. **Overlap** (unless ``--quick``): notebook 10's step, ResNet-18 at width 16 on two stand-ins, batch
   32, over ``preset('25 GbE')`` (the gradients' time on the link about the backward pass's): (a) wait,
   then send, against (b) send as ready, per gradient with the naive allreduce. Goal: (b) hides
   >= 70 % of its communication; (a)/(b) >= 1.3.
3. **Buckets** (unless ``--quick``): the same 76 gradients with the ring, per gradient and in buckets
   of 4 KiB to 4 MiB, over ``preset('100 GbE')``, where latency weighs more beside the bytes,
   measured and modelled (the ring's cost summed over the buckets, alpha raised by the stand-ins'
   own cost per ring step). With nothing to overlap, one bucket is always the fastest; the sweet spot
   is where the curve flattens, the smallest bucket within 1.5 times the best time.
   Goal: per gradient / best bucket >= 3; the measured sweet spot within 2 times the model's.

Every variant of a part runs in turn, round after round (helpers.timing.compare). Prints; asserts
nothing.
"""
import argparse
import time
from functools import partial

import numpy as np
import mxnet as mx
from mxnet import autograd, nd

from helpers import tracing
from helpers.buckets import backward_and_send, bucketed_time, overlap, time_buckets
from helpers.comm import allreduce_naive, allreduce_ring
from helpers.costmodel import cost_naive, cost_ring
from helpers.link import Link, overhead, preset
from helpers.models import resnet18
from helpers.split import split_batch
from helpers.timing import compare, time_it
from helpers.train import loss, sgd

KiB, MiB = 2 ** 10, 2 ** 20


def gamma(devices, nbytes, repeat=5):
    """Seconds per byte of ``a += b`` on every device at once (the additions of a ring step)."""
    a = [nd.ones(nbytes // 4, ctx=d) for d in devices]
    b = [nd.ones(nbytes // 4, ctx=d) for d in devices]

    def add():
        for x, y in zip(a, b):
            x += y
    return time_it(add, repeat=repeat, warmup=1) / nbytes


def allreduce_part(alpha, bandwidth, ks, sizes, repeat):
    floor = overhead()
    link = Link(alpha, bandwidth)
    print(f'1. allreduce over {link}; the emulator adds {floor * 1e3:.2f} ms per message '
          f'(model alpha = {(alpha + floor) * 1e3:.2f} ms)')
    ratios, naive_over_ring = {}, {}
    for k in ks:
        devices = [mx.cpu(i) for i in range(k)]
        g = gamma(devices, max(sizes) // k)
        for nbytes in sizes:
            arrays = [nd.ones(nbytes // 4, ctx=d) for d in devices]
            t = compare({'naive': lambda: allreduce_naive(arrays, send=link.send),
                         'ring': lambda: allreduce_ring(arrays, send=link.send)}, repeat=repeat)
            model = {'naive': cost_naive(k, nbytes, alpha + floor, bandwidth, g),
                     'ring': cost_ring(k, nbytes, alpha + floor, bandwidth, g)}
            for name in ('naive', 'ring'):
                case = f'{name}-k{k}-{nbytes // KiB}KiB'
                ratios[case] = t[name] / model[name]
                print(f'measured/model {case} {ratios[case]:.2f}   '
                      f'({t[name] * 1e3:8.1f} ms / {model[name] * 1e3:8.1f} ms)')
            naive_over_ring[k] = t['naive'] / t['ring']
    for k, r in naive_over_ring.items():
        n = max(sizes)
        model = cost_naive(k, n, alpha, bandwidth) / cost_ring(k, n, alpha, bandwidth)
        print(f'naive/ring k={k} {n // KiB} KiB {r:.2f}   (model {model:.2f})')
    inside = [c for c, r in ratios.items() if 0.85 <= r <= 1.15]
    print(f'within 0.85-1.15: {len(inside)} of {len(ratios)}')
    return ratios


class Step:
    """Notebook 10's step: ResNet-18 at width 16 on ``devices``, batch 32 of random images."""

    def __init__(self, devices, batch=32, width=16):
        self.devices = devices
        self.net = resnet18(devices, width=width)
        self.params = [p for p in self.net.collect_params().values() if p.grad_req != 'null']
        self.sizes = [int(np.prod(p.shape)) for p in self.params]
        rng = np.random.default_rng(0)
        self.X, self.y = nd.array(rng.uniform(size=(batch, 1, 28, 28))), nd.array(np.arange(batch) % 10)
        self.groups = [p.list_grad() for p in reversed(self.params)]

    def forward(self):
        X_shards, y_shards = split_batch(self.X, self.y, self.devices)
        with autograd.record():
            return [loss(self.net(Xs), ys) for Xs, ys in zip(X_shards, y_shards)]

    def compute(self):
        for l in self.forward():
            l.backward()

    def step(self, wait, allreduce):
        backward_and_send(self.forward(), self.groups, wait, allreduce=allreduce)
        for d in self.devices:
            sgd([p.data(d) for p in self.params], 0.01, len(self.X))


def overlap_part(repeat):
    model = Step([mx.cpu(0), mx.cpu(1)])
    model.compute()
    step = time_it(model.compute, repeat=3, warmup=1)
    link = preset('25 GbE', step, 4 * sum(model.sizes))
    over = partial(allreduce_naive, send=link.send)
    print(f'\n2. overlap: {link}; forward and backward {step * 1e3:.0f} ms; all gradients in one message '
          f'{link.seconds(4 * sum(model.sizes)) * 1e3:.0f} ms')
    hidden = {}
    for name, wait in (('a', True), ('b', False)):
        best = None
        for _ in range(3):
            o = overlap(tracing.trace(backward_and_send, model.forward(), model.groups, wait, allreduce=over)[1])
            best = o if best is None or o.hidden / o.communication > best.hidden / best.communication else best
        hidden[name] = best.hidden / best.communication
        print(f'({name}) backward {best.backward:4.0f} ms, communication {best.communication:4.0f} ms, '
              f'{hidden[name]:.0%} of it during backward, then {best.after:4.0f} ms more')
    t = compare({'a': lambda: model.step(True, over), 'b': lambda: model.step(False, over)}, repeat=repeat)
    print(f'hidden (b) {hidden["b"]:.2f}   (goal >= 0.70)')
    print(f'step (a)/(b) {t["a"] / t["b"]:.2f}   ({t["a"] * 1e3:.0f} ms / {t["b"] * 1e3:.0f} ms; goal >= 1.3)')


def sweet_spot(sizes, seconds, within=1.5):
    """The smallest bucket size whose time is within ``within`` times the best: where the curve has
    flattened (with no overlap the largest bucket is always the fastest)."""
    return min(b for b, s in zip(sizes, seconds) if s <= within * min(seconds))


def bucket_part(repeat):
    model = Step([mx.cpu(0), mx.cpu(1)])
    model.compute()
    step = time_it(model.compute, repeat=3, warmup=1)
    link = preset('100 GbE', step, 4 * sum(model.sizes))
    k, alpha = 2, link.alpha + overhead(model.devices, allreduce=allreduce_ring)
    sweep = [1, 2 ** 12, 2 ** 14, 2 ** 16, 2 ** 18, 2 ** 20, 2 ** 22]
    rows, _ = time_buckets(model.sizes, sweep, model.devices, repeat=repeat,
                           allreduce=partial(allreduce_ring, send=link.send))
    measured = [r['seconds'] for r in rows]
    modelled = [bucketed_time(model.sizes, b, lambda m: cost_ring(k, m, alpha, link.bandwidth)) for b in sweep]
    print(f'\n3. buckets over {link}; model alpha with the stand-ins\' cost per ring step {alpha * 1e3:.2f} ms')
    for b, r, m in zip(sweep, rows, modelled):
        print(f'   buckets of {b:>9,} B: {r["buckets"]:2d} bucket(s) measured {r["seconds"] * 1e3:6.1f} ms, '
              f'model {m * 1e3:6.1f} ms, measured/model {r["seconds"] / m:.2f}')
    print(f'per gradient/best bucket {measured[0] / min(measured):.2f}   (model {modelled[0] / min(modelled):.2f}; '
          f'goal >= 3)')
    spot, model_spot = sweet_spot(sweep, measured), sweet_spot(sweep, modelled)
    print(f'sweet spot measured/model {spot / model_spot:.2f}   ({spot:,} B / {model_spot:,} B; goal 0.5-2)')


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--quick', action='store_true', help='part 1 only, in under a minute')
    parser.add_argument('--repeat', type=int, default=3, help='rounds per part (default 3)')
    args = parser.parse_args()
    start = time.perf_counter()
    allreduce_part(2e-3, 50e6, (2, 4, 8), (4 * KiB, 64 * KiB, 1 * MiB, 4 * MiB), args.repeat)
    if not args.quick:
        overlap_part(args.repeat + 2)
        bucket_part(args.repeat)
    print(f'({time.perf_counter() - start:.0f} s)')


if __name__ == '__main__':
    main()
