"""The sharded optimizer against the replicated one, side by side in one run (notebooks 11 and 13).

    .venv/bin/python benchmarks/sharding.py [--devices 4] [--params resnet18] [--repeat 5]

A flat model of ResNet-18's size (d2l's variant, 10 classes: its trainable parameters, counted from
helpers.models.resnet18) with Adam, on k devices (GPUs if there are k, else CPU stand-ins). It prints,
as ratios, sharded / replicated (the goals of issue 25 in brackets; nothing is asserted):

* optimizer-state memory per device [1/k within 5 %]: read from MXNet's own storage counters in a
  fresh process (helpers.memory, helpers.sharding.measure_memory), the busiest device of each;
* time of a step's communication and update [<= 1.2]: reduce-scatter, the update of one chunk per
  device and all-gather, against helpers.comm.allreduce and the whole update on every device
  (helpers.sharding.comm_and_update; no forward or backward, which are the same in both), run in
  turn, round after round (helpers.timing.compare);
* bytes sent per device and step, counted by helpers.comm.CommStats: sharded / replicated [1.0], and
  float16 / float32 on the wire (helpers.precision.allreduce_fp16) [exactly 0.5].
"""
import argparse

import numpy as np
import mxnet as mx
from mxnet import nd

from helpers.comm import CommStats, allreduce
from helpers.devices import describe, get_devices
from helpers.memory import in_fresh_process
from helpers.precision import allreduce_fp16
from helpers.sharding import Replica, adam_updaters, attach_flat_grad, comm_and_update, flat_replica
from helpers.timing import compare
from helpers.tracing import traceable


def resnet18_params():
    """Trainable parameters of d2l's ResNet-18 for 10 classes (helpers.models.resnet18)."""
    from helpers.models import resnet18
    net = resnet18([mx.cpu()])
    return sum(p.data().size for p in net.collect_params().values() if p.grad_req != 'null')


def replicas_and_updaters(devices, n):
    flat = nd.array(np.random.default_rng(0).standard_normal(n), dtype='float32')
    replicas = []
    for d in devices:
        w, views = flat_replica([flat], d)
        replicas.append(Replica(w, attach_flat_grad(w, views), views))
    return replicas, adam_updaters(devices, 1e-3, 64)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--devices', type=int, default=4)
    p.add_argument('--params', default='resnet18', help="'resnet18' or a number of float32 parameters")
    p.add_argument('--repeat', type=int, default=5)
    args = p.parse_args()
    devices = get_devices(args.devices)
    k = len(devices)
    n = resnet18_params() if args.params == 'resnet18' else int(float(args.params))
    print(describe(devices))
    print(f'{n:,} float32 parameters ({4 * n / 2**20:.1f} MiB), Adam, k = {k}')

    if devices[0].device_type == 'cpu' and len(traceable(devices)) == k:
        found = in_fresh_process('helpers.sharding.measure_memory', [[k, False], [k, True]], n)
        rep, sha = (max(f['optimizer state']) for f in found)
        print(f'optimizer state, busiest device: replicated {rep / 2**20:7.1f} MiB, sharded {sha / 2**20:7.1f} MiB; '
              f'sharded / replicated = {sha / rep:.4f} (1/k = {1 / k:.4f}, off by {abs(sha / rep * k - 1):.2%})')
        for what in ('weights', 'gradients'):
            print(f'{what:9s} per device (MiB): replicated {[round(b / 2**20, 1) for b in found[0][what]]}, '
                  f'sharded {[round(b / 2**20, 1) for b in found[1][what]]}')
    else:
        print('optimizer-state memory: not measured (MXNet counts memory per CPU stand-in only up to '
              'cores + 2 stand-ins; on GPUs use nvidia-smi)')

    runs = {}
    for sharded in (False, True):
        replicas, updaters = replicas_and_updaters(devices, n)
        for r in replicas:
            r.grads[:] = 1.0
        runs['sharded' if sharded else 'replicated'] = (
            lambda r=replicas, u=updaters, s=sharded: comm_and_update(r, devices, u, s))
    t = compare(runs, repeat=args.repeat)
    print(f'communication + update: replicated {t["replicated"] * 1e3:7.1f} ms, sharded {t["sharded"] * 1e3:7.1f} ms; '
          f'sharded / replicated = {t["sharded"] / t["replicated"]:.2f}')

    sent = {}
    for name in ('replicated', 'sharded'):
        replicas, updaters = replicas_and_updaters(devices, n)
        stats = CommStats()
        comm_and_update(replicas, devices, updaters, name == 'sharded', send=stats.send)
        sent[name] = max(stats.per_device(devices))
    grads = [nd.ones(n, ctx=d) for d in devices]
    for name, fn in (('float32', allreduce), ('float16', allreduce_fp16)):
        stats = CommStats()
        fn(grads, send=stats.send)
        sent[name] = max(stats.per_device(devices))
    print(f'bytes per device and step: replicated {sent["replicated"]:,}, sharded {sent["sharded"]:,}; '
          f'sharded / replicated = {sent["sharded"] / max(sent["replicated"], 1):.4f}')
    print(f'bytes per device, allreduce float32 {sent["float32"]:,}, float16 {sent["float16"]:,}; '
          f'float16 / float32 = {sent["float16"] / max(sent["float32"], 1):.4f}')


if __name__ == '__main__':
    main()
