"""MXNet 1.9.1 on NumPy >= 1.24 and Python 3.12: the one compatibility shim, applied by itself.

WHY. MXNet 1.9.1 (2022, the last release) still uses NumPy's old aliases of Python's types, e.g.
``dtype=_np.bool`` in ``mxnet/numpy/multiarray.py`` and ``mxnet/ndarray/numpy/_op.py``, at import
time. NumPy 1.24 removed the six aliases ``np.bool``, ``np.int``, ``np.float``, ``np.complex``,
``np.object`` and ``np.str``, so ``import mxnet`` fails with "module 'numpy' has no attribute
'bool'". Python 3.9 to 3.11 can keep NumPy 1.23.5, which still has them; Python 3.12 cannot (the
first NumPy with 3.12 wheels is 1.26.0), so on 3.12 the venv has NumPy 1.26.4 and MXNet needs the
aliases back. They are put back exactly as NumPy < 1.24 defined them: ``np.bool is bool``, and so
on; nothing else changes. MXNet also imports ``distutils.version`` (``mxnet/numpy_op_fallback.py``),
and Python 3.12 removed ``distutils``: on 3.12 requirements.txt installs setuptools, whose
``distutils-precedence.pth`` makes ``import distutils`` find setuptools' copy; this module only
checks that it does and says what to do if not.

HOW. ``make setup`` runs ``python -m helpers._mxnet_compat install``, which writes a one-line
``.pth`` file into the venv's site-packages. Python runs it at every start-up; it loads this file
and calls :func:`activate`, which only puts a finder on ``sys.meta_path``: nothing is imported.
The first time anything imports ``mxnet``, the finder removes itself, sets the engine default
below (:func:`engine_defaults`), runs :func:`apply` (import NumPy; if it is >= 1.24, restore the
aliases), and lets the normal import of ``mxnet`` go on. So:

- a fresh Jupyter kernel's first cell ``import mxnet`` works; the reader does nothing;
- a process that never imports ``mxnet`` (the node shim ``helpers/job_node.py``, pip, the Jupyter server)
  is untouched: the shim imports nothing in it;
- with NumPy 1.23.5 (Python 3.9 to 3.11) it changes nothing: the aliases are still there;
- a failure here never stops Python from starting, nor hides MXNet's own error: it is a warning.

ONE DEFAULT THAT IS NOT A COMPATIBILITY FIX, set at the same moment because it has to be set before
MXNet starts: ``MXNET_CPU_TEMP_COPY`` (:data:`ENGINE_DEFAULTS`), unless the environment already sets
it. Operators such as convolution borrow scratch memory ("temp space") from a pool that MXNet keeps
for *all* CPU contexts together, 4 buffers by default (``ResourceManagerImpl``, src/resource.cc; the
variable is read once, when the pool is made). Every request takes the next buffer in turn, and two
operators that hold the same buffer run one after the other, whichever device they are on. With 4
buffers, two CPU stand-ins mostly take turns: 0-2 % of a LeNet step on two stand-ins has both busy.
With 32, about half to nine tenths, and one epoch on two stand-ins takes 0.7-0.8 of the time of one
(benchmarks/train_epoch.py; notebook 05). More buffers cost memory only when an operator asks for
a large one: about 40 % more peak memory for a full-width ResNet-18 on two stand-ins, nothing
measurable for the series' LeNet. GPUs have pools of their own (``MXNET_GPU_TEMP_COPY``), untouched.

Standard library only, and valid on Python 3.9: it runs before anything else is imported.
"""
import sys

__all__ = ['activate', 'apply', 'engine_defaults', 'install', 'pth_line', 'PTH_NAME', 'ALIASES', 'ENGINE_DEFAULTS']

# The six aliases NumPy 1.24 removed, each the Python type it always was.
ALIASES = {'bool': bool, 'int': int, 'float': float, 'complex': complex, 'object': object, 'str': str}
# Set in os.environ (only where the environment does not set them) right before MXNet starts.
ENGINE_DEFAULTS = {'MXNET_CPU_TEMP_COPY': '32'}
PTH_NAME = 'mxdp-mxnet-compat.pth'
MODULE_NAME = '_mxdp_mxnet_compat'  # the name the .pth loads this file under (not `helpers.`...)


def _warn(message):
    import warnings
    warnings.warn(f'helpers._mxnet_compat: {message}', RuntimeWarning, stacklevel=3)


def _numpy_version(numpy):
    major, minor = numpy.__version__.split('.')[:2]
    return int(major), int(''.join(c for c in minor if c.isdigit()) or 0)


def apply():
    """Make the running interpreter ready for ``import mxnet``; return the aliases it restored.

    Restores NumPy's six removed aliases when NumPy is 1.24 or later (and below 2: MXNet 1.9.1 does
    not work with NumPy 2, which removed more, e.g. ``np.PZERO``); does nothing on older NumPy.
    On Python 3.12 and later, warns if ``distutils`` cannot be found (install setuptools)."""
    import numpy
    restored = []
    version = _numpy_version(numpy)
    if version >= (2, 0):
        _warn(f'MXNet 1.9.1 does not work with NumPy {numpy.__version__} (NumPy 2 removed np.PZERO, '
              'np.NAN, ... which MXNet uses): install numpy<2 (requirements.txt pins it)')
    elif version >= (1, 24):
        for name, value in ALIASES.items():
            if name not in vars(numpy):  # not hasattr(): NumPy 1.25+ warns on the lookup
                setattr(numpy, name, value)
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
    import os
    environ = os.environ if environ is None else environ
    chosen = [name for name in ENGINE_DEFAULTS if name not in environ]
    for name in chosen:
        environ[name] = ENGINE_DEFAULTS[name]
    return chosen


class _BeforeMXNet:
    """A ``sys.meta_path`` finder that finds nothing: the first time ``mxnet`` is about to be
    imported, it removes itself and runs :func:`apply`; the normal import follows."""

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
    which would depend on how the project is installed) and call :func:`activate`. Any failure is
    one line on stderr; Python starts anyway."""
    import os
    path = os.path.abspath(path or __file__)
    code = (
        'try:\n'
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
    import os
    import sysconfig
    site_dir = site_dir or sysconfig.get_paths()['purelib']
    target = os.path.join(site_dir, PTH_NAME)
    with open(target, 'w') as f:
        f.write('# MXNet 1.9.1 on NumPy >= 1.24 / Python 3.12: see helpers/_mxnet_compat.py. '
                'Written by `make setup`.\n')
        f.write(pth_line())
    return target


if __name__ == '__main__':
    if sys.argv[1:] == ['install']:
        print(install())
    else:
        sys.exit('usage: python -m helpers._mxnet_compat install')
