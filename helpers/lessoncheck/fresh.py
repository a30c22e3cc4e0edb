"""The grade of a check, given where the notebook's cells cannot reach it (notebooks 03-13; the hidden
test of every check cell of the student edition, ``tools/assignments.py``).

A check cell runs the check in the student's kernel, where every earlier cell has run: a cell that
rewrites ``helpers.lessoncheck`` (or NumPy) there would pass every check. So the cell also calls
:func:`graded`, which runs the check again in a fresh Python, on the function as the cells define it:
from the kernel's input history (``In``) it takes the last definition of the function and, name by
name, what that definition uses -- the imports, the other functions and classes, simple assignments
(``devices = get_devices()``) -- and nothing else: no statement of a cell that is not a definition
runs there. The fresh Python starts in an empty folder (no file of the student's shadows a module),
refuses the installed lesson and any change to the check (:mod:`helpers.lessoncheck.guard`), and
answers with the report; a check that tried no case fails.

What it cannot stop: code inside the student's own function runs with the check, as it must; a
function written to find and rewrite the check while it runs is in the submission for the lecturer
to read.
"""
import ast
import builtins
import json
import linecache
import os
import subprocess
import sys
import tempfile

__all__ = ['graded']

MARK = '@@lessoncheck-graded@@ '        # the line of the fresh Python's outcome
TIMEOUT = 300                  # seconds: the slowest check takes well under a minute on two cores
_CHILD = 'from helpers.lessoncheck.fresh import _child; _child()'
# Calls a simple assignment may make at definition time: the names its cells imported, and these
_BUILTINS = {'len', 'range', 'list', 'dict', 'tuple', 'set', 'frozenset', 'int', 'float', 'str', 'bool', 'sorted',
             'min', 'max', 'sum', 'abs', 'zip', 'enumerate', 'round', 'pow', 'divmod', 'slice', 'reversed', 'map',
             'filter', 'any', 'all', 'repr', 'isinstance', 'bytes', 'complex'}
_NEVER = {'setattr', 'delattr', 'exec', 'eval', 'compile', '__import__', 'globals', 'vars', 'locals', 'open',
          'getattr', 'breakpoint', 'input', 'lessoncheck', 'sys', 'builtins', 'importlib', 'gc', 'inspect', 'ctypes'}


class _Said:
    """A report in words, for :class:`~helpers.lessoncheck.machinery.CheckFailed`."""

    def __init__(self, text):
        self._text = text

    def text(self):
        return self._text


def graded(qualname, cells):
    """Run lesson ``qualname``'s check in a fresh Python on the function the kernel's ``cells`` (its
    input history, ``In``) define; print what passed, or raise ``CheckFailed`` with the report
    (notebooks 03-13; the hidden test of each check cell of the student edition)."""
    from helpers import checks
    from helpers.lessoncheck.machinery import CHECKS, CheckFailed, find
    qualname = checks.text(qualname, 'qualname (a lesson)')
    check = find(qualname)
    if check is None:
        raise ValueError(f'qualname (a lesson) must name a lesson with a check, e.g. {next(iter(CHECKS))!r}, '
                         f'got {qualname!r}')
    if isinstance(cells, (str, bytes)) or not isinstance(cells, (list, tuple)):
        raise TypeError(f'cells must be the list of the cells\' sources (the kernel\'s In), got {type(cells).__name__}')
    if not all(isinstance(c, str) for c in cells):
        raise TypeError('cells must be the list of the cells\' sources (the kernel\'s In): strings only')
    name = check.lesson.rpartition('.')[2]
    outcome = _fresh(check.lesson, name, list(cells))
    if outcome.get('ok') and outcome.get('cases', 0) > 0:
        print(f'✓ {name}, graded again in a fresh Python from your cells\' definitions: {outcome["laws"]} '
              f'law{"s" * (outcome["laws"] != 1)}, {outcome["cases"]} case{"s" * (outcome["cases"] != 1)}')
        return None
    lines = outcome.get('text', '').splitlines() or [f'✗ {name}: the grade could not be given']
    lines.insert(1, '  (graded again in a fresh Python, from the definitions and imports of your cells only)')
    raise CheckFailed(_Said('\n'.join(lines)))


def _fresh(qualname, name, cells):
    """``{'ok', 'laws', 'cases', 'text'}`` of the check run in a fresh Python (see the module's doc)."""
    with tempfile.TemporaryDirectory(prefix='mxdp-graded-') as folder:
        try:
            proc = subprocess.run([sys.executable, '-c', _CHILD], input=json.dumps(
                {'qualname': qualname, 'name': name, 'cells': cells}), capture_output=True, text=True,
                cwd=folder, timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            return {'ok': False, 'text': f'✗ {name} did not finish within {TIMEOUT} s when graded'}
    found = [line for line in proc.stdout.split('\n') if line.startswith(MARK)]
    if not found:
        tail = ' | '.join(proc.stderr.strip().splitlines()[-3:])[:400]
        return {'ok': False, 'text': f'✗ {name}: the grading Python ended without a report (exit status '
                                     f'{proc.returncode}): {tail}'}
    return json.loads(found[-1][len(MARK):])


def _child():
    """The fresh Python: read ``{qualname, name, cells}``, define, check, print the outcome."""
    data = json.loads(sys.stdin.read())
    name, qualname = data['name'], data['qualname']
    try:
        outcome = _check_in_fresh_namespace(qualname, name, data['cells'])
    except BaseException as e:                      # never a traceback instead of a grade
        outcome = {'ok': False, 'text': f'✗ {name}: the grader failed: {type(e).__name__}: {e}'[:600]}
    sys.stdout.write('\n' + MARK + json.dumps(outcome) + '\n')
    sys.stdout.flush()
    os._exit(0)                                     # no interpreter teardown: MXNet's threads may crash it


def _check_in_fresh_namespace(qualname, name, cells):
    """The outcome of lesson ``qualname``'s check on ``name`` as ``cells`` define it, in this Python (the
    fresh one; importing this module imported its package, which registered every check)."""
    from helpers.lessoncheck.guard import changed, snapshot
    from helpers.lessoncheck.machinery import verify
    program, left_out = _program(cells, name)
    before = snapshot()
    namespace = {'__name__': '__main__', '__builtins__': builtins}
    for index, stmt in program:
        filename = f'<cell In[{index}]>'
        linecache.cache[filename] = (len(cells[index]), None, cells[index].splitlines(True), filename)
        try:
            exec(compile(ast.Module(body=[stmt], type_ignores=[]), filename, 'exec'), namespace)
        except Exception as e:                      # an import or assignment that fails on its own
            left_out.append(f'In[{index}] line {stmt.lineno} ({type(e).__name__}: {str(e)[:80]})')
    touched = changed(before)
    if touched:
        return {'ok': False, 'text': f'✗ {name}: your cells change what the check relies on ({", ".join(touched)})'}
    if name not in namespace:
        why = [w for w in left_out if w.endswith(f'({name})')]
        return {'ok': False, 'text': f'✗ {name} is not defined by any cell: write it in its cell (def {name}...) and '
                                     f'run that cell' + (f'\n  the cell that assigns it ({why[0][:-len(name) - 3]}) '
                                                         'does more than define it' if why else '')}
    report = verify(qualname, namespace[name])
    text = report.text()
    if not report.ok and left_out:
        text += '\n  left out when graded (they are not definitions): ' + '; '.join(left_out[:5])
    return {'ok': report.ok, 'laws': len(report.passed), 'cases': report.cases, 'text': text}


# ------------------------------------------------------------------------------ what the cells define


def _bound(stmt):
    """The names a top-level statement binds, if it is a definition the grade keeps."""
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [stmt.name]
    if isinstance(stmt, ast.Import):
        return [(a.asname or a.name.partition('.')[0]) for a in stmt.names]
    if isinstance(stmt, ast.ImportFrom):
        return [(a.asname or a.name) for a in stmt.names]
    if isinstance(stmt, ast.Assign) and all(isinstance(t, ast.Name) for t in stmt.targets):
        return [t.id for t in stmt.targets]
    if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
        return [stmt.target.id]
    return []


def _loads(node):
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _stores(node):
    names = {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del))}
    for f in ast.walk(node):
        if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            a = f.args
            names |= {x.arg for x in a.posonlyargs + a.args + a.kwonlyargs + [a.vararg, a.kwarg] if x is not None}
        if isinstance(f, (ast.Import, ast.ImportFrom)):
            names |= {(x.asname or x.name.partition('.')[0]) for x in f.names}
        if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and f is not node:
            names.add(f.name)
    return names


def _at_definition(stmt):
    """The expressions a def or class evaluates when it is defined (decorators, defaults, bases...)."""
    if isinstance(stmt, ast.ClassDef):
        return stmt.decorator_list + stmt.bases + [k.value for k in stmt.keywords]
    a = stmt.args
    return (stmt.decorator_list + a.defaults + [d for d in a.kw_defaults if d is not None]
            + ([stmt.returns] if stmt.returns else [])
            + [x.annotation for x in a.posonlyargs + a.args + a.kwonlyargs + [a.vararg, a.kwarg]
               if x is not None and x.annotation is not None])


def _safe(expr, imported, never=frozenset()):
    """Whether evaluating ``expr`` at definition time can do no more than build a value: it calls only
    what the cells imported and a few builtins, and touches no dunder, no ``lessoncheck`` (nor a name
    in ``never``), no ``setattr``."""
    for n in ast.walk(expr):
        if isinstance(n, ast.Name) and (n.id in _NEVER or n.id in never) or isinstance(n, ast.NamedExpr):
            return False
        if isinstance(n, ast.Attribute) and (n.attr in _NEVER or n.attr.startswith('__')):
            return False
        if isinstance(n, ast.Call):
            root = n.func
            while isinstance(root, ast.Attribute):
                root = root.value
            if not isinstance(root, ast.Name) or root.id not in imported | _BUILTINS:
                return False
    return True


def _keep(stmt, imported, never):
    """The statement as the grade runs it, or None where it could do more than define: an import; a
    class keeps its methods, docstring and simple assignments; a def or class whose decorators,
    defaults or bases are not :func:`_safe` is left out, as is an assignment whose value is not."""
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        return stmt
    if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
        return stmt if _safe(stmt.value, imported, never) else None
    if not all(_safe(e, imported, never) for e in _at_definition(stmt)):
        return None
    if isinstance(stmt, ast.ClassDef):
        body = [s for s in stmt.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))
                and all(_safe(e, imported, never) for e in _at_definition(s)) or isinstance(s, ast.Pass)
                or isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant)
                or isinstance(s, (ast.Assign, ast.AnnAssign)) and s.value is not None
                and _safe(s.value, imported, never)]
        stmt = ast.ClassDef(name=stmt.name, bases=stmt.bases, keywords=stmt.keywords, body=body or [ast.Pass()],
                            decorator_list=stmt.decorator_list, lineno=stmt.lineno, col_offset=stmt.col_offset,
                            end_lineno=stmt.end_lineno, end_col_offset=stmt.end_col_offset)
        ast.fix_missing_locations(stmt)
    return stmt


def _imports_the_check(stmt):
    """Whether an import brings in the checks (or what could reach into them): its names may not be
    used when something is defined."""
    modules = [a.name for a in stmt.names] if isinstance(stmt, ast.Import) else [stmt.module or '']
    return any(part in ('lessoncheck', 'importlib', 'builtins', 'gc', 'ctypes', 'inspect', 'sys')
               for m in modules for part in m.split('.'))


def _program(cells, name):
    """``([(cell index, statement)], [what was left out])``: the last definition of ``name`` in
    ``cells`` and, name by name, the definitions it uses, in the order the cells ran them."""
    bindings, stars = {}, []
    for index, text in enumerate(cells):
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        for stmt in tree.body:
            if isinstance(stmt, ast.ImportFrom) and any(a.name == '*' for a in stmt.names):
                stars.append((index, stmt))
            for bound in _bound(stmt):
                bindings[bound] = (index, stmt)
    imported = {n for n, (_, s) in bindings.items() if isinstance(s, (ast.Import, ast.ImportFrom))}
    never = {n for n in imported if _imports_the_check(bindings[n][1])}
    chosen, left_out, todo, seen = {}, [], [name], set()
    while todo:
        wanted = todo.pop()
        if wanted in seen or wanted not in bindings:
            continue
        seen.add(wanted)
        index, stmt = bindings[wanted]
        kept = _keep(stmt, imported, never)
        if kept is None:
            left_out.append(f'In[{index}] line {stmt.lineno} ({wanted})')
            continue
        chosen[(index, stmt.lineno, id(stmt))] = (index, kept)
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            continue
        todo += sorted(_loads(stmt) - (_stores(stmt) - set().union(*map(_loads, _at_definition(stmt)))
                                        if isinstance(stmt, (ast.FunctionDef, ast.ClassDef)) else set()))
    for index, stmt in stars:
        if _keep(stmt, imported, never) is not None:
            chosen[(index, stmt.lineno, id(stmt))] = (index, stmt)
    return [chosen[key] for key in sorted(chosen, key=lambda k: k[:2])], left_out
