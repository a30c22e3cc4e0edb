"""MXNet 1.9.1 on NumPy >= 1.24 and Python 3.12/3.13: the one compatibility shim, applied by itself.

WHY. MXNet 1.9.1 (2022, the last release) reads names from NumPy that later NumPy releases removed,
some of them while it is imported: ``bool = onp.bool`` and ``PZERO = onp.PZERO`` in
``mxnet/numpy/utils.py``, ``alltrue = onp.alltrue`` in ``mxnet/numpy/fallback.py``, ``np.sometrue``
in the list ``mxnet/numpy_dispatch_protocol.py`` registers. So ``import mxnet`` fails with "module
'numpy' has no attribute 'bool'" on NumPy 1.24-1.26 and with "`np.PZERO` was removed in the NumPy 2.0
release" on NumPy 2. Python 3.9 to 3.11 keep NumPy 1.23.5, which has every name; Python 3.12 has no
NumPy older than 1.26.0 and Python 3.13 none older than 2.1.0, so there the venv has NumPy 1.26.4 and
2.2.6 and MXNet needs those names back. They are put back as NumPy 1.23 defined them (``np.bool is
bool``, ``np.PZERO == 0.0``, ``np.alltrue`` computes ``np.all``; the groups below say what and why),
only where the running NumPy lacks them; nothing that NumPy has is changed. Which names: the ones
MXNet's own sources read (tests/test_mxnet_numpy_names.py walks them and fails if one is missing under
the running NumPy once this shim has run). MXNet also imports ``distutils.version``
(``mxnet/numpy_op_fallback.py``), and Python 3.12 removed ``distutils``: on 3.12 and 3.13
requirements.txt installs setuptools, whose ``distutils-precedence.pth`` makes ``import distutils``
find setuptools' copy; this module only checks that it does and says what to do if not.

HOW. ``make setup`` runs ``python -m helpers._mxnet_compat install``, which writes a one-line
``.pth`` file into the venv's site-packages. Python runs it at every start-up; it loads this file
and calls :func:`activate`, which only puts a finder on ``sys.meta_path``: nothing is imported.
The first time anything imports ``mxnet``, the finder removes itself, sets the engine default
below (:func:`engine_defaults`), runs :func:`apply` (import NumPy; put back what it lacks) and
:func:`stdlib_distutils` (below, "A faster import"), and hands the import ``mxnet`` where the normal
import finds it, with its operators' compiled code at hand (below, "A faster import, 2"). So:

- a fresh Jupyter kernel's first cell ``import mxnet`` works; the reader does nothing;
- a process that never imports ``mxnet`` (the node shim ``helpers/job_node.py``, pip, the Jupyter server)
  is untouched: the shim imports nothing in it;
- with NumPy 1.23.5 (Python 3.9 to 3.11) it changes nothing: every name is still there;
- a failure here never stops Python from starting, nor hides MXNet's own error: it is a warning.

THREE DEFAULTS THAT ARE NOT COMPATIBILITY FIXES, set at the same moment (:data:`ENGINE_DEFAULTS`),
each unless the environment already sets it.

``MXNET_ENFORCE_DETERMINISM=1`` and ``MXNET_CUDNN_AUTOTUNE_DEFAULT=0``: notebook 05 asserts that two
runs on the same devices agree to the last bit, in separate processes too (tests/test_train.py), and
notebook 06 that Gluon's step is notebook 05's, bit for bit. On GPUs that needs
both, and is not guaranteed by them (none of it has run on a GPU here). The first lets cuDNN's
convolutions and max pooling use only the algorithms cuDNN reports as deterministic (AlgoFinalSelect in
src/operator/nn/cudnn/cudnn_convolution-inl.h and cudnn_deconvolution-inl.h, CuDNNPoolingOp::Init in
cudnn_pooling-inl.h; docs/static_site/src/pages/api/faq/env_var.md); MXNet's own kernels that add with
atomicAdd (gather_nd's backward, backward_gather_nd_gpu in src/operator/tensor/indexing_op.cu, among
others the series does not use) ignore it. The second makes cuDNN's heuristics pick the algorithm
(cudnnGet*_v7) instead of timing the candidates (cudnnFind*, MXNet's default of 1: param_.cudnn_tune in
cudnn_convolution-inl.h), whose noise can pick another deterministic algorithm, with other roundings,
in another process; the heuristic's choice may run slower. Nothing on a CPU reads either.

``MXNET_CPU_TEMP_COPY``, which has to be set before MXNet starts. Operators such as convolution
borrow scratch memory ("temp space") from a pool that MXNet keeps for *all* CPU contexts together, 4
buffers by default (``ResourceManagerImpl``, src/resource.cc; the variable is read once, when the
pool is made). Every request takes the next buffer in turn, and two operators that hold the same
buffer run one after the other, whichever device they are on. With 4 buffers, two CPU stand-ins
mostly take turns: 0-2 % of a LeNet step on two stand-ins has both busy. With 32, about half to nine
tenths, and one epoch on two stand-ins takes 0.7-0.8 of the time of one (benchmarks/train_epoch.py;
notebook 05). More buffers cost memory only when an operator asks for a large one: about 40 % more
peak memory for a full-width ResNet-18 on two stand-ins, nothing measurable for the series' LeNet.
GPUs have pools of their own (``MXNET_GPU_TEMP_COPY``), untouched.

A FASTER IMPORT, ALSO NOT A COMPATIBILITY FIX. MXNet imports ``distutils.version`` while it is
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

Standard library only, and valid on Python 3.9: it runs before anything else is imported.
"""
import os
import sys

__all__ = ['activate', 'apply', 'engine_defaults', 'stdlib_distutils', 'install', 'pth_line', 'PTH_NAME', 'ALIASES',
           'ENGINE_DEFAULTS', 'NUMPY2_CONSTANTS', 'NUMPY2_FUNCTIONS', 'NUMPY2_FINANCIAL', 'NUMPY2_SUBMODULES',
           'restorable', 'compiled_ops_path', 'record_compiled_ops', 'OPS_SWITCH']

# --- What NumPy removed and MXNet 1.9.1 reads (module docstring). One group per removal; each is put
# back only where the running NumPy lacks the name, as NumPy 1.23 defined it.

# NumPy 1.24 removed six aliases of Python's types. MXNet reads np.bool at import (mxnet/numpy/utils.py,
# `bool = onp.bool`) and np.int when called (mxnet/test_utils.py); the other four go back with them,
# so that NumPy 1.24-1.26 looks to MXNet exactly like 1.23 (as on Python 3.12 since it was supported).
# NumPy 2 has np.bool again, as NumPy's own boolean type (the same dtype as bool): left as it is.
ALIASES = {'bool': bool, 'int': int, 'float': float, 'complex': complex, 'object': object, 'str': str}

# NumPy 2.0 removed these spellings of its constants (NEP 52). MXNet reads them at import:
# mxnet/numpy/utils.py re-exports PZERO, NZERO, NINF, PINF, NAN and NaN as mx.np.*, and
# mxnet/gluon/contrib/estimator/event_handler.py has `priority=np.Inf` as a default argument.
# The Python floats NumPy 1.x had.
NUMPY2_CONSTANTS = {'PZERO': 0.0, 'NZERO': -0.0, 'PINF': float('inf'), 'NINF': float('-inf'),
                    'Inf': float('inf'), 'NAN': float('nan'), 'NaN': float('nan')}

# NumPy 2.0 removed these functions (NEP 52), each a second name of one it kept. MXNet reads them at
# import: mxnet/numpy/fallback.py (`alltrue = onp.alltrue`, `msort = onp.msort`) and the list of
# functions mxnet/numpy_dispatch_protocol.py registers for NumPy's __array_function__ protocol
# (sometrue, product, round_). Each goes back as a function of its own that calls the one NumPy
# kept, as NumPy 1.x had them: were np.sometrue the very object np.any, MXNet's dispatch table would
# send np.any to mx.np.sometrue. msort(a) is sort(a, axis=0), as NumPy 1.x computed it.
NUMPY2_FUNCTIONS = {'alltrue': 'all', 'sometrue': 'any', 'product': 'prod', 'round_': 'round', 'msort': None}

# NumPy 1.20 removed the financial functions (NEP 32) but kept, until 2.0, a stub of each that raises
# RuntimeError when called. MXNet reads six of them at import (mxnet/numpy/fallback.py, `npv =
# onp.npv`, ...): the same stubs go back, with NumPy 1.x's message.
NUMPY2_FINANCIAL = ('mirr', 'npv', 'pmt', 'ppmt', 'pv', 'rate')

# NumPy 2 no longer imports numpy.compat (deprecated since 1.26) with numpy, so `np.compat` is not an
# attribute. MXNet reads np.compat.basestring when np.pad is called (mxnet/ndarray/numpy/_op.py,
# mxnet/symbol/numpy/_symbol.py): numpy.compat is imported (its deprecation warning silenced), or, in
# a NumPy that no longer ships it, a module with what MXNet reads (basestring = str, as in NumPy 1.x).
NUMPY2_SUBMODULES = {'compat': {'basestring': str}}

# Set in os.environ (only where the environment does not set them) right before MXNet starts.
ENGINE_DEFAULTS = {'MXNET_CPU_TEMP_COPY': '32', 'MXNET_ENFORCE_DETERMINISM': '1', 'MXNET_CUDNN_AUTOTUNE_DEFAULT': '0'}
PTH_NAME = 'mxdp-mxnet-compat.pth'
MODULE_NAME = '_mxdp_mxnet_compat'  # the name the .pth loads this file under (not `helpers.`...)
# A faster import, 2 (module docstring): the environment variable ('0': off; 'record': write the file)
# and the two modules whose `exec` is stood in for.
OPS_SWITCH = 'MXDP_COMPILED_OPS'
OPS_MODULES = ('mxnet.ndarray.register', 'mxnet.symbol.register')


def _warn(message):
    import warnings
    warnings.warn(f'helpers._mxnet_compat: {message}', RuntimeWarning, stacklevel=3)


def _numpy_version(numpy):
    major, minor = numpy.__version__.split('.')[:2]
    return int(major), int(''.join(c for c in minor if c.isdigit()) or 0)


def _financial_stub(name):
    message = (f'In accordance with NEP 32, the function {name} was removed from NumPy version 1.20.  A '
               'replacement for this function is available in the numpy_financial library: '
               'https://pypi.org/project/numpy-financial')

    def stub(*args, **kwargs):
        raise RuntimeError(message)
    stub.__name__ = stub.__qualname__ = name
    stub.__module__ = 'numpy'
    return stub


def _function(numpy, name, kept):
    if kept is None:  # msort
        def function(a):
            b = numpy.array(a, subok=True, copy=True)
            b.sort(axis=0)
            return b
        doc = 'np.sort(a, axis=0)'
    else:
        target = getattr(numpy, kept)

        def function(*args, **kwargs):
            return target(*args, **kwargs)
        doc = f'np.{kept}'
    function.__name__ = function.__qualname__ = name
    function.__module__ = 'numpy'
    function.__doc__ = (f"NumPy 1.x's np.{name}, removed in NumPy 2.0: {doc}. "
                        'Put back for MXNet 1.9.1 by helpers/_mxnet_compat.py.')
    return function


def _submodule(name, contents):
    import importlib
    import types
    import warnings
    try:
        with warnings.catch_warnings():
            warnings.simplefilter('ignore', DeprecationWarning)
            return importlib.import_module(f'numpy.{name}')
    except ImportError:
        module = types.ModuleType(f'numpy.{name}', 'Put back for MXNet 1.9.1 by helpers/_mxnet_compat.py.')
        module.__dict__.update(contents)
        return module


def restorable(version):
    """The names this shim puts back on a NumPy of ``version`` (``(major, minor)``) that lacks them:
    the 1.24 group from NumPy 1.24 on, the 2.0 groups from NumPy 2.0 on."""
    names = list(ALIASES) if version >= (1, 24) else []
    if version >= (2, 0):
        names += [*NUMPY2_CONSTANTS, *NUMPY2_FUNCTIONS, *NUMPY2_FINANCIAL, *NUMPY2_SUBMODULES]
    return names


def _value(numpy, name):
    """What ``numpy.<name>`` is put back as (the groups above)."""
    if name in ALIASES:
        return ALIASES[name]
    if name in NUMPY2_CONSTANTS:
        return NUMPY2_CONSTANTS[name]
    if name in NUMPY2_FUNCTIONS:
        return _function(numpy, name, NUMPY2_FUNCTIONS[name])
    if name in NUMPY2_FINANCIAL:
        return _financial_stub(name)
    return _submodule(name, NUMPY2_SUBMODULES[name])


def apply():
    """Make the running interpreter ready for ``import mxnet``; return the names it put back.

    On NumPy 1.24 and later, puts back the names MXNet 1.9.1 reads that the running NumPy lacks
    (the groups above); does nothing on older NumPy, and changes no name NumPy has. On Python 3.12
    and later, warns if ``distutils`` cannot be found (install setuptools)."""
    import numpy
    restored = []
    for name in restorable(_numpy_version(numpy)):
        if name not in vars(numpy):  # not hasattr(): NumPy 1.25+ warns on the lookup of removed names
            setattr(numpy, name, _value(numpy, name))
            restored.append(name)
    if sys.version_info >= (3, 12):
        import importlib.util
        if importlib.util.find_spec('distutils') is None:
            _warn('MXNet 1.9.1 imports distutils, which Python 3.12 removed; setuptools provides it: '
                  'pip install setuptools (requirements.txt installs it)')
    return restored


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


def engine_defaults(environ=None):
    """Set each of :data:`ENGINE_DEFAULTS` that ``environ`` (default ``os.environ``) does not set;
    return the names set. Runs right before ``import mxnet`` (module docstring)."""
    environ = os.environ if environ is None else environ
    chosen = [name for name in ENGINE_DEFAULTS if name not in environ]
    for name in chosen:
        environ[name] = ENGINE_DEFAULTS[name]
    return chosen


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
        from importlib.machinery import PathFinder
        spec = PathFinder.find_spec(fullname, path)
        if spec is not None and hasattr(spec.loader, 'exec_module'):
            spec.loader = _Loader(spec.loader, self._enter)
        return spec

    def _enter(self, module):
        module.exec = self.exec
        self.modules.append(module)

    def spec(self):
        """The spec of ``mxnet`` where the normal import finds it, its loader wrapped so that
        :meth:`begin` runs when it starts to execute and :meth:`stop` when it is done; None where
        ``mxnet`` is not found (the normal import goes on)."""
        from importlib.machinery import PathFinder
        spec = PathFinder.find_spec('mxnet')
        if spec is None or not hasattr(spec.loader, 'exec_module'):
            return None
        spec.loader = _Loader(spec.loader, self.begin, self.stop)
        return spec

    def begin(self, package):
        """``mxnet`` starts to execute: read the file, and put this finder first on ``sys.meta_path``."""
        if not self.record:
            self.codes = self._read(self.path)
        sys.meta_path.insert(0, self)

    def stop(self, package):
        """After ``import mxnet`` (or its failure): this finder and the stand-ins gone, MXNet's own
        loader back on ``mxnet``, the file written if recording, the counts kept. Never raises: a
        failure to write is a warning, and never hides MXNet's own error."""
        if self in sys.meta_path:
            sys.meta_path.remove(self)
        for module in self.modules:
            vars(module).pop('exec', None)
        for module in (package, *self.modules):
            if isinstance(module.__loader__, _Loader):
                module.__loader__ = module.__spec__.loader = module.__loader__.loader
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


class _BeforeMXNet:
    """A ``sys.meta_path`` finder: the first time ``mxnet`` is about to be imported, it removes
    itself and runs :func:`engine_defaults`, :func:`apply` and :func:`stdlib_distutils`; then it finds
    ``mxnet`` where the normal import would, its loader wrapped by :class:`_CompiledOps` (or nothing,
    with ``MXDP_COMPILED_OPS=0``: the normal import follows)."""

    mxdp_mxnet_compat = True  # how activate() recognises one, even from another copy of this module

    def find_spec(self, fullname, path=None, target=None):
        if fullname == 'mxnet':
            try:
                sys.meta_path.remove(self)
            except ValueError:
                pass
            try:
                engine_defaults()
                apply()
                stdlib_distutils()
            except Exception as exc:  # never hide MXNet's own error behind ours
                _warn(f'could not prepare NumPy for MXNet: {exc!r}')
            switch = os.environ.get(OPS_SWITCH, '1')
            if switch != '0':
                try:
                    return _CompiledOps(compiled_ops_path(), record=switch == 'record').spec()
                except Exception as exc:
                    _warn(f'could not serve MXNet its compiled operators (it compiles them): {exc!r}')
        return None


def activate():
    """Arrange for :func:`apply` to run right before the first ``import mxnet`` of this process.
    Idempotent; does nothing once ``mxnet`` is imported (too late to help)."""
    if 'mxnet' in sys.modules:
        return
    if not any(getattr(f, 'mxdp_mxnet_compat', False) for f in sys.meta_path):
        sys.meta_path.insert(0, _BeforeMXNet())


def pth_line(path=None):
    """The line of the ``.pth`` file: load this file by its path (not as ``helpers._mxnet_compat``,
    which would depend on how the project is installed), once, and call :func:`activate`. Any failure
    is one line on stderr; Python starts anyway."""
    path = os.path.abspath(path or __file__)
    code = (                    # site can read a .pth twice (seen: Python 3.11 in a venv): load it once
        'try:\n'
        f'  if {MODULE_NAME!r} not in sys.modules:\n'
        '    import importlib.util\n'
        f'    spec = importlib.util.spec_from_file_location({MODULE_NAME!r}, {path!r})\n'
        '    module = sys.modules[spec.name] = importlib.util.module_from_spec(spec)\n'
        '    spec.loader.exec_module(module)\n'
        '    module.activate()\n'
        'except Exception as exc:\n'
        f'    sys.modules.pop({MODULE_NAME!r}, None)\n'
        f'    sys.stderr.write("warning: MXNet compatibility shim %s not loaded: %r\\n" % ({path!r}, exc))\n'
    )
    return f'import sys; exec({code!r})\n'


def install(site_dir=None):
    """Write the ``.pth`` file into ``site_dir`` (default: this interpreter's site-packages, i.e.
    the venv's); return its path. ``make setup`` runs this (``python -m helpers._mxnet_compat
    install``); so can a conda or hand-made environment."""
    import sysconfig
    site_dir = site_dir or sysconfig.get_paths()['purelib']
    target = os.path.join(site_dir, PTH_NAME)
    with open(target, 'w') as f:
        f.write('# MXNet 1.9.1 on NumPy >= 1.24 / Python 3.12, 3.13: see helpers/_mxnet_compat.py. '
                'Written by `make setup`.\n')
        f.write(pth_line())
    return target


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


if __name__ == '__main__':
    if sys.argv[1:] == ['install']:      # `make setup`: the .pth file, then the compiled operators
        print(install())
        record_compiled_ops()
    else:
        sys.exit('usage: python -m helpers._mxnet_compat install')
