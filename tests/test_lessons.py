"""Lesson cells (tools.lessons): every function a notebook teaches by hand is an editable cell whose
text is its definition in helpers/ -- the same characters -- d2l-sized, with at most one guard line;
the tool rewrites a cell when helpers/ changed and refuses to overwrite one edited in the notebook."""
import ast
import os

import nbformat
import pytest

from conftest import ROOT
from tools import lessons

CELLS = lessons.lesson_cells()


def test_the_series_has_lesson_cells():
    taught = {name for _, _, cell in CELLS for name in lessons.names(cell)}
    for name in ('helpers.split.split_and_load', 'helpers.comm.allreduce_ring', 'helpers.comm.allreduce_naive'):
        assert name in taught, f'no notebook teaches {name}'


def test_every_lesson_cell_is_identical_to_its_helper():
    drift = lessons.drift()
    assert not drift, ('lesson cells differ from helpers/ (run `make lessons`, then re-execute): '
                       + '; '.join(f'{os.path.relpath(p, ROOT)} cell {i}: {n}' for p, i, n in drift))


def _code_lines(node, text):
    """Lines of a definition that are code: not blank, not a comment, not its docstring."""
    lines = text.splitlines()[node.lineno - 1:node.end_lineno]
    doc = ast.get_docstring(node, clean=False)
    skip = set()
    if doc is not None:
        first = node.body[0]
        skip = set(range(first.lineno, first.end_lineno + 1))
    return [l for n, l in enumerate(lines, node.lineno)
            if n not in skip and l.strip() and not l.strip().startswith('#')]


@pytest.mark.parametrize('name', sorted({n for _, _, c in CELLS for n in lessons.names(c)}))
def test_a_lesson_is_short_and_guards_in_one_line_at_most(name):
    text = lessons.definition(name)
    node = ast.parse(text).body[0]
    code = _code_lines(node, text)
    assert len(code) <= 16, f'{name}: {len(code)} lines of code (signature included); aim for 15 or fewer'
    guards = [l for l in code if 'checks.' in l or l.strip().startswith('raise ')]
    assert len(guards) <= 1, f'{name}: {len(guards)} guard lines: {guards}'


def test_every_lesson_cell_records_the_text_the_tool_wrote():
    missing = lessons.unrecorded()
    assert not missing, 'run `make lessons`: ' + ', '.join(f'{os.path.relpath(p, ROOT)} cell {i}' for p, i in missing)


def _notebook_with_lesson(tmp_path, text, recorded):
    cell = nbformat.v4.new_code_cell(text)
    cell.metadata['lesson'] = 'helpers.comm.copy_to'
    if recorded is not None:
        cell.metadata[lessons.HASH] = lessons.text_hash(recorded)
    path = tmp_path / '00-t.ipynb'
    nbformat.write(nbformat.v4.new_notebook(cells=[cell]), str(path))
    return str(path)


def test_a_cell_untouched_since_the_tool_wrote_it_follows_helpers(tmp_path):
    old = 'def copy_to(x, to):\n    return x.copyto(to)'
    path = _notebook_with_lesson(tmp_path, old, recorded=old)       # helpers/ changed since
    written, refused = lessons.sync([path])
    assert written == [path] and refused == []
    cell = nbformat.read(path, as_version=4).cells[0]
    assert cell.source == lessons.definition('helpers.comm.copy_to') and not lessons.edited(cell)


def test_a_cell_edited_in_the_notebook_is_left_alone_with_its_diff(tmp_path, capsys):
    original = lessons.definition('helpers.comm.copy_to')
    mine = original.replace('x.copyto(to)', 'x.copyto(to)  # my idea')
    path = _notebook_with_lesson(tmp_path, mine, recorded=original)
    assert lessons.main([path]) == 1
    out = capsys.readouterr().out
    assert 'was edited in the notebook' in out and '-    return x.copyto(to)  # my idea' in out
    assert nbformat.read(path, as_version=4).cells[0].source == mine          # untouched
    assert lessons.main([path, '--force']) == 0
    assert nbformat.read(path, as_version=4).cells[0].source == original
