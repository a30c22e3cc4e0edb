"""Checks a reader can trust: every function a notebook teaches by hand, tried against the laws the
series' own tests sweep (notebooks 03-12; the student edition of ``tools/assignments.py``).

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
:class:`Broken`; the tests of each lesson's module (``tests/test_split.py``, ``test_comm.py``,
``test_train.py``, ``test_models.py``, ``test_kvstore.py``, ``test_dist.py``, ``test_scaling.py``,
``test_buckets.py``, ``test_sharding.py``, ``test_precision.py``, ``test_accumulation.py``) call the
same functions on ``helpers``' own lessons (with Hypothesis drawing more cases where it helps), and
the checks sweep them over the fixed case lists here. Collectives and stores are checked through
the hooks the lessons already take (``send=``, ``allreduce=``, a stand-in KVStore or ``Job``), never
by starting processes.

**Adding a check** for a new lesson: write its laws here, then a function named ``check_<name>``
that returns ``[Law(...), ...]``, decorated with ``@lesson('helpers.module.name', hint='one line for
the stub')``. ``tools/assignments.py`` finds it through :func:`find` and turns that notebook's lesson
cell into an exercise with this check under it (a class's methods become stubs); a lesson without a
check stays in the student edition as written.
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
           'check_train_batch_scratch', 'check_evaluate_accuracy', 'check_train_batch',
           'check_merge_buffer_owners', 'check_push_then_pull', 'check_train_worker', 'check_run_local_job',
           'check_WarmUp', 'check_lr_recipe', 'check_epoch_time', 'check_pushpull_step', 'check_plan_buckets',
           'check_allreduce_bucketed', 'check_backward_and_send', 'check_bucket_gradients',
           'check_train_batch_sharded', 'check_allreduce_fp16', 'check_next_scale', 'check_train_batch_fp16',
           'check_train_batch_accumulated', 'check_my_shard', 'check_steps_per_epoch', 'check_views_of',
           'check_flat_replica', 'check_attach_flat_grad', 'check_forward_backward', 'check_train_batch_replicated',
           'check_save_checkpoint', 'check_load_checkpoint', 'find']

CPU = [mx.cpu(i) for i in range(8)]          # the checks run on CPU stand-ins, up to 8


# ====================================================================== the machinery

class Broken(AssertionError):
    """A law that does not hold for one case (notebooks 03-12): what went wrong, what was expected,
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
    """What a failing ``check_...`` raises (notebooks 03-12): Jupyter shows its report, not a
    traceback, and nbgrader counts the cell as failed."""

    def __init__(self, report):
        self.report = report
        super().__init__(report.text())

    def _render_traceback_(self):           # IPython shows these lines instead of a traceback
        lines = self.report.text().splitlines()
        return ['\x1b[1;31m' + lines[0] + '\x1b[0m'] + lines[1:]


class Law:
    """One law of a lesson function (notebooks 03-12): ``says`` (words), ``test(fn, **case)``, the
    ``cases`` to sweep (dicts, smallest first) and ``case_words(**case)``."""

    def __init__(self, says, test, cases, case_words):
        self.says, self.test, self.cases, self.case_words = says, test, list(cases), case_words


class Report:
    """The outcome of one check (notebooks 03-12): ``passed`` [(law, cases, seconds)], and for a
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


def _method_qualname(frame):
    """``Class.method`` of the code running in ``frame``, or its bare name: Python 3.9 and 3.10 have no
    ``co_qualname``, so the class is found from the first argument (``self`` or ``cls``), in whose MRO
    a function holds this very code."""
    code = frame.f_code
    if code.co_argcount:
        first = frame.f_locals.get(code.co_varnames[0])
        for klass in getattr(first if isinstance(first, type) else type(first), '__mro__', ()):
            f = vars(klass).get(code.co_name)
            if getattr(getattr(f, '__func__', f), '__code__', None) is code:
                return f'{klass.__name__}.{code.co_name}'
    return code.co_name


def _unwritten(tb, name, fn):
    """What a NotImplementedError says: the reader's function (or a method of the reader's class) is
    still a stub, or it calls one; the function's name is that of the code that raised it."""
    while tb.tb_next is not None:
        tb = tb.tb_next
    code = tb.tb_frame.f_code
    qualname = getattr(code, 'co_qualname', None) or _method_qualname(tb.tb_frame)  # 'WarmUp.__call__'
    owner, _, method = qualname.partition('.')
    if isinstance(fn, type) and not method and qualname in vars(fn):  # Python < 3.11: the method's name alone
        owner, method = fn.__name__, qualname
    if owner in (name, getattr(fn, '__name__', name)):
        if isinstance(fn, type) and method and '<locals>' not in method:
            return f'its method {method} still raises NotImplementedError.'
        return 'its body still raises NotImplementedError.'
    return (f'it calls {owner}, which is not written yet (it still raises NotImplementedError): '
            f'write {owner} first.')


def run(name, fn, laws):
    """Sweep ``laws`` over ``fn``, smallest case first; stop at the first failure (notebooks 03-12).
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
                report.not_written = _unwritten(sys.exc_info()[2], name, fn)
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
    of that lesson (notebooks 03-12; ``tools/assignments.py`` reads :data:`CHECKS`): the decorated
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


def find(qualname):
    """The check of lesson ``qualname``, or None (notebooks 03-12; ``tools/assignments.py``): registered
    under that name, or under another name of the same function -- ``helpers.dist.run_local_job`` is
    ``helpers.job.run_local_job``, re-exported."""
    checks.text(qualname, 'qualname (a lesson)')
    if qualname in CHECKS:
        return CHECKS[qualname]
    target = _resolve(qualname)
    if target is None:
        return None
    return next((check for name, check in CHECKS.items() if _resolve(name) is target), None)


def _resolve(qualname):
    import importlib
    module, _, name = qualname.rpartition('.')
    try:
        return getattr(importlib.import_module(module), name, None)
    except (ImportError, ValueError):    # no such module, or no module at all ('name' has no dot)
        return None


def verify(qualname, fn):
    """The :class:`Report` of lesson ``qualname``'s check on ``fn``, without printing or raising
    (notebooks 03-12; for tests and tools)."""
    check = find(checks.text(qualname, 'qualname (a lesson)'))
    if check is None:
        raise ValueError(f'qualname (a lesson) must name a lesson with a check, e.g. '
                         f'{next(iter(CHECKS))!r}, got {qualname!r}')
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


# ====================================================================== the KVStore (notebook 07)

def _greedy_owners(sizes, k):
    """Notebook 07's rule, step by step: ``[(key, loads before it is placed, device)]``, largest key first
    (among equal sizes the lower key first), each on the least loaded device (ties: the lowest)."""
    load, placed = [0] * k, []
    for key in sorted(range(len(sizes)), key=lambda i: (-sizes[i], i)):
        device = min(range(k), key=lambda d: (load[d], d))
        placed.append((key, list(load), device))
        load[device] += sizes[key]
    return placed


def _owners_of(placed, n):
    owners = [None] * n
    for key, _, device in placed:
        owners[key] = device
    return owners


def law_merge_owners_greedy(merge_buffer_owners, sizes, k):
    """Notebook 07: where the ``device`` store keeps each key's merge buffer, for keys of distinct
    sizes (MXNet sorts with ``std::sort``, whose order among equal sizes is unspecified): the largest
    key first, each on the device that holds the fewest elements so far, ties to the lowest device."""
    placed = _greedy_owners(sizes, k)
    want, got = _owners_of(placed, len(sizes)), merge_buffer_owners(list(sizes), k)
    got = list(got) if isinstance(got, (list, tuple, np.ndarray)) else got
    if got == want:
        return
    why = None
    if not isinstance(got, list) or len(got) != len(sizes):
        why = f'one device per key, in the order of the keys: a list of {len(sizes)} devices'
    elif got == [i % k for i in range(len(sizes))] or got == _owners_of(_in_key_order(sizes, k), len(sizes)):
        turn, order = got == [i % k for i in range(len(sizes))], got == _owners_of(_in_key_order(sizes, k), len(sizes))
        why = ('the keys were ' + ' and '.join(w for w, yes in (('placed in key order', order),
                                                                 ('dealt out in turn (round robin)', turn)) if yes)
               + '; place the largest key first (sort by size, largest first), each on the device that holds the '
                 'fewest elements so far')
    else:
        for rank, (key, load, device) in enumerate(placed):
            if got[key] != device:
                why = (f'key {key} ({sizes[key]} elements) is the {_ordinal(rank + 1)} largest; when it is placed '
                       f'the devices hold {load} elements, so it goes to device {device}, the least loaded '
                       '(ties: the lowest device)')
                break
    raise Broken(f'merge_buffer_owners({list(sizes)}, {k})', expected=str(want), got=str(got), why=why)


def _in_key_order(sizes, k):
    load, placed = [0] * k, []
    for key in range(len(sizes)):
        device = min(range(k), key=lambda d: (load[d], d))
        placed.append((key, list(load), device))
        load[device] += sizes[key]
    return placed


def _ordinal(n):
    return f'{n}{"th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")}'


def law_merge_owners_balanced(merge_buffer_owners, sizes, k):
    """Notebook 07: for any sizes (equal ones too), one device 0 ... k-1 per key, the largest key on
    device 0, and the loads never more than one key apart (the greedy rule's promise)."""
    owners = list(merge_buffer_owners(list(sizes), k))
    load = [sum(s for s, o in zip(sizes, owners) if o == d) for d in range(k)]
    if len(owners) != len(sizes) or not all(isinstance(o, (int, np.integer)) and 0 <= o < k for o in owners):
        raise Broken(f'merge_buffer_owners({list(sizes)}, {k})', expected=f'one device 0 ... {k - 1} per key',
                     got=str(owners))
    if owners[int(np.argmax(sizes))] != 0:
        raise Broken(f'merge_buffer_owners({list(sizes)}, {k}): the largest key must go to device 0',
                     got=str(owners), why='the largest key is placed first, when every device holds nothing')
    if max(load) - min(load) > max(sizes):
        raise Broken(f'merge_buffer_owners({list(sizes)}, {k}): the devices\' loads are {load}, more than the '
                     f'largest key ({max(sizes)}) apart', got=str(owners),
                     why='each key goes to the device that holds the fewest elements so far')


MERGE_CASES = [dict(sizes=s, k=k) for s, k in (
    ([5], 1), ([5], 3), ([3, 9], 2), ([1, 2, 3], 2), ([4, 10, 7], 3), ([10, 9, 8, 1], 2), ([6, 5, 4, 3, 2, 1], 3),
    ([120, 7, 84, 10, 16, 6], 2), ([120, 7, 84, 10, 16, 6], 4), ([30, 2, 900, 11, 75, 48, 3, 600], 5),
    ([102_760_448, 16_777_216, 4_096_000, 4096, 1000, 64], 4), (list(range(1, 17)), 8))]
BALANCE_CASES = [dict(sizes=s, k=k) for s, k in (
    ([7, 7], 2), ([4, 4, 4], 2), ([10, 10, 1, 1], 3), ([102_760_448, 16_777_216, 4_096_000] + [4096] * 10, 4),
    ([64] * 9, 8), ([5, 3, 5, 3, 5, 3], 4))]


def law_merge_owners_refuses_bad_input(merge_buffer_owners, bad):
    """Notebook 07: a key size that is not a whole number (TypeError) or below 1, or fewer than one
    device (ValueError), is refused."""
    sizes, k, error = {'a fractional size': ([10, 2.5], 2, TypeError), 'a size of 0': ([10, 0], 2, ValueError),
                       'no device': ([10], 0, ValueError)}[bad]
    if not _refuses(lambda: merge_buffer_owners(sizes, k), error):
        raise Broken(f'merge_buffer_owners({sizes}, {k}) must be refused with a {error.__name__}',
                     expected=error.__name__, got='another outcome',
                     why="keep the guard line `k, sizes = checks.whole(k, 'k', 1), [...]`")


# ====================================================================== a worker of a job (notebook 08)

class _RecordingStore:
    """A stand-in KVStore that records its calls: ``push`` sums what it is given, ``pull`` hands the
    last sum out, ``pushpull`` (which the lesson replaces) only records that it was called."""

    def __init__(self):
        self.calls, self.values = [], {}

    def push(self, key, value, priority=0):
        self.calls.append(('push', key, priority))
        self.values[key] = sum(v.asnumpy() for v in (value if isinstance(value, (list, tuple)) else [value]))

    def pull(self, key, out=None, priority=0, ignore_sparse=True):
        self.calls.append(('pull', key, priority))
        for o in (out if isinstance(out, (list, tuple)) else [out]):
            o[:] = self.values.get(key, np.nan)

    def pushpull(self, key, value, out=None, priority=0):
        self.calls.append(('pushpull', key, priority))


def law_push_then_pull(push_then_pull, k, out, priority):
    """Notebook 08: after ``push_then_pull(kv)`` (which returns ``kv``), ``kv.pushpull(key, value,
    out=..., priority=...)`` is ``kv.push(key, value, priority)`` followed by ``kv.pull(key, out,
    priority)`` -- into ``value`` itself when no ``out`` is given -- and every target holds the sum."""
    store = _RecordingStore()
    if push_then_pull(store) is not store:
        raise Broken('push_then_pull(kv) must return the store it was given', why='end with `return kv`')
    values = [nd.full((3,), i + 1, ctx=c) for i, c in enumerate(CPU[:k])]
    outs = [nd.zeros((3,), ctx=c) for c in CPU[:k]] if out else None
    if out:
        store.pushpull(7, values, out=outs, priority=priority)
    else:
        store.pushpull(7, values, priority=priority)
    want = [('push', 7, priority), ('pull', 7, priority)]
    call = f'kv.pushpull(7, values{", out=outs" if out else ""}, priority={priority})'
    if store.calls != want:
        got = ', '.join(f'{name}(key {key}, priority {p})' for name, key, p in store.calls) or 'no call'
        why = ('the store\'s own pushpull was called: assign your function to kv.pushpull' if
               any(c[0] == 'pushpull' for c in store.calls) else
               'push first, then pull: the pull waits for the push of the same key' if
               [c[0] for c in store.calls] == ['pull', 'push'] else
               f'pass the priority on to push and pull (priority={priority})' if
               [c[:2] for c in store.calls] == [w[:2] for w in want] else None)
        raise Broken(f'the calls that {call} makes', expected='push(key 7, priority {0}), pull(key 7, priority {0})'
                     .format(priority), got=got, why=why)
    total = float(sum(range(1, k + 1)))
    targets = outs if out else values
    held = [a.asnumpy() for a in targets]
    if any(not np.array_equal(h, np.full(3, total)) for h in held):
        raise Broken(f'after {call} every {"out" if out else "value"} array holds the sum',
                     expected=f'{total:g} everywhere', got=_devices_words(held),
                     why='pull into `out`, or into `value` itself when out is None')


def law_push_then_pull_on_a_store(push_then_pull, k):
    """Notebook 08: on MXNet's own ``local`` store, the replaced ``pushpull`` still sums: into ``out``,
    or into the pushed arrays when no ``out`` is given."""
    kv = mx.kv.create('local')
    kv.init(0, nd.zeros((4,)))
    push_then_pull(kv)
    grads = [nd.full((4,), i + 1, ctx=c) for i, c in enumerate(CPU[:k])]
    outs = [nd.zeros((4,), ctx=c) for c in CPU[:k]]
    kv.pushpull(0, grads, out=outs)
    kv.pushpull(0, grads)
    total = float(sum(range(1, k + 1)))
    for what, arrays in (('out', outs), ('the pushed arrays', grads)):
        held = [a.asnumpy() for a in arrays]
        if any(not np.array_equal(h, np.full(4, total)) for h in held):
            raise Broken(f'on a local KVStore of {k} device{"s" * (k > 1)}, {what} must hold the sum',
                         expected=f'{total:g} everywhere', got=_devices_words(held))


def _worker_store(num_workers, rank):
    """A stand-in for a ``dist_sync`` store of ``num_workers`` workers, seen from worker ``rank``, in
    which every other worker pushes exactly this worker's gradients: ``pushpull`` sums the devices'
    arrays and multiplies by ``num_workers``. Gluon's Trainer takes any ``KVStoreBase``; this one
    cannot run an optimizer, so the Trainer updates on the worker, as with dist stores' pushpull."""
    from mxnet.kvstore import KVStoreBase

    class Workers(KVStoreBase):
        def __init__(self):
            self.pushpulls = 0

        type = property(lambda self: 'dist_sync (stand-in)')
        rank = property(lambda self: rank)
        num_workers = property(lambda self: num_workers)

        @staticmethod
        def is_capable(capability):
            return False

        def broadcast(self, key, value, out, priority=0):
            for o in (out if isinstance(out, list) else [out]):
                o[:] = value.as_in_context(o.context)

        def pushpull(self, key, value, out=None, priority=0):
            self.pushpulls += 1
            values = value if isinstance(value, list) else [value]
            total = values[0].copyto(values[0].context)
            for v in values[1:]:
                total += v.as_in_context(total.context)
            total *= num_workers
            for o in (values if out is None else out if isinstance(out, list) else [out]):
                total.copyto(o)

        def set_optimizer(self, optimizer):
            raise TypeError('this stand-in store runs no optimizer')

        def save_optimizer_states(self, fname, dump_optimizer=False):
            raise TypeError('this stand-in store keeps no optimizer state')

        load_optimizer_states = save_optimizer_states
    return Workers()


WORKER_CASES = [dict(k=1, num_workers=2, rank=1, steps=2, epochs=2, batch_size=6),      # 2 and 4 workers: the
                dict(k=2, num_workers=2, rank=0, steps=3, epochs=1, batch_size=8),      # stand-in's sum times W and
                dict(k=3, num_workers=4, rank=3, steps=2, epochs=1, batch_size=9)]      # 1 / W are exact


def law_worker_takes_the_global_step(train_worker, k, num_workers, rank, steps, epochs, batch_size, lr=0.1, seed=3):
    """Notebook 08: a worker of a ``dist_sync`` job in which every worker pushes the same gradients
    takes notebook 06's step on its own batches -- ``ArrayLoader(..., shuffle=True, seed=seed + rank,
    last_batch='discard')``, ``steps`` per epoch, the initial weights of ``lenet(devices, seed)`` --
    because its Trainer divides the servers' sum by the global batch; ``on_step(net, losses)`` runs
    after every step, and the trained net comes back."""
    from helpers.data import ArrayLoader
    from helpers.models import lenet
    from helpers.train import train_batch
    devices = CPU[:k]
    X, y = tiny_data(2 * steps * batch_size + 3, seed)
    seen, first = [], []

    def on_step(net, losses):
        seen.append((net, losses))
        if len(seen) == 1:
            first.extend(p.data(devices[0]).asnumpy() for p in net.collect_params().values())
    kv = _worker_store(num_workers, rank)
    net = train_worker(kv, devices, X, y, batch_size, steps, lr, epochs, seed=seed, on_step=on_step)
    ref = lenet(devices, seed)
    start = [p.data(devices[0]).asnumpy() for p in ref.collect_params().values()]
    trainer = gluon.Trainer(ref.collect_params(), 'sgd', {'learning_rate': lr}, kvstore=_worker_store(1, rank))
    batches = ArrayLoader(X, y, batch_size, shuffle=True, seed=seed + rank, last_batch='discard')
    ref_first = None
    for _ in range(epochs):
        for _, (Xb, yb) in zip(range(steps), batches):
            train_batch(ref, Xb, yb, trainer, devices)
            if ref_first is None:
                ref_first = [p.data(devices[0]).asnumpy() for p in ref.collect_params().values()]
    if not isinstance(net, gluon.Block):
        raise Broken('train_worker returns the trained network', got=repr(net)[:80], why='end with `return net`')
    if len(seen) != steps * epochs:
        raise Broken(f'on_step must run once after every step: {epochs} epoch{"s" * (epochs > 1)} of {steps} steps',
                     expected=f'{steps * epochs} calls', got=f'{len(seen)} calls',
                     why=f'take exactly `steps` ({steps}) steps per epoch (zip(range(steps), batches)), '
                         'the same number on every worker, and call on_step(net, losses) after each')
    if any(n is not net or not isinstance(ls, (list, tuple)) or len(ls) != k for n, ls in seen):
        raise Broken('on_step(net, losses) gets the network and the list of the devices\' losses',
                     got=str([(type(n).__name__, type(ls).__name__) for n, ls in seen[:2]]))
    if kv.pushpulls == 0:
        raise Broken('the worker never used the store it was given', expected='gradients summed by kv',
                     why='create the Trainer with kvstore=kv: the servers add every worker\'s gradients')
    for (name, p), q in zip(net.collect_params().items(), ref.collect_params().values()):
        for d in devices:
            a, b = p.data(d).asnumpy(), q.data(d).asnumpy()
            if a.shape != b.shape or not np.allclose(a, b, rtol=0, atol=1e-6):
                why = None
                step = np.concatenate([(w - s).ravel() for w, s in zip(first, start)])
                need = np.concatenate([(w - s).ravel() for w, s in zip(ref_first, start)])
                ratio = float(np.dot(step, need) / np.dot(need, need)) if len(step) == len(need) else np.nan
                if np.isclose(ratio, num_workers, rtol=1e-3):
                    why = (f'the first step went {ratio:.3g} times as far as it should: the servers add the '
                           f'gradients of all {num_workers} workers, so divide by the global batch: '
                           "rescale_grad 1 / kv.num_workers in the Trainer's optimizer settings")
                elif np.isclose(ratio, 1 / num_workers, rtol=1e-3):
                    why = f'the first step went {ratio:.3g} times as far as it should: divide by kv.num_workers once'
                elif np.isclose(ratio, 1, rtol=1e-4):
                    why = ('the first step is right, a later one is not: every epoch takes the next `steps` batches '
                           'of one ArrayLoader')
                else:
                    why = (f'the first step differs too: start from lenet(devices, seed), and draw the batches from '
                           f'ArrayLoader(X, y, batch_size, shuffle=True, seed=seed + kv.rank, last_batch=\'discard\') '
                           f'(this worker is rank {rank})')
                raise Broken(f'{name} on {d} after {steps * epochs} steps differs from notebook 06\'s steps on '
                             f'this worker\'s batches', expected=_fmt(b), got=_fmt(a), why=why)


def _scripted_job(script, log):
    """A stand-in for helpers.job.Job that starts no process and follows ``script``: ``'done'`` (the job
    ends at the third poll), ``'dies'`` (the second poll raises DistJobError), ``'timeout'`` (the job
    expires at the second check), ``'interrupt'`` (the second poll raises KeyboardInterrupt)."""
    import inspect as _inspect
    from helpers.job import DistJobError, Job

    class ScriptedJob:
        def __init__(self, *args, **kwargs):
            bound = _inspect.signature(Job).bind(*args, **kwargs)
            bound.apply_defaults()
            log.append(('start', dict(bound.arguments)))
            self.polls = self.checks = 0

        def poll(self):
            self.polls += 1
            log.append(('poll',))
            if self.polls == 2 and script == 'dies':
                raise DistJobError('worker 1 died (SIGKILL)')
            if self.polls == 2 and script == 'interrupt':
                raise KeyboardInterrupt
            return script == 'done' and self.polls == 3

        def expired(self):
            self.checks += 1
            log.append(('expired',))
            return script == 'timeout' and self.checks >= 2

        def fail(self, error, message):
            log.append(('fail', error, message))
            raise error(message)

        def stop(self):
            log.append(('stop',))

        def result(self):
            log.append(('result',))
            return RESULT

    RESULT = object()
    ScriptedJob.RESULT = RESULT
    return ScriptedJob


def law_job_always_stopped(run_local_job, script):
    """Notebook 08: ``run_local_job`` starts one Job with its arguments, polls it until it is done,
    fails it with DistJobTimeout once it has expired, and -- however it ends: done, a dead process, the
    timeout or Ctrl-C -- stops it before returning its result or raising. Checked against a scripted
    stand-in for ``Job`` (no process starts: helpers.job.Job itself is tested in tests/test_dist.py)."""
    from helpers import dist, job as job_module
    from helpers.job import DistJobError, DistJobTimeout
    log = []
    fake = _scripted_job(script, log)
    names = getattr(run_local_job, '__globals__', {})
    patched = [(job_module, 'Job'), (dist, 'Job')] + ([(names, 'Job')] if isinstance(names, dict) else [])
    saved = [(where, name, where.get(name, _MISSING) if isinstance(where, dict) else getattr(where, name))
             for where, name in patched]
    args = dict(command=['python', '-c', 'pass'], num_workers=3, num_servers=2, timeout=30, env={'MXDP_X': '1'},
                echo=False, place=None)
    outcome = None
    try:
        for where, name, _ in saved:
            if isinstance(where, dict):
                where[name] = fake
            else:
                setattr(where, name, fake)
        try:
            outcome = ('returned', run_local_job(**args))
        except NotImplementedError:      # a stub: "not written yet"
            raise
        except BaseException as e:       # KeyboardInterrupt too: it is one of the ways a job ends
            outcome = ('raised', e)
    finally:
        for where, name, value in saved:
            if isinstance(where, dict):
                if value is _MISSING:
                    where.pop(name, None)
                else:
                    where[name] = value
            else:
                setattr(where, name, value)
    events = [e[0] for e in log]
    story = ', '.join(events) or 'nothing'
    if events.count('start') != 1:
        raise Broken('run_local_job starts the job once: Job(command, num_workers, num_servers, timeout, env, '
                     'echo, place=place)', got=f'{events.count("start")} jobs started', why='this case: ' + script)
    given = log[0][1]
    wrong = [k for k, v in args.items() if given.get(k) != v]
    if wrong:
        raise Broken(f'the job must get run_local_job\'s own {", ".join(wrong)}',
                     expected=', '.join(f'{k}={args[k]!r}' for k in wrong),
                     got=', '.join(f'{k}={given.get(k)!r}' for k in wrong))
    stops = [i for i, e in enumerate(events) if e == 'stop']
    ending = {'done': 'the job finished', 'dies': 'a process died (poll raised DistJobError)',
              'timeout': 'the job ran past its timeout', 'interrupt': 'Ctrl-C came (KeyboardInterrupt)'}[script]
    if not stops:
        raise Broken(f'{ending}, and the job was never stopped: its processes would run on',
                     expected='job.stop() before run_local_job returns or raises', got=story,
                     why='call job.stop() in a `finally:` block around the polling loop')
    if any(e == 'poll' for e in events[stops[0]:]):
        raise Broken(f'{ending}: the job was polled after it was stopped', got=story)
    if script == 'done':
        if outcome[0] != 'returned' or outcome[1] is not fake.RESULT:
            raise Broken('a job that finished returns job.result()', expected='job.result()',
                         got=f'{outcome[0]} {outcome[1]!r}'[:120], why='poll until it returns True, then return '
                                                                        'job.result()')
        if events.count('poll') != 3:
            raise Broken('poll until the job is done (poll() returns True)', expected='3 polls',
                         got=f'{events.count("poll")} polls')
        return
    if script == 'timeout':
        fails = [e for e in log if e[0] == 'fail']
        if not fails or fails[0][1] is not DistJobTimeout:
            raise Broken('a job past its timeout must be failed with DistJobTimeout', got=story,
                         why='in the loop: if job.expired(): job.fail(DistJobTimeout, "... timeout ...")')
        if '30' not in str(fails[0][2]):
            raise Broken('the timeout message names the timeout', expected='a message with "30"',
                         got=repr(fails[0][2]))
    want = {'dies': DistJobError, 'timeout': DistJobTimeout, 'interrupt': KeyboardInterrupt}[script]
    if outcome[0] != 'raised' or not isinstance(outcome[1], want):
        raise Broken(f'{ending}: run_local_job must raise {want.__name__}', expected=want.__name__,
                     got=f'{outcome[0]} {type(outcome[1]).__name__}', why='let the error through: catch nothing, '
                                                                           'stop in `finally:`')


_MISSING = object()


# ---------------------------------------------------------------------- notebook 08: each worker's data

SHARD_CASES = [dict(n=n, num_workers=w) for n, w in ((1, 1), (5, 1), (10, 3), (7, 2), (8, 4), (13, 5), (20, 8))]


def law_my_shard(my_shard, n, num_workers):
    """Notebook 08: worker ``rank`` gets contiguous shard ``rank`` of notebook 03's uneven split -- the
    first ``n mod num_workers`` workers one example more -- labels with their examples, and its bounds;
    together the workers hold every example once."""
    X, y = np.arange(n) * 3, np.arange(n) * 3 + 1
    sizes = _uneven_sizes(n, num_workers)
    ends = np.cumsum(sizes).tolist()
    want = list(zip([0] + ends[:-1], ends))
    parts = [my_shard(X, y, rank, num_workers) for rank in range(num_workers)]
    got = [tuple(int(b) for b in p[2]) if isinstance(p, tuple) and len(p) == 3 else None for p in parts]
    if got != want:
        raise Broken(f'the shards of {n} examples among {num_workers} workers (begin, end)', expected=str(want),
                     got=str(got), why=(_split_why(n, num_workers, [e - b for b, e in got]) if None not in got else
                                        'return (X_part, y_part, (begin, end))') or
                     'shard_bounds(len(X), num_workers)[rank]: the first n mod num_workers workers get one more')
    for rank, (Xp, yp, (b, e)) in enumerate(parts):
        if not np.array_equal(np.asarray(Xp), X[b:e]) or not np.array_equal(np.asarray(yp), y[b:e]):
            raise Broken(f'worker {rank}\'s part of {n} examples among {num_workers}',
                         expected=f'examples {b}:{e} and their labels', got=f'X {np.asarray(Xp).tolist()}, '
                                                                           f'y {np.asarray(yp).tolist()}',
                         why='X[begin:end], y[begin:end]')


STEPS_CASES = [dict(n_train=n, num_workers=w, batch_size=b) for n, w, b in (
    (10, 3, 2), (12000, 2, 64), (100, 3, 10), (7, 8, 1), (64, 1, 64), (63, 1, 64), (1000, 7, 16), (60000, 4, 256))]


def law_steps_per_epoch(steps_per_epoch, n_train, num_workers, batch_size):
    """Notebook 08: the whole batches of the *smallest* shard, ``(n_train // num_workers) // batch_size``:
    every synchronous worker takes that many steps, so none waits for a step another never takes."""
    want = (n_train // num_workers) // batch_size
    got = steps_per_epoch(n_train, num_workers, batch_size)
    if got != want:
        largest = -(-n_train // num_workers) // batch_size
        why = ('that is the largest shard\'s: a worker with a smaller shard would run out of batches, and the '
               'others would wait forever for its steps; take the smallest shard, n_train // num_workers'
               if got == largest else
               'whole batches only: the last, smaller batch is dropped (last_batch=\'discard\')'
               if got == -(-(n_train // num_workers) // batch_size) else None)
        raise Broken(f'steps_per_epoch({n_train}, {num_workers}, {batch_size})', expected=str(want), got=repr(got),
                     why=why)


# ====================================================================== large batches (notebook 09)

WARMUP_CASES = [dict(base_lr=b, warmup_steps=w, begin=s) for b, w, s in
                ((1.6, 12, 0.1), (0.4, 1, 0.1), (0.8, 5, 0.0), (3.2, 40, 0.1), (0.25, 7, 0.05))]


def law_warmup_like_mxnet(WarmUp, base_lr, warmup_steps, begin):
    """Notebook 09: ``WarmUp(base_lr=..., warmup_steps=..., warmup_begin_lr=...)`` is an MXNet
    ``LRScheduler`` whose rate, update by update, is that of MXNet's ``FactorScheduler`` with the same
    warm-up and a step it never reaches: the linear ramp, then ``base_lr`` for good."""
    ours = WarmUp(base_lr=base_lr, warmup_steps=warmup_steps, warmup_begin_lr=begin)
    if not isinstance(ours, mx.lr_scheduler.LRScheduler):
        raise Broken('WarmUp must be an MXNet LRScheduler', why='class WarmUp(mx.lr_scheduler.LRScheduler)')
    theirs = mx.lr_scheduler.FactorScheduler(step=10 ** 9, base_lr=base_lr, warmup_steps=warmup_steps,
                                             warmup_begin_lr=begin)
    updates = list(range(3 * warmup_steps + 3)) + [10 ** 6]
    want, got = [theirs(u) for u in updates], []
    for u in updates:
        try:
            got.append(ours(u))
        except AssertionError as e:         # MXNet's get_warmup_lr asserts num_update < warmup_steps
            if isinstance(e, Broken):
                raise
            raise Broken(f'WarmUp(...)({u}) failed inside MXNet (base_lr {base_lr}, warmup_steps {warmup_steps})',
                         expected=f'{theirs(u):.6g}', got='AssertionError from get_warmup_lr',
                         why='get_warmup_lr serves the warm-up only (it asserts num_update < warmup_steps): after '
                             f'the warm-up ({warmup_steps} updates) the rate stays at base_lr for good, '
                             'return self.base_lr')
    for u, a, b in zip(updates, got, want):
        if a != b:
            shown = [u for u in (0, warmup_steps // 2, warmup_steps - 1, warmup_steps, 10 ** 6) if u >= 0]
            why = (f'after the warm-up ({warmup_steps} updates) the rate stays at base_lr ({base_lr}) for good'
                   if u >= warmup_steps else
                   f'during the warm-up the rate is get_warmup_lr(num_update): {begin} rising linearly to '
                   f'{base_lr} over {warmup_steps} updates')
            raise Broken(f'the rate at update {u} (base_lr {base_lr}, warmup_steps {warmup_steps}, warmup_begin_lr '
                         f'{begin})', expected=', '.join(f'update {v}: {theirs(v):.6g}' for v in shown),
                         got=', '.join(f'update {v}: {ours(v):.6g}' for v in shown) + f' (update {u}: {a!r})',
                         why=why)


RECIPE_CASES = [dict(recipe=r, batch_size=b, warmup_steps=w, base_lr=lr, base_batch=bb)
                for r in ('fixed', 'linear', 'warmup')
                for b, w, lr, bb in ((64, 10, 0.1, 64), (128, 10, 0.1, 64), (32, 10, 0.1, 64), (1024, 20, 0.1, 64),
                                     (4096, 0, 0.1, 64), (512, 7, 0.05, 256), (2048, 1, 0.2, 128))]


def law_lr_recipe(lr_recipe, recipe, batch_size, warmup_steps, base_lr, base_batch):
    """Notebook 09: ``'fixed'`` gives ``{'learning_rate': base_lr}``; ``'linear'`` ``base_lr * batch_size /
    base_batch``; ``'warmup'`` the same rate and, where it is above ``base_lr`` and ``warmup_steps`` > 0, an
    ``lr_scheduler`` rising linearly from ``base_lr`` to it over ``warmup_steps`` updates, then staying."""
    lr = base_lr if recipe == 'fixed' else base_lr * batch_size / base_batch
    ramp = recipe == 'warmup' and warmup_steps > 0 and lr > base_lr
    call = f'lr_recipe({recipe!r}, {batch_size}, {warmup_steps}, base_lr={base_lr}, base_batch={base_batch})'
    got = lr_recipe(recipe, batch_size, warmup_steps, base_lr, base_batch)
    want_keys = ['learning_rate'] + (['lr_scheduler'] if ramp else [])
    if not isinstance(got, dict) or sorted(got) != sorted(want_keys):
        raise Broken(call, expected=f'a dict with {want_keys}', got=repr(got)[:160],
                     why=('a ramp only where there is something to warm up to: warmup_steps > 0 and a scaled rate '
                          'above base_lr' if isinstance(got, dict) and 'lr_scheduler' in got and not ramp else
                          'the warmup recipe adds an lr_scheduler (a WarmUp) beside the learning rate'
                          if ramp else None))
    if not np.isclose(got['learning_rate'], lr, rtol=1e-12, atol=0):
        ratio = got['learning_rate'] / lr
        why = ('the linear scaling rule multiplies base_lr by batch_size / base_batch' if
               np.isclose(ratio, (base_batch / batch_size) ** 2) and batch_size != base_batch else
               f'the fixed recipe keeps base_lr ({base_lr})' if recipe == 'fixed' else None)
        raise Broken(f'{call}["learning_rate"]', expected=f'{lr:g}', got=f'{got["learning_rate"]!r}', why=why)
    if ramp:
        sched = got['lr_scheduler']
        updates = sorted({0, 1, warmup_steps // 2, warmup_steps - 1, warmup_steps, warmup_steps + 5})
        want = [base_lr + (lr - base_lr) * u / warmup_steps if u < warmup_steps else lr for u in updates]
        rates = [sched(u) for u in updates]
        if not isinstance(sched, mx.lr_scheduler.LRScheduler) or not np.allclose(rates, want, rtol=1e-9, atol=0):
            raise Broken(f'{call}["lr_scheduler"], update by update',
                         expected=', '.join(f'{u}: {w:.5g}' for u, w in zip(updates, want)),
                         got=', '.join(f'{u}: {r:.5g}' for u, r in zip(updates, rates)),
                         why=('the ramp starts at base_lr: WarmUp(base_lr=lr, warmup_steps=warmup_steps, '
                              'warmup_begin_lr=base_lr)' if not np.isclose(rates[0], base_lr) else
                              'an MXNet LRScheduler: notebook 09\'s WarmUp'))


def law_lr_recipe_refuses_an_unknown_recipe(lr_recipe, recipe):
    """Notebook 09: a recipe other than 'fixed', 'linear' and 'warmup' is refused with a ValueError."""
    if not _refuses(lambda: lr_recipe(recipe, 256, 10), ValueError):
        raise Broken(f'lr_recipe({recipe!r}, 256, 10) must be refused with a ValueError', got='another outcome',
                     why='keep the first line: if recipe not in RECIPES: raise ValueError(...)')


def _epoch_formula(k, n, batch, overhead, per_example, nbytes, alpha, bandwidth, ceil=True, share=True, ring=True):
    kf = np.asarray(k, dtype=float)
    steps = np.ceil(n / np.asarray(batch, dtype=float)) if ceil else n / np.asarray(batch, dtype=float)
    talk = (2 * (kf - 1) * (alpha + nbytes / kf / bandwidth) if ring else
            2 * (kf - 1) * (alpha + nbytes / bandwidth))
    return steps * (overhead + np.asarray(batch) / (kf if share else 1) * per_example + talk)


EPOCH_CASES = [dict(k=k, n=n, batch=b, overhead=o, per_example=p, nbytes=nb, alpha=a, bandwidth=bw)
               for k, n, b, o, p, nb, a, bw in (
                   (1, 60000, 256, 2e-3, 1e-4, 44e6, 1e-5, 15e9), (2, 60000, 128, 0.0, 1e-4, 44e6, 1e-5, 15e9),
                   (3, 1000, 96, 1e-3, 5e-5, 1e6, 2e-5, 1e9), (8, 60000, 512, 2e-3, 1e-4, 4.4e7, 1e-5, 1.5e10),
                   (64, 50000, 4096, 1e-2, 1e-7, 1e9, 1e-3, 1e10), ([1, 2, 4, 8], 60000, [256, 512, 1024, 2048], 0.0,
                                                                   1e-4, 44e6, 1e-5, 15e9))]


def law_epoch_time(epoch_time, k, n, batch, overhead, per_example, nbytes, alpha, bandwidth):
    """Notebook 09: ceil(n / batch) steps, each a fixed overhead, the compute of one device's share
    (batch / k examples) and a ring allreduce of the gradients, 2 (k-1) (alpha + nbytes / k / bandwidth);
    for a number of devices or an array of them; no communication at k = 1."""
    args = (np.asarray(k) if isinstance(k, list) else k, n, np.asarray(batch) if isinstance(batch, list) else batch,
            overhead, per_example, nbytes, alpha, bandwidth)
    want = _epoch_formula(*args)
    got = np.asarray(epoch_time(*args), dtype=float)
    if got.shape == want.shape and np.allclose(got, want, rtol=1e-9, atol=0):
        return
    why = None
    for kind, alt in (('ceil', dict(ceil=False)), ('share', dict(share=False)), ('ring', dict(ring=False))):
        if got.shape == want.shape and np.allclose(got, _epoch_formula(*args, **alt), rtol=1e-9, atol=0):
            why = {'ceil': f'n / batch = {np.asarray(n / np.asarray(batch, dtype=float)).tolist()} is not whole: the '
                           'last, smaller batch is a step too (np.ceil)',
                   'share': 'the devices compute in parallel: each takes batch / k examples, not the whole batch',
                   'ring': 'the gradients go round a ring: each of the 2 (k-1) messages carries nbytes / k '
                           '(costmodel.cost_ring)'}[kind]
    raise Broken(f'epoch_time(k={np.asarray(k).tolist()}, n={n}, batch={np.asarray(batch).tolist()}, '
                 f'overhead={overhead:g}, '
                 f'per_example={per_example:g}, nbytes={nbytes:g}, alpha={alpha:g}, bandwidth={bandwidth:g})',
                 expected=str(np.round(want, 6).tolist()), got=str(np.round(got, 6).tolist()), why=why)


PUSHPULL_CASES = [dict(nbytes=n, rate=r, alpha=a, compression=c)
                  for n, r, a in ((4, 1e9, 1e-4), (246_824, 100e6, 2e-4), (10 * 2 ** 20, 100e6, 1e-3),
                                  (44_000_000, 1e9, 5e-5), (1e9, 25e9, 1e-5))
                  for c in (False, True)]


def _pushpull_formula(nbytes, rate, alpha, compression, pull=False, payload=True, bits=True, two=True):
    from helpers.scaling import FRAME_PAYLOAD
    push = nbytes / 16 if compression else nbytes
    back = nbytes / 16 if compression and pull else nbytes
    goodput = rate / (8 if bits else 1) * (FRAME_PAYLOAD if payload else 1)
    return (2 if two else 1) * alpha + (push + back) / goodput


def law_pushpull_step(pushpull_step, nbytes, rate, alpha, compression):
    """Notebook 09: two messages of latency alpha, the push (1/16 of the bytes with 2-bit compression)
    and the pull (always full float32), at the link's goodput: rate / 8 bytes per second times the
    payload of a frame, FRAME_PAYLOAD."""
    want = _pushpull_formula(nbytes, rate, alpha, compression)
    got = pushpull_step(nbytes, rate, alpha, compression)
    if np.isclose(got, want, rtol=1e-9, atol=0):
        return
    why = None
    for alt, words in ((dict(pull=True), '2-bit compression shrinks the push only: the server answers the pull '
                                         'with full float32 values'),
                       (dict(payload=False), 'a capped link carries FRAME_PAYLOAD (1448 of every 1514) bytes of data '
                                             'per byte on the wire: goodput = rate / 8 * FRAME_PAYLOAD'),
                       (dict(bits=False), 'rate is in bits per second: divide by 8 for bytes'),
                       (dict(two=False), 'two messages, the push and the pull, each pay the latency alpha')):
        if np.isclose(got, _pushpull_formula(nbytes, rate, alpha, compression, **alt), rtol=1e-9, atol=0):
            why = words
    raise Broken(f'pushpull_step({nbytes:g}, rate={rate:g}, alpha={alpha:g}, compression={compression})',
                 expected=f'{want:.6g} s', got=f'{got!r}', why=why)


# ====================================================================== buckets (notebook 10)

PLAN_CASES = [dict(sizes=s, bucket_bytes=b, itemsize=i) for s, b, i in (
    ([5], 1, 4), ([5], 10 ** 9, 4), ([3, 4], 1, 4), ([3, 4], 12, 4), ([3, 4], 13, 4), ([10, 20, 30, 40], 120, 4),
    ([10, 20, 30, 40], 10 ** 9, 2), ([2, 2, 2, 2, 2], 16, 4), ([2, 2, 2, 2, 2], 17, 4), ([7, 1, 1, 9, 3, 3], 40, 8),
    ([50, 1, 50, 1, 50], 60, 2), ([1] * 12, 10, 4), ([6, 5, 4, 3, 2, 1], 13, 1))]


def law_plan_buckets(plan_buckets, sizes, bucket_bytes, itemsize):
    """Notebook 10: every gradient in exactly one bucket, last layer first; in each bucket the slots
    are contiguous from 0, each as long as its gradient; every bucket but the last closed because its
    last gradient filled it to ``bucket_bytes`` or more. Hence one bucket per gradient when a gradient
    alone fills one, and one bucket when ``bucket_bytes`` exceeds them all."""
    plans = plan_buckets(list(sizes), bucket_bytes, itemsize)
    call = f'plan_buckets({list(sizes)}, {bucket_bytes}, itemsize={itemsize})'
    try:
        got = [[tuple(int(x) for x in slot) for slot in plan] for plan in plans]
    except (TypeError, ValueError):
        raise Broken(call, expected='a list of buckets, each a list of (i, begin, end)', got=repr(plans)[:160])
    want = _plan(sizes, bucket_bytes, itemsize)
    if got == want:
        return
    order = [i for plan in got for i, _, _ in plan]
    missing = [i for i in range(len(sizes)) if i not in order]
    why = None
    if missing:
        why = (f'{_gradients_words(missing)[:-4]} {"are" if len(missing) > 1 else "is"} in no bucket: '
               'keep the last bucket too, even when it is not full (`if bucket: buckets.append(bucket)`)')
    elif sorted(order) != order and order != list(reversed(range(len(sizes)))):
        why = 'gradients appear twice or out of order'
    elif order != list(reversed(range(len(sizes)))):
        why = 'last layer first: the backward pass writes the last layer\'s gradient first (reversed(range(...)))'
    else:
        for b, plan in enumerate(got):
            for (i, begin, end), prev in zip(plan, [None] + plan[:-1]):
                if begin != (prev[2] if prev else 0) or end - begin != sizes[i]:
                    why = (f'in bucket {b}, gradient {i} ({sizes[i]} elements) must fill elements '
                           f'{prev[2] if prev else 0}:{(prev[2] if prev else 0) + sizes[i]}: each slot begins where '
                           'the last one ended')
                    break
            if why:
                break
            filled = plan[-1][2] * itemsize
            if b < len(got) - 1 and filled < bucket_bytes:
                why = f'bucket {b} closed at {filled} bytes, before it held bucket_bytes ({bucket_bytes})'
            elif filled - sizes[plan[-1][0]] * itemsize >= bucket_bytes:
                why = (f'bucket {b} held {filled - sizes[plan[-1][0]] * itemsize} bytes before its last gradient: a '
                       f'bucket closes as soon as it holds bucket_bytes ({bucket_bytes}) or more')
            if why:
                break
    raise Broken(call, expected=str(want), got=str(got), why=why)


def _plan(sizes, bucket_bytes, itemsize):
    """Notebook 10's plan, written as the law states it."""
    plans, slots, filled = [], [], 0
    for i in range(len(sizes) - 1, -1, -1):
        slots.append((i, filled, filled + sizes[i]))
        filled += sizes[i]
        if filled * itemsize >= bucket_bytes:
            plans.append(slots)
            slots, filled = [], 0
    return plans + ([slots] if slots else [])


def law_plan_refuses_bad_input(plan_buckets, bad):
    """Notebook 10: no gradient, a size below 1, a bucket of fewer than 1 byte (ValueError) or sizes
    that are not a list (TypeError) are refused."""
    args, error = {'no gradient': (([], 100), ValueError), 'a size of 0': (([3, 0], 100), ValueError),
                   'a bucket of 0 bytes': (([3], 0), ValueError), 'sizes not a list': ((7, 100), TypeError)}[bad]
    if not _refuses(lambda: plan_buckets(*args), error):
        raise Broken(f'plan_buckets{args} must be refused with a {error.__name__}', got='another outcome',
                     why='keep the guard line `checks.bucket_plan(sizes, bucket_bytes, itemsize)`')


def _grads(k, shapes, seed, dtype='float32'):
    rng = np.random.default_rng(seed)
    return [[nd.array(rng.standard_normal(s), ctx=c, dtype=dtype) for c in CPU[:k]] for s in shapes]


BUCKETED_CASES = sorted([dict(k=k, shapes=s, bucket_bytes=b, dtype=d, seed=10 * k + len(s))
                         for k, s in ((1, [(3,)]), (2, [(3,), (2, 2)]), (3, [(2, 3), (1,), (5,)]),
                                      (4, [(4,), (3,), (2,), (1,)]), (5, [(7,), (2, 2, 2)]),
                                      (8, [(3,), (9,), (1,), (2, 5)]))
                         for b in (1, 20, 10 ** 9) for d in ('float32', 'float64')],
                        key=lambda c: (c['k'], len(c['shapes']), c['bucket_bytes']))


def _shapes_words(shapes):
    return ', '.join(str(tuple(s)) for s in shapes)


def law_bucketed_like_unbucketed(allreduce_bucketed, k, shapes, bucket_bytes, dtype, seed):
    """Notebook 10: in place, every gradient ends with the bits of its own allreduce (``allreduce_naive``
    adds the devices in one order for every element, bucketed or not), keeps its device, shape and
    dtype; one ``allreduce`` per bucket of ``plan_buckets``, each of the bucket's size; returns grads."""
    from helpers.buckets import plan_buckets as lesson_plan
    from helpers.comm import allreduce_naive
    grads = _grads(k, shapes, seed, dtype)
    given = [list(g) for g in grads]
    own = [[a.asnumpy() for a in g] for g in grads]
    reference = [[a.copy() for a in g] for g in grads]
    for g in reference:
        allreduce_naive(g)
    buckets = [p[-1][2] for p in lesson_plan([int(np.prod(s)) for s in shapes], bucket_bytes, np.dtype(dtype).itemsize)]
    calls = []

    def counting(arrays, *args, **kwargs):
        calls.append(int(arrays[0].size))
        return allreduce_naive(arrays, *args, **kwargs)
    out = allreduce_bucketed(grads, bucket_bytes, allreduce=counting)
    case = (f'{k} device{"s" * (k > 1)}, gradients of shapes {_shapes_words(shapes)}, {dtype}, '
            f'bucket_bytes {bucket_bytes}')
    if out is not grads:
        raise Broken('allreduce_bucketed works in place and returns grads', why='end with `return grads`')
    unsummed = []
    for i, (g, ref, mine, before) in enumerate(zip(grads, reference, own, given)):
        for d, (a, r, m, b) in enumerate(zip(g, ref, mine, before)):
            if a is not b or a.context != CPU[d] or a.shape != tuple(shapes[i]) or np.dtype(a.dtype) != np.dtype(dtype):
                raise Broken(f'gradient {i} on device {d} must stay the same array, on {CPU[d]}, shape '
                             f'{tuple(shapes[i])}, {dtype}', got=f'{a.context}, shape {a.shape}, {np.dtype(a.dtype)}',
                             why='copy the sums back into the gradients (copyto), do not replace them')
            if not np.array_equal(a.asnumpy(), r.asnumpy()):
                if k > 1 and np.array_equal(a.asnumpy(), m):
                    unsummed.append(i)
                    break
                raise Broken(f'gradient {i} on device {d} ({case})', expected=_fmt(r.asnumpy()) + ' (its allreduce)',
                             got=_fmt(a.asnumpy()),
                             why='unpack each sum from its slot: flat[begin:end].reshape(shape) of the plan')
    last = ('the last bucket is missing: sum every bucket of plan_buckets, the last one too, even when it is not '
            'full' if len(calls) < len(buckets) and calls == buckets[:len(calls)] else None)
    if unsummed:
        raise Broken(f'{_gradients_words(unsummed)} never summed ({case})',
                     expected=f'allreduces of {buckets} elements (the buckets of plan_buckets)',
                     got=f'allreduces of {calls} elements',
                     why=last or 'every gradient goes into a bucket, and every bucket is summed')
    if calls != buckets:
        raise Broken(f'one allreduce per bucket ({case})', expected=f'allreduces of {buckets} elements',
                     got=f'allreduces of {calls} elements',
                     why=last or 'pack each bucket of plan_buckets(sizes, bucket_bytes, itemsize) into one flat array '
                                 'per device, then one allreduce(flats) (the allreduce argument)')


def _gradients_words(indices):
    """``'gradient 0 was'``, ``'gradients 0, 1 were'``."""
    if len(indices) == 1:
        return f'gradient {indices[0]} was'
    return f'gradients {", ".join(map(str, indices))} were'


def law_bucketed_refuses_bad_input(allreduce_bucketed, bad):
    """Notebook 10: a bucket size that is not a whole number >= 1, no gradient, something else than a
    list, mixed dtypes, shapes or devices are refused before any work, every gradient untouched."""
    grads = _grads(2, [(3,), (4,)], 0)
    args, error = {
        'bucket_bytes 0': ((grads, 0), ValueError), 'bucket_bytes -5': ((grads, -5), ValueError),
        'bucket_bytes 2.5': ((grads, 2.5), TypeError), 'bucket_bytes True': ((grads, True), TypeError),
        'no gradient': (([], 100), ValueError), 'an array, not a list': ((grads[0][0], 100), TypeError),
        'mixed dtypes': ((grads + _grads(2, [(2,)], 0, 'float64'), 100), TypeError),
        'one gradient of two shapes': (([grads[0], [grads[1][0], nd.ones(5, ctx=CPU[1])]], 100), ValueError),
        'devices in another order': (([grads[0], grads[1][::-1]], 100), ValueError)}[bad]
    before = [[a.asnumpy() for a in g] for g in grads]
    if not _refuses(lambda: allreduce_bucketed(*args), error):
        raise Broken(f'{bad} must be refused with a {error.__name__}', got='another outcome',
                     why='keep the guard line `itemsize = checks.buckets(grads, bucket_bytes)` first')
    if any(not np.array_equal(a.asnumpy(), b) for g, bs in zip(grads, before) for a, b in zip(g, bs)):
        raise Broken(f'{bad}: a gradient changed before the call was refused', why='check before any work')


def _small_net(devices, seed=0):
    """A small Gluon net with a BatchNorm (whose running statistics have no gradient), on ``devices``;
    returns it and its parameters that have gradients, in layer order."""
    net = gluon.nn.Sequential()
    net.add(gluon.nn.Conv2D(3, 3, in_channels=1), gluon.nn.BatchNorm(in_channels=3), gluon.nn.Activation('relu'),
            gluon.nn.Dense(4, in_units=3 * 4 * 4))
    mx.random.seed(seed)
    net.initialize(mx.init.Normal(0.1), ctx=devices)
    return net, [p for p in net.collect_params().values() if p.grad_req != 'null']


def _small_losses(net, devices, seed=1):
    X = nd.array(np.random.default_rng(seed).standard_normal((2 * len(devices), 1, 6, 6)))
    with autograd.record():
        return [net(X[2 * i:2 * i + 2].as_in_context(d)).sum() for i, d in enumerate(devices)]


def _small_grads(k, summed):
    """Every gradient of the small net after backward on k devices: each device's own, or summed."""
    from helpers.comm import allreduce_naive
    net, params = _small_net(CPU[:k])
    for l in _small_losses(net, CPU[:k]):
        l.backward()
    if summed:
        for p in reversed(params):
            allreduce_naive(p.list_grad())
    return [[g.asnumpy() for g in p.list_grad()] for p in params]


BACKWARD_CASES = [dict(k=k, wait=w, groups=g) for k in (1, 2, 3) for w in (True, False)
                  for g in ('gradients', 'buckets')]


def law_backward_and_send(backward_and_send, k, wait, groups):
    """Notebook 10: backward on every device, then one ``allreduce`` per group, in the order given
    (a gradient or a bucket of views, one array per device), waiting first or not: every gradient
    ends with its allreduce's bits."""
    from helpers.buckets import bucket_gradients
    from helpers.comm import allreduce_naive
    net, params = _small_net(CPU[:k])
    given = ([p.list_grad() for p in reversed(params)] if groups == 'gradients' else bucket_gradients(params, 100))
    calls = []

    def recording(arrays, *args, **kwargs):
        calls.append(arrays)
        return allreduce_naive(arrays, *args, **kwargs)
    backward_and_send(_small_losses(net, CPU[:k]), given, wait=wait, allreduce=recording)
    case = f'{k} device{"s" * (k > 1)}, {len(given)} {groups}, wait={wait}'
    if len(calls) != len(given) or any(a is not b for a, b in zip(calls, given)):
        order = [next((j for j, g in enumerate(given) if g is c), '?') for c in calls]
        raise Broken(f'one allreduce per group, in the order given ({case})',
                     expected=f'allreduce of groups {list(range(len(given)))}', got=f'allreduce of groups {order}',
                     why='for arrays in groups: allreduce(arrays) (the allreduce argument)')
    want, own = _small_grads(k, summed=True), _small_grads(k, summed=False)
    for i, (p, w, o) in enumerate(zip(params, want, own)):
        got = [g.asnumpy() for g in p.list_grad()]
        if any(not np.array_equal(a, b) for a, b in zip(got, w)):
            why = ('each device holds its own gradient, not the sum: the allreduces ran before the backward pass '
                   'wrote the gradients (backward first, then allreduce)' if k > 1 and
                   all(np.array_equal(a, b) for a, b in zip(got, o)) else
                   'backward every device\'s loss (for l in losses: l.backward())')
            raise Broken(f'{p.name}\'s gradient after backward_and_send ({case})', expected=_fmt(w[0]) + ' everywhere',
                         got=_devices_words(got), why=why)


BUCKET_VIEW_CASES = [dict(k=k, bucket_bytes=b) for k in (1, 2, 3) for b in (1, 100, 10 ** 9)]


def law_bucket_views(bucket_gradients, k, bucket_bytes):
    """Notebook 10: one flat bucket per plan of ``plan_buckets``, last layer first, one array per
    device (``[bucket][device]``, the parameters' dtype); afterwards backward writes every gradient
    straight into its slot of its bucket, and Gluon's ``list_grad()`` and autograd's ``.grad`` are
    those views, with the values of ordinary gradient buffers."""
    from helpers.buckets import plan_buckets as lesson_plan
    net, params = _small_net(CPU[:k])
    want = _small_grads(k, summed=False)
    buckets = bucket_gradients(params, bucket_bytes)
    plans = lesson_plan([p.list_data()[0].size for p in params], bucket_bytes, 4)
    case = f'{k} device{"s" * (k > 1)}, bucket_bytes {bucket_bytes}'
    shape = [[(b.size, b.context) if isinstance(b, nd.NDArray) else None for b in flats] for flats in buckets] \
        if isinstance(buckets, (list, tuple)) else None
    expected = [[(plan[-1][2], d) for d in CPU[:k]] for plan in plans]
    if shape != expected:
        raise Broken(f'the buckets ({case}): one flat array per device for each bucket of plan_buckets',
                     expected=str([[f'{n} elements on {d}' for n, d in flats] for flats in expected]),
                     got=str([[f'{b[0]} elements on {b[1]}' if b else '?' for b in flats] for flats in shape])
                     if shape else repr(buckets)[:160],
                     why='for each plan: nd.zeros(plan[-1][2], ctx=..., dtype=...) per device, in the plan\'s order')
    for flats in buckets:
        for f in flats:
            f[:] = np.nan                         # backward must overwrite every slot
    for l in _small_losses(net, CPU[:k]):
        l.backward()
    nd.waitall()
    for plan, flats in zip(plans, buckets):
        for i, begin, end in plan:
            for d, f in enumerate(flats):
                slot = f[begin:end].asnumpy()
                if not np.array_equal(slot, want[i][d].reshape(-1)):
                    untouched = np.isnan(slot).all()
                    raise Broken(f'{params[i].name}\'s slot {begin}:{end} in its bucket on device {d} after backward '
                                 f'({case})', expected=_fmt(want[i][d]), got=_fmt(slot),
                                 why=('backward did not write into the bucket: make the views autograd\'s gradient '
                                      'buffers too, autograd.mark_variables(params[i].list_data(), views)'
                                      if untouched else 'gradient i fills elements begin:end of its bucket'))
    for p, w in zip(params, want):
        for d, (g, data) in enumerate(zip(p.list_grad(), p.list_data())):
            if not np.array_equal(g.asnumpy(), w[d]) or not np.array_equal(data.grad.asnumpy(), w[d]):
                raise Broken(f'{p.name}\'s gradient on device {d} ({case})', expected=_fmt(w[d]),
                             got=f'list_grad(): {_fmt(g.asnumpy())}, .grad: {_fmt(data.grad.asnumpy())}',
                             why='give Gluon the views too: params[i]._grad = views')


# ====================================================================== the sharded optimizer (notebook 11)

SHARDED_CASES = [dict(k=k, n=n) for k, n in ((1, 3), (2, 5), (3, 7), (4, 9))]


def _sharded_setup(k, n, seed=0):
    from helpers.models import init_lenet_params
    from helpers.sharding import adam_updaters, make_replicas
    params = init_lenet_params(seed)
    return make_replicas(params, CPU[:k]), adam_updaters(CPU[:k], 1e-3, n)


def law_sharded_step_is_the_replicated_one(train_batch_sharded, k, n, steps=2):
    """Notebook 11: two sharded steps give, bit for bit on every device, the weights of the replicated
    step summed by the ring (reduce-scatter and all-gather are its two halves; Adam is elementwise), and
    return every device's loss sum."""
    from helpers.comm import allreduce_ring, owner_chunk
    from helpers.sharding import train_batch_replicated
    from helpers.split import shard_bounds
    ours, ours_u = _sharded_setup(k, n)
    ref, ref_u = _sharded_setup(k, n)
    Xn, yn = tiny_data(steps * n, 6)
    for s in range(steps):
        X, y = nd.array(Xn[s * n:(s + 1) * n]), nd.array(yn[s * n:(s + 1) * n], dtype='int32')
        losses = train_batch_sharded(X, y, ours, CPU[:k], ours_u)
        train_batch_replicated(X, y, ref, CPU[:k], ref_u, sum_grads=allreduce_ring)
        if not isinstance(losses, (list, tuple)) or len(losses) != k:
            raise Broken('the step returns one loss sum per device', got=repr(losses)[:120],
                         why='return the losses of forward_backward')
    want = ref[0].weights.asnumpy()
    chunks = shard_bounds(want.size, k)
    for i, r in enumerate(ours):
        got = r.weights.asnumpy()
        if not np.array_equal(got, want):
            bad = [c for c, (b, e) in enumerate(chunks) if not np.array_equal(got[b:e], want[b:e])]
            raise Broken(f'device {i}\'s weights after {steps} sharded steps differ from the replicated step\'s',
                         expected=f'the replicated step\'s weights, bit for bit (chunk {bad[0]}: '
                                  f'{_fmt(want[slice(*chunks[bad[0]])])})',
                         got=f'chunk{"s" * (len(bad) > 1)} {bad} differ{"s" * (len(bad) == 1)} '
                             f'(chunk {bad[0]}: {_fmt(got[slice(*chunks[bad[0]])])})',
                         why='after the reduce-scatter device i holds the finished sum of chunk owner_chunk(i, k) only '
                             f'(here device 0: chunk {owner_chunk(0, k)}); it updates that chunk, with that summed '
                             'gradient, and the all-gather then sends the updated weights to every device')


def law_sharded_state_is_one_chunk(train_batch_sharded, k, n):
    """Notebook 11: after a sharded step each device's optimizer holds state (Adam: mean and variance)
    for its own chunk only, ``owner_chunk(i, k)`` of the flat weights -- 1/k of the replicated state."""
    from helpers.comm import owner_chunk
    from helpers.sharding import state_elements
    from helpers.split import shard_bounds
    reps, updaters = _sharded_setup(k, n)
    Xn, yn = tiny_data(n, 7)
    train_batch_sharded(nd.array(Xn), nd.array(yn, dtype='int32'), reps, CPU[:k], updaters)
    size = reps[0].weights.size
    chunks = shard_bounds(size, k)
    want = [2 * (chunks[owner_chunk(i, k)][1] - chunks[owner_chunk(i, k)][0]) for i in range(k)]
    got = state_elements(updaters)
    if got != want:
        i = next(i for i, (a, b) in enumerate(zip(got, want)) if a != b)
        why = (f'device {i} updated all {size} weights: update only its own chunk, '
               f'update(0, r.grads[b:e], r.weights[b:e]) with (b, e) = chunks[owner_chunk(i, k)]'
               if got[i] == 2 * size else
               'each device updates chunk owner_chunk(i, k), the one the reduce-scatter finished on it')
        raise Broken(f'elements of Adam state per device after one step on {k} devices', expected=str(want),
                     got=str(got), why=why)


def law_sharded_bytes_are_one_ring_allreduce(train_batch_sharded, k, n=4):
    """Notebook 11: every transfer of the sharded step goes through ``send``, and each device sends
    and receives the bytes of one ring allreduce of the flat weights: a reduce-scatter and an all-gather."""
    from helpers.comm import CommStats
    from helpers.costmodel import ring_bytes_per_device
    reps, updaters = _sharded_setup(k, n)
    Xn, yn = tiny_data(n, 8)
    stats = CommStats()
    train_batch_sharded(nd.array(Xn), nd.array(yn, dtype='int32'), reps, CPU[:k], updaters, send=stats.send)
    size = reps[0].weights.size
    want = ring_bytes_per_device(k, size, 4) if k > 1 else [0]
    got = stats.per_device(CPU[:k])
    if got != want:
        why = ('no byte went through send: pass send on to reduce_scatter and all_gather' if not any(got) else
               f'each device sent {got[0] / want[0]:.3g} times the ring\'s bytes: a reduce-scatter of the gradients '
               'and an all-gather of the weights, nothing more' if want[0] else None)
        raise Broken(f'bytes sent by each device in one sharded step of {size} float32 weights on {k} devices',
                     expected=str(want), got=str(got), why=why)


# ---------------------------------------------------------------------- notebook 11: one flat array per replica

FLAT_CASES = [dict(shapes=s, device=d) for s, d in (([(3,)], 0), ([(2, 3), (4,)], 1), ([(2, 2, 2), (1,), (3, 1)], 2),
                                                    ([(6, 1, 5, 5), (6,), (16, 6, 5, 5), (16,)], 3))]


def _params(shapes, seed=0):
    rng = np.random.default_rng(seed)
    return [nd.array(rng.standard_normal(s)) for s in shapes]


def law_views_of(views_of, shapes, device):
    """Notebook 11: one view per parameter, each of the parameter's shape, holding the next elements of
    the flat array in order, and sharing its memory: what is written into the flat array is seen
    through the views."""
    params = _params(shapes)
    n = sum(p.size for p in params)
    flat = nd.arange(n, ctx=CPU[device])
    views = views_of(flat, params)
    got = [tuple(v.shape) for v in views] if isinstance(views, (list, tuple)) else None
    if got != [tuple(s) for s in shapes]:
        raise Broken(f'views_of(a flat array of {n}, parameters of shapes {shapes})', expected=str(shapes),
                     got=str(got) if got is not None else repr(views)[:120])
    begin = 0
    for v, s in zip(views, shapes):
        size = int(np.prod(s))
        if not np.array_equal(v.asnumpy().reshape(-1), np.arange(begin, begin + size)):
            raise Broken(f'the view of shape {s} holds elements {begin}:{begin + size} of the flat array',
                         expected=_fmt(np.arange(begin, begin + size)), got=_fmt(v.asnumpy()),
                         why='each view starts where the last one ended: flat[e - p.size:e] with e the running sum')
        begin += size
    flat[:] = -1
    if any((v.asnumpy() != -1).any() for v in views):
        raise Broken('the views must share the flat array\'s memory: a write into it is not seen through them',
                     why='a slice and a reshape share memory (flat[b:e].reshape(shape)); a copy does not')


def law_flat_replica(flat_replica, shapes, device):
    """Notebook 11: a copy of the parameters on the device as ONE flat array (their elements, in order),
    and the parameters as views of it; the originals stay apart."""
    params = _params(shapes, 1)
    flat, views = flat_replica(params, CPU[device])
    want = np.concatenate([p.asnumpy().reshape(-1) for p in params])
    if not isinstance(flat, nd.NDArray) or flat.shape != want.shape or flat.context != CPU[device]:
        raise Broken('the flat replica is one 1-D array of every element, on the device',
                     expected=f'shape {want.shape} on {CPU[device]}',
                     got=f'shape {flat.shape} on {flat.context}' if isinstance(flat, nd.NDArray) else repr(flat)[:80],
                     why='nd.concat of every parameter reshaped to 1-D, then copyto(device)')
    if not np.array_equal(flat.asnumpy(), want):
        raise Broken('the flat replica holds every parameter\'s elements, in order', expected=_fmt(want),
                     got=_fmt(flat.asnumpy()))
    if [tuple(v.shape) for v in views] != [tuple(s) for s in shapes] or \
            any(not np.array_equal(v.asnumpy(), p.asnumpy()) for v, p in zip(views, params)):
        raise Broken('the views have the parameters\' shapes and values', why='views_of(flat, params)')
    flat[:] = 7
    if any((v.asnumpy() != 7).any() for v in views):
        raise Broken('the views must share the flat array\'s memory', why='views_of(flat, params), not copies')
    if any((p.asnumpy() == 7).all() for p in params):
        raise Broken('writing the replica changed the original parameters: it must be a copy',
                     why='.copyto(device) makes the copy')


def law_attach_flat_grad(attach_flat_grad, shapes, device):
    """Notebook 11: a flat gradient of the flat weights' shape, zeros, on their device; after backward
    through the views, each parameter's gradient sits in its slot of it."""
    from helpers.sharding import flat_replica
    params = _params(shapes, 2)
    flat, views = flat_replica(params, CPU[device])
    grad = attach_flat_grad(flat, views)
    if not isinstance(grad, nd.NDArray) or grad.shape != flat.shape or grad.context != flat.context or \
            grad.asnumpy().any():
        raise Broken('the flat gradient: zeros of the flat weights\' shape, on their device',
                     expected=f'{flat.size} zeros on {flat.context}', why='nd.zeros_like(flat)',
                     got=(f'shape {grad.shape} on {grad.context}, sum {float(grad.asnumpy().sum()):g}'
                          if isinstance(grad, nd.NDArray) else repr(grad)[:80]))
    with autograd.record():
        total = sum((v * (i + 1)).sum() for i, v in enumerate(views))
    try:
        total.backward()
    except mx.base.MXNetError:
        raise Broken('backward through the views failed: autograd knows no gradient buffer for them',
                     got=_message(sys.exc_info()[1])[:120],
                     why='make views of the flat gradient autograd\'s gradient buffers: '
                         'autograd.mark_variables(views, views_of(grad, views))') from None
    want = np.concatenate([np.full(int(np.prod(s)), i + 1.0) for i, s in enumerate(shapes)])
    if not np.array_equal(grad.asnumpy(), want):
        raise Broken('after backward of sum(view_i * (i + 1)), the flat gradient holds i + 1 in parameter i\'s slot',
                     expected=_fmt(want), got=_fmt(grad.asnumpy()),
                     why=('backward did not write into the flat gradient: make views of it autograd\'s gradient '
                          'buffers, autograd.mark_variables(views, views_of(grad, views))'
                          if not grad.asnumpy().any() else 'views_of(grad, views): the same slots as the weights'))


def law_forward_backward(forward_backward, k, n, seed=0):
    """Notebook 11: split the batch, forward (the ``forward`` given) and backward on every device: each
    replica's gradient buffers hold the gradient of its own shard's summed loss; it returns each
    device's loss sum, on that device."""
    from helpers.models import init_lenet_params, lenet_scratch, replicate_params
    from helpers.split import split_batch
    from helpers.train import loss
    params = init_lenet_params(seed)
    Xn, yn = tiny_data(n, 11)
    X, y = nd.array(Xn), nd.array(yn, dtype='int32')
    reps = [replicate_params(params, d) for d in CPU[:k]]
    calls = []

    def forward(Xs, ps):
        calls.append(Xs.context)
        return lenet_scratch(Xs, ps)
    sums = forward_backward(X, y, reps, CPU[:k], forward=forward)
    if sorted(calls, key=str) != sorted(CPU[:k], key=str):
        raise Broken('the forward given runs once per device, on its shard', expected=str(CPU[:k]), got=str(calls),
                     why='call forward(Xs, ps) (the forward argument), not lenet_scratch itself')
    for d, (Xs, ys) in enumerate(zip(*split_batch(X, y, CPU[:k]))):
        ws = [p.copy() for p in reps[d]]
        for w, p in zip(ws, params):
            w[:] = p.as_in_context(w.context)
            w.attach_grad()
        with autograd.record():
            total = loss(lenet_scratch(Xs, ws), ys).sum()
        total.backward()
        for j, (p, w) in enumerate(zip(reps[d], ws)):
            if not np.allclose(p.grad.asnumpy(), w.grad.asnumpy(), rtol=1e-5, atol=1e-6):
                raise Broken(f'device {d}\'s gradient of parameter {j}', expected=_fmt(w.grad.asnumpy()),
                             got=_fmt(p.grad.asnumpy()),
                             why='forward under autograd.record() on each shard, then l.backward() for every loss')
        got = sums[d] if isinstance(sums, (list, tuple)) and len(sums) == k else None
        if got is None or got.context != CPU[d] or not np.isclose(got.asscalar(), total.asscalar(), rtol=1e-5):
            raise Broken(f'device {d}\'s loss sum, on that device', expected=f'{total.asscalar():.6f} on {CPU[d]}',
                         got=repr(sums)[:120] if got is None else f'{got.asscalar():.6f} on {got.context}',
                         why='return [l.sum() for l in ls]')


REPLICATED_CASES = [dict(k=k, n=n) for k, n in ((1, 2), (2, 4), (3, 8))]      # batches of 2**j examples


def law_replicated_step_is_notebook_05s(train_batch_replicated, k, n, lr=0.125):
    """Notebook 11: with SGD updaters dividing by the batch (of 2**j examples: MXNet's optimizer
    operators take ``rescale_grad`` as float32, src/operator/optimizer_op-inl.h, exact for a power of
    two), the replicated step on flat replicas is notebook 05's step (float64, to 1e-12), every replica
    identical to the last bit; the ``sum_grads``
    and ``send`` it is given do the summing: one ring allreduce's bytes with ``allreduce_ring``."""
    from helpers.comm import CommStats, allreduce_ring
    from helpers.costmodel import ring_bytes_per_device
    from helpers.models import init_lenet_params, replicate_params
    from helpers.sharding import make_replicas
    from helpers.train import train_batch_scratch
    params = [p.astype('float64') for p in init_lenet_params(0)]
    Xn, yn = tiny_data(n, 12)
    X, y = nd.array(Xn, dtype='float64'), nd.array(yn, dtype='int32')
    reps = make_replicas(params, CPU[:k])
    updaters = [mx.optimizer.get_updater(mx.optimizer.SGD(learning_rate=lr, rescale_grad=1 / n)) for _ in range(k)]
    stats = CommStats()
    train_batch_replicated(X, y, reps, CPU[:k], updaters, sum_grads=allreduce_ring, send=stats.send)
    scratch = [replicate_params(params, d) for d in CPU[:k]]
    train_batch_scratch(X, y, scratch, CPU[:k], lr)
    want = np.concatenate([p.asnumpy().ravel() for p in scratch[0]])
    for i, r in enumerate(reps):
        gap = float(np.abs(r.weights.asnumpy() - want).max())
        if gap > 1e-12:
            raise Broken(f'replica {i}\'s weights after one step differ from notebook 05\'s step by {gap:.3g}',
                         expected=_fmt(want[-10:]) + ' (the last 10)', got=_fmt(r.weights.asnumpy()[-10:]),
                         why='forward_backward, then sum_grads(all replicas\' flat gradients, send), then every '
                             'device updates all its weights: update(0, r.grads, r.weights)')
    size = reps[0].weights.size
    ring = ring_bytes_per_device(k, size, 8) if k > 1 else [0]
    if stats.per_device(CPU[:k]) != ring:
        raise Broken(f'with sum_grads=allreduce_ring, the bytes each device sends ({k} devices, {size} float64)',
                     expected=str(ring), got=str(stats.per_device(CPU[:k])),
                     why='sum with the sum_grads given, passing send on: sum_grads([r.grads ...], send)')


# ====================================================================== precision and accumulation (notebook 12)

FP16_CASES = sorted([dict(k=k, n=n, seed=7 * k + n) for k in range(1, 9) for n in (1, k + 1, 37)],
                    key=lambda c: (c['n'], c['k']))


def law_fp16_sums(allreduce_fp16, k, n, seed):
    """Notebook 12: in place, every device ends with the sum of the float16-rounded inputs (added up in
    float16: to k float16 roundings), identical bits on every device, in the arrays' own dtype."""
    rng = np.random.default_rng(seed)
    xs = [rng.standard_normal(n).astype(np.float32) for _ in range(k)]
    grads = [nd.array(x, ctx=c) for x, c in zip(xs, CPU)]
    given = list(grads)
    if allreduce_fp16(grads) is not grads:
        raise Broken('allreduce_fp16 works in place and returns grads', why='end with `return grads`')
    exact = np.sum([x.astype(np.float16) for x in xs], axis=0, dtype=np.float64)
    values = [g.asnumpy() for g in grads]
    for i, (g, c) in enumerate(zip(grads, CPU)):
        if g is not given[i] or g.context != c or np.dtype(g.dtype) != np.float32:
            raise Broken(f'gradient {i} must stay the same float32 array on {c}',
                         got=f'{np.dtype(g.dtype)} on {g.context}',
                         why='cast the sums back and copy them into the gradients: h.astype(g.dtype).copyto(g)')
    if k > 1 and all(np.array_equal(v, x) for v, x in zip(values, xs)):
        raise Broken(f'nothing was summed ({k} devices, {n} element{"s" * (n > 1)})', expected=_fmt(exact),
                     got=_devices_words(values),
                     why='astype makes a copy: allreduce the float16 copies, then copy the sums back into grads')
    if not np.allclose(values[0], exact, rtol=k * 2e-3, atol=k * 2e-3):
        raise Broken(f'device 0 does not hold the sum ({k} devices, {n} element{"s" * (n > 1)})',
                     expected=f'{_fmt(exact)} (to float16 rounding; the inputs: {_devices_words(xs)})',
                     got=_fmt(values[0]))
    if any(not np.array_equal(v, values[0]) for v in values):
        raise Broken('the devices hold different bits', expected='identical bits on every device',
                     got=_devices_words(values), why='one allreduce of the float16 copies, then the same cast back')


def _allreduce_bytes(k, shapes, dtype):
    """``{algorithm: (bytes sent per device, messages)}`` of one allreduce per array of ``shapes`` on k
    devices, for notebook 04's algorithms (the ring only where every array has k elements or more)."""
    from helpers import comm
    found = {}
    for name in ('allreduce', 'allreduce_naive', 'allreduce_ring'):
        if name == 'allreduce_ring' and min(int(np.prod(s)) for s in shapes) < k:
            continue
        stats = comm.CommStats()
        for shape in shapes:
            getattr(comm, name)([nd.zeros(shape, ctx=d, dtype=dtype) for d in CPU[:k]], send=stats.send)
        found[name] = (stats.per_device(CPU[:k]), stats.messages)
    return found


def law_fp16_bytes_are_half(allreduce_fp16, k, n):
    """Notebook 12: every transfer goes through ``send``, and each device sends exactly half the bytes
    of the same allreduce of the float32 arrays (notebook 04's ``allreduce``, or its naive or ring
    algorithm), in the same number of messages."""
    from helpers.comm import CommStats
    half = CommStats()
    allreduce_fp16([nd.ones(n, ctx=c) for c in CPU[:k]], send=half.send)
    got = half.per_device(CPU[:k])
    full = _allreduce_bytes(k, [(n,)], 'float32')
    if any(got == [b // 2 for b in sent] and half.messages == messages for sent, messages in full.values()):
        return
    want, messages = full['allreduce']
    why = ('no byte went through send: pass send on to allreduce' if not any(got) and any(want) else
           'the arrays travelled as float32: cast to float16 before the allreduce'
           if any(got == sent for sent, _ in full.values()) else None)
    raise Broken(f'bytes sent by each device, {n} float32 elements on {k} devices',
                 expected=f'{[b // 2 for b in want]} (half of allreduce\'s {want}), {messages} messages',
                 got=f'{got}, {half.messages} messages', why=why)


FP16_BYTES_CASES = [dict(k=k, n=n) for k in range(1, 9) for n in (k, 1001)]

SCALE_CASES = [dict(updates=u, interval=i, scale=s) for u, i, s in (
    ([False], 2000, 1024.0), ([True], 2000, 1024.0), ([True, True, True], 3, 8.0), ([True, True, True, True], 2, 1.0),
    ([True, False, True, True], 2, 2.0 ** 16), ([True, True, False, True, True, True], 3, 4.0),
    ([False, False, False], 5, 2.0 ** 24), ([True] * 7 + [False] + [True] * 3, 4, 0.5))]


def _scale_rule(updates, interval, scale):
    """Notebook 12's dynamic loss scale, step by step: ``[(scale, good steps)]`` after each step."""
    good, out = 0, []
    for updated in updates:
        if not updated:
            scale, good = scale / 2, 0
        else:
            good += 1
            scale, good = (scale * 2, 0) if good == interval else (scale, good)
        out.append((scale, good))
    return out


def law_next_scale(next_scale, updates, interval, scale):
    """Notebook 12: after a step that overflowed (``updated`` False) the scale halves and the count of
    good steps starts again from 0; after ``growth_interval`` good steps in a row it doubles (count 0);
    otherwise it stays and the count grows by one. The default interval is 2000."""
    want, s, good, history = _scale_rule(updates, interval, scale), scale, 0, []
    for step, updated in enumerate(updates):
        got = tuple(next_scale(s, updated, good, interval))
        history.append(f'{"good" if updated else "overflow"} -> {got}')
        if got != want[step]:
            why = ('after an overflow the count of good steps starts again from 0' if not updated and got[0] == s / 2
                   else 'an overflow halves the scale (and the step is skipped)' if not updated else
                   f'double the scale after growth_interval ({interval}) good steps in a row, and start counting '
                   'again from 0' if want[step][0] != s else
                   'a good step keeps the scale and counts one more good step')
            raise Broken(f'next_scale from scale {scale:g}, growth_interval {interval}',
                         expected='; '.join(f'{"good" if u else "overflow"} -> {w}'
                                            for u, w in zip(updates[:step + 1], want)),
                         got='; '.join(history), why=why)
        s, good = got
    default = (tuple(next_scale(64.0, True, 1998)), tuple(next_scale(64.0, True, 1999)))
    if default != ((64.0, 1999), (128.0, 0)):
        raise Broken('the default growth_interval is 2000 (MXNet\'s and PyTorch\'s)',
                     expected='next_scale(64, True, 1998) == (64, 1999), next_scale(64, True, 1999) == (128, 0)',
                     got=f'{default[0]}, {default[1]}')


# LeNet's float16 gradients overflow at a loss scale of 2**40, and not at 2**8
FP16_STEP_CASES = [dict(k=k, n=n, scale=s, overflows=s > 2 ** 20) for k, n in ((1, 5), (2, 9), (3, 10))
                   for s in (2.0 ** 40, 2.0 ** 8)]


def law_fp16_step(train_batch_fp16, k, n, scale, overflows, lr=0.1):
    """Notebook 12: a loss-scaled step whose float16 gradients overflow returns False and leaves every
    weight alone; otherwise it returns True and takes notebook 05's step (float32 on the wire) to
    float16 rounding (1e-4), the replicas identical to the last bit."""
    from helpers.models import init_lenet_params, replicate_params
    from helpers.train import max_gap, train_batch_scratch
    params = init_lenet_params(0)
    Xn, yn = tiny_data(n, 9)
    X, y = nd.array(Xn), nd.array(yn, dtype='int32')
    reps = [replicate_params(params, d) for d in CPU[:k]]
    updated = train_batch_fp16(X, y, reps, CPU[:k], lr, scale)
    if overflows:
        gap = max_gap(reps[0], params)
        if updated is not False or not gap == 0:
            raise Broken(f'with scale {_power(scale)} the float16 gradients overflow: the step must be skipped',
                         expected='returns False, every weight unchanged',
                         got=f'returns {updated!r}, weights moved by {gap:.3g}',
                         why='after the allreduce: if not all_finite([p.grad for p in device_params[0]]): return False '
                             '(before any update)')
        return
    ref = [replicate_params(params, d) for d in CPU[:k]]
    train_batch_scratch(X, y, ref, CPU[:k], lr)
    gap = max_gap(reps[0], ref[0])
    if updated is not True or not gap < 1e-4:
        w0 = params[-1].asnumpy().reshape(-1)
        step, need = reps[0][-1].asnumpy().reshape(-1) - w0, ref[0][-1].asnumpy().reshape(-1) - w0
        ratio = float(np.dot(step, need) / np.dot(need, need))
        from helpers.split import shard_sizes
        why = ('the step was skipped although nothing overflowed' if updated is False or not step.any() else
               f'the weights moved {ratio:.4g} times as far as notebook 05\'s step: divide the update by the scale '
               '(sgd(ps, lr, scale))' if np.isclose(ratio, scale, rtol=1e-2) else
               f'the weights moved {ratio:.4g} times as far: the loss is the mean over the whole batch, '
               '* (scale / X.shape[0])' if any(np.isclose(ratio, n / s, rtol=1e-2) for s in shard_sizes(n, k)) or
               np.isclose(ratio, n, rtol=1e-2) else
               'it returns whether it updated: True' if updated is not True and gap < 1e-4 else
               f'the weights moved {ratio:.4g} times as far as notebook 05\'s step')
        raise Broken(f'a step with scale {_power(scale)} on {k} device{"s" * (k > 1)} (no overflow)',
                     expected=f'returns True, fc3.bias = {_fmt(ref[0][-1].asnumpy())} (to 1e-4)',
                     got=f'returns {updated!r}, fc3.bias = {_fmt(reps[0][-1].asnumpy())}', why=why)
    for i, r in enumerate(reps[1:], 1):
        if max_gap(r, reps[0]) != 0:
            raise Broken(f'replica {i} and replica 0 differ after the step', expected='identical bits',
                         why='every device applies the same update to the same summed gradient')



def _power(x):
    """``2**40`` for a power of two, else the number."""
    e = np.log2(x) if x > 0 else 0.5
    return f'2**{int(e)}' if e == int(e) and abs(e) >= 4 else f'{x:g}'


ACCUMULATION_CASES = [dict(k=k, m=m, b=b) for k, m, b in ((1, 1, 2), (1, 3, 2), (2, 2, 3), (3, 3, 4))]


def _micro_batches(m, b, seed):
    Xn, yn = tiny_data(2 * m * b, seed)
    return [(nd.array(Xn[j * b:(j + 1) * b], dtype='float64'), nd.array(yn[j * b:(j + 1) * b], dtype='int32'))
            for j in range(2 * m)]


def law_accumulation_is_one_big_step(train_batch_accumulated, k, m, b, lr=0.1):
    """Notebook 12: m micro-batches of b examples split over k devices, gradients added up
    (``grad_req='add'``) and ONE allreduce, take one SGD step of the whole batch of m * b examples
    (notebook 05's step, float64, to 1e-12), twice in a row; the replicas stay identical, the gradients
    are zero afterwards, and it returns the m * k loss sums."""
    from helpers.accumulation import accumulating_replica
    from helpers.models import init_lenet_params, replicate_params
    from helpers.train import max_gap, train_batch_scratch
    params = [p.astype('float64') for p in init_lenet_params(0)]
    acc = [accumulating_replica(params, d) for d in CPU[:k]]
    ref = [replicate_params(params, d) for d in CPU[:k]]
    micro = _micro_batches(m, b, 10 + k)
    for step in range(2):
        batch = micro[step * m:(step + 1) * m]
        losses = train_batch_accumulated(batch, acc, CPU[:k], lr)
        X, y = nd.concat(*[x for x, _ in batch], dim=0), nd.concat(*[t for _, t in batch], dim=0)
        w_before = ref[0][-1].asnumpy().reshape(-1)
        train_batch_scratch(X, y, ref, CPU[:k], lr)
        gap = max_gap(acc[0], ref[0])
        if gap > 1e-12:
            if step == 0:
                have, need = acc[0][-1].asnumpy().reshape(-1) - w_before, ref[0][-1].asnumpy().reshape(-1) - w_before
                ratio = float(np.dot(have, need) / np.dot(need, need))
            else:
                ratio = None
            why = (f'the weights moved {ratio:.3g} times as far as one step of the whole batch: divide by the whole '
                   f'batch ({m * b} examples, all {m} micro-batches), not by one micro-batch' if ratio is not None and
                   m > 1 and np.isclose(ratio, m, rtol=1e-3) else
                   f'the weights moved {ratio:.3g} times as far: divide the summed gradient by the batch size '
                   f'({m * b})' if ratio is not None and np.isclose(ratio, m * b, rtol=1e-3) else
                   'the first step is right, the second is not: set every gradient back to zero after the update '
                   '(grad_req=\'add\' keeps adding)' if step == 1 else
                   f'the weights moved {ratio:.3g} times as far as one step of the whole batch')
            raise Broken(f'after step {step + 1}, {m} micro-batch{"es" * (m > 1)} of {b} on {k} device'
                         f'{"s" * (k > 1)} differ from one step of the {m * b} examples by {gap:.2g}',
                         expected=f'fc3.bias = {_fmt(ref[0][-1].asnumpy())}',
                         got=f'fc3.bias = {_fmt(acc[0][-1].asnumpy())}',
                         why=why)
        if not isinstance(losses, (list, tuple)) or len(losses) != m * k:
            raise Broken('the step returns every device\'s loss sum of every micro-batch', expected=f'{m * k} losses',
                         got=f'{len(losses) if isinstance(losses, (list, tuple)) else repr(losses)[:60]}')
    for i, r in enumerate(acc[1:], 1):
        if max_gap(r, acc[0]) != 0:
            raise Broken(f'replica {i} and replica 0 differ', expected='identical bits',
                         why='one allreduce per parameter, then the same update on every device')
    if any(p.grad.asnumpy().any() for r in acc for p in r):
        raise Broken('after the step every gradient must be zero, ready for the next accumulation',
                     why='p.grad[:] = 0 for every parameter, after the update')


def law_accumulation_communicates_once(train_batch_accumulated, k, m, b=2):
    """Notebook 12: every transfer goes through ``send``, and a step of m micro-batches sends the
    bytes of ONE allreduce per parameter (notebook 04's ``allreduce``, or its naive or ring
    algorithm), whatever m."""
    from helpers.accumulation import accumulating_replica
    from helpers.comm import CommStats
    from helpers.models import init_lenet_params
    params = [p.astype('float64') for p in init_lenet_params(0)]
    acc = [accumulating_replica(params, d) for d in CPU[:k]]
    stats = CommStats()
    train_batch_accumulated(_micro_batches(m, max(b, k), 3)[:m], acc, CPU[:k], 0.1, send=stats.send)
    got = stats.per_device(CPU[:k])
    once = _allreduce_bytes(k, [p.shape for p in params], 'float64')
    if any(got == sent for sent, _ in once.values()):
        return
    want = once['allreduce'][0]
    why = ('no byte went through send: pass send on to allreduce' if not any(got) and any(want) else
           f'each device sent {got[0] / want[0]:.3g} times the bytes of one allreduce per parameter: no '
           f'communication inside the loop over the {m} micro-batches, one allreduce per parameter after it'
           if want[0] else None)
    raise Broken(f'bytes sent by each device in a step of {m} micro-batches on {k} devices', expected=str(want),
                 got=str(got), why=why)


ACCUMULATION_BYTES_CASES = [dict(k=k, m=m) for k, m in ((2, 1), (2, 3), (3, 2))]


# ---------------------------------------------------------------------- notebook 12: checkpoints

CHECKPOINT_CASES = [dict(k=k) for k in (1, 2, 3)]


def _resumed(save, load, k, steps=4, at=2, n=8):
    """Train LeNet with Adam on k devices for ``steps`` steps, saving a checkpoint (``save``) before
    step ``at``; then build another LeNet (other initial weights), ``load`` the checkpoint and take the
    same steps. Returns ``(uninterrupted weights per step, resumed weights per step, files, loaded)``."""
    import os
    import tempfile
    from helpers.checkpoint import adam_trainer
    from helpers.models import lenet
    from helpers.train import train_batch
    devices = CPU[:k]
    Xn, yn = tiny_data(steps * n, 13)
    batches = [(nd.array(Xn[s * n:(s + 1) * n]), nd.array(yn[s * n:(s + 1) * n], dtype='int32'))
               for s in range(steps)]
    weights = lambda net: [p.data(devices[-1]).asnumpy() for p in net.collect_params().values()]
    net = lenet(devices, seed=0)
    trainer = adam_trainer(net, 1e-3)
    with tempfile.TemporaryDirectory() as folder:
        prefix, after = os.path.join(folder, 'ckpt'), []
        for s, (X, y) in enumerate(batches):
            if s == at:
                save(prefix, net, trainer, devices[0])
                saved = weights(net)
            train_batch(net, X, y, trainer, devices)
            after.append(weights(net))
        files = sorted(os.listdir(folder))
        resumed = lenet(devices, seed=2)
        trainer2 = adam_trainer(resumed, 1e-3)
        if files != ['ckpt.params', 'ckpt.states']:
            raise Broken('the checkpoint is two files: prefix + ".params" and prefix + ".states"',
                         expected="['ckpt.params', 'ckpt.states']", got=str(files),
                         why='nd.save(prefix + ".params", [p.data(device) for p in ...]) and '
                             'trainer.save_states(prefix + ".states")')
        load(prefix, resumed, trainer2)
        loaded = all(np.array_equal(a, b) for d in devices
                     for a, b in zip(saved, [p.data(d).asnumpy() for p in resumed.collect_params().values()]))
        again = []
        for X, y in batches[at:]:
            train_batch(resumed, X, y, trainer2, devices)
            again.append(weights(resumed))
    return after[at:], again, files, loaded


def _resume_why(after, again, files, loaded, role):
    if not loaded:
        return ('the resumed network does not hold the saved weights on every device: ' +
                ('save [p.data(device) for p in net.collect_params().values()]' if role == 'save' else
                 'p.set_data(value) for every parameter, which copies to every device'))
    return ('the weights came back, the optimizer\'s state did not: Adam\'s moments and step count are in ' +
            (f'trainer.{role}_states(prefix + ".states")'))


def law_resumed_run_takes_the_same_steps(fn, k, role):
    """Notebook 12: a run resumed from a checkpoint takes, bit for bit, the steps of the run that never
    stopped (LeNet with Adam on k devices); ``role`` says which half ``fn`` is, the other is the lesson's."""
    from helpers import checkpoint
    save, load = (fn, checkpoint.load_checkpoint) if role == 'save' else (checkpoint.save_checkpoint, fn)
    after, again, files, loaded = _resumed(save, load, k)
    for s, (a, b) in enumerate(zip(after, again)):
        if any(not np.array_equal(x, y) for x, y in zip(a, b)):
            gap = max(float(np.abs(x - y).max()) for x, y in zip(a, b))
            raise Broken(f'step {s + 1} after resuming differs from the run that never stopped by {gap:.3g}',
                         expected='the same weights, bit for bit', why=_resume_why(after, again, files, loaded, role))


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


@lesson('helpers.kvstore.merge_buffer_owners',
        hint='largest key first, each to the device holding the fewest elements so far (ties: lowest)')
def check_merge_buffer_owners():
    """Check your ``merge_buffer_owners(sizes, k)`` (notebook 07): MXNet's greedy placement, balanced."""
    return [
        Law('for keys of distinct sizes, the devices of the greedy rule: largest key first, each on the least '
            'loaded device, ties to the lowest', law_merge_owners_greedy, MERGE_CASES,
            lambda sizes, k: f'keys of {sizes} elements on {k} device{"s" * (k > 1)}'),
        Law('for any sizes, equal ones too: one device per key, the largest on device 0, loads at most one key '
            'apart', law_merge_owners_balanced, BALANCE_CASES,
            lambda sizes, k: f'keys of {sizes} elements on {k} devices'),
        Law('bad input refused', law_merge_owners_refuses_bad_input,
            [dict(bad=b) for b in ('a fractional size', 'a size of 0', 'no device')], lambda bad: bad),
    ]


@lesson('helpers.dist_train.push_then_pull', hint="a new function pushpull(key, value, out, priority): push, then "
                                                 "pull; set it as kv.pushpull")
def check_push_then_pull():
    """Check your ``push_then_pull(kv)`` (notebook 08): ``kv.pushpull`` becomes a push, then a pull."""
    return [
        Law('kv.pushpull(key, value, out=..., priority=...) is push(key, value, priority), then pull(key, out or '
            'value, priority), and every target holds the sum; kv comes back', law_push_then_pull,
            [dict(k=k, out=o, priority=p) for k, o, p in ((1, True, 0), (2, True, -3), (3, False, 0), (2, False, -1))],
            lambda k, out, priority: f'{k} device{"s" * (k > 1)}, {"with" if out else "without"} out, '
                                     f'priority {priority}'),
        Law("on MXNet's local store the replaced pushpull still sums", law_push_then_pull_on_a_store,
            [dict(k=k) for k in (1, 2, 3)], lambda k: f'{k} device{"s" * (k > 1)}'),
    ]


@lesson('helpers.dist_train.train_worker',
        hint="lenet(devices, seed); Trainer(..., rescale_grad 1/kv.num_workers, kvstore=kv); steps per epoch")
def check_train_worker():
    """Check your ``train_worker(kv, devices, X, y, ...)`` (notebook 08) on a stand-in dist_sync store."""
    return [Law("with workers that all push the same gradients, notebook 06's step on this worker's batches "
                "(divided by the global batch), `steps` steps per epoch, on_step after each",
                law_worker_takes_the_global_step, WORKER_CASES,
                lambda k, num_workers, rank, steps, epochs, batch_size:
                f'worker {rank} of {num_workers}, {k} device{"s" * (k > 1)}, {epochs} epoch{"s" * (epochs > 1)} of '
                f'{steps} steps, batches of {batch_size}')]


@lesson('helpers.job.run_local_job',
        hint='job = Job(...); poll until done (fail it once expired) in try; job.stop() in finally')
def check_run_local_job():
    """Check your ``run_local_job(command, ...)`` (notebook 08): the loop around a job, against a scripted
    stand-in for ``Job`` -- no process starts (``helpers.job.Job`` itself is tested in tests/test_dist.py)."""
    return [Law('starts one Job with its arguments, polls it until done, fails it with DistJobTimeout once '
                'expired, and stops it however it ends', law_job_always_stopped,
                [dict(script=s) for s in ('done', 'dies', 'timeout', 'interrupt')],
                lambda script: {'done': 'a job that finishes at the third poll',
                                'dies': 'a job whose worker dies (the second poll raises DistJobError)',
                                'timeout': 'a job that runs past its timeout',
                                'interrupt': 'Ctrl-C while the job runs (KeyboardInterrupt)'}[script])]


@lesson('helpers.scaling.WarmUp', hint='during warm-up self.get_warmup_lr(num_update), then self.base_lr')
def check_WarmUp():
    """Check your class ``WarmUp`` (notebook 09) against MXNet's own warm-up, update by update."""
    return [Law("an LRScheduler whose rate is MXNet's FactorScheduler's with the same warm-up: the linear ramp, then "
                "base_lr for good", law_warmup_like_mxnet, WARMUP_CASES,
                lambda base_lr, warmup_steps, begin: f'base_lr {base_lr}, warmup_steps {warmup_steps}, '
                                                     f'warmup_begin_lr {begin}')]


@lesson('helpers.scaling.lr_recipe', hint='fixed: base_lr; linear: base_lr * batch_size / base_batch; warmup: + WarmUp')
def check_lr_recipe():
    """Check your ``lr_recipe(recipe, batch_size, warmup_steps, base_lr, base_batch)`` (notebook 09)."""
    return [
        Law('fixed keeps base_lr, linear scales it by batch_size / base_batch, warmup adds a ramp from base_lr '
            'where there is one to take', law_lr_recipe, RECIPE_CASES,
            lambda recipe, batch_size, warmup_steps, base_lr, base_batch:
            f'{recipe!r}, batch {batch_size}, warmup_steps {warmup_steps}, base_lr {base_lr}, base_batch {base_batch}'),
        Law('an unknown recipe refused', law_lr_recipe_refuses_an_unknown_recipe,
            [dict(recipe=r) for r in ('sqrt', 'Linear')], lambda recipe: f'recipe {recipe!r}'),
    ]


@lesson('helpers.scaling.epoch_time', hint='ceil(n / batch) steps of overhead + batch / k * per_example + cost_ring')
def check_epoch_time():
    """Check your ``epoch_time(k, n, batch, ...)`` (notebook 09) against the formula."""
    return [Law('ceil(n / batch) (overhead + batch / k * per_example + 2 (k-1) (alpha + nbytes / k / bandwidth)), '
                'for a number or an array of k', law_epoch_time, EPOCH_CASES,
                lambda k, n, batch, overhead, per_example, nbytes, alpha, bandwidth:
                f'k = {k}, n = {n}, batch {batch}, overhead {overhead:g} s, {per_example:g} s per example, '
                f'{nbytes:g} bytes, alpha {alpha:g} s, bandwidth {bandwidth:g} B/s')]


@lesson('helpers.scaling.pushpull_step',
        hint='2 alpha + (push + nbytes) / (rate / 8 * FRAME_PAYLOAD); 2-bit: push / 16')
def check_pushpull_step():
    """Check your ``pushpull_step(nbytes, rate, alpha, compression)`` (notebook 09) against the formula."""
    return [Law('2 alpha + (push + nbytes) / (rate / 8 * FRAME_PAYLOAD), the push nbytes / 16 with 2-bit '
                'compression, the pull always nbytes', law_pushpull_step, PUSHPULL_CASES,
                lambda nbytes, rate, alpha, compression: f'{nbytes:g} bytes, {rate:g} bit/s, alpha {alpha:g} s, '
                                                         f'{"2-bit compression" if compression else "no compression"}')]


@lesson('helpers.buckets.plan_buckets',
        hint='from the last gradient back, add slots; close a bucket once it holds bucket_bytes; keep the last one')
def check_plan_buckets():
    """Check your ``plan_buckets(sizes, bucket_bytes, itemsize)`` (notebook 10): every gradient in one bucket."""
    return [
        Law('every gradient in one bucket, last layer first, contiguous slots from 0; a bucket closes as soon as it '
            'holds bucket_bytes; the last one is kept even when not full', law_plan_buckets, PLAN_CASES,
            lambda sizes, bucket_bytes, itemsize: f'gradients of {sizes} elements, {itemsize} bytes each, '
                                                  f'buckets of {bucket_bytes} bytes'),
        Law('bad input refused', law_plan_refuses_bad_input,
            [dict(bad=b) for b in ('no gradient', 'a size of 0', 'a bucket of 0 bytes', 'sizes not a list')],
            lambda bad: bad),
    ]


@lesson('helpers.buckets.allreduce_bucketed',
        hint='per bucket of plan_buckets: concat the flat gradients per device, allreduce, copy the slots back')
def check_allreduce_bucketed():
    """Check your ``allreduce_bucketed(grads, bucket_bytes, allreduce)`` (notebook 10): the unbucketed bits,
    one allreduce per bucket."""
    return [
        Law("every gradient ends with its own allreduce's bits, in place, with one allreduce per bucket (k = 1-8, "
            "buckets smaller than a gradient to larger than all, float32 and float64)",
            law_bucketed_like_unbucketed, BUCKETED_CASES,
            lambda k, shapes, bucket_bytes, dtype, seed: f'{k} device{"s" * (k > 1)}, gradients of shapes '
                                                         f'{_shapes_words(shapes)}, {dtype}, buckets of '
                                                         f'{bucket_bytes} B'),
        Law('bad input refused before any work', law_bucketed_refuses_bad_input,
            [dict(bad=b) for b in ('bucket_bytes 0', 'bucket_bytes -5', 'bucket_bytes 2.5', 'bucket_bytes True',
                                   'no gradient', 'an array, not a list', 'mixed dtypes', 'one gradient of two shapes',
                                   'devices in another order')], lambda bad: bad),
    ]


@lesson('helpers.buckets.backward_and_send',
        hint='backward every loss; if wait, nd.waitall(); then allreduce(arrays) for each group, in order')
def check_backward_and_send():
    """Check your ``backward_and_send(losses, groups, wait, allreduce)`` (notebook 10)."""
    return [Law('backward on every device, then one allreduce per group in the order given, waiting first or not: '
                'every gradient summed', law_backward_and_send, BACKWARD_CASES,
                lambda k, wait, groups: f'{k} device{"s" * (k > 1)}, groups: {groups}, wait={wait}')]


@lesson('helpers.buckets.bucket_gradients',
        hint='per plan: one nd.zeros bucket per device; views into it become _grad and, via mark_variables, .grad')
def check_bucket_gradients():
    """Check your ``bucket_gradients(params, bucket_bytes)`` (notebook 10): backward writes into the buckets."""
    return [Law("one flat bucket per plan and device; backward then writes every gradient into its slot, and Gluon's "
                "list_grad() and autograd's .grad are those views", law_bucket_views, BUCKET_VIEW_CASES,
                lambda k, bucket_bytes: f'{k} device{"s" * (k > 1)}, buckets of {bucket_bytes} bytes')]


@lesson('helpers.sharding.train_batch_sharded',
        hint='forward_backward; reduce_scatter the grads; update chunk owner_chunk(i, k) only; all_gather weights')
def check_train_batch_sharded():
    """Check your ``train_batch_sharded(X, y, replicas, devices, updaters, send)`` (notebook 11): the
    replicated step's weights, 1/k of the optimizer state, one allreduce's bytes."""
    return [
        Law("two steps give the replicated step's weights (summed by the ring), bit for bit on every device",
            law_sharded_step_is_the_replicated_one, SHARDED_CASES,
            lambda k, n: f'LeNet on {k} device{"s" * (k > 1)}, batches of {n}'),
        Law('each device keeps Adam state for its own chunk only, owner_chunk(i, k)', law_sharded_state_is_one_chunk,
            SHARDED_CASES, lambda k, n: f'LeNet on {k} device{"s" * (k > 1)}, a batch of {n}'),
        Law('every transfer goes through send: the bytes of one ring allreduce',
            law_sharded_bytes_are_one_ring_allreduce,
            [dict(k=k) for k in (1, 2, 3)], lambda k: f'LeNet on {k} device{"s" * (k > 1)}'),
    ]


@lesson('helpers.precision.allreduce_fp16', hint='float16 copies (astype), allreduce them, cast back into the grads')
def check_allreduce_fp16():
    """Check your ``allreduce_fp16(grads, send)`` (notebook 12): the float16 sum, in place, half the bytes."""
    return [
        Law('in place, every device ends with the sum of the float16-rounded inputs, identical bits, float32 kept '
            '(k = 1-8)', law_fp16_sums, FP16_CASES,
            lambda k, n, seed: f'{n} float32 element{"s" * (n > 1)} on {k} device{"s" * (k > 1)}'),
        Law('every transfer goes through send: exactly half the bytes of the float32 allreduce',
            law_fp16_bytes_are_half, FP16_BYTES_CASES,
            lambda k, n: f'{n} float32 element{"s" * (n > 1)} on {k} device{"s" * (k > 1)}'),
    ]


@lesson('helpers.precision.next_scale',
        hint='overflow: (scale / 2, 0); else count it; interval reached: (scale * 2, 0)')
def check_next_scale():
    """Check your ``next_scale(scale, updated, good_steps, growth_interval)`` (notebook 12)."""
    return [Law('an overflow halves the scale and resets the count; growth_interval good steps in a row double it',
                law_next_scale, SCALE_CASES,
                lambda updates, interval, scale: f'scale {scale:g}, growth_interval {interval}, steps '
                                                 + ', '.join('good' if u else 'overflow' for u in updates))]


@lesson('helpers.precision.train_batch_fp16',
        hint='loss sum * scale / batch; backward; allreduce_fp16; overflow: return False; else sgd by scale')
def check_train_batch_fp16():
    """Check your ``train_batch_fp16(X, y, device_params, devices, lr, scale)`` (notebook 12): it skips an
    overflowing step and otherwise takes notebook 05's step."""
    return [Law("an overflowing step is skipped (False, weights unchanged); otherwise notebook 05's step to float16 "
                "rounding (True), the replicas identical", law_fp16_step, FP16_STEP_CASES,
                lambda k, n, scale, overflows: f'a batch of {n} on {k} device{"s" * (k > 1)}, loss scale '
                                               f'{_power(scale)} ' + ('(its float16 gradients overflow)'
                                                                      if overflows else '(no overflow)'))]


@lesson('helpers.accumulation.train_batch_accumulated',
        hint='forward_backward per micro-batch (grads add up); one allreduce per parameter; sgd by all n; zero')
def check_train_batch_accumulated():
    """Check your ``train_batch_accumulated(micro_batches, device_params, devices, lr, send)`` (notebook 12):
    one step of the whole batch, one allreduce."""
    return [
        Law('sends the bytes of one allreduce per parameter, whatever the number of micro-batches',
            law_accumulation_communicates_once, ACCUMULATION_BYTES_CASES,
            lambda k, m: f'{m} micro-batch{"es" * (m > 1)} on {k} devices'),
        Law('m micro-batches take one SGD step of the whole batch (float64, twice in a row), the replicas identical, '
            'the gradients zero afterwards', law_accumulation_is_one_big_step, ACCUMULATION_CASES,
            lambda k, m, b: f'{m} micro-batch{"es" * (m > 1)} of {b} on {k} device{"s" * (k > 1)}'),
    ]


@lesson('helpers.dist_train.my_shard', hint='(begin, end) = shard_bounds(len(X), num_workers)[rank]; slice X and y')
def check_my_shard():
    """Check your ``my_shard(X, y, rank, num_workers)`` (notebook 08): each worker's contiguous part."""
    return [Law("worker rank gets shard rank of notebook 03's uneven split, labels with their examples, and its bounds",
                law_my_shard, SHARD_CASES, lambda n, num_workers: f'{n} examples, {num_workers} workers')]


@lesson('helpers.dist_train.steps_per_epoch', hint='whole batches of the smallest shard: (n_train // num_workers) // b')
def check_steps_per_epoch():
    """Check your ``steps_per_epoch(n_train, num_workers, batch_size)`` (notebook 08)."""
    return [Law('the whole batches of the smallest shard, the same number on every worker', law_steps_per_epoch,
                STEPS_CASES, lambda n_train, num_workers, batch_size: f'{n_train} examples, {num_workers} workers, '
                                                                      f'batches of {batch_size}')]


def _flat_words(shapes, device):
    return f'parameters of shapes {", ".join(map(str, shapes))} on cpu({device})'


@lesson('helpers.sharding.views_of', hint='running sums of the sizes: flat[e - p.size:e].reshape(p.shape) for each')
def check_views_of():
    """Check your ``views_of(flat, params)`` (notebook 11): views that share the flat array's memory."""
    return [Law('one view per parameter, of its shape, on the next elements, sharing the flat array\'s memory',
                law_views_of, FLAT_CASES, _flat_words)]


@lesson('helpers.sharding.flat_replica', hint='nd.concat of the reshaped parameters, copyto(device); views_of it')
def check_flat_replica():
    """Check your ``flat_replica(params, device)`` (notebook 11): one flat copy and views of it."""
    return [Law('one flat copy on the device, every element in order, the parameters as views of it, the originals '
                'apart', law_flat_replica, FLAT_CASES, _flat_words)]


@lesson('helpers.sharding.attach_flat_grad', hint='nd.zeros_like(flat); autograd.mark_variables(views, views_of(it))')
def check_attach_flat_grad():
    """Check your ``attach_flat_grad(flat, views)`` (notebook 11): backward writes into one flat gradient."""
    return [Law('zeros like the flat weights; backward through the views writes each gradient into its slot',
                law_attach_flat_grad, FLAT_CASES, _flat_words)]


@lesson('helpers.sharding.forward_backward', hint='split_batch; forward(Xs, ps) under autograd.record(); backward each')
def check_forward_backward():
    """Check your ``forward_backward(X, y, device_params, devices, forward)`` (notebook 11)."""
    return [Law("every device's gradients are those of its own shard's summed loss; the loss sums come back",
                law_forward_backward, [dict(k=k, n=n) for k, n in ((1, 3), (2, 5), (3, 7))],
                lambda k, n: f'a batch of {n} on {k} device{"s" * (k > 1)}')]


@lesson('helpers.sharding.train_batch_replicated',
        hint='forward_backward; sum_grads(every replica\'s grads, send); each device: update(0, grads, weights)')
def check_train_batch_replicated():
    """Check your ``train_batch_replicated(X, y, replicas, devices, updaters, sum_grads, send)`` (notebook 11)."""
    return [Law("with SGD, notebook 05's step (float64), the replicas identical; summed by the sum_grads and send "
                "given", law_replicated_step_is_notebook_05s, REPLICATED_CASES,
                lambda k, n: f'LeNet on {k} device{"s" * (k > 1)}, a batch of {n}')]


@lesson('helpers.checkpoint.save_checkpoint', hint="nd.save the weights as device holds them; trainer.save_states")
def check_save_checkpoint():
    """Check your ``save_checkpoint(prefix, net, trainer, device)`` (notebook 12), resumed by the lesson's
    ``load_checkpoint``."""
    return [Law('a run resumed from your checkpoint takes the steps of the run that never stopped, bit for bit',
                lambda fn, k: law_resumed_run_takes_the_same_steps(fn, k, 'save'), CHECKPOINT_CASES,
                lambda k: f'LeNet with Adam on {k} device{"s" * (k > 1)}')]


@lesson('helpers.checkpoint.load_checkpoint', hint='p.set_data(value) for each saved weight; trainer.load_states')
def check_load_checkpoint():
    """Check your ``load_checkpoint(prefix, net, trainer)`` (notebook 12), on the lesson's checkpoint."""
    return [Law('a run resumed with your load_checkpoint takes the steps of the run that never stopped, bit for bit',
                lambda fn, k: law_resumed_run_takes_the_same_steps(fn, k, 'load'), CHECKPOINT_CASES,
                lambda k: f'LeNet with Adam on {k} device{"s" * (k > 1)}')]
