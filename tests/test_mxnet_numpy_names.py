"""Every NumPy name MXNet 1.9.1 reads while it is imported exists under the running NumPy, once
helpers/_mxnet_compat.py has run: the shim's list of names is checked against what MXNet's own
Python sources actually read, not kept by hand alone.

HOW THE READS ARE FOUND: by walking the syntax tree (``ast``) of every ``.py`` file of the installed
``mxnet`` package (the generated ``gen_*.py`` operator modules included; /work/mxsrc/python/mxnet
when no MXNet is installed), without importing any of it:

* the NumPy names of a module: ``import numpy``, ``import numpy as np`` / ``_np`` / ``onp``,
  ``import numpy.random as rnd`` (a submodule) -- absolute imports of ``numpy`` only, so MXNet's own
  ``mxnet.numpy`` (always imported relatively, ``from .. import numpy as _mx_np``) is never taken
  for it; a function that imports NumPy itself, or rebinds the name, is followed as such;
* a read is the longest attribute chain on one of those names, ``np.random.seed`` ->
  ``random.seed`` (loads only; ``np.x = ...`` is a write); ``from numpy.testing import
  assert_allclose`` reads ``testing.assert_allclose``;
* ``getattr(np, 'name')`` reads ``name``; ``getattr(np, op)`` inside ``for op in NAMES``, where
  ``NAMES`` is a module-level list of strings, reads every string of it (``'linalg.norm'`` as a
  chain): the one dynamic pattern MXNet 1.9.1 uses (``numpy_dispatch_protocol.py``). Any other
  ``getattr`` on NumPy with a name the walker cannot work out fails the test, so none is missed;
* a read *runs at import* when it is in a module's body or a class body, in a decorator, a default
  argument or an annotation of a function defined there, or in the body of a function that such code
  calls (``_register_array_function()`` at module level; a decorator's own body, and the wrapper it
  returns when the decorated function is called at import; functions imported from another module
  of the package are followed too, to a fixed point).

LEFT OUT of the import-time test, and why: ``hasattr(np, ...)`` (asks whether a name exists; a missing
one is an answer, not an error: not a read at all); reads in function bodies that nothing runs at
import (``import mxnet`` works without them; the function fails when called): they are checked by
:func:`test_names_mxnet_reads_when_called` instead, and the shim puts those back too (np.int,
np.Inf, np.compat); MXNet's own ``numpy`` modules (``mxnet.numpy``, ``mxnet.ndarray.numpy``, always
imported relatively), which are not NumPy. Calls through attributes (``obj.method()``) and lambdas
are not followed to the function they run: none of MXNet's import-time code reads NumPy that way
(``test_the_walker_finds_the_reads_that_broke_import_mxnet`` pins what must be found), and the
call-time test covers their bodies anyway. A read inside ``try: ... except AttributeError`` counts
like any other (MXNet 1.9.1 has none on NumPy).
"""
import ast
import functools
import os
import sys
import warnings
from dataclasses import dataclass

import pytest

from helpers import _mxnet_compat as compat

NUMPY = 'numpy'


MXSRC = '/work/mxsrc/python/mxnet'  # MXNet 1.9.1's source tree, where a machine has it


def mxnet_source_root():
    """The installed mxnet package's folder (what `import mxnet` reads: found on sys.path, not with
    importlib.util.find_spec, which would set off the shim's finder); the source tree's python/mxnet
    when MXNet is not installed (its generated gen_*.py operator modules are then absent)."""
    for folder in sys.path:
        candidate = os.path.join(folder or '.', 'mxnet')
        if os.path.isfile(os.path.join(candidate, '__init__.py')) and os.path.isfile(
                os.path.join(candidate, 'numpy_dispatch_protocol.py')):
            return candidate
    if os.path.isdir(MXSRC):
        return MXSRC
    pytest.skip('neither an installed mxnet nor its source tree here')


@dataclass(frozen=True)
class Read:
    module: str      # dotted module name, e.g. mxnet.numpy.fallback
    line: int
    name: str        # dotted name read from NumPy, e.g. 'random.seed'
    at_import: bool  # runs when the module is imported (else only when a function is called)

    def where(self):
        return f'{self.module}:{self.line}'


def _module_name(root, path):
    rel = os.path.relpath(path, os.path.dirname(root))[:-3].split(os.sep)
    if rel[-1] == '__init__':
        rel = rel[:-1]
    return '.'.join(rel)


def _resolve_relative(module, is_package, level, target):
    parts = module.split('.') if is_package else module.split('.')[:-1]
    if level > 1:
        parts = parts[:len(parts) - (level - 1)]
    return '.'.join(parts + ([target] if target else []))


class _Module:
    """One source file: its NumPy aliases, functions, classes and imported names."""

    def __init__(self, name, path, is_package):
        self.name, self.path, self.is_package = name, path, is_package
        with open(path, encoding='utf-8') as f, warnings.catch_warnings():
            warnings.simplefilter('ignore', SyntaxWarning)  # '\d' in MXNet's regular expressions (3.12+)
            self.tree = ast.parse(f.read(), filename=path)
        self.future_annotations = any(
            isinstance(n, ast.ImportFrom) and n.module == '__future__' and any(a.name == 'annotations' for a in n.names)
            for n in self.tree.body)
        self.aliases = _numpy_aliases(self.tree.body)       # module-level: name -> NumPy chain prefix
        self.functions = {}  # module-level and class-level functions: qualified name -> FunctionDef
        self.classes = {}
        self.imported = {}   # name -> (module, name) for `from .x import f`
        for node in self.tree.body:
            self._collect(node, '')
            if isinstance(node, ast.ImportFrom) and not _is_numpy(node):
                base = _resolve_relative(self.name, is_package, node.level, node.module) if node.level else node.module
                for a in node.names:
                    self.imported[a.asname or a.name] = (base, a.name)
        self.string_lists = {}  # module-level NAME = [str, ...]
        for node in self.tree.body:
            if isinstance(node, ast.Assign) and isinstance(node.value, (ast.List, ast.Tuple)) and node.value.elts \
                    and all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.value.elts):
                for t in node.targets:
                    if isinstance(t, ast.Name):
                        self.string_lists[t.id] = [e.value for e in node.value.elts]

    def _collect(self, node, prefix):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            self.functions[prefix + node.name] = node
        elif isinstance(node, ast.ClassDef):
            self.classes[prefix + node.name] = node
            for child in node.body:
                self._collect(child, prefix + node.name + '.')


def _is_numpy(node):
    """An absolute `from numpy[.x] import ...` (a relative import is one of MXNet's own modules)."""
    return node.level == 0 and node.module is not None and (node.module == NUMPY or node.module.startswith(NUMPY + '.'))


def _numpy_aliases(body):
    """{local name: chain prefix} bound to NumPy by the import statements directly in `body`
    (not inside nested functions): `import numpy as np` -> {'np': ()}, `import numpy.random as rnd`
    -> {'rnd': ('random',)}, `from numpy import linalg` -> {'linalg': ('linalg',)}."""
    aliases = {}
    for node in _shallow(body):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name == NUMPY or a.name.startswith(NUMPY + '.'):
                    if a.asname:
                        aliases[a.asname] = tuple(a.name.split('.')[1:])
                    else:
                        aliases[NUMPY] = ()
        elif isinstance(node, ast.ImportFrom) and _is_numpy(node):
            prefix = tuple(node.module.split('.')[1:])
            for a in node.names:
                if a.name != '*':
                    aliases[a.asname or a.name] = prefix + (a.name,)
    return aliases


def _shallow(body):
    """Nodes of a list of statements, not descending into function or class definitions."""
    stack = list(body)
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                stack.append(child)


def _bound_names(fn):
    """Names (re)bound in a function: its parameters, and assignments, imports and loop targets
    directly in its body."""
    args = fn.args
    names = {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg] if a}
    body = fn.body
    for node in _shallow(body):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for a in node.names:
                names.add((a.asname or a.name).split('.')[0])
    return names


def _derived(loop):
    """The loop variable of `for var in ...` and the names its body assigns from it (`strs =
    var.split('.')`), to a fixed point."""
    derived = {loop.target.id}
    assigns = [n for n in _shallow(loop.body) if isinstance(n, ast.Assign)]
    while True:
        more = {t.id for n in assigns if {m.id for m in ast.walk(n.value) if isinstance(m, ast.Name)} & derived
                for t in n.targets if isinstance(t, ast.Name)}
        if more <= derived:
            return derived
        derived |= more


class _Walker:
    """Finds the NumPy reads of one module, each marked as run at import or not."""

    def __init__(self, module, import_time_functions):
        self.m = module
        self.import_time = import_time_functions  # ids of FunctionDef nodes whose body runs at import
        self.reads = []
        self.unresolved = []  # dynamic getattr(np, ...) the walker cannot work out
        self.calls_at_import = []  # (callee expression) called by code that runs at import

    def run(self):
        self._body(self.m.tree.body, dict(self.m.aliases), at_import=True)
        return self

    # statements ----------------------------------------------------------------------------
    def _body(self, body, aliases, at_import, loops=()):
        for stmt in body:
            self._stmt(stmt, aliases, at_import, loops)

    def _stmt(self, stmt, aliases, at_import, loops):
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            self._function(stmt, aliases, at_import)
        elif isinstance(stmt, ast.ClassDef):
            for expr in [*stmt.decorator_list, *stmt.bases, *(k.value for k in stmt.keywords)]:
                self._expr(expr, aliases, at_import, loops)
            self._body(stmt.body, aliases, at_import, loops)  # a class body runs where it is defined
        elif isinstance(stmt, ast.ImportFrom) and _is_numpy(stmt):
            prefix = tuple(stmt.module.split('.')[1:])
            for a in stmt.names:
                if a.name != '*':
                    self._read(prefix + (a.name,), stmt.lineno, at_import)
        elif isinstance(stmt, ast.For) and isinstance(stmt.target, ast.Name):
            self._expr(stmt.iter, aliases, at_import, loops)
            names = self._strings_of(stmt.iter)
            inner = loops + ((_derived(stmt), names),) if names is not None else loops
            self._body(stmt.body, aliases, at_import, inner)
            self._body(stmt.orelse, aliases, at_import, loops)
        else:
            for field, value in ast.iter_fields(stmt):
                if isinstance(value, list):
                    if value and isinstance(value[0], ast.stmt):
                        self._body(value, aliases, at_import, loops)
                    else:
                        for v in value:
                            if isinstance(v, ast.AST):
                                self._node(v, aliases, at_import, loops)
                elif isinstance(value, ast.AST):
                    self._node(value, aliases, at_import, loops)

    def _node(self, node, aliases, at_import, loops):
        if isinstance(node, ast.stmt):
            self._stmt(node, aliases, at_import, loops)
        elif isinstance(node, ast.expr):
            self._expr(node, aliases, at_import, loops)
        else:  # excepthandler, withitem, comprehension, keyword, arguments, match_case, ...
            for child in ast.iter_child_nodes(node):
                self._node(child, aliases, at_import, loops)

    def _function(self, fn, aliases, at_import):
        args = fn.args
        for expr in [*fn.decorator_list, *args.defaults, *(d for d in args.kw_defaults if d is not None)]:
            self._expr(expr, aliases, at_import, ())
        if not self.m.future_annotations:
            for a in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]:
                if a is not None and a.annotation is not None:
                    self._expr(a.annotation, aliases, at_import, ())
            if fn.returns is not None:
                self._expr(fn.returns, aliases, at_import, ())
        inner = {k: v for k, v in aliases.items() if k not in _bound_names(fn)}
        inner.update(_numpy_aliases(fn.body))
        self._body(fn.body, inner, id(fn) in self.import_time, ())

    # expressions ---------------------------------------------------------------------------
    def _expr(self, expr, aliases, at_import, loops):
        if isinstance(expr, ast.Attribute) and isinstance(expr.ctx, ast.Load):
            chain = self._chain(expr, aliases)
            if chain is not None:
                self._read(chain, expr.lineno, at_import)
                return
        if isinstance(expr, ast.Lambda):
            for d in [*expr.args.defaults, *(d for d in expr.args.kw_defaults if d is not None)]:
                self._expr(d, aliases, at_import, loops)
            self._expr(expr.body, aliases, False, loops)
            return
        if isinstance(expr, ast.Call):
            self._call(expr, aliases, at_import, loops)
        for child in ast.iter_child_nodes(expr):
            self._node(child, aliases, at_import, loops)

    def _chain(self, expr, aliases):
        """('random', 'seed') for np.random.seed, when the innermost name is a NumPy alias."""
        parts = []
        while isinstance(expr, ast.Attribute):
            parts.append(expr.attr)
            expr = expr.value
        if isinstance(expr, ast.Name) and expr.id in aliases:
            return aliases[expr.id] + tuple(reversed(parts))
        return None

    def _call(self, call, aliases, at_import, loops):
        func = call.func
        if isinstance(func, ast.Name) and func.id == 'getattr' and len(call.args) >= 2:
            base = self._chain(call.args[0], aliases) if isinstance(call.args[0], ast.Attribute) else (
                aliases.get(call.args[0].id) if isinstance(call.args[0], ast.Name) else None)
            if base is not None:
                name = call.args[1]
                if isinstance(name, ast.Constant) and isinstance(name.value, str):
                    self._read(base + (name.value,), call.lineno, at_import)
                else:  # a name that comes from a loop over a list of strings: each string of it
                    used = {n.id for n in ast.walk(name) if isinstance(n, ast.Name)}
                    lists = [names for derived, names in loops if used & derived]
                    if len(lists) == 1:
                        for n in lists[0]:
                            self._read(base + tuple(n.split('.')), call.lineno, at_import)
                    else:
                        self.unresolved.append((call.lineno, ast.unparse(call)))
        if at_import:
            self.calls_at_import.append(func)

    def _strings_of(self, expr):
        if isinstance(expr, ast.Name) and expr.id in self.m.string_lists:
            return self.m.string_lists[expr.id]
        if isinstance(expr, (ast.List, ast.Tuple)) and expr.elts and all(
                isinstance(e, ast.Constant) and isinstance(e.value, str) for e in expr.elts):
            return [e.value for e in expr.elts]
        return None

    def _read(self, chain, line, at_import):
        if chain:
            self.reads.append(Read(self.m.name, line, '.'.join(chain), at_import))


def _load(root):
    modules = {}
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d != '__pycache__')
        for f in sorted(files):
            if f.endswith('.py'):
                path = os.path.join(folder, f)
                name = _module_name(root, path)
                try:
                    modules[name] = _Module(name, path, f == '__init__.py')
                except SyntaxError:  # none in MXNet 1.9.1; a file Python cannot parse is never imported
                    pass
    return modules


def _function_called(modules, module, func):
    """The FunctionDef nodes that calling `func` (an expression in `module`) runs, as far as can be
    told statically: a module-level function (its decorators' bodies too), one imported from a module
    of the package, or a class (its __init__)."""
    if not isinstance(func, ast.Name):
        return []
    name, m, seen = func.id, module, 0
    while name not in m.functions and name not in m.classes and name in m.imported and seen < 10:
        target_module, target_name = m.imported[name]
        if target_module not in modules:
            return []
        m, name, seen = modules[target_module], target_name, seen + 1
    if name in m.functions:
        fn = m.functions[name]
        found = [(m, fn)]
        for d in fn.decorator_list:  # the wrapper a decorator returns runs, and calls fn
            dec = d.func if isinstance(d, ast.Call) else d
            for dm, dfn in _function_called(modules, m, dec):
                found.append((dm, dfn))
                found += [(dm, inner) for inner in ast.walk(dfn)
                          if isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef)) and inner is not dfn]
        return found
    if name in m.classes and name + '.__init__' in m.functions:
        return [(m, m.functions[name + '.__init__'])]
    return []


def numpy_reads(root=None):
    """(reads, unresolved): every NumPy read of the mxnet package at `root`, and the dynamic
    getattr() calls on NumPy that could not be resolved (module, line, source)."""
    root = root or mxnet_source_root()
    modules = _load(root)
    import_time = set()
    while True:  # a fixed point: functions that code run at import calls also run at import
        walkers = {name: _Walker(m, import_time).run() for name, m in modules.items()}
        more = set()
        for name, w in walkers.items():
            for func in w.calls_at_import:
                for fm, fn in _function_called(modules, modules[name], func):
                    more.add(id(fn))
        # decorators applied at import run their own body (the outer function) at import
        for m in modules.values():
            for fn in m.functions.values():
                for d in fn.decorator_list:
                    dec = d.func if isinstance(d, ast.Call) else d
                    for dm, dfn in _function_called(modules, m, dec)[:1]:
                        more.add(id(dfn))
        if more <= import_time:
            break
        import_time |= more
    reads = sorted({r for w in walkers.values() for r in w.reads}, key=lambda r: (r.module, r.line, r.name))
    unresolved = [(w.m.name, line, src) for w in walkers.values() for line, src in w.unresolved]
    return reads, unresolved


@functools.lru_cache(maxsize=None)
def _mxnet_reads():
    return numpy_reads(mxnet_source_root())


def _missing(reads):
    """{name: [where, ...]} of the reads that the running NumPy does not have, after the shim (as an
    attribute, the way MXNet reads them: no submodule is imported to find one)."""
    import numpy
    compat.apply()  # what the .pth file does before `import mxnet`; idempotent
    missing = {}
    for read in reads:
        obj = numpy
        try:
            with warnings.catch_warnings():
                warnings.simplefilter('ignore')  # e.g. np.core.numeric: deprecated in NumPy 2, still there
                for part in read.name.split('.'):
                    obj = getattr(obj, part)
        except AttributeError:
            missing.setdefault(read.name, []).append(read.where())
    return missing


def test_every_numpy_name_mxnet_reads_at_import_exists():
    reads, _ = _mxnet_reads()
    at_import = [r for r in reads if r.at_import]
    assert len(at_import) > 100, 'the walker found too few reads: is it looking at MXNet?'
    import numpy
    assert not _missing(at_import), (
        f'MXNet 1.9.1 reads these NumPy names at import, and NumPy {numpy.__version__} lacks them even after '
        f'helpers/_mxnet_compat.py: {_missing(at_import)}')


def test_names_mxnet_reads_when_called():
    """The reads in function bodies that nothing runs at import: `import mxnet` works without them,
    but the function fails when called (np.int in mxnet.test_utils, np.compat.basestring in np.pad,
    np.Inf in the estimator's handlers): the shim puts them back too."""
    reads, _ = _mxnet_reads()
    import numpy
    missing = _missing([r for r in reads if not r.at_import])
    assert not missing, f'NumPy {numpy.__version__}, after the shim, lacks: {missing}'


def test_the_walker_understands_every_dynamic_read():
    _, unresolved = _mxnet_reads()
    assert not unresolved, f'getattr() on NumPy with a name the walker cannot work out: {unresolved}'


def test_the_walker_finds_the_reads_that_broke_import_mxnet():
    """The walker itself, on MXNet: the reads that made `import mxnet` fail on NumPy 1.24 and 2.0
    (each seen failing before the shim had it) are found, at import; np.int is found, not at import."""
    reads, _ = _mxnet_reads()
    found = {}
    for r in reads:
        found[(r.module, r.name)] = found.get((r.module, r.name), False) or r.at_import
    for module, name in [('mxnet.numpy.utils', 'bool'), ('mxnet.numpy.utils', 'PZERO'),  # module level
                         ('mxnet.numpy.fallback', 'alltrue'), ('mxnet.numpy.fallback', 'npv'),
                         ('mxnet.gluon.contrib.estimator.event_handler', 'Inf'),     # a default argument
                         ('mxnet.numpy_dispatch_protocol', 'sometrue'),  # getattr in a loop, run at import
                         ('mxnet.numpy_dispatch_protocol', 'linalg.norm'),           # ... a dotted one
                         ('mxnet.numpy_dispatch_protocol', '__version__')]:          # in a decorator
        assert found.get((module, name)) is True, (module, name)
    assert found[('mxnet.test_utils', 'int')] is False


def test_every_name_the_shim_puts_back_is_one_mxnet_reads():
    """The shim's list is no longer than MXNet needs: each NumPy 2 name is read by MXNet. The NumPy
    1.24 group goes back whole, as NumPy 1.23 had it (np.bool and np.int are the ones MXNet reads)."""
    reads, _ = _mxnet_reads()
    read = {r.name.split('.')[0] for r in reads}
    for name in compat.restorable((2, 0)):
        if name not in compat.ALIASES:
            assert name in read, f'helpers/_mxnet_compat.py puts back np.{name}, which MXNet 1.9.1 never reads'
    assert {'bool', 'int'} <= read and read & set(compat.ALIASES) <= set(compat.ALIASES)


# --- The walker's rules, each on a small package of its own -------------------------------------

WALKED = '''
import numpy as np
import numpy.random as rnd
from numpy import linalg
from . import numpy as mine          # MXNet's own numpy: never NumPy
from .helper import register

A = np.module_level
B = rnd.submodule_alias
C = linalg.from_import
D = mine.not_numpy
NAMES = ['listed', 'sub.dotted']


class K:
    E = np.class_body

    def method(self, x=np.default_argument):
        return np.method_body


def decorator(f):
    np.decorator_body
    def wrapper(*args):
        np.wrapper_body
        return f(*args)
    return wrapper


@decorator
def called_at_import():
    np.called_body
    for name in NAMES:
        parts = name.split('.')
        getattr(np, parts[0])


@decorator
def never_called():
    np.not_at_import
    import numpy as np2
    np2.local_import
    hasattr(np, 'asked_not_read')


def rebinds(np):
    return np.parameter_not_numpy


called_at_import()
register()
'''

HELPER = '''
import numpy as onp


def register():
    onp.called_in_another_module


def unused():
    onp.other_not_at_import
'''


def test_the_walker_rules(tmp_path):
    package = tmp_path / 'pkg'
    package.mkdir()
    (package / '__init__.py').write_text(WALKED)
    (package / 'helper.py').write_text(HELPER)
    reads, unresolved = numpy_reads(str(package))
    found = {r.name: r.at_import for r in reads}
    assert found == {
        'module_level': True, 'random.submodule_alias': True, 'linalg': True, 'linalg.from_import': True,
        'class_body': True, 'default_argument': True, 'method_body': False,
        'decorator_body': True, 'wrapper_body': True, 'called_body': True, 'listed': True, 'sub.dotted': True,
        'not_at_import': False, 'local_import': False,
        'called_in_another_module': True, 'other_not_at_import': False,
    }, found
    assert not unresolved
