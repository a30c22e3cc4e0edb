"""One epoch of LeNet on Fashion-MNIST: 1 vs k CPU devices, by hand and with Gluon, with MXNet's
default 4 and with 32 CPU scratch buffers, side by side in one run.

    python benchmarks/train_epoch.py                  # full epoch (60,000 images), k=2, 3 rounds
    python benchmarks/train_epoch.py --n-train 12800 --rounds 1
    python benchmarks/train_epoch.py --all            # also the tutorial loop and hybridized Gluon

What is compared (the same model, LeNet, optimiser, plain SGD, and batch size everywhere):

- by hand, 1 device / k devices: the loop of notebook 05 (``helpers.train.train_scratch``, one epoch;
  each step is ``train_batch_scratch``: our ``split_batch``, per-device forward/backward, our
  ``allreduce``, SGD on every device);
- Gluon, 1 device / k devices: the loop of notebook 06 (``helpers.train.train``, one epoch; each step
  is ``train_batch``: our ``split_batch``, ``Trainer.step`` with its KVStore);

  both on ``helpers.data`` batches (cut from in-memory arrays, no per-example work), metrics read
  once per epoch;
- each of them with ``MXNET_CPU_TEMP_COPY=4`` (MXNet's default) and ``=32`` (what every process of the
  series' venv gets, ``helpers._mxnet_compat.ENGINE_DEFAULTS``). MXNet keeps one pool of CPU scratch
  buffers for all CPU contexts and reads the variable once, when it starts (``ResourceManagerImpl``,
  src/resource.cc), so each setting runs in a process of its own: one worker process per setting,
  started once, asked for one epoch at a time. The parent asks the workers in turn, round after round,
  alternating which setting goes first, so that other load on the machine hits them all alike; only
  one worker computes at any moment. The best of the rounds counts.

With ``--all``, also (in every worker):

- Gluon hybridized, k devices: ``net.hybridize()`` (notebook 06's exercise 4 explains this comparison);
- tutorial, 1 device / k devices: the classic straight-dope / d2l multi-GPU loop: a
  ``gluon.data.DataLoader`` over a dataset of uint8 HWC images with a per-example
  ``transforms.ToTensor()`` (as ``gluon.data.vision.FashionMNIST(...).transform_first(ToTensor())``),
  ``gluon.utils.split_and_load``, ``Trainer.step``, the loss read after every batch.

Goals. Issue 21: with 32 buffers a k-device epoch takes less time than a 1-device epoch on the same
two cores (ratio below 1.0: the stand-ins compute at the same time, notebook 05's timeline), by hand
and with Gluon, and the 1-device epoch is no slower than with 4 buffers. Issue 4 (``--all``): our
k-device epoch is not slower than the tutorial loop's. The ratios are printed at the end, never
asserted: CPU stand-ins share the machine's cores, and a shared machine moves every timing.
"""
import argparse
import json
import os
import subprocess
import sys
import time

COPIES = (4, 32)
CORE = ('by hand, 1 device', 'by hand, k devices', 'Gluon, 1 device', 'Gluon, k devices')
EXTRA = ('Gluon hybridized, k devices', 'tutorial, 1 device', 'tutorial, k devices')


def _worker(args):
    """Serve epochs: read a configuration's name per line on stdin, answer one JSON line on stdout."""
    import numpy as np
    import mxnet as mx
    from mxnet import autograd, gluon, nd
    from mxnet.gluon.data.vision import transforms

    from helpers.data import ArrayLoader, load_arrays
    from helpers.models import init_lenet_params, lenet
    from helpers.train import train, train_scratch

    def make_net(devices, hybridize=False):
        net = lenet(devices, 0)
        if hybridize:
            net.hybridize()
        return net, gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.1})

    def one_epoch(train_fn, X, y):
        """Time one epoch with a loop of ``helpers.train`` (its history's ``seconds`` excludes the
        evaluation, which runs on one small batch here). Returns ``(seconds, mean train loss)``."""
        loader = ArrayLoader(X, y, args.batch_size, shuffle=True, seed=0)
        check = ArrayLoader(X[:args.batch_size], y[:args.batch_size], args.batch_size)
        history = train_fn(loader, check)
        return history['seconds'][0], history['loss'][0]

    def epoch_gluon(devices, X, y, hybridize=False):
        net, trainer = make_net(devices, hybridize)
        return one_epoch(lambda loader, check: train(net, loader, check, devices, trainer, 1, progress=False),
                         X, y)

    def epoch_scratch(devices, X, y):
        return one_epoch(lambda loader, check: train_scratch(init_lenet_params(0), loader, check, devices,
                                                             0.1, 1, progress=False)[1], X, y)

    def epoch_tutorial(devices, dataset):
        net, trainer = make_net(devices)
        loss = gluon.loss.SoftmaxCrossEntropyLoss()
        loader = gluon.data.DataLoader(dataset.transform_first(transforms.ToTensor()), args.batch_size,
                                       shuffle=True, last_batch='keep', num_workers=0)
        start = time.perf_counter()
        loss_sum, n = 0.0, 0
        for Xb, yb in loader:
            X_shards = gluon.utils.split_and_load(Xb, devices, even_split=False)
            y_shards = gluon.utils.split_and_load(yb, devices, even_split=False)
            with autograd.record():
                ls = [loss(net(Xs), ys) for Xs, ys in zip(X_shards, y_shards)]
            for l in ls:
                l.backward()
            trainer.step(Xb.shape[0])
            loss_sum += sum(float(l.sum().asscalar()) for l in ls)  # read every batch, as tutorials do
            n += Xb.shape[0]
        nd.waitall()
        return time.perf_counter() - start, loss_sum / n

    X, y = load_arrays(train=True)
    X, y = X[:args.n_train], y[:args.n_train]
    # the raw form Gluon's FashionMNIST dataset has: uint8 (28, 28, 1) images, int32 labels
    images = (X[:, 0, :, :, None] * 255).round().astype(np.uint8)
    raw = gluon.data.ArrayDataset(nd.array(images, dtype=np.uint8), y)  # as vision.FashionMNIST stores them
    one, k = [mx.cpu(0)], [mx.cpu(i) for i in range(args.k)]
    runs = {
        'by hand, 1 device': lambda X, y, data: epoch_scratch(one, X, y),
        'by hand, k devices': lambda X, y, data: epoch_scratch(k, X, y),
        'Gluon, 1 device': lambda X, y, data: epoch_gluon(one, X, y),
        'Gluon, k devices': lambda X, y, data: epoch_gluon(k, X, y),
        'Gluon hybridized, k devices': lambda X, y, data: epoch_gluon(k, X, y, hybridize=True),
        'tutorial, 1 device': lambda X, y, data: epoch_tutorial(one, data),
        'tutorial, k devices': lambda X, y, data: epoch_tutorial(k, data),
    }
    warm = 4 * args.batch_size   # warm-up, not timed: MXNet creates its kernels' primitives on first use
    warm_data = gluon.data.ArrayDataset(raw[:warm][0], y[:warm])
    for name in args.configs:
        runs[name](X[:warm], y[:warm], warm_data)
    print(json.dumps({'ready': os.environ.get('MXNET_CPU_TEMP_COPY')}), flush=True)
    for line in sys.stdin:
        name = line.strip()
        if not name:
            continue
        seconds, loss = runs[name](X, y, raw)
        print(json.dumps({'seconds': seconds, 'loss': loss}), flush=True)


class Worker:
    """A worker process with ``MXNET_CPU_TEMP_COPY=copies``, answering one epoch per request."""

    def __init__(self, copies, args, configs):
        cmd = [sys.executable, os.path.abspath(__file__), '--worker', '--k', str(args.k),
               '--batch-size', str(args.batch_size), '--configs', ';'.join(configs)]
        if args.n_train:
            cmd += ['--n-train', str(args.n_train)]
        self.copies = copies
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                     env={**os.environ, 'MXNET_CPU_TEMP_COPY': str(copies)})
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f'the worker with {copies} buffers ended before it was ready '
                               f'(exit {self.proc.wait()}; its error is above)')
        ready = json.loads(line)
        if ready.get('ready') != str(copies):
            raise RuntimeError(f'worker started with MXNET_CPU_TEMP_COPY={ready.get("ready")}, not {copies}')

    def epoch(self, name):
        self.proc.stdin.write(name + '\n')
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f'the worker with {self.copies} buffers ended (exit {self.proc.wait()})')
        reply = json.loads(line)
        return reply['seconds'], reply['loss']

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def ratio_lines(best, K, copies):
    """``(label, ratio, goal)`` for the printed table; goal None: reported, no goal."""
    lo, hi = min(copies), max(copies)
    lines = []
    for c in copies:
        lines += [(f'{c:2d} buffers: by hand {K} devices / 1 device', best[c, 'by hand, k devices'] /
                   best[c, 'by hand, 1 device'], 1.0 if c == hi else None),
                  (f'{c:2d} buffers: Gluon {K} devices / 1 device', best[c, 'Gluon, k devices'] /
                   best[c, 'Gluon, 1 device'], 1.0 if c == hi else None)]
    if lo != hi:
        for name in CORE:
            label = name.replace('k devices', f'{K} devices')
            lines.append((f'{label}: {hi} / {lo} buffers', best[hi, name] / best[lo, name],
                           1.0 if '1 device' in name else None))
    if (hi, 'tutorial, k devices') in best:
        tut_k = best[hi, 'tutorial, k devices']
        lines += [(f'{hi:2d} buffers: by hand {K} / tutorial {K} devices', best[hi, 'by hand, k devices'] / tut_k, 1.0),
                  (f'{hi:2d} buffers: Gluon {K} / tutorial {K} devices', best[hi, 'Gluon, k devices'] / tut_k, 1.0),
                  (f'{hi:2d} buffers: Gluon hybridized / Gluon, {K} devices',
                   best[hi, 'Gluon hybridized, k devices'] / best[hi, 'Gluon, k devices'], None),
                  (f'{hi:2d} buffers: tutorial {K} devices / 1 device', tut_k / best[hi, 'tutorial, 1 device'], None)]
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--k', type=int, default=2, help='number of CPU devices (default 2)')
    parser.add_argument('--batch-size', type=int, default=256)
    parser.add_argument('--n-train', type=int, default=None, help='use only the first N images')
    parser.add_argument('--rounds', type=int, default=3, help='interleaved repetitions (best counts)')
    parser.add_argument('--copies', default=','.join(map(str, COPIES)),
                        help='MXNET_CPU_TEMP_COPY values to compare, one worker process each (default 4,32)')
    parser.add_argument('--all', action='store_true', help='also hybridized Gluon and the tutorial loop')
    parser.add_argument('--worker', action='store_true', help=argparse.SUPPRESS)
    parser.add_argument('--configs', default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    configs = list(CORE) + (list(EXTRA) if args.all else [])
    if args.worker:
        args.configs = args.configs.split(';')
        return _worker(args)

    copies = [int(c) for c in args.copies.split(',')]
    load = os.getloadavg()[0] if hasattr(os, 'getloadavg') else float('nan')
    print(f'LeNet, one epoch of {args.n_train or 60000} Fashion-MNIST images, batch {args.batch_size}, '
          f'{args.k} CPU devices vs 1, MXNET_CPU_TEMP_COPY in {copies}, {os.cpu_count()} cores, '
          f'{args.rounds} round(s); load average at the start {load:.1f}', flush=True)
    workers = {c: Worker(c, args, configs) for c in copies}      # each warms up before answering
    best = {}
    try:
        for r in range(args.rounds):
            order = copies if r % 2 == 0 else copies[::-1]        # alternate which setting goes first
            for name in configs:
                for c in order:
                    seconds, loss = workers[c].epoch(name)
                    best[c, name] = min(best.get((c, name), float('inf')), seconds)
                    label = name.replace('k devices', f'{args.k} devices')
                    print(f'  round {r + 1}: {c:2d} buffers, {label:30s} {seconds:6.2f} s  '
                          f'(train loss {loss:.3f})', flush=True)
    finally:
        for w in workers.values():
            w.close()
    load = os.getloadavg()[0] if hasattr(os, 'getloadavg') else float('nan')
    print(f'best of rounds (load average at the end {load:.1f}):')
    for name in configs:
        label = name.replace('k devices', f'{args.k} devices')
        print(f'  {label:30s} ' + '   '.join(f'{c:2d} buffers {best[c, name]:6.2f} s' for c in copies))
    print('ratios (< 1: faster):')
    for label, ratio, goal in ratio_lines(best, args.k, copies):
        verdict = '' if goal is None else f'  goal <= {goal:.2f}: {"met" if ratio <= goal else "NOT met"}'
        print(f'  {label:48s} {ratio:5.2f}{verdict}')


if __name__ == '__main__':
    main()
