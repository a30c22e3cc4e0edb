"""Keep every lesson cell identical to its definition in helpers/ (one definition per concept).

A *lesson cell* is a notebook code cell that defines a function the reader writes by hand
(``split_and_load``, ``allreduce_ring``, the training step, ...). Its metadata names the helper it
is, e.g. ``{"lesson": "helpers.comm.allreduce_ring"}`` (or a list of names for a cell that defines
several). The text of the cell is the text of that definition in ``helpers/`` -- the same
characters -- so the reader edits and runs the very code that later notebooks import.

The direction of truth is helpers -> notebooks: edit the function in ``helpers/`` (where the unit
tests check it), then run

    python tools/lessons.py            # rewrite every lesson cell from helpers/ (``make lessons``)
    python tools/lessons.py --check    # list drifted cells, exit 1 if any (tests/test_lessons.py)

and re-execute the notebooks whose cells changed (``make execute NOTEBOOKS=...``). The tool never
touches outputs or execution counts; a cell whose text changed must be re-executed, and the
hygiene test and nbval catch it if it is not.
"""
import ast
import glob
import os
import sys

import nbformat

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NOTEBOOK_GLOB = os.path.join(ROOT, 'notebooks', '**', '*.ipynb')


def definition(qualname):
    """The exact source text of the top-level function or class ``qualname`` ('helpers.x.name')."""
    module, _, name = qualname.rpartition('.')
    path = os.path.join(ROOT, *module.split('.')) + '.py'
    if not os.path.isfile(path):
        raise LookupError(f'{qualname}: no module file {os.path.relpath(path, ROOT)}')
    with open(path) as f:
        text = f.read()
    for node in ast.parse(text).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name == name:
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            return '\n'.join(text.splitlines()[first - 1:node.end_lineno])
    raise LookupError(f'{qualname}: no top-level definition {name!r} in {os.path.relpath(path, ROOT)}')


def names(cell):
    """The helper names a lesson cell defines (empty for other cells)."""
    value = cell.get('metadata', {}).get('lesson')
    if not value:
        return []
    return [value] if isinstance(value, str) else list(value)


def expected_source(cell):
    return '\n\n\n'.join(definition(name) for name in names(cell))


def lesson_cells(paths=None):
    """``[(path, index, cell)]`` of every lesson cell in the notebooks."""
    found = []
    for path in sorted(paths or glob.glob(NOTEBOOK_GLOB, recursive=True)):
        nb = nbformat.read(path, as_version=4)
        for i, cell in enumerate(nb.cells):
            if cell.cell_type == 'code' and names(cell):
                found.append((path, i, cell))
    return found


def drift(paths=None):
    """``[(path, cell index, names)]`` of lesson cells whose text differs from helpers/."""
    return [(p, i, names(c)) for p, i, c in lesson_cells(paths) if c.source != expected_source(c)]


def sync(paths=None):
    """Rewrite drifted lesson cells from helpers/; return the notebooks changed."""
    changed = []
    for path in sorted({p for p, _, _ in drift(paths)}):
        nb = nbformat.read(path, as_version=4)
        for cell in nb.cells:
            if cell.cell_type == 'code' and names(cell):
                cell.source = expected_source(cell)
        nbformat.write(nb, path)
        changed.append(path)
    return changed


def main(argv):
    check = '--check' in argv
    paths = [a for a in argv if not a.startswith('--')] or None
    if check:
        bad = drift(paths)
        for path, i, qualnames in bad:
            print(f'{os.path.relpath(path, ROOT)} cell {i}: differs from {", ".join(qualnames)}')
        return 1 if bad else 0
    for path in sync(paths):
        print(f'rewrote lesson cells of {os.path.relpath(path, ROOT)}: re-execute it '
              f'(make execute NOTEBOOKS={os.path.relpath(path, ROOT)})')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
