"""A faster ``import mxnet``: three speed-ups that :mod:`helpers._mxnet_compat`'s before-MXNet hook
applies the moment ``mxnet`` is first imported (:func:`stdlib_distutils`, then :func:`mxnet_spec`).
None of them is a compatibility fix, and none changes what MXNet does; each can be measured against
its absence (benchmarks/import_mxnet.py), and the last two switched off by an environment variable.
Every notebook's kernel and every process of a distributed job pays ``import mxnet`` once, about 380
processes in one ``make test``.

The hook loads this file by its path (:func:`helpers._mxnet_compat.faster_import`), as the ``.pth``
file loads the hook, under the name ``_mxdp_mxnet_import``: it works whether or not ``helpers`` can
be imported, once per process. (``import helpers._mxnet_import``, as the tests do, makes a second
copy, whose :data:`served` and :data:`lazy` stay empty: the hook's copy holds them.)

A FASTER IMPORT, 1: DISTUTILS FROM THE STANDARD LIBRARY. MXNet imports ``distutils.version`` while it is
imported (``LooseVersion`` in ``mxnet/numpy_dispatch_protocol.py``, ``StrictVersion`` in
``mxnet/numpy_op_fallback.py``). In a venv, setuptools' ``distutils-precedence.pth`` puts a finder
first on ``sys.meta_path`` that answers ``import distutils`` with setuptools' own copy, and importing
that imports all of setuptools first: 0.46 of the 2.3 CPU seconds that ``import mxnet`` took on the
2-core CI machine (benchmarks/import_mxnet.py), paid by every process that imports MXNet (each
notebook's kernel, each process of a distributed job). Python 3.9 to 3.11 still have ``distutils``
in the standard library, with the same two classes, so there :func:`stdlib_distutils` imports it
from there, past setuptools' finder, unless a ``distutils`` is already imported (setuptools, when
imported later, swaps in its copy as before). Python 3.12 removed it: there setuptools' copy is the
only one and nothing changes.

A FASTER IMPORT, 2: MXNET'S OPERATOR FUNCTIONS COMPILED ONCE. ``import mxnet`` writes a Python
function for each of its ~1,200 operators, for ``mx.nd`` and for ``mx.sym``: it generates the
function's source from the operator's C++ description and compiles it with ``exec``
(``_make_ndarray_function`` in ``mxnet/ndarray/register.py``, ``_make_symbol_function`` in
``mxnet/symbol/register.py``), 2,556 compilations every time, a third of the import's CPU time
(benchmarks/import_mxnet.py). The sources are the same in every process but for one number, the
operator's handle (a C pointer, which moves with every start), which each function passes to MXNet.
So ``make setup`` (``python -m helpers._mxnet_compat install``, :func:`record_compiled_ops`) imports
MXNet once with ``MXDP_COMPILED_OPS=record`` and keeps the compiled code, the handle replaced by a
placeholder of as many digits, in a file in the environment's site-packages
(:func:`compiled_ops_path`). In later processes, once ``mxnet`` starts to execute (finding it, as
``importlib.util.find_spec`` does, reads nothing), :class:`_CompiledOps` reads the file and stands
in for ``exec`` in those two modules until ``mxnet`` is imported: a source found in the file (the
whole source is the key, its handle replaced likewise) gets that code with its own handle put back,
any other is compiled as before. The functions are MXNet's own, code object for code object
(tests/test_mxnet_compat.py compares each with a fresh compilation of its source, its handle,
bytecode, constants, names and line table); the file is read only if this Python's bytecode version
wrote it and it holds nothing but code, and a missing, foreign or broken file, or a handle of
another number of digits than recorded, only means compiling, as before. Once ``mxnet`` is imported
the stand-in is gone; the process keeps about 10 MB more memory than without it (freed, not handed
back to the system). ``MXDP_COMPILED_OPS=0`` turns it off.

A FASTER IMPORT, 3: FOUR MODULES LOADED WHEN FIRST USED. ``import mxnet`` also imports modules that
the series never uses, and two of them import SciPy's statistics (``scipy.stats``, some 0.2-0.3 CPU
seconds): ``mxnet/contrib/__init__.py`` imports ``quantization`` (``from scipy import stats``),
``text`` (word embeddings) and ``onnx``, and ``mxnet/__init__.py`` imports ``test_utils`` (``import
scipy.stats as ss``); MXNet itself reads nothing from them while it is imported. While ``mxnet`` is
imported, :class:`_LazyModules` finds these four (:data:`LAZY_MODULES`) where the normal import finds
them and gives each the standard library's ``importlib.util.LazyLoader``: the module is in
``sys.modules`` and bound where MXNet binds it (``mx.contrib.quantization``, ``mx.test_utils``), and it
runs, MXNet's own code unchanged, the first time any of its attributes is read (``from
mxnet.test_utils import assert_almost_equal`` works as before). What changes is when they run:
at the first read of one of their attributes, wherever it comes from. Code that reads an attribute of
every module in ``sys.modules`` runs all four (IPython formatting a kernel's first traceback does:
``inspect.getmodule`` reads each module's ``__file__``), which costs that process what ``import
mxnet`` used to. A failure while one runs is raised at that first read, and the half-run module
stays where it is, as after a failed import; before Python 3.13 (3.12.1 here has no lock; 3.13.0's
``LazyLoader`` takes one), a second thread reading one while a first runs it can find it half-run.
Nothing in the series uses any of the four. :data:`lazy` lists those the last ``import mxnet`` left
unloaded; ``MXDP_LAZY_MODULES=0`` imports them with ``mxnet``, as without the shim.

Standard library only, and valid on Python 3.9: it runs before anything else is imported.
"""
import os
import sys

__all__ = ['stdlib_distutils', 'mxnet_spec', 'compiled_ops_path', 'record_compiled_ops', 'OPS_SWITCH', 'OPS_MODULES',
           'LAZY_SWITCH', 'LAZY_MODULES', 'served', 'lazy']

# A faster import, 2 (module docstring): the environment variable ('0': off; 'record': write the file)
# and the two modules whose `exec` is stood in for.
OPS_SWITCH = 'MXDP_COMPILED_OPS'
OPS_MODULES = ('mxnet.ndarray.register', 'mxnet.symbol.register')
# MXNet's modules that `import mxnet` imports and the series never uses, loaded when first used
# (module docstring, "A faster import, 3"); LAZY_SWITCH=0 imports them with mxnet, as without the shim.
LAZY_SWITCH = 'MXDP_LAZY_MODULES'
LAZY_MODULES = ('mxnet.contrib.quantization', 'mxnet.contrib.text', 'mxnet.contrib.onnx', 'mxnet.test_utils')


def _warn(message):
    import warnings
    warnings.warn(f'helpers._mxnet_import: {message}', RuntimeWarning, stacklevel=3)


def stdlib_distutils():
    """On Python 3.9-3.11, import ``distutils.version`` from the standard library, past setuptools'
    finder (module docstring, "A faster import"); return the module, or None where nothing was done
    (Python 3.12 and later, or ``distutils`` already imported)."""
    if sys.version_info >= (3, 12) or 'distutils' in sys.modules:
        return None
    import importlib
    import warnings
    theirs = [f for f in sys.meta_path if type(f).__module__ == '_distutils_hack']
    for finder in theirs:
        sys.meta_path.remove(finder)
    try:
        with warnings.catch_warnings():     # 3.10, 3.11: "The distutils package is deprecated ..."
            warnings.simplefilter('ignore', DeprecationWarning)
            return importlib.import_module('distutils.version')
    finally:
        sys.meta_path[0:0] = theirs



def compiled_ops_path():
    """Where :func:`record_compiled_ops` keeps MXNet's compiled operator functions: in this
    environment's site-packages, one file per bytecode version (module docstring, "A faster import, 2")."""
    import sysconfig
    return os.path.join(sysconfig.get_paths()['purelib'], f'mxdp-mxnet-ops.{sys.implementation.cache_tag}.bin')


class _CompiledOps:
    """Stands in for ``exec`` in :data:`OPS_MODULES` while ``mxnet`` is imported (module docstring,
    "A faster import, 2"); a ``sys.meta_path`` finder for those two modules meanwhile. ``served``
    counts the sources found in the file, ``compiled`` the others. Nothing is read, and no finder
    added, until ``mxnet`` itself starts to execute (:meth:`begin`): finding it is not importing it."""

    def __init__(self, path, record):
        import re
        self.path, self.record, self.codes = path, record, {}
        self.served = self.compiled = 0
        self.modules = []
        self._call = re.compile(r'(_imperative_invoke|_symbol_creator)\((\d+),')

    @staticmethod
    def _read(path):
        """The file's ``{source: code}``, or ``{}`` if it is missing, was written by another bytecode
        version, or holds anything else."""
        import importlib.util
        import marshal
        import types
        try:
            with open(path, 'rb') as f:
                if f.read(len(importlib.util.MAGIC_NUMBER)) != importlib.util.MAGIC_NUMBER:
                    return {}             # written by another bytecode version: compile, as before
                codes = marshal.load(f)
        except (OSError, EOFError, ValueError, TypeError):
            return {}
        if not isinstance(codes, dict) or not all(type(k) is str and type(v) is types.CodeType
                                                  for k, v in codes.items()):
            return {}
        return codes

    @staticmethod
    def _compile(source):
        return compile(source, '<string>', 'exec', dont_inherit=True)   # as MXNet's exec: no __future__

    def _put_back(self, code, placeholder, handle, found):
        consts = []
        for c in code.co_consts:
            if hasattr(c, 'co_consts'):
                c = self._put_back(c, placeholder, handle, found)
            elif type(c) is int and c == placeholder:
                c = handle
                found.append(c)
            consts.append(c)
        return code.replace(co_consts=tuple(consts))

    def code(self, source):
        """The code object ``compile(source, '<string>', 'exec')`` would make: from the file where it
        holds ``source`` (its handle aside), compiled otherwise. The placeholder has as many digits as
        the handle (777...7): the code's column positions (Python 3.11+) stay those of ``source``; it
        must be found exactly once among the code's constants, else the source is compiled."""
        handles = self._call.findall(source)
        digits = handles[0][1] if len(handles) == 1 else ''
        placeholder = '7' * len(digits)
        if not digits or placeholder in source:
            self.compiled += 1
            return self._compile(source)
        key = self._call.sub(lambda m: f'{m.group(1)}({placeholder},', source)
        code = self.codes.get(key)
        from_file = code is not None
        if not from_file:
            code = self._compile(key)
            if self.record:
                self.codes[key] = code
        found = []
        code = self._put_back(code, int(placeholder), int(digits), found)
        if len(found) != 1:
            self.compiled += 1
            return self._compile(source)
        self.served += from_file
        self.compiled += not from_file
        return code

    def exec(self, source, globals=None, locals=None):
        """``exec`` for the two modules: what the builtin does, the compiling aside."""
        import builtins
        if isinstance(source, str):
            source = self.code(source)
        if globals is None:                   # as the builtin: the caller's namespace
            frame = sys._getframe(1)
            globals, locals = frame.f_globals, frame.f_locals if locals is None else locals
        return builtins.exec(source, globals, locals)

    def find_spec(self, fullname, path=None, target=None):
        if fullname not in OPS_MODULES:
            return None
        return _wrapped_spec(fullname, path, lambda loader: _Loader(loader, self._enter))

    def _enter(self, module):
        module.exec = self.exec
        self.modules.append(module)

    def begin(self, package):
        """``mxnet`` starts to execute: read the file, and put this finder first on ``sys.meta_path``."""
        if not self.record:
            self.codes = self._read(self.path)
        sys.meta_path.insert(0, self)

    def stop(self, package):
        """After ``import mxnet`` (or its failure): this finder and the stand-ins gone, the two modules'
        own loaders back, the file written if recording, the counts kept. Never raises: a
        failure to write is a warning, and never hides MXNet's own error."""
        if self in sys.meta_path:
            sys.meta_path.remove(self)
        for module in self.modules:
            vars(module).pop('exec', None)
            _unwrap(module)
        if self.record and self.codes:
            self._write()
        self.codes = {}
        served[:] = [self.served, self.compiled]

    def _write(self):
        import importlib.util
        import marshal
        partial = f'{self.path}.{os.getpid()}'
        try:
            with open(partial, 'wb') as f:
                f.write(importlib.util.MAGIC_NUMBER)
                marshal.dump(self.codes, f)
            os.replace(partial, self.path)     # whole or not at all, for a process importing meanwhile
        except OSError as exc:
            _warn(f'could not keep the compiled operators in {self.path}: {exc!r}')
            try:
                os.remove(partial)
            except OSError:
                pass


def _wrapped_spec(fullname, path, wrap):
    """The spec the normal path import finds for ``fullname``, its loader replaced by ``wrap(loader)``
    where the loader has ``exec_module`` (else the spec as found); None where it is not found."""
    from importlib.machinery import PathFinder
    spec = PathFinder.find_spec(fullname, path)
    if spec is not None and hasattr(spec.loader, 'exec_module'):
        spec.loader = wrap(spec.loader)
    return spec


class _Loader:
    """A module's own loader, with ``before(module)`` run before the module and ``after(module)``
    once it ran (or failed)."""

    def __init__(self, loader, before=None, after=None):
        self.loader, self.before, self.after = loader, before, after

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        if self.before:
            self.before(module)
        try:
            self.loader.exec_module(module)
        finally:
            if self.after:
                self.after(module)

    def __getattr__(self, name):
        if name == 'loader':                 # not set yet (a copy being made): no endless recursion
            raise AttributeError(name)
        return getattr(self.loader, name)


# [served from the file, compiled] by the last `import mxnet` of this process (module docstring).
served = []


def _unwrap(module):
    """The module's own loader back in place of a :class:`_Loader` (once it ran)."""
    if isinstance(getattr(module, '__loader__', None), _Loader):
        module.__loader__ = module.__spec__.loader = module.__loader__.loader


class _LazyModules:
    """A ``sys.meta_path`` finder while ``mxnet`` is imported (module docstring, "A faster import, 3"):
    each of :data:`LAZY_MODULES` is found where the normal import finds it and given the standard
    library's ``importlib.util.LazyLoader``, which puts the module in ``sys.modules`` and runs it the
    first time one of its attributes is read. ``lazy`` lists those not run yet, as ``import mxnet``
    left them."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname not in LAZY_MODULES:
            return None
        import importlib.util
        return _wrapped_spec(fullname, path, importlib.util.LazyLoader)

    def begin(self, package):
        sys.meta_path.insert(0, self)

    def stop(self, package):
        if self in sys.meta_path:
            sys.meta_path.remove(self)
        # type(), not isinstance(): reading any attribute of a module not run yet runs it
        lazy[:] = [name for name in LAZY_MODULES if type(sys.modules.get(name)).__name__ == '_LazyModule']


# The modules of LAZY_MODULES that the last `import mxnet` of this process left to load when first used.
lazy = []


def _mxnet_spec(parts):
    """The spec of ``mxnet`` where the normal import finds it, its loader wrapped so that each of
    ``parts`` (:class:`_CompiledOps`, :class:`_LazyModules`) begins when ``mxnet`` starts to execute
    (finding it, as ``importlib.util.find_spec`` does, begins nothing) and stops when it is done, MXNet's
    own loader back then; None where ``mxnet`` is not found (the normal import goes on)."""
    def begin(package):
        for part in parts:
            part.begin(package)

    def stop(package):
        for part in parts:
            try:
                part.stop(package)
            except Exception as exc:      # never hide MXNet's own error
                _warn(f'{type(part).__name__} did not stop cleanly: {exc!r}')
        _unwrap(package)

    spec = _wrapped_spec('mxnet', None, lambda loader: _Loader(loader, begin, stop))
    return spec if spec is not None and isinstance(spec.loader, _Loader) else None


def mxnet_spec(environ=None):
    """The spec :class:`helpers._mxnet_compat._BeforeMXNet` hands the import of ``mxnet``: with the
    operators' compiled code (unless ``MXDP_COMPILED_OPS=0``; ``record`` writes the file) and the
    four modules left to their first use (unless ``MXDP_LAZY_MODULES=0``); None where both are off
    (the normal import follows)."""
    environ = os.environ if environ is None else environ
    switch, parts = environ.get(OPS_SWITCH, '1'), []
    if switch != '0':
        parts.append(_CompiledOps(compiled_ops_path(), record=switch == 'record'))
    if environ.get(LAZY_SWITCH, '1') != '0':
        parts.append(_LazyModules())
    return _mxnet_spec(parts) if parts else None


def record_compiled_ops():
    """Import MXNet once in a fresh process of this interpreter (whose ``.pth`` file is written) with
    ``MXDP_COMPILED_OPS=record``, which writes :func:`compiled_ops_path` (module docstring, "A faster
    import, 2"). Returns the path, or None, with a warning, if the import failed: processes then
    compile the operators as before."""
    import subprocess
    path = compiled_ops_path()
    env = dict(os.environ, **{OPS_SWITCH: 'record'})
    try:
        subprocess.run([sys.executable, '-c', 'import mxnet'], env=env, capture_output=True, text=True,
                       timeout=600, check=True)
    except (OSError, subprocess.SubprocessError) as exc:
        tail = (getattr(exc, 'stderr', None) or '').strip().splitlines()[-1:]
        _warn(f'import mxnet failed ({exc!r} {tail}): no compiled operators kept; each process compiles them')
        return None
    return path
