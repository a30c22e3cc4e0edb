"""The direction of imports (docs/maintainers.md, "Architecture"): every module of helpers/ belongs to
one layer of ``helpers.LAYERS`` and imports only from its own layer and the layers below; a package
of helpers/ (``checks``, ``lessoncheck``) sits in one layer as a whole, and each of its modules keeps
that direction too; helpers/ never imports tools/, tests/ or benchmarks/, and no import circle runs
through it; the input checks import neither MXNet nor NumPy; no module is longer than a maintainer
can hold in mind; a lesson's laws and check, and a helper's guard, are where docs/maintainers.md
says."""
import ast
import os
import pkgutil
import re
import subprocess
import sys

import pytest

import helpers
from conftest import ROOT

LAYER = {m: i for i, (_, modules) in enumerate(helpers.LAYERS.items()) for m in modules}
NAMES = list(helpers.LAYERS)
MODULES = sorted(m.name for m in pkgutil.iter_modules(helpers.__path__))     # modules and packages
HELPERS = os.path.join(ROOT, 'helpers')
MAX_LINES = 600


def _files():
    """``{dotted name: path}`` of every module of helpers/, the modules of its packages too
    (``helpers.lessoncheck.comm``; a package's ``__init__.py`` is the package itself)."""
    found = {}
    for folder, dirs, names in os.walk(HELPERS):
        dirs[:] = sorted(d for d in dirs if os.path.isfile(os.path.join(folder, d, '__init__.py')))
        for name in sorted(names):
            if name.endswith('.py'):
                parts = os.path.relpath(os.path.join(folder, name), ROOT)[:-3].split(os.sep)
                found['.'.join(parts[:-1] if parts[-1] == '__init__' else parts)] = os.path.join(folder, name)
    return found


FILES = _files()
INSIDE = sorted(name for name in FILES if name != 'helpers')     # every module below helpers/__init__.py


def _imports(module):
    """Every module named by an import statement anywhere in ``module`` (a dotted name of FILES;
    nested imports too), a relative import made absolute."""
    path = FILES[module]
    package = module if path.endswith('__init__.py') else module.rpartition('.')[0]
    found = set()
    for node in ast.walk(ast.parse(open(path).read())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ''
            if node.level:
                parts = package.split('.')
                base = '.'.join(parts[:len(parts) - node.level + 1] + [base] * bool(base))
            found.add(base)
            found |= {f'{base}.{a.name}' for a in node.names if f'{base}.{a.name}' in FILES}
    return found


def _helpers_module(name):
    """The module of helpers/ that an import of ``name`` runs (``helpers.checks.whole``: the package
    ``helpers.checks``), or None outside helpers/."""
    while name and name not in FILES:
        name = name.rpartition('.')[0]
    return name if name and name != 'helpers' else None


def _layer(module):
    return LAYER[module.split('.')[1]]


def test_every_module_is_in_exactly_one_layer():
    listed = [m for modules in helpers.LAYERS.values() for m in modules]
    assert len(listed) == len(set(listed)), 'a module is listed in two layers'
    assert sorted(listed) == MODULES, (f'not in any layer: {sorted(set(MODULES) - set(listed))}; '
                                       f'listed but missing: {sorted(set(listed) - set(MODULES))}')


@pytest.mark.parametrize('module', INSIDE)
def test_a_module_imports_only_its_own_layer_and_below(module):
    for name in _imports(module):
        top = name.partition('.')[0]
        assert top not in ('tools', 'tests', 'benchmarks'), f'{module} imports {name}'
        dep = _helpers_module(name)
        if dep:
            assert _layer(dep) <= _layer(module), (
                f'{module} ({NAMES[_layer(module)]}) imports {dep} ({NAMES[_layer(dep)]}), a layer above it')


def test_no_import_circle_runs_through_helpers():
    """A module that needs something of a module that imports it is a knot: the lower one asks the
    higher through an argument or a hook instead (helpers.checks' GPU count, helpers.devices')."""
    graph = {m: {d for d in map(_helpers_module, _imports(m)) if d and d != m} for m in INSIDE}
    circles, done = [], set()

    def visit(module, path):
        if module in path:
            circles.append(path[path.index(module):] + [module])
            return
        if module in done:
            return
        for dep in sorted(graph[module]):
            visit(dep, path + [module])
        done.add(module)
    for module in INSIDE:
        visit(module, [])
    assert not circles, 'import circles: ' + '; '.join(' -> '.join(c) for c in circles)


@pytest.mark.parametrize('module', sorted(FILES))
def test_no_module_is_longer_than_a_maintainer_can_hold(module):
    with open(FILES[module]) as f:
        lines = sum(1 for _ in f)
    assert lines <= MAX_LINES, (f'{os.path.relpath(FILES[module], ROOT)} has {lines} lines (at most {MAX_LINES}): '
                                'split it by concern, as helpers/checks/ and helpers/lessoncheck/ are')


CHECK_ROOMS = ['_kinds'] + ['_' + layer.replace(' ', '_') for layer in helpers.LAYERS]


def test_the_guards_live_with_the_kinds_or_in_the_module_of_their_helpers_layer():
    """helpers/checks/: the policy's kinds of value in _kinds.py, then one module per layer of
    helpers.LAYERS (or several, split by concern: _<layer>_<concern>.py), each using only the kinds and
    the guards of its own layer and the layers below."""
    found = sorted(m.name for m in pkgutil.iter_modules([os.path.join(HELPERS, 'checks')]))
    room = {m: max((r for r in CHECK_ROOMS if m == r or m.startswith(r + '_')), key=len, default=None) for m in found}
    assert None not in room.values() and set(room.values()) == set(CHECK_ROOMS), (
        f'helpers/checks/ holds {found}, expected {CHECK_ROOMS} (a layer\'s split by concern: _<layer>_<concern>)')
    for m in found:
        for dep in filter(None, map(_helpers_module, _imports(f'helpers.checks.{m}'))):
            assert dep.rpartition('.')[0] == 'helpers.checks' and (
                CHECK_ROOMS.index(room[dep.rpartition('.')[2]]) <= CHECK_ROOMS.index(room[m])), (
                f'helpers.checks.{m} imports {dep}: only _kinds and the guards of its layer and below')


def test_each_lessons_laws_and_check_live_in_the_room_of_its_module():
    """helpers/lessoncheck/: the laws and the check of lesson helpers.<module>.<name> are in
    helpers/lessoncheck/<module>.py, one file to open for a lesson's check."""
    from helpers.lessoncheck import CHECKS
    for qualname, check in CHECKS.items():
        room = 'helpers.lessoncheck.' + qualname.split('.')[1]
        where = {check.laws.__module__} | {law.test.__module__ for law in check.laws()}
        assert where == {room}, f'the check of {qualname} and its laws are in {sorted(where)}, not {room}'


def test_the_maintainers_guide_lists_every_module_in_its_layer():
    rows = {}
    for line in open(os.path.join(ROOT, 'docs', 'maintainers.md')):
        cells = [c.strip() for c in line.strip().strip('|').split('|')]
        if line.startswith('| ') and len(cells) == 3 and cells[0].split(' (')[0] in helpers.LAYERS:
            rows[cells[0].split(' (')[0]] = re.findall(r'`(\w+)`', cells[1])
    assert rows == {layer: list(modules) for layer, modules in helpers.LAYERS.items()}, (
        "docs/maintainers.md's table of layers differs from helpers.LAYERS")


def test_the_input_checks_start_neither_mxnet_nor_numpy():
    code = 'import sys, helpers.checks; print(sorted({"mxnet", "numpy"} & set(sys.modules)))'
    out = subprocess.run([sys.executable, '-c', code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == '[]', out.stdout + out.stderr
