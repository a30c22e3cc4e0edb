"""Train LeNet on Fashion-MNIST with a distributed KVStore -- the training script of notebook 08.

Every process of a parameter-server job runs this same file (the launcher starts it once per
scheduler, server and worker; see ``helpers.dist``). In the scheduler and the servers,
``import mxnet`` sees ``DMLC_ROLE`` and turns the process into a scheduler or server: it serves
until the job ends and never reaches :func:`main`. Only the workers train.

    python -m helpers.dist_train --kvstore dist_sync --epochs 2 --batch-size 64   # via a launcher

What differs from notebook 06's single-process training is in two short functions, the lessons of
notebook 08: :func:`my_shard` (each worker reads its own part of the data) and :func:`train_worker`
(the same step, ``helpers.train.train_batch``, on every worker, the same number of steps everywhere,
and a ``Trainer`` that divides by the *global* batch). :func:`main` is the glue: arguments, the
worker's devices, the result file.

The result file ``result-rank{r}.json`` (with ``--out``) holds the worker's rank, devices, shard,
steps, per-epoch loss, test accuracy and ``stamps``: the wall-clock time (``time.time()``) at the
start and at the end of every step, for the sync/async timelines of notebook 08, and ``net_bytes``:
the network byte counters of the worker's namespace at the same moments (:func:`network_bytes`).
With ``--out``
the worker also saves its final parameters and its weights after the first step
(``first-step-rank{r}.npz``).
"""
import argparse
import json
import os
import sys
import time

import numpy as np
import mxnet as mx  # in a scheduler/server process this line runs the server and exits
from mxnet import gluon

from helpers import checks
from helpers.data import ArrayLoader, load_arrays
from helpers.devices import gpu_pool
from helpers.job_node import progress, run_script
from helpers.models import lenet
from helpers.split import shard_bounds
from helpers.train import evaluate_accuracy, train_batch

__all__ = ['KVSTORES', 'parse_args', 'command', 'read_results', 'plot_timelines', 'worker_devices',
           'my_shard', 'steps_per_epoch', 'train_worker', 'network_bytes', 'traffic_per_step',
           'push_then_pull', 'main', 'plot_seeds']

KVSTORES = ('dist_sync', 'dist_device_sync', 'dist_async')


def _parser():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--kvstore', default='dist_sync', choices=KVSTORES)
    p.add_argument('--epochs', type=int, default=2)
    p.add_argument('--batch-size', type=int, default=64, help='per worker')
    p.add_argument('--lr', type=float, default=0.1)
    p.add_argument('--n-train', type=int, default=12000, help='first examples of the training set')
    p.add_argument('--n-test', type=int, default=2000)
    p.add_argument('--devices-per-worker', type=int, default=1,
                   help="this worker's GPUs on a GPU host, else CPU stand-ins")
    p.add_argument('--seed', type=int, default=0)
    p.add_argument('--max-steps', type=int, default=0,
                   help='train one epoch of at most this many steps (0: no limit)')
    p.add_argument('--step-delay', type=float, default=0.0, help='seconds to sleep after each step')
    p.add_argument('--slow-rank', type=int, default=-1, help='only this rank sleeps (default: all)')
    p.add_argument('--compression', type=float, default=0.0,
                   help='2-bit gradient compression with this threshold (0: none)')
    p.add_argument('--trainer-pushpull', action='store_true',
                   help="with --compression, keep the Trainer's pushpull (MXNet 1.9.1 refuses it)")
    p.add_argument('--out', default='', help='directory for per-rank results')
    return p


def parse_args(argv=None):
    """The script's command line (notebook 08)."""
    p = _parser()
    args = p.parse_args(None if argv is None else checks.strings(argv, 'argv', empty=True))
    for name in ('epochs', 'batch_size', 'n_train', 'n_test', 'devices_per_worker'):
        if getattr(args, name) < 1:
            p.error(f'--{name.replace("_", "-")} must be >= 1')
    return args


def command(module='helpers.dist_train', **options):
    """The command line that runs this script (or ``module``, a copy of it) with ``options``, one per
    command-line option (notebook 08): ``command(kvstore='dist_async', lr=0.3, out=d)`` is
    ``[python, '-m', 'helpers.dist_train', '--kvstore', 'dist_async', '--lr', '0.3', '--out', d]``,
    and ``trainer_pushpull=True`` a flag without a value. An unknown option raises TypeError."""
    actions = {a.dest: a for a in _parser()._actions if a.dest != 'help'}
    cmd = [sys.executable, '-m', checks.module(module, 'module')]
    for name, value in options.items():
        if name not in actions:
            raise TypeError(f'unknown option {name!r}: expected one of {", ".join(sorted(actions))}')
        flag = actions[name].option_strings[0]
        if actions[name].nargs == 0:                   # a flag: present or not
            cmd += [flag] if checks.flag(value, name) else []
        else:
            cmd += [flag, str(checks.option(value, name, actions[name]))]
    return cmd


def read_results(out, num_workers=2):
    """The result dicts (see the module's docstring) that the ``num_workers`` workers of a run wrote
    to the directory ``out``, in rank order (notebook 08)."""
    out, num_workers = checks.path(out, 'out'), checks.whole(num_workers, 'num_workers', 1, checks.MAX_DEVICES)
    results = []
    for r in range(num_workers):
        with open(os.path.join(out, f'result-rank{r}.json')) as f:
            results.append(json.load(f))
    return sorted(results, key=lambda result: result['rank'])


def plot_timelines(runs, slow_rank=1, figsize=(8, 3.6), alt=None):
    """Steps done against time, one panel per run, one line per worker (notebook 08: ``dist_sync``
    beside ``dist_async``). ``runs`` maps a panel title to the run's result dicts
    (:func:`read_results`); the worker of rank ``slow_rank`` is labelled slow; ``alt``: the
    figure's text alternative (``helpers.plot.show``)."""
    from helpers import plot         # here: the processes of a job need no matplotlib
    checks.results(runs, 'runs')
    slow_rank = None if slow_rank is None else checks.whole(slow_rank, 'slow_rank')
    panels = {title: {f"rank {r['rank']}" + (' (slow)' if r['rank'] == slow_rank else ''): r['stamps']
                      for r in results} for title, results in runs.items()}
    with plot.slide_fonts():
        plot.step_timelines(panels, figsize=figsize, alt=alt)


def plot_seeds(runs, alt=None, figsize=(8, 3.6)):
    """The stored runs of ``benchmarks/dist_sync_async.py`` (notebook 08), drawn by
    ``helpers.plot.sync_async_seeds``; ``alt``: the figure's text alternative."""
    from helpers import plot         # here: the processes of a job need no matplotlib
    plot.sync_async_seeds(runs, alt=alt, figsize=figsize)


def worker_devices(index, count):
    """The ``count`` devices of worker ``index`` on this host (notebook 08): of the GPUs the series
    may use here (``helpers.devices.gpu_pool``: every GPU, or those ``MXDP_DEVICES=gpu:...`` lists,
    none if it forces stand-ins), numbers ``index * count``, ... (modulo their count) if there are at
    least ``count``, else CPU stand-ins ``cpu(0)`` ... ``cpu(count - 1)`` (a worker cannot own one
    GPU twice: on a 1-GPU host a worker with two devices gets two stand-ins)."""
    index, count = checks.whole(index, 'index'), checks.whole(count, 'count', 1, checks.MAX_DEVICES)
    pool = gpu_pool()
    if len(pool) >= count:
        return [pool[(index * count + i) % len(pool)] for i in range(count)]
    return [mx.cpu(i) for i in range(count)]


def my_shard(X, y, rank, num_workers):
    """The part of ``(X, y)`` that worker ``rank`` trains on: contiguous shard ``rank`` of
    ``num_workers`` (notebook 03's uneven split). Returns ``(X_part, y_part, (begin, end))``."""
    checks.worker_shard(X, y, rank, num_workers)
    begin, end = shard_bounds(len(X), num_workers)[rank]
    return X[begin:end], y[begin:end], (begin, end)


def steps_per_epoch(n_train, num_workers, batch_size):
    """Steps every worker takes per epoch (notebook 08): whole batches of the *smallest* shard, so
    that no synchronous worker waits forever for a step another one never takes."""
    checks.epoch_steps(n_train, num_workers, batch_size)
    return (n_train // num_workers) // batch_size


def train_worker(kv, devices, X, y, batch_size, steps, lr, epochs, seed=0, on_step=None):
    """One worker's training (notebook 08): notebook 06's step on its shard ``(X, y)``, ``steps``
    steps per epoch, divided by the global batch (the servers add every worker's gradients);
    ``on_step(net, losses)`` runs after each step, once its new weights are here (:class:`_Recorder`)."""
    checks.worker(kv, steps, lr, epochs, on_step)
    net = lenet(devices, seed)                          # the same initial weights on every worker
    trainer = gluon.Trainer(net.collect_params(), 'sgd',
                            {'learning_rate': lr, 'rescale_grad': 1 / kv.num_workers}, kvstore=kv)
    batches = ArrayLoader(X, y, batch_size, shuffle=True, seed=seed + kv.rank, last_batch='discard')
    for epoch in range(epochs):
        for _, (X_batch, y_batch) in zip(range(steps), batches):
            losses = train_batch(net, X_batch, y_batch, trainer, devices)
            mx.nd.waitall()                             # the step ends when the new weights are here
            if on_step:
                on_step(net, losses)
    return net


def network_bytes():
    """``[received, sent]``: bytes counted by every network interface of this process's network
    namespace except loopback, from ``/proc/net/dev`` (notebook 08: a worker alone in a network
    namespace counts exactly its own traffic). ``[0, 0]`` where there is no such file."""
    try:
        with open('/proc/net/dev') as f:
            rows = [line.split() for line in f.readlines()[2:]]
    except OSError:
        return [0, 0]
    rows = [r for r in rows if r[0].rstrip(':') != 'lo']
    return [sum(int(r[1]) for r in rows), sum(int(r[9]) for r in rows)]


def traffic_per_step(result):
    """``(sent, received)``: bytes per step through the network interfaces of a worker's namespace,
    from its result dict (notebook 08): the counters' growth from the end of step 1 to the end of the
    last step, per step (step 1 also carries the keys' initialisation, so it is left out)."""
    net = checks.byte_counters(result)
    steps = len(net) - 1
    if steps < 2:
        raise ValueError(f'need at least 2 steps to measure a step, got {steps}')
    received, sent = ((net[-1][i] - net[1][i]) / (steps - 1) for i in (0, 1))
    return sent, received


class _Recorder:
    """The bookkeeping of :func:`main`, kept out of the training loop: per-step time stamps,
    network byte counters and losses, the weights after the first step, an optional delay.

    It reads weights, never gradients: with one CPU device, the dist store receives the new weights
    into the gradient buffer itself (src/kvstore/kvstore_dist.h, ``PushPullImpl``, ``comm_buf =
    merged`` when the merged array is on the CPU; on a GPU it uses a separate host buffer)."""

    def __init__(self, args, rank, out):
        self.stamps, self.net, self.losses = [time.time()], [network_bytes()], []
        self.out, self.rank = out, rank
        self.delay = args.step_delay if args.slow_rank in (-1, rank) else 0.0

    def __call__(self, net, losses):
        self.stamps.append(time.time())
        self.net.append(network_bytes())
        self.losses.append(sum(float(l.asscalar()) for l in losses))
        progress(len(self.losses), rank=self.rank)      # for the job runner: a step was finished
        if len(self.losses) == 1 and self.out:     # weights after the first step (not gradients:
            np.savez(os.path.join(self.out, f'first-step-rank{self.rank}.npz'),   # see train_worker)
                     **{k: p.data(p.list_ctx()[0]).asnumpy() for k, p in net.collect_params().items()})
        if self.delay:
            time.sleep(self.delay)                      # a stand-in for a slower machine


def push_then_pull(kv):
    """Make ``kv.pushpull`` a ``push`` followed by a ``pull`` (notebook 08). MXNet 1.9.1's dist
    stores refuse gradient compression in ``pushpull`` ("Compression not supported with PushPull",
    ``KVStoreDist::PushPullImpl``, src/kvstore/kvstore_dist.h), and Gluon's ``Trainer`` sums dense
    gradients with ``pushpull`` only (``Trainer._allreduce_grads``), as does Module for dense arrays
    (``_update_params_on_kvstore``, python/mxnet/model.py). Separate ``push`` and ``pull`` calls do
    compress. Same result: the pull waits for the push of the same key."""
    checks.kvstore(kv)

    def pushpull(key, value, out=None, priority=0):
        kv.push(key, value, priority=priority)
        kv.pull(key, out=value if out is None else out, priority=priority)
    kv.pushpull = pushpull
    return kv


def main(argv=None):
    """A worker's life (notebook 08): parse arguments, create the store, read the shard, train,
    evaluate, write the result file. Returns the result dict."""
    args = parse_args(argv)
    kv = mx.kv.create(args.kvstore)
    progress(0, rank=kv.rank)               # for the job runner: joined, as this rank
    if args.compression:
        kv.set_gradient_compression({'type': '2bit', 'threshold': args.compression})
        if not args.trainer_pushpull:
            push_then_pull(kv)      # the Trainer's pushpull would refuse compression
    devices = worker_devices(kv.rank, args.devices_per_worker)
    X, y = load_arrays(train=True)
    n_train = min(args.n_train, len(X))
    X, y, shard = my_shard(X[:n_train], y[:n_train], kv.rank, kv.num_workers)
    steps = steps_per_epoch(n_train, kv.num_workers, args.batch_size)
    if steps == 0:
        raise SystemExit(f'--n-train {n_train} gives fewer than --batch-size {args.batch_size} '
                         f'examples to each of the {kv.num_workers} workers')
    print(f'rank {kv.rank} of {kv.num_workers} ({kv.type}, {", ".join(map(str, devices))}): examples '
          f'{shard[0]}..{shard[1] - 1}, {steps} batches of {args.batch_size} per epoch', flush=True)
    epochs = args.epochs
    if args.max_steps:                      # one short epoch, the same on every worker
        steps, epochs = min(steps, args.max_steps), 1
    record = _Recorder(args, kv.rank, args.out)
    net = train_worker(kv, devices, X, y, args.batch_size, steps, args.lr, epochs, args.seed,
                       on_step=record)
    progress(len(record.losses), final=True, rank=kv.rank)    # evaluating now: no more steps to wait for
    Xt, yt = load_arrays(train=False)
    # float(): on NumPy 2 the accuracy is a NumPy float32 (NEP 50), which json.dump cannot write
    acc = float(evaluate_accuracy(net, ArrayLoader(Xt[:args.n_test], yt[:args.n_test], 500), devices))
    n = len(record.losses)
    epoch_loss = [float(np.sum(record.losses[i:i + steps]) / (steps * args.batch_size))
                  for i in range(0, n, steps)]
    result = {'rank': kv.rank, 'num_workers': kv.num_workers, 'kvstore': kv.type,
              'devices': [str(d) for d in devices], 'shard': list(shard), 'steps': n,
              'steps_per_epoch': steps, 'batch_size': args.batch_size,
              'global_batch': args.batch_size * kv.num_workers, 'epoch_loss': epoch_loss,
              'test_acc': acc, 'stamps': record.stamps, 'net_bytes': record.net,
              'seconds': record.stamps[-1] - record.stamps[0]}
    print(f'rank {kv.rank} done: {n} steps in {result["seconds"]:.1f} s, loss {epoch_loss[-1]:.3f}, '
          f'test accuracy {acc:.3f}', flush=True)
    if args.out:
        net.save_parameters(os.path.join(args.out, f'params-rank{kv.rank}.params'))
        with open(os.path.join(args.out, f'result-rank{kv.rank}.json'), 'w') as f:
            json.dump(result, f)
    return result


if __name__ == '__main__':
    run_script(main)        # on an exception: the traceback, then exit at once (run_script says why)
