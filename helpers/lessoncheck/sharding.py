"""The laws and checks of :mod:`helpers.sharding` (notebook 11): one flat array per replica and its
views, the replicated step on flat replicas, and the sharded step: the replicated step's weights, 1/k
of the optimizer state, one ring allreduce's bytes. ``tests/test_sharding.py`` calls the same laws.
"""
import sys

import numpy as np
import mxnet as mx
from mxnet import autograd, nd

from helpers.lessoncheck.machinery import Broken, CPU, Law, _fmt, _message, _n, lesson, tiny_data

__all__ = ['check_train_batch_sharded', 'check_views_of', 'check_flat_replica', 'check_attach_flat_grad',
           'check_forward_backward', 'check_train_batch_replicated', 'SHARDED_CASES',
           'law_sharded_step_is_the_replicated_one', 'law_sharded_state_is_one_chunk',
           'law_sharded_bytes_are_one_ring_allreduce', 'FLAT_CASES', 'law_views_of', 'law_flat_replica',
           'law_attach_flat_grad', 'law_forward_backward', 'REPLICATED_CASES', 'law_replicated_step_is_notebook_05s']


SHARDED_CASES = [dict(k=k, n=n) for k, n in ((1, 3), (2, 5), (3, 7), (4, 9))]


def _sharded_setup(k, n, seed=0):
    from helpers.models import init_lenet_params
    from helpers.sharding import adam_updaters, make_replicas
    params = init_lenet_params(seed)
    return make_replicas(params, CPU[:k]), adam_updaters(CPU[:k], 1e-3, n)


def law_sharded_step_is_the_replicated_one(train_batch_sharded, k, n, steps=2):
    """Notebook 11: two sharded steps give, bit for bit on every device, the weights of the replicated
    step summed by the ring (reduce-scatter and all-gather are its two halves; Adam is elementwise), and
    return every device's loss sum."""
    from helpers.comm import allreduce_ring, owner_chunk
    from helpers.sharding import train_batch_replicated
    from helpers.split import shard_bounds
    ours, ours_u = _sharded_setup(k, n)
    ref, ref_u = _sharded_setup(k, n)
    Xn, yn = tiny_data(steps * n, 6)
    for s in range(steps):
        X, y = nd.array(Xn[s * n:(s + 1) * n]), nd.array(yn[s * n:(s + 1) * n], dtype='int32')
        losses = train_batch_sharded(X, y, ours, CPU[:k], ours_u)
        train_batch_replicated(X, y, ref, CPU[:k], ref_u, sum_grads=allreduce_ring)
        if not isinstance(losses, (list, tuple)) or len(losses) != k:
            raise Broken('the step returns one loss sum per device', got=repr(losses)[:120],
                         why='return the losses of forward_backward')
    want = ref[0].weights.asnumpy()
    chunks = shard_bounds(want.size, k)
    for i, r in enumerate(ours):
        got = r.weights.asnumpy()
        if not np.array_equal(got, want):
            bad = [c for c, (b, e) in enumerate(chunks) if not np.array_equal(got[b:e], want[b:e])]
            raise Broken(f'device {i}\'s weights after {steps} sharded steps differ from the replicated step\'s',
                         expected=f'the replicated step\'s weights, bit for bit (chunk {bad[0]}: '
                                  f'{_fmt(want[slice(*chunks[bad[0]])])})',
                         got=f'chunk{"s" * (len(bad) > 1)} {bad} differ{"s" * (len(bad) == 1)} '
                             f'(chunk {bad[0]}: {_fmt(got[slice(*chunks[bad[0]])])})',
                         why='after the reduce-scatter device i holds the finished sum of chunk owner_chunk(i, k) only '
                             f'(here device 0: chunk {owner_chunk(0, k)}); it updates that chunk, with that summed '
                             'gradient, and the all-gather then sends the updated weights to every device')


def law_sharded_state_is_one_chunk(train_batch_sharded, k, n):
    """Notebook 11: after a sharded step each device's optimizer holds state (Adam: mean and variance)
    for its own chunk only, ``owner_chunk(i, k)`` of the flat weights -- 1/k of the replicated state."""
    from helpers.comm import owner_chunk
    from helpers.sharding import state_elements
    from helpers.split import shard_bounds
    reps, updaters = _sharded_setup(k, n)
    Xn, yn = tiny_data(n, 7)
    train_batch_sharded(nd.array(Xn), nd.array(yn, dtype='int32'), reps, CPU[:k], updaters)
    size = reps[0].weights.size
    chunks = shard_bounds(size, k)
    want = [2 * (chunks[owner_chunk(i, k)][1] - chunks[owner_chunk(i, k)][0]) for i in range(k)]
    got = state_elements(updaters)
    if got != want:
        i = next(i for i, (a, b) in enumerate(zip(got, want)) if a != b)
        why = (f'device {i} updated all {size} weights: update only its own chunk, '
               f'update(0, r.grads[b:e], r.weights[b:e]) with (b, e) = chunks[owner_chunk(i, k)]'
               if got[i] == 2 * size else
               'each device updates chunk owner_chunk(i, k), the one the reduce-scatter finished on it')
        raise Broken(f'elements of Adam state per device after one step on {_n(k, "device")}', expected=str(want),
                     got=str(got), why=why)


def law_sharded_bytes_are_one_ring_allreduce(train_batch_sharded, k, n=4):
    """Notebook 11: every transfer of the sharded step goes through ``send``, and each device sends
    and receives the bytes of one ring allreduce of the flat weights: a reduce-scatter and an all-gather."""
    from helpers.comm import CommStats
    from helpers.costmodel import ring_bytes_per_device
    reps, updaters = _sharded_setup(k, n)
    Xn, yn = tiny_data(n, 8)
    stats = CommStats()
    train_batch_sharded(nd.array(Xn), nd.array(yn, dtype='int32'), reps, CPU[:k], updaters, send=stats.send)
    size = reps[0].weights.size
    want = ring_bytes_per_device(k, size, 4) if k > 1 else [0]
    got = stats.per_device(CPU[:k])
    if got != want:
        why = ('no byte went through send: pass send on to reduce_scatter and all_gather' if not any(got) else
               f'each device sent {got[0] / want[0]:.3g} times the ring\'s bytes: a reduce-scatter of the gradients '
               'and an all-gather of the weights, nothing more' if want[0] else None)
        raise Broken(f'bytes sent by each device in one sharded step of {size} float32 weights on {_n(k, "device")}',
                     expected=str(want), got=str(got), why=why)


FLAT_CASES = [dict(shapes=s, device=d) for s, d in (([(3,)], 0), ([(2, 3), (4,)], 1), ([(2, 2, 2), (1,), (3, 1)], 2),
                                                    ([(6, 1, 5, 5), (6,), (16, 6, 5, 5), (16,)], 3))]


def _params(shapes, seed=0):
    rng = np.random.default_rng(seed)
    return [nd.array(rng.standard_normal(s)) for s in shapes]


def law_views_of(views_of, shapes, device):
    """Notebook 11: one view per parameter, each of the parameter's shape, holding the next elements of
    the flat array in order, and sharing its memory: what is written into the flat array is seen
    through the views."""
    params = _params(shapes)
    n = sum(p.size for p in params)
    flat = nd.arange(n, ctx=CPU[device])
    views = views_of(flat, params)
    got = [tuple(v.shape) for v in views] if isinstance(views, (list, tuple)) else None
    if got != [tuple(s) for s in shapes]:
        raise Broken(f'views_of(a flat array of {n}, parameters of shapes {shapes})', expected=str(shapes),
                     got=str(got) if got is not None else repr(views)[:120])
    begin = 0
    for v, s in zip(views, shapes):
        size = int(np.prod(s))
        if not np.array_equal(v.asnumpy().reshape(-1), np.arange(begin, begin + size)):
            raise Broken(f'the view of shape {s} holds elements {begin}:{begin + size} of the flat array',
                         expected=_fmt(np.arange(begin, begin + size)), got=_fmt(v.asnumpy()),
                         why='each view starts where the last one ended: flat[e - p.size:e] with e the running sum')
        begin += size
    flat[:] = -1
    if any((v.asnumpy() != -1).any() for v in views):
        raise Broken('the views must share the flat array\'s memory: a write into it is not seen through them',
                     why='a slice and a reshape share memory (flat[b:e].reshape(shape)); a copy does not')


def law_flat_replica(flat_replica, shapes, device):
    """Notebook 11: a copy of the parameters on the device as ONE flat array (their elements, in order),
    and the parameters as views of it; the originals stay apart."""
    params = _params(shapes, 1)
    flat, views = flat_replica(params, CPU[device])
    want = np.concatenate([p.asnumpy().reshape(-1) for p in params])
    if not isinstance(flat, nd.NDArray) or flat.shape != want.shape or flat.context != CPU[device]:
        raise Broken('the flat replica is one 1-D array of every element, on the device',
                     expected=f'shape {want.shape} on {CPU[device]}',
                     got=f'shape {flat.shape} on {flat.context}' if isinstance(flat, nd.NDArray) else repr(flat)[:80],
                     why='nd.concat of every parameter reshaped to 1-D, then copyto(device)')
    if not np.array_equal(flat.asnumpy(), want):
        raise Broken('the flat replica holds every parameter\'s elements, in order', expected=_fmt(want),
                     got=_fmt(flat.asnumpy()))
    if [tuple(v.shape) for v in views] != [tuple(s) for s in shapes] or \
            any(not np.array_equal(v.asnumpy(), p.asnumpy()) for v, p in zip(views, params)):
        raise Broken('the views have the parameters\' shapes and values', why='views_of(flat, params)')
    flat[:] = 7
    if any((v.asnumpy() != 7).any() for v in views):
        raise Broken('the views must share the flat array\'s memory', why='views_of(flat, params), not copies')
    if any((p.asnumpy() == 7).all() for p in params):
        raise Broken('writing the replica changed the original parameters: it must be a copy',
                     why='.copyto(device) makes the copy')


def law_attach_flat_grad(attach_flat_grad, shapes, device):
    """Notebook 11: a flat gradient of the flat weights' shape, zeros, on their device; after backward
    through the views, each parameter's gradient sits in its slot of it."""
    from helpers.sharding import flat_replica
    params = _params(shapes, 2)
    flat, views = flat_replica(params, CPU[device])
    grad = attach_flat_grad(flat, views)
    if not isinstance(grad, nd.NDArray) or grad.shape != flat.shape or grad.context != flat.context or \
            grad.asnumpy().any():
        raise Broken('the flat gradient: zeros of the flat weights\' shape, on their device',
                     expected=f'{flat.size} zeros on {flat.context}', why='nd.zeros_like(flat)',
                     got=(f'shape {grad.shape} on {grad.context}, sum {float(grad.asnumpy().sum()):g}'
                          if isinstance(grad, nd.NDArray) else repr(grad)[:80]))
    with autograd.record():
        total = sum((v * (i + 1)).sum() for i, v in enumerate(views))
    try:
        total.backward()
    except mx.base.MXNetError:
        raise Broken('backward through the views failed: autograd knows no gradient buffer for them',
                     got=_message(sys.exc_info()[1])[:120],
                     why='make views of the flat gradient autograd\'s gradient buffers: '
                         'autograd.mark_variables(views, views_of(grad, views))') from None
    want = np.concatenate([np.full(int(np.prod(s)), i + 1.0) for i, s in enumerate(shapes)])
    if not np.array_equal(grad.asnumpy(), want):
        raise Broken('after backward of sum(view_i * (i + 1)), the flat gradient holds i + 1 in parameter i\'s slot',
                     expected=_fmt(want), got=_fmt(grad.asnumpy()),
                     why=('backward did not write into the flat gradient: make views of it autograd\'s gradient '
                          'buffers, autograd.mark_variables(views, views_of(grad, views))'
                          if not grad.asnumpy().any() else 'views_of(grad, views): the same slots as the weights'))


def law_forward_backward(forward_backward, k, n, seed=0):
    """Notebook 11: split the batch, forward (the ``forward`` given) and backward on every device: each
    replica's gradient buffers hold the gradient of its own shard's summed loss; it returns each
    device's loss sum, on that device."""
    from helpers.models import init_lenet_params, lenet_scratch, replicate_params
    from helpers.split import split_batch
    from helpers.train import loss
    params = init_lenet_params(seed)
    Xn, yn = tiny_data(n, 11)
    X, y = nd.array(Xn), nd.array(yn, dtype='int32')
    reps = [replicate_params(params, d) for d in CPU[:k]]
    calls = []

    def forward(Xs, ps):
        calls.append(Xs.context)
        return lenet_scratch(Xs, ps)
    sums = forward_backward(X, y, reps, CPU[:k], forward=forward)
    if sorted(calls, key=str) != sorted(CPU[:k], key=str):
        raise Broken('the forward given runs once per device, on its shard', expected=str(CPU[:k]), got=str(calls),
                     why='call forward(Xs, ps) (the forward argument), not lenet_scratch itself')
    for d, (Xs, ys) in enumerate(zip(*split_batch(X, y, CPU[:k]))):
        ws = [p.copy() for p in reps[d]]
        for w, p in zip(ws, params):
            w[:] = p.as_in_context(w.context)
            w.attach_grad()
        with autograd.record():
            total = loss(lenet_scratch(Xs, ws), ys).sum()
        total.backward()
        for j, (p, w) in enumerate(zip(reps[d], ws)):
            if not np.allclose(p.grad.asnumpy(), w.grad.asnumpy(), rtol=1e-5, atol=1e-6):
                raise Broken(f'device {d}\'s gradient of parameter {j}', expected=_fmt(w.grad.asnumpy()),
                             got=_fmt(p.grad.asnumpy()),
                             why='forward under autograd.record() on each shard, then l.backward() for every loss')
        got = sums[d] if isinstance(sums, (list, tuple)) and len(sums) == k else None
        if got is None or got.context != CPU[d] or not np.isclose(got.asscalar(), total.asscalar(), rtol=1e-5):
            raise Broken(f'device {d}\'s loss sum, on that device', expected=f'{total.asscalar():.6f} on {CPU[d]}',
                         got=repr(sums)[:120] if got is None else f'{got.asscalar():.6f} on {got.context}',
                         why='return [l.sum() for l in ls]')


REPLICATED_CASES = [dict(k=k, n=n) for k, n in ((1, 2), (2, 4), (3, 8))]      # batches of 2**j examples


def law_replicated_step_is_notebook_05s(train_batch_replicated, k, n, lr=0.125):
    """Notebook 11: with SGD updaters dividing by the batch (of 2**j examples: MXNet's optimizer
    operators take ``rescale_grad`` as float32, src/operator/optimizer_op-inl.h, exact for a power of
    two), the replicated step on flat replicas is notebook 05's step (float64, to 1e-12), every replica
    identical to the last bit; the ``sum_grads``
    and ``send`` it is given do the summing: one ring allreduce's bytes with ``allreduce_ring``, one
    call and the naive allreduce's bytes with ``allreduce_naive``."""
    from helpers.comm import CommStats, allreduce_naive, allreduce_ring, copy_to
    from helpers.costmodel import naive_bytes_per_device, ring_bytes_per_device
    from helpers.models import init_lenet_params, replicate_params
    from helpers.sharding import make_replicas
    from helpers.train import train_batch_scratch
    params = [p.astype('float64') for p in init_lenet_params(0)]
    Xn, yn = tiny_data(n, 12)
    X, y = nd.array(Xn, dtype='float64'), nd.array(yn, dtype='int32')
    reps = make_replicas(params, CPU[:k])
    updaters = [mx.optimizer.get_updater(mx.optimizer.SGD(learning_rate=lr, rescale_grad=1 / n)) for _ in range(k)]
    stats = CommStats()
    train_batch_replicated(X, y, reps, CPU[:k], updaters, sum_grads=allreduce_ring, send=stats.send)
    scratch = [replicate_params(params, d) for d in CPU[:k]]
    train_batch_scratch(X, y, scratch, CPU[:k], lr)
    want = np.concatenate([p.asnumpy().ravel() for p in scratch[0]])
    for i, r in enumerate(reps):
        gap = float(np.abs(r.weights.asnumpy() - want).max())
        if gap > 1e-12:
            raise Broken(f'replica {i}\'s weights after one step differ from notebook 05\'s step by {gap:.3g}',
                         expected=_fmt(want[-10:]) + ' (the last 10)', got=_fmt(r.weights.asnumpy()[-10:]),
                         why='forward_backward, then sum_grads(all replicas\' flat gradients, send), then every '
                             'device updates all its weights: update(0, r.grads, r.weights)')
    size = reps[0].weights.size
    ring = ring_bytes_per_device(k, size, 8) if k > 1 else [0]
    if stats.per_device(CPU[:k]) != ring:
        raise Broken(f'with sum_grads=allreduce_ring, the bytes each device sends ({_n(k, "device")}, {size} float64)',
                     expected=str(ring), got=str(stats.per_device(CPU[:k])),
                     why='sum with the sum_grads given, passing send on: sum_grads([r.grads ...], send)')
    # the same step with another sum_grads: it must be the one that sums
    reps = make_replicas(params, CPU[:k])
    updaters = [mx.optimizer.get_updater(mx.optimizer.SGD(learning_rate=lr, rescale_grad=1 / n)) for _ in range(k)]
    stats, calls = CommStats(), []

    def naive(arrays, send=copy_to):
        calls.append(list(arrays))
        return allreduce_naive(arrays, send)
    train_batch_replicated(X, y, reps, CPU[:k], updaters, sum_grads=naive, send=stats.send)
    given = [[id(a) for a in c] for c in calls]
    if given != [[id(r.grads) for r in reps]]:
        raise Broken(f'with sum_grads=allreduce_naive, the calls of sum_grads ({_n(k, "device")})',
                     expected='one call, with every replica\'s flat gradient: sum_grads([r.grads for r in replicas], '
                              'send)', got=f'{len(calls)} call{"s" * (len(calls) != 1)}'
                                       + (', not with the flat gradients' if calls else ''),
                     why='sum with the sum_grads argument, the one the caller chose, not an allreduce of your own '
                         'choice')
    naive_bytes = naive_bytes_per_device(k, size, 8) if k > 1 else [0]
    if stats.per_device(CPU[:k]) != naive_bytes:
        raise Broken(f'with sum_grads=allreduce_naive, the bytes each device sends ({_n(k, "device")}, {size} float64)',
                     expected=str(naive_bytes), got=str(stats.per_device(CPU[:k])),
                     why='pass send on: sum_grads([r.grads ...], send), and send nothing else')


def _flat_words(shapes, device):
    return f'parameters of shapes {", ".join(map(str, shapes))} on cpu({device})'


@lesson('helpers.sharding.train_batch_sharded',
        hint='forward_backward; reduce_scatter the grads; update chunk owner_chunk(i, k) only; all_gather weights')
def check_train_batch_sharded():
    """Check your ``train_batch_sharded(X, y, replicas, devices, updaters, send)`` (notebook 11): the
    replicated step's weights, 1/k of the optimizer state, one allreduce's bytes."""
    return [
        Law("two steps give the replicated step's weights (summed by the ring), bit for bit on every device",
            law_sharded_step_is_the_replicated_one, SHARDED_CASES,
            lambda k, n: f'LeNet on {k} device{"s" * (k > 1)}, batches of {n}'),
        Law('each device keeps Adam state for its own chunk only, owner_chunk(i, k)', law_sharded_state_is_one_chunk,
            SHARDED_CASES, lambda k, n: f'LeNet on {k} device{"s" * (k > 1)}, a batch of {n}'),
        Law('every transfer goes through send: the bytes of one ring allreduce',
            law_sharded_bytes_are_one_ring_allreduce,
            [dict(k=k) for k in (1, 2, 3)], lambda k: f'LeNet on {k} device{"s" * (k > 1)}'),
    ]


@lesson('helpers.sharding.views_of', hint='running sums of the sizes: flat[e - p.size:e].reshape(p.shape) for each')
def check_views_of():
    """Check your ``views_of(flat, params)`` (notebook 11): views that share the flat array's memory."""
    return [Law('one view per parameter, of its shape, on the next elements, sharing the flat array\'s memory',
                law_views_of, FLAT_CASES, _flat_words)]


@lesson('helpers.sharding.flat_replica', hint='nd.concat of the reshaped parameters, copyto(device); views_of it')
def check_flat_replica():
    """Check your ``flat_replica(params, device)`` (notebook 11): one flat copy and views of it."""
    return [Law('one flat copy on the device, every element in order, the parameters as views of it, the originals '
                'apart', law_flat_replica, FLAT_CASES, _flat_words)]


@lesson('helpers.sharding.attach_flat_grad', hint='nd.zeros_like(flat); autograd.mark_variables(views, views_of(it))')
def check_attach_flat_grad():
    """Check your ``attach_flat_grad(flat, views)`` (notebook 11): backward writes into one flat gradient."""
    return [Law('zeros like the flat weights; backward through the views writes each gradient into its slot',
                law_attach_flat_grad, FLAT_CASES, _flat_words)]


@lesson('helpers.sharding.forward_backward', hint='split_batch; forward(Xs, ps) under autograd.record(); backward each')
def check_forward_backward():
    """Check your ``forward_backward(X, y, device_params, devices, forward)`` (notebook 11)."""
    return [Law("every device's gradients are those of its own shard's summed loss; the loss sums come back",
                law_forward_backward, [dict(k=k, n=n) for k, n in ((1, 3), (2, 5), (3, 7))],
                lambda k, n: f'a batch of {n} on {k} device{"s" * (k > 1)}')]


@lesson('helpers.sharding.train_batch_replicated',
        hint='forward_backward; sum_grads(every replica\'s grads, send); each device: update(0, grads, weights)')
def check_train_batch_replicated():
    """Check your ``train_batch_replicated(X, y, replicas, devices, updaters, sum_grads, send)`` (notebook 11)."""
    return [Law("with SGD, notebook 05's step (float64), the replicas identical; summed by the sum_grads and send "
                "given", law_replicated_step_is_notebook_05s, REPLICATED_CASES,
                lambda k, n: f'LeNet on {k} device{"s" * (k > 1)}, a batch of {n}')]
