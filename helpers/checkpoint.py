"""Checkpoints: save once, resume exactly -- on k devices and in a distributed job (notebook 13).

A checkpoint is what the next step depends on: the weights, and the optimizer's state (Adam's two
moments and its step count ``t``, which its bias correction reads). With data parallelism every device
(and every worker) holds the same weights, so one of them writes, once: :func:`save_checkpoint`
saves the weights as ``device`` holds them and the ``Trainer``'s state (``Trainer.save_states``:
the optimizer and its updater's state, pickled; python/mxnet/gluon/trainer.py, MXNet 1.9.1).
:func:`load_checkpoint` gives every device the saved weights (``Parameter.set_data``) and the
``Trainer`` its state, before its first step. A run resumed this way takes the same next steps, bit
for bit, as the run that never stopped, provided it sees the same batches in the same order.

Run as a script, this module is the worker of notebook 13's distributed job (notebook 08's
machinery: ``helpers.dist.run_local_job``): every worker trains LeNet with Adam on its shard in a
``dist_sync`` job, only rank 0 writes the checkpoint, and ``--resume`` starts a new job from it:

    python -m helpers.checkpoint --steps 20 --save-at 10 --ckpt DIR --out DIR      # via a launcher

The optimizer runs on the workers (``update_on_kvstore=False``; the servers only add up): with the
update on the servers, the state lives there and ``Trainer.save_states`` refuses on a worker ("Cannot
save states for distributed training", ``KVStore.save_optimizer_states``,
python/mxnet/kvstore/kvstore.py). Each worker's batch ``s`` is a fixed slice of its shard, so a
resumed job sees the batches the uninterrupted one saw.
"""
import argparse
import json
import os
import sys

import numpy as np
import mxnet as mx  # in a scheduler/server process of a job this line runs the server and exits
from mxnet import gluon, nd

from helpers import checks

__all__ = ['save_checkpoint', 'load_checkpoint', 'adam_trainer', 'init_store', 'command', 'run_job',
           'read_results', 'main']


def save_checkpoint(prefix, net, trainer, device):
    """Write, once, the weights as ``device`` holds them and the Trainer's state (notebook 13)."""
    checks.checkpoint(prefix, net, trainer, device)
    nd.save(f'{prefix}.params', [p.data(device) for p in net.collect_params().values()])
    trainer.save_states(f'{prefix}.states')


def load_checkpoint(prefix, net, trainer):
    """Every device's copy of the weights, and the Trainer's state, from a checkpoint (notebook 13)."""
    checks.checkpoint(prefix, net, trainer, load=True)
    for p, value in zip(net.collect_params().values(), nd.load(f'{prefix}.params')):
        p.set_data(value)                      # copies to every device the parameter lives on
    trainer.load_states(f'{prefix}.states')


def adam_trainer(net, lr, kvstore='device', update_on_kvstore=None, **adam):
    """A ``Trainer`` with Adam over ``net``'s parameters *in the network's order* (notebook 13).

    Given a ``ParameterDict``, MXNet 1.9.1's ``Trainer`` sorts the parameters by name
    (``Trainer.__init__``, python/mxnet/gluon/trainer.py), and its saved state is keyed by position in
    that order. Gluon names layers from a process-wide counter (``dense8_``, ``dense10_``, ...), so two
    copies of one network built at different moments can sort differently, and loaded state would land
    on the wrong parameters. A list keeps the network's own order, the same for every copy."""
    if not isinstance(net, gluon.Block):
        raise TypeError(f'net must be a Gluon network (a gluon.Block), got {type(net).__name__}')
    if kvstore is not None and not isinstance(kvstore, mx.kv.KVStore):
        checks.text(kvstore, 'kvstore')
    if update_on_kvstore is not None:
        checks.flag(update_on_kvstore, 'update_on_kvstore')
    params = list(net.collect_params().values())
    if not params:
        raise ValueError('net has no parameters')
    return gluon.Trainer(params, 'adam', dict(learning_rate=checks.positive(lr, 'lr'), **adam),
                         kvstore=kvstore, update_on_kvstore=update_on_kvstore)


def init_store(trainer):
    """Put ``trainer``'s parameters on its KVStore now, before the first forward, as its first ``step``
    would (notebook 13's worker). Returns ``trainer``; a second call does nothing.

    WHY (a race in MXNet 1.9.1, retired, so no fix upstream): a ``Trainer`` sets up its store lazily,
    inside its first ``step``, *after* that step's backward (``Trainer.step`` calls ``_init_kvstore``
    and ``_init_params``, python/mxnet/gluon/trainer.py). In a ``dist_sync`` job with
    ``update_on_kvstore=False`` it then pulls every weight's initial value (``KVStore.broadcast``:
    rank 0 pushes it, every worker pulls) and at once pushes the first gradients (``pushpull``). With
    CPU arrays the pull writes the weight (or a buffer copied into it) and the pushpull only the
    gradient (``comm_buf = merged`` rebinds the key's buffer to the gradient): no engine dependency
    orders them (``KVStoreDist::PullImpl`` and ``PushPullImpl``, src/kvstore/kvstore_dist.h; with GPU
    arrays both go through one pinned buffer, which orders them). A server without an optimizer keeps
    under each key the last sum it made (``ApplyUpdates``, src/kvstore/kvstore_dist_server.h:
    ``CopyFromTo(update_buf->merged, &stored)``) and answers a pull from it at once. A worker whose pull
    the server handles after both workers' first gradients were summed gets that sum as its weight.
    Measured: in 3 of 16 runs of notebook 13's job (Python 3.11 and 3.13), rank 0's output bias became
    the first step's gradient sum, to 1e-6, and the workers ended 6.6 apart; with this call, in none of
    32. Set up before the first forward, every pull is answered before its worker has a gradient: the
    forward waits for the weights the pulls write. ``Trainer.load_states`` and ``save_states`` make
    these two calls; MXNet has no public one that makes only them. With the update on the servers the
    race is harmless: the pull returns weights, which the step's ``pushpull`` then overwrites (its copy
    into the weight is ordered after the pull's write)."""
    if not isinstance(trainer, gluon.Trainer):
        raise TypeError(f'trainer must be a gluon.Trainer, got {type(trainer).__name__}')
    if not trainer._kv_initialized:
        trainer._init_kvstore()
    if trainer._params_to_init:
        trainer._init_params()
    return trainer


# --------------------------------------------------------------------------- the distributed job
def _parser():
    p = argparse.ArgumentParser(description='worker of notebook 13: checkpoint once, resume exactly')
    p.add_argument('--steps', type=int, default=20, help='train until this step')
    p.add_argument('--save-at', type=int, default=0, help='rank 0 writes a checkpoint after this step')
    p.add_argument('--resume', action='store_true', help='start from the checkpoint in --ckpt')
    p.add_argument('--ckpt', required=True, help='directory of the checkpoint')
    p.add_argument('--out', required=True, help='directory for per-rank results')
    p.add_argument('--batch-size', type=int, default=32, help='per worker')
    p.add_argument('--lr', type=float, default=1e-3)
    p.add_argument('--seed', type=int, default=0)
    return p


def command(**options):
    """The command line of a worker of notebook 13's job: ``command(steps=20, save_at=10, ckpt=d,
    out=o)``, ``resume=True`` a flag (notebook 13). An unknown option raises TypeError."""
    actions = {a.dest: a for a in _parser()._actions if a.dest != 'help'}
    cmd = [sys.executable, '-m', 'helpers.checkpoint']
    for name, value in options.items():
        if name not in actions:
            raise TypeError(f'unknown option {name!r}: expected one of {", ".join(sorted(actions))}')
        flag = actions[name].option_strings[0]
        if actions[name].nargs == 0:
            cmd += [flag] if checks.flag(value, name) else []
        else:
            cmd += [flag, str(checks.option(value, name, actions[name]))]
    missing = [a.dest for a in actions.values() if a.required and a.dest not in options]
    if missing:
        raise TypeError(f'command() needs the option(s) {", ".join(missing)} (the worker requires them)')
    return cmd


def run_job(command, num_workers=2, attempts=3, timeout=180, echo=False):
    """``helpers.dist.run_local_job(command, num_workers, 1 server)``, started again (up to ``attempts``
    times in all) only when its scheduler could not bind the port the launcher picked (notebook 13).
    Returns ``(JobResult, address, attempts used)``: every job runs on a loopback address of its own
    (``helpers.job.loopback_address`` says why), so that no other job on the machine can join it. A
    bind failure (``helpers.dist`` names it) is retried; any other failure raises at once."""
    from helpers.dist import DistJobError, run_local_job
    attempts = checks.whole(attempts, 'attempts', 1)
    checks.whole(num_workers, 'num_workers', 1)
    for attempt in range(1, attempts + 1):
        try:
            result = run_local_job(command, num_workers=num_workers, num_servers=1, timeout=timeout, echo=echo)
            return result, result.host, attempt
        except DistJobError as e:
            if 'could not bind port' not in str(e) or attempt == attempts:
                raise


def read_results(out, num_workers=2):
    """Per rank, in rank order, what a worker of notebook 13's job reported: ``rank``, ``first_step``,
    ``steps``, ``wrote`` (the files it wrote into the checkpoint directory), and ``weights``, its final
    weights as NumPy arrays (notebook 13)."""
    results, out = [], checks.path(out, 'out')
    for r in range(checks.whole(num_workers, 'num_workers', 1, checks.MAX_PROCESSES)):
        with open(os.path.join(out, f'result-rank{r}.json')) as f:
            result = json.load(f)
        with np.load(os.path.join(out, f'weights-rank{r}.npz')) as z:
            result['weights'] = [z[f'p{i}'] for i in range(len(z.files))]
        results.append(result)
    return results


def main(argv=None):
    """A worker's life (notebook 13): join the ``dist_sync`` job, build LeNet and an Adam ``Trainer``
    whose optimizer runs on the worker, load the checkpoint if ``--resume``, put the parameters on the
    store (:func:`init_store`), train to ``--steps`` on fixed batches of its shard, rank 0 alone
    writing the checkpoint after step ``--save-at``; then write its final weights and a result file to
    ``--out``."""
    from helpers.data import load_arrays
    from helpers.dist_train import my_shard
    from helpers.models import lenet
    from helpers.train import train_batch
    args = _parser().parse_args(argv)
    kv = mx.kv.create('dist_sync')
    devices = [mx.cpu(0)]
    net = lenet(devices, args.seed)
    trainer = adam_trainer(net, args.lr, kvstore=kv, update_on_kvstore=False,
                           rescale_grad=1 / kv.num_workers)        # the servers add the workers' sums
    prefix, first, wrote = os.path.join(args.ckpt, 'checkpoint'), 0, []
    if args.resume:
        with open(prefix + '.json') as f:
            first = json.load(f)['step']
        load_checkpoint(prefix, net, trainer)
    init_store(trainer)       # before the first forward: a race otherwise (init_store says which)
    X, y = load_arrays(train=True)
    n = kv.num_workers * args.steps * args.batch_size                # one slice per step and worker
    X, y, _ = my_shard(X[:n], y[:n], kv.rank, kv.num_workers)
    for s in range(first, args.steps):
        b = slice(s * args.batch_size, (s + 1) * args.batch_size)    # batch s: the same in every run
        train_batch(net, nd.array(X[b]), nd.array(y[b]), trainer, devices)
        if s + 1 == args.save_at and kv.rank == 0:                   # once: rank 0 only
            save_checkpoint(prefix, net, trainer, devices[0])
            with open(prefix + '.json', 'w') as f:
                json.dump({'step': s + 1}, f)
            wrote += [os.path.basename(prefix) + ext for ext in ('.params', '.states', '.json')]
            print(f'rank 0 wrote a checkpoint after step {s + 1}: {", ".join(wrote)}', flush=True)
    nd.waitall()
    np.savez(os.path.join(args.out, f'weights-rank{kv.rank}.npz'),
             **{f'p{i}': p.data(devices[0]).asnumpy() for i, p in enumerate(net.collect_params().values())})
    result = {'rank': kv.rank, 'first_step': first, 'steps': args.steps - first, 'wrote': wrote}
    with open(os.path.join(args.out, f'result-rank{kv.rank}.json'), 'w') as f:
        json.dump(result, f)
    print(f'rank {kv.rank}: steps {first + 1} to {args.steps} done', flush=True)
    return result


if __name__ == '__main__':
    from helpers.job_node import run_script
    run_script(main)        # on an exception: the traceback, then exit at once (run_script says why)
