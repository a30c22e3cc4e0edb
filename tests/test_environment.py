"""The CPU (requirements.txt), GPU (requirements-gpu.txt) and conda (environment.yml) environments
agree on every shared pin for every supported Python, and the running environment is the one
pinned for the running Python.

Pins that differ between Python versions are PEP 508 environment markers (`numpy==1.26.4;
python_version >= "3.12"`); every check here evaluates them for each supported version, as pip does.
d2l is installed with --no-deps from requirements-nodeps.txt (its exact pins have no Python 3.12
wheels); its dependencies are listed in the three files instead."""
import importlib.metadata
import os
import re
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
}


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


def test_supported_versions_are_stated_the_same_everywhere():
    assert SUPPORTED == ['3.9', '3.10', '3.11', '3.12']
    pyproject = '\n'.join(_read('pyproject.toml'))
    spec = SpecifierSet(re.search(r'^requires-python = "([^"]+)"', pyproject, re.M).group(1))
    for v in SUPPORTED:
        assert spec.contains(v + '.0'), f'pyproject.toml refuses Python {v}'
    for v in ('3.8', '3.13'):
        assert not spec.contains(v + '.0'), f'pyproject.toml accepts Python {v}'
    readme = '\n'.join(_read('README.md'))
    assert f'Python {SUPPORTED[0]} to {SUPPORTED[-1]}' in readme


@pytest.mark.parametrize('python', SUPPORTED)
def test_mxnet_is_the_same_release_everywhere(python):
    cpu, gpu, conda = (pins(n, python) for n in ('requirements.txt', 'requirements-gpu.txt', 'environment.yml'))
    assert cpu['mxnet'] == '==1.9.1'
    assert gpu['mxnet-cu112'] == cpu['mxnet'] == conda['mxnet-cu112']
    assert 'mxnet' not in gpu and 'mxnet' not in conda, 'the GPU envs must not also pull the CPU wheel'


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
def test_numpy_is_pinned_below_2_on_every_python(python):
    for name in ('requirements.txt', 'requirements-gpu.txt', 'environment.yml'):
        version = _exact(pins(name, python)['numpy'])
        assert int(version.split('.')[0]) < 2, 'MXNet 1.9.1 does not work with NumPy 2'
    # 3.9-3.11 keep NumPy 1.23.5 (no shim needed); 3.12 has no wheel older than 1.26.0.
    cpu = _exact(pins('requirements.txt', python)['numpy'])
    assert cpu == ('1.26.4' if python == '3.12' else '1.23.5')
    assert ('setuptools' in pins('requirements.txt', python)) == (python == '3.12'), 'distutils on 3.12'


def test_d2l_is_installed_without_its_pins_from_one_file():
    assert {canonicalize_name(r.name): str(r.specifier) for r in FILES['requirements-nodeps.txt']} == {
        'd2l': '==1.0.3'}
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
        if python != '3.12':  # the versions d2l 1.0.3 itself pins, which the series was written with
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
    wanted = {**pins('requirements.txt', RUNNING), **pins('requirements-nodeps.txt', RUNNING)}
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
