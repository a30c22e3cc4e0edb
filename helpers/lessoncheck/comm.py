"""The laws and checks of :mod:`helpers.comm` (notebook 04): every allreduce sums in place, with
identical bits on every device and the bytes of its cost formula; the ring's halves own and copy their
chunks; bad input is refused before any copy. A failing collective says where it went wrong, from its
replay (:mod:`helpers.replay`). ``tests/test_comm.py`` calls the same laws.
"""
import numpy as np
import mxnet as mx
from mxnet import nd

from helpers.lessoncheck.machinery import Broken, CPU, Law, _devices_words, _fmt, _n, _refuses, lesson

__all__ = ['check_copy_to', 'check_allreduce_naive', 'check_reduce_scatter', 'check_all_gather', 'check_allreduce_ring',
           'check_allreduce', 'law_allreduce_sums', 'BYTES_CASES', 'law_bytes_match_the_formula', 'BAD_INPUTS',
           'law_refuses_bad_input', 'law_ring_refuses_fewer_elements_than_devices', 'law_reduce_scatter_owns',
           'law_all_gather_copies', 'law_dispatch', 'DISPATCH_CASES', 'law_copy_to']


def _allreduce_cases(min_size_k=False, shapes=True):
    cases = []
    for k in range(1, 9):
        sizes = [(1,), (k,), (k + 1,), (2, k + 1)] + ([(3, 2, k)] if shapes else [])
        for shape in dict.fromkeys(sizes):
            if min_size_k and int(np.prod(shape)) < k:
                continue
            for dtype in ('float32', 'float64'):
                cases.append(dict(k=k, shape=shape, dtype=dtype, seed=1000 * k + int(np.prod(shape))))
    return sorted(cases, key=lambda c: (int(np.prod(c['shape'])), c['k'], c['dtype']))


def _case_words(k, shape, dtype, seed=None, **_):
    n = int(np.prod(shape))
    return f'{k} device{"s" * (k > 1)}, arrays of shape {shape} ({n} element{"s" * (n > 1)}), {dtype}'


def _inputs(k, shape, dtype, seed):
    rng = np.random.default_rng(seed)
    xs = [rng.standard_normal(shape).astype(dtype) for _ in range(k)]
    return xs, [nd.array(x, ctx=c, dtype=dtype) for x, c in zip(xs, CPU)]


def _diagnose(fn, kind, k, size):
    """Replay ``fn`` on ``k`` recording arrays of ``size`` elements and say, in words, where it went
    wrong; returns ``(why, replay)``."""
    from helpers import replay as rp
    from helpers.comm import owner_chunk
    size = min(max(size, k), 3 * k)          # a replay shows the pattern; a few elements per chunk suffice
    try:
        got = rp.record(fn, k, size, reduced=kind == 'all_gather', name=getattr(fn, '__name__', kind))
    except Exception:                       # a replay that cannot run says nothing more
        return None, None
    if not got.steps:
        try:
            more = rp.record(fn, k + 1, size + 1, reduced=kind == 'all_gather').steps
        except Exception:
            more = []
        if more:
            return (f'with {k} devices nothing went through send(), with {k + 1} it did: a loop that runs one step '
                    f'too few? (k - 1 steps)'), got
        return ('no transfer went through send(): pass every copy between devices through send(x, to) '
                '(the send argument), so that bytes are counted and the replay sees them'), got
    complete = [[c == (1,) * k for c in row] for row in got.counts[-1]]
    finals = got.counts[-1]
    twice = [(i, c, d) for i in range(k) for c in range(k) if finals[i][c] is not None
             for d in range(k) if finals[i][c][d] > 1]
    mixed = [(i, c) for i in range(k) for c in range(k) if finals[i][c] is None]
    lesson = None
    if kind in ('ring', 'reduce_scatter', 'all_gather', 'naive'):
        lesson = rp.reference({'ring': 'allreduce_ring', 'naive': 'allreduce_naive'}.get(kind, kind), k, size)
    if twice:
        i, c, d = twice[0]
        why = (f'device {i}\'s chunk {c} holds {got.states[-1][i][c]}: it counts device {d}\'s values '
               f'{finals[i][c][d]} times (a loop that runs one step too many?)')
    elif mixed:
        i, c = mixed[0]
        why = (f'device {i}\'s chunk {c} holds values that belong to other elements: a slice begin:end is off '
               f'(the chunks are shard_bounds(size, k))')
    elif kind == 'naive' and all(complete[0]) and not any(any(row) for row in complete[1:]):
        why = ('device 0 holds the finished sum, but the other devices never got it back: the broadcast '
               '(device 0 sending the sum to every other device) is missing')
    elif kind == 'ring' and all(sum(complete[i][c] for i in range(k)) == 1 for c in range(k)):
        why = ('every chunk was summed completely on exactly one device (the reduce-scatter did its part), '
               'but the finished chunks never travelled round the ring: the all-gather is missing')
    elif kind == 'reduce_scatter':
        wrong = [(i, c) for i in range(k) for c in range(k) if complete[i][c] and c != owner_chunk(i, k)]
        left = k > 2 and got.steps and all(m.dst == (m.src - 1) % k for step in got.steps for m in step)
        why = (f'device {wrong[0][0]} finished chunk {wrong[0][1]}, but after the reduce-scatter device i must '
               f'hold the sum of chunk i + 1 (here {owner_chunk(wrong[0][0], k)})'
               + (': your ring sends to the left (device i to device i - 1), which sums as well, but finishes other '
                  'chunks; notebook 11 relies on owner_chunk(i, k) = i + 1: send to the right' if left else
                  ': the chunk index is off') if wrong else None)
    else:
        why = None
    first = _first_difference(got, lesson) if lesson is not None else None
    if why is None:
        cells = [(i, c) for i in range(k) for c in range(k)
                 if (kind == 'reduce_scatter' and c == owner_chunk(i, k) or kind != 'reduce_scatter')
                 and not complete[i][c]]
        if cells:
            i, c = cells[0]
            why = (f'at the end device {i}\'s chunk {c} holds {got.states[-1][i][c]}, not the finished sum '
                   f'{rp.label((1,) * k)}')
    if first:
        why = f'{why}. {first}' if why else first
    return why, got


def _carried(chunk, elements):
    """What a message carried, in words: ``chunk 2``, ``elements 3:5`` or ``other elements``."""
    return (f'chunk {chunk}' if chunk is not None else
            f'elements {elements[0]}:{elements[1]}' if elements else 'other elements')


def _first_difference(got, lesson):
    """The first step where a replay differs from the lesson's, in words (or None)."""
    for s, (mine, theirs) in enumerate(zip(got.steps, lesson.steps), 1):
        a = sorted((m.src, m.dst, m.chunk, m.elements) for m in mine)
        b = sorted((m.src, m.dst, m.chunk, m.elements) for m in theirs)
        if [x[:3] for x in a] != [x[:3] for x in b]:
            for (src, dst, chunk, el), (src2, dst2, chunk2, el2) in zip(a, b):
                if (src, dst, chunk) != (src2, dst2, chunk2):
                    off = (chunk is not None and chunk2 is not None and (chunk - chunk2) % got.k in (1, got.k - 1))
                    return (f'Your function first differs from the lesson\'s at step {s}: there device {src2} sends '
                            f'{_carried(chunk2, el2)} to device {dst2}; yours: device {src} sends '
                            f'{_carried(chunk, el)} to device {dst}'
                            + (' (the chunk index is off by one)' if off else ''))
            return (f'Your function first differs from the lesson\'s at step {s}: it sends {len(a)} messages, '
                    f'the lesson {len(b)}')
    if len(got.steps) != len(lesson.steps):
        return (f'It takes {len(got.steps)} step{"s" * (len(got.steps) != 1)}; the lesson\'s takes '
                f'{len(lesson.steps)}')
    return None


def law_allreduce_sums(fn, k, shape, dtype, seed, kind='naive'):
    """Notebook 04: in place, every device ends with NumPy's sum of the k arrays (to float rounding),
    with identical bits on every device; the arrays keep their devices, shapes and dtype, and the
    function returns the list it was given."""
    xs, arrays = _inputs(k, shape, dtype, seed)
    given = list(arrays)
    out = fn(arrays)
    want = np.sum(xs, axis=0)
    if out is not arrays:
        raise Broken('an allreduce works in place and returns the list it was given',
                     expected='the list `arrays` itself', got=f'{type(out).__name__}', why='end with `return arrays`')
    for i, (a, c) in enumerate(zip(arrays, CPU)):
        if a is not given[i] or a.context != c or a.shape != tuple(shape) or np.dtype(a.dtype) != np.dtype(dtype):
            raise Broken(f'array {i} must stay the same array, on {c}, shape {shape}, {dtype}',
                         got=f'{a.context}, shape {a.shape}, {np.dtype(a.dtype)}',
                         why='write the sum into the arrays (+=, [:] = or send(x, into_array)), do not replace them')
    values = [a.asnumpy() for a in arrays]
    bad = [i for i, v in enumerate(values) if not np.allclose(v, want, rtol=1e-5, atol=1e-5)]
    if bad:
        why, replay = _diagnose(fn, kind, k, int(np.prod(shape)))
        raise Broken(f'device {bad[0]} does not hold the sum',
                     expected=f'on every device {_fmt(want)} (the inputs: {_devices_words(xs)})',
                     got=_devices_words(values), why=why, replay=replay)
    differ = [i for i, v in enumerate(values) if not np.array_equal(v, values[0])]
    if differ:
        j = differ[0]
        e = int(np.flatnonzero(values[j].reshape(-1) != values[0].reshape(-1))[0])
        raise Broken(f'devices 0 and {j} hold different bits (both close to the sum)',
                     expected='identical bits on every device',
                     got=f'element {e}: {values[0].reshape(-1)[e]!r} on device 0, {values[j].reshape(-1)[e]!r} on '
                         f'device {j}',
                     why='each device added the arrays in its own order; sum every element once, on one device, '
                         'then copy the result')


def _bytes_formula(kind, k, size, itemsize):
    from helpers.costmodel import naive_bytes_per_device, ring_bytes_per_device
    from helpers.split import shard_sizes
    if kind == 'naive':
        return naive_bytes_per_device(k, size, itemsize) if k > 1 else [0]
    if kind == 'ring':
        return ring_bytes_per_device(k, size, itemsize) if k > 1 else [0]
    chunk = [n * itemsize for n in shard_sizes(size, k)]
    skip = 1 if kind == 'reduce_scatter' else 2
    return [size * itemsize - chunk[(i + skip) % k] for i in range(k)] if k > 1 else [0]


def _ring_schedules(kind, k, size, itemsize):
    """Every per-device byte count of a ring that computes what ``kind`` must (notebook 04): in a ring
    of direction d (+1: to the right, -1: to the left) whose reduce-scatter starts device i at chunk
    i + o, device i skips chunk i + o + d in the reduce-scatter and i + o + 2d in the all-gather. The
    reduce-scatter must finish chunk i + 1 on device i (owner_chunk); an all-gather starts from there,
    in either direction; a whole ring may finish its chunks anywhere."""
    from helpers.split import shard_sizes
    if k == 1 or kind == 'naive':
        return [_bytes_formula(kind, k, size, itemsize)]
    chunk = [n * itemsize for n in shard_sizes(size, k)]
    total = size * itemsize
    if kind == 'reduce_scatter':
        skips = [(1,)]
    elif kind == 'all_gather':
        skips = [(2,), (0,)]
    else:
        skips = [((o + d) % k, (o + 2 * d) % k) for d in (1, -1) for o in range(k)]
    return [[len(s) * total - sum(chunk[(i + j) % k] for j in s) for i in range(k)] for s in skips]


BYTES_CASES = [dict(k=k, size=size) for size in (1, 2, 3, 5, 8, 13, 40, 100) for k in range(1, 9)]


def law_bytes_match_the_formula(fn, k, size, kind='naive'):
    """Notebook 04: every transfer goes through ``send``, and each device sends the bytes of the cost
    formula (naive: (k-1)N from device 0, N from the others; ring: 2(k-1)/k N, in chunks, in either
    direction round the ring); the bytes received add up to the bytes sent."""
    from helpers.comm import CommStats
    from helpers.costmodel import naive_bytes_per_device
    if kind != 'naive' and size < k:
        return
    stats = CommStats()
    fn([nd.ones(size, ctx=c) for c in CPU[:k]], send=stats.send)
    want, got = _bytes_formula(kind, k, size, 4), stats.per_device(CPU[:k])
    if got not in _ring_schedules(kind, k, size, 4) or sum(stats.received.values()) != sum(stats.sent.values()):
        why = ('no byte went through send(): call send(x, to) for every copy' if not any(got) and any(want) else
               f'these are the naive algorithm\'s bytes: device 0 sends (k-1) N ({k - 1} times {4 * size} bytes)'
               if kind == 'ring' and got == naive_bytes_per_device(k, size, 4) else
               f'the devices sent {sum(got)} bytes in all, the {kind.replace("_", "-")} {sum(want)}: '
               + ('each device sends k-1 chunks in the reduce-scatter and k-1 in the all-gather, one per step, no more'
                  if kind == 'ring' else 'each device sends k-1 chunks, one per step, no more'
                  if kind != 'naive' else 'device 0 sends the sum to each of the k-1 others once')
               if sum(got) != sum(want) else
               'each device sends every chunk but one in each half of the ring, so its bytes are the array\'s less '
               'the chunks it skips' if kind != 'naive' else None)
        raise Broken(f'bytes sent by each device, {size} float32 element{"s" * (size != 1)} on {k} '
                     f'device{"s" * (k != 1)}', expected=str(want), got=str(got), why=why)


BAD_INPUTS = ['empty list', 'single array', 'shapes', 'dtypes', 'numpy', 'empty arrays']


def law_refuses_bad_input(fn, bad):
    """Notebook 04: what cannot be summed is refused before any copy (TypeError for a wrong type,
    ValueError for a bad value), leaving every array as it was."""
    arrays, error = {
        'empty list': ([], ValueError),
        'single array': (nd.ones(4), TypeError),
        'shapes': ([nd.ones((2, 3), ctx=CPU[0]), nd.ones((3, 2), ctx=CPU[1])], ValueError),
        'dtypes': ([nd.ones(4, ctx=CPU[0]), nd.ones(4, ctx=CPU[1], dtype='float64')], TypeError),
        'numpy': ([nd.ones(4, ctx=CPU[0]), np.ones(4, dtype=np.float32)], TypeError),
        'empty arrays': ([nd.array(np.zeros(0, np.float32), ctx=c) for c in CPU[:2]], ValueError),
    }[bad]
    kept = [a.asnumpy().copy() for a in (arrays if isinstance(arrays, list) else [])
            if isinstance(a, mx.nd.NDArray) and a.size]
    if not _refuses(lambda: fn(arrays), error):
        raise Broken(f'bad input ({bad}) must be refused with a {error.__name__}', expected=error.__name__,
                     got='another outcome', why='keep the guard line `checks.arrays(...)` first in the function')
    left = [a.asnumpy() for a in (arrays if isinstance(arrays, list) else [])
            if isinstance(a, mx.nd.NDArray) and a.size]
    if any(not np.array_equal(x, y) for x, y in zip(kept, left)):
        raise Broken(f'bad input ({bad}) changed an array before it was refused', why='check before copying')


def law_ring_refuses_fewer_elements_than_devices(fn, k):
    """Notebook 04: the ring cuts every array into k chunks, so it refuses fewer than k elements
    (ValueError), before any copy."""
    arrays = [nd.ones(k - 1, ctx=c) for c in CPU[:k]]
    if not _refuses(lambda: fn(arrays), ValueError, f'at least {k} elements'):
        raise Broken(f'{_n(k - 1, "element")} on {k} devices must be refused', expected='ValueError: ... at least '
                     f'{k} elements', got='another outcome',
                     why='keep the guard line `k = checks.arrays(arrays, min_size=len(arrays))`')
    if any((a.asnumpy() != 1).any() for a in arrays):
        raise Broken('the refused arrays were changed', why='check before copying')


def law_reduce_scatter_owns(fn, k, shape, dtype, seed):
    """Notebook 04: after the reduce-scatter, device i holds the sum of chunk owner_chunk(i, k) = i + 1
    (mod k) of the k chunks shard_bounds cuts; the function returns the list it was given."""
    from helpers.comm import owner_chunk
    from helpers.split import shard_bounds
    xs, arrays = _inputs(k, shape, dtype, seed)
    if fn(arrays) is not arrays:
        raise Broken('reduce_scatter works in place and returns the list it was given', why='end with `return arrays`')
    size = int(np.prod(shape))
    chunks, want = shard_bounds(size, k), np.sum(xs, axis=0).reshape(-1)
    for i, a in enumerate(arrays):
        b, e = chunks[owner_chunk(i, k)]
        got = a.asnumpy().reshape(-1)[b:e]
        if not np.allclose(got, want[b:e], rtol=1e-5, atol=1e-5):
            why, replay = _diagnose(fn, 'reduce_scatter', k, size)
            raise Broken(f'device {i} must hold the sum of chunk {owner_chunk(i, k)} (elements {b}:{e})',
                         expected=_fmt(want[b:e]), got=_fmt(got), why=why, replay=replay)


def law_all_gather_copies(fn, k, shape, dtype, seed):
    """Notebook 04: when device i holds a finished chunk owner_chunk(i, k), the all-gather leaves every
    device with every finished chunk, bit for bit; the function returns the list it was given."""
    from helpers.comm import owner_chunk
    from helpers.split import shard_bounds
    xs, arrays = _inputs(k, shape, dtype, seed)
    size = int(np.prod(shape))
    chunks = shard_bounds(size, k)
    owned = {owner_chunk(i, k): x.reshape(-1)[slice(*chunks[owner_chunk(i, k)])] for i, x in enumerate(xs)}
    if fn(arrays) is not arrays:
        raise Broken('all_gather works in place and returns the list it was given', why='end with `return arrays`')
    for i, a in enumerate(arrays):
        flat = a.asnumpy().reshape(-1)
        for c, value in sorted(owned.items()):
            got = flat[slice(*chunks[c])]
            if not np.array_equal(got, value):
                why, replay = _diagnose(fn, 'all_gather', k, size)
                owner = next(j for j in range(k) if owner_chunk(j, k) == c)
                raise Broken(f'device {i}\'s chunk {c} must be a copy of device {owner}\'s (which owns it)',
                             expected=_fmt(value), got=_fmt(got), why=why, replay=replay)


def law_dispatch(fn, k, size, threshold, ring):
    """Notebook 04: ``allreduce`` uses the ring (2k(k-1) transfers) on two or more CPU devices from
    RING_MIN_ELEMENTS elements on, the naive algorithm (2(k-1)) otherwise, and sums either way."""
    from helpers import comm
    table = getattr(fn, '__globals__', {}).get('RING_MIN_ELEMENTS', comm.RING_MIN_ELEMENTS)
    saved = dict(table)
    table['cpu'] = threshold
    try:
        arrays = [nd.full((size,), i, ctx=c) for i, c in enumerate(CPU[:k])]
        stats = comm.CommStats()
        fn(arrays, send=stats.send)
    finally:
        table.clear()
        table.update(saved)
    want = 2 * k * (k - 1) if ring else 2 * (k - 1)
    if stats.messages != want:
        raise Broken(f'{_n(k, "device")}, {size} elements, RING_MIN_ELEMENTS["cpu"] = {threshold}',
                     expected=f'{"the ring" if ring else "the naive algorithm"}: {want} transfers through send',
                     got=f'{stats.messages} transfers',
                     why='the ring for k >= 2 and arrays of at least RING_MIN_ELEMENTS[device type] elements (None: '
                         'never); pass send on to the algorithm')
    if any(a[-1].asscalar() != sum(range(k)) for a in arrays):
        raise Broken('the arrays do not hold the sum', expected=str(sum(range(k))),
                     got=str([a[-1].asscalar() for a in arrays]))


DISPATCH_CASES = [dict(k=1, size=1000, threshold=100, ring=False), dict(k=2, size=99, threshold=100, ring=False),
                  dict(k=2, size=100, threshold=100, ring=True), dict(k=3, size=99, threshold=100, ring=False),
                  dict(k=3, size=100, threshold=100, ring=True), dict(k=3, size=10 ** 6, threshold=None, ring=False)]


def law_copy_to(copy_to, shape, dtype, into):
    """Notebook 04: ``copy_to(x, device)`` returns a new array on that device with x's values;
    ``copy_to(x, array)`` writes x's values into that array; x itself is unchanged."""
    x = nd.array(np.arange(np.prod(shape), dtype=dtype).reshape(shape) + 1, ctx=CPU[0], dtype=dtype)
    target = nd.zeros(shape, ctx=CPU[1], dtype=dtype) if into else CPU[1]
    out = copy_to(x, target)
    result = target if into else out
    if not isinstance(result, mx.nd.NDArray) or result.context != CPU[1] or \
            not np.array_equal(result.asnumpy(), x.asnumpy()):
        raise Broken(f'copy_to(x, {"an array on cpu(1)" if into else "cpu(1)"})',
                     expected=f'{_fmt(x.asnumpy())} on cpu(1)',
                     got=f'{_fmt(result.asnumpy())} on {result.context}' if isinstance(result, mx.nd.NDArray)
                     else repr(result), why='it is x.copyto(to)')
    if not np.array_equal(x.asnumpy(), np.arange(np.prod(shape)).reshape(shape) + 1):
        raise Broken('copy_to changed the array it sends')


def _bytes_words(k, size):
    return f'{size} float32 element{"s" * (size != 1)} on {k} device{"s" * (k != 1)}'


def _allreduce_laws(kind):
    ring = kind == 'ring'
    return [
        Law('in place, every device ends with NumPy\'s sum, identical bits on every device (k = 1-8, sizes below, '
            'equal to and not divisible by k, float32 and float64)',
            lambda fn, **case: law_allreduce_sums(fn, kind=kind, **case), _allreduce_cases(min_size_k=ring),
            _case_words),
        Law(f'every transfer goes through send, and each device sends the bytes of the {kind} formula'
            + (' (a ring to the right or to the left)' if ring else ''),
            lambda fn, **case: law_bytes_match_the_formula(fn, kind=kind, **case), BYTES_CASES, _bytes_words),
        Law('bad input refused before any copy', law_refuses_bad_input, [dict(bad=b) for b in BAD_INPUTS],
            lambda bad: f'bad input: {bad}'),
    ] + ([Law('fewer elements than devices refused', law_ring_refuses_fewer_elements_than_devices,
              [dict(k=k) for k in range(2, 9)], lambda k: f'{_n(k - 1, "element")} on {k} devices')] if ring else [])


@lesson('helpers.comm.copy_to', hint='one line: x.copyto(...)')
def check_copy_to():
    """Check your ``copy_to(x, to)`` (notebook 04): a new array on a device, or written into an array."""
    return [Law('copy_to(x, device) makes a copy there; copy_to(x, array) writes into the array', law_copy_to,
                [dict(shape=s, dtype=d, into=i) for s in ((3,), (2, 3)) for d in ('float32', 'float64')
                 for i in (False, True)],
                lambda shape, dtype, into: f'x of shape {shape}, {dtype}, to {"an array" if into else "a device"}')]


@lesson('helpers.comm.allreduce_naive',
        hint='all send to device 0, which adds; then device 0 sends the sum into the others')
def check_allreduce_naive():
    """Check your ``allreduce_naive(arrays, send)`` (notebook 04): NumPy's sum on every device, identical
    bits, the naive bytes, bad input refused."""
    return _allreduce_laws('naive')


@lesson('helpers.comm.reduce_scatter', hint='k-1 steps; in step s device i sends chunk i - s to i + 1, which adds it')
def check_reduce_scatter():
    """Check your ``reduce_scatter(arrays, send)`` (notebook 04): device i ends with the sum of chunk i + 1."""
    return [
        Law('device i ends with the sum of chunk owner_chunk(i, k) = (i + 1) % k (k = 1-8, sizes equal to and not '
            'divisible by k, float32 and float64)', law_reduce_scatter_owns, _allreduce_cases(min_size_k=True),
            _case_words),
        Law('every transfer goes through send; each device sends all chunks but one',
            lambda fn, **case: law_bytes_match_the_formula(fn, kind='reduce_scatter', **case), BYTES_CASES,
            _bytes_words),
        Law('fewer elements than devices refused', law_ring_refuses_fewer_elements_than_devices,
            [dict(k=k) for k in range(2, 9)], lambda k: f'{_n(k - 1, "element")} on {k} devices'),
    ]


@lesson('helpers.comm.all_gather', hint="k-1 steps; in step s device i sends finished chunk i + 1 - s into i + 1's")
def check_all_gather():
    """Check your ``all_gather(arrays, send)`` (notebook 04): every device ends with every finished chunk."""
    return [
        Law('when device i holds finished chunk (i + 1) % k, every device ends with every finished chunk, bit for bit',
            law_all_gather_copies, _allreduce_cases(min_size_k=True), _case_words),
        Law('every transfer goes through send; each device sends all chunks but one',
            lambda fn, **case: law_bytes_match_the_formula(fn, kind='all_gather', **case), BYTES_CASES,
            _bytes_words),
    ]


@lesson('helpers.comm.allreduce_ring', hint='a reduce-scatter, then an all-gather, both with send')
def check_allreduce_ring():
    """Check your ``allreduce_ring(arrays, send)`` (notebook 04): NumPy's sum on every device, identical
    bits, the ring's bytes, bad input refused; when it goes wrong, its replay shows where."""
    return _allreduce_laws('ring')


@lesson('helpers.comm.allreduce', hint='the ring if k >= 2 and size >= RING_MIN_ELEMENTS[device type], else naive')
def check_allreduce():
    """Check your ``allreduce(arrays, send)`` (notebook 04): it sums, and picks the algorithm by size."""
    return [
        Law('picks the ring from RING_MIN_ELEMENTS on (k >= 2), the naive algorithm otherwise, and sums',
            law_dispatch, DISPATCH_CASES,
            lambda k, size, threshold, ring: f'{_n(k, "device")}, {size} elements, RING_MIN_ELEMENTS["cpu"] = '
                                             f'{threshold}'),
        Law('in place, every device ends with NumPy\'s sum, identical bits on every device',
            law_allreduce_sums, _allreduce_cases(), _case_words),
    ]
