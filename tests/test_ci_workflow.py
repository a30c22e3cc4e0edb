"""The GitHub Actions workflow (.github/workflows/test.yml): valid against the workflow schema that
check-jsonschema ships (offline: no download), and its Python matrix is exactly the supported
versions of tools/find_python.sh. It cannot run here; docs/maintainers.md says it is untested until
it is pushed."""
import os
import re
import subprocess
import sys

from conftest import ROOT

WORKFLOW = os.path.join(ROOT, '.github', 'workflows', 'test.yml')


def test_the_workflow_is_valid_offline():
    exe = os.path.join(os.path.dirname(sys.executable), 'check-jsonschema')
    out = subprocess.run([exe, '--builtin-schema', 'vendor.github-workflows', WORKFLOW],
                         capture_output=True, text=True, timeout=120, env={**os.environ, 'no_proxy': '*'})
    assert out.returncode == 0, out.stdout + out.stderr


def test_the_matrix_is_every_supported_python():
    supported = re.search(r'^SUPPORTED="([^"]+)"', open(os.path.join(ROOT, 'tools', 'find_python.sh')).read(), re.M)
    matrix = re.search(r'python: \[([^\]]+)\]', open(WORKFLOW).read())
    assert sorted(supported.group(1).split()) == sorted(v.strip(' "') for v in matrix.group(1).split(','))
    assert 'make test' in open(WORKFLOW).read()
