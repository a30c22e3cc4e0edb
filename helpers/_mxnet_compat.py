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
hands the import ``mxnet`` to :mod:`helpers._mxnet_import`, three speed-ups that are not
compatibility fixes (``distutils`` from the standard library, the operators' code compiled once, four
unused modules left to their first use; that module says why and how). So:

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

Standard library only, and valid on Python 3.9: it runs before anything else is imported.
"""
import os
import sys

__all__ = ['activate', 'apply', 'engine_defaults', 'install', 'pth_line', 'PTH_NAME', 'ALIASES', 'ENGINE_DEFAULTS',
           'NUMPY2_CONSTANTS', 'NUMPY2_FUNCTIONS', 'NUMPY2_FINANCIAL', 'NUMPY2_SUBMODULES', 'restorable',
           'faster_import']

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


def engine_defaults(environ=None):
    """Set each of :data:`ENGINE_DEFAULTS` that ``environ`` (default ``os.environ``) does not set;
    return the names set. Runs right before ``import mxnet`` (module docstring)."""
    environ = os.environ if environ is None else environ
    chosen = [name for name in ENGINE_DEFAULTS if name not in environ]
    for name in chosen:
        environ[name] = ENGINE_DEFAULTS[name]
    return chosen


def faster_import():
    """:mod:`helpers._mxnet_import`, loaded by its path as ``_mxdp_mxnet_import``, once per process
    (as the ``.pth`` file loads this file: it needs no ``helpers`` package to be importable)."""
    import importlib.util
    name = '_mxdp_mxnet_import'
    if name not in sys.modules:
        path = os.path.join(os.path.dirname(os.path.abspath(__file__)), '_mxnet_import.py')
        spec = importlib.util.spec_from_file_location(name, path)
        module = sys.modules[name] = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(module)
        except BaseException:
            del sys.modules[name]
            raise
    return sys.modules[name]


class _BeforeMXNet:
    """A ``sys.meta_path`` finder: the first time ``mxnet`` is about to be imported, it removes
    itself and runs :func:`engine_defaults` and :func:`apply`; then it hands the import to
    :mod:`helpers._mxnet_import` (:func:`faster_import`), which finds ``mxnet`` where the normal
    import would (with its speed-ups all switched off, nothing: the normal import follows)."""

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
            except Exception as exc:  # never hide MXNet's own error behind ours
                _warn(f'could not prepare NumPy for MXNet: {exc!r}')
            try:
                fast = faster_import()
                fast.stdlib_distutils()
                return fast.mxnet_spec()
            except Exception as exc:
                _warn(f'could not speed up import mxnet (it imports as it would without this shim): {exc!r}')
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


if __name__ == '__main__':
    if sys.argv[1:] == ['install']:      # `make setup`: the .pth file, then the compiled operators
        print(install())
        faster_import().record_compiled_ops()
    else:
        sys.exit('usage: python -m helpers._mxnet_compat install')
