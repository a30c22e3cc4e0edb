"""The kinds of value every helper checks, with the one policy of :mod:`helpers.checks` (notebook 00
on): whole numbers and numbers, flags, choices, strings, paths, functions, ordered collections,
arrays of numbers, what fits in memory, and MXNet's devices, contexts, NDArrays, parameters and the
arrays of an allreduce. Standard library only at import time: the checks of arrays and devices
import NumPy or MXNet when they are called.
"""
import collections.abc
import math
import numbers

__all__ = ['MAX_DEVICES', 'MAX_SECONDS', 'MAX_PROCESSES', 'whole', 'whole_or_array', 'positive', 'number', 'seconds',
           'index', 'flag', 'choice', 'text', 'module', 'path', 'function', 'ordered', 'counts', 'mapping', 'strings',
           'environment', 'numeric', 'vector', 'dtype', 'fits', 'devices', 'context', 'ndarray', 'parameters', 'arrays']


# ------------------------------------------------------------------------------------------ numbers
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


def index(i, k, name, count_name='k'):
    """``(int(i), int(k))`` if ``k`` >= 1 things (at most :data:`MAX_DEVICES`) and ``i`` is one of
    them, ``0 <= i < k`` (notebooks 04, 08: a device, a worker's rank). A negative ``i`` would
    silently count from the end."""
    k = whole(k, count_name, 1, MAX_DEVICES)
    return whole(i, name, 0, k - 1), k


def flag(value, name):
    """``value`` as a ``bool`` if it is one (a NumPy bool too; notebook 00): ``TypeError``
    otherwise. A string or a number would be read as true or false, and ``'False'`` is true."""
    if not _is_bool(value):
        raise TypeError(f'{name} must be True or False, got {value!r} ({type(value).__name__})')
    return bool(value)


# --------------------------------------------------------------------- strings, paths and functions
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


def module(value, name):
    """``value`` if it is the dotted name of a Python module, as ``python -m`` takes it (notebook 08)."""
    import re
    if not re.fullmatch(r'[A-Za-z_]\w*(\.[A-Za-z_]\w*)*', text(value, name)):
        raise ValueError(f'{name} must be a module name such as helpers.dist_train, got {value!r}')
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


# -------------------------------------------------------------------------------------- collections
def _is_mapping(value):
    return isinstance(value, collections.abc.Mapping)


def _unordered(value):
    """A string, a dict or a set (or a class): iterable, but not an ordered collection of things."""
    return isinstance(value, (str, bytes, set, frozenset, type)) or _is_mapping(value)


def _short(value):
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + '...'


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


def environment(env, name='env'):
    """``env`` None or a dict of strings to strings (environment variables added to a process's own; notebook 06)."""
    if env is None:
        return {}
    mapping(env, name)
    for k, v in env.items():
        if not isinstance(k, str) or not isinstance(v, str):
            raise TypeError(f'{name} must map names to strings, got {k!r}: {_short(v)}')
    return env


# --------------------------------------------------------------------- arrays of numbers and memory
def _is_array(value):
    """A NumPy array or an MXNet NDArray (checked by type name: no import of either)."""
    return any(c.__module__.split('.')[0] in ('numpy', 'mxnet') and c.__name__ in ('ndarray', 'NDArray')
               for c in type(value).__mro__)


def numeric(values, name):
    """``values`` as a NumPy array of numbers, any shape (notebook 04): ``TypeError`` for strings,
    dicts, None or anything NumPy cannot read as numbers."""
    return _numbers(values, name, 'an array of numbers')


def _numbers(values, name, what):
    """:func:`numeric`, and the first check of :func:`vector`; ``what`` names what was expected."""
    import numpy as np
    if isinstance(values, (str, bytes, dict, set, frozenset)) or values is None:
        raise TypeError(f'{name} must be {what}, got {_short(values)} ({type(values).__name__})')
    try:
        array = np.asarray(values.asnumpy() if hasattr(values, 'asnumpy') else values)
    except (TypeError, ValueError):
        raise TypeError(f'{name} must be {what}, got {_short(values)}') from None
    if array.dtype.kind not in 'iuf':
        raise TypeError(f'{name} must hold numbers, got {_short(values)} (dtype {array.dtype})')
    return array


def vector(values, name):
    """``values`` as a 1-D float32 NumPy array of finite numbers, at least one (notebook 07)."""
    import numpy as np
    array = _numbers(values, name, 'a 1-D array of numbers')
    if array.ndim != 1 or array.size == 0:
        raise ValueError(f'{name} must be a non-empty 1-D array, got shape {array.shape}')
    if not np.all(np.isfinite(array)):
        raise ValueError(f'{name} must hold finite numbers, got {_short(values)}')
    return array.astype(np.float32)


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


# --------------------------------------------------------- MXNet's devices, NDArrays and parameters
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
    usable driver; the tests stand in GPUs by replacing it). helpers.devices sits above the checks,
    which import no module of helpers/: it hands its count down when it is imported
    (:func:`count_gpus_with`). A process that has not imported it yet asks MXNet the same way."""
    if _count_gpus is not None:
        return _count_gpus()
    import mxnet as mx
    try:
        return mx.context.num_gpus()
    except mx.base.MXNetError:          # a CUDA build without a usable driver
        return 0


_count_gpus = None


def count_gpus_with(counter):
    """Count this machine's GPUs with ``counter()`` from now on (notebook 00: ``helpers.devices`` hands
    down its ``num_gpus``, so that the checks and the choice of devices count the same GPUs)."""
    global _count_gpus
    _count_gpus = function(counter, 'counter')


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


def arrays(arrs, min_size=1, ring=False, floating=False):
    """Check the input of an allreduce (notebook 04) and return ``k``, the number of arrays.

    A list (not a single NDArray) of at least one dense NDArray (a ``row_sparse`` or ``csr`` one is
    refused: the series' collectives add whole arrays, element by element), all of one shape and
    dtype, with at least ``min_size`` elements (MXNet cannot copy a zero-size array), and with
    ``ring``, at least one element per array (the ring cuts each into one chunk per device). With
    ``floating`` (notebook 13's 16-bit allreduce, which casts to float16 on the way), only floating-point
    arrays: float16 holds every integer only up to 2048, so integers would come back wrong, where the
    plain allreduce adds them exactly. Nothing is copied before this passes, so a refused call leaves
    every array untouched.
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
        if a.stype != 'default':
            raise TypeError(f'allreduce takes dense NDArrays, but array {i} is {a.stype}: the collectives '
                            "add whole arrays element by element; convert it with .tostype('default')")
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
    if floating and not np.issubdtype(dtype, np.floating):
        raise TypeError(f'a 16-bit allreduce sums floating-point arrays (gradients), got {dtype}: it casts '
                        'to float16, which holds every integer only up to 2048, so the sum would come back '
                        'wrong. Add integers with allreduce, which is exact for them')
    if arrs[0].size == 0:
        raise ValueError(f'allreduce of empty arrays (shape {shape}): there is nothing to sum, '
                         'and MXNet cannot copy a zero-size array between devices')
    if arrs[0].size < min_size:
        raise ValueError(f'the ring cuts each array into one chunk per device: it needs at least '
                         f'{min_size} elements, got {arrs[0].size} (use allreduce_naive or allreduce)')
    return len(arrs)
