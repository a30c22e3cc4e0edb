"""ruff over the Python code and (through nbqa) over every notebook's code cells: unused imports,
undefined names and overlong lines are caught in `make test`, not by a reader."""
import os
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT

BIN = os.path.dirname(sys.executable)


def _tool(name):
    path = os.path.join(BIN, name)
    if not os.path.exists(path):
        path = shutil.which(name)
    if not path:
        pytest.fail(f'{name} is not installed: `make setup` installs it (requirements.txt)')
    return path


def test_python_code_passes_ruff():
    result = subprocess.run([_tool('ruff'), 'check', 'helpers', 'tests', 'tools', 'benchmarks', 'img'],
                            cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr


def test_notebooks_pass_ruff():
    result = subprocess.run([_tool('nbqa'), 'ruff', 'notebooks'], cwd=ROOT, capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
