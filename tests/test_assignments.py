"""The student edition (tools/assignments.py, `make assignments`; issues 26 and 37): every lesson cell with a
check becomes an nbgrader exercise with its check under it, and a hidden test that grades it again in a fresh
Python; the stub edition fails every check with "not written yet", the full edition passes every check, in the
kernel and as graded; nbgrader itself releases notebook 03 and autogrades it after the course was moved --
full marks for the solutions, none for the stubs, and for a forged submission only what it wrote. Issue 37's
wrong functions are caught for their reasons, its right ones accepted. Offline; about three minutes, most of
it nbgrader's runs of 03."""
import ast
import glob
import os
import re
import shutil
import sys

import nbformat
import pytest

from conftest import NOTEBOOKS

from tools import assignments

from helpers.lessoncheck import CheckFailed

pytest.importorskip('nbgrader', reason='nbgrader is installed by `make setup` (requirements.txt)')


@pytest.fixture(scope='module')
def edition(tmp_path_factory):
    out = tmp_path_factory.mktemp('assignments')
    made = assignments.build(out=str(out), release=False, log=lambda line: None)
    return out, made


def _source(out, assignment):
    return nbformat.read(os.path.join(out, 'source', assignment, assignment + '.ipynb'), as_version=4)


def _released(nb):
    """What nbgrader's generate_assignment makes of a source notebook: its own ClearSolutions, with our stub,
    and its ClearHiddenTests."""
    from nbgrader.preprocessors import ClearHiddenTests, ClearSolutions
    nb = nbformat.from_dict(nb)
    nb = ClearSolutions(code_stub={'python': assignments.STUB}).preprocess(nb, {})[0]
    return ClearHiddenTests().preprocess(nb, {})[0]


def _hidden(source):
    """``(the visible part, the lesson the hidden test grades or None)`` of a check cell."""
    visible, _, hidden = source.partition(assignments.HIDDEN[0])
    found = re.search(r"\.graded\('([\w.]+)', In\)", hidden)
    return visible, found and found.group(1)


def _run_checks(nb):
    """Run a notebook's imports, lesson cells and check cells in one namespace, as the kernel would
    (not its measurements), keeping the kernel's ``In``; a check cell's hidden test runs the fresh
    Python's own code in this process (``fresh._check_in_fresh_namespace``: the same definitions taken
    from ``In``, the same check; tests below start the real one). Returns ``{check: None or the
    report's text}``."""
    from helpers.lessoncheck import fresh
    namespace, outcome = {'In': ['']}, {}
    for cell in nb.cells:
        if cell.cell_type != 'code':
            continue
        namespace['In'].append(cell.source)
        tree = ast.parse(cell.source)
        if 'nbgrader' in cell.metadata and cell.metadata.nbgrader.get('grade'):
            name = cell.metadata.nbgrader.grade_id
            visible, graded = _hidden(cell.source)
            try:
                exec(compile(visible, name, 'exec'), namespace)
                outcome[name] = None
            except CheckFailed as e:
                outcome[name] = e.report.text()
                continue
            if graded:
                result = fresh._check_in_fresh_namespace(graded, graded.rpartition('.')[2], namespace['In'])
                outcome[name] = None if result['ok'] and result['cases'] else result['text']
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
                visible, graded = _hidden(test.source)
                assert visible.strip().endswith(f'check_{name}({name})') and graded == check.lesson
                assert _released(nb).cells[i + 1 + j].source.strip().endswith(f'check_{name}({name})')
            assert 'BEGIN SOLUTION' not in released


def test_the_stub_edition_fails_every_check_with_not_written_yet(edition):
    out, made = edition
    for assignment, names in made.items():
        outcome = _run_checks(_released(_source(out, assignment)))
        assert sorted(outcome) == sorted(f'check_{n}' for n in names)
        for check, failure in outcome.items():
            assert failure is not None, f'{assignment}: {check} passed on a stub'
            assert 'not written yet' in failure.splitlines()[0], (check, failure)


def test_the_full_edition_passes_every_check(edition, capsys):
    out, made = edition
    for assignment, names in made.items():
        outcome = _run_checks(_source(out, assignment))
        assert outcome == {f'check_{n}': None for n in names}, {k: v for k, v in outcome.items() if v}
    printed = capsys.readouterr().out
    assert printed.count('✓ ') >= sum(len(n) for n in made.values())


# A careless student's shortcut (issue 37), in the first solution cell: every check of the kernel passes.
FORGERY = """import helpers.lessoncheck as _lc
import helpers.lessoncheck.machinery as _m


def _passes(name, fn, laws, qualname=None):
    report = _m.Report(name)
    report.passed = [(_m.Law('forged', None, [], None), 1, 0.0)]
    return report


_m.run = _passes
for _name in list(_lc.__all__):
    if _name.startswith('check_'):
        setattr(_lc, _name, lambda fn, _name=_name: print(f'✓ {_name[6:]}: all laws hold'))


"""


def _forged(released, folder):
    """The released notebook 03 with :data:`FORGERY` in its first solution cell, ``shard_sizes`` written
    (the lesson's own text), ``shard_bounds`` calling the installed lesson, the other two left as stubs."""
    from tools import lessons
    nb = nbformat.read(released, 4)
    solutions = [c for c in nb.cells if c.metadata.get('nbgrader', {}).get('solution')]
    first = next(c for c in solutions if 'def shard_sizes' in c.source)
    assert first is solutions[0]
    first.source = FORGERY + lessons.definition('helpers.split.shard_sizes')
    bounds = next(c for c in solutions if 'def shard_bounds' in c.source)
    bounds.source = ('import helpers.split\n\n\ndef shard_bounds(n, k, weights=None):\n'
                     '    return helpers.split.shard_bounds(n, k, weights)\n')
    nbformat.write(nb, os.path.join(folder, os.path.basename(released)))


def test_nbgrader_releases_notebook_03_and_autogrades_it_wherever_the_course_is_and_no_grade_is_forged(
        tmp_path, monkeypatch):
    """Full marks for the solutions, none for the stubs, and for a forged submission only the function it
    really wrote: its first solution cell rewrites helpers.lessoncheck, so that every check in its kernel
    passes, but the hidden tests grade again in a fresh Python. The release holds no solution and no
    hidden test; the course is graded after it was moved (its nbgrader_config.py names no folder); the
    feedback shows each check's report."""
    from nbgrader.apps import NbGraderAPI
    path = os.path.join(NOTEBOOKS, '03-split-and-load-by-hand.ipynb')
    assignment = os.path.basename(path)[:-len('.ipynb')]
    built, course = tmp_path / 'built', tmp_path / 'moved'
    made = assignments.build([path], out=str(built), log=lambda line: None)
    assert list(made) == [assignment]
    shutil.copytree(built, course)
    shutil.rmtree(built)                                   # graded where it was moved to, or not at all
    assert str(built) not in open(course / 'nbgrader_config.py').read()
    released = os.path.join(course, 'release', assignment, assignment + '.ipynb')
    text = open(released).read()
    assert 'BEGIN SOLUTION' not in text and 'largest remainders first' not in text      # a line of the solution
    assert 'HIDDEN TESTS' not in text and '.graded(' not in text
    assert text.count("raise NotImplementedError('not written yet')") == len(made[assignment])
    assert os.path.exists(os.path.join(course, 'release', assignment, 'img', 'dp-batch-split.svg'))
    source = os.path.join(course, 'source', assignment, assignment + '.ipynb')
    students = ('stubs', 'solutions', 'forged')
    for student, notebook in (('stubs', released), ('solutions', source), ('forged', None)):
        folder = os.path.join(course, 'submitted', student, assignment)
        os.makedirs(folder)
        if notebook:
            shutil.copy(notebook, folder)
        else:
            _forged(released, folder)
    monkeypatch.chdir(course)
    api = NbGraderAPI(config=assignments.course_config(course))
    assert os.path.realpath(api.coursedir.root) == os.path.realpath(course)
    with assignments.on_path(os.path.dirname(sys.executable)):
        for student in students:
            result = api.autograde(assignment, student)
            assert result['success'], result['log'] + str(result['error'])
        result = api.generate_feedback(assignment, 'forged')
        assert result['success'], result['log'] + str(result['error'])
    with api.gradebook as gb:
        scores = {s: (gb.find_submission(assignment, s).score, gb.find_submission(assignment, s).max_score)
                  for s in students}
    n = len(made[assignment])
    assert scores == {'stubs': (0, n), 'solutions': (n, n), 'forged': (1, n)}, scores
    graded = nbformat.read(os.path.join(course, 'autograded', 'stubs', assignment, assignment + '.ipynb'), 4)
    shown = [o for c in graded.cells if c.metadata.get('nbgrader', {}).get('grade') for o in c.outputs]
    assert len(shown) == n and all(o.output_type == 'error' for o in shown)
    for o in shown:                   # what the student sees under each check: the report, not a traceback
        assert 'not written yet' in o.traceback[0] and not any('Traceback' in line for line in o.traceback)
    graded = nbformat.read(os.path.join(course, 'autograded', 'solutions', assignment, assignment + '.ipynb'), 4)
    for cell in graded.cells:
        if cell.metadata.get('nbgrader', {}).get('grade'):
            said = ''.join(o.get('text', '') for o in cell.outputs)
            assert 'graded again in a fresh Python' in said and not any(o.output_type == 'error' for o in cell.outputs)
    graded = nbformat.read(os.path.join(course, 'autograded', 'forged', assignment, assignment + '.ipynb'), 4)
    checks = {c.metadata.nbgrader.grade_id: c for c in graded.cells if c.metadata.get('nbgrader', {}).get('grade')}
    for check, cell in checks.items():                     # the forged check passed in the kernel ...
        assert 'all laws hold' in ''.join(o.get('text', '') for o in cell.outputs), check
    said = {check: '\n'.join(line for o in cell.outputs if o.output_type == 'error' for line in o.traceback)
            for check, cell in checks.items()}             # ... and failed where the cells cannot reach
    assert said['check_shard_sizes'] == '', said['check_shard_sizes']
    assert "it calls the series' own shard_bounds" in said['check_shard_bounds'], said['check_shard_bounds']
    for check in ('check_split_and_load', 'check_split_batch'):
        assert 'graded again in a fresh Python' in said[check] and 'not written yet' in said[check], said[check]
    feedback = open(os.path.join(course, 'feedback', 'forged', assignment, assignment + '.html')).read()
    assert re.search("it calls the series(&#39;|&#x27;|') own shard_bounds", feedback)


# ---------------------------------------------------------------- issue 37: wrong code caught, right code accepted

from test_lessoncheck import _define, broken  # noqa: E402  a reader's cell; a wrong version of the lesson's text

from helpers.lessoncheck import verify  # noqa: E402

# What a lecturer and a careless student tried on the first edition (issue 37): each wrong function must
# fail its check, with the words of the right reason.
CAUGHT = {
    'an sgd that returns inside its loop, updating only the first parameter': ('helpers.train.sgd', '''
def sgd(params, lr, batch_size):
    for p in params:
        p -= lr * p.grad / batch_size
        return
''', r'parameter 1 did not change, while parameter 0 did: update every parameter of the list'),
    'an evaluate_accuracy that never splits, running everything on devices[0]': ('helpers.train.evaluate_accuracy', '''
def evaluate_accuracy(net, data_iter, devices):
    correct, n = nd.zeros(1, ctx=devices[0]), 0
    for X, y in data_iter:
        X, y = X.as_in_context(devices[0]), y.as_in_context(devices[0])
        correct += (net(X).argmax(axis=1) == y.astype('float32')).sum()
        n += len(y)
    return correct.asscalar() / n
''', r'everything ran on one device: split each batch over the devices'),
    "notebook 06's step on devices[0] alone, with ignore_stale_grad=True": ('helpers.train.train_batch', '''
def train_batch(net, X, y, trainer, devices, weights=None):
    with autograd.record():
        l = loss(net(X.as_in_context(devices[0])), y.as_in_context(devices[0]))
    l.backward()
    trainer.step(X.shape[0], ignore_stale_grad=True)
    return [l.sum()]
''', r'the whole batch ran on one device: split it'),
    'a backward_and_send that never waits': ('helpers.buckets.backward_and_send', broken(
        'helpers.buckets.backward_and_send', ('    if wait:\n        nd.waitall()', '    pass')),
        r'with wait=True, no allreduce before the whole backward pass(.|\n)*wait is the argument'),
    'a backward_and_send that always waits': ('helpers.buckets.backward_and_send', broken(
        'helpers.buckets.backward_and_send', ('    if wait:\n        nd.waitall()', '    nd.waitall()')),
        r'with wait=False, every allreduce is queued at once(.|\n)*it waited for the whole backward pass'),
    'a replicated step that ignores sum_grads and hard-codes the ring': ('helpers.sharding.train_batch_replicated', '''
def train_batch_replicated(X, y, replicas, devices, updaters, sum_grads=allreduce, send=copy_to):
    checks.flat_replicas(replicas, devices, updaters)
    losses = forward_backward(X, y, [r.params for r in replicas], devices)
    allreduce_ring([r.grads for r in replicas], send)
    for r, update in zip(replicas, updaters):
        update(0, r.grads, r.weights)
    return losses
''', r'with sum_grads=allreduce_naive, the calls of sum_grads(.|\n)*sum with the sum_grads argument'),
    'an initialiser drawing 0.01 N(0, 1)': ('helpers.models.init_lenet_params', broken(
        'helpers.models.init_lenet_params',
        ('rng.uniform(-bound, bound, shape)', '0.01 * rng.standard_normal(shape)')),
        r'drawn uniformly from ±(.|\n)*look drawn with a normal distribution of spread 0.01'),
    'an initialiser with the bound sqrt(2 / (fan_in + fan_out))': ('helpers.models.init_lenet_params', broken(
        'helpers.models.init_lenet_params', ('np.sqrt(6 / (fan_in + fan_out))', 'np.sqrt(2 / (fan_in + fan_out))')),
        r'look drawn with sqrt\(2 / \(fan_in \+ fan_out\)\) = .* as the bound'),
    'a ring that calls the installed one': ('helpers.comm.allreduce_ring', '''
import helpers.comm
def allreduce_ring(arrays, send=copy_to):
    return helpers.comm.allreduce_ring(arrays, send)
''', r"it calls the series' own allreduce_ring \(helpers.comm\)"),
    'a naive allreduce that calls the installed allreduce (which calls the naive one)': (
        'helpers.comm.allreduce_naive', '''
import helpers.comm
def allreduce_naive(arrays, send=copy_to):
    return helpers.comm.allreduce(arrays, send)
''', r"it calls the series' own allreduce_naive"),
    "notebook 07's merge_buffer_owners through its short name kvs": ('helpers.kvstore.merge_buffer_owners', '''
from helpers import kvstore as kvs
def merge_buffer_owners(sizes, k):
    return kvs.merge_buffer_owners(sizes, k)
''', r"it calls the series' own merge_buffer_owners"),
    "notebook 09's WarmUp calling the installed one": ('helpers.scaling.WarmUp', '''
from helpers import scaling
class WarmUp(mx.lr_scheduler.LRScheduler):
    def __init__(self, base_lr=0.01, warmup_steps=0, warmup_begin_lr=0, warmup_mode='linear'):
        super().__init__(*checks.warmup(base_lr, warmup_steps, warmup_begin_lr, warmup_mode))

    def __call__(self, num_update):
        return scaling.WarmUp.__call__(self, num_update)
''', r"it calls the series' own WarmUp.__call__"),
    "notebook 09's WarmUp as a subclass of the installed one": ('helpers.scaling.WarmUp', '''
from helpers import scaling
class WarmUp(scaling.WarmUp):
    pass
''', r"is not yours: it is a subclass of the series' own WarmUp"),
    "notebook 11's sharded step calling the installed one": ('helpers.sharding.train_batch_sharded', '''
import helpers.sharding
def train_batch_sharded(X, y, replicas, devices, updaters, send=copy_to):
    return helpers.sharding.train_batch_sharded(X, y, replicas, devices, updaters, send)
''', r"it calls the series' own train_batch_sharded"),
    "notebook 13's save_checkpoint through its short name ckpt": ('helpers.checkpoint.save_checkpoint', '''
from helpers import checkpoint as ckpt
def save_checkpoint(prefix, net, trainer, device):
    ckpt.save_checkpoint(prefix, net, trainer, device)
''', r"it calls the series' own save_checkpoint"),
    'a sgd that calls the installed one and, when refused, writes its own': ('helpers.train.sgd', '''
import helpers.train
def sgd(params, lr, batch_size):
    try:
        helpers.train.sgd(params, lr, batch_size)
    except Exception:
        for p in params:
            p -= lr * p.grad / batch_size
''', r"it calls the series' own sgd"),
    'the installed lesson itself, imported in place of a definition': ('helpers.comm.allreduce_ring',
                                                                       'from helpers.comm import allreduce_ring\n',
                                                                       r"is not yours: this is the series' own"),
    'a function that rewrites NumPy to pass': ('helpers.train.sgd', '''
def sgd(params, lr, batch_size):
    np.allclose = lambda *args, **kwargs: True
''', r'changed what the check relies on: numpy.allclose'),
    # ---------------------------------------------------------------- the right reason
    'an MXNet error inside the function': (
        'helpers.models.lenet_scratch', broken('helpers.models.lenet_scratch', ('num_filter=6))', 'num_filter=7))')),
        r'raised MXNetError: .*\n.*why: in lenet_scratch: `H = nd.relu\(nd.Convolution'
        r'\(X, W1, b1, kernel=\(5, 5\), pad=\(2, 2\), num_filter=7\)\)`'),
    'a checkpoint the lesson cannot load (a dict instead of a list)': ('helpers.checkpoint.save_checkpoint', '''
def save_checkpoint(prefix, net, trainer, device):
    nd.save(f'{prefix}.params', {n: p.data(device) for n, p in net.collect_params().items()})
    trainer.save_states(f'{prefix}.states')
''', r"the lesson's load_checkpoint could not read your checkpoint"),
    'a loss scale that never grows above 2**16': ('helpers.precision.next_scale', '''
def next_scale(scale, updated, good_steps, growth_interval=2000):
    if not updated:
        return scale / 2, 0
    good_steps += 1
    if good_steps == growth_interval and scale < 2 ** 16:
        return scale * 2, 0
    return scale, good_steps
''', r'double the scale after growth_interval \(2\) good steps'),
    'a loss scale whose default interval is 1000': ('helpers.precision.next_scale', broken(
        'helpers.precision.next_scale', ('growth_interval=2000', 'growth_interval=1000')),
        r'the default growth_interval is 2000'),
    'a step that divides by k too': ('helpers.train.train_batch_scratch', broken(
        'helpers.train.train_batch_scratch', ('sgd(ps, lr, X.shape[0])', 'sgd(ps, lr, X.shape[0] * len(devices))')),
        r'moved 1/2 of one SGD step(.|\n)*not by the number of devices \(2\) too'),
    'a step that divides by k twice': ('helpers.train.train_batch_scratch', broken(
        'helpers.train.train_batch_scratch',
        ('sgd(ps, lr, X.shape[0])', 'sgd(ps, lr, X.shape[0] * len(devices) ** 2)')),
        r'moved 1/4 of one SGD step(.|\n)*not by the number of devices \(2\) twice'),
    'merge buffers placed by key count': ('helpers.kvstore.merge_buffer_owners', '''
def merge_buffer_owners(sizes, k):
    k, sizes = checks.whole(k, 'k', 1), [checks.whole(s, 'a key size', 1) for s in sizes]
    count, owners = [0] * k, [None] * len(sizes)
    for key in sorted(range(len(sizes)), key=lambda i: -sizes[i]):
        device = count.index(min(count))
        owners[key] = device
        count[device] += 1
    return owners
''', r'the device that holds the fewest keys: the rule counts elements, not keys'),
    'a reduce-scatter that sends to the left': ('helpers.comm.reduce_scatter', broken(
        'helpers.comm.reduce_scatter', ('flat[(i + 1) % k].context) for i', 'flat[(i - 1) % k].context) for i'),
        ('mine = flat[(i + 1) % k][b:e]', 'mine = flat[(i - 1) % k][b:e]'),
        ('c = [chunks[(i - s) % k] for i in range(k)]', 'c = [chunks[(i + s) % k] for i in range(k)]')),
        r'your ring sends to the left .* notebook 11 relies on owner_chunk'),
}

# ... and right functions the first edition refused: each must pass.
ACCEPTED = {
    'a warm-up written as (1 - t) begin + t base': ('helpers.scaling.WarmUp', '''
class WarmUp(mx.lr_scheduler.LRScheduler):
    def __init__(self, base_lr=0.01, warmup_steps=0, warmup_begin_lr=0, warmup_mode='linear'):
        super().__init__(*checks.warmup(base_lr, warmup_steps, warmup_begin_lr, warmup_mode))

    def __call__(self, num_update):
        if num_update < self.warmup_steps:
            t = num_update / self.warmup_steps
            return (1 - t) * self.warmup_begin_lr + t * self.base_lr
        return self.base_lr
'''),
    'a ring that sends to the left': ('helpers.comm.allreduce_ring', '''
def allreduce_ring(arrays, send=copy_to):
    k = checks.arrays(arrays, ring=True)
    flat = [a.reshape(-1) for a in arrays]
    chunks = shard_bounds(flat[0].size, k)
    for s in range(k - 1):                         # device i sends chunk i + s to its left, i - 1
        c = [chunks[(i + s) % k] for i in range(k)]
        got = [send(flat[i][b:e], flat[(i - 1) % k].context) for i, (b, e) in enumerate(c)]
        for i, (b, e) in enumerate(c):
            mine = flat[(i - 1) % k][b:e]
            mine += got[i]
    held = [flat[i][slice(*chunks[(i - 1) % k])] for i in range(k)]   # device i finished chunk i - 1
    for s in range(k - 1):
        held = [send(held[(i + 1) % k], flat[i].context) for i in range(k)]
        for i in range(k):
            b, e = chunks[(i + s) % k]
            held[i].copyto(flat[i][b:e])
    return arrays
'''),
    'an all-gather that sends to the left': ('helpers.comm.all_gather', '''
def all_gather(arrays, send=copy_to):
    k = checks.arrays(arrays, ring=True)
    flat = [a.reshape(-1) for a in arrays]
    chunks = shard_bounds(flat[0].size, k)
    held = [flat[i][slice(*chunks[(i + 1) % k])] for i in range(k)]
    for s in range(k - 1):
        held = [send(held[(i + 1) % k], flat[i].context) for i in range(k)]
        for i in range(k):
            b, e = chunks[(i + 2 + s) % k]
            held[i].copyto(flat[i][b:e])
    return arrays
'''),
    'an sgd with a comprehension of in-place updates': ('helpers.train.sgd', '''
def sgd(params, lr, batch_size):
    [p.__isub__(lr * p.grad / batch_size) for p in params]
'''),
}
PREAMBLE_37 = 'from helpers.comm import allreduce_ring, all_gather\nfrom helpers.models import LENET_SHAPES\n'


@pytest.mark.parametrize('wrong', list(CAUGHT))
def test_what_the_first_edition_let_through_is_caught_for_the_right_reason(wrong, monkeypatch):
    import numpy as np
    monkeypatch.setattr(np, 'allclose', np.allclose)         # put back what a case rewrites
    qualname, source, reason = CAUGHT[wrong]
    name = qualname.rpartition('.')[2]
    report = verify(qualname, _define(PREAMBLE_37 + source, name))
    text = report.text()
    assert not report.ok and text.startswith(f'✗ {name}'), text
    assert re.search(reason, text), text
    assert 'chunk None' not in text and 'Traceback' not in text
    print(f'\n{wrong}:\n{text}')


@pytest.mark.parametrize('right', list(ACCEPTED))
def test_what_the_first_edition_refused_is_accepted(right):
    qualname, source = ACCEPTED[right]
    report = verify(qualname, _define(source, qualname.rpartition('.')[2]))
    assert report.ok, report.text()
    print(f'\n{right}:\n{report.text()}')


def test_a_check_that_tried_no_case_fails_and_singulars_are_singular():
    from helpers.lessoncheck import Law, Report, run
    assert not Report('f').ok and 'no case was tried' in Report('f').text()
    assert not run('f', print, [Law('nothing to try', lambda fn: None, [], str)]).ok
    one = run('f', print, [Law('one', lambda fn: None, [{}], lambda: 'the case')])
    assert one.ok and one.text().startswith('✓ f: 1 law holds on 1 case tried'), one.text()
    for qualname in ('helpers.comm.allreduce', 'helpers.comm.allreduce_ring', 'helpers.precision.allreduce_fp16'):
        for law in CHECKS_BY_LESSON(qualname).laws():
            for case in law.cases:
                words = law.case_words(**case)
                assert not re.search(r'\b1 (devices|elements|images|examples|float32 elements)\b', words), words


def CHECKS_BY_LESSON(qualname):
    from helpers.lessoncheck import CHECKS
    return CHECKS[qualname]


def test_a_warm_up_with_only_call_written_passes_and_its_init_is_no_exercise(tmp_path):
    """The student edition keeps WarmUp's __init__ (a guard line), so the student writes __call__ only."""
    path = os.path.join(NOTEBOOKS, '09-scaling.ipynb')
    nb, checked, _, _ = assignments.student_notebook(path)
    cell = next(c for c in _released(nb).cells if 'class WarmUp' in c.source)
    tree = ast.parse(cell.source).body[0]
    init, call = [f for f in tree.body if isinstance(f, ast.FunctionDef)]
    assert 'NotImplementedError' not in ast.unparse(init) and 'NotImplementedError' in ast.unparse(call)
    body = '''if num_update < self.warmup_steps:
            return self.get_warmup_lr(num_update)
        return self.base_lr'''
    written = cell.source.replace("raise NotImplementedError('not written yet')", body)
    report = verify('helpers.scaling.WarmUp', _define(written, 'WarmUp'))
    assert report.ok, report.text()
