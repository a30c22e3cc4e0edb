"""The CPU (requirements.txt), GPU (requirements-gpu.txt) and conda (environment.yml) environments
agree on every shared pin, and the running environment is the pinned one."""
import os
import re

import pytest

from conftest import ROOT


def _pins(lines):
    pins = {}
    for line in lines:
        line = line.split('#')[0].strip().lstrip('- ').strip()
        m = re.fullmatch(r'([A-Za-z0-9_.\-]+)\s*((?:==|>=|<=|~=)\s*[^\s;]+)?', line)
        if m and line:
            pins[m.group(1).lower()] = (m.group(2) or '').replace(' ', '')
    return pins


def _read(name):
    with open(os.path.join(ROOT, name)) as f:
        return f.read().splitlines()


def _conda_pip_section():
    lines = _read('environment.yml')
    start = next(i for i, l in enumerate(lines) if l.strip() == '- pip:')
    return [l for l in lines[start + 1:] if l.startswith('      - ')]


CPU = _pins(_read('requirements.txt'))
GPU = _pins(_read('requirements-gpu.txt'))
CONDA = _pins(_conda_pip_section())


def test_mxnet_is_the_same_release_everywhere():
    assert CPU['mxnet'] == '==1.9.1'
    assert GPU['mxnet-cu112'] == CPU['mxnet'] == CONDA['mxnet-cu112']
    assert 'mxnet' not in GPU and 'mxnet' not in CONDA, 'the GPU envs must not also pull the CPU wheel'


@pytest.mark.parametrize('other', [GPU, CONDA], ids=['requirements-gpu.txt', 'environment.yml'])
def test_shared_pins_agree(other):
    shared = (set(CPU) & set(other)) - {'mxnet'}
    assert {'numpy', 'd2l', 'nbval', 'jupyterlab'} <= shared
    for name in shared:
        assert CPU[name] == other[name], f'{name}: {CPU[name]} (CPU) vs {other[name]}'


def test_gpu_variant_brings_the_cuda_11_runtime_libraries():
    for lib in ('cuda-runtime', 'cudnn', 'nccl', 'cublas', 'cufft', 'curand', 'cusolver', 'cuda-nvrtc', 'nvtx'):
        assert f'nvidia-{lib}-cu11' in GPU, lib
    conda = '\n'.join(_read('environment.yml'))
    assert re.search(r'python=3\.(9|10)\b', conda) and 'cudatoolkit=11.2' in conda
    assert 'cudnn=8' in conda and 'nccl' in conda


def test_running_environment_matches_the_pins():
    import d2l
    import mxnet
    import numpy
    assert mxnet.__version__ == CPU['mxnet'][2:]
    assert numpy.__version__ == CPU['numpy'][2:]
    assert d2l.__version__ == CPU['d2l'][2:]
