"""The student edition: every notebook whose lessons have checks, as an nbgrader assignment.

    python -m tools.assignments [--out DIR] [--no-release] [NOTEBOOK ...]     (``make assignments``)
    python tools/assignments.py ...                                          (the same)

From the notebooks as they are (``notebooks/NN-*.ipynb``), it writes an nbgrader course directory,
by default ``build/assignments/``:

* ``source/<NN-title>/<NN-title>.ipynb`` -- the lecturer's version: each lesson cell (metadata
  ``lesson``) whose function has a check in :mod:`helpers.lessoncheck` becomes an nbgrader solution
  cell -- its signature, docstring and guard line stay, a one-line ``# Hint:`` follows (the check's
  ``hint``), and the body sits between ``### BEGIN SOLUTION`` and ``### END SOLUTION`` -- followed by
  a locked, autograded check cell, ``check_<name>(<name>)``, whose hidden test (nbgrader puts it back
  when autograding) runs the check again in a fresh Python, on the function the cells define, where
  no cell can change the check (:mod:`helpers.lessoncheck.graded`); the other cells stay as they are
  (navigation cells and speaker notes dropped, outputs cleared, ``../img/`` diagrams copied next to
  it). Lesson cells without a check stay as written.
* ``release/<NN-title>/...`` -- the student edition, made from ``source/`` by nbgrader's own
  ``generate_assignment`` (solutions replaced by ``raise NotImplementedError``, checksums for
  autograding), and the course's ``gradebook.db``;
* ``nbgrader_config.py`` -- the settings both use (the course root: the folder of that file, wherever
  it is copied; the stub's text; the time a cell may run).

A notebook none of whose lessons has a check yet is left out and named. The book and the decks keep
the full notebooks. docs/assignments.md says how a lecturer releases and grades the edition.
Depends on nbformat, nbgrader and ``helpers`` only.
"""
import argparse
import ast
import contextlib
import glob
import os
import re
import shutil
import sys

import nbformat

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

OUT = os.path.join(ROOT, 'build', 'assignments')
HIDDEN = ('### BEGIN HIDDEN TESTS', '### END HIDDEN TESTS')     # nbgrader's markers
DROPPED_TAGS = {'nav', 'notes'}       # navigation between notebooks, speaker notes for the lecturer
STUB = "# YOUR CODE HERE\nraise NotImplementedError('not written yet')"
CONFIG = f'''# nbgrader settings of the student edition (written by tools/assignments.py; docs/assignments.md).
import os

c = get_config()  # noqa: F821
# The course is the folder of this file, wherever it is copied to.
c.CourseDirectory.root = os.path.dirname(os.path.abspath(__file__))
# A stub keeps the lesson's signature, docstring, guard line and hint; its body is this.
c.ClearSolutions.code_stub = {{{{'python': {STUB!r}}}}}
# Notebook 05 trains LeNet for a minute: a cell may run this long before autograding gives up.
c.Execute.timeout = 600
'''


def lessons(cell):
    """The helper names a lesson cell defines (``metadata.lesson``: one name or a list)."""
    value = cell.get('metadata', {}).get('lesson') if cell.get('cell_type') == 'code' else None
    if not value:
        return []
    return [value] if isinstance(value, str) else list(value)


def checks_of(names):
    """``{name: check}`` of the names that have a check in helpers.lessoncheck (under that name, or
    under another name of the same function: ``helpers.dist.run_local_job`` is ``helpers.job``'s)."""
    from helpers.lessoncheck import find
    found = {n: find(n) for n in names}
    return {n: check for n, check in found.items() if check is not None}


def _solution_span(func, lines):
    """``(first line, last line, indent)`` of a function's body after its docstring and leading guard
    lines (``checks....``), which stay in the student edition."""
    body = list(func.body)
    if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], 'value', None), ast.Constant) \
            and isinstance(body[0].value.value, str) and len(body) > 1:
        body = body[1:]                                # the docstring stays
    while body and 'checks.' in '\n'.join(lines[body[0].lineno - 1:body[0].end_lineno]) and len(body) > 1:
        body = body[1:]                                # so does the guard line
    first = body[0].lineno
    return first, func.end_lineno, re.match(r'\s*', lines[first - 1]).group(0)


def exercise(source, checks):
    """The lesson cell's text with every checked function's body marked as nbgrader's solution: its
    signature, docstring and leading guard lines (``checks....``) stay, then ``# Hint: ...``. A checked
    class keeps its docstring and its methods' signatures; the body of each method its check names
    (``methods``; default: every method) is a solution, the hint above the first; the others stay."""
    lines = source.splitlines()
    tree = ast.parse(source)
    by_name = {q.rpartition('.')[2]: c for q, c in checks.items()}
    edits = []                                        # (first body line, last line, indent, hint or None)
    for node in tree.body:
        if not isinstance(node, (ast.FunctionDef, ast.ClassDef)) or node.name not in by_name:
            continue
        methods = getattr(by_name[node.name], 'methods', None)      # a class: the methods that are the exercise
        functions = ([n for n in node.body if isinstance(n, ast.FunctionDef) and (not methods or n.name in methods)]
                     if isinstance(node, ast.ClassDef) else [node])
        for i, func in enumerate(functions):
            edits.append(_solution_span(func, lines) + (by_name[node.name].hint if i == 0 else None,))
    for first, last, indent, hint in sorted(edits, reverse=True):
        lines[first - 1:last] = ([f'{indent}# Hint: {hint}'] * (hint is not None) + [f'{indent}### BEGIN SOLUTION']
                                 + lines[first - 1:last] + [f'{indent}### END SOLUTION'])
    return '\n'.join(lines)


def check_cell(check, name):
    """The source of the locked cell under an exercise: the check the student runs and sees, then, as
    nbgrader's hidden test (in the lecturer's version only, put back when autograding), the same check
    run again in a fresh Python on the function the cells define (:func:`helpers.lessoncheck.graded`),
    where no cell of the notebook can change it. The graded module is loaded anew from its file, and
    ``In`` is the kernel's history of the cells it ran."""
    return (f'from {check.__module__} import {check.__name__}\n\n'
            f'{check.__name__}({name})\n'
            f'{HIDDEN[0]}\n'
            f'# graded again in a fresh Python, from the definitions of the cells above (docs/assignments.md)\n'
            f"__import__('importlib').reload(__import__('helpers.lessoncheck.fresh', fromlist=['graded']))"
            f'.graded({check.lesson!r}, In)\n'
            f'{HIDDEN[1]}')


def _nbgrader(cell, grade_id, solution=False, points=None):
    meta = {'grade': points is not None, 'grade_id': grade_id, 'locked': points is not None,
            'schema_version': 3, 'solution': solution}
    if points is not None:
        meta['points'] = points
    cell.metadata['nbgrader'] = meta
    return cell


def instructions(names):
    """The markdown cell that opens the student edition."""
    listed = ', '.join(f'`{n}`' for n in names)
    return (f'**Assignment.** In this notebook you write {len(names)} function{"s" * (len(names) != 1)} '
            f'yourself: {listed}. Each one has a cell with its signature, its docstring and a one-line hint: '
            'replace `raise NotImplementedError(...)` by your code and run the cell. The cell under it checks '
            'your function: it tries it on the cases the series\' own tests sweep (several numbers of devices, '
            'sizes that do and do not divide evenly, two dtypes) and prints what passed, or the smallest case '
            'that fails, with what was expected and what came back. The cells after a function use *your* '
            'version, so a wrong function shows up there too. Before you submit, run every cell from the top '
            '(or press *Validate*): each check that passes earns its points.')


def student_notebook(path):
    """``(notebook, [checked names], [names without a check], [diagrams in img/ it shows])`` of the
    source version of ``path``."""
    nb = nbformat.read(path, as_version=4)
    checked, unchecked, cells, images = [], [], [], []
    for cell in nb.cells:
        if DROPPED_TAGS & set(cell.metadata.get('tags', [])):
            continue
        if cell.cell_type == 'code':
            cell.outputs, cell.execution_count = [], None
        if cell.cell_type == 'markdown':
            images += re.findall(r'\]\(\.\./img/([^)\s]+)\)', cell.source)
            cell.source = cell.source.replace('](../img/', '](img/')
        names = lessons(cell)
        found = checks_of(names)
        unchecked += [n for n in names if n not in found]
        if not found:
            cells.append(cell)
            continue
        cell.source = exercise(cell.source, found)
        short = [q.rpartition('.')[2] for q in found]
        cells.append(_nbgrader(cell, 'lesson_' + '_'.join(short), solution=True))
        for qualname, check in found.items():
            name = qualname.rpartition('.')[2]
            test = nbformat.v4.new_code_cell(check_cell(check, name))
            test.metadata['tags'] = ['check']
            cells.append(_nbgrader(test, check.__name__, points=check.points))
            checked.append(name)
    if checked:
        cells.insert(1, nbformat.v4.new_markdown_cell(instructions(checked)))
    nb.cells = cells
    nb.metadata.pop('widgets', None)
    return nb, checked, unchecked, images


def notebooks(paths=None):
    return sorted(paths or glob.glob(os.path.join(ROOT, 'notebooks', '[0-9][0-9]-*.ipynb')))


def config(out):
    """nbgrader's configuration for the course directory ``out``: writes its nbgrader_config.py, then
    reads it (:func:`course_config`)."""
    with open(os.path.join(out, 'nbgrader_config.py'), 'w') as f:
        f.write(CONFIG.format())
    return course_config(out)


def course_config(course):
    """nbgrader's configuration as the course directory ``course`` holds it, wherever it was copied: the
    course root is the folder of its nbgrader_config.py."""
    from traitlets.config.loader import PyFileConfigLoader
    return PyFileConfigLoader('nbgrader_config.py', path=os.path.abspath(course)).load_config()


def build(paths=None, out=OUT, release=True, log=print):
    """Write the source (and, with ``release``, nbgrader's release) of every notebook in ``paths``
    (default: all) that has checked lessons; return ``{assignment: [checked names]}``."""
    made = {}
    for path in notebooks(paths):
        assignment = os.path.basename(path)[:-len('.ipynb')]
        folder = os.path.join(out, 'source', assignment)
        shutil.rmtree(folder, ignore_errors=True)
        nb, checked, unchecked, images = student_notebook(path)
        if not checked:
            if unchecked:
                log(f'{assignment}: left out, no check yet for {", ".join(unchecked)}')
            continue
        os.makedirs(os.path.join(folder, 'img') if images else folder, exist_ok=True)
        nbformat.write(nb, os.path.join(folder, assignment + '.ipynb'))
        for name in images:
            shutil.copy(os.path.join(ROOT, 'img', name), os.path.join(folder, 'img', name))
        made[assignment] = checked
        log(f'{assignment}: {len(checked)} exercise{"s" * (len(checked) != 1)} ({", ".join(checked)})'
            + (f'; kept as written, no check yet: {", ".join(unchecked)}' if unchecked else ''))
    if release and made:
        os.makedirs(out, exist_ok=True)
        generate(out, made)
    return made


def generate(out, assignments):
    """nbgrader generate_assignment for each assignment in the course directory ``out``."""
    from nbgrader.apps import NbGraderAPI
    api = NbGraderAPI(config=config(out))
    with on_path(os.path.dirname(sys.executable)):
        for assignment in assignments:
            shutil.rmtree(os.path.join(out, 'release', assignment), ignore_errors=True)
            result = api.generate_assignment(assignment, force=True, create=True)
            if not result['success']:
                raise RuntimeError(f'nbgrader generate_assignment {assignment} failed:\n{result["log"]}\n'
                                   f'{result["error"]}')


@contextlib.contextmanager
def on_path(folder):
    """``folder`` first on PATH for a while: nbgrader runs the ``alembic`` command of its environment
    to create the gradebook, which a venv's Python finds only there."""
    old = os.environ.get('PATH', '')
    os.environ['PATH'] = folder + os.pathsep + old
    try:
        yield
    finally:
        os.environ['PATH'] = old


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('notebooks', nargs='*', help='notebooks to turn into assignments (default: all)')
    parser.add_argument('--out', default=OUT, help='the nbgrader course directory (default: build/assignments)')
    parser.add_argument('--no-release', action='store_true', help="write source/ only, not nbgrader's release/")
    args = parser.parse_args(argv)
    made = build([os.path.abspath(p) for p in args.notebooks] or None, args.out, not args.no_release)
    where = os.path.relpath(args.out)
    print(f'{len(made)} assignments in {where}/source' + ('' if args.no_release else f' and {where}/release')
          + ' (docs/assignments.md: releasing and grading them)')
    return 0 if made else 1


if __name__ == '__main__':
    sys.exit(main())
