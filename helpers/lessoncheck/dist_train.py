"""The laws and checks of :mod:`helpers.dist_train` (notebook 08): a worker of a ``dist_sync`` job
-- its push and pull, its share of the data, its steps per epoch, its training loop -- checked on
recording stand-ins for the KVStore, with no process started. ``tests/test_dist.py`` calls the same
laws.
"""
import numpy as np
import mxnet as mx
from mxnet import gluon, nd

from helpers.lessoncheck.machinery import Broken, CPU, Law, _devices_words, _fmt, lesson, tiny_data
from helpers.lessoncheck.split import _split_why, _uneven_sizes

__all__ = ['check_push_then_pull', 'check_train_worker', 'check_my_shard', 'check_steps_per_epoch',
           'law_push_then_pull', 'law_push_then_pull_on_a_store', 'WORKER_CASES', 'law_worker_takes_the_global_step',
           'SHARD_CASES', 'law_my_shard', 'STEPS_CASES', 'law_steps_per_epoch']


class _RecordingStore:
    """A stand-in KVStore that records its calls: ``push`` sums what it is given, ``pull`` hands the
    last sum out, ``pushpull`` (which the lesson replaces) only records that it was called."""

    def __init__(self):
        self.calls, self.values = [], {}

    def push(self, key, value, priority=0):
        self.calls.append(('push', key, priority))
        self.values[key] = sum(v.asnumpy() for v in (value if isinstance(value, (list, tuple)) else [value]))

    def pull(self, key, out=None, priority=0, ignore_sparse=True):
        self.calls.append(('pull', key, priority))
        for o in (out if isinstance(out, (list, tuple)) else [out]):
            o[:] = self.values.get(key, np.nan)

    def pushpull(self, key, value, out=None, priority=0):
        self.calls.append(('pushpull', key, priority))


def law_push_then_pull(push_then_pull, k, out, priority):
    """Notebook 08: after ``push_then_pull(kv)`` (which returns ``kv``), ``kv.pushpull(key, value,
    out=..., priority=...)`` is ``kv.push(key, value, priority)`` followed by ``kv.pull(key, out,
    priority)`` -- into ``value`` itself when no ``out`` is given -- and every target holds the sum."""
    store = _RecordingStore()
    if push_then_pull(store) is not store:
        raise Broken('push_then_pull(kv) must return the store it was given', why='end with `return kv`')
    values = [nd.full((3,), i + 1, ctx=c) for i, c in enumerate(CPU[:k])]
    outs = [nd.zeros((3,), ctx=c) for c in CPU[:k]] if out else None
    if out:
        store.pushpull(7, values, out=outs, priority=priority)
    else:
        store.pushpull(7, values, priority=priority)
    want = [('push', 7, priority), ('pull', 7, priority)]
    call = f'kv.pushpull(7, values{", out=outs" if out else ""}, priority={priority})'
    if store.calls != want:
        got = ', '.join(f'{name}(key {key}, priority {p})' for name, key, p in store.calls) or 'no call'
        why = ('the store\'s own pushpull was called: assign your function to kv.pushpull' if
               any(c[0] == 'pushpull' for c in store.calls) else
               'push first, then pull: the pull waits for the push of the same key' if
               [c[0] for c in store.calls] == ['pull', 'push'] else
               f'pass the priority on to push and pull (priority={priority})' if
               [c[:2] for c in store.calls] == [w[:2] for w in want] else None)
        raise Broken(f'the calls that {call} makes', expected='push(key 7, priority {0}), pull(key 7, priority {0})'
                     .format(priority), got=got, why=why)
    total = float(sum(range(1, k + 1)))
    targets = outs if out else values
    held = [a.asnumpy() for a in targets]
    if any(not np.array_equal(h, np.full(3, total)) for h in held):
        raise Broken(f'after {call} every {"out" if out else "value"} array holds the sum',
                     expected=f'{total:g} everywhere', got=_devices_words(held),
                     why='pull into `out`, or into `value` itself when out is None')


def law_push_then_pull_on_a_store(push_then_pull, k):
    """Notebook 08: on MXNet's own ``local`` store, the replaced ``pushpull`` still sums: into ``out``,
    or into the pushed arrays when no ``out`` is given."""
    kv = mx.kv.create('local')
    kv.init(0, nd.zeros((4,)))
    push_then_pull(kv)
    grads = [nd.full((4,), i + 1, ctx=c) for i, c in enumerate(CPU[:k])]
    outs = [nd.zeros((4,), ctx=c) for c in CPU[:k]]
    kv.pushpull(0, grads, out=outs)
    kv.pushpull(0, grads)
    total = float(sum(range(1, k + 1)))
    for what, arrays in (('out', outs), ('the pushed arrays', grads)):
        held = [a.asnumpy() for a in arrays]
        if any(not np.array_equal(h, np.full(4, total)) for h in held):
            raise Broken(f'on a local KVStore of {k} device{"s" * (k > 1)}, {what} must hold the sum',
                         expected=f'{total:g} everywhere', got=_devices_words(held))


def _worker_store(num_workers, rank):
    """A stand-in for a ``dist_sync`` store of ``num_workers`` workers, seen from worker ``rank``, in
    which every other worker pushes exactly this worker's gradients: ``pushpull`` sums the devices'
    arrays and multiplies by ``num_workers``. Gluon's Trainer takes any ``KVStoreBase``; this one
    cannot run an optimizer, so the Trainer updates on the worker, as with dist stores' pushpull."""
    from mxnet.kvstore import KVStoreBase

    class Workers(KVStoreBase):
        def __init__(self):
            self.pushpulls = 0

        type = property(lambda self: 'dist_sync (stand-in)')
        rank = property(lambda self: rank)
        num_workers = property(lambda self: num_workers)

        @staticmethod
        def is_capable(capability):
            return False

        def broadcast(self, key, value, out, priority=0):
            for o in (out if isinstance(out, list) else [out]):
                o[:] = value.as_in_context(o.context)

        def pushpull(self, key, value, out=None, priority=0):
            self.pushpulls += 1
            values = value if isinstance(value, list) else [value]
            total = values[0].copyto(values[0].context)
            for v in values[1:]:
                total += v.as_in_context(total.context)
            total *= num_workers
            for o in (values if out is None else out if isinstance(out, list) else [out]):
                total.copyto(o)

        def set_optimizer(self, optimizer):
            raise TypeError('this stand-in store runs no optimizer')

        def save_optimizer_states(self, fname, dump_optimizer=False):
            raise TypeError('this stand-in store keeps no optimizer state')

        load_optimizer_states = save_optimizer_states
    return Workers()


WORKER_CASES = [dict(k=1, num_workers=2, rank=1, steps=2, epochs=2, batch_size=6),      # 2 and 4 workers: the
                dict(k=2, num_workers=2, rank=0, steps=3, epochs=1, batch_size=8),      # stand-in's sum times W and
                dict(k=3, num_workers=4, rank=3, steps=2, epochs=1, batch_size=9)]      # 1 / W are exact


def law_worker_takes_the_global_step(train_worker, k, num_workers, rank, steps, epochs, batch_size, lr=0.1, seed=3):
    """Notebook 08: a worker of a ``dist_sync`` job in which every worker pushes the same gradients
    takes notebook 06's step on its own batches -- ``ArrayLoader(..., shuffle=True, seed=seed + rank,
    last_batch='discard')``, ``steps`` per epoch, the initial weights of ``lenet(devices, seed)`` --
    because its Trainer divides the servers' sum by the global batch; ``on_step(net, losses)`` runs
    after every step, and the trained net comes back."""
    from helpers.data import ArrayLoader
    from helpers.models import lenet
    from helpers.train import train_batch
    devices = CPU[:k]
    X, y = tiny_data(2 * steps * batch_size + 3, seed)
    seen, first = [], []

    def on_step(net, losses):
        seen.append((net, losses))
        if len(seen) == 1:
            first.extend(p.data(devices[0]).asnumpy() for p in net.collect_params().values())
    kv = _worker_store(num_workers, rank)
    net = train_worker(kv, devices, X, y, batch_size, steps, lr, epochs, seed=seed, on_step=on_step)
    ref = lenet(devices, seed)
    start = [p.data(devices[0]).asnumpy() for p in ref.collect_params().values()]
    trainer = gluon.Trainer(ref.collect_params(), 'sgd', {'learning_rate': lr}, kvstore=_worker_store(1, rank))
    batches = ArrayLoader(X, y, batch_size, shuffle=True, seed=seed + rank, last_batch='discard')
    ref_first = None
    for _ in range(epochs):
        for _, (Xb, yb) in zip(range(steps), batches):
            train_batch(ref, Xb, yb, trainer, devices)
            if ref_first is None:
                ref_first = [p.data(devices[0]).asnumpy() for p in ref.collect_params().values()]
    if not isinstance(net, gluon.Block):
        raise Broken('train_worker returns the trained network', got=repr(net)[:80], why='end with `return net`')
    if len(seen) != steps * epochs:
        raise Broken(f'on_step must run once after every step: {epochs} epoch{"s" * (epochs > 1)} of {steps} steps',
                     expected=f'{steps * epochs} calls', got=f'{len(seen)} calls',
                     why=f'take exactly `steps` ({steps}) steps per epoch (zip(range(steps), batches)), '
                         'the same number on every worker, and call on_step(net, losses) after each')
    if any(n is not net or not isinstance(ls, (list, tuple)) or len(ls) != k for n, ls in seen):
        raise Broken('on_step(net, losses) gets the network and the list of the devices\' losses',
                     got=str([(type(n).__name__, type(ls).__name__) for n, ls in seen[:2]]))
    if kv.pushpulls == 0:
        raise Broken('the worker never used the store it was given', expected='gradients summed by kv',
                     why='create the Trainer with kvstore=kv: the servers add every worker\'s gradients')
    for (name, p), q in zip(net.collect_params().items(), ref.collect_params().values()):
        for d in devices:
            a, b = p.data(d).asnumpy(), q.data(d).asnumpy()
            if a.shape != b.shape or not np.allclose(a, b, rtol=0, atol=1e-6):
                why = None
                step = np.concatenate([(w - s).ravel() for w, s in zip(first, start)])
                need = np.concatenate([(w - s).ravel() for w, s in zip(ref_first, start)])
                ratio = float(np.dot(step, need) / np.dot(need, need)) if len(step) == len(need) else np.nan
                if np.isclose(ratio, num_workers, rtol=1e-3):
                    why = (f'the first step went {ratio:.3g} times as far as it should: the servers add the '
                           f'gradients of all {num_workers} workers, so divide by the global batch: '
                           "rescale_grad 1 / kv.num_workers in the Trainer's optimizer settings")
                elif np.isclose(ratio, 1 / num_workers, rtol=1e-3):
                    why = f'the first step went {ratio:.3g} times as far as it should: divide by kv.num_workers once'
                elif np.isclose(ratio, 1, rtol=1e-4):
                    why = ('the first step is right, a later one is not: every epoch takes the next `steps` batches '
                           'of one ArrayLoader')
                else:
                    why = (f'the first step differs too: start from lenet(devices, seed), and draw the batches from '
                           f'ArrayLoader(X, y, batch_size, shuffle=True, seed=seed + kv.rank, last_batch=\'discard\') '
                           f'(this worker is rank {rank})')
                raise Broken(f'{name} on {d} after {steps * epochs} steps differs from notebook 06\'s steps on '
                             f'this worker\'s batches', expected=_fmt(b), got=_fmt(a), why=why)


SHARD_CASES = [dict(n=n, num_workers=w) for n, w in ((1, 1), (5, 1), (10, 3), (7, 2), (8, 4), (13, 5), (20, 8))]


def law_my_shard(my_shard, n, num_workers):
    """Notebook 08: worker ``rank`` gets contiguous shard ``rank`` of notebook 03's uneven split -- the
    first ``n mod num_workers`` workers one example more -- labels with their examples, and its bounds;
    together the workers hold every example once."""
    X, y = np.arange(n) * 3, np.arange(n) * 3 + 1
    sizes = _uneven_sizes(n, num_workers)
    ends = np.cumsum(sizes).tolist()
    want = list(zip([0] + ends[:-1], ends))
    parts = [my_shard(X, y, rank, num_workers) for rank in range(num_workers)]
    got = [tuple(int(b) for b in p[2]) if isinstance(p, tuple) and len(p) == 3 else None for p in parts]
    if got != want:
        raise Broken(f'the shards of {n} examples among {num_workers} workers (begin, end)', expected=str(want),
                     got=str(got), why=(_split_why(n, num_workers, [e - b for b, e in got]) if None not in got else
                                        'return (X_part, y_part, (begin, end))') or
                     'shard_bounds(len(X), num_workers)[rank]: the first n mod num_workers workers get one more')
    for rank, (Xp, yp, (b, e)) in enumerate(parts):
        if not np.array_equal(np.asarray(Xp), X[b:e]) or not np.array_equal(np.asarray(yp), y[b:e]):
            raise Broken(f'worker {rank}\'s part of {n} examples among {num_workers}',
                         expected=f'examples {b}:{e} and their labels', got=f'X {np.asarray(Xp).tolist()}, '
                                                                           f'y {np.asarray(yp).tolist()}',
                         why='X[begin:end], y[begin:end]')


STEPS_CASES = [dict(n_train=n, num_workers=w, batch_size=b) for n, w, b in (
    (10, 3, 2), (12000, 2, 64), (100, 3, 10), (7, 8, 1), (64, 1, 64), (63, 1, 64), (1000, 7, 16), (60000, 4, 256))]


def law_steps_per_epoch(steps_per_epoch, n_train, num_workers, batch_size):
    """Notebook 08: the whole batches of the *smallest* shard, ``(n_train // num_workers) // batch_size``:
    every synchronous worker takes that many steps, so none waits for a step another never takes."""
    want = (n_train // num_workers) // batch_size
    got = steps_per_epoch(n_train, num_workers, batch_size)
    if got != want:
        largest = -(-n_train // num_workers) // batch_size
        why = ('that is the largest shard\'s: a worker with a smaller shard would run out of batches, and the '
               'others would wait forever for its steps; take the smallest shard, n_train // num_workers'
               if got == largest else
               'whole batches only: the last, smaller batch is dropped (last_batch=\'discard\')'
               if got == -(-(n_train // num_workers) // batch_size) else None)
        raise Broken(f'steps_per_epoch({n_train}, {num_workers}, {batch_size})', expected=str(want), got=repr(got),
                     why=why)


@lesson('helpers.dist_train.push_then_pull', hint="a new function pushpull(key, value, out, priority): push, then "
                                                 "pull; set it as kv.pushpull")
def check_push_then_pull():
    """Check your ``push_then_pull(kv)`` (notebook 08): ``kv.pushpull`` becomes a push, then a pull."""
    return [
        Law('kv.pushpull(key, value, out=..., priority=...) is push(key, value, priority), then pull(key, out or '
            'value, priority), and every target holds the sum; kv comes back', law_push_then_pull,
            [dict(k=k, out=o, priority=p) for k, o, p in ((1, True, 0), (2, True, -3), (3, False, 0), (2, False, -1))],
            lambda k, out, priority: f'{k} device{"s" * (k > 1)}, {"with" if out else "without"} out, '
                                     f'priority {priority}'),
        Law("on MXNet's local store the replaced pushpull still sums", law_push_then_pull_on_a_store,
            [dict(k=k) for k in (1, 2, 3)], lambda k: f'{k} device{"s" * (k > 1)}'),
    ]


@lesson('helpers.dist_train.train_worker',
        hint="lenet(devices, seed); Trainer(..., rescale_grad 1/kv.num_workers, kvstore=kv); steps per epoch")
def check_train_worker():
    """Check your ``train_worker(kv, devices, X, y, ...)`` (notebook 08) on a stand-in dist_sync store."""
    return [Law("with workers that all push the same gradients, notebook 06's step on this worker's batches "
                "(divided by the global batch), `steps` steps per epoch, on_step after each",
                law_worker_takes_the_global_step, WORKER_CASES,
                lambda k, num_workers, rank, steps, epochs, batch_size:
                f'worker {rank} of {num_workers}, {k} device{"s" * (k > 1)}, {epochs} epoch{"s" * (epochs > 1)} of '
                f'{steps} steps, batches of {batch_size}')]


@lesson('helpers.dist_train.my_shard', hint='(begin, end) = shard_bounds(len(X), num_workers)[rank]; slice X and y')
def check_my_shard():
    """Check your ``my_shard(X, y, rank, num_workers)`` (notebook 08): each worker's contiguous part."""
    return [Law("worker rank gets shard rank of notebook 03's uneven split, labels with their examples, and its bounds",
                law_my_shard, SHARD_CASES, lambda n, num_workers: f'{n} examples, {num_workers} workers')]


@lesson('helpers.dist_train.steps_per_epoch', hint='whole batches of the smallest shard: (n_train // num_workers) // b')
def check_steps_per_epoch():
    """Check your ``steps_per_epoch(n_train, num_workers, batch_size)`` (notebook 08)."""
    return [Law('the whole batches of the smallest shard, the same number on every worker', law_steps_per_epoch,
                STEPS_CASES, lambda n_train, num_workers, batch_size: f'{n_train} examples, {num_workers} workers, '
                                                                      f'batches of {batch_size}')]
