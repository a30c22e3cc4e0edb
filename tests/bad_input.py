"""The machinery of the bad-input sweep (tests/test_bad_input.py): *kinds* of argument, each with a
Hypothesis strategy of values that are wrong for it, and a runner that calls a helper with one of
them under a time bound, a memory bound, and guards that no process is started and no signal sent.

A kind's :meth:`Kind.bad` draws a :class:`Bad`: a value and the error the policy of
``helpers.checks`` demands for it -- ``TypeError`` for a value of the wrong type, ``ValueError`` for
a value of the right type that is not allowed (docs: helpers/checks/__init__.py). Every value a kind draws
is wrong *by construction*: a helper that returns normally has accepted a bad value (a silent wrong
answer), never the sweep being too strict.
"""
import contextlib
import ctypes
import fractions
import decimal
import math
import os
import resource
import subprocess
import threading
import time

import mxnet as mx
import numpy as np
from hypothesis import strategies as st

from helpers import checks

# ---------------------------------------------------------------------------------------- the bounds
SECONDS = 20.0           # a call that has not returned after this long is a hang (bad input is refused at once)
MEMORY = 2 << 30         # bytes of new data a call may allocate (RLIMIT_DATA): past it, an unbounded allocation


class Bad:
    """A value wrong for a kind, the error the policy demands (``TypeError`` or ``ValueError``, or
    a kind's own), and what is wrong with it, in words."""

    def __init__(self, value, error, what):
        self.value, self.error, self.what = value, error, what

    def __repr__(self):
        return f'{self.what}: {_short(self.value)} (expects {self.error.__name__})'


def _short(value):
    text = repr(value)
    return text if len(text) <= 120 else text[:117] + '...'


def type_error(what):
    return lambda v: Bad(v, TypeError, what)


def value_error(what, error=ValueError):
    return lambda v: Bad(v, error, what)


class _Opaque:
    """An object of no type any helper expects."""

    def __repr__(self):
        return '<object>'


def _gen():
    yield 1


# Values of many types, to be filtered by each kind: everything a reader might pass by mistake.
SAMPLES = (mx.cpu(0), mx.gpu(0), np.float64(1.5), np.float32(2.0), np.int64(2), np.bool_(True), np.zeros(3),
           np.array(2.0), np.arange(2), fractions.Fraction(1, 2), fractions.Fraction(2), decimal.Decimal('2'),
           range(3), print, str, _Opaque())


def junk():
    """Values of every common type: None, bools, numbers, strings, bytes, containers, arrays, contexts."""
    return st.one_of(
        st.none(), st.booleans(), st.integers(-3, 3), st.floats(), st.text(max_size=4), st.binary(max_size=3),
        st.complex_numbers(max_magnitude=4, allow_nan=False, allow_infinity=False),
        st.lists(st.integers(-2, 2), max_size=3), st.tuples(st.text(max_size=2)),
        st.dictionaries(st.text(max_size=2), st.integers(0, 3), max_size=2),
        st.frozensets(st.integers(0, 3), max_size=2), st.sampled_from(SAMPLES),
        st.builds(lambda n: mx.nd.zeros(n), st.integers(1, 3)), st.builds(_gen))


def _integral(v):
    import numbers
    return isinstance(v, numbers.Integral) and not isinstance(v, (bool, np.bool_))


def _real(v):
    import numbers
    return isinstance(v, numbers.Real) and not isinstance(v, (bool, np.bool_))


# --------------------------------------------------------------------------------------------- kinds
class Kind:
    """An argument's kind: :meth:`bad` is a strategy of :class:`Bad` values, given the good value of the
    baseline call (``good``) and all of its arguments (``call``)."""

    def bad(self, good, call):
        raise NotImplementedError

    def __repr__(self):
        return type(self).__name__


class Count(Kind):
    """A whole number from ``minimum`` to ``maximum`` (``int`` or a NumPy integer, not ``bool``)."""

    def __init__(self, minimum=0, maximum=None):
        self.minimum, self.maximum = minimum, maximum

    def bad(self, good, call):
        wrong = [junk().filter(lambda v: not _integral(v)).map(type_error('not a whole number')),
                 st.sampled_from([2.0, np.float64(2.0), fractions.Fraction(2), decimal.Decimal(2), '2', True,
                                  np.bool_(True)]).map(type_error('a whole number of another type')),
                 st.integers(max_value=self.minimum - 1).map(value_error(f'below {self.minimum}')),
                 st.integers(-2 ** 63, self.minimum - 1).map(np.int64).map(value_error(f'below {self.minimum}'))]
        if self.maximum is not None:
            wrong += [st.integers(self.maximum + 1, 10 ** 30).map(value_error(f'above {self.maximum}')),
                      st.sampled_from([v for v in (10 ** 12, 2 ** 63, np.int64(2 ** 62), 10 ** 100)
                                       if v > self.maximum]).map(value_error(f'above {self.maximum}'))]
        return st.one_of(wrong)

    def __repr__(self):
        return f'Count({self.minimum}, {self.maximum})'


class Number(Kind):
    """A finite real number in a range: above ``low`` (or from it, ``low_ok``), up to ``high``."""

    def __init__(self, low=None, high=None, low_ok=False, finite=True):
        self.low, self.high, self.low_ok, self.finite = low, high, low_ok, finite

    def bad(self, good, call):
        wrong = [junk().filter(lambda v: not _real(v)).map(type_error('not a number')),
                 st.sampled_from([True, np.bool_(False), '1.5', 1j, [1.0], np.array([1.0])]).map(
                     type_error('a number of another type'))]
        if self.finite:
            wrong.append(st.sampled_from([math.nan, math.inf, -math.inf, np.float32('nan'), np.float64('inf')])
                         .map(value_error('not finite')))
        if self.low is not None:
            below = st.floats(max_value=self.low, allow_nan=False, allow_infinity=False,
                              exclude_max=self.low_ok)
            top = math.ceil(self.low) - 1 if self.low_ok else math.floor(self.low)
            wrong += [below.map(value_error(f'below {self.low}')),
                      st.integers(-10 ** 6, top).map(value_error(f'below {self.low}'))]
        if self.high is not None:
            wrong.append(st.floats(min_value=self.high, exclude_min=True, allow_infinity=False)
                         .map(value_error(f'above {self.high}')))
        return st.one_of(wrong)

    def __repr__(self):
        return f'Number({self.low}, {self.high})'


def Positive(high=None):
    """A finite number > 0 (``checks.positive``)."""
    return Number(0, high)


def NonNegative(high=None):
    """A finite number >= 0."""
    return Number(0, high, low_ok=True)


def Seconds():
    """A time limit: a finite number of seconds > 0, at most ``checks.MAX_SECONDS``."""
    return Number(0, checks.MAX_SECONDS)


class Choice(Kind):
    """One of a few strings (``None`` among them if ``none_ok``)."""

    def __init__(self, options):
        self.options = tuple(options)

    def bad(self, good, call):
        strings = [o for o in self.options if isinstance(o, str)]
        return st.one_of(
            junk().filter(lambda v: not isinstance(v, str) and not (v is None and None in self.options))
            .map(type_error('not a string')),
            st.text(max_size=8).filter(lambda v: v not in self.options).map(value_error('not one of the options')),
            st.sampled_from([s.upper() + ' ' for s in strings] or ['?']).map(value_error('a near miss')))

    def __repr__(self):
        return f'Choice{self.options}'


class Flag(Kind):
    """``True`` or ``False`` (a NumPy bool too): not a string, a number or None, which Python would
    read as true or false and so choose a branch the caller did not mean."""

    def bad(self, good, call):
        return st.one_of(junk().filter(lambda v: not isinstance(v, (bool, np.bool_))).map(type_error('not a bool')),
                         st.sampled_from(['False', 0, 1, None, 'no']).map(type_error('a truthy or falsy non-bool')))


class Text(Kind):
    """A string; ``bad_values``: strings the helper must refuse (by default the empty one)."""

    def __init__(self, bad_values=('',)):
        self.bad_values = tuple(bad_values)

    def bad(self, good, call):
        wrong = [junk().filter(lambda v: not isinstance(v, str)).map(type_error('not a string'))]
        if self.bad_values:
            wrong.append(st.sampled_from(self.bad_values).map(value_error('a string not allowed')))
        return st.one_of(wrong)


class Path(Kind):
    """A path (``str`` or ``os.PathLike``); ``missing``: the error for a path where nothing is."""

    def __init__(self, missing=None):
        self.missing = missing

    def bad(self, good, call):
        wrong = [junk().filter(lambda v: v is not None and not isinstance(v, (str, os.PathLike)))
                 .map(type_error('not a path'))]
        if self.missing:
            wrong.append(st.sampled_from(['/nonexistent/mxdp-sweep', '/proc/self/nothing-here'])
                         .map(value_error('nothing there', self.missing)))
        return st.one_of(wrong)


class Callable(Kind):
    """A function (anything callable)."""

    def bad(self, good, call):
        return junk().filter(lambda v: not callable(v)).map(type_error('not callable'))


class Strings(Kind):
    """A non-empty list of strings (a command line)."""

    def bad(self, good, call):
        return st.one_of(
            junk().filter(lambda v: not isinstance(v, (list, tuple))).map(type_error('not a list')),
            st.sampled_from(['python -c 1', ('python', 3), ['python', None], [b'python'], [['python']]])
            .map(type_error('not a list of strings')),
            st.sampled_from([[], ()]).map(value_error('empty')))


class Mapping(Kind):
    """A dict (``None`` allowed where the baseline says so)."""

    def bad(self, good, call):
        return junk().filter(lambda v: v is not None and not isinstance(v, dict)).map(type_error('not a dict'))


class Devices(Kind):
    """A list of distinct ``mx.Context``, at least ``minimum`` of them, that exist on this machine
    (unless not ``present``: a helper that answers for any list)."""

    def __init__(self, minimum=1, present=True):
        self.minimum, self.present = minimum, present

    def bad(self, good, call):
        gpus = mx.context.num_gpus()
        wrong = [
            junk().filter(lambda v: not isinstance(v, (list, tuple))).map(type_error('not a list of contexts')),
            st.sampled_from([[0, 1], ['cpu(0)'], [None], [mx.cpu(0), 'cpu(1)'], (mx.cpu(0), 1)])
            .map(type_error('a list holding something else')),
            st.sampled_from([{mx.cpu(0): 1, mx.cpu(1): 2}, {mx.cpu(0), mx.cpu(1)}, frozenset([mx.cpu(0)])])
            .map(type_error('an unordered collection (the order of the devices matters)')),
            st.sampled_from([[mx.cpu(0), mx.cpu(0)], [mx.cpu(1), mx.cpu(0), mx.cpu(1)]]).map(value_error('repeated')),
            st.sampled_from([[mx.cpu(-1)], [mx.cpu(0), mx.Context('cpu', -5)]]).map(value_error('a negative id')),
        ]
        if self.minimum >= 1:
            wrong.append(st.sampled_from([[], ()]).map(value_error('empty')))
        if self.present:
            wrong.append(st.sampled_from([[mx.gpu(gpus)], [mx.cpu(0), mx.gpu(gpus + 3)]])
                         .map(value_error('a GPU that is not there')))
        if self.minimum > 1:
            wrong.append(st.just([mx.cpu(0)] * 1).map(value_error(f'fewer than {self.minimum}')))
        return st.one_of(wrong)


class Device(Kind):
    """One ``mx.Context`` that exists on this machine."""

    def bad(self, good, call):
        gpus = mx.context.num_gpus()
        return st.one_of(
            junk().filter(lambda v: not isinstance(v, mx.Context)).map(type_error('not a context')),
            st.sampled_from([[mx.cpu(0)], (mx.cpu(0),)]).map(type_error('a list of one context')),
            st.sampled_from([mx.gpu(gpus), mx.cpu(-1)]).map(value_error('a device that is not there')))


class Array(Kind):
    """An NDArray. ``bad_values``: a function of the good array returning NDArrays that are wrong
    for it (a shape, a dtype, empty); ``value_error``: what they raise (ValueError)."""

    def __init__(self, bad_values=None):
        self.bad_values = bad_values

    def bad(self, good, call):
        wrong = [junk().filter(lambda v: not isinstance(v, (mx.nd.NDArray, np.ndarray)))   # (an array of another
                 .map(type_error('not an NDArray')),                                     # length: two faults)
                 st.just(None).map(lambda _: good.asnumpy()).map(type_error('a NumPy array of the same values')),
                 st.just(None).map(lambda _: good.asnumpy().tolist()).map(type_error('a list of the same values'))]
        if self.bad_values:
            wrong.append(st.sampled_from(range(len(self.bad_values(good, call))))
                         .map(lambda i: self.bad_values(good, call)[i]).map(value_error('an NDArray of a wrong shape')))
        return st.one_of(wrong)


class Arrays(Kind):
    """A list of dense NDArrays, one per device, of one shape and dtype (an allreduce's input);
    ``min_size``: 'k' if every array needs at least one element per array (the ring); ``floating``:
    integers are refused too (a sum that casts to float16 would get them wrong)."""

    def __init__(self, min_size=None, floating=False):
        self.min_size, self.floating = min_size, floating

    def bad(self, good, call):
        k = len(good)
        like = lambda: [a.copy() for a in good]

        def one(fn):
            return lambda _: fn(like())

        def retyped(xs):
            xs[-1] = xs[-1].astype('float64' if xs[-1].dtype != np.float64 else 'float32')
            return xs

        def reshaped(xs):
            xs[-1] = mx.nd.zeros((xs[-1].size + 1,), ctx=xs[-1].context, dtype=xs[-1].dtype)
            return xs

        wrong = [
            junk().filter(lambda v: not isinstance(v, (list, tuple))).map(type_error('not a list')),
            st.just(None).map(lambda _: good[0].copy()).map(type_error('a single NDArray')),
            st.just(None).map(lambda _: [a.asnumpy() for a in good]).map(type_error('NumPy arrays')),
            st.just(None).map(lambda _: {i: a for i, a in enumerate(like())}).map(type_error('a dict of NDArrays')),
            st.just(None).map(lambda _: like()[:-1] + [None]).map(type_error('None among them')),
            st.just(None).map(one(retyped)).map(type_error('two dtypes')),
            st.just([]).map(value_error('empty')),
            st.just(None).map(lambda _: [mx.nd.array(np.zeros(0, np.float32), ctx=a.context) for a in good])
            .map(value_error('zero-size')),
            st.just(None).map(lambda _: [a.reshape((1, -1)).tostype('row_sparse') for a in good])
            .map(type_error('row_sparse')),
        ]
        if self.floating:
            wrong.append(st.sampled_from(['int32', 'int64', 'uint8']).map(
                lambda t: [a.astype(t) for a in good]).map(type_error('integers (float16 would round them)')))
        if k > 1:
            wrong.append(st.just(None).map(one(reshaped)).map(value_error('two shapes')))
        if self.min_size == 'k' and k > 1:
            wrong.append(st.just(None).map(lambda _: [mx.nd.ones((k - 1,), ctx=a.context) for a in good])
                         .map(value_error('fewer elements than arrays')))
        return st.one_of(wrong)


class Weights(Kind):
    """One finite number >= 0 per device, not all zero, in a list, a tuple or a NumPy array (in
    order: a dict or a set is refused). ``k``: the number of devices, or the name of the argument
    of the call that holds the devices (or the count)."""

    def __init__(self, k):
        self.k = k

    def bad(self, good, call):
        k = self.k if isinstance(self.k, int) else call[self.k]
        k = k if isinstance(k, int) else len(k)
        ones = [1.0] * k
        return st.one_of(
            st.sampled_from([dict(enumerate([1] * k)), dict(enumerate(range(1, k + 1))), {str(i): 1 for i in range(k)},
                             set(range(1, k + 1)), frozenset(range(1, k + 1))])
            .map(type_error('a dict or a set: no order, or keys taken for weights')),
            junk().filter(lambda v: v is not None and not isinstance(v, (list, tuple, np.ndarray, range)))
            .map(type_error('not a list')),
            st.sampled_from(['1' * k, None, True, 'x', np.bool_(False), 1j, [1.0]]).flatmap(
                lambda w: st.integers(0, k - 1).map(lambda i: ones[:i] + [w] + ones[i + 1:]))
            .filter(lambda ws: ws != ones).map(type_error('a weight that is not a number')),
            st.sampled_from([k + 1, k - 1, 0, 2 * k + 1]).map(lambda n: ones[:1] * n)
            .map(value_error('one per device')),
            st.sampled_from([-1.0, -1e-9, math.nan, math.inf, -math.inf, np.float32('nan')]).flatmap(
                lambda w: st.integers(0, k - 1).map(lambda i: ones[:i] + [w] + ones[i + 1:]))
            .map(value_error('negative or not finite')),
            st.sampled_from([[0] * k, [0.0] * k, np.zeros(k)]).map(value_error('all zero')))


class Env(Kind):
    """An environment variable (the argument ``$NAME`` of an entry): a string; ``bad_values`` are
    strings it must refuse with a ValueError naming the variable."""

    def __init__(self, bad_values):
        self.bad_values = tuple(bad_values)

    def bad(self, good, call):
        return st.sampled_from(self.bad_values).map(value_error('a value the variable does not allow'))


class Custom(Kind):
    """A kind of one helper's own: ``values`` is a list of :class:`Bad` (or a function of the good
    value and the call returning one)."""

    def __init__(self, values):
        self.values = values

    def bad(self, good, call):
        values = self.values(good, call) if callable(self.values) else self.values
        return st.sampled_from(range(len(values))).map(
            lambda i: (self.values(good, call) if callable(self.values) else self.values)[i])


def sizes_list(minimum=1):
    """A list of whole numbers >= ``minimum`` (key sizes, parameter sizes)."""
    return Custom(lambda good, call: [
        Bad(5, TypeError, 'not a list'), Bad('12', TypeError, 'a string'), Bad(None, TypeError, 'None'),
        Bad([4, 2.0], TypeError, 'a float among them'), Bad([4, 'x'], TypeError, 'a string among them'),
        Bad([True], TypeError, 'a bool among them'), Bad({4: 1}, TypeError, 'a dict'),
        Bad([4, minimum - 1], ValueError, f'below {minimum}'), Bad([-3], ValueError, 'negative')])


# ------------------------------------------------------------------------------------------- guards
class WouldStart(BaseException):
    """Raised in place of starting a process: the sweep never starts one (a BaseException, so that no
    helper's ``except Exception`` swallows it)."""


class WouldSignal(BaseException):
    """Raised in place of sending a signal: the sweep never sends one."""


class Hang(BaseException):
    """Raised in a call's thread once it ran past :data:`SECONDS`."""


@contextlib.contextmanager
def no_processes_no_signals():
    """While inside: starting a process raises :class:`WouldStart`, sending a signal :class:`WouldSignal`."""
    import psutil

    def would_start(self, args, *a, **kw):
        raise WouldStart(f'would start {args!r}')

    def would_signal(*args, **kwargs):
        raise WouldSignal(f'would send a signal: {args!r}')

    saved = (subprocess.Popen.__init__, os.kill, os.killpg, psutil.Process.send_signal,
             psutil.Process.kill, psutil.Process.terminate)
    subprocess.Popen.__init__ = would_start
    os.kill = os.killpg = would_signal
    psutil.Process.send_signal = psutil.Process.kill = psutil.Process.terminate = would_signal
    try:
        yield
    finally:
        (subprocess.Popen.__init__, os.kill, os.killpg, psutil.Process.send_signal,
         psutil.Process.kill, psutil.Process.terminate) = saved


def _data_bytes():
    with open('/proc/self/status') as f:
        for line in f:
            if line.startswith('VmData:'):
                return int(line.split()[1]) * 1024
    return 0


@contextlib.contextmanager
def memory_bound(extra=MEMORY):
    """While inside, this process may hold at most ``extra`` more bytes of data (RLIMIT_DATA): an
    allocation past it fails (MemoryError, MXNet's "Failed to allocate") instead of taking the
    machine's memory."""
    soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
    limit = _data_bytes() + extra
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_DATA, (limit, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_DATA, (soft, hard))


@contextlib.contextmanager
def environment(values):
    """Set (or, for None, unset) environment variables while inside."""
    saved = {k: os.environ.get(k) for k in values}
    for k, v in values.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


class Outcome:
    """What a bounded call did: ``value`` (it returned), ``error`` (it raised), ``hung`` (it did not
    return within the bound), ``seconds``."""

    def __init__(self):
        self.value = self.error = None
        self.returned = self.hung = False
        self.seconds = 0.0


def bounded(fn, seconds=SECONDS, extra=MEMORY):
    """Call ``fn()`` in a thread of its own with at most ``seconds`` and ``extra`` bytes of new data,
    with no process started and no signal sent; return its :class:`Outcome`. A call still running
    past the bound gets :class:`Hang` raised inside it (this stops Python code; code blocked in C
    keeps its thread, which is a daemon)."""
    out = Outcome()

    def target():
        try:
            out.value, out.returned = fn(), True
        except BaseException as e:       # noqa: BLE001 -- judged by the test
            out.error = e

    thread = threading.Thread(target=target, daemon=True, name='bad-input-call')
    start = time.perf_counter()
    with no_processes_no_signals(), memory_bound(extra):
        thread.start()
        thread.join(seconds)
        if thread.is_alive():
            out.hung = True
            ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread.ident), ctypes.py_object(Hang))
            thread.join(5)
    out.seconds = time.perf_counter() - start
    try:
        mx.nd.waitall()                  # an error MXNet raised asynchronously belongs to this call
    except mx.base.MXNetError as e:
        if out.error is None and not out.hung:
            out.error, out.returned = e, False
    return out


class Obj(Kind):
    """An object of one of ``types`` (``None`` too if ``none``); ``values``: more :class:`Bad` of
    the right type (a function of the good value and the call, or a list)."""

    def __init__(self, types, none=False, values=()):
        self.types, self.none, self.values = types, none, values

    def bad(self, good, call):
        wrong = [junk().filter(lambda v: not isinstance(v, self.types) and not (self.none and v is None))
                 .map(type_error(f'not a {self.types}'))]
        values = self.values(good, call) if callable(self.values) else list(self.values)
        if values:
            wrong.append(Custom(lambda g, c: self.values(g, c) if callable(self.values) else list(self.values))
                         .bad(good, call))
        return st.one_of(wrong)


class Maybe(Kind):
    """``kind``, or None (which the helper allows, often as its default): None is never drawn."""

    def __init__(self, kind):
        self.kind = kind

    def bad(self, good, call):
        return self.kind.bad(good, call).filter(lambda b: b.value is not None)

    def __repr__(self):
        return f'Maybe({self.kind!r})'
