"""One epoch of LeNet on Fashion-MNIST: 1 vs k CPU devices, our loop vs the classic tutorial loop.

    python benchmarks/train_epoch.py                 # full epoch (60,000 images), k=2, 2 rounds
    python benchmarks/train_epoch.py --n-train 12800 --rounds 1

Seven configurations of the same model (LeNet), optimiser (plain SGD) and batch size, measured side
by side in one run and interleaved round by round (the best of the rounds counts), so that other
load on the machine hits them all alike:

- ours, by hand, 1 device / k devices: the loop of notebook 05 (``helpers.train.train_scratch``, one
  epoch; each step is ``train_batch_scratch``:
  our ``split_batch``, per-device forward/backward, our ``allreduce``, SGD on every device);
- ours, Gluon, 1 device / k devices: the loop of notebook 06 (``helpers.train.train``, one epoch;
  each step is ``train_batch``:
  our ``split_batch``, ``Trainer.step`` with its KVStore);

  both on ``helpers.data`` batches (cut from in-memory arrays, no per-example work), metrics read
  once per epoch;
- ours, Gluon, hybridized, k devices: the same with ``net.hybridize()`` (notebook 06 prints this
  comparison for single steps and explains it; the ratio is reported here, not asserted there);
- tutorial, 1 device / k devices: the classic straight-dope / d2l multi-GPU loop: a
  ``gluon.data.DataLoader`` over a dataset of uint8 HWC images with a per-example
  ``transforms.ToTensor()`` (as ``gluon.data.vision.FashionMNIST(...).transform_first(ToTensor())``),
  ``gluon.utils.split_and_load``, ``Trainer.step``, the loss read after every batch.

Goals (issue 4): our k-device epoch is at most 10 % slower than our 1-device epoch on the same cores,
and not slower than the tutorial loop's k-device epoch. The ratios are printed at the end, for both
of our loops (the Gluon one pays for ``Trainer.step``'s KVStore reduction, which a 1-device
``Trainer`` skips).
CPU stand-ins share the machine's cores, so k devices are not expected to be *faster*.
"""
import argparse
import os
import sys
import time

import numpy as np
import mxnet as mx
from mxnet import autograd, gluon, nd
from mxnet.gluon.data.vision import transforms

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from helpers.data import ArrayLoader, load_arrays  # noqa: E402
from helpers.models import init_lenet_params, lenet  # noqa: E402
from helpers.train import train, train_scratch  # noqa: E402


def make_net(devices, seed=0, hybridize=False):
    net = lenet(devices, seed)
    if hybridize:
        net.hybridize()
    trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.1})
    return net, trainer


def _one_epoch(train_fn, X, y, batch_size):
    """Time one training epoch with a loop of ``helpers.train`` (its history's ``seconds`` excludes
    the evaluation, which runs on one small batch here). Returns ``(seconds, mean train loss)``."""
    loader = ArrayLoader(X, y, batch_size, shuffle=True, seed=0)
    check = ArrayLoader(X[:batch_size], y[:batch_size], batch_size)
    history = train_fn(loader, check)
    return history['seconds'][0], history['loss'][0]


def epoch_ours(devices, X, y, batch_size, hybridize=False):
    net, trainer = make_net(devices, hybridize=hybridize)
    return _one_epoch(lambda loader, check: train(net, loader, check, devices, trainer, 1, progress=False),
                      X, y, batch_size)


def epoch_scratch(devices, X, y, batch_size):
    return _one_epoch(lambda loader, check: train_scratch(init_lenet_params(0), loader, check, devices,
                                                          0.1, 1, progress=False)[1],
                      X, y, batch_size)


def epoch_tutorial(devices, dataset, batch_size):
    net, trainer = make_net(devices)
    loss = gluon.loss.SoftmaxCrossEntropyLoss()
    loader = gluon.data.DataLoader(dataset.transform_first(transforms.ToTensor()), batch_size,
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


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--k', type=int, default=2, help='number of CPU devices (default 2)')
    parser.add_argument('--batch-size', type=int, default=256)
    parser.add_argument('--n-train', type=int, default=None, help='use only the first N images')
    parser.add_argument('--rounds', type=int, default=2, help='interleaved repetitions (best counts)')
    args = parser.parse_args()

    X, y = load_arrays(train=True)
    X, y = X[:args.n_train], y[:args.n_train]
    # the raw form Gluon's FashionMNIST dataset has: uint8 (28, 28, 1) images, int32 labels
    images = (X[:, 0, :, :, None] * 255).round().astype(np.uint8)
    raw = gluon.data.ArrayDataset(nd.array(images, dtype=np.uint8), y)  # as vision.FashionMNIST stores them
    one, k = [mx.cpu(0)], [mx.cpu(i) for i in range(args.k)]
    configs = {
        'by hand, 1 device': lambda: epoch_scratch(one, X, y, args.batch_size),
        f'by hand, {args.k} devices': lambda: epoch_scratch(k, X, y, args.batch_size),
        'Gluon, 1 device': lambda: epoch_ours(one, X, y, args.batch_size),
        f'Gluon, {args.k} devices': lambda: epoch_ours(k, X, y, args.batch_size),
        f'Gluon hybridized, {args.k}': lambda: epoch_ours(k, X, y, args.batch_size, hybridize=True),
        'tutorial, 1 device': lambda: epoch_tutorial(one, raw, args.batch_size),
        f'tutorial, {args.k} devices': lambda: epoch_tutorial(k, raw, args.batch_size),
    }
    print(f'LeNet, one epoch of {len(X)} Fashion-MNIST images, batch {args.batch_size}, '
          f'{args.k} CPU devices vs 1, MXNet {mx.__version__}, {os.cpu_count()} cores, '
          f'{args.rounds} round(s)', flush=True)
    warm = 4 * args.batch_size   # warm-up, not timed: MXNet creates its kernels' primitives on first use
    epoch_scratch(one, X[:warm], y[:warm], args.batch_size)
    epoch_scratch(k, X[:warm], y[:warm], args.batch_size)
    epoch_ours(one, X[:warm], y[:warm], args.batch_size)
    epoch_ours(k, X[:warm], y[:warm], args.batch_size)
    epoch_ours(k, X[:warm], y[:warm], args.batch_size, hybridize=True)
    epoch_tutorial(one, gluon.data.ArrayDataset(raw[:warm][0], y[:warm]), args.batch_size)
    epoch_tutorial(k, gluon.data.ArrayDataset(raw[:warm][0], y[:warm]), args.batch_size)
    best = {name: float('inf') for name in configs}
    for r in range(args.rounds):
        for name, run in configs.items():
            seconds, loss = run()
            best[name] = min(best[name], seconds)
            print(f'  round {r + 1}: {name:22s} {seconds:6.2f} s  (train loss {loss:.3f})', flush=True)
    print('best of rounds:')
    for name, seconds in best.items():
        print(f'  {name:22s} {seconds:6.2f} s')
    names = list(configs)
    hand_1, hand_k, ours_1, ours_k, hyb_k, tut_1, tut_k = (best[n] for n in names)
    K = args.k
    ratios = [
        (f'by hand {K} devices / by hand 1 device', hand_k / hand_1, 1.10),
        (f'Gluon {K} devices / Gluon 1 device', ours_k / ours_1, 1.10),
        (f'by hand {K} devices / tutorial {K} devices', hand_k / tut_k, 1.00),
        (f'Gluon {K} devices / tutorial {K} devices', ours_k / tut_k, 1.00),
        ('Gluon 1 device / tutorial 1 device', ours_1 / tut_1, None),
        (f'Gluon hybridized {K} / Gluon {K} devices', hyb_k / ours_k, None),
        (f'tutorial {K} devices / tutorial 1 device', tut_k / tut_1, None),
    ]
    print('ratios (< 1: faster):')
    for label, ratio, goal in ratios:
        verdict = '' if goal is None else f'  goal <= {goal:.2f}: {"met" if ratio <= goal else "NOT met"}'
        print(f'  {label:42s} {ratio:5.2f}{verdict}')


if __name__ == '__main__':
    main()
