"""Every committed notebook is executed, top to bottom, in order, with no stored error, and listed
in the README. (nbval then re-runs each one and compares its outputs.)"""
import glob
import os
import re

import nbformat
import pytest

from conftest import NOTEBOOKS, ROOT

PATHS = sorted(glob.glob(os.path.join(NOTEBOOKS, '*.ipynb')))


def test_notebooks_exist_and_are_numbered_in_reading_order():
    names = [os.path.basename(p) for p in PATHS]
    assert names, 'no notebooks found'
    for name in names:
        assert re.fullmatch(r'\d\d-[a-z0-9-]+\.ipynb', name), f'{name}: expected NN-title.ipynb'
    numbers = [int(n[:2]) for n in names]
    assert numbers == list(range(len(numbers))), f'notebooks must be numbered 00, 01, ...: {names}'


@pytest.mark.parametrize('path', PATHS, ids=os.path.basename)
def test_notebook_is_executed_in_order_without_errors(path):
    nb = nbformat.read(path, as_version=4)
    code = [c for c in nb.cells if c.cell_type == 'code' and c.source.strip()]
    assert code, 'a notebook with no code'
    counts = [c.execution_count for c in code]
    assert counts == list(range(1, len(code) + 1)), f'not executed top to bottom in one run: {counts}'
    for i, cell in enumerate(code):
        for out in cell.outputs:
            assert out.output_type != 'error', f'code cell {i} stored an error: {out.get("ename")}'
            if out.output_type == 'stream' and out.name == 'stderr':
                assert 'Traceback' not in out.text, f'code cell {i} printed a traceback'
    assert nb.metadata.get('kernelspec', {}).get('name') == 'python3'
    assert nb.cells[0].cell_type == 'markdown' and nb.cells[0].source.startswith('# '), \
        'first cell must be the markdown title'


def test_readme_lists_every_notebook():
    readme = open(os.path.join(ROOT, 'README.md')).read()
    for path in PATHS:
        assert f'notebooks/{os.path.basename(path)}' in readme, f'README does not list {path}'
