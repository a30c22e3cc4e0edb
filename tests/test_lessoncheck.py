"""helpers.lessoncheck (issue 26): every check passes on the series' own lessons, calls a stub "not written
yet", and catches the classic wrong implementations with a message that names what is wrong -- in words,
the smallest failing case first, never a traceback."""
import ast
import importlib
import linecache
import inspect
import re

import pytest

from helpers import lessoncheck
from helpers.lessoncheck import CHECKS, CheckFailed, verify

QUALNAMES = sorted(CHECKS)


def _helper(qualname):
    module, _, name = qualname.rpartition('.')
    return getattr(importlib.import_module(module), name)


def _define(source, name):
    """A function as a reader's notebook cell defines it (the names notebook 04 and 05 import)."""
    namespace, cell = {}, f'/tmp/ipykernel_0/{abs(hash(source))}.py'
    source = ('from helpers import checks\nfrom helpers.comm import copy_to, reduce_scatter, all_gather, allreduce\n'
              'from helpers.split import shard_bounds, split_batch\nfrom helpers.train import sgd, loss\n'
              'from helpers.models import lenet_scratch\nfrom mxnet import autograd\n' + source)
    linecache.cache[cell] = (len(source), None, source.splitlines(True), cell)     # as IPython does for a cell
    exec(compile(source, cell, 'exec'), namespace)
    return namespace[name]


@pytest.mark.parametrize('qualname', QUALNAMES)
def test_every_check_passes_on_the_lessons_of_helpers(qualname, capsys):
    report = verify(qualname, _helper(qualname))
    assert report.ok, report.text()
    assert report.cases >= 2 and report.text().startswith('✓')
    CHECKS[qualname](_helper(qualname))                      # prints, raises nothing
    out = capsys.readouterr().out
    assert out.startswith(f'✓ {qualname.rpartition(".")[2]}: ') and 'cases' in out
    with capsys.disabled():
        print(f'\n{qualname}: {report.cases} cases in {report.seconds:.2f} s', end='')


@pytest.mark.parametrize('qualname', QUALNAMES)
def test_a_stub_is_not_written_yet_never_a_traceback(qualname):
    name = qualname.rpartition('.')[2]
    source = inspect.getsource(_helper(qualname))
    node = ast.parse(source).body[0]
    header = '\n'.join(source.splitlines()[:node.body[0].lineno - 1])         # the def line(s), as written
    stub = _define(f'{header}\n    raise NotImplementedError("not written yet")\n', name)
    report = verify(qualname, stub)
    assert report.not_written and not report.ok
    with pytest.raises(CheckFailed) as failed:
        CHECKS[qualname](stub)
    shown = failed.value._render_traceback_()              # what Jupyter shows instead of a traceback
    assert 'not written yet' in shown[0] and name in shown[0]
    assert not any('Traceback' in line or 'File "' in line for line in shown)


def test_a_function_that_calls_a_stub_names_the_stub():
    ring = _define('def allreduce_ring(arrays, send=copy_to):\n'
                   '    return all_gather(reduce_scatter(arrays, send), send)\n'
                   'def reduce_scatter(arrays, send=copy_to):\n    raise NotImplementedError\n', 'allreduce_ring')
    report = verify('helpers.comm.allreduce_ring', ring)
    assert 'it calls reduce_scatter, which is not written yet' in report.text()


WRONG = {
    'a ring without its all-gather': ('helpers.comm.allreduce_ring', '''
def allreduce_ring(arrays, send=copy_to):
    return reduce_scatter(arrays, send)
''', 'the all-gather is missing'),
    'an off-by-one chunk index in the reduce-scatter': ('helpers.comm.allreduce_ring', '''
def reduce_scatter(arrays, send=copy_to):
    k = checks.arrays(arrays, min_size=len(arrays))
    flat = [a.reshape(-1) for a in arrays]
    chunks = shard_bounds(flat[0].size, k)
    for s in range(k - 1):
        for i in range(k):
            b, e = chunks[(i - s + 1) % k]
            mine = flat[(i + 1) % k][b:e]
            mine += send(flat[i][b:e], mine.context)
    return arrays

def allreduce_ring(arrays, send=copy_to):
    return all_gather(reduce_scatter(arrays, send), send)
''', 'the chunk index is off by one'),
    'the same off-by-one, checked as the reduce-scatter': ('helpers.comm.reduce_scatter', '''
def reduce_scatter(arrays, send=copy_to):
    k = checks.arrays(arrays, min_size=len(arrays))
    flat = [a.reshape(-1) for a in arrays]
    chunks = shard_bounds(flat[0].size, k)
    for s in range(k - 1):
        for i in range(k):
            b, e = chunks[(i - s - 1) % k]
            mine = flat[(i + 1) % k][b:e]
            mine += send(flat[i][b:e], mine.context)
    return arrays
''', 'the chunk index is off'),
    'a reduce-scatter with one step too many': ('helpers.comm.reduce_scatter', '''
def reduce_scatter(arrays, send=copy_to):
    k = checks.arrays(arrays, min_size=len(arrays))
    flat = [a.reshape(-1) for a in arrays]
    chunks = shard_bounds(flat[0].size, k)
    for s in range(k):
        for i in range(k):
            b, e = chunks[(i - s) % k]
            mine = flat[(i + 1) % k][b:e]
            mine += send(flat[i][b:e], mine.context)
    return arrays
''', r"counts device \d's values 2 times"),
    'an all-gather that sends the wrong chunk': ('helpers.comm.all_gather', '''
def all_gather(arrays, send=copy_to):
    k = checks.arrays(arrays, min_size=len(arrays))
    flat = [a.reshape(-1) for a in arrays]
    chunks = shard_bounds(flat[0].size, k)
    for s in range(k - 1):
        for i in range(k):
            b, e = chunks[(i - s) % k]
            send(flat[i][b:e], flat[(i + 1) % k][b:e])
    return arrays
''', "first differs from the lesson's at step 1"),
    'a naive allreduce that never broadcasts': ('helpers.comm.allreduce_naive', '''
def allreduce_naive(arrays, send=copy_to):
    checks.arrays(arrays)
    root = arrays[0]
    for a in arrays[1:]:
        root += send(a, root.context)
    return arrays
''', 'the broadcast .* is missing'),
    'an allreduce in which every device adds the others in its own order': ('helpers.comm.allreduce_naive', '''
def allreduce_naive(arrays, send=copy_to):
    checks.arrays(arrays)
    received = [[send(b, a.context) for b in arrays if b is not a] for a in arrays]
    for a, others in zip(arrays, received):
        for b in others:
            a += b
    return arrays
''', 'hold different bits'),
    'a ring that copies without send': ('helpers.comm.allreduce_ring', '''
def allreduce_ring(arrays, send=copy_to):
    total = arrays[0].copyto(arrays[0].context)
    for a in arrays[1:]:
        total += a.copyto(total.context)
    for a in arrays:
        total.copyto(a)
    return arrays
''', 'no byte went through send'),
    'a split that drops the remainder': ('helpers.split.split_and_load', '''
def split_and_load(data, devices, weights=None):
    checks.batch(data, devices, weights, shard_bounds)
    q = len(data) // len(devices)
    return [data[i * q:(i + 1) * q].as_in_context(d) for i, d in enumerate(devices)]
''', r'1 example\(s\) \(the remainder of 3 ÷ 2\) were dropped'),
    'shard sizes that round every share down': ('helpers.split.shard_sizes', '''
def shard_sizes(n, k, weights=None):
    weights = [1] * k if weights is None else weights
    return [int(n * w / sum(weights)) for w in weights]
''', 'the ties go to the lowest devices'),
    'a step that forgets to divide by the batch size': ('helpers.train.train_batch_scratch', '''
def train_batch_scratch(X, y, device_params, devices, lr):
    checks.replicas(device_params, devices)
    X_shards, y_shards = split_batch(X, y, devices)
    with autograd.record():
        ls = [loss(lenet_scratch(Xs, ps), ys) for Xs, ys, ps in zip(X_shards, y_shards, device_params)]
    for l in ls:
        l.backward()
    for i in range(len(device_params[0])):
        allreduce([ps[i].grad for ps in device_params])
    for ps in device_params:
        sgd(ps, lr, 1)
    return [l.sum() for l in ls]
''', 'divide the summed gradient by the batch size'),
    'a step that never sums the gradients': ('helpers.train.train_batch_scratch', '''
def train_batch_scratch(X, y, device_params, devices, lr):
    checks.replicas(device_params, devices)
    X_shards, y_shards = split_batch(X, y, devices)
    with autograd.record():
        ls = [loss(lenet_scratch(Xs, ps), ys) for Xs, ys, ps in zip(X_shards, y_shards, device_params)]
    for l in ls:
        l.backward()
    for ps in device_params:
        sgd(ps, lr, X.shape[0])
    return [l.sum() for l in ls]
''', 'sum the gradients across devices'),
    'an sgd that forgets to divide by the batch size': ('helpers.train.sgd', '''
def sgd(params, lr, batch_size):
    for p in params:
        p -= lr * p.grad
''', r'divide by the batch size \(7\)'),
    'an sgd that does not update in place': ('helpers.train.sgd', '''
def sgd(params, lr, batch_size):
    for p in params:
        p = p - lr * p.grad / batch_size
''', 'update it in place'),
    'a crash inside the reader\'s code': ('helpers.comm.allreduce_naive', '''
def allreduce_naive(arrays, send=copy_to):
    checks.arrays(arrays)
    for i in range(len(arrays) + 1):
        arrays[0] += send(arrays[i], arrays[0].context)
    return arrays
''', r'raised IndexError: list index out of range\n.*`arrays\[0\] \+= send\(arrays\[i\], arrays\[0\].context\)`'),
}


@pytest.mark.parametrize('wrong', list(WRONG))
def test_wrong_implementations_are_caught_with_a_message_that_names_the_failure(wrong):
    qualname, source, named = WRONG[wrong]
    name = qualname.rpartition('.')[2]
    report = verify(qualname, _define(source, name))
    text = report.text()
    assert not report.ok and report.broken is not None, text
    assert text.startswith(f'✗ {name}') and 'smallest failing case:' in text, text
    assert re.search(named, text), text
    assert 'Traceback' not in text
    print(f'\n{wrong}:\n{text}')


def test_the_smallest_failing_case_comes_first_with_input_expected_and_got():
    qualname, source, _ = WRONG['a ring without its all-gather']
    report = verify(qualname, _define(source, 'allreduce_ring'))
    assert report.case == '2 devices, arrays of shape (2,) (2 elements), float32'
    assert re.search(r'expected: on every device \[.*\] \(the inputs: device 0: \[.*\]; device 1: \[.*\]\)',
                     report.text())
    assert re.search(r'got: +device 0: \[.*\]; device 1: \[.*\]', report.text())
    assert report.broken.replay is not None and report.broken.replay.k == 2   # the figure the notebook shows


def test_checks_are_found_by_lesson_name_and_named_for_it():
    for qualname, check in CHECKS.items():
        name = qualname.rpartition('.')[2]
        assert check.__name__ == f'check_{name}' and getattr(lessoncheck, check.__name__) is check
        assert check.lesson == qualname and check.hint and len(check.hint) <= 100 and check.points >= 1
        assert re.search(r'notebooks? \d\d', check.__doc__)
    with pytest.raises(ValueError, match='must be named check_x'):
        lessoncheck.lesson('helpers.m.x', hint='h')(lambda: [])


def test_a_check_given_something_else_than_a_function_says_so():
    report = verify('helpers.split.split_and_load', 'split_and_load')
    assert 'takes your function, e.g. check_split_and_load(split_and_load)' in report.text()
