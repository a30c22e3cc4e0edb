"""Train LeNet on Fashion-MNIST with a distributed KVStore -- the training script of notebook 08.

Every process of a parameter-server job runs this same file (the launcher starts it once per
scheduler, server and worker; see ``helpers.dist``). In the scheduler and the servers,
``import mxnet`` sees ``DMLC_ROLE`` and turns the process into a scheduler or server: it serves
until the job ends and never reaches ``main()``. Only the workers train.

    python -m helpers.dist_train --kvstore dist_sync --epochs 2 --batch-size 64   # via a launcher

Each worker reads its own part of the training set (shard ``rank`` of ``num_workers``), computes
gradients on its batches, and ``trainer.step`` pushes them to the servers, which sum the workers'
gradients, update the weights, and send them back. ``--batch-size`` is per worker; the global
batch of one synchronous step is ``batch_size * num_workers``, and that is what ``trainer.step``
is told so the servers divide the summed gradient by the number of examples it came from.
"""
import argparse
import json
import os
import sys
import time

import numpy as np
import mxnet as mx  # in a scheduler/server process this line runs the server and exits
from mxnet import autograd, gluon

from helpers.data import ArrayLoader, load_arrays
from helpers.models import lenet
from helpers.split import shard_bounds
from helpers.train import evaluate_accuracy

KVSTORES = ('dist_sync', 'dist_async', 'dist_device_sync', 'dist_sync_device')


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--kvstore', default='dist_sync', choices=KVSTORES)
    p.add_argument('--epochs', type=int, default=2)
    p.add_argument('--batch-size', type=int, default=64, help='per worker')
    p.add_argument('--lr', type=float, default=0.1)
    p.add_argument('--n-train', type=int, default=12000, help='first examples of the training set')
    p.add_argument('--n-test', type=int, default=2000)
    p.add_argument('--seed', type=int, default=0)
    p.add_argument('--max-steps', type=int, default=0, help='stop after this many steps (0: no limit)')
    p.add_argument('--step-delay', type=float, default=0.0, help='seconds to sleep after each step')
    p.add_argument('--slow-rank', type=int, default=-1, help='only this rank sleeps (default: all)')
    p.add_argument('--out', default='', help='directory for per-rank results (params, first step)')
    args = p.parse_args(argv)
    for name in ('epochs', 'batch_size', 'n_train', 'n_test'):
        if getattr(args, name) < 1:
            p.error(f'--{name.replace("_", "-")} must be >= 1')
    return args


def worker_device(rank):
    """This worker's device: a GPU (``rank`` modulo the GPU count) if there is one, else the CPU."""
    n = mx.context.num_gpus()
    return mx.gpu(rank % n) if n else mx.cpu()


def my_shard(X, y, rank, num_workers):
    """The part of ``(X, y)`` that worker ``rank`` trains on: contiguous shard ``rank`` of
    ``num_workers``. Returns ``(X_part, y_part, (begin, end))``."""
    begin, end = shard_bounds(len(X), num_workers, even_split=False)[rank]
    return X[begin:end], y[begin:end], (begin, end)


def snapshot(net):
    """Weights and gradients of ``net`` as NumPy arrays (for the first-step check of notebook 08)."""
    params = net.collect_params().items()
    return {**{f'before/{k}': p.data().asnumpy() for k, p in params},
            **{f'grad/{k}': p.grad().asnumpy() for k, p in params}}


def save_first_step(path, before, net):
    """Save ``before`` (a :func:`snapshot`) and the weights after the step to ``path`` (``.npz``)."""
    after = {f'after/{k}': p.data().asnumpy() for k, p in net.collect_params().items()}
    np.savez(path, **before, **after)


def main(argv=None):
    args = parse_args(argv)
    kv = mx.kv.create(args.kvstore)
    rank, num_workers = kv.rank, kv.num_workers
    ctx = worker_device(rank)
    X, y = load_arrays(train=True)
    n_train = min(args.n_train, len(X))
    X, y, shard = my_shard(X[:n_train], y[:n_train], rank, num_workers)
    # dist_sync: every worker must take the same number of steps, or the others wait for it
    # forever. The smallest shard has n_train // num_workers examples.
    steps_per_epoch = (n_train // num_workers) // args.batch_size
    if steps_per_epoch == 0:
        raise SystemExit(f'--n-train {n_train} gives fewer than --batch-size {args.batch_size} '
                         f'examples to each of the {num_workers} workers')
    Xt, yt = load_arrays(train=False)
    train_iter = ArrayLoader(X, y, args.batch_size, shuffle=True, seed=args.seed + rank,
                             last_batch='discard')
    test_iter = ArrayLoader(Xt[:args.n_test], yt[:args.n_test], 500)
    print(f'rank {rank} of {num_workers} ({kv.type}, {ctx}): training examples '
          f'{shard[0]}..{shard[1] - 1}, '
          f'{steps_per_epoch} batches of {args.batch_size} per epoch', flush=True)

    net = lenet([ctx], seed=args.seed)  # same initial weights everywhere (the store also syncs them)
    net.hybridize()
    loss = gluon.loss.SoftmaxCrossEntropyLoss()
    trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': args.lr}, kvstore=kv)
    global_batch = args.batch_size * num_workers
    delay = args.step_delay if args.slow_rank in (-1, rank) else 0.0

    steps, start = 0, time.perf_counter()
    for epoch in range(1, args.epochs + 1):
        loss_sum, n = 0.0, 0
        for i, (X_batch, y_batch) in enumerate(train_iter):
            if i == steps_per_epoch:
                break
            X_batch, y_batch = X_batch.as_in_context(ctx), y_batch.as_in_context(ctx)
            with autograd.record():
                l = loss(net(X_batch), y_batch)
            l.backward()
            if steps == 0 and args.out:
                before = snapshot(net)
            # The servers sum the gradients of all workers: divide by the global batch.
            trainer.step(global_batch)
            if steps == 0 and args.out:
                save_first_step(os.path.join(args.out, f'first-step-rank{rank}.npz'), before, net)
            loss_sum += float(l.sum().asscalar())
            n += X_batch.shape[0]
            steps += 1
            if delay:
                time.sleep(delay)
            if args.max_steps and steps >= args.max_steps:
                break
        print(f'rank {rank} epoch {epoch}: loss {loss_sum / max(n, 1):.3f}, {steps} steps, '
              f'{time.perf_counter() - start:.1f} s', flush=True)
        if args.max_steps and steps >= args.max_steps:
            break
    seconds = time.perf_counter() - start
    acc = evaluate_accuracy(net, test_iter, [ctx])
    result = {'rank': rank, 'num_workers': num_workers, 'kvstore': kv.type, 'steps': steps,
              'examples': len(X), 'shard': list(shard), 'test_acc': acc, 'seconds': seconds,
              'batch_size': args.batch_size, 'global_batch': global_batch}
    print(f'rank {rank} done: test acc {acc:.3f}, {steps} steps in {seconds:.1f} s', flush=True)
    if args.out:
        net.save_parameters(os.path.join(args.out, f'params-rank{rank}.params'))
        with open(os.path.join(args.out, f'result-rank{rank}.json'), 'w') as f:
            json.dump(result, f)
    return result


if __name__ == '__main__':
    sys.exit(0 if main() else 1)
