"""The machinery of :mod:`helpers.lessoncheck` (notebooks 03-13): a :class:`Law`, what a broken one
raises (:class:`Broken`), the sweep (:func:`run`) and its :class:`Report`, the registry of checks
(:func:`lesson`, :data:`CHECKS`, :func:`find`, :func:`verify`), and what every room's laws share: the
CPU stand-ins they run on, notebooks 05-13's toy problem (:func:`tiny_data`), values in words.
"""
import contextlib
import sys
import time
import traceback
import warnings

import numpy as np
import mxnet as mx

from helpers import checks

__all__ = ['Broken', 'CheckFailed', 'Law', 'Report', 'CHECKS', 'lesson', 'run', 'verify', 'find']


class Broken(AssertionError):
    """A law that does not hold for one case (notebooks 03-13): what went wrong, what was expected,
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
    """What a failing ``check_...`` raises (notebooks 03-13): Jupyter shows its report, not a
    traceback, and nbgrader counts the cell as failed."""

    def __init__(self, report):
        self.report = report
        super().__init__(report.text())

    def _render_traceback_(self):           # IPython shows these lines instead of a traceback
        lines = self.report.text().splitlines()
        return ['\x1b[1;31m' + lines[0] + '\x1b[0m'] + lines[1:]


class Law:
    """One law of a lesson function (notebooks 03-13): ``says`` (words), ``test(fn, **case)``, the
    ``cases`` to sweep (dicts, smallest first) and ``case_words(**case)``."""

    def __init__(self, says, test, cases, case_words):
        self.says, self.test, self.cases, self.case_words = says, test, list(cases), case_words


class Report:
    """The outcome of one check (notebooks 03-13): ``passed`` [(law, cases, seconds)], and for a
    failure ``law``, ``case`` (words), ``broken`` (a :class:`Broken`) or ``not_written``."""

    def __init__(self, name):
        self.name, self.passed, self.seconds = name, [], 0.0
        self.law = self.case = self.broken = self.not_written = None

    @property
    def ok(self):
        """Passed: no law broken, the function written, and at least one case tried."""
        return self.broken is None and self.not_written is None and self.cases > 0

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
        if not self.cases:
            return (f'✗ {self.name}: no case was tried, so nothing is shown: a check passes only on the cases it '
                    f'tried ({len(self.passed)} law{"s" * (len(self.passed) != 1)}, 0 cases)')
        laws = len(self.passed)
        lines = [f'✓ {self.name}: {laws} law{"s" * (laws != 1)} hold{"s" * (laws == 1)} on '
                 f'{"all " * (self.cases != 1)}{self.cases} case{"s" * (self.cases != 1)} tried ({self.seconds:.1f} s)']
        lines += [f'  ✓ {law.says} ({n} case{"s" * (n != 1)})' for law, n, _ in self.passed]
        return '\n'.join(lines)

    def __repr__(self):
        return self.text()


def _where(tb):
    """The last line of the reader's own code in a traceback (not helpers', MXNet's -- whose generated
    operator functions live in ``"<string>"`` -- or Python's)."""
    from helpers.lessoncheck.guard import kind_of
    frames, kinds = traceback.extract_tb(tb), []
    while tb is not None:
        kinds.append(kind_of(tb.tb_frame))
        tb = tb.tb_next
    own = [f for f, kind in zip(frames, kinds) if kind == 'reader']
    f = (own or frames)[-1]
    return f.name, (f.line or '').strip()


def _message(e):
    """An exception's message in one line (MXNet's: its last line, which says what failed)."""
    lines = [line.strip() for line in str(e).splitlines() if line.strip()]
    if not lines:
        return ''
    line = lines[-1] if isinstance(e, mx.base.MXNetError) else lines[0]
    prefix = f'{type(e).__name__}: '
    return (line[len(prefix):] if line.startswith(prefix) else line)[:300]      # not 'MXNetError: MXNetError: ...'



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


def run(name, fn, laws, qualname=None):
    """Sweep ``laws`` over ``fn``, smallest case first; stop at the first failure (notebooks 03-13).
    With ``qualname`` (the lesson's), ``fn`` must be the reader's own: not the installed lesson, and
    calling it fails (:mod:`helpers.lessoncheck.guard`); a function that changes the check while it
    runs fails too. Returns a :class:`Report`; prints and raises nothing."""
    from helpers.lessoncheck.guard import changed, not_the_lesson, refused_reference, snapshot
    report = Report(name)
    start = time.perf_counter()
    if not callable(fn):
        report.law, report.case = Law('it is a function', None, [], None), 'the object given'
        report.broken = Broken(f'check_{name} takes your function, e.g. check_{name}({name}), '
                               f'got {type(fn).__name__}')
        return report
    copied = not_the_lesson(fn, qualname) if qualname else None
    if copied:
        report.law, report.case = Law('it is your own function', None, [], None), f'the {name} given'
        report.broken = Broken(f'{name} is not yours: {copied}',
                               why=f'write {name} yourself in its cell (it keeps the signature and the docstring), '
                                   'run that cell, then this check')
        return report
    before, calls = snapshot(), []
    with refused_reference(qualname, calls, _refused) if qualname else contextlib.nullcontext():
        _sweep(report, name, fn, laws, calls)
    touched = changed(before)
    if touched and report.broken is None and report.not_written is None:
        report.law, report.case = Law('it leaves the check alone', None, [], None), 'the whole check'
        report.broken = Broken(f'{name} changed what the check relies on: {", ".join(touched)}',
                               why='a function that rewrites the check or what it compares with proves nothing')
    report.seconds = time.perf_counter() - start
    return report


def _refused(label, where):
    """What a call of the installed lesson from the reader's code raises (:func:`run`)."""
    return Broken(f'it calls the series\' own {label} ({where})',
                  why='the check tries your own code: write the body yourself (the cell keeps the signature and the '
                      'docstring), do not call the lesson that is installed')


def _sweep(report, name, fn, laws, calls):
    for law in laws:
        began, n = time.perf_counter(), 0
        for case in law.cases:
            try:
                with warnings.catch_warnings():       # a warning would print to stderr, which nbgrader fails
                    warnings.simplefilter('ignore')
                    law.test(fn, **case)
                if calls:
                    raise calls[0]
            except Broken as b:
                report.law, report.case, report.broken = law, law.case_words(**case), b
            except NotImplementedError:
                report.not_written = _unwritten(sys.exc_info()[2], name, fn)
            except Exception as e:           # the reader's code crashed: say where, not a traceback
                where, line = _where(sys.exc_info()[2])
                report.law, report.case = law, law.case_words(**case)
                report.broken = Broken(f'{name} raised {type(e).__name__}: {_message(e)}',
                                       why=f'in {where}: `{line}`' if line else None)
                if calls:                    # it called the lesson and caught what that raised
                    report.broken = calls[0]
            if report.broken is not None or report.not_written is not None:
                return
            n += 1
        report.passed.append((law, n, time.perf_counter() - began))


CHECKS = {}          # 'helpers.module.name' -> check_name: the lessons that have a check


def lesson(qualname, hint, points=1, methods=None):
    """Register ``check_<name>``, a function returning the laws of lesson ``qualname``, as the check
    of that lesson (notebooks 03-13; ``tools/assignments.py`` reads :data:`CHECKS`): the decorated
    name becomes ``check_<name>(fn)``, which prints a report or raises :class:`CheckFailed`.
    ``hint``: the one line the stub in the student edition keeps; ``points``: nbgrader's points;
    ``methods``: for a lesson class, the methods that are the exercise (default: every method), the
    others kept as written."""
    def register(laws):
        name = qualname.rpartition('.')[2]
        if laws.__name__ != f'check_{name}':
            raise ValueError(f'the check of {qualname} must be named check_{name}, not {laws.__name__}')

        def check(fn):
            report = run(name, fn, laws(), qualname)
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
        check.methods = tuple(methods) if methods else None
        CHECKS[qualname] = check
        return check
    return register


def find(qualname):
    """The check of lesson ``qualname``, or None (notebooks 03-13; ``tools/assignments.py``): registered
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
    (notebooks 03-13; for tests and tools)."""
    check = find(checks.text(qualname, 'qualname (a lesson)'))
    if check is None:
        raise ValueError(f'qualname (a lesson) must name a lesson with a check, e.g. '
                         f'{next(iter(CHECKS))!r}, got {qualname!r}')
    return run(qualname.rpartition('.')[2], fn, check.laws(), check.lesson)


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


# ---------------------------------------------------------------------- what every room's laws share

CPU = [mx.cpu(i) for i in range(8)]          # the checks run on CPU stand-ins, up to 8


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


def _n(count, noun, plural=None):
    """``'1 device'``, ``'2 devices'``: a count and its noun, in the right number."""
    return f'{count} {noun if count == 1 else plural or noun + "s"}'


def _devices_words(values):
    return '; '.join(f'device {i}: {_fmt(v)}' for i, v in enumerate(values))


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
