"""The guards of the lessons' helpers (``helpers.LAYERS``; notebooks 03-10): splitting a batch, copies
and cost models, LeNet and its replicas, buckets of gradients.
"""
import collections.abc
import math
import numbers

from helpers.checks._kinds import (
    MAX_DEVICES, MAX_SECONDS, _is_bool, _is_mapping, _short, _unordered, arrays, context, devices, flag, function,
    ndarray, number, ordered, parameters, positive, whole)

__all__ = ['weights', 'shards', 'batch', 'copy', 'cost_model', 'devices_and_bytes', 'bytes_per_device', 'replica',
           'lenet', 'norm_layer', 'shard_bounds', 'bucket_plan', 'buckets', 'bucket_params', 'sends', 'link',
           'link_send']


# ---------------------------------------------------------------------- helpers.split (notebook 03)
def weights(ws, k):
    """The weights of a weighted split (notebook 03): ``k`` finite numbers >= 0, not all zero, in
    order (a list, a tuple, an array: a dict would give its keys, a set an order of its own)."""
    if _unordered(ws) or not isinstance(ws, collections.abc.Sized):
        raise TypeError(f'weights must be a list of numbers, one per device, got {ws!r}'
                        + (' (a dict: pass list(weights.values()) in the order of the devices)'
                           if _is_mapping(ws) else ''))
    for i, w in enumerate(ws):
        if _is_bool(w) or not isinstance(w, numbers.Real):
            raise TypeError(f'weight {i} is {w!r}: weights must be numbers')
    if len(ws) != k:
        raise ValueError(f'got {len(ws)} weights for {k} devices: need exactly one weight per device')
    for i, w in enumerate(ws):
        if not math.isfinite(w) or w < 0:
            raise ValueError(f'weight {i} is {w!r}: weights must be finite and >= 0')
    if sum(ws) == 0:
        raise ValueError(f'all weights are zero ({list(ws)!r}): at least one device must get work')


def shards(n, k, ws):
    """The arguments of ``shard_sizes`` (notebook 03): ``n`` >= 0 examples, ``k`` >= 1 devices,
    ``ws`` None or valid weights."""
    whole(n, 'the number of examples', 0)
    whole(k, 'the number of devices', 1, MAX_DEVICES)
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


# ---------------------------------------------------- helpers.comm, helpers.costmodel (notebook 04)
def copy(x, to):
    """The arguments of ``copy_to`` (notebook 04): an NDArray, and a device of this machine or an
    NDArray of the same shape to write into."""
    import mxnet as mx
    ndarray(x, 'x (what copy_to sends)')
    if isinstance(to, mx.nd.NDArray):
        if to.shape != x.shape:
            raise ValueError(f'copy_to writes x of shape {x.shape} into an array of shape {to.shape}: '
                             'the shapes must be equal')
    else:
        context(to, 'to (the device or array copy_to sends to)')


def cost_model(k, nbytes, alpha, bandwidth, gamma):
    """The arguments of an alpha-beta-gamma cost model (notebook 04): ``k`` >= 1 devices (a number,
    or a list or array of them), finite ``nbytes``, ``alpha``, ``gamma`` >= 0 and ``bandwidth`` > 0."""
    devices_and_bytes(k, nbytes)
    for value, name in ((alpha, 'alpha'), (gamma, 'gamma')):
        number(value, name, 0)
    positive(bandwidth, 'bandwidth')


def devices_and_bytes(k, nbytes):
    """``k`` >= 1 devices (a number, or a list or array of them) and ``nbytes`` >= 0 (notebook 04:
    the bytes of a cost model)."""
    import numpy as np
    if _is_bool(k) or isinstance(k, (str, bytes, dict, set, frozenset)):
        raise TypeError(f'k must be a number of devices or an array of them, got {k!r} ({type(k).__name__})')
    try:
        ks = np.asarray(k, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f'k must be a number of devices or an array of them, got {_short(k)}') from None
    if np.asarray(k).dtype.kind not in 'iuf':
        raise TypeError(f'k must hold numbers of devices, got {_short(k)} (dtype {np.asarray(k).dtype})')
    if not np.all(np.isfinite(ks)) or np.any(ks < 1):
        raise ValueError(f'k must be >= 1 devices, got {k}')
    number(nbytes, 'nbytes', 0)


def bytes_per_device(k, size, itemsize):
    """``(k, size, itemsize)`` as ints for the byte counts of notebook 04: ``k`` from 1 to
    :data:`MAX_DEVICES`, ``size`` >= 0 elements, ``itemsize`` >= 1 bytes."""
    return whole(k, 'k', 1, MAX_DEVICES), whole(size, 'size', 0), whole(itemsize, 'itemsize', 1)


# ---------------------------------------------------------------- helpers.models (notebooks 05, 06)
def replica(params, device):
    """The arguments of ``replicate_params`` (notebook 05): a list of NDArrays and one device."""
    parameters(params)
    context(device, 'device')


def lenet(X, params, shapes):
    """The arguments of the scratch LeNet's forward pass (notebook 05): images ``X`` of shape
    (n, 1, 28, 28) and one NDArray per entry of ``shapes`` (``LENET_SHAPES``), of that shape."""
    ndarray(X, 'X (the images)')
    if X.ndim != 4 or tuple(X.shape[1:]) != (1, 28, 28):
        raise ValueError(f'X must hold images of shape (n, 1, 28, 28), got shape {X.shape}')
    params = parameters(params)
    if len(params) != len(shapes):
        raise ValueError(f'params must hold the {len(shapes)} parameters of LeNet, got {len(params)}')
    for p, (name, shape) in zip(params, shapes):
        if tuple(p.shape) != tuple(shape):
            raise ValueError(f'params: {name} must have shape {shape}, got {p.shape}')


def norm_layer(layer, devs):
    """The arguments of ``batchnorm_step`` (notebook 06): a Gluon normalisation layer (one with
    running statistics: ``nn.BatchNorm``, ``SyncBatchNorm``) and a list of devices."""
    from mxnet import gluon
    if not isinstance(layer, gluon.Block):
        raise TypeError(f'layer must be a Gluon layer such as nn.BatchNorm(), got {_short(layer)} '
                        f'({type(layer).__name__})')
    if not hasattr(layer, 'running_mean'):
        raise ValueError(f'layer must be a normalisation layer with running statistics (nn.BatchNorm, '
                         f'SyncBatchNorm), got {type(layer).__name__}')
    devices(devs)


def shard_bounds(bounds, n, name='bounds'):
    """``[(begin, end), ...]`` as whole numbers: at least one shard, each non-empty and within a
    batch of ``n`` examples (notebook 06)."""
    found = [tuple(b) if isinstance(b, (tuple, list)) else b for b in ordered(bounds, name)]
    if not found:
        raise ValueError(f'{name} is empty: give one (begin, end) per device')
    for i, b in enumerate(found):
        if not isinstance(b, tuple) or len(b) != 2:
            raise TypeError(f'{name}[{i}] must be a pair (begin, end), got {_short(b)}')
        begin, end = whole(b[0], f'{name}[{i}] begin'), whole(b[1], f'{name}[{i}] end')
        if not begin < end <= n:
            raise ValueError(f'{name}[{i}] = {b} must be a non-empty shard within the batch of {n}')
    return found


# -------------------------------------------------------------------- helpers.buckets (notebook 10)
def bucket_plan(sizes, bucket_bytes, itemsize):
    """The arguments of ``plan_buckets`` (notebook 10): a non-empty list of gradient sizes, each a
    whole number of elements >= 1, and ``bucket_bytes`` and ``itemsize`` whole numbers >= 1."""
    import mxnet as mx
    if isinstance(sizes, (str, bytes, mx.nd.NDArray)) or _unordered(sizes) or not hasattr(sizes, '__len__'):
        raise TypeError(f'sizes must be a list of gradient sizes (elements), got {type(sizes).__name__}'
                        + (' (a dict: its keys would be read as indices)' if _is_mapping(sizes) else ''))
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


def sends(losses, groups, wait, allreduce):
    """The arguments of ``backward_and_send`` (notebook 10): a non-empty list of losses (NDArrays),
    a list of groups, each what an allreduce takes (:func:`arrays`), ``wait`` True or False and
    ``allreduce`` a function. Nothing runs before this passes."""
    if not parameters(losses, 'losses'):
        raise ValueError('losses is empty: give one loss per device')
    for i, g in enumerate(ordered(groups, 'groups')):
        try:
            arrays(g)
        except (TypeError, ValueError) as e:
            raise type(e)(f'groups[{i}]: {e}') from None
    flag(wait, 'wait')
    function(allreduce, 'allreduce')


# ---------------------------------------------- helpers.link (notebooks 04, 05, 09-13)
def link(alpha, bandwidth):
    """The latency and bandwidth of ``helpers.link.Link`` (notebook 04): ``alpha`` >= 0 seconds, at
    most ``MAX_SECONDS``, and ``bandwidth`` > 0 bytes per second."""
    return number(alpha, 'alpha (seconds per message)', 0, MAX_SECONDS), \
        positive(bandwidth, 'bandwidth (bytes per second)')


def link_send(x, to):
    """The arguments of ``Link.send`` (notebook 04): those of ``copy_to``, and another device than
    ``x``'s: a message from a device to itself never crosses a link."""
    import mxnet as mx
    copy(x, to)
    for a, name in ((x, 'x'), (to, 'to')):
        if isinstance(a, mx.nd.NDArray) and a.stype != 'default':
            raise TypeError(f'Link.send sends dense arrays; {name} is {a.stype} (make it dense: .tostype("default"))')
    where = to if isinstance(to, mx.Context) else to.context
    if where == x.context:        # also what keeps x and the destination from being one array, read and
        #                           written by one engine operation, which would then never start
        raise ValueError(f'to: Link.send sends x from {x.context} to the same device; a link joins two '
                         'different devices (copy within a device with copy_to)')
