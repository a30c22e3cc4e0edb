"""The emulated link (helpers.link) against the alpha-beta model, side by side in one run (notebooks
04 and 10).

    .venv/bin/python benchmarks/link.py [--quick] [--repeat 3]

1. **Allreduce.** Notebook 04's naive and ring allreduce over one link, at k = 2, 4 and 8 and at sizes
   from latency-dominated (4 KiB per device) to bandwidth-dominated (16 MiB), each against its model
   (helpers.costmodel, with alpha raised by the emulator's own cost per message, helpers.link.overhead,
   and gamma by the stand-ins' additions). One line per case: ``measured/model <case> <ratio>``; then
   naive/ring at each k on the largest size. Goal: every ratio within 0.85-1.15; naive/ring >= 5 at
   k = 8 (the model: 7.5).
2. **Overlap** (unless ``--quick``): notebook 10's step, ResNet-18 at width 16, with a link on which
   the gradients' wire time is about the backward pass: (a) wait, then send, against (b) send as
   ready. Goal: (b) hides >= 70 % of its wire time; (a)/(b) >= 1.3.
3. **Buckets** (unless ``--quick``): the same 76 gradients per gradient and in buckets of 4 KiB to
   4 MiB over a high-latency link, measured and modelled. Goal: per gradient / best bucket >= 3; the
   measured best bucket size within 2 times the model's.

Every variant of a part runs in turn, round after round (helpers.timing.compare). Prints; asserts
nothing.
"""
import argparse
import time

import mxnet as mx
from mxnet import nd

from helpers.comm import allreduce_naive, allreduce_ring
from helpers.costmodel import cost_naive, cost_ring
from helpers.link import Link, overhead
from helpers.timing import compare, time_it

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


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--quick', action='store_true', help='part 1 only, in under a minute')
    parser.add_argument('--repeat', type=int, default=3, help='rounds per part (default 3)')
    args = parser.parse_args()
    start = time.perf_counter()
    allreduce_part(2e-3, 200e6, (2, 4, 8), (4 * KiB, 1 * MiB, 16 * MiB), args.repeat)
    print(f'({time.perf_counter() - start:.0f} s)')


if __name__ == '__main__':
    main()
