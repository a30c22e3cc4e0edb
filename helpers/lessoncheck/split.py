"""The laws and checks of :mod:`helpers.split` (notebook 03): shard sizes, bounds and shards as Gluon's
``split_and_load`` cuts them, weighted shards each within one example of their share, labels with their
examples. ``tests/test_split.py`` calls the same laws on the lessons of ``helpers``.
"""
import numpy as np
from mxnet import gluon, nd

from helpers.lessoncheck.machinery import Broken, CPU, Law, _n, _refuses, lesson

__all__ = ['check_shard_sizes', 'check_shard_bounds', 'check_split_and_load', 'check_split_batch',
           'law_split_like_gluon', 'WEIGHTED_CASES', 'law_sizes_near_shares', 'law_sizes_equal_weights_like_gluon',
           'SIZE_EXAMPLES', 'law_sizes_examples', 'law_bounds_contiguous', 'law_bounds_equal_weights_like_gluon',
           'law_weighted_split', 'LABEL_CASES', 'law_labels_follow_examples']


def _batch(n, features=3):
    """A batch whose row i holds i * features, ..., i * features + features - 1."""
    return nd.array(np.arange(n * features, dtype=np.float32).reshape(n, features))


def _rows(shard, features=3):
    return (shard.asnumpy()[:, 0] / features).astype(int).tolist()


def _uneven_sizes(n, k):
    q, r = divmod(n, k)
    return [q + 1] * r + [q] * (k - r)


def _split_why(n, k, got_sizes):
    dropped = n - sum(got_sizes)
    if dropped > 0:
        rest = ' (the remainder of {} ÷ {})'.format(n, k) if dropped == n % k else ''
        return f'your shards hold {sum(got_sizes)} of the {n} examples: {dropped} example(s){rest} were dropped'
    if dropped < 0:
        return f'your shards hold {sum(got_sizes)} rows for {n} examples: some examples are in two shards'
    return None


def law_split_like_gluon(split_and_load, n, k):
    """Notebook 03: the same shards as ``gluon.utils.split_and_load(..., even_split=False)`` -- and,
    when k divides n, as its default even split -- on the same devices; where some device would get
    no example (n < k), a ValueError that says so."""
    data, devices = _batch(n), CPU[:k]
    if n < k:
        if not _refuses(lambda: split_and_load(data, devices), ValueError, 'no example'):
            raise Broken(f'a batch of {n} on {k} devices must be refused: a device would get no example',
                         expected='ValueError (the guard line checks.batch says: "... would get no example")',
                         got='no ValueError', why='keep the guard line `checks.batch(...)` first in the function')
        return
    ours = split_and_load(data, devices)
    for even in ([False, True] if n % k == 0 else [False]):
        theirs = gluon.utils.split_and_load(data, devices, even_split=even)
        want = '; '.join(f'rows {_rows(s)} on {s.context}' for s in theirs)
        if not isinstance(ours, (list, tuple)) or len(ours) != k:
            raise Broken(f'split_and_load must return a list of {k} shards', expected=want,
                         got=f'{type(ours).__name__} of length {len(ours) if hasattr(ours, "__len__") else "?"}')
        got = '; '.join(f'rows {_rows(s)} on {s.context}' for s in ours)
        for i, (a, b) in enumerate(zip(ours, theirs)):
            if a.context != b.context or a.shape != b.shape or not np.array_equal(a.asnumpy(), b.asnumpy()):
                raise Broken(f'shard {i} differs from Gluon\'s split_and_load(even_split={even})',
                             expected=want, got=got, why=_split_why(n, k, [len(s) for s in ours]) or (
                                 f'shard {i} should be on {b.context}' if a.context != b.context else
                                 'each shard is the next contiguous run of rows, in order'))


def _weighted_cases(count=40, seed=2024):
    rng = np.random.default_rng(seed)
    cases = []
    for _ in range(count):
        w = rng.integers(0, 6, rng.integers(1, 7)).tolist()
        if sum(w) == 0:
            w[-1] = 1
        cases.append(dict(n=int(rng.integers(0, 61)), weights=w))
    return sorted(cases, key=lambda c: (c['n'], len(c['weights'])))


WEIGHTED_CASES = _weighted_cases()


def _near_shares(n, weights, sizes):
    """Why ``sizes`` are not a split of n in proportion to weights, each less than one example from
    its share (or None)."""
    k = len(weights)
    if len(sizes) != k:
        return f'{len(sizes)} sizes for {k} devices'
    if min(sizes) < 0 or sum(sizes) != n:
        return f'the sizes add up to {sum(sizes)}, not {n}' if sum(sizes) != n else 'a size is negative'
    ideal = [n * w / sum(weights) for w in weights]
    for i, (s, x) in enumerate(zip(sizes, ideal)):
        if not abs(s - x) < 1:
            return f'device {i} gets {s} examples, its fair share is {x:.2f}: a whole example or more away'
    return None


def law_sizes_near_shares(shard_sizes, n, weights):
    """Notebook 03: the sizes add up to n, none negative, each less than one example from its fair
    share n * w_i / sum(w)."""
    sizes = shard_sizes(n, len(weights), weights)
    why = _near_shares(n, weights, list(sizes))
    if why:
        raise Broken('the shard sizes are not the largest-remainder split',
                     expected=f'sizes adding up to {n}, each within one example of n * w_i / sum(w)',
                     got=str(list(sizes)), why=why)


def law_sizes_equal_weights_like_gluon(shard_sizes, n, k, scale):
    """Notebook 03: equal weights (any scale, None included) give Gluon's uneven sizes: the first
    n mod k devices one example more."""
    want = _uneven_sizes(n, k)
    for weights in (None, [scale] * k):
        got = shard_sizes(n, k, weights)
        if list(got) != want:
            raise Broken(f'{_n(n, "example")} on {_n(k, "device")}, weights {weights}', expected=str(want),
                         got=str(list(got)),
                         why='with equal weights every remainder is equal: the ties go to the lowest devices')


SIZE_EXAMPLES = [dict(n=10, weights=[3, 1], sizes=[8, 2]), dict(n=256, weights=[3, 1], sizes=[192, 64]),
                 dict(n=10, weights=[0.1, 0.2, 0.7], sizes=[1, 2, 7]),
                 dict(n=10, weights=np.array([2, 2, 1]), sizes=[4, 4, 2])]


def law_sizes_examples(shard_sizes, n, weights, sizes):
    """Notebook 03's worked examples of the largest-remainder rule (a tie goes to the lower device)."""
    got = shard_sizes(n, len(weights), weights)
    if list(got) != sizes:
        raise Broken(f'shard_sizes({n}, {len(weights)}, {list(weights)})', expected=str(sizes), got=str(list(got)),
                     why='whole parts first, then one example each to the largest remainders, ties to the lower device')


def law_bounds_contiguous(shard_bounds, n, weights):
    """Notebook 03: the slices start at 0, each begins where the last ended, the last ends at n, and
    their sizes are a fair split (each less than one example from its share)."""
    bounds = [tuple(b) for b in shard_bounds(n, len(weights), weights)]
    want = 'slices (0, a), (a, b), ..., (y, n) of fair sizes'
    if not bounds or bounds[0][0] != 0 or bounds[-1][1] != n or any(a[1] != b[0] for a, b in zip(bounds, bounds[1:])):
        raise Broken(f'shard_bounds({n}, {len(weights)}, {weights}) are not contiguous from 0 to {n}',
                     expected=want, got=str(bounds))
    why = _near_shares(n, weights, [e - b for b, e in bounds])
    if why:
        raise Broken(f'shard_bounds({n}, {len(weights)}, {weights}) cut unfair slices', expected=want,
                     got=str(bounds), why=why + ' (shard_bounds takes its sizes from shard_sizes)')


def law_bounds_equal_weights_like_gluon(shard_bounds, n, k):
    """Notebook 03: with equal weights, the slices of Gluon's uneven split."""
    ends = np.cumsum(_uneven_sizes(n, k)).tolist()
    want = list(zip([0] + ends[:-1], ends))
    got = [tuple(b) for b in shard_bounds(n, k)]
    if got != want:
        raise Broken(f'shard_bounds({n}, {k})', expected=str(want), got=str(got),
                     why='the running sums of the sizes are the boundaries')


def law_weighted_split(split_and_load, n, weights):
    """Notebook 03: a weighted split gives one shard per device, on that device, in order: concatenated
    they are the batch, each less than one example from its share; where the lesson's rule leaves a
    device without an example, a ValueError instead."""
    from helpers.split import shard_sizes
    k = len(weights)
    if n == 0:                                   # nothing to split (shard_sizes' laws cover n = 0)
        return
    if 0 in shard_sizes(n, k, weights):
        data = _batch(n)
        if not _refuses(lambda: split_and_load(data, CPU[:k], weights), ValueError):
            raise Broken(f'{n} examples with weights {weights}: a device would get no example, so it must '
                         'be refused', expected='ValueError', got='no ValueError',
                         why='keep the guard line `checks.batch(...)` first in the function')
        return
    data = _batch(n)
    shards = split_and_load(data, CPU[:k], weights)
    got = '; '.join(f'rows {_rows(s)} on {s.context}' for s in shards)
    if [s.context for s in shards] != CPU[:k]:
        raise Broken('the shards are not on the devices, in order', expected=str(CPU[:k]),
                     got=str([s.context for s in shards]))
    if not np.array_equal(np.concatenate([s.asnumpy() for s in shards]), data.asnumpy()):
        raise Broken('the shards, put back together, are not the batch', expected=f'rows 0 to {n - 1}, in order',
                     got=got, why=_split_why(n, k, [len(s) for s in shards]))
    why = _near_shares(n, weights, [len(s) for s in shards])
    if why:
        raise Broken('the shards are not in proportion to the weights', got=got, why=why)


LABEL_CASES = [dict(n=n, k=k, weights=w) for n, k, w in
               ((1, 1, None), (3, 2, None), (7, 3, None), (7, 3, [3, 1, 1]), (10, 4, None), (33, 8, None),
                (20, 2, [3, 1]))]


def law_labels_follow_examples(split_batch, n, k, weights):
    """Notebook 03: every label goes to the device of its example, in the same place; X and y of
    different lengths are refused with a ValueError."""
    X, y = _batch(n), nd.arange(n)
    Xs, ys = split_batch(X, y, CPU[:k], weights)
    if len(Xs) != k or len(ys) != k:
        raise Broken(f'split_batch must return one shard of X and one of y per device ({k})',
                     got=f'{len(Xs)} and {len(ys)} shards')
    for i, (a, b) in enumerate(zip(Xs, ys)):
        if a.context != b.context or a.context != CPU[i] or _rows(a) != b.asnumpy().astype(int).tolist():
            raise Broken(f'shard {i}: the labels are not those of its examples',
                         expected=f'examples {_rows(a)} with labels {_rows(a)}, both on {CPU[i]}',
                         got=f'examples {_rows(a)} on {a.context}, labels {b.asnumpy().astype(int).tolist()} '
                             f'on {b.context}', why='cut X and y at the same places (split_and_load both)')
    if not _refuses(lambda: split_batch(X, y[:-1] if n > 1 else nd.arange(2), CPU[:k], weights), ValueError):
        raise Broken('X and y of different lengths must be refused', expected='ValueError', got='no ValueError',
                     why='keep the guard line `checks.labels(X, y)`')


@lesson('helpers.split.shard_sizes',
        hint='each device: the whole part of n * w / sum(w); the rest to the largest remainders')
def check_shard_sizes():
    """Check your ``shard_sizes(n, k, weights)`` (notebook 03): equal weights give Gluon's uneven
    sizes; weighted sizes add up to n, each less than one example from its share; the worked examples."""
    return [
        Law("equal weights (None, 1, 2.5, 7, 0.1) give Gluon's uneven sizes: the first n mod k devices one more",
            law_sizes_equal_weights_like_gluon,
            [dict(n=n, k=k, scale=s) for n in range(0, 61, 3) for k in range(1, 9)
             for s in (1, 2.5, np.int64(7), np.float32(0.1))],
            lambda n, k, scale: f'n = {n}, k = {k}, weights {scale}'),
        Law('weighted sizes add up to n, none negative, each less than one example from n * w / sum(w)',
            law_sizes_near_shares, WEIGHTED_CASES, lambda n, weights: f'n = {n}, weights {weights}'),
        Law("the lesson's examples: ties go to the lower device", law_sizes_examples, SIZE_EXAMPLES,
            lambda n, weights, sizes: f'n = {n}, weights {list(weights)}'),
    ]


@lesson('helpers.split.shard_bounds', hint='the running sums of shard_sizes(n, k, weights) are where the slices end')
def check_shard_bounds():
    """Check your ``shard_bounds(n, k, weights)`` (notebook 03): contiguous slices from 0 to n, with
    equal weights those of Gluon's uneven split."""
    return [
        Law("with equal weights, the slices of Gluon's uneven split", law_bounds_equal_weights_like_gluon,
            [dict(n=n, k=k) for n in range(0, 41) for k in range(1, 9)], lambda n, k: f'n = {n}, k = {k}'),
        Law('weighted: contiguous from 0 to n, each slice less than one example from its share',
            law_bounds_contiguous, WEIGHTED_CASES, lambda n, weights: f'n = {n}, weights {weights}'),
    ]


@lesson('helpers.split.split_and_load',
        hint='slice at shard_bounds(...), copy each slice to its device (as_in_context)')
def check_split_and_load():
    """Check your ``split_and_load(data, devices, weights)`` (notebook 03): the same shards as Gluon's
    on every batch size 1-40 and 1-8 devices; weighted shards in order, fair, concatenating to the batch."""
    return [
        Law("the same shards as gluon.utils.split_and_load (even_split=False; and True where k divides n), "
            "on the same devices; a batch smaller than the devices refused", law_split_like_gluon,
            [dict(n=n, k=k) for n in range(1, 41) for k in range(1, 9)],
            lambda n, k: f'a batch of {n} example{"s" * (n > 1)} (rows 0 to {n - 1}) on {k} device{"s" * (k > 1)}'),
        Law('weighted: one shard per device, in order, together the batch, each within one example of its share',
            law_weighted_split, WEIGHTED_CASES, lambda n, weights: f'a batch of {n} examples, weights {weights}'),
    ]


@lesson('helpers.split.split_batch', hint='cut X and y with the same split_and_load')
def check_split_batch():
    """Check your ``split_batch(X, y, devices, weights)`` (notebook 03): every label with its example,
    on its device; X and y of different lengths refused."""
    return [Law('every label goes with its example, to the same device; different lengths refused',
                law_labels_follow_examples, LABEL_CASES,
                lambda n, k, weights: f'{_n(n, "example")} on {_n(k, "device")}, weights {weights}')]
