"""The laws and checks of :mod:`helpers.zero` (notebook 12): shards padded to a multiple of k, the chunk
each device keeps, the all-gather that puts a unit back together, a dense layer and its gradients by
hand, the Function that fetches a layer's weights in forward and in backward, and the ZeRO-2 and ZeRO-3
steps: the replicated step's weights, 1/k of the state, and ZeRO-3's 1.5 times the bytes.
``tests/test_zero.py`` calls the same laws.
"""
import numpy as np
from mxnet import autograd, nd

from helpers.lessoncheck.machinery import Broken, CPU, Law, _fmt, lesson

__all__ = ['check_mine', 'check_shard', 'check_gather', 'check_unpack', 'check_dense', 'check_dense_grads',
           'check_Fetcher', 'check_ZeroLayer', 'check_make_model', 'check_attach_grads', 'check_train_batch_zero',
           'CHUNK_CASES', 'law_mine', 'law_shard', 'law_gather', 'UNIT_CASES', 'law_unpack', 'law_dense',
           'law_dense_grads', 'law_fetcher', 'LAYER_CASES', 'law_zero_layer', 'law_make_model', 'law_attach_grads',
           'STEP_CASES', 'law_zero_step_is_the_replicated_one', 'law_zero3_sends_one_and_a_half_allreduces']

# sizes below, equal to and not divisible by k; k odd and even, up to 8
CHUNK_CASES = [dict(k=k, size=n) for k, n in ((1, 3), (2, 5), (3, 2), (4, 4), (5, 13), (8, 3))]
UNIT_CASES = [dict(fan_in=i, fan_out=o, relu=r)
              for i, o, r in ((1, 1, False), (3, 2, True), (5, 4, True), (7, 3, False))]


def _flat(size, seed=0, dtype='float64'):
    return nd.array(np.random.default_rng(seed).standard_normal(size), dtype=dtype)


def _padded(size, k):
    return -(-size // k) * k


def law_mine(mine, k, size):
    """Notebook 12: device ``i``'s chunk is chunk ``owner_chunk(i, k)`` of ``shard_bounds(size, k)``,
    a view that shares the array's memory."""
    from helpers.comm import owner_chunk
    from helpers.split import shard_bounds
    a = nd.arange(size, dtype='float64')
    for i in range(k):
        b, e = shard_bounds(size, k)[owner_chunk(i, k)]
        got = mine(a, i, k)
        if not isinstance(got, nd.NDArray) or got.asnumpy().tolist() != list(range(b, e)):
            raise Broken(f'device {i}\'s chunk of {size} elements cut in {k}', expected=f'elements {b}:{e}',
                         got=_fmt(got.asnumpy()) if isinstance(got, nd.NDArray) else repr(got)[:80],
                         why='chunk owner_chunk(i, k) of shard_bounds(a.size, k): the one the reduce-scatter '
                             'finishes on device i')
        if e > b:
            got[:] = -1
            if a.asnumpy()[b] != -1:
                raise Broken('the chunk must be a view of the array: writing it must write the array',
                             why='slice the array, a[b:e]; do not copy it')
            a[b:e] = nd.arange(b, e, dtype='float64')


def law_shard(shard, k, size):
    """Notebook 12: the unit padded with zeros to a multiple of k; device i keeps, on device i, chunk
    ``owner_chunk(i, k)`` of it: k shards of one size, together the unit and its padding."""
    from helpers.comm import owner_chunk
    flat = _flat(size)
    padded = np.concatenate([flat.asnumpy(), np.zeros(_padded(size, k) - size)])
    per = _padded(size, k) // k
    got = shard(flat, CPU[:k])
    if not isinstance(got, (list, tuple)) or len(got) != k:
        raise Broken(f'one shard per device ({k})', got=repr(got)[:100])
    for i, s in enumerate(got):
        c = owner_chunk(i, k)
        want = padded[c * per:(c + 1) * per]
        if not isinstance(s, nd.NDArray) or s.context != CPU[i] or not np.array_equal(s.asnumpy(), want):
            raise Broken(f'device {i}\'s shard of a unit of {size} on {k} devices',
                         expected=f'{_fmt(want)} on {CPU[i]} (chunk {c} of the unit padded to {_padded(size, k)})',
                         got=f'{_fmt(s.asnumpy())} on {s.context}' if isinstance(s, nd.NDArray) else repr(s)[:80],
                         why='pad with zeros to a multiple of k (every shard one size), then mine(padded, i, k) '
                             'copied to device i')


def law_gather(gather, k, size):
    """Notebook 12: every device ends with the whole padded unit, in new arrays (the shards unchanged),
    every message through ``send``: each device sends (k - 1) shards, an all-gather's bytes."""
    from helpers.comm import CommStats
    from helpers.zero import shard
    flat = _flat(size, 1)
    shards = shard(flat, CPU[:k])
    want = np.concatenate([flat.asnumpy(), np.zeros(_padded(size, k) - size)])
    stats = CommStats()
    got = gather(shards, stats.send)
    for i, f in enumerate(got if isinstance(got, (list, tuple)) else [None] * k):
        if not isinstance(f, nd.NDArray) or f.context != CPU[i] or not np.array_equal(f.asnumpy(), want):
            raise Broken(f'device {i}\'s gathered unit ({size} elements, {k} devices)',
                         expected=f'{_fmt(want)} on {CPU[i]}',
                         got=f'{_fmt(f.asnumpy())} on {f.context}' if isinstance(f, nd.NDArray) else repr(got)[:80],
                         why='a new array of k shards on each device, its own shard put at mine(full, i, k), then '
                             'all_gather(fulls, send)')
    want_bytes = [(k - 1) * shards[0].size * 8] * k
    if stats.per_device(CPU[:k]) != want_bytes:
        raise Broken(f'bytes each device sends while gathering {k} shards of {shards[0].size} float64',
                     expected=str(want_bytes), got=str(stats.per_device(CPU[:k])),
                     why='pass send on to all_gather: every message goes through it')


def _unit(fan_in, fan_out, relu):
    from helpers.zero import Unit
    return Unit(fan_in, fan_out, relu)


def law_unpack(unpack, fan_in, fan_out, relu):
    """Notebook 12: the weight matrix (fan_out x fan_in, the first elements) and the bias (the next
    fan_out), as views of the flat weights."""
    unit = _unit(fan_in, fan_out, relu)
    w = nd.arange(fan_in * fan_out + fan_out + 2, dtype='float64')
    W, b = unpack(w, unit)
    n = fan_in * fan_out
    if W.shape != (fan_out, fan_in) or b.shape != (fan_out,) or \
            W.asnumpy().ravel().tolist() != list(range(n)) or b.asnumpy().tolist() != list(range(n, n + fan_out)):
        raise Broken(f'unpack of the flat weights of a {fan_in} -> {fan_out} layer',
                     expected=f'W {(fan_out, fan_in)} = elements 0:{n}, b = elements {n}:{n + fan_out}',
                     got=f'W {W.shape}, b {b.shape}', why='w[:n].reshape((fan_out, fan_in)), w[n:n + fan_out]')
    w[:] = -1
    if (W.asnumpy() != -1).any():
        raise Broken('W and b must be views of w (a write into w is seen through them)', why='slice and reshape')


def law_dense(dense, fan_in, fan_out, relu):
    """Notebook 12: the dense layer ``x W^T + b``, then a ReLU if the unit says so."""
    unit = _unit(fan_in, fan_out, relu)
    w, x = _flat(fan_in * fan_out + fan_out + 1, 2), _flat(3 * fan_in, 3).reshape((3, fan_in))
    W = w.asnumpy()[:fan_in * fan_out].reshape(fan_out, fan_in)
    want = x.asnumpy() @ W.T + w.asnumpy()[fan_in * fan_out:fan_in * fan_out + fan_out]
    want = np.maximum(want, 0) if relu else want
    got = dense(x, w, unit)
    if not np.allclose(got.asnumpy(), want, rtol=1e-12, atol=1e-12):
        raise Broken(f'a {fan_in} -> {fan_out} dense layer{" and its ReLU" * relu} on 3 examples',
                     expected=_fmt(want), got=_fmt(got.asnumpy()),
                     why='nd.FullyConnected(x, W, b, num_hidden=fan_out) with W, b = unpack(w, unit)'
                         + (', then nd.relu' if relu else ''))


def law_dense_grads(dense_grads, fan_in, fan_out, relu):
    """Notebook 12: ``dx`` and the flat ``dw`` (weight, bias, then zeros for the padding) are autograd's
    gradients of ``sum(dense(x, w) * dy)`` (float64, to 1e-12)."""
    from helpers.zero import dense
    unit = _unit(fan_in, fan_out, relu)
    size = fan_in * fan_out + fan_out
    w, x = _flat(size + 3, 4), _flat(3 * fan_in, 5).reshape((3, fan_in))
    dy = _flat(3 * fan_out, 6).reshape((3, fan_out))
    x.attach_grad()
    w.attach_grad()
    with autograd.record():
        y = dense(x, w, unit)
        total = (y * dy).sum()
    total.backward()
    dx, dw = dense_grads(x.detach(), y.detach(), dy, w.detach(), unit)
    for name, got, want in (('dx', dx, x.grad), ('dw', dw, w.grad)):
        if not isinstance(got, nd.NDArray) or got.shape != want.shape or \
                not np.allclose(got.asnumpy(), want.asnumpy(), rtol=1e-12, atol=1e-12):
            raise Broken(f'{name} of a {fan_in} -> {fan_out} dense layer{" and ReLU" * relu}, 3 examples',
                         expected=_fmt(want.asnumpy()),
                         got=_fmt(got.asnumpy()) if isinstance(got, nd.NDArray) else repr(got)[:80],
                         why={'dx': 'dz W, with dz = dy * (y > 0) after a ReLU, else dy',
                              'dw': 'a flat array of w\'s size: dz^T x in the weight\'s place, the sum of dz over '
                                    'the examples in the bias\'s, zeros after'}[name])


def _units_and_shards(k, sizes=(3, 2, 2), seed=0):
    from helpers.zero import init_mlp, mlp_units, shard
    units = mlp_units(list(sizes))
    flats = init_mlp(units, seed, 'float64')
    return units, flats, [shard(f, CPU[:k]) for f in flats]


def law_fetcher(Fetcher, k, prefetch):
    """Notebook 12: asked for unit j, a fetcher returns its whole weights on every device (gathered
    through ``send``); with ``prefetch`` it also gathers unit ``j + step`` then, and hands it over when
    asked; a forward pass over every unit gathers each unit once either way."""
    from helpers.comm import CommStats
    units, flats, shards = _units_and_shards(k)
    stats = CommStats()
    fetch = Fetcher(shards, stats.send, prefetch)
    sent = []
    for j, f in enumerate(flats):
        ws = fetch(j, +1, [])
        sent.append(stats.messages)
        want = f.asnumpy()
        for i, w in enumerate(ws):
            if w.context != CPU[i] or not np.array_equal(w.asnumpy()[:want.size], want):
                raise Broken(f'device {i}\'s weights of unit {j} from fetch({j}, +1, [])',
                             expected=f'{_fmt(want)} on {CPU[i]}', got=f'{_fmt(w.asnumpy())} on {w.context}',
                             why='gather(shards[j], send), or the gather started ahead for unit j')
    per_gather = k * (k - 1)
    want = [(2 if prefetch else 1) * per_gather] + [(j + (2 if prefetch and j + 1 < len(flats) else 1)) * per_gather
                                                    for j in range(1, len(flats))]
    if k > 1 and sent != want:
        raise Broken(f'messages sent after each of fetch(0, +1), fetch(1, +1), fetch(2, +1) on {k} devices, '
                     f'prefetch={prefetch}', expected=str(want), got=str(sent),
                     why=('with prefetch, asking for unit j also gathers unit j + step, and asking for that unit '
                          'next hands over what was gathered, without gathering it again') if prefetch else
                         'without prefetch, one gather per request, nothing ahead')


LAYER_CASES = [dict(k=k) for k in (1, 2, 3, 4)]


def law_zero_layer(ZeroLayer, k, n=5):
    """Notebook 12: one layer on every device through the Function: its forward is :func:`dense` with the
    whole weights; its backward gives each shard the sum over the devices of its chunk of the weights'
    gradient (the reduce-scatter), and each input its own gradient (float64)."""
    from helpers.comm import copy_to
    from helpers.zero import Fetcher, dense, dense_grads, gather, mine
    units, flats, shards = _units_and_shards(k)
    grads = [nd.zeros_like(s) for s in shards[0]]
    xs = [_flat(n * units[0].fan_in, 7 + i).reshape((n, units[0].fan_in)).as_in_context(CPU[i]) for i in range(k)]
    dys = [_flat(n * units[0].fan_out, 20 + i).reshape((n, units[0].fan_out)).as_in_context(CPU[i]) for i in range(k)]
    for x in xs:
        x.attach_grad()
    with autograd.record():
        ys = ZeroLayer(units[0], 0, Fetcher(shards, copy_to), grads, copy_to)(*xs)
        ys = list(ys) if isinstance(ys, (list, tuple)) else [ys]
    autograd.backward(ys, dys)
    nd.waitall()
    full = gather(shards[0])[0]
    total = None
    for i, (x, y, dy) in enumerate(zip(xs, ys, dys)):
        want = dense(x.detach(), full.as_in_context(CPU[i]), units[0])
        if not np.allclose(y.asnumpy(), want.asnumpy(), rtol=1e-12, atol=1e-12):
            raise Broken(f'device {i}\'s output of the layer ({k} devices)', expected=_fmt(want.asnumpy()),
                         got=_fmt(y.asnumpy()), why='forward: fetch the whole weights, then dense(x, w, unit) on each '
                                                    'device')
        dx, dw = dense_grads(x.detach(), want, dy, full.as_in_context(CPU[i]), units[0])
        if not np.allclose(x.grad.asnumpy(), dx.asnumpy(), rtol=1e-12, atol=1e-12):
            raise Broken(f'device {i}\'s input gradient', expected=_fmt(dx.asnumpy()), got=_fmt(x.grad.asnumpy()),
                         why='backward returns the k input gradients dx, and only them')
        total = dw.asnumpy() if total is None else total + dw.asnumpy()
    for i, g in enumerate(grads):
        want = mine(nd.array(total, dtype='float64'), i, k).asnumpy()
        if not np.allclose(g.asnumpy(), want, rtol=1e-12, atol=1e-12):
            raise Broken(f'device {i}\'s shard gradient ({k} devices)', expected=_fmt(want), got=_fmt(g.asnumpy()),
                         why='reduce_scatter the k flat gradients, then copy mine(dw_i, i, k), its chunk of the sum '
                             'over the devices, into grads[i]')


def law_make_model(make_model, k, stage):
    """Notebook 12: ZeRO-3 keeps device i's shard of every unit (:func:`shard`) and no whole weights;
    ZeRO-2 keeps every unit whole (padded) on every device, the shards views of it; no gradients yet."""
    from helpers.zero import init_mlp, mlp_units, shard
    units = mlp_units([3, 2, 2])
    flats = init_mlp(units, 0, 'float64')
    model = make_model(flats, units, CPU[:k], stage)
    for j, f in enumerate(flats):
        want = shard(f, CPU[:k])
        for i, (s, w) in enumerate(zip(model.shards[j], want)):
            if s.context != CPU[i] or not np.array_equal(s.asnumpy(), w.asnumpy()):
                raise Broken(f'device {i}\'s shard of unit {j}, ZeRO-{stage}', expected=_fmt(w.asnumpy()),
                             got=_fmt(s.asnumpy()), why='shard(flat, devices) for ZeRO-3; for ZeRO-2 mine(whole, i, k)')
    if stage == 3 and model.full is not None:
        raise Broken('ZeRO-3 keeps no whole weights', got='model.full is not None',
                     why='Model(units, shards, None, None)')
    if stage == 2:
        if model.full is None:
            raise Broken('ZeRO-2 keeps the whole weights on every device', got='model.full is None')
        model.shards[0][0][:] = 7
        if 7 not in model.full[0][0].asnumpy():
            raise Broken('ZeRO-2\'s shards must be views of the whole weights: the update writes them',
                         why='mine(full, i, k), not a copy')


def law_attach_grads(attach_grads, k):
    """Notebook 12: a zero gradient buffer of each shard's shape, beside it: an array of its own, which
    the backward writes and the update reads."""
    from helpers.zero import Model, init_mlp, mlp_units, shard
    units = mlp_units([3, 2])
    flats = init_mlp(units, 0, 'float64')
    model = attach_grads(Model(units, [shard(f, CPU[:k]) for f in flats], None, None))
    for i, (s, g) in enumerate(zip(model.shards[0], model.grads[0])):
        if g.shape != s.shape or g.context != s.context or g.asnumpy().any():
            raise Broken(f'device {i}\'s gradient buffer', expected=f'zeros {s.shape} on {s.context}',
                         got=f'{g.shape} on {g.context}')
    for g in model.grads[0]:
        g[:] = 2
    if any((s.asnumpy() == 2).all() for s in model.shards[0]) or any((g.asnumpy() != 2).any() for g in model.grads[0]):
        raise Broken('each gradient buffer must be an array of its own: writing it changes no shard and no '
                     'other buffer', why='nd.zeros_like(s) for each shard s')


STEP_CASES = [dict(k=k, stage=s, prefetch=p) for k, s, p in ((1, 3, False), (2, 2, False), (2, 3, True), (3, 3, False),
                                                            (4, 3, True), (5, 2, False))]


def law_zero_step_is_the_replicated_one(train_batch_zero, k, stage, prefetch, steps=2, n=6):
    """Notebook 12: steps of ZeRO-2 or ZeRO-3 (with Adam) take the replicated step's weights (float64,
    to 1e-12), on a perceptron whose units are smaller than k and not divisible by it; each device's
    optimizer keeps state for its shards only."""
    from helpers.sharding import adam_updaters, state_elements
    from helpers.zero import attach_grads, build, full_weights, init_mlp, make_model, mlp_units, step
    units = mlp_units([5, 3, 2])
    flats = init_mlp(units, 0, 'float64')
    rng = np.random.default_rng(9)
    ref, ref_u = build('replicated', flats, units, CPU[:k]), adam_updaters(CPU[:k], 1e-2, n)
    model = attach_grads(make_model(flats, units, CPU[:k], stage))
    ours_u = adam_updaters(CPU[:k], 1e-2, n)
    for _ in range(steps):
        X, y = nd.array(rng.standard_normal((n, 5)), dtype='float64'), nd.array(rng.integers(0, 2, n))
        step('replicated', X, y, ref, CPU[:k], ref_u)
        losses = train_batch_zero(X, y, model, CPU[:k], ours_u, prefetch=prefetch)
        if not isinstance(losses, (list, tuple)) or len(losses) != k:
            raise Broken('the step returns one loss sum per device', got=repr(losses)[:100])
    want, got = ref[0].weights.asnumpy(), full_weights(model)
    if got.shape != want.shape or np.abs(got - want).max() > 1e-12:
        raise Broken(f'the weights after {steps} ZeRO-{stage} steps on {k} devices (prefetch={prefetch})',
                     expected=_fmt(want), got=_fmt(got),
                     why='forward and backward through ZeroLayer, nd.waitall(), then update(j, grads[j][i], '
                         'shards[j][i]) on each device; ZeRO-2 then all_gather(model.full[j], send)')
    per = [2 * sum(s[i].size for s in model.shards) for i in range(k)]
    if state_elements(ours_u) != per:
        raise Broken(f'elements of Adam state per device, ZeRO-{stage} on {k} devices', expected=str(per),
                     got=str(state_elements(ours_u)), why='each device updates its shards only: update(j, g, s)')


def law_zero3_sends_one_and_a_half_allreduces(train_batch_zero, k, n=4):
    """Notebook 12: every message of a ZeRO-3 step goes through ``send``: each device sends three
    all-gathers' bytes of the padded units (two gathers, one reduce-scatter), 1.5 times a ring allreduce."""
    from helpers.comm import CommStats
    from helpers.sharding import adam_updaters
    from helpers.zero import attach_grads, init_mlp, make_model, mlp_units
    units = mlp_units([5, 3, 2])
    model = attach_grads(make_model(init_mlp(units, 0, 'float64'), units, CPU[:k], 3))
    rng = np.random.default_rng(3)
    stats = CommStats()
    train_batch_zero(nd.array(rng.standard_normal((n, 5)), dtype='float64'), nd.array(rng.integers(0, 2, n)),
                     model, CPU[:k], adam_updaters(CPU[:k], 1e-2, n), send=stats.send)
    want = [3 * (k - 1) * sum(s[0].size for s in model.shards) * 8] * k
    if stats.per_device(CPU[:k]) != want:
        raise Broken(f'bytes each device sends in one ZeRO-3 step on {k} devices', expected=str(want),
                     got=str(stats.per_device(CPU[:k])),
                     why='each unit is gathered before its forward and again before its backward, and its gradient '
                         'reduce-scattered: (k - 1) shards each time, every message through send')


def _units_words(fan_in, fan_out, relu):
    return f'a {fan_in} -> {fan_out} layer{" with ReLU" * relu}'


@lesson('helpers.zero.mine', hint='b, e = shard_bounds(a.size, k)[owner_chunk(i, k)]; return the slice')
def check_mine():
    """Check your ``mine(a, i, k)`` (notebook 12)."""
    return [Law("device i's chunk is chunk owner_chunk(i, k), a view", law_mine, CHUNK_CASES,
                lambda k, size: f'{size} elements, {k} devices')]


@lesson('helpers.zero.shard', hint='pad with zeros to a multiple of k; mine(padded, i, k).copyto(device i)')
def check_shard():
    """Check your ``shard(flat, devices)`` (notebook 12)."""
    return [Law('padded to a multiple of k, device i keeps chunk owner_chunk(i, k) on device i', law_shard,
                CHUNK_CASES, lambda k, size: f'a unit of {size} on {k} devices')]


@lesson('helpers.zero.gather', hint='arrays of k shards; each shard at mine(full, i, k); all_gather(fulls, send)')
def check_gather():
    """Check your ``gather(shards, send)`` (notebook 12)."""
    return [Law('every device gets the whole padded unit, every message through send', law_gather, CHUNK_CASES,
                lambda k, size: f'a unit of {size} on {k} devices')]


@lesson('helpers.zero.unpack', hint='n = fan_out * fan_in: w[:n].reshape((fan_out, fan_in)), w[n:n + fan_out]')
def check_unpack():
    """Check your ``unpack(w, unit)`` (notebook 12)."""
    return [Law('the weight matrix and the bias, views of the flat weights', law_unpack, UNIT_CASES, _units_words)]


@lesson('helpers.zero.dense', hint='W, b = unpack(w, unit); nd.FullyConnected(x, W, b, ...); ReLU if unit.relu')
def check_dense():
    """Check your ``dense(x, w, unit)`` (notebook 12)."""
    return [Law('x W^T + b, then a ReLU if the unit says so', law_dense, UNIT_CASES, _units_words)]


@lesson('helpers.zero.dense_grads', hint='dz = dy * (y > 0) after a ReLU; dw: dz^T x, then sum(dz); dx = dz W')
def check_dense_grads():
    """Check your ``dense_grads(x, y, dy, w, unit)`` (notebook 12)."""
    return [Law("autograd's gradients of the layer: dx, and the flat dw with zeros in the padding", law_dense_grads,
                UNIT_CASES, _units_words)]


@lesson('helpers.zero.Fetcher', hint='wait for xs; pop the unit gathered ahead or gather it; prefetch: gather j + step')
def check_Fetcher():
    """Check your ``Fetcher(shards, send, prefetch)`` (notebook 12)."""
    return [Law('each unit gathered once, whole on every device; with prefetch, one unit ahead', law_fetcher,
                [dict(k=k, prefetch=p) for k, p in ((1, False), (2, False), (2, True), (3, True))],
                lambda k, prefetch: f'3 units on {k} device{"s" * (k > 1)}, prefetch={prefetch}')]


@lesson('helpers.zero.ZeroLayer', hint='forward: fetch, dense, save xs, ys; backward: fetch, dense_grads, '
                                       'reduce_scatter into grads, dxs')
def check_ZeroLayer():
    """Check your ``ZeroLayer(unit, j, fetch, grads, send)`` (notebook 12)."""
    return [Law("dense with the whole weights; backward: each shard's chunk of the summed gradient, each input's own",
                law_zero_layer, LAYER_CASES, lambda k: f'one layer on {k} device{"s" * (k > 1)}')]


@lesson('helpers.zero.make_model', hint='ZeRO-3: shard every unit; ZeRO-2: gather(shard(f)) whole, mine() views')
def check_make_model():
    """Check your ``make_model(flats, units, devices, stage)`` (notebook 12)."""
    return [Law('ZeRO-3: the shards only; ZeRO-2: the whole weights, the shards views of them', law_make_model,
                [dict(k=k, stage=s) for k, s in ((1, 3), (2, 2), (3, 3), (4, 2))],
                lambda k, stage: f'ZeRO-{stage} on {k} device{"s" * (k > 1)}')]


@lesson('helpers.zero.attach_grads', hint='nd.zeros_like each shard; model._replace(grads=...)')
def check_attach_grads():
    """Check your ``attach_grads(model)`` (notebook 12)."""
    return [Law("a zero buffer of its own beside each shard", law_attach_grads,
                [dict(k=k) for k in (1, 2, 3)], lambda k: f'{k} device{"s" * (k > 1)}')]


@lesson('helpers.zero.train_batch_zero', hint='batch marked; ZeroLayer per unit, recorded; backward; waitall; '
                                              'update shards (ZeRO-2: all_gather)')
def check_train_batch_zero():
    """Check your ``train_batch_zero(X, y, model, devices, updaters, send, prefetch)`` (notebook 12)."""
    return [
        Law("the replicated step's weights (float64), Adam state for the shards only",
            law_zero_step_is_the_replicated_one, STEP_CASES,
            lambda k, stage, prefetch: f'ZeRO-{stage} on {k} device{"s" * (k > 1)}, prefetch={prefetch}'),
        Law('ZeRO-3: three all-gathers\' bytes per device, every message through send',
            law_zero3_sends_one_and_a_half_allreduces, [dict(k=k) for k in (1, 2, 3)],
            lambda k: f'{k} device{"s" * (k > 1)}'),
    ]
