"""Allreduce by hand vs MXNet's KVStore, side by side in one run (issue 3, notebook 04).

    .venv/bin/python benchmarks/allreduce.py [--devices 4] [--size 11000000] [--repeat 7]

Times helpers.comm.allreduce_naive, allreduce_ring and kvstore 'device' / 'local' pushpull of a
ResNet-18-sized gradient (about 11 M float32 values) on k devices (GPUs if there are k, else CPU
stand-ins), and prints each variant's median time and its ratio to kv 'device'.
Goal on a 2-core CPU machine, 4 stand-ins, 11 M floats: ring within 1.5x of kv 'device'.

What limits the ring on CPU stand-ins: all "devices" share one memory bus, so the run is bound by
bytes moved through RAM, not by per-device links. Counting reads + writes of N-byte arrays, k = 4:
the ring's reduce-scatter copies each chunk into a receive buffer (the stand-in for a transfer over
a link: read + write) and then adds it (read 2, write 1): 5 (k-1) N = 15 N; its all-gather copies
2 (k-1) N = 6 N; total 21 N. KVStore 'device' copies k-1 arrays to one merge buffer (6 N), sums
k arrays in one fused operation (5 N) and copies the result back (6 N): 17 N. By this count about
1.2x is the floor for a ring that keeps the copy to the neighbour explicit (as it must on GPUs, where
adding straight from another device's memory is an error).

Measured (quiet machine, 3 runs): ring / kv 'device' = 1.59-1.63, so the count is not the whole story.
Timing the ring's parts separately: the 12 staging copies take about 13 ms, the 12 additions 21 ms,
the 12 all-gather copies 33 ms although they move the same bytes as the staging copies: MXNet's
engine tracks dependencies per *array*, not per slice, so writing one chunk of a device's array waits
for reads of its other chunks and the all-gather runs as one chain. Keeping every chunk in an array
of its own removes those false dependencies but costs 2 N more copies per device, and measured
slower here (157 ms vs 105 ms for the ring as written): on two cores sharing one memory bus, bytes,
not parallelism, are the limit.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from helpers.comm import time_allreduce  # noqa: E402
from helpers.devices import describe, get_devices  # noqa: E402


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--devices', type=int, default=4)
    parser.add_argument('--size', type=int, default=11_000_000, help='elements per device')
    parser.add_argument('--repeat', type=int, default=7)
    args = parser.parse_args(argv)
    devices = get_devices(args.devices)
    print(describe(devices))
    print(f'allreduce of {args.size:,} float32 ({args.size * 4 / 1e6:.0f} MB) per device, '
          f'median of {args.repeat} runs')
    times = time_allreduce(devices, args.size, args.repeat)
    base = times['kv device']
    for name, t in times.items():
        print(f'  {name:10s} {t * 1e3:8.1f} ms   {t / base:5.2f}x kv device')
    ratio = times['ring'] / base
    print(f'ring / kv device = {ratio:.2f} (goal: <= 1.5) -> {"met" if ratio <= 1.5 else "NOT met"}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
