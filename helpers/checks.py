"""Input checks for every public helper, in one place and with one policy (introduced in notebook 00,
used by all notebooks).

The functions a notebook writes "by hand" (split_and_load, allreduce, the training step, ...) are
kept short: the algorithm only, with at most one line that calls into this module. Everything that
can go wrong with their input is checked here, before any work is done, with one policy:

* ``TypeError`` when a value has the wrong *type* (a string where a number belongs, a single
  context where a list of contexts belongs, a NumPy array where an NDArray belongs);
* ``ValueError`` when the type is right but the *value* is not (0 devices, a negative weight,
  arrays of different shapes, more devices than examples);
* whole numbers may be Python ``int`` or NumPy integers (``np.int64(2)`` is accepted wherever
  ``2`` is); ``bool`` is refused, because ``True`` as a count is almost always a mistake.

Every message names the argument, what was given and, where there is one, the fix.
"""
import math
import numbers

import numpy as np
import mxnet as mx

__all__ = ['whole', 'positive', 'devices', 'arrays', 'weights', 'shards', 'batch', 'labels',
           'cost_model', 'replicas']


def whole(value, name, minimum=0):
    """``int(value)`` if ``value`` is a whole number >= ``minimum`` (notebook 00's policy, used by
    every notebook): ``TypeError`` for a non-integer type, ``ValueError`` below ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f'{name} must be a whole number, got {value!r} ({type(value).__name__})')
    if value < minimum:
        raise ValueError(f'{name} must be at least {minimum}, got {value}')
    return int(value)


def positive(value, name):
    """``float(value)`` if ``value`` is a finite number > 0 (learning rates, timeouts; notebook 05):
    ``TypeError`` for a non-number, ``ValueError`` for 0, a negative number, inf or nan."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f'{name} must be a number, got {value!r} ({type(value).__name__})')
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f'{name} must be a positive finite number, got {value!r}')
    return float(value)


def devices(devs, name='devices'):
    """``devs`` as a list of distinct ``mx.Context`` (notebook 00): ``TypeError`` for a single
    context or a non-context entry, ``ValueError`` for an empty list or a repeated device."""
    if isinstance(devs, mx.Context):
        raise TypeError(f'{name} must be a list of contexts, e.g. [{devs}], got the single context {devs}')
    try:
        devs = list(devs)
    except TypeError:
        raise TypeError(f'{name} must be a list of contexts, got {devs!r}') from None
    if not devs:
        raise ValueError(f'{name} is empty: need at least one device')
    for d in devs:
        if not isinstance(d, mx.Context):
            raise TypeError(f'{name} must hold mx.Context objects such as mx.cpu(0), got {d!r}')
    if len(set(devs)) != len(devs):    # Gluon finds a parameter's copy by device: a repeat is one device
        raise ValueError(f'{name} must be distinct, got {devs}: a device listed twice is one device to '
                         'Gluon and does not test multi-device code (notebook 06); for stand-ins on one '
                         f'machine use distinct ones, e.g. MXDP_DEVICES=cpu:{len(devs)}')
    return devs


def arrays(arrs, min_size=1):
    """Check the input of an allreduce (notebook 04) and return ``k``, the number of arrays.

    A list (not a single NDArray) of at least one NDArray, all of one shape and dtype, with at least
    ``min_size`` elements (MXNet cannot copy a zero-size array; the ring needs one element per
    chunk). Nothing is copied before this passes, so a refused call leaves every array untouched.
    """
    if isinstance(arrs, mx.nd.NDArray) or not isinstance(arrs, (list, tuple)):
        raise TypeError('allreduce takes a list of NDArrays, one per device, '
                        f'got {type(arrs).__name__}')
    if not arrs:
        raise ValueError('allreduce of an empty list: need at least one array (one per device)')
    for i, a in enumerate(arrs):
        if not isinstance(a, mx.nd.NDArray):
            raise TypeError(f'allreduce takes NDArrays, but array {i} is a {type(a).__name__}')
    shape, dtype = arrs[0].shape, np.dtype(arrs[0].dtype)
    for i, a in enumerate(arrs[1:], 1):
        if a.shape != shape:
            raise ValueError(f'allreduce needs arrays of one shape: array 0 has shape {shape}, '
                             f'array {i} has shape {a.shape}')
        if np.dtype(a.dtype) != dtype:
            raise TypeError(f'allreduce needs arrays of one dtype: array 0 is {dtype}, '
                            f'array {i} is {np.dtype(a.dtype)}')
    if arrs[0].size == 0:
        raise ValueError(f'allreduce of empty arrays (shape {shape}): there is nothing to sum, '
                         'and MXNet cannot copy a zero-size array between devices')
    if arrs[0].size < min_size:
        raise ValueError(f'the ring cuts each array into one chunk per device: it needs at least '
                         f'{min_size} elements, got {arrs[0].size} (use allreduce_naive or allreduce)')
    return len(arrs)


def weights(ws, k):
    """The weights of a weighted split (notebook 03): ``k`` finite numbers >= 0, not all zero."""
    if isinstance(ws, (str, bytes)) or not hasattr(ws, '__len__'):
        raise TypeError(f'weights must be a list of numbers, one per device, got {ws!r}')
    if len(ws) != k:
        raise ValueError(f'got {len(ws)} weights for {k} devices: need exactly one weight per device')
    for i, w in enumerate(ws):
        if isinstance(w, bool) or not isinstance(w, numbers.Real):
            raise TypeError(f'weight {i} is {w!r}: weights must be numbers')
        if not math.isfinite(w) or w < 0:
            raise ValueError(f'weight {i} is {w!r}: weights must be finite and >= 0')
    if sum(ws) == 0:
        raise ValueError(f'all weights are zero ({list(ws)!r}): at least one device must get work')


def shards(n, k, ws):
    """The arguments of ``shard_sizes`` (notebook 03): ``n`` >= 0 examples, ``k`` >= 1 devices,
    ``ws`` None or valid weights."""
    whole(n, 'the number of examples', 0)
    whole(k, 'the number of devices', 1)
    if ws is not None:
        weights(ws, k)


def batch(data, devs, ws, shard_bounds):
    """What ``split_and_load`` cuts (notebook 03): an NDArray, a list of distinct devices, valid
    weights, and a cut that gives every device at least one example.

    The cut is the one ``shard_bounds(n, k, ws)`` makes: the caller passes its own function, so that
    a reader who edits notebook 03's ``shard_sizes`` or ``shard_bounds`` cell changes what is refused.
    MXNet cannot copy an empty array, and a device with nothing to do is almost always a bug.
    """
    if not isinstance(data, mx.nd.NDArray):
        raise TypeError(f'split_and_load cuts an NDArray, got {type(data).__name__} '
                        '(convert with mx.nd.array(...) first)')
    devs = devices(devs)
    n, k = len(data), len(devs)
    if ws is not None:
        weights(ws, k)
    sizes = [end - begin for begin, end in shard_bounds(n, k, ws)]
    if len(sizes) != k or sum(sizes) != n or min(sizes) < 0:
        raise ValueError(f'shard_bounds cut a batch of {n} for {k} devices into shards of {sizes}: '
                         f'need {k} shards, none negative, adding up to {n}')
    if 0 in sizes:
        raise ValueError(f'cannot give each of {k} devices a part of a batch of {n} '
                         f'example{"s" * (n != 1)}: the shard sizes would be {sizes}, and a device '
                         'would get no example. Use a larger batch or fewer devices, and give no '
                         'device a weight of 0')


def labels(X, y):
    """One label per example (notebook 03): ``len(X) == len(y)``, else ``ValueError``."""
    if len(X) != len(y):
        raise ValueError(f'X and y must have the same first dimension (one label per example), '
                         f'got {len(X)} examples and {len(y)} labels')


def cost_model(k, nbytes, alpha, bandwidth, gamma):
    """The arguments of an alpha-beta-gamma cost model (notebook 04): ``k`` >= 1 (a number or an
    array), ``nbytes``, ``alpha``, ``gamma`` >= 0 and ``bandwidth`` > 0."""
    if np.any(np.asarray(k, dtype=float) < 1):
        raise ValueError(f'k must be >= 1 devices, got {k}')
    for value, name in ((nbytes, 'nbytes'), (alpha, 'alpha'), (gamma, 'gamma')):
        if not value >= 0:
            raise ValueError(f'{name} must be >= 0, got {value}')
    positive(bandwidth, 'bandwidth')


def replicas(device_params, devs):
    """One list of parameters per device, replica ``i`` living on ``devs[i]`` (notebook 05)."""
    devs = devices(devs)
    if len(device_params) != len(devs):
        raise ValueError(f'got parameters for {len(device_params)} device(s) but {len(devs)} '
                         'device(s): need one replica per device')
    for i, (replica, d) in enumerate(zip(device_params, devs)):
        for j, p in enumerate(replica):
            if not isinstance(p, mx.nd.NDArray):
                raise TypeError(f'parameter {j} of replica {i} is a {type(p).__name__}, not an NDArray')
            if p.context != d:
                raise ValueError(f'parameter {j} of replica {i} lives on {p.context}, but replica '
                                 f"{i}'s data goes to {d}: replicate the parameters to each device first")
