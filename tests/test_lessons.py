"""Lesson cells (tools/lessons.py): every function a notebook teaches by hand is an editable cell whose
text is its definition in helpers/ -- the same characters -- d2l-sized, with at most one guard line."""
import ast
import os
import sys

import pytest

from conftest import ROOT

sys.path.insert(0, os.path.join(ROOT, 'tools'))
import lessons  # noqa: E402

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
