"""Allreduce by hand vs MXNet's KVStore, side by side in one run (notebook 04).

    .venv/bin/python benchmarks/allreduce.py [--devices 4] [--sizes 1e4,1e6,11e6] [--repeat 7]

Times helpers.comm.allreduce_naive and allreduce_ring (the lesson code of notebook 04) and KVStore
'device' / 'local' pushpull for each array size (float32 elements per device), on k devices (GPUs if
there are k, else CPU stand-ins), and prints each variant's median time and its ratio to
'kv device'. The variants run in turn, round after round (helpers.timing.compare), so a busy moment
of the machine hits all of them; on GPUs one 'device' reduce runs first, so that every variant is
timed with peer-to-peer access already enabled (MXNet enables it in CommDevice's first reduce,
src/kvstore/comm.h), whatever the order.

What decides on CPU stand-ins (notebook 04 explains each from MXNet 1.9.1's source):
* small arrays: the number of operations issued -- the ring issues 2k(k-1) copies and k(k-1)
  additions, the naive algorithm 2(k-1) copies and k-1 additions, the KVStore a handful;
* large arrays: allocation and passes over memory -- the naive algorithm creates a new N-byte array
  per message, which from 32 MiB on costs fresh zeroed pages (MXNet's CPU storage is not pooled,
  src/storage/storage.cc); the KVStore reuses buffers allocated at its first push and sums all k
  inputs in one pass (CommDevice: ElementwiseSum; CommCPU: ReduceSumCPU, multi-threaded from
  MXNET_KVSTORE_BIGARRAY_BOUND = 1e6 elements); all stand-ins share one memory bus.
The ring's real advantage -- every device sending at once, over a link of its own -- is missing
twice: CPU stand-ins share one memory bus, and MXNet's engine orders work per array (a slice shares
its array's engine variable: NDArray::Slice, src/ndarray/ndarray.cc), so this ring's copies and
additions run one after the other (notebook 04 traces it). On GPUs that makes it no better than the
naive algorithm, which is why helpers.comm.allreduce never picks it there.
"""
import argparse
import sys

import mxnet as mx

from helpers.comm import allreduce_naive, allreduce_ring
from helpers.devices import describe, get_devices
from helpers.timing import compare


def variants(devices, size):
    """``{name: callable}`` of one allreduce of ``size`` float32 per device, each variant checked to
    leave the sum on every device first."""
    arrays = [mx.nd.ones(size, ctx=d) for d in devices]
    stores = {name: mx.kv.create(kind) for name, kind in (('kv device', 'device'), ('kv local', 'local'))}
    for kv in stores.values():
        kv.init(0, mx.nd.zeros(size))
    stores['kv device'].pushpull(0, arrays, out=arrays)          # peer access on (GPUs), for all
    out = {'naive': lambda: allreduce_naive(arrays),
           'kv device': lambda: stores['kv device'].pushpull(0, arrays, out=arrays),
           'kv local': lambda: stores['kv local'].pushpull(0, arrays, out=arrays)}
    if size >= len(devices):
        out['ring'] = lambda: allreduce_ring(arrays)
    for name, fn in out.items():
        for a in arrays:
            a[:] = 1
        fn()
        for a in arrays:
            if a[-1].asscalar() != len(devices) or a[0].asscalar() != len(devices):
                raise AssertionError(f'{name} did not leave the sum on {a.context}')
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--devices', type=int, default=4)
    parser.add_argument('--sizes', default='1e4,1e6,11e6', help='float32 elements per device, comma separated')
    parser.add_argument('--repeat', type=int, default=7)
    args = parser.parse_args(argv)
    devices = get_devices(args.devices)
    print(describe(devices))
    for size in (int(float(s)) for s in args.sizes.split(',')):
        times = compare(variants(devices, size), repeat=args.repeat)
        base = times['kv device']
        print(f'{size:>12,} float32 ({size * 4 / 2**20:7.2f} MiB) per device, median of {args.repeat} rounds:')
        for name, t in sorted(times.items(), key=lambda item: item[1]):
            print(f'    {name:10s} {t * 1e3:9.2f} ms   {t / base:5.2f} x kv device')
    return 0


if __name__ == '__main__':
    sys.exit(main())
