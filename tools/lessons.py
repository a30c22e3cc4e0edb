"""Keep every lesson cell identical to its definition in helpers/ (one definition per concept).

A *lesson cell* is a notebook code cell that defines a function the reader writes by hand
(``split_and_load``, ``allreduce_ring``, the training step, ...). Its metadata names the helper it
is, e.g. ``{"lesson": "helpers.comm.allreduce_ring"}`` (or a list of names for a cell that defines
several). The text of the cell is the text of that definition in ``helpers/`` -- the same
characters -- so the reader edits and runs the very code that later notebooks import.

The direction of truth is helpers -> notebooks: edit the function in ``helpers/`` (where the unit
tests check it), then run

    python -m tools.lessons            # rewrite lesson cells from helpers/ (``make lessons``)
    python -m tools.lessons --check    # list drifted cells, exit 1 if any (tests/test_lessons.py)

and re-execute the notebooks whose cells changed (``make execute NOTEBOOKS=...``).

**An edited cell is never overwritten.** Each time the tool writes a cell it records a hash of the
text it wrote (metadata ``lesson_text``). A drifted cell whose text still has that hash was not
touched since: helpers/ changed, and the cell is rewritten. A drifted cell whose text does not (someone
edited the lesson in the notebook, e.g. while trying an idea in JupyterLab) is left as it is: the
tool prints the difference and exits 1. Move the change into helpers/ (or undo it), or pass
``--force`` to overwrite it. The tool never touches outputs or execution counts.
"""
import ast
import difflib
import hashlib
import os
import sys

from tools import nb as nbtools
from tools.nb import ROOT

HASH = 'lesson_text'      # cell metadata: sha1 of the text this tool last wrote into the cell


def definition(qualname):
    """The exact source text of the top-level function or class ``qualname`` ('helpers.x.name')."""
    module, _, name = qualname.rpartition('.')
    path = os.path.join(ROOT, *module.split('.')) + '.py'
    if not os.path.isfile(path):
        raise LookupError(f'{qualname}: no module file {nbtools.rel(path)}')
    with open(path) as f:
        text = f.read()
    for node in ast.parse(text).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name == name:
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            return '\n'.join(text.splitlines()[first - 1:node.end_lineno])
    raise LookupError(f'{qualname}: no top-level definition {name!r} in {nbtools.rel(path)}')


def names(cell):
    """The helper names a lesson cell defines (empty for other cells)."""
    value = cell.get('metadata', {}).get('lesson')
    if not value:
        return []
    return [value] if isinstance(value, str) else list(value)


def expected_source(cell):
    return '\n\n\n'.join(definition(name) for name in names(cell))


def text_hash(text):
    return hashlib.sha1(text.encode()).hexdigest()[:12]


def edited(cell):
    """Whether the cell's text is not the text the tool last wrote (no record: not edited)."""
    recorded = cell.metadata.get(HASH)
    return recorded is not None and recorded != text_hash(cell.source)


def lesson_cells(paths=None):
    """``[(path, index, cell)]`` of every lesson cell in the notebooks."""
    found = []
    for path in sorted(paths or nbtools.numbered() + nbtools.solutions()):
        nb = nbtools.read(path)
        for i, cell in enumerate(nb.cells):
            if cell.cell_type == 'code' and names(cell):
                found.append((path, i, cell))
    return found


def drift(paths=None):
    """``[(path, cell index, names)]`` of lesson cells whose text differs from helpers/."""
    return [(p, i, names(c)) for p, i, c in lesson_cells(paths) if c.source != expected_source(c)]


def unrecorded(paths=None):
    """``[(path, cell index)]`` of lesson cells without the hash of their current text."""
    return [(p, i) for p, i, c in lesson_cells(paths) if c.metadata.get(HASH) != text_hash(c.source)]


def diff(cell):
    """The unified diff from the notebook's cell to helpers/."""
    return ''.join(difflib.unified_diff(cell.source.splitlines(True), expected_source(cell).splitlines(True),
                                        'notebook cell', ' + '.join(names(cell)), n=1))


def sync(paths=None, force=False):
    """Rewrite drifted lesson cells from helpers/ and record every lesson cell's hash; return
    ``(notebooks whose lesson text changed, [(path, index, diff)] of edited cells left alone)``
    (a notebook whose cells only got their hash recorded is written but not listed)."""
    written, refused = [], []
    for path in sorted({p for p, _, _ in lesson_cells(paths)}):
        nb = nbtools.read(path)
        changed = recorded = False
        for i, cell in enumerate(nb.cells):
            if cell.cell_type != 'code' or not names(cell):
                continue
            want = expected_source(cell)
            if cell.source != want and edited(cell) and not force:
                refused.append((path, i, diff(cell)))
                continue
            changed |= cell.source != want
            recorded |= cell.metadata.get(HASH) != text_hash(want)
            cell.source, cell.metadata[HASH] = want, text_hash(want)
        if changed or recorded:
            nbtools.write(nb, path)
        if changed:
            written.append(path)
    return written, refused


def main(argv):
    check = '--check' in argv
    paths = [a for a in argv if not a.startswith('--')] or None
    if check:
        bad = drift(paths)
        for path, i, qualnames in bad:
            print(f'{nbtools.rel(path)} cell {i}: differs from {", ".join(qualnames)}')
        return 1 if bad else 0
    written, refused = sync(paths, force='--force' in argv)
    for path in written:
        print(f'rewrote lesson cells of {nbtools.rel(path)}: re-execute it '
              f'(make execute NOTEBOOKS={nbtools.rel(path)})')
    for path, i, text in refused:
        print(f'\n{nbtools.rel(path)} cell {i} was edited in the notebook: left as it is. Move the change '
              f'into helpers/ (or undo it), or run `python -m tools.lessons --force`. The difference:\n{text}')
    return 1 if refused else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
