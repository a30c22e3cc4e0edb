"""The student edition (tools/assignments.py, `make assignments`; issue 26): every lesson cell with a check
becomes an nbgrader exercise with its check under it; the stub edition fails every check with "not written
yet", the full edition passes every check; and nbgrader itself releases notebook 03 and autogrades it --
full marks for the solutions, none for the stubs. Offline; about a minute, most of it nbgrader's run of 03."""
import ast
import glob
import os
import shutil
import sys

import nbformat
import pytest

from conftest import NOTEBOOKS, ROOT

sys.path.insert(0, ROOT)
from tools import assignments  # noqa: E402

from helpers.lessoncheck import CheckFailed  # noqa: E402

pytest.importorskip('nbgrader', reason='nbgrader is installed by `make setup` (requirements.txt)')


@pytest.fixture(scope='module')
def edition(tmp_path_factory):
    out = tmp_path_factory.mktemp('assignments')
    made = assignments.build(out=str(out), release=False, log=lambda line: None)
    return out, made


def _source(out, assignment):
    return nbformat.read(os.path.join(out, 'source', assignment, assignment + '.ipynb'), as_version=4)


def _released(nb):
    """What nbgrader's generate_assignment makes of a source notebook: its own ClearSolutions, with our stub."""
    from nbgrader.preprocessors import ClearSolutions
    nb = nbformat.from_dict(nb)
    return ClearSolutions(code_stub={'python': assignments.STUB}).preprocess(nb, {})[0]


def _run_checks(nb):
    """Run a notebook's imports, lesson cells and check cells in one namespace, as the kernel would
    (not its measurements); returns ``{check: None or the CheckFailed}``."""
    namespace, outcome = {}, {}
    for cell in nb.cells:
        if cell.cell_type != 'code':
            continue
        tree = ast.parse(cell.source)
        if 'nbgrader' in cell.metadata and cell.metadata.nbgrader.get('grade'):
            name = cell.metadata.nbgrader.grade_id
            try:
                exec(compile(cell.source, name, 'exec'), namespace)
                outcome[name] = None
            except CheckFailed as e:
                outcome[name] = e
        elif assignments.lessons(cell):
            exec(compile(cell.source, 'lesson', 'exec'), namespace)
        else:
            imports = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
            exec(compile(ast.Module(body=imports, type_ignores=[]), 'imports', 'exec'), namespace)
    return outcome


def _signature(node):
    """A function's arguments; a class's bases and each method's name and arguments."""
    if isinstance(node, ast.ClassDef):
        return ([ast.dump(b) for b in node.bases],
                [(f.name, ast.dump(f.args)) for f in node.body if isinstance(f, ast.FunctionDef)])
    return ast.dump(node.args)


def test_every_numbered_notebook_with_checked_lessons_is_an_assignment(edition):
    out, made = edition
    for path in sorted(glob.glob(os.path.join(NOTEBOOKS, '[0-9][0-9]-*.ipynb'))):
        nb = nbformat.read(path, as_version=4)
        names = [n for cell in nb.cells for n in assignments.lessons(cell)]
        checked = [n.rpartition('.')[2] for n in assignments.checks_of(names)]
        assignment = os.path.basename(path)[:-len('.ipynb')]
        assert made.get(assignment, []) == checked, assignment
    for required in ('split_and_load', 'allreduce_naive', 'reduce_scatter', 'all_gather', 'allreduce_ring',
                     'train_batch_scratch', 'merge_buffer_owners', 'train_worker', 'run_local_job', 'WarmUp',
                     'allreduce_bucketed', 'train_batch_sharded', 'train_batch_fp16', 'train_batch_accumulated'):
        assert any(required in names for names in made.values()), required


def test_each_exercise_keeps_signature_docstring_and_hint_and_is_followed_by_its_check(edition):
    out, made = edition
    for assignment, names in made.items():
        nb = _source(out, assignment)
        assert nb.cells[1].source.startswith('**Assignment.**')
        assert not [c for c in nb.cells if {'nav', 'notes'} & set(c.metadata.get('tags', []))]
        for i, cell in enumerate(nb.cells):
            for link in __import__('re').findall(r'\]\((img/[^)\s]+)\)', cell.source):
                assert os.path.exists(os.path.join(out, 'source', assignment, link)), link
            if not cell.metadata.get('nbgrader', {}).get('solution'):
                continue
            checked = assignments.checks_of(assignments.lessons(cell))
            released = _released(nb).cells[i].source
            for j, (qualname, check) in enumerate(checked.items()):
                name = qualname.rpartition('.')[2]
                helper = [n for n in ast.parse(cell.source).body if getattr(n, 'name', None) == name][0]
                stub = [n for n in ast.parse(released).body if getattr(n, 'name', None) == name][0]
                assert _signature(stub) == _signature(helper)                        # the same signature
                assert ast.get_docstring(stub) == ast.get_docstring(helper)           # and docstring
                assert f'# Hint: {check.hint}' in released
                assert "raise NotImplementedError('not written yet')" in released
                test = nb.cells[i + 1 + j]
                assert test.metadata.nbgrader['grade'] and test.metadata.nbgrader['locked']
                assert test.source.endswith(f'check_{name}({name})')
            assert 'BEGIN SOLUTION' not in released


def test_the_stub_edition_fails_every_check_with_not_written_yet(edition):
    out, made = edition
    for assignment, names in made.items():
        outcome = _run_checks(_released(_source(out, assignment)))
        assert sorted(outcome) == sorted(f'check_{n}' for n in names)
        for check, failure in outcome.items():
            assert failure is not None, f'{assignment}: {check} passed on a stub'
            assert 'not written yet' in failure._render_traceback_()[0], (check, failure.report.text())


def test_the_full_edition_passes_every_check(edition, capsys):
    out, made = edition
    for assignment, names in made.items():
        outcome = _run_checks(_source(out, assignment))
        assert outcome == {f'check_{n}': None for n in names}, {k: v.report.text() for k, v in outcome.items() if v}
    printed = capsys.readouterr().out
    assert printed.count('✓ ') >= sum(len(n) for n in made.values())


def test_nbgrader_releases_notebook_03_and_autogrades_it(tmp_path, monkeypatch):
    """Full marks for the solutions, none for the stubs; the release holds no solution."""
    from nbgrader.apps import NbGraderAPI
    path = os.path.join(NOTEBOOKS, '03-split-and-load-by-hand.ipynb')
    assignment = os.path.basename(path)[:-len('.ipynb')]
    made = assignments.build([path], out=str(tmp_path), log=lambda line: None)
    assert list(made) == [assignment]
    released = os.path.join(tmp_path, 'release', assignment, assignment + '.ipynb')
    text = open(released).read()
    assert 'BEGIN SOLUTION' not in text and 'largest remainders first' not in text      # a line of the solution
    assert text.count("raise NotImplementedError('not written yet')") == len(made[assignment])
    assert os.path.exists(os.path.join(tmp_path, 'release', assignment, 'img', 'dp-batch-split.svg'))
    source = os.path.join(tmp_path, 'source', assignment, assignment + '.ipynb')
    for student, notebook in (('stubs', released), ('solutions', source)):
        folder = os.path.join(tmp_path, 'submitted', student, assignment)
        os.makedirs(folder)
        shutil.copy(notebook, folder)
    monkeypatch.chdir(tmp_path)
    api = NbGraderAPI(config=assignments.config(str(tmp_path)))
    with assignments.on_path(os.path.dirname(sys.executable)):
        for student in ('stubs', 'solutions'):
            result = api.autograde(assignment, student)
            assert result['success'], result['log'] + str(result['error'])
    with api.gradebook as gb:
        scores = {s: (gb.find_submission(assignment, s).score, gb.find_submission(assignment, s).max_score)
                  for s in ('stubs', 'solutions')}
    assert scores == {'stubs': (0, len(made[assignment])), 'solutions': (len(made[assignment]),) * 2}, scores
    graded = nbformat.read(os.path.join(tmp_path, 'autograded', 'stubs', assignment, assignment + '.ipynb'), 4)
    shown = [o for c in graded.cells if c.metadata.get('nbgrader', {}).get('grade') for o in c.outputs]
    assert len(shown) == len(made[assignment]) and all(o.output_type == 'error' for o in shown)
    for o in shown:                   # what the student sees under each check: the report, not a traceback
        assert 'not written yet' in o.traceback[0] and not any('Traceback' in line for line in o.traceback)
