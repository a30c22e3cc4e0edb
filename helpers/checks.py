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

Importing this module imports neither MXNet nor NumPy: the checks of numbers (:func:`whole`,
:func:`positive`) serve processes that must not start MXNet (the node shim of a distributed job,
helpers/job.py); the checks of arrays and devices import MXNet when they are called.
"""
import math
import numbers

__all__ = ['whole', 'positive', 'devices', 'arrays', 'weights', 'shards', 'batch', 'labels',
           'cost_model', 'replicas', 'bucket_plan', 'buckets', 'bucket_params',
           'flat_replicas']


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
    import mxnet as mx
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
    import numpy as np
    import mxnet as mx
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
    import mxnet as mx
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
    import numpy as np
    if np.any(np.asarray(k, dtype=float) < 1):
        raise ValueError(f'k must be >= 1 devices, got {k}')
    for value, name in ((nbytes, 'nbytes'), (alpha, 'alpha'), (gamma, 'gamma')):
        if not value >= 0:
            raise ValueError(f'{name} must be >= 0, got {value}')
    positive(bandwidth, 'bandwidth')


def replicas(device_params, devs):
    """One list of parameters per device, replica ``i`` living on ``devs[i]`` (notebook 05)."""
    import mxnet as mx
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


def bucket_plan(sizes, bucket_bytes, itemsize):
    """The arguments of ``plan_buckets`` (notebook 10): a non-empty list of gradient sizes, each a
    whole number of elements >= 1, and ``bucket_bytes`` and ``itemsize`` whole numbers >= 1."""
    import mxnet as mx
    if isinstance(sizes, (str, bytes, mx.nd.NDArray)) or not hasattr(sizes, '__len__'):
        raise TypeError(f'sizes must be a list of gradient sizes (elements), got {type(sizes).__name__}')
    if len(sizes) == 0:
        raise ValueError('sizes is empty: need at least one gradient to put in a bucket')
    for i, size in enumerate(sizes):
        whole(size, f'sizes[{i}]', 1)
    whole(bucket_bytes, 'bucket_bytes', 1)
    whole(itemsize, 'itemsize', 1)


def buckets(grads, bucket_bytes):
    """The input of ``allreduce_bucketed`` (notebook 10); returns the bytes per element.

    ``grads``: a non-empty list with one entry per gradient, each what an allreduce takes (a list
    of NDArrays, one per device: :func:`arrays`), every gradient on the same devices in the same
    order and all of one dtype (a bucket is one flat array); ``bucket_bytes``: a whole number >= 1.
    Nothing is copied before this passes.
    """
    import numpy as np
    import mxnet as mx
    if isinstance(grads, mx.nd.NDArray) or not isinstance(grads, (list, tuple)):
        raise TypeError('grads must be a list with one entry per gradient, each a list of NDArrays '
                        f'(one per device), got {type(grads).__name__}')
    if not grads:
        raise ValueError('grads is empty: need at least one gradient to sum')
    whole(bucket_bytes, 'bucket_bytes', 1)
    for i, g in enumerate(grads):
        try:
            arrays(g)
        except (TypeError, ValueError) as e:
            raise type(e)(f'grads[{i}]: {e}') from None
    first, dtype = [a.context for a in grads[0]], np.dtype(grads[0][0].dtype)
    for i, g in enumerate(grads[1:], 1):
        if [a.context for a in g] != first:
            raise ValueError(f'grads[{i}] lives on {[a.context for a in g]}, grads[0] on {first}: every '
                             'gradient needs one array per device, on the same devices in the same order')
        if np.dtype(g[0].dtype) != dtype:
            raise TypeError(f'grads mixes dtypes: grads[0] is {dtype}, grads[{i}] is {np.dtype(g[0].dtype)}; '
                            'a bucket is one flat array of one dtype: bucket each dtype apart')
    return dtype.itemsize


def bucket_params(params, bucket_bytes):
    """The input of ``bucket_gradients`` (notebook 10); returns the bytes per element: a non-empty
    list of Gluon parameters, initialised on the same devices, with gradients (``grad_req`` not
    ``'null'``), all of one dtype, and ``bucket_bytes`` a whole number >= 1."""
    import numpy as np
    import mxnet as mx
    if isinstance(params, (mx.gluon.Parameter, mx.gluon.ParameterDict)) or not isinstance(params, (list, tuple)):
        raise TypeError('params must be a list of Gluon parameters, e.g. '
                        f'list(net.collect_params().values()), got {type(params).__name__}')
    if not params:
        raise ValueError('params is empty: need at least one parameter to bucket')
    whole(bucket_bytes, 'bucket_bytes', 1)
    for i, p in enumerate(params):
        if not isinstance(p, mx.gluon.Parameter):
            raise TypeError(f'params[{i}] is a {type(p).__name__}, not a Gluon Parameter')
        if p._data is None:
            raise ValueError(f'params[{i}] ({p.name}) is not initialised: initialise the net on its devices first')
        if p.grad_req == 'null':
            raise ValueError(f"params[{i}] ({p.name}) has grad_req='null': it has no gradient to bucket "
                             "(leave it out, e.g. BatchNorm's running statistics)")
    devs, dtype = params[0].list_ctx(), np.dtype(params[0].dtype)
    for i, p in enumerate(params[1:], 1):
        if p.list_ctx() != devs:
            raise ValueError(f'params[{i}] ({p.name}) lives on {p.list_ctx()}, params[0] on {devs}: '
                             'a bucket holds one flat array per device')
        if np.dtype(p.dtype) != dtype:
            raise TypeError(f'params mixes dtypes: params[0] is {dtype}, params[{i}] is {np.dtype(p.dtype)}; '
                            'a bucket is one flat array of one dtype: bucket each dtype apart')
    return dtype.itemsize
def flat_replicas(reps, devs, updaters):
    """The input of notebook 11's steps: one flat replica per device, living there, all of one size
    and dtype, and one optimizer updater per device. Returns ``k``. A refused call changes nothing."""
    import numpy as np
    import mxnet as mx
    devs = devices(devs)
    if isinstance(reps, mx.nd.NDArray) or not isinstance(reps, (list, tuple)):
        raise TypeError(f'replicas must be a list of flat replicas, one per device, got {type(reps).__name__}')
    if not isinstance(updaters, (list, tuple)):
        raise TypeError(f'updaters must be a list, one optimizer updater per device, got {type(updaters).__name__}')
    if not len(reps) == len(devs) == len(updaters):
        raise ValueError(f'got {len(reps)} replica(s), {len(devs)} device(s) and {len(updaters)} updater(s): '
                         'need one of each per device')
    for i, (r, d, u) in enumerate(zip(reps, devs, updaters)):
        if not (isinstance(r, tuple) and len(r) == 3 and all(isinstance(a, mx.nd.NDArray) for a in r[:2])):
            raise TypeError(f'replica {i} must be (weights, grads, params) with flat NDArrays, as '
                            'helpers.sharding.make_replicas builds it')
        if not callable(u):
            raise TypeError(f'updater {i} must be callable, e.g. mx.optimizer.get_updater(opt), got {u!r}')
        weights, grads = r[0], r[1]
        if weights.ndim != 1 or grads.shape != weights.shape or weights.context != d or grads.context != d:
            raise ValueError(f'replica {i}: weights {weights.shape} on {weights.context} and grads {grads.shape} '
                             f'on {grads.context} must be flat arrays of one shape on {d}')
        if weights.shape != reps[0][0].shape or weights.dtype != reps[0][0].dtype:
            raise ValueError(f'replica {i} has {weights.size} {np.dtype(weights.dtype)} weights, replica 0 '
                             f'has {reps[0][0].size} {np.dtype(reps[0][0].dtype)}: every replica must be a copy '
                             'of one model')
    if reps[0][0].size < len(devs):
        raise ValueError(f'the ring cuts the weights into one chunk per device: {reps[0][0].size} weights '
                         f'for {len(devs)} devices')
    return len(devs)
