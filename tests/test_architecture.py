"""The direction of imports (docs/maintainers.md, "Architecture"): every module of helpers/ belongs to
one layer of ``helpers.LAYERS`` and imports only from its own layer and the layers below; helpers/
never imports tools/, tests/ or benchmarks/; the input checks import neither MXNet nor NumPy."""
import ast
import os
import pkgutil
import subprocess
import sys

import pytest

import helpers
from conftest import ROOT

LAYER = {m: i for i, (_, modules) in enumerate(helpers.LAYERS.items()) for m in modules}
NAMES = list(helpers.LAYERS)
MODULES = sorted(m.name for m in pkgutil.iter_modules(helpers.__path__))


def _imports(module):
    """Every module named by an import statement anywhere in helpers/<module>.py (nested ones too)."""
    tree = ast.parse(open(os.path.join(ROOT, 'helpers', module + '.py')).read())
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            if node.module == 'helpers':
                found |= {f'helpers.{a.name}' for a in node.names}
    return found


def test_every_module_is_in_exactly_one_layer():
    listed = [m for modules in helpers.LAYERS.values() for m in modules]
    assert len(listed) == len(set(listed)), 'a module is listed in two layers'
    assert sorted(listed) == MODULES, (f'not in any layer: {sorted(set(MODULES) - set(listed))}; '
                                       f'listed but missing: {sorted(set(listed) - set(MODULES))}')


@pytest.mark.parametrize('module', MODULES)
def test_a_module_imports_only_its_own_layer_and_below(module):
    for name in _imports(module):
        top, _, rest = name.partition('.')
        assert top not in ('tools', 'tests', 'benchmarks'), f'helpers.{module} imports {name}'
        if top == 'helpers' and rest:
            dep = rest.split('.')[0]
            assert LAYER[dep] <= LAYER[module], (
                f'helpers.{module} ({NAMES[LAYER[module]]}) imports helpers.{dep} ({NAMES[LAYER[dep]]}), '
                'a layer above it')


def test_the_input_checks_start_neither_mxnet_nor_numpy():
    code = 'import sys, helpers.checks; print(sorted({"mxnet", "numpy"} & set(sys.modules)))'
    out = subprocess.run([sys.executable, '-c', code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == '[]', out.stdout + out.stderr
