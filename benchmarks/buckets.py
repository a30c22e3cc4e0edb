"""Per-gradient against bucketed allreduces, and the overlapped step against wait-then-send, side by side
in one run (notebook 10).

    .venv/bin/python benchmarks/buckets.py [--devices 4] [--repeat 7] [--skip-step]

Buckets are views (helpers.buckets.flat_buckets: no packing copies); every variant of a part runs in
turn, round after round (helpers.timing.compare), so that a busy moment of the machine hits all of them.
Prints median times and ratios; asserts nothing.

1. Many small gradients: 250 arrays of 1,000 to 4,000 float32 (the shape of biases and norms), one
   allreduce each against one bucket, with notebook 04's naive allreduce and with KVStore 'device'
   pushpull. The fixed cost per message dominates: one bucket should win by a large factor.
2. ResNet-18's 76 gradients (d2l's variant at full width, 43 MiB), in buckets from one per gradient to
   one for all, with both allreduces. Few, large gradients: the bytes dominate, so buckets gain little;
   at the large end one bucket of 43 MiB makes the naive allreduce allocate receive arrays above glibc's
   32 MiB mmap threshold (notebook 04), and gives the KVStore one array to sum instead of several.
3. One step of ResNet-18 at width 16, batch 64: (a) wait for the backward pass, then allreduce every
   gradient, against (b) queue every allreduce right after backward() (helpers.buckets.backward_and_send),
   per gradient and in 1 MiB buckets the backward pass writes into.
"""
import argparse
import sys

import numpy as np
import mxnet as mx
from mxnet import autograd, nd

from helpers.buckets import backward_and_send, bucket_gradients, flat_buckets
from helpers.comm import allreduce_naive
from helpers.devices import describe, get_devices
from helpers.models import resnet18
from helpers.split import split_batch
from helpers.timing import compare
from helpers.train import loss, sgd

MiB = 2 ** 20


def kvstore_allreduce(kv, buckets, first_key):
    """A function that pushpulls every bucket of ``buckets`` with its own key of ``kv`` (initialised here)."""
    for key, arrays in enumerate(buckets, first_key):
        kv.init(key, nd.zeros(arrays[0].shape))
    return lambda: [kv.pushpull(key, arrays, out=arrays) for key, arrays in enumerate(buckets, first_key)]


def allreduce_variants(sizes, bucket_sizes, devices, kv):
    """``{(method, bucket_bytes): fn}`` for every bucket size, naive and KVStore, on the same buckets (the
    values they sum do not matter here; sharing them halves the memory)."""
    variants, key = {}, 0
    for b in bucket_sizes:
        buckets = flat_buckets(sizes, b, devices)
        variants['naive', b] = lambda buckets=buckets: [allreduce_naive(a) for a in buckets]
        variants['kv device', b] = kvstore_allreduce(kv, buckets, key)
        key += len(buckets)
    return variants


def report(title, sizes, bucket_sizes, devices, repeat):
    kv = mx.kv.create('device')
    times = compare(allreduce_variants(sizes, bucket_sizes, devices, kv), repeat=repeat)
    print(f'\n{title}: {len(sizes)} gradients, {4 * sum(sizes) / MiB:.2f} MiB per device, median of {repeat} rounds')
    for method in ('naive', 'kv device'):
        base = times[method, bucket_sizes[0]]
        for b in bucket_sizes:
            n = len(flat_buckets(sizes, b, devices[:1]))
            label = ('per gradient' if b == bucket_sizes[0] else 'one bucket' if n == 1 else
                     f'{b / MiB:g} MiB buckets')
            print(f'    {method:9s} {label:18s} {n:3d} allreduce(s) {times[method, b] * 1e3:8.2f} ms   '
                  f'{base / times[method, b]:5.2f} x per gradient')


def step_report(devices, repeat, batch=64, width=16):
    net = resnet18(devices, width=width)
    params = [p for p in net.collect_params().values() if p.grad_req != 'null']
    X = nd.array(np.random.default_rng(0).uniform(size=(batch, 1, 28, 28)))
    y = nd.array(np.arange(batch) % 10)

    def step(groups, wait):
        X_shards, y_shards = split_batch(X, y, devices)
        with autograd.record():
            losses = [loss(net(Xs), ys) for Xs, ys in zip(X_shards, y_shards)]
        backward_and_send(losses, groups() if callable(groups) else groups, wait)
        for d in devices:
            sgd([p.data(d) for p in params], 0.1, batch)

    per_gradient = lambda: [p.list_grad() for p in reversed(params)]
    runs = {'(a) wait, then send, per gradient': lambda: step(per_gradient, True),
            '(b) send as ready, per gradient': lambda: step(per_gradient, False)}
    times = compare(runs, repeat=repeat)
    buckets = bucket_gradients(params, MiB)          # from here on the gradients are views into buckets
    runs = {'(a) wait, then send, 1 MiB buckets': lambda: step(buckets, True),
            '(b) send as ready, 1 MiB buckets': lambda: step(buckets, False)}
    times.update(compare(runs, repeat=repeat))
    print(f'\nResNet-18 at width {width}, batch {batch}, one step, median of {repeat} rounds:')
    for name, t in times.items():
        print(f'    {name:36s} {t * 1e3:8.1f} ms')
    for kind in ('per gradient', '1 MiB buckets'):
        a, b = times[f'(a) wait, then send, {kind}'], times[f'(b) send as ready, {kind}']
        print(f'    {kind}: (a) / (b) = {a / b:.2f}')


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--devices', type=int, default=4)
    parser.add_argument('--repeat', type=int, default=7)
    parser.add_argument('--skip-step', action='store_true', help='leave out part 3 (the training step)')
    args = parser.parse_args(argv)
    devices = get_devices(args.devices)
    print(describe(devices))
    small = [int(n) for n in np.random.default_rng(0).integers(1000, 4001, 250)]
    report('1. many small gradients', small, [1, 2 ** 30], devices, args.repeat)
    full = [int(np.prod(p.shape)) for p in resnet18([mx.cpu()], width=64).collect_params().values()
            if p.grad_req != 'null']
    report("2. ResNet-18's gradients", full, [1, MiB // 4, MiB, 4 * MiB, 25 * MiB, 2 ** 30], devices,
           args.repeat)
    if not args.skip_step:
        step_report(devices, args.repeat)
    return 0


if __name__ == '__main__':
    sys.exit(main())
