"""Checks a reader can trust: every function a notebook teaches by hand, tried against the laws the
series' own tests sweep (notebooks 03-06; the student edition of ``tools/assignments.py``).

Run ``check_<name>(fn)`` on your own version of a lesson function, e.g. ``check_allreduce_ring(allreduce_ring)``
after writing notebook 04's ring. It tries the function on every case of every law -- odd and even
numbers of devices up to 8, sizes below, equal to and not divisible by the number of devices, two
dtypes, identical bits on every device where the lesson promises them -- smallest case first, and
then either prints what was tried and passed, or stops at the smallest failing case and says, in
words, what went in, what was expected, what came back and, where it can tell, why. A function
that still raises ``NotImplementedError`` is "not written yet". A failing check raises
:class:`CheckFailed`, which Jupyter shows as that report, not as a traceback (nbgrader counts the
cell as failed); an allreduce that goes wrong also shows its replay (:mod:`helpers.replay`): what
each device held after every step.

**One definition per law.** A law is a function ``law(fn, **case)`` that returns quietly or raises
:class:`Broken`; ``tests/test_split.py``, ``tests/test_comm.py``, ``tests/test_train.py`` and
``tests/test_models.py`` call the same functions on ``helpers``' own lessons (with Hypothesis
drawing more cases), and the checks sweep them over the fixed case lists here.

**Adding a check** for a new lesson (the bucketed allreduce of notebook 10, ...): write its laws
here, then a function named ``check_<name>`` that returns ``[Law(...), ...]``, decorated with
``@lesson('helpers.module.name', hint='one line for the stub')``. ``tools/assignments.py`` finds it
through :data:`CHECKS` and turns that notebook's lesson cell into an exercise with this check under
it; a lesson without a check stays in the student edition as written.
"""
import sys
import time
import traceback

import numpy as np
import mxnet as mx
from mxnet import autograd, gluon, nd

from helpers import checks

__all__ = ['Broken', 'CheckFailed', 'Law', 'Report', 'CHECKS', 'lesson', 'run', 'verify',
           'check_shard_sizes', 'check_shard_bounds', 'check_split_and_load', 'check_split_batch',
           'check_copy_to', 'check_allreduce_naive', 'check_reduce_scatter', 'check_all_gather',
           'check_allreduce_ring', 'check_allreduce', 'check_cost_naive', 'check_cost_ring',
           'check_init_lenet_params', 'check_lenet_scratch', 'check_replicate_params', 'check_sgd',
           'check_train_batch_scratch', 'check_evaluate_accuracy', 'check_train_batch']

CPU = [mx.cpu(i) for i in range(8)]          # the checks run on CPU stand-ins, up to 8


# ====================================================================== the machinery

class Broken(AssertionError):
    """A law that does not hold for one case (notebooks 03-06): what went wrong, what was expected,
    what came back, and why, where the law can tell; ``replay``: a :class:`helpers.replay.Replay` of
    the function, for collectives."""

    def __init__(self, problem, expected=None, got=None, why=None, replay=None):
        self.problem, self.expected, self.got, self.why, self.replay = problem, expected, got, why, replay
        super().__init__(self.words())

    def words(self):
        lines = [self.problem]
        if self.expected is not None:
            lines.append(f'expected: {self.expected}')
        if self.got is not None:
            lines.append(f'got:      {self.got}')
        if self.why:
            lines.append(f'why: {self.why}')
        return '\n'.join(lines)


class CheckFailed(Exception):
    """What a failing ``check_...`` raises (notebooks 03-06): Jupyter shows its report, not a
    traceback, and nbgrader counts the cell as failed."""

    def __init__(self, report):
        self.report = report
        super().__init__(report.text())

    def _render_traceback_(self):           # IPython shows these lines instead of a traceback
        lines = self.report.text().splitlines()
        return ['\x1b[1;31m' + lines[0] + '\x1b[0m'] + lines[1:]


class Law:
    """One law of a lesson function (notebooks 03-06): ``says`` (words), ``test(fn, **case)``, the
    ``cases`` to sweep (dicts, smallest first) and ``case_words(**case)``."""

    def __init__(self, says, test, cases, case_words):
        self.says, self.test, self.cases, self.case_words = says, test, list(cases), case_words


class Report:
    """The outcome of one check (notebooks 03-06): ``passed`` [(law, cases, seconds)], and for a
    failure ``law``, ``case`` (words), ``broken`` (a :class:`Broken`) or ``not_written``."""

    def __init__(self, name):
        self.name, self.passed, self.seconds = name, [], 0.0
        self.law = self.case = self.broken = self.not_written = None

    @property
    def ok(self):
        return self.broken is None and self.not_written is None

    @property
    def cases(self):
        return sum(n for _, n, _ in self.passed)

    def text(self):
        if self.not_written:
            return (f'✗ {self.name} is not written yet: {self.not_written}\n'
                    f'  Write its body in its cell (where it says raise NotImplementedError), run that cell, '
                    f'then run this check again.')
        if self.broken is not None:
            lines = [f'✗ {self.name} breaks a law of the lesson.',
                     f'  law: {self.law.says}',
                     f'  smallest failing case: {self.case}']
            lines += ['  ' + line for line in self.broken.words().splitlines()]
            if self.passed:
                lines.append('  passed before it: ' + '; '.join(f'{law.says} ({n} cases)' for law, n, _ in self.passed))
            return '\n'.join(lines)
        lines = [f'✓ {self.name}: {len(self.passed)} law{"s" * (len(self.passed) != 1)} hold on all '
                 f'{self.cases} cases tried ({self.seconds:.1f} s)']
        lines += [f'  ✓ {law.says} ({n} case{"s" * (n != 1)})' for law, n, _ in self.passed]
        return '\n'.join(lines)

    def __repr__(self):
        return self.text()


def _where(tb):
    """The last line of the reader's own code in a traceback (not helpers', MXNet's or Python's)."""
    frames = traceback.extract_tb(tb)
    own = [f for f in frames if not any(part in f.filename for part in
                                        ('/helpers/', 'site-packages', '/lib/python', '<frozen'))]
    f = (own or frames)[-1]
    return f.name, (f.line or '').strip()


def _message(e):
    """An exception's message in one line (MXNet's: its last line, which says what failed)."""
    lines = [line.strip() for line in str(e).splitlines() if line.strip()]
    if not lines:
        return ''
    line = lines[-1] if isinstance(e, mx.base.MXNetError) else lines[0]
    return line[:300]


def run(name, fn, laws):
    """Sweep ``laws`` over ``fn``, smallest case first; stop at the first failure (notebooks 03-06).
    Returns a :class:`Report`; prints and raises nothing."""
    report = Report(name)
    start = time.perf_counter()
    if not callable(fn):
        report.law, report.case = Law('it is a function', None, [], None), 'the object given'
        report.broken = Broken(f'check_{name} takes your function, e.g. check_{name}({name}), '
                               f'got {type(fn).__name__}')
        return report
    for law in laws:
        began, n = time.perf_counter(), 0
        for case in law.cases:
            try:
                law.test(fn, **case)
            except Broken as b:
                report.law, report.case, report.broken = law, law.case_words(**case), b
            except NotImplementedError:
                tb = sys.exc_info()[2]
                inner = traceback.extract_tb(tb)[-1].name
                report.not_written = ('its body still raises NotImplementedError.' if inner in (name, fn.__name__)
                                      else f'it calls {inner}, which is not written yet (it still raises '
                                           f'NotImplementedError): write {inner} first.')
            except Exception as e:           # the reader's code crashed: say where, not a traceback
                where, line = _where(sys.exc_info()[2])
                report.law, report.case = law, law.case_words(**case)
                report.broken = Broken(f'{name} raised {type(e).__name__}: {_message(e)}',
                                       why=f'in {where}: `{line}`' if line else None)
            if not report.ok:
                report.seconds = time.perf_counter() - start
                return report
            n += 1
        report.passed.append((law, n, time.perf_counter() - began))
    report.seconds = time.perf_counter() - start
    return report


CHECKS = {}          # 'helpers.module.name' -> check_name: the lessons that have a check


def lesson(qualname, hint, points=1):
    """Register ``check_<name>``, a function returning the laws of lesson ``qualname``, as the check
    of that lesson (notebooks 03-06; ``tools/assignments.py`` reads :data:`CHECKS`): the decorated
    name becomes ``check_<name>(fn)``, which prints a report or raises :class:`CheckFailed`.
    ``hint``: the one line the stub in the student edition keeps; ``points``: nbgrader's points."""
    def register(laws):
        name = qualname.rpartition('.')[2]
        if laws.__name__ != f'check_{name}':
            raise ValueError(f'the check of {qualname} must be named check_{name}, not {laws.__name__}')

        def check(fn):
            report = run(name, fn, laws())
            if report.ok:
                print(report.text())
                return None
            replay = getattr(report.broken, 'replay', None)
            if replay is not None:
                _show_replay(replay)
            raise CheckFailed(report)

        check.__name__ = check.__qualname__ = laws.__name__
        check.__doc__ = laws.__doc__
        check.__module__ = laws.__module__
        check.lesson, check.hint, check.points, check.laws = qualname, hint, points, laws
        CHECKS[qualname] = check
        return check
    return register


def verify(qualname, fn):
    """The :class:`Report` of lesson ``qualname``'s check on ``fn``, without printing or raising
    (notebooks 03-06; for tests and tools)."""
    check = CHECKS[checks.choice(qualname, 'qualname (a lesson)', tuple(CHECKS))]
    return run(qualname.rpartition('.')[2], fn, check.laws())


def _show_replay(replay):
    """Show a failing collective's replay under the report, where a kernel can show figures."""
    try:
        from IPython import get_ipython
    except ImportError:
        return
    if get_ipython() is None:
        return
    from helpers import plot
    plot.show(alt=replay.alt(), fig=replay.strip())


def _fmt(a, digits=4):
    """An array in a few significant digits, on one line."""
    a = np.asarray(a)
    if a.dtype.kind in 'iub':
        return np.array2string(a.reshape(-1), separator=', ', threshold=12, edgeitems=5, max_line_width=10 ** 4)
    return np.array2string(a.reshape(-1), separator=', ', precision=digits, threshold=12, edgeitems=5,
                           floatmode='maxprec', max_line_width=10 ** 4)


def _refuses(call, error, match=None):
    """Whether ``call()`` raises ``error`` (with ``match`` in its message)."""
    try:
        call()
    except error as e:
        return match is None or match in str(e)
    return False


# ====================================================================== split (notebook 03)

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
            raise Broken(f'{n} examples on {k} devices, weights {weights}', expected=str(want), got=str(list(got)),
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


# ====================================================================== allreduce (notebook 04)

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


def _devices_words(values):
    return '; '.join(f'device {i}: {_fmt(v)}' for i, v in enumerate(values))


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
        why = (f'device {wrong[0][0]} finished chunk {wrong[0][1]}, but after the reduce-scatter device i must '
               f'hold the sum of chunk i + 1 (here {owner_chunk(wrong[0][0], k)}): the chunk index is off'
               if wrong else None)
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


def _first_difference(got, lesson):
    """The first step where a replay differs from the lesson's, in words (or None)."""
    for s, (mine, theirs) in enumerate(zip(got.steps, lesson.steps), 1):
        a = sorted((m.src, m.dst, m.chunk) for m in mine)
        b = sorted((m.src, m.dst, m.chunk) for m in theirs)
        if a != b:
            for (src, dst, chunk), (src2, dst2, chunk2) in zip(a, b):
                if (src, dst, chunk) != (src2, dst2, chunk2):
                    off = (chunk is not None and chunk2 is not None and (chunk - chunk2) % got.k in (1, got.k - 1))
                    return (f'Your function first differs from the lesson\'s at step {s}: there device {src2} sends '
                            f'chunk {chunk2} to device {dst2}; yours: device {src} sends '
                            f'{"chunk " + str(chunk) if chunk is not None else "other elements"} to device {dst}'
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


BYTES_CASES = [dict(k=k, size=size) for size in (1, 2, 3, 5, 8, 13, 40, 100) for k in range(1, 9)]


def law_bytes_match_the_formula(fn, k, size, kind='naive'):
    """Notebook 04: every transfer goes through ``send``, and each device sends the bytes of the cost
    formula (naive: (k-1)N from device 0, N from the others; ring: 2(k-1)/k N, in chunks); the bytes
    received add up to the bytes sent."""
    from helpers.comm import CommStats
    if kind != 'naive' and size < k:
        return
    stats = CommStats()
    fn([nd.ones(size, ctx=c) for c in CPU[:k]], send=stats.send)
    want, got = _bytes_formula(kind, k, size, 4), stats.per_device(CPU[:k])
    if got != want or sum(stats.received.values()) != sum(stats.sent.values()):
        why = ('no byte went through send(): call send(x, to) for every copy' if not any(got) and any(want)
               else None)
        raise Broken(f'bytes sent by each device, {size} float32 elements on {k} devices', expected=str(want),
                     got=str(got), why=why)


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
        raise Broken(f'{k - 1} elements on {k} devices must be refused', expected='ValueError: ... at least '
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
        raise Broken(f'{k} devices, {size} elements, RING_MIN_ELEMENTS["cpu"] = {threshold}',
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


def law_cost_formula(fn, kind, k, nbytes, alpha, bandwidth, gamma):
    """Notebook 04: the alpha-beta-gamma cost, 2(k-1)(alpha + N beta) + (k-1) N gamma for the naive
    algorithm, 2(k-1)(alpha + N/k beta) + (k-1)/k N gamma for the ring (beta = 1 / bandwidth), for
    a number of devices or an array of them; 0 at k = 1."""
    k = np.asarray(k)
    kf, beta = k.astype(float), 1 / bandwidth
    want = (2 * (kf - 1) * (alpha + nbytes * beta) + (kf - 1) * nbytes * gamma if kind == 'naive' else
            2 * (kf - 1) * (alpha + nbytes / kf * beta) + (kf - 1) / kf * nbytes * gamma)
    got = np.asarray(fn(k if k.ndim else int(k), nbytes, alpha, bandwidth, gamma), dtype=float)
    if got.shape != want.shape or not np.allclose(got, want, rtol=1e-12, atol=0):
        raise Broken(f'{fn.__name__}(k={k.tolist()}, N={nbytes:g} B, alpha={alpha:g} s, bandwidth={bandwidth:g} B/s, '
                     f'gamma={gamma:g} s/B)', expected=str(want.tolist()), got=str(got.tolist()))
    if not _refuses(lambda: fn(0, nbytes, alpha, bandwidth), ValueError) or \
            not _refuses(lambda: fn(2, nbytes, alpha, 0), ValueError):
        raise Broken('k = 0 devices and a bandwidth of 0 must be refused with a ValueError',
                     why='keep the guard line `checks.cost_model(...)`')


COST_CASES = [dict(k=k, nbytes=n, alpha=a, bandwidth=bw, gamma=g)
              for k in (1, 2, 3, 8, [2, 4, 1024])
              for n, a, bw, g in ((44e6, 10e-6, 32e9, 0.0), (4000, 1e-6, 1e9, 1e-11))]


# ====================================================================== training (notebooks 05, 06)

def tiny_data(n=128, seed=0):
    """A learnable toy problem with Fashion-MNIST's shapes (notebooks 05, 06): the class is where a
    bright patch sits."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 10, n).astype(np.int32)
    X = rng.uniform(0, 0.2, (n, 1, 28, 28)).astype(np.float32)
    for i, c in enumerate(y):
        r, col = divmod(int(c), 5)
        X[i, 0, 4 + 10 * r: 12 + 10 * r, 1 + 5 * col: 6 + 5 * col] += 0.8
    return X, y


def law_init_lenet_params(init_lenet_params, seed):
    """Notebook 05: LeNet's 10 parameters with LENET_SHAPES' shapes, float32 on the CPU, biases zero,
    weights within the Xavier bound sqrt(6 / (fan_in + fan_out)); the same seed gives the same bits,
    another seed other weights."""
    from helpers.models import LENET_SHAPES
    a, b, c = init_lenet_params(seed), init_lenet_params(np.int64(seed)), init_lenet_params(seed + 1)
    if [tuple(p.shape) for p in a] != [shape for _, shape in LENET_SHAPES]:
        raise Broken('the parameters\' shapes', expected=str([s for _, s in LENET_SHAPES]),
                     got=str([tuple(p.shape) for p in a]))
    for (name, _), p, q, r in zip(LENET_SHAPES, a, b, c):
        if np.dtype(p.dtype) != np.float32 or p.context != mx.cpu():
            raise Broken(f'{name} must be float32 on cpu(0)', got=f'{np.dtype(p.dtype)} on {p.context}')
        if not np.array_equal(p.asnumpy(), q.asnumpy()):
            raise Broken(f'{name}: the same seed must give the same values',
                         why='draw from np.random.default_rng(seed)')
        if name.endswith('bias'):
            if p.asnumpy().any():
                raise Broken(f'{name} must start at zero', got=_fmt(p.asnumpy()))
        else:
            fan_in, fan_out = int(np.prod(p.shape[1:])), p.shape[0] * int(np.prod(p.shape[2:]))
            bound = np.sqrt(6 / (fan_in + fan_out))
            if np.abs(p.asnumpy()).max() > bound:
                raise Broken(f'{name} must lie within ±{bound:.4f} (Xavier)',
                             got=f'largest |w| {np.abs(p.asnumpy()).max():.4f}')
            if np.array_equal(p.asnumpy(), r.asnumpy()):
                raise Broken(f'{name}: seeds {seed} and {seed + 1} gave the same values')


def law_lenet_like_gluon(lenet_scratch, seed, n):
    """Notebook 05: the scratch LeNet's logits equal the Gluon LeNet's (helpers.models.lenet) with the
    same weights, shape (n, 10), computed on the device of the input."""
    from helpers.models import init_lenet_params, lenet, replicate_params
    params = init_lenet_params(seed)
    net = lenet([mx.cpu(0)])
    for gp, p in zip(net.collect_params().values(), params):
        gp.set_data(p)
    X = nd.array(tiny_data(n, seed)[0])
    out, want = lenet_scratch(X, params), net(X)
    if out.shape != (n, 10) or not np.allclose(out.asnumpy(), want.asnumpy(), rtol=1e-5, atol=1e-6):
        raise Broken(f'logits of {n} images', expected=_fmt(want.asnumpy()[0]) + ' (image 0)',
                     got=(_fmt(out.asnumpy()[0]) + ' (image 0)') if out.shape == (n, 10) else f'shape {out.shape}',
                     why='conv 5x5 pad 2 (6) - relu - max pool 2 - conv 5x5 (16) - relu - max pool 2 - '
                         'dense 120 - relu - dense 84 - relu - dense 10')
    on = lenet_scratch(nd.array(X.asnumpy(), ctx=CPU[1]), replicate_params(params, CPU[1])).context
    if on != CPU[1]:
        raise Broken('the forward pass must run on the device of its input', expected='cpu(1)', got=str(on))


def law_replicate_params(replicate_params, device):
    """Notebook 05: a copy of every parameter on the device, with a gradient buffer there; changing
    the copy leaves the original alone."""
    from helpers.models import init_lenet_params
    params = init_lenet_params(0)
    reps = replicate_params(params, CPU[device])
    if len(reps) != len(params):
        raise Broken('one copy per parameter', expected=str(len(params)), got=str(len(reps)))
    for i, (p, q) in enumerate(zip(params, reps)):
        if q.context != CPU[device] or q.grad is None or q.grad.context != CPU[device]:
            raise Broken(f'parameter {i} must be on {CPU[device]} with a gradient buffer there',
                         got=f'on {q.context}, gradient {None if q.grad is None else q.grad.context}',
                         why='copyto(device), then attach_grad()')
        if not np.array_equal(p.asnumpy(), q.asnumpy()):
            raise Broken(f'parameter {i}: the copy differs from the original')
    reps[0][:] = 0
    if not params[0].asnumpy().any():
        raise Broken('changing the copy changed the original: it must be a copy, not the same array')


SGD_CASES = [dict(lr=lr, batch_size=b, seed=s) for s, (lr, b) in
             enumerate(((0.1, 1), (0.1, 7), (1.0, 64), (1e-4, 512), (10.0, 3), (0.5, 256)))]


def law_sgd_formula(sgd, lr, batch_size, seed):
    """Notebook 05: ``sgd(params, lr, batch_size)`` sets every parameter to w - lr * grad / batch_size,
    in place (the same array, on its own device)."""
    rng = np.random.default_rng(seed)
    w, g = rng.normal(size=(3, 4)), rng.normal(size=(3, 4))
    p = nd.array(w, dtype='float64', ctx=CPU[1])
    p.attach_grad()
    p.grad[:] = nd.array(g, dtype='float64', ctx=CPU[1])
    before = p
    sgd([p], lr, batch_size)
    want = w - lr * g / batch_size
    got = p.asnumpy()
    if p is not before or p.context != CPU[1]:
        raise Broken('sgd must update the parameters in place', why='write p -= ..., not p = p - ...')
    if not np.allclose(got, want, rtol=1e-12, atol=1e-12):
        step, need = (got - w).reshape(-1), (want - w).reshape(-1)
        ratio = float(np.dot(step, need) / np.dot(need, need))
        why = ('the parameter did not change: update it in place (p -= ...; `p = p - ...` only renames p)'
               if not step.any() else
               f'the step is {ratio:.4g} times the right one: divide by the batch size ({batch_size})'
               if np.isclose(ratio, batch_size) and batch_size != 1 else
               'the step goes up the gradient: subtract it' if np.isclose(ratio, -1) else
               f'the step is {ratio:.4g} times the right one')
        raise Broken('the parameter after sgd', expected=_fmt(want), got=_fmt(got), why=why)


STEP_CASES = [dict(k=k, n=n) for k, n in ((1, 9), (2, 9), (3, 10), (4, 33), (8, 33))]


def _reference_step(params, X, y, lr):
    """One SGD step of the whole batch's mean loss on one device (autograd, no splitting)."""
    from helpers.models import lenet_scratch
    from helpers.train import loss
    ws = [p.copy() for p in params]
    for w in ws:
        w.attach_grad()
    with autograd.record():
        total = loss(lenet_scratch(X, ws), y).sum()
    total.backward()
    return [(w - lr * w.grad / X.shape[0]).asnumpy() for w in ws], total.asscalar()


def law_step_is_sgd_on_the_batch(train_batch_scratch, k, n, lr=0.1, seed=0):
    """Notebook 05: one step on k devices is one SGD step on the whole batch's mean loss, computed on
    one device: every replica ends with w - lr * (gradient of the summed loss) / batch size (float64,
    to 1e-10); it returns each device's loss sum, on that device, adding up to the batch's."""
    from helpers.models import init_lenet_params, replicate_params
    params = [p.astype('float64') for p in init_lenet_params(seed)]
    Xn, yn = tiny_data(n, seed)
    X, y = nd.array(Xn, dtype='float64'), nd.array(yn, dtype='int32')
    want, total = _reference_step(params, X, y, lr)
    reps = [replicate_params(params, d) for d in CPU[:k]]
    sums = train_batch_scratch(X, y, reps, CPU[:k], lr)
    for i, replica in enumerate(reps):
        gap = max(float(np.abs(p.asnumpy() - w).max()) for p, w in zip(replica, want))
        if gap > 1e-10:
            w0 = params[0].asnumpy().reshape(-1)
            step, need = replica[0].asnumpy().reshape(-1) - w0, want[0].reshape(-1) - w0
            ratio = float(np.dot(step, need) / np.dot(need, need))
            from helpers.split import shard_sizes
            shards = shard_sizes(n, k)
            why = (f'the weights moved {ratio:.3g} times as far as one SGD step: divide the summed gradient by the '
                   f'batch size ({n})' if np.isclose(ratio, n, rtol=1e-3) and n > 1 else
                   f'the weights moved {ratio:.3g} times as far: divide by the whole batch ({n}), not a shard'
                   if any(np.isclose(ratio, n / s, rtol=1e-3) for s in shards) and k > 1 else
                   f'the step is {ratio:.3g} of the right one: each device used only its own shard\'s gradient; '
                   f'sum the gradients across devices (allreduce) before the update'
                   if k > 1 and ratio < 0.99 else
                   f'the step is {ratio:.3g} times the right one' if np.isfinite(ratio) else None)
            raise Broken(f'replica {i} after one step differs from one SGD step on the whole batch by {gap:.2g}',
                         expected=f'fc3.bias = {_fmt(want[-1])}', got=f'fc3.bias = {_fmt(replica[-1].asnumpy())}',
                         why=why)
    if not isinstance(sums, (list, tuple)) or len(sums) != k or [s.context for s in sums] != CPU[:k]:
        raise Broken('the step returns one loss sum per device, on that device',
                     got=str([getattr(s, 'context', s) for s in sums]) if isinstance(sums, (list, tuple))
                     else repr(sums))
    got = sum(float(s.asscalar()) for s in sums)
    if not np.isclose(got, total, rtol=1e-8):
        raise Broken('the loss sums add up to the loss of the whole batch', expected=f'{total:.6f}', got=f'{got:.6f}',
                     why='return [l.sum() for l in ls]: the sum of each device\'s per-example losses')


def law_replicas_stay_identical(train_batch_scratch, k, steps=2, lr=0.1):
    """Notebook 05: after several float32 steps the k replicas and their gradients are identical to
    the last bit."""
    from helpers.models import init_lenet_params, replicate_params
    reps = [replicate_params(init_lenet_params(0), d) for d in CPU[:k]]
    Xn, yn = tiny_data(33 * steps, 1)
    for s in range(steps):
        train_batch_scratch(nd.array(Xn[33 * s:33 * (s + 1)]), nd.array(yn[33 * s:33 * (s + 1)], dtype='int32'),
                            reps, CPU[:k], lr)
    for i, replica in enumerate(reps[1:], 1):
        for j, (p, q) in enumerate(zip(replica, reps[0])):
            for what, a, b in (('weights', p, q), ('gradient', p.grad, q.grad)):
                if not np.array_equal(a.asnumpy(), b.asnumpy()):
                    raise Broken(f'replica {i} and replica 0 differ in parameter {j}\'s {what} after {steps} steps',
                                 expected='identical bits', got=f'largest difference '
                                 f'{float(np.abs(a.asnumpy() - b.asnumpy()).max()):.2g}',
                                 why='every device must apply the same update to the same summed gradient')


def law_accuracy_on_k_devices(evaluate_accuracy, k, n=70, batch_size=32):
    """Notebook 05: the accuracy over all batches (the last one smaller) on k devices equals the
    accuracy computed on one device, with NumPy."""
    from helpers.data import ArrayLoader
    Xn, yn = tiny_data(n, 2)
    W = np.random.default_rng(3).normal(size=(784, 10)).astype(np.float32)
    net = lambda X: nd.dot(X.reshape((X.shape[0], -1)), nd.array(W, ctx=X.context))
    want = float(((Xn.reshape(n, -1) @ W).argmax(axis=1) == yn).mean())
    got = evaluate_accuracy(net, ArrayLoader(Xn, yn, batch_size), CPU[:k])
    if not np.isclose(got, want, rtol=0, atol=1e-9):
        raise Broken(f'{n} examples in batches of {batch_size} on {k} devices', expected=f'{want:.6f}',
                     got=f'{got!r}', why='count the correct predictions of every shard of every batch, and divide '
                                         'by the number of examples seen')


GLUON_STEP_CASES = [dict(k=k, n=n) for k, n in ((2, 9), (3, 33))]


def law_gluon_step_like_one_device(train_batch, k, n, steps=2):
    """Notebook 06: two steps of ``train_batch`` on k devices take the step one device takes (to 1e-5),
    every device's copy stays identical, and the Trainer divides by the whole batch."""
    from helpers.models import lenet
    Xn, yn = tiny_data(n, 4)
    X, y = nd.array(Xn), nd.array(yn, dtype='int32')
    nets, trainers = {}, {}
    for devices in (CPU[:1], CPU[:k]):
        net = lenet(devices, seed=0)
        trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.1})
        for _ in range(steps):
            train_batch(net, X, y, trainer, devices)
        nets[len(devices)], trainers[len(devices)] = net, trainer
    rescale = trainers[k]._optimizer.rescale_grad
    if not np.isclose(rescale, 1 / n):
        raise Broken('trainer.step must divide by the whole batch', expected=f'rescale_grad 1/{n}',
                     got=f'rescale_grad {rescale:.4g} (1/{1 / rescale:.4g})', why='call trainer.step(X.shape[0])')
    for (name, p1), p2 in zip(nets[1].collect_params().items(), nets[k].collect_params().values()):
        copies = [p2.data(d).asnumpy() for d in CPU[:k]]
        if any(not np.array_equal(c, copies[0]) for c in copies):
            raise Broken(f'{name}: the copies on the {k} devices differ', expected='identical bits')
        if not np.allclose(p1.data(CPU[0]).asnumpy(), copies[0], rtol=0, atol=1e-5):
            raise Broken(f'{name} after {steps} steps on {k} devices differs from 1 device',
                         why='forward and backward on every shard, then one trainer.step')


# ====================================================================== the checks

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
                lambda n, k, weights: f'{n} examples on {k} devices, weights {weights}')]


@lesson('helpers.comm.copy_to', hint='one line: x.copyto(...)')
def check_copy_to():
    """Check your ``copy_to(x, to)`` (notebook 04): a new array on a device, or written into an array."""
    return [Law('copy_to(x, device) makes a copy there; copy_to(x, array) writes into the array', law_copy_to,
                [dict(shape=s, dtype=d, into=i) for s in ((3,), (2, 3)) for d in ('float32', 'float64')
                 for i in (False, True)],
                lambda shape, dtype, into: f'x of shape {shape}, {dtype}, to {"an array" if into else "a device"}')]


def _allreduce_laws(kind):
    ring = kind == 'ring'
    return [
        Law('in place, every device ends with NumPy\'s sum, identical bits on every device (k = 1-8, sizes below, '
            'equal to and not divisible by k, float32 and float64)',
            lambda fn, **case: law_allreduce_sums(fn, kind=kind, **case), _allreduce_cases(min_size_k=ring),
            _case_words),
        Law(f'every transfer goes through send, and each device sends the bytes of the {kind} formula',
            lambda fn, **case: law_bytes_match_the_formula(fn, kind=kind, **case), BYTES_CASES,
            lambda k, size: f'{size} float32 elements on {k} devices'),
        Law('bad input refused before any copy', law_refuses_bad_input, [dict(bad=b) for b in BAD_INPUTS],
            lambda bad: f'bad input: {bad}'),
    ] + ([Law('fewer elements than devices refused', law_ring_refuses_fewer_elements_than_devices,
              [dict(k=k) for k in range(2, 9)], lambda k: f'{k - 1} elements on {k} devices')] if ring else [])


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
            lambda k, size: f'{size} float32 elements on {k} devices'),
        Law('fewer elements than devices refused', law_ring_refuses_fewer_elements_than_devices,
            [dict(k=k) for k in range(2, 9)], lambda k: f'{k - 1} elements on {k} devices'),
    ]


@lesson('helpers.comm.all_gather', hint="k-1 steps; in step s device i sends finished chunk i + 1 - s into i + 1's")
def check_all_gather():
    """Check your ``all_gather(arrays, send)`` (notebook 04): every device ends with every finished chunk."""
    return [
        Law('when device i holds finished chunk (i + 1) % k, every device ends with every finished chunk, bit for bit',
            law_all_gather_copies, _allreduce_cases(min_size_k=True), _case_words),
        Law('every transfer goes through send; each device sends all chunks but one',
            lambda fn, **case: law_bytes_match_the_formula(fn, kind='all_gather', **case), BYTES_CASES,
            lambda k, size: f'{size} float32 elements on {k} devices'),
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
            lambda k, size, threshold, ring: f'{k} devices, {size} elements, RING_MIN_ELEMENTS["cpu"] = {threshold}'),
        Law('in place, every device ends with NumPy\'s sum, identical bits on every device',
            law_allreduce_sums, _allreduce_cases(), _case_words),
    ]


@lesson('helpers.costmodel.cost_naive', hint='2 (k-1) messages of N bytes, one after another; (k-1) N bytes added')
def check_cost_naive():
    """Check your ``cost_naive(k, nbytes, alpha, bandwidth, gamma)`` (notebook 04) against the formula."""
    return [Law('2 (k-1) (alpha + N / bandwidth) + (k-1) N gamma, for a number or an array of k; bad input refused',
                lambda fn, **case: law_cost_formula(fn, 'naive', **case), COST_CASES,
                lambda k, nbytes, alpha, bandwidth, gamma: f'k = {k}, N = {nbytes:g} B, alpha = {alpha:g} s, '
                                                           f'bandwidth = {bandwidth:g} B/s, gamma = {gamma:g} s/B')]


@lesson('helpers.costmodel.cost_ring', hint='2 (k-1) steps of one N/k chunk per link; (k-1)/k N bytes added')
def check_cost_ring():
    """Check your ``cost_ring(k, nbytes, alpha, bandwidth, gamma)`` (notebook 04) against the formula."""
    return [Law('2 (k-1) (alpha + N/k / bandwidth) + (k-1)/k N gamma, for a number or an array of k; bad input refused',
                lambda fn, **case: law_cost_formula(fn, 'ring', **case), COST_CASES,
                lambda k, nbytes, alpha, bandwidth, gamma: f'k = {k}, N = {nbytes:g} B, alpha = {alpha:g} s, '
                                                           f'bandwidth = {bandwidth:g} B/s, gamma = {gamma:g} s/B')]


@lesson('helpers.models.init_lenet_params',
        hint='LENET_SHAPES; Xavier-uniform weights from default_rng(seed), zero biases')
def check_init_lenet_params():
    """Check your ``init_lenet_params(seed)`` (notebook 05): shapes, float32, zero biases, Xavier bounds,
    determinism."""
    return [Law('LENET_SHAPES, float32 on the CPU, zero biases, Xavier bounds, same seed same bits',
                law_init_lenet_params, [dict(seed=s) for s in (0, 1, 7)], lambda seed: f'seed {seed}')]


@lesson('helpers.models.lenet_scratch', hint='conv-relu-pool twice, then three dense layers, with nd operators')
def check_lenet_scratch():
    """Check your ``lenet_scratch(X, params)`` (notebook 05) against Gluon's LeNet with the same weights."""
    return [Law("the logits of Gluon's LeNet with the same weights, on the input's device", law_lenet_like_gluon,
                [dict(seed=s, n=n) for s, n in ((0, 1), (3, 4))],
                lambda seed, n: f'{n} images, weights of seed {seed}')]


@lesson('helpers.models.replicate_params', hint='copyto(device), then attach_grad() on each copy')
def check_replicate_params():
    """Check your ``replicate_params(params, device)`` (notebook 05): independent copies with gradients."""
    return [Law('a copy of every parameter on the device, with a gradient buffer there; the original untouched',
                law_replicate_params, [dict(device=d) for d in (0, 1, 3)], lambda device: f'device cpu({device})')]


@lesson('helpers.train.sgd', hint='in place, for every parameter: w - lr * grad / batch_size')
def check_sgd():
    """Check your ``sgd(params, lr, batch_size)`` (notebook 05): w - lr * grad / batch_size, in place."""
    return [Law('every parameter becomes w - lr * grad / batch_size, in place, on its own device', law_sgd_formula,
                SGD_CASES, lambda lr, batch_size, seed: f'lr = {lr}, batch_size = {batch_size}')]


@lesson('helpers.train.train_batch_scratch', hint='split; forward/backward per device; allreduce each gradient; sgd')
def check_train_batch_scratch():
    """Check your ``train_batch_scratch(X, y, device_params, devices, lr)`` (notebook 05): one step on k
    devices is one SGD step on the whole batch; the replicas stay identical."""
    return [
        Law('one step on k devices = one SGD step on the whole batch\'s mean loss on one device (float64); '
            'it returns every device\'s loss sum', law_step_is_sgd_on_the_batch, STEP_CASES,
            lambda k, n: f'a batch of {n} images on {k} device{"s" * (k > 1)}'),
        Law('the replicas and their gradients stay identical to the last bit (float32, 2 steps)',
            law_replicas_stay_identical, [dict(k=k) for k in (2, 3)], lambda k: f'{k} devices'),
    ]


@lesson('helpers.train.evaluate_accuracy', hint='count correct predictions per device; add once at the end; divide')
def check_evaluate_accuracy():
    """Check your ``evaluate_accuracy(net, data_iter, devices)`` (notebook 05) against NumPy."""
    return [Law('the accuracy of all batches (the last one smaller) on k devices equals NumPy\'s',
                law_accuracy_on_k_devices, [dict(k=k) for k in (1, 2, 3, 4)], lambda k: f'{k} devices')]


@lesson('helpers.train.train_batch', hint='split; forward/backward per device under autograd.record(); trainer.step')
def check_train_batch():
    """Check your ``train_batch(net, X, y, trainer, devices)`` (notebook 06): k devices take the step of one."""
    return [Law('k devices take the step one device takes, the copies stay identical, step divides by the batch',
                law_gluon_step_like_one_device, GLUON_STEP_CASES, lambda k, n: f'a batch of {n} on {k} devices')]
