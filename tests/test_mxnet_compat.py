"""helpers/_mxnet_compat.py: MXNet 1.9.1 imports in a fresh interpreter or Jupyter kernel on every
supported Python (NumPy 1.23.5 on 3.9-3.11, 1.26.4 on 3.12, 2.2.6 on 3.13) with nothing done by the
reader; the shim is inert where nothing is missing, what it puts back behaves as NumPy 1.x's did,
it imports nothing at start-up, and never breaks start-up. (Which names: test_mxnet_numpy_names.py.)"""
import os
import subprocess
import sys
import sysconfig
import types
import warnings

import pytest

from helpers import _mxnet_compat as compat, _mxnet_import as fast

ALIASES = sorted(compat.ALIASES)


def _python(code, cwd, **kwargs):
    """Run `code` in a fresh interpreter of this environment, outside the repository (so nothing
    is imported from the working directory: the .pth file alone must do the work)."""
    return subprocess.run([sys.executable, '-c', code], cwd=cwd, capture_output=True, text=True,
                          timeout=300, **kwargs)


@pytest.mark.parametrize('version, restored', [('1.23.5', []), ('1.24.0', ALIASES), ('1.26.4', ALIASES)])
def test_apply_restores_the_aliases_only_where_numpy_removed_them(monkeypatch, version, restored):
    numpy = types.ModuleType('numpy')
    numpy.__version__ = version
    monkeypatch.setitem(sys.modules, 'numpy', numpy)
    assert sorted(compat.apply()) == restored
    for name in restored:
        assert getattr(numpy, name) is compat.ALIASES[name]  # np.bool is bool, as before NumPy 1.24
    assert sorted(compat.apply()) == []  # twice: nothing more


NUMPY2 = sorted(set(compat.restorable((2, 0))) - set(compat.ALIASES))


def _fake_numpy(monkeypatch, version, **names):
    import numpy as real
    numpy = types.ModuleType('numpy')  # not a package: `import numpy.compat` fails, as in a NumPy without it
    numpy.__version__ = version
    for name in ('all', 'any', 'prod', 'round', 'array'):
        setattr(numpy, name, getattr(real, name))
    numpy.__dict__.update(names)
    monkeypatch.setitem(sys.modules, 'numpy', numpy)
    return numpy


@pytest.mark.parametrize('version', ['2.0.0', '2.2.6'])
def test_apply_on_numpy_2_puts_back_what_numpy_2_removed(monkeypatch, version):
    numpy = _fake_numpy(monkeypatch, version, bool='numpy.bool')  # NumPy 2 has np.bool: its own type
    assert sorted(compat.apply()) == sorted([n for n in ALIASES if n != 'bool'] + NUMPY2)
    assert numpy.bool == 'numpy.bool'  # what NumPy has is never replaced
    assert numpy.int is int and numpy.PZERO == 0.0 and numpy.compat.basestring is str
    assert compat.apply() == []


@pytest.mark.parametrize('version', ['1.23.5', '1.26.4'])
def test_numpy_1_is_not_given_numpy_2_names(monkeypatch, version):
    """NumPy 1.x answers np.npv, np.NaN, ... through its own __getattr__ (not in vars(numpy)): the
    NumPy 2 groups must not replace them."""
    numpy = _fake_numpy(monkeypatch, version)
    compat.apply()
    assert not [n for n in NUMPY2 if n in vars(numpy)]


def test_what_goes_back_behaves_as_numpy_1():
    """Each value as NumPy 1.23 had it (checked here on the running NumPy, any version)."""
    import math

    import numpy
    value = lambda name: compat._value(numpy, name)  # noqa: E731
    assert [value(n) for n in ('PZERO', 'PINF', 'Inf', 'NINF')] == [0.0, math.inf, math.inf, -math.inf]
    assert math.copysign(1, value('NZERO')) == -1 and math.isnan(value('NAN')) and math.isnan(value('NaN'))
    assert all(type(value(n)) is float for n in compat.NUMPY2_CONSTANTS)  # Python floats, as NumPy 1.x had
    a = numpy.array([[3.25, 0.0], [1.5, 2.0]])
    assert value('alltrue')(a) == numpy.all(a) and value('alltrue')(a, axis=0).tolist() == [True, False]
    assert value('sometrue')(a, axis=1).tolist() == [True, True]
    assert value('product')(a) == 0.0 and value('product')(a, axis=0).tolist() == [4.875, 0.0]
    assert value('round_')(a, 1).tolist() == [[3.2, 0.0], [1.5, 2.0]]  # half to even, as np.round
    sorted_a = value('msort')(a)
    assert sorted_a.tolist() == [[1.5, 0.0], [3.25, 2.0]] and a[0, 0] == 3.25  # a copy, sorted along axis 0
    for name in compat.NUMPY2_FINANCIAL:
        with pytest.raises(RuntimeError, match='numpy_financial'):
            value(name)(0.1, [1, 2])
    for name, kept in compat.NUMPY2_FUNCTIONS.items():
        assert value(name).__name__ == name and value(name) is not getattr(numpy, kept or 'sort')


@pytest.mark.skipif(compat._numpy_version(__import__('numpy')) < (2, 0), reason='NumPy 1.x has these itself')
def test_mxnet_dispatches_numpy_functions_to_its_own_on_numpy_2():
    """The functions that go back are objects of their own, so MXNet's __array_function__ table
    still sends np.any to mx.np.any (were np.sometrue the very object np.any, the later entry of
    numpy_dispatch_protocol's list would take it), and the old names give what the new ones give."""
    import mxnet as mx
    import numpy
    from mxnet.numpy_dispatch_protocol import _NUMPY_ARRAY_FUNCTION_DICT as table
    for old, kept in [('sometrue', 'any'), ('product', 'prod'), ('round_', 'round')]:
        assert table[getattr(numpy, kept)] is getattr(mx.np, kept), kept
        assert table[getattr(numpy, old)] is getattr(mx.np, old), old
    x = mx.np.array([[0.5, 0.0], [1.5, 2.25]])
    assert numpy.sometrue(x).item() is numpy.any(x).item() is True
    assert numpy.product(x, axis=1).tolist() == numpy.prod(x, axis=1).tolist() == [0.0, 3.375]
    assert mx.np.PZERO == 0.0 and mx.np.NAN != mx.np.NAN and mx.np.bool is numpy.bool


@pytest.mark.parametrize('where, message', [('apply', 'could not prepare NumPy for MXNet'),
                                             ('faster_import', 'could not speed up import mxnet')])
def test_a_failure_before_import_mxnet_is_a_warning(monkeypatch, where, message):
    """Preparing NumPy, or loading the speed-ups (helpers/_mxnet_import.py), fails: a warning naming
    the step and the error, and MXNet's own import follows, unchanged."""
    def broken():
        raise RuntimeError('boom')
    monkeypatch.setattr(compat, where, broken)
    finder = compat._BeforeMXNet()
    monkeypatch.setattr(sys, 'meta_path', [finder, *sys.meta_path])
    assert finder.find_spec('numpy') is None and finder in sys.meta_path  # only `mxnet` triggers it
    monkeypatch.setenv(fast.OPS_SWITCH, '0')                 # MXNet's own import follows, unchanged
    monkeypatch.setenv(fast.LAZY_SWITCH, '0')
    with pytest.warns(RuntimeWarning, match=f'{message}.*boom'):
        assert finder.find_spec('mxnet') is None
    assert finder not in sys.meta_path  # once per process


def test_a_broken_pth_does_not_stop_python(tmp_path):
    (tmp_path / 'broken.pth').write_text(compat.pth_line(str(tmp_path / 'missing.py')))
    result = subprocess.run([sys.executable, '-S', '-c', f'import site; site.addsitedir({str(tmp_path)!r}); '
                             'print("started")'], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0 and result.stdout == 'started\n'
    assert 'MXNet compatibility shim' in result.stderr and 'missing.py' in result.stderr


def test_the_pth_file_activates_the_shim_once(tmp_path):
    assert compat.install(str(tmp_path)) == str(tmp_path / compat.PTH_NAME)
    result = _python(f'import site, sys; site.addsitedir({str(tmp_path)!r}); '
                     'print(sum(getattr(f, "mxdp_mxnet_compat", False) for f in sys.meta_path))', tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == '1\n'  # idempotent: this venv's own .pth may have activated it already


def _made_by_make_setup():
    return os.path.exists(os.path.join(sys.prefix, '.installed'))


@pytest.mark.skipif(not _made_by_make_setup(), reason='only `make setup` installs the .pth file')
def test_make_setup_installed_the_pth_file():
    path = os.path.join(sysconfig.get_paths()['purelib'], compat.PTH_NAME)
    with open(path) as f:
        assert compat.pth_line() in f.read()


def test_start_up_imports_nothing(tmp_path):
    """A process that never imports mxnet (the node shim helpers/job_node.py, pip, the Jupyter server)
    gets no NumPy, no MXNet: the shim only waits for `import mxnet`."""
    result = _python('import sys; print(sorted(m for m in sys.modules if m.split(".")[0] in '
                     '("numpy", "mxnet", "helpers")))', tmp_path)
    assert result.returncode == 0 and result.stdout == '[]\n', result.stderr


def test_fresh_interpreter_imports_mxnet(tmp_path):
    names = ALIASES + NUMPY2
    result = _python(f'import numpy; before = [n for n in {names!r} if n in vars(numpy)]; import mxnet; '
                     f'print(numpy.__version__, [n for n in {names!r} if n in vars(numpy) and n not in before])',
                     tmp_path)
    assert result.returncode == 0, result.stderr
    version, restored = result.stdout.split(' ', 1)
    version = tuple(int(p) for p in version.split('.')[:2])
    if version >= (2, 0):  # NumPy 2.2.6 (Python 3.13); np.bool is NumPy's own again
        assert restored.strip() == repr([n for n in names if n != 'bool'])
    elif version >= (1, 24):  # NumPy 1.26.4 (Python 3.12)
        assert restored.strip() == repr(ALIASES)
    else:  # NumPy 1.23.5 (Python 3.9-3.11): inert, NumPy untouched
        assert restored.strip() == '[]'
    assert 'Warning' not in result.stderr, result.stderr


def test_fresh_jupyter_kernel_imports_mxnet_in_its_first_cell(tmp_path, monkeypatch):
    monkeypatch.setenv('JUPYTER_PREFER_ENV_PATH', '1')  # this venv's kernelspec, as `make lab` uses
    nbformat = pytest.importorskip('nbformat')
    nbclient = pytest.importorskip('nbclient')
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
        'import mxnet as mx\nimport sys\nprint(mx.nd.ones((2, 3)).sum().asscalar(), sys.prefix)')])
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        nbclient.NotebookClient(nb, kernel_name='python3', timeout=300,
                                resources={'metadata': {'path': str(tmp_path)}}).execute()
    outputs = nb.cells[0].outputs
    assert not [o for o in outputs if o.output_type == 'error'], outputs
    # the kernel is this environment's Python, so it is this venv's .pth file that did the work
    assert [o.get('text') for o in outputs if o.output_type == 'stream'] == [f'6.0 {sys.prefix}\n'], outputs


def test_engine_defaults_fill_in_only_what_the_environment_does_not_set():
    env = {}
    assert compat.engine_defaults(env) == ['MXNET_CPU_TEMP_COPY', 'MXNET_ENFORCE_DETERMINISM',
                                           'MXNET_CUDNN_AUTOTUNE_DEFAULT']
    assert env == compat.ENGINE_DEFAULTS == {'MXNET_CPU_TEMP_COPY': '32', 'MXNET_ENFORCE_DETERMINISM': '1',
                                             'MXNET_CUDNN_AUTOTUNE_DEFAULT': '0'}
    mine = {'MXNET_CPU_TEMP_COPY': '4', 'MXNET_ENFORCE_DETERMINISM': '0', 'MXNET_CUDNN_AUTOTUNE_DEFAULT': '2'}
    assert compat.engine_defaults(mine) == [] and mine == {'MXNET_CPU_TEMP_COPY': '4', 'MXNET_ENFORCE_DETERMINISM': '0',
                                                           'MXNET_CUDNN_AUTOTUNE_DEFAULT': '2'}


@pytest.mark.parametrize('preset', [None, '4'])
def test_a_fresh_process_gets_the_stand_in_default_before_mxnet_starts(tmp_path, preset):
    env = {k: v for k, v in os.environ.items() if k != 'MXNET_CPU_TEMP_COPY'}
    if preset:
        env['MXNET_CPU_TEMP_COPY'] = preset
    code = "import os; assert 'MXNET_CPU_TEMP_COPY' not in os.environ or os.environ['MXNET_CPU_TEMP_COPY'] == '4'; " \
           "import mxnet; print(os.environ['MXNET_CPU_TEMP_COPY'])"
    out = _python(code, tmp_path, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [preset or compat.ENGINE_DEFAULTS['MXNET_CPU_TEMP_COPY']]


def test_import_mxnet_takes_distutils_from_the_standard_library_where_python_has_it(tmp_path):
    """Python 3.9-3.11: MXNet's `from distutils.version import ...` no longer imports all of setuptools
    (module docstring, "A faster import"); 3.12 and later: setuptools' copy, the only one. Either way
    MXNet gets the two classes it reads, without a warning, and setuptools still imports after it."""
    result = _python("import sys; import mxnet; from distutils.version import LooseVersion, StrictVersion; "
                     "print('setuptools' in sys.modules, sys.modules['distutils'].__file__); "
                     "import setuptools; print(LooseVersion('1.10') > LooseVersion('1.9'))", tmp_path)
    assert result.returncode == 0, result.stderr
    (setuptools, distutils), after = result.stdout.split('\n')[0].split(), result.stdout.split('\n')[1]
    stdlib = sys.version_info < (3, 12)
    assert setuptools == str(not stdlib) and ('setuptools' in distutils) == (not stdlib), result.stdout
    assert after == 'True' and 'DeprecationWarning' not in result.stderr, result.stderr


def test_stdlib_distutils_leaves_an_imported_distutils_and_the_finders_alone(monkeypatch):
    finders = list(sys.meta_path)
    monkeypatch.setitem(sys.modules, 'distutils', types.ModuleType('distutils'))
    assert fast.stdlib_distutils() is None and sys.meta_path == finders


# --- A faster import, 2: MXNet's operator functions compiled once (the module's docstring) ---------
SERVED = ("import sys; import mxnet; m = sys.modules['_mxdp_mxnet_import']; "
          "print(m.served, type(mxnet.__loader__).__name__, "
          "any(hasattr(sys.modules[n], 'exec') for n in m.OPS_MODULES), "
          "any(isinstance(f, m._CompiledOps) for f in sys.meta_path), mxnet.nd.ones(2).sum().asscalar())")


@pytest.mark.skipif(not _made_by_make_setup(), reason='only `make setup` records the compiled operators')
def test_import_mxnet_is_served_every_operator_compiled_by_make_setup(tmp_path):
    """Every generated operator function of `import mxnet` comes from the file `make setup` wrote, none
    is compiled; afterwards nothing of the stand-in is left (MXNet's own loader, no `exec` in its
    modules, no finder). MXDP_COMPILED_OPS=0: MXNet compiles them all, as without the shim."""
    assert os.path.exists(fast.compiled_ops_path()), 'make setup did not write the compiled operators'
    result = _python(SERVED, tmp_path)
    assert result.returncode == 0, result.stderr
    served, rest = result.stdout.split(']')
    served, compiled = (int(n) for n in served.strip('[ ').split(','))
    # found where the handles have the digits of those recorded (here, x86-64 Linux with 28 bits of address
    # randomisation: MXNet's operators lie in the heap, 0x5555... to 0x5656..., 14 digits in every process)
    assert served > 2000, f'{result.stdout} (handles of another number of digits than recorded?)'

    assert rest.split() == ['SourceFileLoader', 'False', 'False', '2.0'], result.stdout
    off = _python(SERVED, tmp_path, env=dict(os.environ, **{fast.OPS_SWITCH: '0'}))
    assert off.returncode == 0 and off.stdout.split() == ['[]', 'SourceFileLoader', 'False', 'False', '2.0'], off


@pytest.mark.skipif(not _made_by_make_setup(), reason='only `make setup` records the compiled operators')
def test_every_served_operator_is_what_compiling_its_source_makes(tmp_path):
    """For each of the sources `import mxnet` generates (its handle, a pointer, differs in every
    process), the code served from the file equals the code object compile() makes of that source:
    bytecode, constants (the handle among them), names, line table."""
    code = ("import sys, json; m = sys.modules['_mxdp_mxnet_compat'].faster_import(); pairs = []\n"
            "own = m._CompiledOps.code\n"
            "m._CompiledOps.code = lambda self, source: pairs.append((source, own(self, source))) or pairs[-1][1]\n"
            "import mxnet\n"
            "wrong = [s[:80] for s, c in pairs if c != compile(s, '<string>', 'exec')]\n"
            "print(json.dumps([len(pairs), m.served, wrong[:3]]))")
    result = _python(code, tmp_path)
    assert result.returncode == 0, result.stderr
    n, (served, compiled), wrong = __import__('json').loads(result.stdout)
    assert n == served + compiled and served > 2000 and wrong == [], result.stdout


def test_compiled_ops_from_a_file_of_this_python_only(tmp_path):
    """Written with a placeholder for the handle and read back with another handle of as many digits
    put in its place; a handle of another length (its column positions differ), a file of another
    bytecode version, a broken file or none: compiled, as before, never wrong."""
    source = 'def op(x):\n    return _imperative_invoke(140234567, [x], None, False, False)\n'
    other = source.replace('140234567', '940000017')
    path = str(tmp_path / 'ops.bin')
    recorder = fast._CompiledOps(path, record=True)
    assert recorder.code(source) == compile(source, '<string>', 'exec')
    recorder.stop(types.SimpleNamespace(__loader__=None))
    reader = fast._CompiledOps(path, record=False)
    reader.codes = reader._read(path)                    # what begin() does once mxnet starts to execute
    assert reader.code(other) == compile(other, '<string>', 'exec') and (reader.served, reader.compiled) == (1, 0)
    plain, longer = 'x = 1\n', source.replace('140234567', '1402345678')      # no operator call; 10 digits
    assert reader.code(plain) == compile(plain, '<string>', 'exec') and reader.compiled == 1
    assert reader.code(longer) == compile(longer, '<string>', 'exec') and reader.compiled == 2
    data = open(path, 'rb').read()
    import importlib.util
    import marshal
    holds_other = importlib.util.MAGIC_NUMBER + marshal.dumps({'def op(x): ...': 'not code'})
    for broken in (b'\x00\x00\r\n' + data[4:], data[:4] + b'garbage', data[:len(data) // 2], b'', holds_other):
        open(path, 'wb').write(broken)
        again = fast._CompiledOps(path, record=False)
        again.codes = again._read(path)
        assert again.codes == {} and again.code(other) == compile(other, '<string>', 'exec'), broken[:8]
    assert fast._CompiledOps._read(str(tmp_path / 'none.bin')) == {}


def test_finding_mxnet_reads_nothing_and_a_failed_write_is_a_warning(tmp_path):
    """importlib.util.find_spec('mxnet') (helpers/launcher.py does it) reads no file and leaves no
    finder; a record that cannot be written warns, leaves no partial file, and raises nothing."""
    result = _python("import importlib.util, sys; spec = importlib.util.find_spec('mxnet'); "
                     "m = sys.modules['_mxdp_mxnet_import']; "
                     "print(spec.name, any(isinstance(f, m._CompiledOps) for f in sys.meta_path), m.served)", tmp_path)
    assert result.returncode == 0 and result.stdout.split() == ['mxnet', 'False', '[]'], result
    blocked = tmp_path / 'no-such-dir' / 'ops.bin'
    recorder = fast._CompiledOps(str(blocked), record=True)
    recorder.code('def op(x):\n    return _symbol_creator(123456, x)\n')
    with pytest.warns(RuntimeWarning, match='could not keep the compiled operators'):
        recorder.stop(types.SimpleNamespace(__loader__=None))
    assert not blocked.parent.exists() and fast.served == [0, 1]


# --- A faster import, 3: four modules MXNet imports and the series never uses, loaded when first used ------
LAZY = ("import json, sys; import mxnet; m = sys.modules['_mxdp_mxnet_import']; "
        "before = [list(m.lazy), 'scipy.stats' in sys.modules, type(mxnet.__loader__).__name__, "
        "any(isinstance(f, m._LazyModules) for f in sys.meta_path)]\n"
        "from mxnet.test_utils import assert_almost_equal\n"
        "assert_almost_equal(mxnet.nd.ones(2), mxnet.nd.ones(2))\n"
        "names = [mxnet.contrib.quantization.quantize_net.__name__, mxnet.contrib.quant.quantize_net.__name__, "
        "mxnet.contrib.text.vocab.Vocabulary.__name__, mxnet.contrib.onnx.import_model.__name__]\n"
        "print(json.dumps([before, names, [type(sys.modules[n]).__name__ for n in m.LAZY_MODULES], "
        "'scipy.stats' in sys.modules]))")


def test_import_mxnet_leaves_four_unused_modules_to_their_first_use(tmp_path):
    """After `import mxnet` the four modules are in place, not run (SciPy's statistics not imported),
    and nothing of the finder is left; each works when first used, as MXNet wrote it (the same
    function objects under both names MXNet binds). MXDP_LAZY_MODULES=0: imported with mxnet."""
    import json
    result = _python(LAZY, tmp_path)
    assert result.returncode == 0, result.stderr
    before, names, kinds, stats = json.loads(result.stdout)
    assert before == [list(fast.LAZY_MODULES), False, 'SourceFileLoader', False], result.stdout
    assert names == ['quantize_net', 'quantize_net', 'Vocabulary', 'import_model'] and stats, result.stdout
    assert kinds == ['module'] * len(fast.LAZY_MODULES), result.stdout
    off = _python(LAZY, tmp_path, env=dict(os.environ, **{fast.LAZY_SWITCH: '0'}))
    assert off.returncode == 0, off.stderr
    before, names, kinds, stats = json.loads(off.stdout)
    assert before == [[], True, 'SourceFileLoader', False] and kinds == ['module'] * len(fast.LAZY_MODULES), off
