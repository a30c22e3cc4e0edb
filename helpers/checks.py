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

Every message names the argument, what was given and, where there is one, the fix. Numbers that
size something before any work is done have upper bounds (``MAX_DEVICES``, ``MAX_SECONDS``,
``MAX_PROCESSES``, and :func:`fits`: no array larger than the machine's memory), so that a typo is
refused at once instead of filling the memory or running for ever. ``tests/test_bad_input.py``
feeds every public helper wrong types and values to hold all of this.

Importing this module imports neither MXNet nor NumPy: the checks of numbers (:func:`whole`,
:func:`positive`) serve processes that must not start MXNet (the node shim of a distributed job,
helpers/job.py); the checks of arrays and devices import MXNet when they are called.
"""
import collections.abc
import math
import numbers

__all__ = [
    # kinds of value, used by every module
    'whole', 'positive', 'number', 'seconds', 'flag', 'choice', 'text', 'path', 'function', 'module', 'ordered',
    'counts', 'whole_or_array', 'mapping', 'strings', 'numeric', 'vector', 'fits', 'MAX_DEVICES', 'MAX_SECONDS',
    'MAX_PROCESSES',
    # devices and arrays (notebooks 00-06)
    'devices', 'context', 'ndarray', 'parameters', 'arrays', 'weights', 'shards', 'batch', 'labels', 'index',
    'copy', 'replica', 'replicas', 'lenet', 'update', 'gluon_step', 'batches', 'evaluation', 'loop', 'same_arrays',
    'class_ids',
    # models of time and bytes (notebooks 04, 09)
    'cost_model', 'devices_and_bytes', 'bytes_per_device', 'epoch_model', 'pushpull', 'measured_step', 'warmup',
    'large_batch',
    # stores, jobs, processes, namespaces (notebooks 07-09)
    'kvstore', 'store_cases', 'processes', 'pids', 'interface', 'epoch_steps', 'worker_shard', 'worker', 'option',
    'results', 'byte_counters',
    # timings, traces and figures (notebooks 01, 04-09)
    'timings', 'spans', 'figure', 'curves', 'lanes', 'grid', 'speedups', 'pushpull_rows', 'grid_runs', 'loss_scale',
    # buckets and sharding (notebooks 10, 11)
    'bucket_plan', 'buckets', 'bucket_params', 'flat_replicas',
    # the rest of notebooks 05-12 (the sweep of issue 22)
    'sends', 'dtype', 'views', 'norm_layer', 'checkpoint', 'scaled_step', 'accumulation', 'updaters', 'memory_cases',
    'shard_bounds', 'spread_runs', 'span_panels', 'seed_runs', 'environment', 'setting_groups',
    # the emulated link (notebooks 04, 05, 09-12)
    'link', 'link_send', 'sweep_times']

# Upper bounds for numbers that size something before any work is done, so that a typo (10**12 for
# 12) is refused at once instead of filling the memory or running for ever (tests/test_bad_input.py):
# - MAX_DEVICES: devices in a list the helpers build from a count (get_devices, byte counts per
#   device, shard sizes): 65,536 devices' worth of a list is a few MB and a fraction of a second;
# - MAX_SECONDS: a time limit. Python's own waits cannot take more: ``threading.Timer`` fails past
#   ``threading.TIMEOUT_MAX`` (in its own thread: the job runner's watchdog died of it), and
#   ``Popen.communicate`` past 2**31 ms = 24.8 days ("timeout is too large", select.poll takes an
#   int of milliseconds). A week is far beyond any job of the series;
# - MAX_PROCESSES: servers or workers of one local job (each is a Python process with MXNet).
MAX_DEVICES = 1 << 16
MAX_SECONDS = 7 * 24 * 3600.0
MAX_PROCESSES = 64


def _is_bool(value):
    return isinstance(value, bool) or type(value).__name__ == 'bool_'     # NumPy's bool, without NumPy


def whole(value, name, minimum=0, maximum=None):
    """``int(value)`` if ``value`` is a whole number >= ``minimum`` (and <= ``maximum``, if given;
    notebook 00's policy, used by every notebook): ``TypeError`` for a non-integer type,
    ``ValueError`` below ``minimum`` or above ``maximum``."""
    if _is_bool(value) or not isinstance(value, numbers.Integral):
        raise TypeError(f'{name} must be a whole number, got {value!r} ({type(value).__name__})')
    if value < minimum:
        raise ValueError(f'{name} must be at least {minimum}, got {value}')
    if maximum is not None and value > maximum:
        raise ValueError(f'{name} must be at most {maximum}, got {value}')
    return int(value)


def positive(value, name, maximum=None):
    """``float(value)`` if ``value`` is a finite number > 0 (learning rates, timeouts; notebook 05)
    and at most ``maximum``, if given: ``TypeError`` for a non-number, ``ValueError`` for 0, a
    negative number, inf, nan or a number above ``maximum``."""
    if _is_bool(value) or not isinstance(value, numbers.Real):
        raise TypeError(f'{name} must be a number, got {value!r} ({type(value).__name__})')
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f'{name} must be a positive finite number, got {value!r}')
    if maximum is not None and value > maximum:
        raise ValueError(f'{name} must be at most {maximum:g}, got {value!r}')
    return float(value)


def number(value, name, minimum=None, maximum=None):
    """``float(value)`` if ``value`` is a finite real number from ``minimum`` to ``maximum``
    (notebook 04: latencies, byte counts): ``TypeError`` for a non-number (a bool, a string, an
    array), ``ValueError`` for inf, nan or a number out of the range."""
    if _is_bool(value) or not isinstance(value, numbers.Real):
        raise TypeError(f'{name} must be a number, got {value!r} ({type(value).__name__})')
    if not math.isfinite(value):
        raise ValueError(f'{name} must be a finite number, got {value!r}')
    if minimum is not None and value < minimum:
        raise ValueError(f'{name} must be at least {minimum:g}, got {value!r}')
    if maximum is not None and value > maximum:
        raise ValueError(f'{name} must be at most {maximum:g}, got {value!r}')
    return float(value)


def seconds(value, name):
    """``float(value)`` if ``value`` is a time limit: a finite number of seconds > 0, at most
    :data:`MAX_SECONDS` (notebook 08: a job's timeout)."""
    return positive(value, name, MAX_SECONDS)


def flag(value, name):
    """``value`` as a ``bool`` if it is one (a NumPy bool too; notebook 00): ``TypeError``
    otherwise. A string or a number would be read as true or false, and ``'False'`` is true."""
    if not _is_bool(value):
        raise TypeError(f'{name} must be True or False, got {value!r} ({type(value).__name__})')
    return bool(value)


def choice(value, name, options):
    """``value`` if it is one of ``options`` (strings, perhaps None; notebooks 07, 09):
    ``TypeError`` for a value of another type, ``ValueError`` for a string not among them."""
    if not (isinstance(value, str) or (value is None and None in options)):
        raise TypeError(f'{name} must be one of {tuple(options)}, got {value!r} ({type(value).__name__})')
    if value not in options:
        raise ValueError(f'{name} must be one of {tuple(options)}, got {value!r}')
    return value


def text(value, name):
    """``value`` if it is a non-empty string (notebooks 00, 08): ``TypeError`` for a non-string,
    ``ValueError`` for an empty or blank one."""
    if not isinstance(value, str):
        raise TypeError(f'{name} must be a string, got {value!r} ({type(value).__name__})')
    if not value.strip():
        raise ValueError(f'{name} must not be empty, got {value!r}')
    return value


def path(value, name):
    """``value`` if it is a non-empty path (a string or ``os.PathLike``; notebooks 00, 08)."""
    if not (isinstance(value, str) or hasattr(type(value), '__fspath__')):
        raise TypeError(f'{name} must be a path (a string), got {value!r} ({type(value).__name__})')
    if not str(value if isinstance(value, str) else value.__fspath__()):
        raise ValueError(f'{name} is an empty path: give a directory, or leave it out')
    return value


def function(value, name):
    """``value`` if it can be called (notebooks 01, 05): ``TypeError`` otherwise."""
    if not callable(value):
        raise TypeError(f'{name} must be a function, got {value!r} ({type(value).__name__})')
    return value


def ordered(values, name):
    """``list(values)`` if ``values`` is an ordered collection (a list, a tuple, an array, a
    generator; notebooks 00 on): ``TypeError`` for a string, a dict or a set -- a dict would give
    its keys and a set an order of its own, both silently."""
    if _unordered(values):
        raise TypeError(f'{name} must be a list, got {type(values).__name__} {_short(values)}'
                        + (': a dict gives its keys, not its values' if _is_mapping(values) else
                           ': a set has no order' if isinstance(values, (set, frozenset)) else ''))
    try:
        return list(values)
    except TypeError:
        raise TypeError(f'{name} must be a list, got {_short(values)} ({type(values).__name__})') from None


def counts(values, name, minimum=0):
    """``[int, ...]`` if ``values`` is an ordered collection of whole numbers >= ``minimum``
    (notebook 07: key sizes, parameter sizes)."""
    return [whole(v, f'{name}[{i}]', minimum) for i, v in enumerate(ordered(values, name))]


def mapping(value, name):
    """``value`` if it is a dict (or another mapping; notebooks 08, 09): ``TypeError`` otherwise."""
    if not _is_mapping(value):
        raise TypeError(f'{name} must be a dict, got {_short(value)} ({type(value).__name__})')
    return value


def strings(value, name, empty=False):
    """``list(value)`` if it is a list of strings (a command line; notebook 08), non-empty unless
    ``empty``: ``TypeError`` for a string or a list holding something else, ``ValueError`` if empty."""
    if not isinstance(value, (list, tuple)):
        raise TypeError(f'{name} must be a list of strings, got {_short(value)} ({type(value).__name__})')
    for i, v in enumerate(value):
        if not isinstance(v, str):
            raise TypeError(f'{name} must be a list of strings, but {name}[{i}] is {v!r} ({type(v).__name__})')
    if not value and not empty:
        raise ValueError(f'{name} is empty: it needs at least one string')
    return list(value)


def fits(nbytes, what):
    """``ValueError`` if ``nbytes`` is more than this machine's memory (notebooks 01, 07): an array
    that cannot exist is refused before anything is allocated."""
    import os
    if _is_bool(nbytes) or not isinstance(nbytes, numbers.Real):
        raise TypeError(f'the size of {what} must be a number of bytes, got {nbytes!r}')
    total = os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') if hasattr(os, 'sysconf') else float('inf')
    if not nbytes <= total:
        raise ValueError(f'{what} would need {nbytes / 2 ** 30:,.0f} GiB, more than the {total / 2 ** 30:,.0f} GiB '
                         'of memory of this machine')


def _is_mapping(value):
    return isinstance(value, collections.abc.Mapping)


def _unordered(value):
    """A string, a dict or a set (or a class): iterable, but not an ordered collection of things."""
    return isinstance(value, (str, bytes, set, frozenset, type)) or _is_mapping(value)


def _short(value):
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + '...'


def devices(devs, name='devices', present=True, empty=False):
    """``devs`` as a list of distinct ``mx.Context`` (notebook 00): ``TypeError`` for a single
    context, a string, a dict or a set (a device list has an order) or a non-context entry,
    ``ValueError`` for an empty list (unless ``empty``), a repeated device, a negative id, or (if
    ``present``) a device this machine does not have (a GPU beyond ``mx.context.num_gpus()``)."""
    import mxnet as mx
    if isinstance(devs, mx.Context):
        raise TypeError(f'{name} must be a list of contexts, e.g. [{devs}], got the single context {devs}')
    if _unordered(devs):
        raise TypeError(f'{name} must be a list of contexts (in order), got {type(devs).__name__} {_short(devs)}')
    try:
        devs = list(devs)
    except TypeError:
        raise TypeError(f'{name} must be a list of contexts, got {devs!r}') from None
    if not devs and not empty:
        raise ValueError(f'{name} is empty: need at least one device')
    for d in devs:
        if not isinstance(d, mx.Context):
            raise TypeError(f'{name} must hold mx.Context objects such as mx.cpu(0), got {d!r}')
    if len(set(devs)) != len(devs):    # Gluon finds a parameter's copy by device: a repeat is one device
        raise ValueError(f'{name} must be distinct, got {devs}: a device listed twice is one device to '
                         'Gluon and does not test multi-device code (notebook 06); for stand-ins on one '
                         f'machine use distinct ones, e.g. MXDP_DEVICES=cpu:{len(devs)}')
    for d in devs:
        if d.device_id < 0:
            raise ValueError(f'{name}: {d} has a negative id; devices are numbered from 0')
        if present and d.device_type == 'gpu' and d.device_id >= _gpus():
            raise ValueError(f'{name}: {d} is not on this machine, which has {_gpus()} GPU(s) '
                             '(helpers.devices.get_devices() lists the devices there are)')
    return devs


def _gpus():
    """The GPUs MXNet sees, as ``helpers.devices.num_gpus`` counts them (0 where a CUDA build has no
    usable driver; the tests stand in GPUs by replacing it)."""
    from helpers import devices as _devices
    return _devices.num_gpus()


def arrays(arrs, min_size=1, ring=False):
    """Check the input of an allreduce (notebook 04) and return ``k``, the number of arrays.

    A list (not a single NDArray) of at least one NDArray, all of one shape and dtype, with at least
    ``min_size`` elements (MXNet cannot copy a zero-size array), and with ``ring``, at least one
    element per array (the ring cuts each into one chunk per device). Nothing is copied before this
    passes, so a refused call leaves every array untouched.
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
    if ring:
        min_size = max(min_size, len(arrs))
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


def labels(X, y):
    """One label per example (notebook 03): ``len(X) == len(y)``, else ``ValueError``; ``TypeError``
    for something that has no length."""
    for value, name in ((X, 'X'), (y, 'y')):
        if not _is_array(value):
            raise TypeError(f'{name} must be an array (NumPy or NDArray) of examples, got {_short(value)} '
                            f'({type(value).__name__})')
    if len(X) != len(y):
        raise ValueError(f'X and y must have the same first dimension (one label per example), '
                         f'got {len(X)} examples and {len(y)} labels')


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


def replicas(device_params, devs):
    """One list of parameters per device, replica ``i`` living on ``devs[i]`` (notebook 05)."""
    import mxnet as mx
    devs = devices(devs)
    device_params = ordered(device_params, 'device_params (one list of parameters per device)')
    for i, replica in enumerate(device_params):
        if (isinstance(replica, mx.nd.NDArray) or _unordered(replica)
                or not isinstance(replica, collections.abc.Iterable)):
            raise TypeError(f'device_params[{i}] must be the list of parameters of replica {i}, got {_short(replica)}')
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


def _is_array(value):
    """A NumPy array or an MXNet NDArray (checked by type name: no import of either)."""
    return any(c.__module__.split('.')[0] in ('numpy', 'mxnet') and c.__name__ in ('ndarray', 'NDArray')
               for c in type(value).__mro__)


def index(i, k, name, count_name='k'):
    """``(int(i), int(k))`` if ``k`` >= 1 things (at most :data:`MAX_DEVICES`) and ``i`` is one of
    them, ``0 <= i < k`` (notebooks 04, 08: a device, a worker's rank). A negative ``i`` would
    silently count from the end."""
    k = whole(k, count_name, 1, MAX_DEVICES)
    return whole(i, name, 0, k - 1), k


def context(value, name):
    """``value`` if it is one ``mx.Context`` this machine has (notebooks 01, 05): ``TypeError``
    for anything else (a list of contexts, a string), ``ValueError`` for a GPU it does not have or
    a negative id."""
    import mxnet as mx
    if not isinstance(value, mx.Context):
        raise TypeError(f'{name} must be a device such as mx.cpu(0), got {_short(value)} ({type(value).__name__})')
    devices([value], name)
    return value


def ndarray(value, name):
    """``value`` if it is an MXNet NDArray (notebooks 01-06): ``TypeError`` otherwise (a NumPy
    array: convert it with ``mx.nd.array``)."""
    import mxnet as mx
    if not isinstance(value, mx.nd.NDArray):
        raise TypeError(f'{name} must be an NDArray, got {type(value).__name__}'
                        + (' (convert with mx.nd.array(...))' if _is_array(value) else ''))
    return value


def parameters(params, name='params', grads=False):
    """``list(params)`` if it is an ordered collection of NDArrays (notebook 05), each with a
    gradient buffer if ``grads``. A single NDArray is refused: it would be taken row by row."""
    if _is_array(params):
        raise TypeError(f'{name} must be a list of NDArrays, got a single {type(params).__name__} '
                        f'(wrap it: [{name}])')
    params = ordered(params, name)
    for i, p in enumerate(params):
        ndarray(p, f'{name}[{i}]')
        if grads and p.grad is None:
            raise ValueError(f'{name}[{i}] has no gradient: call attach_grad() on it (replicate_params does)')
    return params


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


def update(params, lr, batch_size):
    """The arguments of minibatch SGD (notebook 05): NDArrays with gradients, a learning rate > 0
    and a batch size > 0 (0 would divide by zero: every weight inf or nan). A number, not only a
    whole one: notebook 12 divides by its loss scale there."""
    parameters(params, grads=True)
    positive(lr, 'lr')
    positive(batch_size, 'batch_size')


def gluon_step(net, trainer):
    """The model and trainer of a Gluon training step (notebook 06)."""
    from mxnet import gluon
    if not isinstance(net, gluon.Block):
        raise TypeError(f'net must be a Gluon network (a gluon.Block), got {type(net).__name__}')
    if not isinstance(trainer, gluon.Trainer):
        raise TypeError(f'trainer must be a gluon.Trainer, got {type(trainer).__name__}')


class _Batches:
    """Iterates ``source`` afresh each time, like the loader it wraps; ``ValueError`` at the end of
    a pass that gave no batch (an accuracy or a loss would divide by zero)."""

    def __init__(self, source, name):
        if _unordered(source) or not isinstance(source, collections.abc.Iterable):
            raise TypeError(f'{name} must give batches (X, y) when iterated, e.g. an ArrayLoader, got '
                            f'{_short(source)} ({type(source).__name__})')
        if isinstance(source, collections.abc.Sized) and len(source) == 0:
            raise ValueError(f'{name} has no batch: there is nothing to train on or to evaluate')
        self.source, self.name = source, name

    def __iter__(self):
        n = 0
        for batch in self.source:
            if not isinstance(batch, (tuple, list)) or len(batch) != 2:
                raise TypeError(f'{self.name} must give batches (X, y), got {_short(batch)}')
            n += 1
            yield batch
        if n == 0:
            raise ValueError(f'{self.name} gave no batch: there is nothing to train on or to evaluate')

    def __len__(self):
        return len(self.source)


def batches(source, name):
    """``source`` (an ArrayLoader, a list of ``(X, y)``) as batches that say so when they are
    wrong: ``TypeError`` for something that gives no ``(X, y)`` pairs, ``ValueError`` for a pass
    with no batch (notebooks 05, 06)."""
    return _Batches(source, name)


def evaluation(net, data_iter, devs):
    """The arguments of ``evaluate_accuracy`` (notebook 05); returns ``data_iter`` as
    :func:`batches`."""
    function(net, 'net')
    devices(devs)
    return batches(data_iter, 'data_iter')


def same_arrays(a, b):
    """Two lists of NDArrays, pairwise of one shape (notebooks 05, 06: ``max_gap``). Lists of
    different lengths would compare only their common part; an empty list would have no gap."""
    a, b = parameters(a, 'a'), parameters(b, 'b')
    if len(a) != len(b) or not a:
        raise ValueError(f'a and b must hold the same number of arrays (at least one), got {len(a)} and {len(b)}')
    for i, (p, q) in enumerate(zip(a, b)):
        if p.shape != q.shape:
            raise ValueError(f'a[{i}] and b[{i}] have different shapes: {p.shape} and {q.shape}')


def bytes_per_device(k, size, itemsize):
    """``(k, size, itemsize)`` as ints for the byte counts of notebook 04: ``k`` from 1 to
    :data:`MAX_DEVICES`, ``size`` >= 0 elements, ``itemsize`` >= 1 bytes."""
    return whole(k, 'k', 1, MAX_DEVICES), whole(size, 'size', 0), whole(itemsize, 'itemsize', 1)


def vector(values, name):
    """``values`` as a 1-D float32 NumPy array of finite numbers, at least one (notebook 07)."""
    import numpy as np
    if isinstance(values, (str, bytes, dict, set, frozenset)) or values is None:
        raise TypeError(f'{name} must be a 1-D array of numbers, got {_short(values)} ({type(values).__name__})')
    try:
        array = np.asarray(values.asnumpy() if hasattr(values, 'asnumpy') else values)
    except (TypeError, ValueError):
        raise TypeError(f'{name} must be a 1-D array of numbers, got {_short(values)}') from None
    if array.dtype.kind not in 'iuf':
        raise TypeError(f'{name} must hold numbers, got {_short(values)} (dtype {array.dtype})')
    if array.ndim != 1 or array.size == 0:
        raise ValueError(f'{name} must be a non-empty 1-D array, got shape {array.shape}')
    if not np.all(np.isfinite(array)):
        raise ValueError(f'{name} must hold finite numbers, got {_short(values)}')
    return array.astype(np.float32)


def kvstore(kv, name='kv'):
    """``kv`` if it is an MXNet KVStore (notebooks 07, 08), or a stand-in with callable ``push`` and
    ``pull`` (the lessons use only those; ``helpers.lessoncheck`` checks them on a recording store)."""
    import mxnet as mx
    if not (isinstance(kv, mx.kv.KVStoreBase)
            or (callable(getattr(kv, 'push', None)) and callable(getattr(kv, 'pull', None)))):
        raise TypeError(f'{name} must be a KVStore (mx.kv.create(...)), got {_short(kv)} ({type(kv).__name__})')
    return kv


def epoch_steps(n_train, num_workers, batch_size):
    """The arguments of ``steps_per_epoch`` (notebook 08)."""
    return (whole(n_train, 'n_train', 0), whole(num_workers, 'num_workers', 1, MAX_DEVICES),
            whole(batch_size, 'batch_size', 1))


def worker_shard(X, y, rank, num_workers):
    """The arguments of ``my_shard`` (notebook 08): examples and labels of one length, and a rank
    ``0 <= rank < num_workers`` (a negative rank would take another worker's shard)."""
    labels(X, y)
    index(rank, num_workers, 'rank', 'num_workers')


def worker(kv, steps, lr, epochs, on_step):
    """The arguments of ``train_worker`` (notebook 08) that nothing below it checks."""
    kvstore(kv)
    whole(steps, 'steps', 1)
    positive(lr, 'lr')
    whole(epochs, 'epochs', 1)
    if on_step is not None:
        function(on_step, 'on_step')


def warmup(base_lr, warmup_steps, warmup_begin_lr, warmup_mode):
    """The arguments of a warm-up schedule (notebook 09), as MXNet's ``LRScheduler`` takes them:
    ``base_lr`` > 0, ``warmup_steps`` >= 0 (an int: MXNet asserts it), ``0 <= warmup_begin_lr <=
    base_lr``, ``warmup_mode`` 'linear' or 'constant'."""
    base_lr = positive(base_lr, 'base_lr')
    begin = number(warmup_begin_lr, 'warmup_begin_lr', 0, base_lr)
    return (base_lr, whole(warmup_steps, 'warmup_steps', 0), begin,
            choice(warmup_mode, 'warmup_mode', ('linear', 'constant')))


def large_batch(recipe, recipes, batch_size, warmup_steps, base_lr, base_batch):
    """The arguments of a large-batch recipe (notebook 09)."""
    choice(recipe, 'recipe', recipes)
    whole(batch_size, 'batch_size', 1)
    whole(warmup_steps, 'warmup_steps', 0)
    positive(base_lr, 'base_lr')
    whole(base_batch, 'base_batch', 1)


def epoch_model(n, batch, overhead, per_example):
    """The arguments of the time-per-epoch model (notebook 09) that the cost model does not check:
    ``n`` and ``batch`` whole numbers (or arrays of them, like ``k``)."""
    whole_or_array(n, 'n', 0)
    whole_or_array(batch, 'batch', 1)
    number(overhead, 'overhead', 0)
    number(per_example, 'per_example', 0)


def pushpull(nbytes, rate, alpha, compression):
    """The arguments of the push + pull model (notebook 09)."""
    number(nbytes, 'nbytes', 0)
    positive(rate, 'rate (bits per second)')
    number(alpha, 'alpha', 0)
    flag(compression, 'compression')


def spans(values, name='spans'):
    """``values`` as a list of spans ``(device, name, start, end)`` with ``start <= end``
    (``helpers.tracing.Span``; notebooks 01, 04, 05)."""
    values = ordered(values, name)
    for i, s in enumerate(values):
        if not isinstance(s, tuple) or len(s) != 4:
            raise TypeError(f'{name}[{i}] must be a Span (device, name, start, end), got {_short(s)}')
        start, end = number(s[2], f'{name}[{i}].start'), number(s[3], f'{name}[{i}].end')
        if end < start:
            raise ValueError(f'{name}[{i}] ends ({end}) before it starts ({start})')
    return values


def timings(values, name, minimum=1):
    """``values`` as a list of at least ``minimum`` measured times: finite numbers > 0 (notebooks 01, 06, 09)."""
    values = [positive(v, f'{name}[{i}]') for i, v in enumerate(ordered(values, name))]
    if len(values) < minimum:
        raise ValueError(f'{name} must hold at least {minimum} timings to measure their spread, got {len(values)}')
    return values


def curves(histories):
    """``{label: history}`` for the training curves of ``helpers.plot.history`` (notebooks 05-09):
    each history a dict of equally long lists ``epoch``, ``loss``, ``test_acc``."""
    mapping(histories, 'histories')
    runs = {None: histories} if 'epoch' in histories else histories
    if not runs:
        raise ValueError('histories is empty: give one history, or {label: history}')
    for label, h in runs.items():
        if not _is_mapping(h):
            raise TypeError(f'histories[{label!r}] must be a history (a dict of epoch, loss, test_acc), '
                            f'got {_short(h)}')
        missing = [key for key in ('epoch', 'loss', 'test_acc') if key not in h]
        if missing:
            raise ValueError(f'history {label!r} has no {", ".join(missing)}')
        lengths = {key: len(ordered(h[key], f'history {label!r}: {key}')) for key in ('epoch', 'loss', 'test_acc')}
        if len(set(lengths.values())) != 1:
            raise ValueError(f'history {label!r}: epoch, loss and test_acc must be equally long, got {lengths}')
    return runs


def class_ids(values, n_classes, name='labels'):
    """``values`` as a list of class numbers ``0 <= c < n_classes`` (notebook 00): whole numbers,
    or an array of them (an NDArray's float32 labels too, when they are whole). A negative number
    would silently count from the end of the class names."""
    if _is_array(values) and hasattr(values, 'asnumpy'):
        values = values.asnumpy()
    if _is_array(values) and values.dtype.kind == 'f' and (values == values.round()).all():
        values = values.astype('int64')
    return [whole(v, f'{name}[{i}]', 0, n_classes - 1) for i, v in enumerate(ordered(values, name))]


def option(value, name, action):
    """``value`` if the ``argparse`` action ``action`` of a script would take it (notebook 08: the
    options of ``helpers.dist_train.command``): one of its choices, of its type."""
    if action.choices is not None:
        return choice(value, name, tuple(action.choices))
    if action.type is int:
        return whole(value, name, minimum=-2 ** 63)
    if action.type is float:
        return number(value, name)
    return text(value, name)


def results(runs, name='runs'):
    """``{title: [result, ...]}`` of workers' result dicts with ``rank`` and ``stamps`` (notebook 08)."""
    mapping(runs, name)
    if not runs:
        raise ValueError(f'{name} is empty: give at least one run')
    for title, found in runs.items():
        for r in ordered(found, f'{name}[{title!r}]'):
            if not _is_mapping(r) or 'rank' not in r or 'stamps' not in r:
                raise ValueError(f'{name}[{title!r}] must hold result dicts with a rank and stamps, got {_short(r)}')
    return runs


def byte_counters(result):
    """The ``net_bytes`` of a worker's result dict (notebook 08): at least 3 readings ``[received,
    sent]`` (two steps to measure one)."""
    mapping(result, 'result')
    if 'net_bytes' not in result:
        raise ValueError('result has no net_bytes: it is not a result dict of helpers.dist_train')
    net = ordered(result['net_bytes'], "result['net_bytes']")
    for i, reading in enumerate(net):
        if len(counts(reading, f"result['net_bytes'][{i}]")) != 2:
            raise ValueError(f"result['net_bytes'][{i}] must be [received, sent], got {reading!r}")
    if len(net) < 3:
        raise ValueError(f'need at least 2 steps to measure a step, got {len(net) - 1}')
    return net


def processes(num_workers, num_servers, name='num_workers'):
    """``(num_workers, num_servers)`` of a local job (notebook 08): from 1 to :data:`MAX_PROCESSES`
    each (every one is a process with MXNet in it)."""
    return (whole(num_workers, name, 1, MAX_PROCESSES),
            whole(num_servers, name.replace('num_workers', 'num_servers'), 1, MAX_PROCESSES))


def interface(ns, dev):
    """A network namespace's name (None: this process's own) and an interface's name, both
    non-empty strings (notebooks 08, 09)."""
    if ns is not None:
        text(ns, 'ns (a namespace)')
    text(dev, 'dev (an interface)')


def pids(values, name='pids'):
    """``values`` as a list of process ids >= 1 (notebooks 08, 09). 0 and -1 are not processes:
    ``kill(0)`` signals the caller's whole process group, ``kill(-1)`` every process it may."""
    return [whole(p, f'{name}[{i}] (a pid)', 1) for i, p in enumerate(ordered(values, name))]


def store_cases(cases, store_types, extras):
    """``[(kv_type, extra), ...]`` of ``helpers.kvstore.store_memory`` (notebook 07): at least one."""
    cases = ordered(cases, 'cases')
    if not cases:
        raise ValueError('cases is empty: give at least one (kv_type, extra)')
    for i, case in enumerate(cases):
        if not isinstance(case, (tuple, list)) or len(case) != 2:
            raise TypeError(f'cases[{i}] must be a pair (kv_type, extra), got {case!r}')
        choice(case[0], f'cases[{i}]: kv_type', store_types)
        choice(case[1], f'cases[{i}]: extra', extras)
    return [tuple(case) for case in cases]


def figure(alt, title=None, fig=None):
    """The text of a figure (notebooks 00-09: every figure): ``alt`` None (described from the axes) or a sentence,
    ``title`` None or a string, ``fig`` None (the current figure) or a matplotlib figure with
    something drawn on it."""
    if alt is not None:
        if not isinstance(alt, str):
            raise TypeError(f'alt must be a sentence saying what the figure shows, got {_short(alt)} '
                            f'({type(alt).__name__})')
        if not alt.strip():
            raise ValueError(f'alt must be a sentence saying what the figure shows, got {alt!r}')
    if title is not None and not isinstance(title, str):
        raise TypeError(f'title must be a string, got {_short(title)} ({type(title).__name__})')
    if fig is not None:
        from matplotlib.figure import Figure
        if not isinstance(fig, Figure):
            raise TypeError(f'fig must be a matplotlib figure, got {_short(fig)} ({type(fig).__name__})')
        if not fig.axes:
            raise ValueError('fig has nothing drawn on it (no axes): there is no figure to show')


def lanes(panels):
    """``{title: {name: [t0, t1, ...]}}`` of ``helpers.plot.step_timelines`` (notebook 08): at
    least one panel, each with at least one lane of at least one time."""
    mapping(panels, 'panels')
    if not panels:
        raise ValueError('panels is empty: give at least one {title: {name: times}}')
    for title, found in panels.items():
        mapping(found, f'panels[{title!r}]')
        if not found:
            raise ValueError(f'panels[{title!r}] has no lane')
        for name, stamps in found.items():
            where = f'panels[{title!r}][{name!r}]'
            stamps = [number(t, f'a time of {where}') for t in ordered(stamps, where)]
            if not stamps:
                raise ValueError(f'panels[{title!r}][{name!r}] has no time')
    return panels


def numeric(values, name):
    """``values`` as a NumPy array of numbers, any shape (notebook 04): ``TypeError`` for strings,
    dicts, None or anything NumPy cannot read as numbers."""
    import numpy as np
    if isinstance(values, (str, bytes, dict, set, frozenset)) or values is None:
        raise TypeError(f'{name} must be an array of numbers, got {_short(values)} ({type(values).__name__})')
    try:
        array = np.asarray(values.asnumpy() if hasattr(values, 'asnumpy') else values)
    except (TypeError, ValueError):
        raise TypeError(f'{name} must be an array of numbers, got {_short(values)}') from None
    if array.dtype.kind not in 'iuf':
        raise TypeError(f'{name} must hold numbers, got {_short(values)} (dtype {array.dtype})')
    return array


def grid(values, batch):
    """The stored large-batch grid of notebook 09 (``runs`` and ``settings``) and one of its batch
    sizes; returns the sorted batch sizes."""
    mapping(values, 'grid')
    if 'runs' not in values or 'settings' not in values or not values['runs']:
        raise ValueError('grid must be the stored large-batch results (runs and settings): '
                         "helpers.scaling.stored_results('scaling_large_batch')")
    batches = sorted({r['batch'] for r in values['runs']})
    if whole(batch, 'batch', 1) not in batches:
        raise ValueError(f'batch must be one of the batch sizes of the grid, {batches}, got {batch}')
    return batches


def speedups(values):
    """``{(model, link): [speed-up at k = 1, 2, ...]}`` (notebook 09)."""
    mapping(values, 'speedup')
    if not values:
        raise ValueError('speedup is empty: give {(model, link): [speed-ups]}')
    for key, curve in values.items():
        if not isinstance(key, tuple) or len(key) != 2:
            raise TypeError(f'speedup keys must be pairs (model, link), got {key!r}')
        curve = [number(v, f'speedup[{key!r}]', 0) for v in ordered(curve, f'speedup[{key!r}]')]
        if not curve:
            raise ValueError(f'speedup[{key!r}] is empty')


def measured_step(step, alpha):
    """A measured push + pull step (``nbytes``, ``median``) slower than its two latencies ``alpha``
    (notebook 09): else no bandwidth can explain it."""
    mapping(step, 'step')
    if 'nbytes' not in step or 'median' not in step:
        raise ValueError(f"step must hold 'nbytes' and 'median', got keys {sorted(step)}")
    number(step['nbytes'], "step['nbytes']", 0)
    median, alpha = positive(step['median'], "step['median']"), number(alpha, 'alpha', 0)
    if median <= 2 * alpha:
        raise ValueError(f"step['median'] ({median:g} s) is no longer than its two latencies (2 alpha = "
                         f'{2 * alpha:g} s): no bandwidth explains it')


def pushpull_rows(rows, labels):
    """The rows of ``measure_pushpull`` and a label for every size they plot (notebook 09)."""
    rows = ordered(rows, 'rows')
    mapping(labels, 'labels')
    for i, r in enumerate(rows):
        if not _is_mapping(r):
            raise TypeError(f'rows[{i}] must be a row (a dict) of measure_pushpull, got {_short(r)}')
        if r.get('predicted') and r.get('size', 0) > 1 and r['size'] not in labels:
            raise ValueError(f'labels has no label for size {r["size"]} (rows[{i}])')


def loop(train_iter, test_iter, progress, **functions):
    """The arguments of a training loop (notebooks 05, 06): the two iterators as :func:`batches`,
    ``progress`` True or False, and every function of ``functions`` None (the default) or callable."""
    flag(progress, 'progress')
    for name, fn in functions.items():
        if fn is not None:
            function(fn, name)
    return batches(train_iter, 'train_iter'), batches(test_iter, 'test_iter')


def loss_scale(scale, updated, good_steps, growth_interval):
    """The arguments of dynamic loss scaling (notebook 12): ``scale`` a finite number > 0, ``updated``
    True or False, ``0 <= good_steps < growth_interval`` (at or past it the scale would never grow
    again: the count only meets ``growth_interval`` going up by one); returns ``(scale, good_steps)``."""
    flag(updated, 'updated')
    interval = whole(growth_interval, 'growth_interval', 1)
    return positive(scale, 'scale'), whole(good_steps, 'good_steps', 0, interval - 1)


def grid_runs(grid):
    """A stored large-batch grid (notebook 09): a dict whose ``'runs'`` is a non-empty list of runs,
    each a dict with ``batch``, ``recipe`` and ``lr``."""
    mapping(grid, 'grid')
    if 'runs' not in grid:
        raise ValueError("grid must be the stored large-batch results (a dict with 'runs'): "
                         "helpers.scaling.stored_results('scaling_large_batch')")
    runs = ordered(grid['runs'], "grid['runs']")
    if not runs:
        raise ValueError("grid['runs'] is empty: there is no run to group")
    for i, r in enumerate(runs):
        if not _is_mapping(r) or not {'batch', 'recipe', 'lr'} <= set(r):
            raise ValueError(f"grid['runs'][{i}] must be a run with 'batch', 'recipe' and 'lr', got {_short(r)}")
        number(r['lr'], f"grid['runs'][{i}]['lr']", 0)
    return runs


def setting_groups(groups, epochs, base_lr, base_batch):
    """The input of ``helpers.plot.grid_seeds`` (notebook 09): ``groups`` a non-empty dict
    ``{(batch, recipe, lr): [run, ...]}`` (``helpers.scaling.grid_by_setting``), every run with a
    ``test_acc`` list; ``epochs`` a whole number >= 1; ``base_lr`` > 0 and ``base_batch`` >= 1 naming a
    fixed-rate setting of the grid, where the rules start. Returns ``(base_lr, base_batch)``."""
    mapping(groups, 'groups')
    if not groups:
        raise ValueError('groups is empty: there is no setting to plot')
    for key, runs in groups.items():
        if not (isinstance(key, tuple) and len(key) == 3):
            raise ValueError(f'groups must be keyed by (batch, recipe, lr), got the key {_short(key)}')
        for r in ordered(runs, f'groups[{key!r}]'):
            if not _is_mapping(r) or not ordered(r.get('test_acc', ()), f'the test_acc of a run of {key!r}'):
                raise ValueError(f'every run of groups[{key!r}] needs a non-empty test_acc, got {_short(r)}')
    whole(epochs, 'epochs', 1)
    base_lr, base_batch = positive(base_lr, 'base_lr'), whole(base_batch, 'base_batch', 1)
    if not any(key[0] == base_batch and key[1] == 'fixed' and key[2] == base_lr for key in groups):
        raise ValueError(f'the grid has no run of batch {base_batch} (base_batch) at the fixed rate {base_lr:g} '
                         f'(base_lr): the rules start there')
    return base_lr, base_batch


def module(value, name):
    """``value`` if it is the dotted name of a Python module, as ``python -m`` takes it (notebook 08)."""
    import re
    if not re.fullmatch(r'[A-Za-z_]\w*(\.[A-Za-z_]\w*)*', text(value, name)):
        raise ValueError(f'{name} must be a module name such as helpers.dist_train, got {value!r}')
    return value


def whole_or_array(value, name, minimum=0):
    """``value`` if it is a whole number >= ``minimum``, or an array (or list) of them (notebook 09:
    a model evaluated for many ``k`` at once)."""
    import numpy as np
    if isinstance(value, numbers.Number) or _is_bool(value) or isinstance(value, (str, bytes)) or value is None:
        return whole(value, name, minimum)
    if _unordered(value):
        raise TypeError(f'{name} must be a whole number or an array of them, got {_short(value)}')
    try:
        array = np.asarray(value)
    except (TypeError, ValueError):
        raise TypeError(f'{name} must be a whole number or an array of them, got {_short(value)}') from None
    if array.dtype.kind not in 'iu':
        raise TypeError(f'{name} must hold whole numbers, got {_short(value)} (dtype {array.dtype})')
    if array.size and array.min() < minimum:
        raise ValueError(f'{name} must be at least {minimum}, got {_short(value)}')
    return value


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


# ------------------------------------------------------------------ the rest of notebooks 05-12 (issue 22's sweep)
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


_DTYPES = ('float16', 'float32', 'float64', 'uint8', 'int8', 'int32', 'int64')


def dtype(value, name='dtype'):
    """``numpy.dtype(value)`` if ``value`` names a dtype an NDArray can have (notebook 10):
    ``TypeError`` for a non-dtype (None, which NumPy would read as float64), ``ValueError`` for
    another dtype."""
    import numpy as np
    if not isinstance(value, (str, np.dtype)) and not (isinstance(value, type) and issubclass(value, np.generic)):
        raise TypeError(f'{name} must be a dtype such as \'float32\', got {_short(value)} ({type(value).__name__})')
    try:
        found = np.dtype(value)
    except TypeError:
        raise ValueError(f'{name} must be one of {_DTYPES}, got {value!r}') from None
    if found.name not in _DTYPES:
        raise ValueError(f'{name} must be one of {_DTYPES}, got {value!r}')
    return found


def views(flat, params, name='params'):
    """A flat 1-d NDArray and the NDArrays ``params`` whose sizes add up to its size (notebook 11:
    each parameter a view of the next elements of ``flat``)."""
    ndarray(flat, 'flat')
    params = parameters(params, name)
    if flat.ndim != 1:
        raise ValueError(f'flat must be a flat (1-d) array, got shape {flat.shape}')
    if not params or sum(p.size for p in params) != flat.size:
        raise ValueError(f'{name} must hold as many elements in all as flat ({flat.size}), got '
                         f'{sum(p.size for p in params)} in {len(params)} array(s)')


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


def checkpoint(prefix, net, trainer, device=None, load=False):
    """The arguments of ``save_checkpoint`` (a ``device`` the network lives on) and, with ``load``,
    of ``load_checkpoint`` (a checkpoint at ``prefix``) (notebook 12). Nothing is written or read
    before this passes."""
    import os
    path(prefix, 'prefix')
    gluon_step(net, trainer)
    if load:
        missing = [f'{prefix}{ext}' for ext in ('.params', '.states') if not os.path.isfile(f'{prefix}{ext}')]
        if missing:
            raise FileNotFoundError(f'prefix {prefix!r}: no checkpoint there ({", ".join(missing)} missing)')
        return
    context(device, 'device')
    if not os.path.isdir(os.path.dirname(os.path.abspath(prefix))):
        raise FileNotFoundError(f'prefix {prefix!r}: its directory does not exist')
    for p in net.collect_params().values():
        if device not in p.list_ctx():
            raise ValueError(f'device {device} holds no copy of {p.name}: the network lives on {p.list_ctx()}')


def scaled_step(device_params, devs, lr, scale):
    """The arguments of a loss-scaled step (notebook 12): :func:`replicas`, a learning rate and a
    loss scale, each a finite number > 0 (a scale of nan would skip every step as an overflow)."""
    replicas(device_params, devs)
    positive(lr, 'lr')
    positive(scale, 'scale')


def accumulation(micro_batches, device_params, devs, lr):
    """The arguments of an accumulated step (notebook 12): a non-empty list of micro-batches
    ``(X, y)``, :func:`replicas` and a learning rate > 0. Nothing is computed before this passes."""
    replicas(device_params, devs)
    positive(lr, 'lr')
    found = ordered(micro_batches, 'micro_batches')
    if not found:
        raise ValueError('micro_batches is empty: a step needs at least one micro-batch (X, y)')
    for i, b in enumerate(found):
        if not isinstance(b, (tuple, list)) or len(b) != 2:
            raise TypeError(f'micro_batches[{i}] must be a pair (X, y), got {_short(b)}')
        ndarray(b[0], f'micro_batches[{i}] X')


def updaters(values, name='updaters'):
    """``list(values)`` if it is a list of MXNet optimizer updaters (``mx.optimizer.get_updater``; notebook 11)."""
    import mxnet as mx
    values = ordered(values, name)
    for i, u in enumerate(values):
        if not isinstance(u, mx.optimizer.Updater):
            raise TypeError(f'{name}[{i}] must be an updater (mx.optimizer.get_updater(...)), got {_short(u)}')
    return values


def memory_cases(cases):
    """``[(k, sharded), ...]`` of ``measure_memory`` (notebook 11): at least one case, ``k`` a
    whole number of devices >= 1, ``sharded`` True or False."""
    found = ordered(cases, 'cases')
    if not found:
        raise ValueError('cases is empty: give at least one (k, sharded)')
    for i, case in enumerate(found):
        if isinstance(case, (str, bytes)) or not isinstance(case, collections.abc.Sequence):
            raise TypeError(f'cases[{i}] must be a pair (k, sharded), got {_short(case)}')
        if len(case) != 2:
            raise ValueError(f'cases[{i}] must be a pair (k, sharded), got {_short(case)}')
        whole(case[0], f'cases[{i}]: k', 1, MAX_DEVICES)
        flag(case[1], f'cases[{i}]: sharded')
    return found


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


def spread_runs(runs):
    """``{label: [history, ...]}`` of ``helpers.plot.history_spread`` (notebook 05): at least one
    label, each with at least one history (:func:`curves`), all of one label over the same epochs."""
    mapping(runs, 'runs')
    if not runs:
        raise ValueError('runs is empty: give {label: [history, ...]}')
    for label, hs in runs.items():
        if _is_mapping(hs):
            raise TypeError(f'runs[{label!r}] must be a list of histories (one per seed), got one history')
        hs = ordered(hs, f'runs[{label!r}]')
        if not hs:
            raise ValueError(f'runs[{label!r}] has no history')
        curves(dict(enumerate(hs)))
        if any(list(h['epoch']) != list(hs[0]['epoch']) for h in hs):
            raise ValueError(f'runs[{label!r}]: every history of a label must have the same epochs')
    return runs


def span_panels(panels):
    """``{title: spans}`` of ``helpers.plot.timelines`` (notebook 10): at least one panel, each
    with at least one span (:func:`spans`)."""
    mapping(panels, 'panels')
    if not panels:
        raise ValueError('panels is empty: give {title: spans}')
    for title, found in panels.items():
        if not spans(found, f'panels[{title!r}]'):
            raise ValueError(f'panels[{title!r}] has no span')
    return panels


def seed_runs(runs, stores=('dist_sync', 'dist_async')):
    """The stored runs of ``benchmarks/dist_sync_async.py`` (notebook 08): a list of dicts, each
    with ``kvstore`` one of ``stores`` and ``ranks`` (at least two, each with ``seconds`` and
    ``test_acc``), at least one run per store."""
    found = ordered(runs, 'runs')
    for i, r in enumerate(found):
        if not _is_mapping(r):
            raise TypeError(f'runs[{i}] must be a run (a dict with kvstore and ranks), got {_short(r)}')
        if 'kvstore' not in r or 'ranks' not in r:
            raise ValueError(f'runs[{i}] must have kvstore and ranks, got keys {sorted(map(str, r))}')
        choice(r['kvstore'], f'runs[{i}] kvstore', stores)
        ranks = ordered(r['ranks'], f'runs[{i}] ranks')
        if len(ranks) < 2:
            raise ValueError(f'runs[{i}] must have ranks 0 and 1, got {len(ranks)} rank(s)')
        for j, rank in enumerate(ranks[:2]):
            mapping(rank, f'runs[{i}] ranks[{j}]')
            for key in ('seconds', 'test_acc'):
                if key not in rank:
                    raise ValueError(f'runs[{i}] ranks[{j}] has no {key}')
                number(rank[key], f'runs[{i}] ranks[{j}] {key}')
    missing = [s for s in stores if not any(r['kvstore'] == s for r in found)]
    if missing:
        raise ValueError(f'runs has no run of {", ".join(missing)}')
    return found


def environment(env, name='env'):
    """``env`` None or a dict of strings to strings (environment variables added to a process's own; notebook 06)."""
    if env is None:
        return {}
    mapping(env, name)
    for k, v in env.items():
        if not isinstance(k, str) or not isinstance(v, str):
            raise TypeError(f'{name} must map names to strings, got {k!r}: {_short(v)}')
    return env


# --- The emulated link (notebooks 04, 05, 09-12) --------------------------------------------------
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
    where = to if isinstance(to, mx.Context) else to.context
    if where == x.context:
        raise ValueError(f'to: Link.send sends x from {x.context} to the same device; a link joins two '
                         'different devices (copy within a device with copy_to)')


def sweep_times(table, name, sizes):
    """Seconds per ``(algorithm, k, nbytes)`` of an allreduce sweep (``helpers.plot.allreduce_sweep``,
    notebook 04): a non-empty dict, every key a (name, whole k >= 1, whole size) triple, every value a
    number >= 0, and every algorithm and k measured at every one of ``sizes``."""
    mapping(table, name)
    if not table:
        raise ValueError(f'{name} is empty: there is nothing to draw')
    for key, seconds in table.items():
        if not (isinstance(key, tuple) and len(key) == 3 and isinstance(key[0], str)):
            raise TypeError(f'{name} must map (algorithm, k, bytes) to seconds, got the key {_short(key)}')
        whole(key[1], f'{name} key {key!r}: k', 1, MAX_DEVICES)
        whole(key[2], f'{name} key {key!r}: bytes', 0)
        number(seconds, f'{name}[{key!r}]', 0)
    missing = [(a, k, n) for a, k in {(a, k) for a, k, _ in table} for n in sizes if (a, k, n) not in table]
    if missing:
        raise ValueError(f'{name} has no time for {missing[0]}: every algorithm and k needs every size')
    return table
