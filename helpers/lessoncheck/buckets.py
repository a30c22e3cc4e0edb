"""The laws and checks of :mod:`helpers.buckets` (notebook 10): the bucket plan, the bucketed allreduce
with the bits of the unbucketed one, backward then send, and buckets that backward writes into.
``tests/test_buckets.py`` calls the same laws, on the same small net.
"""
import numpy as np
import mxnet as mx
from mxnet import autograd, gluon, nd

from helpers.lessoncheck.machinery import Broken, CPU, Law, _devices_words, _fmt, _refuses, lesson

__all__ = ['check_plan_buckets', 'check_allreduce_bucketed', 'check_backward_and_send', 'check_bucket_gradients',
           'PLAN_CASES', 'law_plan_buckets', 'law_plan_refuses_bad_input', 'BUCKETED_CASES',
           'law_bucketed_like_unbucketed', 'law_bucketed_refuses_bad_input', 'BACKWARD_CASES', 'law_backward_and_send',
           'BUCKET_VIEW_CASES', 'law_bucket_views']


PLAN_CASES = [dict(sizes=s, bucket_bytes=b, itemsize=i) for s, b, i in (
    ([5], 1, 4), ([5], 10 ** 9, 4), ([3, 4], 1, 4), ([3, 4], 12, 4), ([3, 4], 13, 4), ([10, 20, 30, 40], 120, 4),
    ([10, 20, 30, 40], 10 ** 9, 2), ([2, 2, 2, 2, 2], 16, 4), ([2, 2, 2, 2, 2], 17, 4), ([7, 1, 1, 9, 3, 3], 40, 8),
    ([50, 1, 50, 1, 50], 60, 2), ([1] * 12, 10, 4), ([6, 5, 4, 3, 2, 1], 13, 1))]


def law_plan_buckets(plan_buckets, sizes, bucket_bytes, itemsize):
    """Notebook 10: every gradient in exactly one bucket, last layer first; in each bucket the slots
    are contiguous from 0, each as long as its gradient; every bucket but the last closed because its
    last gradient filled it to ``bucket_bytes`` or more. Hence one bucket per gradient when a gradient
    alone fills one, and one bucket when ``bucket_bytes`` exceeds them all."""
    plans = plan_buckets(list(sizes), bucket_bytes, itemsize)
    call = f'plan_buckets({list(sizes)}, {bucket_bytes}, itemsize={itemsize})'
    try:
        got = [[tuple(int(x) for x in slot) for slot in plan] for plan in plans]
    except (TypeError, ValueError):
        raise Broken(call, expected='a list of buckets, each a list of (i, begin, end)', got=repr(plans)[:160])
    want = _plan(sizes, bucket_bytes, itemsize)
    if got == want:
        return
    order = [i for plan in got for i, _, _ in plan]
    missing = [i for i in range(len(sizes)) if i not in order]
    why = None
    if missing:
        why = (f'{_gradients_words(missing)[:-4]} {"are" if len(missing) > 1 else "is"} in no bucket: '
               'keep the last bucket too, even when it is not full (`if bucket: buckets.append(bucket)`)')
    elif sorted(order) != order and order != list(reversed(range(len(sizes)))):
        why = 'gradients appear twice or out of order'
    elif order != list(reversed(range(len(sizes)))):
        why = 'last layer first: the backward pass writes the last layer\'s gradient first (reversed(range(...)))'
    else:
        for b, plan in enumerate(got):
            for (i, begin, end), prev in zip(plan, [None] + plan[:-1]):
                if begin != (prev[2] if prev else 0) or end - begin != sizes[i]:
                    why = (f'in bucket {b}, gradient {i} ({sizes[i]} elements) must fill elements '
                           f'{prev[2] if prev else 0}:{(prev[2] if prev else 0) + sizes[i]}: each slot begins where '
                           'the last one ended')
                    break
            if why:
                break
            filled = plan[-1][2] * itemsize
            if b < len(got) - 1 and filled < bucket_bytes:
                why = f'bucket {b} closed at {filled} bytes, before it held bucket_bytes ({bucket_bytes})'
            elif filled - sizes[plan[-1][0]] * itemsize >= bucket_bytes:
                why = (f'bucket {b} held {filled - sizes[plan[-1][0]] * itemsize} bytes before its last gradient: a '
                       f'bucket closes as soon as it holds bucket_bytes ({bucket_bytes}) or more')
            if why:
                break
    raise Broken(call, expected=str(want), got=str(got), why=why)


def _plan(sizes, bucket_bytes, itemsize):
    """Notebook 10's plan, written as the law states it."""
    plans, slots, filled = [], [], 0
    for i in range(len(sizes) - 1, -1, -1):
        slots.append((i, filled, filled + sizes[i]))
        filled += sizes[i]
        if filled * itemsize >= bucket_bytes:
            plans.append(slots)
            slots, filled = [], 0
    return plans + ([slots] if slots else [])


def law_plan_refuses_bad_input(plan_buckets, bad):
    """Notebook 10: no gradient, a size below 1, a bucket of fewer than 1 byte (ValueError) or sizes
    that are not a list (TypeError) are refused."""
    args, error = {'no gradient': (([], 100), ValueError), 'a size of 0': (([3, 0], 100), ValueError),
                   'a bucket of 0 bytes': (([3], 0), ValueError), 'sizes not a list': ((7, 100), TypeError)}[bad]
    if not _refuses(lambda: plan_buckets(*args), error):
        raise Broken(f'plan_buckets{args} must be refused with a {error.__name__}', got='another outcome',
                     why='keep the guard line `checks.bucket_plan(sizes, bucket_bytes, itemsize)`')


def _grads(k, shapes, seed, dtype='float32'):
    rng = np.random.default_rng(seed)
    return [[nd.array(rng.standard_normal(s), ctx=c, dtype=dtype) for c in CPU[:k]] for s in shapes]


BUCKETED_CASES = sorted([dict(k=k, shapes=s, bucket_bytes=b, dtype=d, seed=10 * k + len(s))
                         for k, s in ((1, [(3,)]), (2, [(3,), (2, 2)]), (3, [(2, 3), (1,), (5,)]),
                                      (4, [(4,), (3,), (2,), (1,)]), (5, [(7,), (2, 2, 2)]),
                                      (8, [(3,), (9,), (1,), (2, 5)]))
                         for b in (1, 20, 10 ** 9) for d in ('float32', 'float64')],
                        key=lambda c: (c['k'], len(c['shapes']), c['bucket_bytes']))


def _shapes_words(shapes):
    return ', '.join(str(tuple(s)) for s in shapes)


def law_bucketed_like_unbucketed(allreduce_bucketed, k, shapes, bucket_bytes, dtype, seed):
    """Notebook 10: in place, every gradient ends with the bits of its own allreduce (``allreduce_naive``
    adds the devices in one order for every element, bucketed or not), keeps its device, shape and
    dtype; one ``allreduce`` per bucket of ``plan_buckets``, each of the bucket's size; returns grads."""
    from helpers.buckets import plan_buckets as lesson_plan
    from helpers.comm import allreduce_naive
    grads = _grads(k, shapes, seed, dtype)
    given = [list(g) for g in grads]
    own = [[a.asnumpy() for a in g] for g in grads]
    reference = [[a.copy() for a in g] for g in grads]
    for g in reference:
        allreduce_naive(g)
    buckets = [p[-1][2] for p in lesson_plan([int(np.prod(s)) for s in shapes], bucket_bytes, np.dtype(dtype).itemsize)]
    calls = []

    def counting(arrays, *args, **kwargs):
        calls.append(int(arrays[0].size))
        return allreduce_naive(arrays, *args, **kwargs)
    out = allreduce_bucketed(grads, bucket_bytes, allreduce=counting)
    case = (f'{k} device{"s" * (k > 1)}, gradients of shapes {_shapes_words(shapes)}, {dtype}, '
            f'bucket_bytes {bucket_bytes}')
    if out is not grads:
        raise Broken('allreduce_bucketed works in place and returns grads', why='end with `return grads`')
    unsummed = []
    for i, (g, ref, mine, before) in enumerate(zip(grads, reference, own, given)):
        for d, (a, r, m, b) in enumerate(zip(g, ref, mine, before)):
            if a is not b or a.context != CPU[d] or a.shape != tuple(shapes[i]) or np.dtype(a.dtype) != np.dtype(dtype):
                raise Broken(f'gradient {i} on device {d} must stay the same array, on {CPU[d]}, shape '
                             f'{tuple(shapes[i])}, {dtype}', got=f'{a.context}, shape {a.shape}, {np.dtype(a.dtype)}',
                             why='copy the sums back into the gradients (copyto), do not replace them')
            if not np.array_equal(a.asnumpy(), r.asnumpy()):
                if k > 1 and np.array_equal(a.asnumpy(), m):
                    unsummed.append(i)
                    break
                raise Broken(f'gradient {i} on device {d} ({case})', expected=_fmt(r.asnumpy()) + ' (its allreduce)',
                             got=_fmt(a.asnumpy()),
                             why='unpack each sum from its slot: flat[begin:end].reshape(shape) of the plan')
    last = ('the last bucket is missing: sum every bucket of plan_buckets, the last one too, even when it is not '
            'full' if len(calls) < len(buckets) and calls == buckets[:len(calls)] else None)
    if unsummed:
        raise Broken(f'{_gradients_words(unsummed)} never summed ({case})',
                     expected=f'allreduces of {buckets} elements (the buckets of plan_buckets)',
                     got=f'allreduces of {calls} elements',
                     why=last or 'every gradient goes into a bucket, and every bucket is summed')
    if calls != buckets:
        raise Broken(f'one allreduce per bucket ({case})', expected=f'allreduces of {buckets} elements',
                     got=f'allreduces of {calls} elements',
                     why=last or 'pack each bucket of plan_buckets(sizes, bucket_bytes, itemsize) into one flat array '
                                 'per device, then one allreduce(flats) (the allreduce argument)')


def _gradients_words(indices):
    """``'gradient 0 was'``, ``'gradients 0, 1 were'``."""
    if len(indices) == 1:
        return f'gradient {indices[0]} was'
    return f'gradients {", ".join(map(str, indices))} were'


def law_bucketed_refuses_bad_input(allreduce_bucketed, bad):
    """Notebook 10: a bucket size that is not a whole number >= 1, no gradient, something else than a
    list, mixed dtypes, shapes or devices are refused before any work, every gradient untouched."""
    grads = _grads(2, [(3,), (4,)], 0)
    args, error = {
        'bucket_bytes 0': ((grads, 0), ValueError), 'bucket_bytes -5': ((grads, -5), ValueError),
        'bucket_bytes 2.5': ((grads, 2.5), TypeError), 'bucket_bytes True': ((grads, True), TypeError),
        'no gradient': (([], 100), ValueError), 'an array, not a list': ((grads[0][0], 100), TypeError),
        'mixed dtypes': ((grads + _grads(2, [(2,)], 0, 'float64'), 100), TypeError),
        'one gradient of two shapes': (([grads[0], [grads[1][0], nd.ones(5, ctx=CPU[1])]], 100), ValueError),
        'devices in another order': (([grads[0], grads[1][::-1]], 100), ValueError)}[bad]
    before = [[a.asnumpy() for a in g] for g in grads]
    if not _refuses(lambda: allreduce_bucketed(*args), error):
        raise Broken(f'{bad} must be refused with a {error.__name__}', got='another outcome',
                     why='keep the guard line `itemsize = checks.buckets(grads, bucket_bytes)` first')
    if any(not np.array_equal(a.asnumpy(), b) for g, bs in zip(grads, before) for a, b in zip(g, bs)):
        raise Broken(f'{bad}: a gradient changed before the call was refused', why='check before any work')


def _small_net(devices, seed=0):
    """A small Gluon net with a BatchNorm (whose running statistics have no gradient), on ``devices``;
    returns it and its parameters that have gradients, in layer order."""
    net = gluon.nn.Sequential()
    net.add(gluon.nn.Conv2D(3, 3, in_channels=1), gluon.nn.BatchNorm(in_channels=3), gluon.nn.Activation('relu'),
            gluon.nn.Dense(4, in_units=3 * 4 * 4))
    mx.random.seed(seed)
    net.initialize(mx.init.Normal(0.1), ctx=devices)
    return net, [p for p in net.collect_params().values() if p.grad_req != 'null']


def _small_losses(net, devices, seed=1, gate=None):
    """Each device's loss of the small net; with ``gate`` (a ``threading.Event``), the backward pass of
    every loss waits at its first step until the gate is open (:class:`_Gate`)."""
    X = nd.array(np.random.default_rng(seed).standard_normal((2 * len(devices), 1, 6, 6)))
    with autograd.record():
        outs = [net(X[2 * i:2 * i + 2].as_in_context(d)) for i, d in enumerate(devices)]
        if gate is not None:
            _GATES[id(gate)] = gate
            outs = [nd.Custom(o, op_type='lessoncheck_gate', gate=str(id(gate))) for o in outs]
        return [o.sum() for o in outs]


_GATES = {}           # id -> threading.Event: what a _Gate's backward waits for


class _Gate(mx.operator.CustomOp):
    """The identity, whose backward waits until its gate (an Event) is open: no gradient can be written
    before, so whoever calls an allreduce before the gate opens did not wait for the backward pass."""

    def __init__(self, gate):
        super().__init__()
        self.gate = gate

    def forward(self, is_train, req, in_data, out_data, aux):
        self.assign(out_data[0], req[0], in_data[0])

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        gate = _GATES.get(int(self.gate))
        if gate is not None:                      # (a law that is over no longer holds anything)
            gate.wait(60)
        self.assign(in_grad[0], req[0], out_grad[0])


@mx.operator.register('lessoncheck_gate')
class _GateProp(mx.operator.CustomOpProp):
    def __init__(self, gate):
        super().__init__(need_top_grad=True)
        self.gate = gate

    def list_arguments(self):
        return ['data']

    def list_outputs(self):
        return ['output']

    def infer_shape(self, in_shape):
        return in_shape, [in_shape[0]], []

    def create_operator(self, ctx, shapes, dtypes):
        return _Gate(self.gate)


def _small_grads(k, summed):
    """Every gradient of the small net after backward on k devices: each device's own, or summed."""
    from helpers.comm import allreduce_naive
    net, params = _small_net(CPU[:k])
    for l in _small_losses(net, CPU[:k]):
        l.backward()
    if summed:
        for p in reversed(params):
            allreduce_naive(p.list_grad())
    return [[g.asnumpy() for g in p.list_grad()] for p in params]


BACKWARD_CASES = [dict(k=k, wait=w, groups=g) for k in (1, 2, 3) for w in (True, False)
                  for g in ('gradients', 'buckets')]


def law_backward_and_send(backward_and_send, k, wait, groups):
    """Notebook 10: backward on every device, then one ``allreduce`` per group, in the order given
    (a gradient or a bucket of views, one array per device): every gradient ends with its allreduce's
    bits. With ``wait=True`` no allreduce is called before the whole backward pass has run; with
    ``wait=False`` every allreduce is queued at once and the function returns without waiting. (The
    backward pass is held at a gate, :class:`_Gate`, which opens after a quarter of a second, or, without
    ``wait``, once the function has returned, at the latest after 3 s.)"""
    import threading
    from helpers.buckets import bucket_gradients
    from helpers.comm import allreduce_naive
    net, params = _small_net(CPU[:k])
    given = ([p.list_grad() for p in reversed(params)] if groups == 'gradients' else bucket_gradients(params, 100))
    calls, opened, backward, gate = [], [], [], threading.Event()
    weights = [x for p in params for x in p.list_data()]

    def recording(arrays, *args, **kwargs):
        calls.append(arrays)
        opened.append(gate.is_set())
        backward.append(all(x._fresh_grad for x in weights))       # set when backward() is called
        return allreduce_naive(arrays, *args, **kwargs)
    losses = _small_losses(net, CPU[:k], gate=gate)
    for x in weights:
        x._fresh_grad = False
    timer = threading.Timer(0.25 if wait else 3.0, gate.set)
    timer.start()
    try:
        backward_and_send(losses, given, wait=wait, allreduce=recording)
        returned_open = gate.is_set()
    finally:
        gate.set()
        timer.cancel()
        nd.waitall()
        _GATES.pop(id(gate), None)
    case = f'{k} device{"s" * (k > 1)}, {len(given)} {groups}, wait={wait}'
    if len(calls) != len(given) or any(a is not b for a, b in zip(calls, given)):
        order = [next((j for j, g in enumerate(given) if g is c), '?') for c in calls]
        raise Broken(f'one allreduce per group, in the order given ({case})',
                     expected=f'allreduce of groups {list(range(len(given)))}', got=f'allreduce of groups {order}',
                     why='for arrays in groups: allreduce(arrays) (the allreduce argument)')
    if not all(backward):
        raise Broken(f'the allreduces ran before the backward pass ({case})',
                     expected='backward() of every loss called before the first allreduce',
                     got=f'{backward.count(False)} of {len(backward)} allreduces called before it',
                     why='the allreduces ran before the backward pass wrote the gradients: call l.backward() for '
                         'every loss first, then allreduce each group')
    if wait and not all(opened):
        raise Broken(f'with wait=True, no allreduce before the whole backward pass has run ({case})',
                     expected='nd.waitall() (or a wait on every gradient) before the first allreduce',
                     got=f'{opened.count(False)} of {len(opened)} allreduces called while the backward pass was still '
                         'held', why='with wait=True, wait for the whole backward pass first (if wait: nd.waitall()): '
                                     'wait is the argument that says whether to wait')
    if not wait and (any(opened) or returned_open):
        raise Broken(f'with wait=False, every allreduce is queued at once and the function returns without waiting '
                     f'({case})', expected='every allreduce called while the backward pass still runs',
                     got='it waited for the whole backward pass' + (' before an allreduce' if any(opened) else
                                                                    ' before it returned'),
                     why='wait only if wait is True (if wait: nd.waitall()): without the wait the engine starts each '
                         'allreduce as soon as its gradients are written, during the backward pass')
    want, own = _small_grads(k, summed=True), _small_grads(k, summed=False)
    for i, (p, w, o) in enumerate(zip(params, want, own)):
        got = [g.asnumpy() for g in p.list_grad()]
        if any(not np.array_equal(a, b) for a, b in zip(got, w)):
            why = ('each device holds its own gradient, not the sum: the allreduces ran before the backward pass '
                   'wrote the gradients (backward first, then allreduce)' if k > 1 and
                   all(np.array_equal(a, b) for a, b in zip(got, o)) else
                   'backward every device\'s loss (for l in losses: l.backward())')
            raise Broken(f'{p.name}\'s gradient after backward_and_send ({case})', expected=_fmt(w[0]) + ' everywhere',
                         got=_devices_words(got), why=why)


BUCKET_VIEW_CASES = [dict(k=k, bucket_bytes=b) for k in (1, 2, 3) for b in (1, 100, 10 ** 9)]


def law_bucket_views(bucket_gradients, k, bucket_bytes):
    """Notebook 10: one flat bucket per plan of ``plan_buckets``, last layer first, one array per
    device (``[bucket][device]``, the parameters' dtype); afterwards backward writes every gradient
    straight into its slot of its bucket, and Gluon's ``list_grad()`` and autograd's ``.grad`` are
    those views, with the values of ordinary gradient buffers."""
    from helpers.buckets import plan_buckets as lesson_plan
    net, params = _small_net(CPU[:k])
    want = _small_grads(k, summed=False)
    buckets = bucket_gradients(params, bucket_bytes)
    plans = lesson_plan([p.list_data()[0].size for p in params], bucket_bytes, 4)
    case = f'{k} device{"s" * (k > 1)}, bucket_bytes {bucket_bytes}'
    shape = [[(b.size, b.context) if isinstance(b, nd.NDArray) else None for b in flats] for flats in buckets] \
        if isinstance(buckets, (list, tuple)) else None
    expected = [[(plan[-1][2], d) for d in CPU[:k]] for plan in plans]
    if shape != expected:
        raise Broken(f'the buckets ({case}): one flat array per device for each bucket of plan_buckets',
                     expected=str([[f'{n} elements on {d}' for n, d in flats] for flats in expected]),
                     got=str([[f'{b[0]} elements on {b[1]}' if b else '?' for b in flats] for flats in shape])
                     if shape else repr(buckets)[:160],
                     why='for each plan: nd.zeros(plan[-1][2], ctx=..., dtype=...) per device, in the plan\'s order')
    for flats in buckets:
        for f in flats:
            f[:] = np.nan                         # backward must overwrite every slot
    for l in _small_losses(net, CPU[:k]):
        l.backward()
    nd.waitall()
    for plan, flats in zip(plans, buckets):
        for i, begin, end in plan:
            for d, f in enumerate(flats):
                slot = f[begin:end].asnumpy()
                if not np.array_equal(slot, want[i][d].reshape(-1)):
                    untouched = np.isnan(slot).all()
                    raise Broken(f'{params[i].name}\'s slot {begin}:{end} in its bucket on device {d} after backward '
                                 f'({case})', expected=_fmt(want[i][d]), got=_fmt(slot),
                                 why=('backward did not write into the bucket: make the views autograd\'s gradient '
                                      'buffers too, autograd.mark_variables(params[i].list_data(), views)'
                                      if untouched else 'gradient i fills elements begin:end of its bucket'))
    for p, w in zip(params, want):
        for d, (g, data) in enumerate(zip(p.list_grad(), p.list_data())):
            if not np.array_equal(g.asnumpy(), w[d]) or not np.array_equal(data.grad.asnumpy(), w[d]):
                raise Broken(f'{p.name}\'s gradient on device {d} ({case})', expected=_fmt(w[d]),
                             got=f'list_grad(): {_fmt(g.asnumpy())}, .grad: {_fmt(data.grad.asnumpy())}',
                             why='give Gluon the views too: params[i]._grad = views')


@lesson('helpers.buckets.plan_buckets',
        hint='from the last gradient back, add slots; close a bucket once it holds bucket_bytes; keep the last one')
def check_plan_buckets():
    """Check your ``plan_buckets(sizes, bucket_bytes, itemsize)`` (notebook 10): every gradient in one bucket."""
    return [
        Law('every gradient in one bucket, last layer first, contiguous slots from 0; a bucket closes as soon as it '
            'holds bucket_bytes; the last one is kept even when not full', law_plan_buckets, PLAN_CASES,
            lambda sizes, bucket_bytes, itemsize: f'gradients of {sizes} elements, {itemsize} bytes each, '
                                                  f'buckets of {bucket_bytes} bytes'),
        Law('bad input refused', law_plan_refuses_bad_input,
            [dict(bad=b) for b in ('no gradient', 'a size of 0', 'a bucket of 0 bytes', 'sizes not a list')],
            lambda bad: bad),
    ]


@lesson('helpers.buckets.allreduce_bucketed',
        hint='per bucket of plan_buckets: concat the flat gradients per device, allreduce, copy the slots back')
def check_allreduce_bucketed():
    """Check your ``allreduce_bucketed(grads, bucket_bytes, allreduce)`` (notebook 10): the unbucketed bits,
    one allreduce per bucket."""
    return [
        Law("every gradient ends with its own allreduce's bits, in place, with one allreduce per bucket (k = 1-8, "
            "buckets smaller than a gradient to larger than all, float32 and float64)",
            law_bucketed_like_unbucketed, BUCKETED_CASES,
            lambda k, shapes, bucket_bytes, dtype, seed: f'{k} device{"s" * (k > 1)}, gradients of shapes '
                                                         f'{_shapes_words(shapes)}, {dtype}, buckets of '
                                                         f'{bucket_bytes} B'),
        Law('bad input refused before any work', law_bucketed_refuses_bad_input,
            [dict(bad=b) for b in ('bucket_bytes 0', 'bucket_bytes -5', 'bucket_bytes 2.5', 'bucket_bytes True',
                                   'no gradient', 'an array, not a list', 'mixed dtypes', 'one gradient of two shapes',
                                   'devices in another order')], lambda bad: bad),
    ]


@lesson('helpers.buckets.backward_and_send',
        hint='backward every loss; if wait, nd.waitall(); then allreduce(arrays) for each group, in order')
def check_backward_and_send():
    """Check your ``backward_and_send(losses, groups, wait, allreduce)`` (notebook 10)."""
    return [Law('backward on every device, then one allreduce per group in the order given, waiting for the backward '
                'pass first if and only if wait: every gradient summed', law_backward_and_send, BACKWARD_CASES,
                lambda k, wait, groups: f'{k} device{"s" * (k > 1)}, groups: {groups}, wait={wait}')]


@lesson('helpers.buckets.bucket_gradients',
        hint='per plan: one nd.zeros bucket per device; views into it become _grad and, via mark_variables, .grad')
def check_bucket_gradients():
    """Check your ``bucket_gradients(params, bucket_bytes)`` (notebook 10): backward writes into the buckets."""
    return [Law("one flat bucket per plan and device; backward then writes every gradient into its slot, and Gluon's "
                "list_grad() and autograd's .grad are those views", law_bucket_views, BUCKET_VIEW_CASES,
                lambda k, bucket_bytes: f'{k} device{"s" * (k > 1)}, buckets of {bucket_bytes} bytes')]
