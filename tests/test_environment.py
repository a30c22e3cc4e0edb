"""The CPU (requirements.txt), GPU (requirements-gpu.txt) and conda (environment.yml) environments
agree on every shared pin for every supported Python, and the running environment is the one
pinned for the running Python.

Pins that differ between Python versions are PEP 508 environment markers (`numpy==1.26.4;
python_version == "3.12"`); every check here evaluates them for each supported version, as pip does.
d2l is installed with --no-deps from requirements-nodeps.txt (its exact pins have no Python 3.12+
wheels), and so is MXNet on Python 3.13 (its metadata says numpy<2; 3.13 has only NumPy 2); their
dependencies are listed in the three files instead. GPU and conda environments take them from
requirements-gpu-nodeps.txt, the same file with mxnet-cu112."""
import importlib.metadata
import os
import re
import subprocess
import sys

import pytest
from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

from conftest import ROOT


def _read(name):
    with open(os.path.join(ROOT, name)) as f:
        return f.read().splitlines()


def _supported():
    """The supported versions, as tools/find_python.sh (the one that enforces them) lists them."""
    text = '\n'.join(_read('tools/find_python.sh'))
    return sorted(re.search(r'^SUPPORTED="([0-9. ]+)"', text, re.M).group(1).split(),
                  key=lambda v: tuple(map(int, v.split('.'))))


SUPPORTED = _supported()
RUNNING = '%d.%d' % sys.version_info[:2]


def _requirements(lines):
    """Requirement objects of a requirements file's lines (comments and options dropped)."""
    reqs = []
    for line in lines:
        line = re.split(r'(^|\s)#', line)[0].strip()
        if line.startswith('- '):  # environment.yml's pip section
            line = line[2:].strip()
        if line and not line.startswith('-'):
            reqs.append(Requirement(line))
    return reqs


def _conda_pip_section():
    lines = _read('environment.yml')
    start = next(i for i, l in enumerate(lines) if l.strip() == '- pip:')
    return [l for l in lines[start + 1:] if l.startswith('      - ')]


FILES = {
    'requirements.txt': _requirements(_read('requirements.txt')),
    'requirements-gpu.txt': _requirements(_read('requirements-gpu.txt')),
    'environment.yml': _requirements(_conda_pip_section()),
    'requirements-nodeps.txt': _requirements(_read('requirements-nodeps.txt')),
    'requirements-gpu-nodeps.txt': _requirements(_read('requirements-gpu-nodeps.txt')),
}
# Each environment: the file installed with its dependencies, and the one installed with --no-deps.
ENVIRONMENTS = {'CPU': ('requirements.txt', 'requirements-nodeps.txt'),
                'GPU': ('requirements-gpu.txt', 'requirements-gpu-nodeps.txt'),
                'conda': ('environment.yml', 'requirements-gpu-nodeps.txt')}
MXNET = {'CPU': 'mxnet', 'GPU': 'mxnet-cu112', 'conda': 'mxnet-cu112'}


def pins(name, python):
    """{package: specifier} of the lines of file `name` that pip installs on Python `python`."""
    env = {**default_environment(), 'python_version': python, 'python_full_version': python + '.0'}
    out = {}
    for req in FILES[name]:
        if req.marker is None or req.marker.evaluate(env):
            key = canonicalize_name(req.name)
            assert key not in out, f'{name}: two lines for {req.name} apply on Python {python}'
            out[key] = str(req.specifier)
    return out


def _exact(spec):
    assert spec.startswith('==') and ',' not in spec, spec
    return spec[2:]


def _version(python):
    return tuple(int(p) for p in python.split('.'))


def environment(kind, python):
    """{package: specifier} that environment `kind` installs on Python `python`, both steps, and
    the packages of its --no-deps step."""
    full, nodeps = ENVIRONMENTS[kind]
    first, second = pins(full, python), pins(nodeps, python)
    assert not set(first) & set(second), f'{full} and {nodeps} both pin {set(first) & set(second)} on {python}'
    return {**first, **second}, set(second)


def test_supported_versions_are_stated_the_same_everywhere():
    assert SUPPORTED == ['3.9', '3.10', '3.11', '3.12', '3.13']
    pyproject = '\n'.join(_read('pyproject.toml'))
    spec = SpecifierSet(re.search(r'^requires-python = "([^"]+)"', pyproject, re.M).group(1))
    for v in SUPPORTED:
        assert spec.contains(v + '.0'), f'pyproject.toml refuses Python {v}'
    for v in ('3.8', '3.14'):
        assert not spec.contains(v + '.0'), f'pyproject.toml accepts Python {v}'
    readme = '\n'.join(_read('README.md'))
    assert f'Python {SUPPORTED[0]} to {SUPPORTED[-1]}' in readme
    makefile = '\n'.join(_read('Makefile'))
    assert re.search(r'^SMOKE_PYTHONS\s*\?=\s*(.*)$', makefile, re.M).group(1).split() == SUPPORTED


@pytest.mark.parametrize('python', SUPPORTED)
def test_mxnet_is_the_same_release_everywhere(python):
    for kind in ENVIRONMENTS:
        wanted, _ = environment(kind, python)
        assert wanted.get(MXNET[kind]) == '==1.9.1', f'{kind}, Python {python}: no MXNet 1.9.1'
        other = {'mxnet', 'mxnet-cu112'} - {MXNET[kind]}
        assert not other & set(wanted), f'{kind}, Python {python}: two builds of MXNet ({other})'


def _mxnet_requirements():
    """MXNet 1.9.1's own dependencies (its metadata; the same for mxnet and mxnet-cu112)."""
    for name in ('mxnet', 'mxnet-cu112'):
        try:
            return [Requirement(r) for r in importlib.metadata.requires(name) or []]
        except importlib.metadata.PackageNotFoundError:
            pass
    # what mxnet 1.9.1's METADATA says, where it is not installed (the test then still runs)
    return [Requirement(r) for r in ('numpy<2.0.0,>1.16.0', 'requests<3,>=2.20.0', 'graphviz<0.9.0,>=0.8.1')]


@pytest.mark.parametrize('python', SUPPORTED)
@pytest.mark.parametrize('kind', list(ENVIRONMENTS))
def test_mxnet_is_installed_without_its_dependencies_exactly_where_they_cannot_be_met(kind, python):
    """MXNet's metadata says numpy<2: where the pinned NumPy is 2 (Python 3.13), pip could not install
    both, so MXNet is in the --no-deps file and each of its dependencies is pinned, within MXNet's
    range except NumPy; elsewhere pip installs it with its dependencies, as before."""
    wanted, nodeps = environment(kind, python)
    needs = {canonicalize_name(r.name): r.specifier for r in _mxnet_requirements()}
    numpy_fits = needs['numpy'].contains(_exact(wanted['numpy']))
    assert (MXNET[kind] in nodeps) == (not numpy_fits), f'{kind}, Python {python}'
    if MXNET[kind] in nodeps:
        for name, spec in needs.items():
            assert name in wanted, f'{kind}, Python {python}: MXNet needs {name}, which nothing installs'
            if name != 'numpy':
                assert spec.contains(_exact(wanted[name])), f'{kind}, Python {python}: {name}{wanted[name]}'


@pytest.mark.parametrize('python', SUPPORTED)
@pytest.mark.parametrize('other', ['requirements-gpu.txt', 'environment.yml'])
def test_shared_pins_agree(other, python):
    cpu, theirs = pins('requirements.txt', python), pins(other, python)
    shared = set(cpu) & set(theirs)
    assert {'numpy', 'matplotlib', 'pandas', 'scipy', 'nbval', 'jupyterlab'} <= shared
    for name in shared:
        assert cpu[name] == theirs[name], f'Python {python}: {name}: {cpu[name]} (CPU) vs {theirs[name]} ({other})'
    assert ('setuptools' in cpu) == ('setuptools' in theirs)


@pytest.mark.parametrize('python', SUPPORTED)
def test_numpy_per_python(python):
    """3.9-3.11 keep NumPy 1.23.5 (the shim has nothing to do); 3.12 has no wheel older than 1.26.0,
    3.13 none below 2 (the shim puts back what MXNet reads). setuptools brings distutils on 3.12+."""
    cpu = _exact(pins('requirements.txt', python)['numpy'])
    assert cpu == {'3.12': '1.26.4', '3.13': '2.2.6'}.get(python, '1.23.5')
    for name in ('requirements-gpu.txt', 'environment.yml'):
        assert _exact(pins(name, python)['numpy']) == cpu
    assert ('setuptools' in pins('requirements.txt', python)) == (_version(python) >= (3, 12)), 'distutils'


def test_d2l_is_installed_without_its_pins_from_the_nodeps_files():
    cpu, gpu = ({canonicalize_name(r.name): str(r.specifier) for r in FILES[n]}
                for n in ('requirements-nodeps.txt', 'requirements-gpu-nodeps.txt'))
    assert cpu.pop('mxnet') == gpu.pop('mxnet-cu112') == '==1.9.1'
    assert cpu == gpu == {'d2l': '==1.0.3'}, 'the two --no-deps files differ only in the build of MXNet'
    for name in ('requirements.txt', 'requirements-gpu.txt', 'environment.yml'):
        assert 'd2l' not in {canonicalize_name(r.name) for r in FILES[name]}, \
            f'{name}: d2l would bring its exact pins (no Python 3.12 wheels); it is in requirements-nodeps.txt'


def _d2l_requirements():
    try:
        return [Requirement(r) for r in importlib.metadata.requires('d2l') or []]
    except importlib.metadata.PackageNotFoundError:
        pytest.skip('d2l is not installed here')


@pytest.mark.parametrize('python', SUPPORTED)
def test_every_d2l_dependency_is_listed_and_unchanged_before_3_12(python):
    cpu = pins('requirements.txt', python)
    for req in _d2l_requirements():
        name = canonicalize_name(req.name)
        assert name in cpu, f'd2l needs {req}; requirements.txt has no line for {name} on Python {python}'
        if _version(python) < (3, 12):  # the versions d2l 1.0.3 itself pins, which the series was written with
            assert cpu[name] == str(req.specifier), f'Python {python}: {name}{cpu[name]}, d2l pins {req}'


def test_gpu_variant_brings_the_cuda_11_runtime_libraries():
    gpu = pins('requirements-gpu.txt', RUNNING if RUNNING in SUPPORTED else SUPPORTED[-1])
    for lib in ('cuda-runtime', 'cudnn', 'nccl', 'cublas', 'cufft', 'curand', 'cusolver', 'cuda-nvrtc', 'nvtx'):
        assert f'nvidia-{lib}-cu11' in gpu, lib
    conda = '\n'.join(_read('environment.yml'))
    assert re.search(r'^\s*- python=(3\.\d+)\s*$', conda, re.M).group(1) in SUPPORTED
    assert 'cudatoolkit=11.2' in conda and 'cudnn=8' in conda and 'nccl' in conda


def _installed(name):
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def test_running_environment_matches_the_pins():
    """Every line of requirements.txt (and requirements-nodeps.txt) that applies to this Python is
    satisfied by what is installed: the exact pins exactly, the lower bounds at least."""
    assert RUNNING in SUPPORTED, f'tests run on Python {RUNNING}, which is not supported'
    wanted, _ = environment('CPU', RUNNING)
    if _installed('mxnet') is None and _installed('mxnet-cu112') is not None:  # a GPU environment
        wanted['mxnet-cu112'] = wanted.pop('mxnet')
    wrong = {}
    for name, spec in wanted.items():
        version = _installed(name)
        if version is None or not SpecifierSet(spec).contains(version, prereleases=True):
            wrong[name] = f'{version} installed, {spec or "any"} wanted'
    assert not wrong, f'Python {RUNNING}: {wrong} (make setup installs the pins)'
    import d2l
    import mxnet
    import numpy
    assert (mxnet.__version__, numpy.__version__, d2l.__version__) == (
        '1.9.1', _exact(wanted['numpy']), _exact(wanted['d2l']))


def _fake_python(folder, version):
    """An executable that answers tools/find_python.sh's probe as Python `version` would."""
    path = folder / f'python{version}'
    path.write_text(f'#!/bin/sh\necho "{version} $0 yes"\n')
    path.chmod(0o755)
    return str(path)


@pytest.mark.parametrize('version, ok', [('3.8', False), ('3.9', True), ('3.12', True), ('3.13', True),
                                         ('3.14', False), ('3.15', False)])
def test_find_python_accepts_the_supported_versions_and_says_why_not_the_others(tmp_path, version, ok):
    result = subprocess.run(['sh', os.path.join(ROOT, 'tools/find_python.sh'), _fake_python(tmp_path, version)],
                            capture_output=True, text=True, timeout=60)
    if ok:
        assert result.returncode == 0 and result.stdout.split()[0] == version, result.stderr
    else:
        assert result.returncode == 1 and not result.stdout
        assert f'is Python {version}. Python {version} is not supported' in result.stderr
        if version != '3.8':  # newer than tested: what is missing there, and which Python to use
            assert 'no wheels for' in result.stderr and 'Python 3.13 is the newest that works' in result.stderr
