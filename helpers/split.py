"""Partitioning a batch across devices: ``split_and_load`` written by hand.

Derived in notebook 03 (split_and_load by hand); used by every training notebook (05 on).

Three kinds of split, all cutting the batch into *contiguous* shards, in order, so that
concatenating the shards gives the batch back and every example lands in exactly one shard:

- even (``even_split=True``): every shard has ``n / k`` examples; ``n`` must be divisible by ``k``.
- uneven (``even_split=False``): the first ``n % k`` shards get one example more than the others,
  exactly as :func:`mxnet.gluon.utils.split_and_load` does.
- weighted (``weights=[w_0, ..., w_{k-1}]``, the ``work_load_list`` idea of MXNet's old Module
  API): shard ``i`` gets about ``n * w_i / sum(w)`` examples, for devices of unequal speed.

Rounding rule of the weighted split (largest remainder, a.k.a. Hamilton's method): every shard
first gets ``floor(n * w_i / W)`` examples; the ``r`` examples still left over go one each to the
``r`` shards with the largest fractional parts ``n * w_i / W - floor(...)``, ties going to the
lower index. The fractions are computed exactly (``fractions.Fraction``), so the result does not
depend on floating-point rounding. With equal weights this gives exactly the uneven split above.
With ``even_split=True`` a weighted split must be exact (every ``n * w_i / W`` a whole number).

MXNet NDArrays (legacy shape semantics) cannot have a zero-length axis, so a split that would
leave some device with no example raises ``ValueError`` instead of handing it an empty shard.
"""
from fractions import Fraction
import numbers

import numpy as np
import mxnet as mx

__all__ = ['shard_sizes', 'shard_bounds', 'split_and_load', 'split_batch']


def _check_k(k):
    if isinstance(k, bool) or not isinstance(k, numbers.Integral):
        raise ValueError(f'the number of parts must be a whole number, got {k!r}')
    if k < 1:
        raise ValueError(f'cannot split into {k} parts: need at least 1 part (one per device)')


def _check_weights(weights, k):
    try:
        weights = list(weights)
    except TypeError:
        raise ValueError(f'weights must be a list of numbers, one per device, got {weights!r}') from None
    if len(weights) != k:
        raise ValueError(f'got {len(weights)} weights for {k} parts: need exactly one weight per device')
    fracs = []
    for i, w in enumerate(weights):
        if isinstance(w, bool) or not isinstance(w, numbers.Real) or not np.isfinite(float(w)):
            raise ValueError(f'weight {i} is {w!r}: weights must be finite numbers')
        if w < 0:
            raise ValueError(f'weight {i} is negative ({w!r}): weights must be >= 0')
        fracs.append(Fraction(w) if not isinstance(w, float) else Fraction(w).limit_denominator(10**9))
    if sum(fracs) == 0:
        raise ValueError(f'all weights are zero ({weights!r}): at least one device must get work')
    return fracs


def shard_sizes(n, k, even_split=True, weights=None):
    """Number of examples in each of the ``k`` shards of a batch of ``n`` (notebook 03).

    ``weights=None``: the sizes of ``gluon.utils.split_and_load`` (first ``n % k`` shards one
    larger; with ``even_split=True`` ``n`` must be divisible by ``k``). ``weights``: proportional
    sizes, rounded by the largest-remainder rule in the module docstring. The sizes always add up
    to ``n``; a size may be 0 (:func:`split_and_load` refuses that, this function only counts).
    """
    _check_k(k)
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 0:
        raise ValueError(f'the number of examples must be a whole number >= 0, got {n!r}')
    if weights is None:
        if even_split and n % k != 0:
            raise ValueError(
                f'a batch of {n} examples cannot be split evenly into {k} parts: use a batch size '
                f'that is a multiple of {k}, or even_split=False for shards of unequal size')
        q, r = divmod(n, k)
        return [q + 1] * r + [q] * (k - r)
    fracs = _check_weights(weights, k)
    total = sum(fracs)
    ideal = [n * w / total for w in fracs]                  # exact rationals
    sizes = [int(x) for x in ideal]                         # floor (all >= 0)
    if even_split and sizes != ideal:
        raise ValueError(
            f'a batch of {n} examples cannot be split exactly in proportion to weights {list(weights)!r} '
            f'(ideal sizes {[float(x) for x in ideal]}): use even_split=False to round '
            f'(largest remainder), or choose a batch size that divides exactly')
    left = n - sum(sizes)
    by_remainder = sorted(range(k), key=lambda i: (-(ideal[i] - sizes[i]), i))
    for i in by_remainder[:left]:
        sizes[i] += 1
    return sizes


def shard_bounds(n, k, even_split=True, weights=None):
    """``[(begin, end), ...]``: the slice of the batch that each of the ``k`` shards gets (notebook 03).

    Contiguous and in order: ``bounds[0][0] == 0``, ``bounds[i][1] == bounds[i+1][0]``,
    ``bounds[-1][1] == n``.
    """
    sizes = shard_sizes(n, k, even_split, weights)
    ends = np.cumsum(sizes).tolist()
    return [(end - size, end) for size, end in zip(sizes, ends)]


def split_and_load(data, ctx_list, batch_axis=0, even_split=True, weights=None):
    """Split ``data`` along ``batch_axis`` into one shard per context and copy each shard to its
    context (notebook 03). Returns a list of NDArrays, ``result[i]`` on ``ctx_list[i]``.

    With ``weights=None`` the shards are those of :func:`mxnet.gluon.utils.split_and_load`.
    ``weights`` (one non-negative number per context, not all zero) splits in proportion, e.g.
    ``[3, 1]`` gives the first device three quarters of the batch. NumPy input is converted to an
    NDArray first, as Gluon does. Raises ``ValueError`` for an empty ``ctx_list``, a bad
    ``batch_axis``, a batch that cannot be split as asked, bad weights, or a shard that would be
    empty (more devices than examples).
    """
    ctx_list = list(ctx_list)
    if not ctx_list:
        raise ValueError('cannot split into 0 parts: ctx_list is empty (need at least 1 device)')
    if not isinstance(data, mx.nd.NDArray):
        data = mx.nd.array(data, ctx=ctx_list[0])
    if not -data.ndim <= batch_axis < data.ndim:
        raise ValueError(f'batch_axis {batch_axis} does not exist for data of shape {data.shape}')
    batch_axis %= data.ndim
    n, k = data.shape[batch_axis], len(ctx_list)
    if k == 1:                                   # as Gluon: the whole batch, whatever even_split says
        shard_sizes(n, 1, even_split, weights)   # (still validates the weights)
        return [data.as_in_context(ctx_list[0])]
    bounds = shard_bounds(n, k, even_split, weights)
    sizes = [end - begin for begin, end in bounds]
    if 0 in sizes:
        raise ValueError(
            f'cannot give each of {k} devices a shard of a batch of {n} examples with sizes {sizes}: '
            f'a device would get no example (MXNet arrays cannot be empty). Use a larger batch, '
            f'fewer devices, or no zero weight')
    shards = []
    for (begin, end), ctx in zip(bounds, ctx_list):
        if batch_axis == 0:
            shard = data[begin:end]              # a view: no copy until as_in_context
        else:
            shard = mx.nd.slice_axis(data, axis=batch_axis, begin=begin, end=end)
        shards.append(shard.as_in_context(ctx))
    return shards


def split_batch(X, y, ctx_list, weights=None):
    """Split examples ``X`` and labels ``y`` the same way, one shard of each per context
    (notebook 03; d2l's ``split_batch`` plus ``weights``). Returns ``(X_shards, y_shards)``.

    Raises ``ValueError`` if ``X`` and ``y`` do not have the same number of examples. Unlike d2l's,
    a batch size not divisible by the number of devices is fine (``even_split=False``: the first
    shards get one example more), so the smaller last batch of an epoch needs no special case.
    """
    nx, ny = len(X), len(y)
    if nx != ny:
        raise ValueError(f'X and y must have the same first dimension (one label per example), '
                         f'got {nx} examples and {ny} labels')
    return (split_and_load(X, ctx_list, even_split=False, weights=weights),
            split_and_load(y, ctx_list, even_split=False, weights=weights))
