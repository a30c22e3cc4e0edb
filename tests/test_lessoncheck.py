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
from tools import lessons

QUALNAMES = sorted(CHECKS)


def _helper(qualname):
    module, _, name = qualname.rpartition('.')
    return getattr(importlib.import_module(module), name)


def broken(qualname, *edits):
    """A wrong implementation made from the lesson's own definition by ``edits``, (old, new) pairs: it
    stays in step with the real one, and fails loudly here if the real one no longer has ``old``."""
    text = lessons.definition(qualname)
    for old, new in edits:
        assert text.count(old) == 1, f'{qualname} no longer contains {old!r} once: update this wrong version'
        text = text.replace(old, new)
    return '\n' + text + '\n'


PREAMBLE = """import time
import numpy as np
import mxnet as mx
from mxnet import autograd, gluon, nd
from helpers import checks, costmodel
from helpers.buckets import plan_buckets
from helpers.comm import copy_to, reduce_scatter, all_gather, allreduce, allreduce_naive, owner_chunk
from helpers.data import ArrayLoader
from helpers.job import DistJobTimeout, Job
from helpers.models import lenet, lenet_scratch
from helpers.precision import all_finite, allreduce_fp16
from helpers.scaling import FRAME_PAYLOAD, RECIPES, WarmUp
from helpers.sharding import forward_backward, views_of
from helpers.split import shard_bounds, split_batch
from helpers.train import sgd, loss, train_batch
"""


def _define(source, name, namespace=None, preamble=PREAMBLE):
    """A function as a reader's notebook cell defines it (the names notebooks 04-13 import)."""
    namespace, cell = {} if namespace is None else namespace, f'/tmp/ipykernel_0/{abs(hash(source))}.py'
    source = preamble + source
    linecache.cache[cell] = (len(source), None, source.splitlines(True), cell)     # as IPython does for a cell
    exec(compile(source, cell, 'exec'), namespace)
    return namespace[name]


def _lesson_as_written(qualname):
    """The lesson's own text, typed into a cell by a reader: a function of its own, with the names of
    its module (the installed lesson itself is refused by its check)."""
    module = importlib.import_module(qualname.rpartition('.')[0])
    return _define(lessons.definition(qualname), qualname.rpartition('.')[2], dict(vars(module)), preamble='')


@pytest.mark.parametrize('qualname', QUALNAMES)
def test_every_check_passes_on_the_lessons_of_helpers(qualname, capsys):
    """The public check, as a notebook calls it: it prints its report (Report.text) and raises nothing.
    Run once: the laws are the suite's most repeated work (verify() is the same run, tested below)."""
    CHECKS[qualname](_lesson_as_written(qualname))
    out = capsys.readouterr().out
    tried = re.match(rf'✓ {qualname.rpartition(".")[2]}: \d+ laws? holds? on (?:all )?(\d+) cases? tried '
                     r'\(([\d.]+) s\)', out)
    assert tried and int(tried[1]) >= 2, out
    with capsys.disabled():
        print(f'\n{qualname}: {tried[1]} cases in {tried[2]} s', end='')


def _stub(source, methods=None):
    """The source of a lesson function, or of the exercise's methods of a lesson class (``methods``,
    default every one), with its body (after the docstring) replaced by ``raise NotImplementedError``,
    as the student edition has it."""
    lines = source.splitlines()
    node = ast.parse(source).body[0]
    functions = ([n for n in node.body if isinstance(n, ast.FunctionDef) and (methods is None or n.name in methods)]
                 if isinstance(node, ast.ClassDef) else [node])
    for f in reversed(functions):
        body = f.body[1:] if ast.get_docstring(f) is not None and len(f.body) > 1 else f.body
        indent = ' ' * body[0].col_offset
        lines[body[0].lineno - 1:f.end_lineno] = [f'{indent}raise NotImplementedError("not written yet")']
    return '\n'.join(lines) + '\n'


@pytest.mark.parametrize('qualname', QUALNAMES)
def test_the_installed_lesson_itself_is_not_the_readers(qualname):
    report = verify(qualname, _helper(qualname))
    assert not report.ok and 'is not yours: this is the series\' own' in report.text(), report.text()


@pytest.mark.parametrize('qualname', QUALNAMES)
def test_a_stub_is_not_written_yet_never_a_traceback(qualname):
    name = qualname.rpartition('.')[2]
    stub = _define(_stub(inspect.getsource(_helper(qualname)), CHECKS[qualname].methods), name)
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
    recipe = _define('''
class WarmUp(mx.lr_scheduler.LRScheduler):
    def __call__(self, num_update):
        raise NotImplementedError
def lr_recipe(recipe, batch_size, warmup_steps, base_lr=0.1, base_batch=64):
    lr = base_lr if recipe == 'fixed' else base_lr * batch_size / base_batch
    if recipe != 'warmup' or warmup_steps == 0 or lr <= base_lr:
        return {'learning_rate': lr}
    return {'learning_rate': lr, 'lr_scheduler': WarmUp(base_lr=lr, warmup_steps=warmup_steps)}
''', 'lr_recipe')
    assert 'it calls WarmUp, which is not written yet' in verify('helpers.scaling.lr_recipe', recipe).text()
    assert 'its method __call__ still raises' in verify('helpers.scaling.WarmUp', recipe.__globals__['WarmUp']).text()


WRONG = {
    'a ring without its all-gather': ('helpers.comm.allreduce_ring', '''
def allreduce_ring(arrays, send=copy_to):
    return reduce_scatter(arrays, send)
''', 'the all-gather is missing'),
    'an off-by-one chunk index in the reduce-scatter': ('helpers.comm.allreduce_ring', broken(
        'helpers.comm.reduce_scatter', ('chunks[(i - s) % k]', 'chunks[(i - s + 1) % k]')) + '''
def allreduce_ring(arrays, send=copy_to):
    return all_gather(reduce_scatter(arrays, send), send)
''', 'the chunk index is off by one'),
    'the same off-by-one, checked as the reduce-scatter': ('helpers.comm.reduce_scatter', broken(
        'helpers.comm.reduce_scatter', ('chunks[(i - s) % k]', 'chunks[(i - s - 1) % k]')), 'the chunk index is off'),
    'a reduce-scatter with one step too many': ('helpers.comm.reduce_scatter', broken(
        'helpers.comm.reduce_scatter', ('for s in range(k - 1):', 'for s in range(k):')),
        r"counts device \d's values 2 times"),
    'an all-gather that sends the wrong chunk': ('helpers.comm.all_gather', broken(
        'helpers.comm.all_gather', ('chunks[(i + 1) % k]', 'chunks[i]')),
        "first differs from the lesson's at step 1"),
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
    'a step that forgets to divide by the batch size': ('helpers.train.train_batch_scratch', broken(
        'helpers.train.train_batch_scratch', ('sgd(ps, lr, X.shape[0])', 'sgd(ps, lr, 1)')),
        'divide the summed gradient by the batch size'),
    'a step that never sums the gradients': ('helpers.train.train_batch_scratch', broken(
        'helpers.train.train_batch_scratch', ('allreduce([ps[i].grad for ps in device_params], send)', 'pass')),
        'sum the gradients across devices'),
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
    # ------------------------------------------------------------------ notebooks 07-13
    'merge buffers dealt out in turn': ('helpers.kvstore.merge_buffer_owners', '''
def merge_buffer_owners(sizes, k):
    k, sizes = checks.whole(k, 'k', 1), [checks.whole(s, 'a key size', 1) for s in sizes]
    return [key % k for key in range(len(sizes))]
''', 'dealt out in turn'),
    'merge buffers placed in key order, not largest first': ('helpers.kvstore.merge_buffer_owners', '''
def merge_buffer_owners(sizes, k):
    k, sizes = checks.whole(k, 'k', 1), [checks.whole(s, 'a key size', 1) for s in sizes]
    load, owners = [0] * k, []
    for size in sizes:
        device = load.index(min(load))
        owners.append(device)
        load[device] += size
    return owners
''', 'place the largest key first'),
    'a pushpull that pulls before it pushes': ('helpers.dist_train.push_then_pull', '''
def push_then_pull(kv):
    def pushpull(key, value, out=None, priority=0):
        kv.pull(key, out=value if out is None else out, priority=priority)
        kv.push(key, value, priority=priority)
    kv.pushpull = pushpull
    return kv
''', 'push first, then pull'),
    'a worker that divides by its own batch only': ('helpers.dist_train.train_worker', '''
def train_worker(kv, devices, X, y, batch_size, steps, lr, epochs, seed=0, on_step=None):
    net = lenet(devices, seed)
    trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': lr}, kvstore=kv)
    batches = ArrayLoader(X, y, batch_size, shuffle=True, seed=seed + kv.rank, last_batch='discard')
    for epoch in range(epochs):
        for _, (X_batch, y_batch) in zip(range(steps), batches):
            losses = train_batch(net, X_batch, y_batch, trainer, devices)
            mx.nd.waitall()
            if on_step:
                on_step(net, losses)
    return net
''', r'went 2 times as far .* rescale_grad 1 / kv.num_workers'),
    'a job loop that stops the job only when it succeeds': ('helpers.job.run_local_job', '''
def run_local_job(command, num_workers=2, num_servers=1, timeout=120, env=None, echo=True, place=None):
    job = Job(command, num_workers, num_servers, timeout, env, echo, place=place)
    while not job.poll():
        if job.expired():
            job.fail(DistJobTimeout, f'the job exceeded its timeout of {timeout:g} s and was stopped')
        time.sleep(0.1)
    job.stop()
    return job.result()
''', r'a process died .* never stopped(.|\n)*call job.stop\(\) in a `finally:` block'),
    'a warm-up that never ends': ('helpers.scaling.WarmUp', '''
class WarmUp(mx.lr_scheduler.LRScheduler):
    def __call__(self, num_update):
        return self.get_warmup_lr(num_update)
''', 'the rate stays at base_lr'),
    'a warm-up ramp that starts from 0': ('helpers.scaling.lr_recipe', '''
def lr_recipe(recipe, batch_size, warmup_steps, base_lr=0.1, base_batch=64):
    if recipe not in RECIPES:
        raise ValueError(f'recipe must be one of {RECIPES}, got {recipe!r}')
    if recipe == 'fixed':
        return {'learning_rate': base_lr}
    lr = base_lr * batch_size / base_batch
    if recipe == 'linear' or warmup_steps == 0 or lr <= base_lr:
        return {'learning_rate': lr}
    return {'learning_rate': lr, 'lr_scheduler': WarmUp(base_lr=lr, warmup_steps=warmup_steps)}
''', 'the ramp starts at base_lr'),
    'an epoch without its last, smaller batch': ('helpers.scaling.epoch_time', '''
def epoch_time(k, n, batch, overhead, per_example, nbytes, alpha, bandwidth):
    steps = n / batch
    talk = costmodel.cost_ring(k, nbytes, alpha, bandwidth)
    return steps * (overhead + batch / k * per_example + talk)
''', r'the last, smaller batch is a step too \(np.ceil\)'),
    'compression that shrinks the pull too': ('helpers.scaling.pushpull_step', '''
def pushpull_step(nbytes, rate, alpha, compression=False):
    sent = nbytes / 16 if compression else nbytes
    return 2 * alpha + 2 * sent / (rate / 8 * FRAME_PAYLOAD)
''', 'shrinks the push only'),
    'a bucket plan that forgets the last partial bucket': ('helpers.buckets.plan_buckets', '''
def plan_buckets(sizes, bucket_bytes, itemsize=4):
    checks.bucket_plan(sizes, bucket_bytes, itemsize)
    buckets, bucket, filled = [], [], 0
    for i in reversed(range(len(sizes))):
        bucket.append((i, filled, filled + sizes[i]))
        filled += sizes[i]
        if filled * itemsize >= bucket_bytes:
            buckets.append(bucket)
            bucket, filled = [], 0
    return buckets
''', r'gradient 0 is in no bucket: keep the last bucket too'),
    'a bucketed allreduce that forgets the last partial bucket': ('helpers.buckets.allreduce_bucketed', '''
def allreduce_bucketed(grads, bucket_bytes, allreduce=allreduce_naive):
    itemsize = checks.buckets(grads, bucket_bytes)
    bucket, filled = [], 0
    for i in reversed(range(len(grads))):
        bucket.append(i)
        filled += grads[i][0].size * itemsize
        if filled >= bucket_bytes:
            flats = [nd.concat(*[grads[j][d].reshape(-1) for j in bucket], dim=0) for d in range(len(grads[0]))]
            allreduce(flats)
            for d, flat in enumerate(flats):
                begin = 0
                for j in bucket:
                    flat[begin:begin + grads[j][d].size].reshape(grads[j][d].shape).copyto(grads[j][d])
                    begin += grads[j][d].size
            bucket, filled = [], 0
    return grads
''', r'the last bucket is missing: sum every bucket of plan_buckets, the last one too'),
    'sending before the backward pass': ('helpers.buckets.backward_and_send', '''
def backward_and_send(losses, groups, wait=False, allreduce=allreduce_naive):
    for arrays in groups:
        allreduce(arrays)
    for l in losses:
        l.backward()
    if wait:
        nd.waitall()
''', 'the allreduces ran before the backward pass'),
    'buckets that autograd never writes into': ('helpers.buckets.bucket_gradients', '''
def bucket_gradients(params, bucket_bytes):
    itemsize = checks.bucket_params(params, bucket_bytes)
    buckets = []
    for plan in plan_buckets([p.list_data()[0].size for p in params], bucket_bytes, itemsize):
        flats = [nd.zeros(plan[-1][2], ctx=x.context, dtype=x.dtype) for x in params[0].list_data()]
        for i, begin, end in plan:
            params[i]._grad = [f[begin:end].reshape(params[i].shape) for f in flats]
        buckets.append(flats)
    return buckets
''', 'backward did not write into the bucket.*mark_variables'),
    'a sharded step that updates the whole array on every device': ('helpers.sharding.train_batch_sharded', '''
def train_batch_sharded(X, y, replicas, devices, updaters, send=copy_to):
    k = checks.flat_replicas(replicas, devices, updaters)
    losses = forward_backward(X, y, [r.params for r in replicas], devices)
    reduce_scatter([r.grads for r in replicas], send)
    for r, update in zip(replicas, updaters):
        update(0, r.grads, r.weights)
    all_gather([r.weights for r in replicas], send)
    return losses
''', r'device 0 updated all 61706 weights: update only its own chunk'),
    'a sharded step that updates the wrong chunk': ('helpers.sharding.train_batch_sharded', '''
def train_batch_sharded(X, y, replicas, devices, updaters, send=copy_to):
    k = checks.flat_replicas(replicas, devices, updaters)
    losses = forward_backward(X, y, [r.params for r in replicas], devices)
    reduce_scatter([r.grads for r in replicas], send)
    chunks = shard_bounds(replicas[0].weights.size, k)
    for i, (r, update) in enumerate(zip(replicas, updaters)):
        b, e = chunks[i]
        update(0, r.grads[b:e], r.weights[b:e])
    all_gather([r.weights for r in replicas], send)
    return losses
''', r'2 devices, batches of 5(.|\n)*chunks \[0, 1\] differ(.|\n)*here device 0: chunk 1'),
    'a float16 allreduce that never copies the sums back': ('helpers.precision.allreduce_fp16', '''
def allreduce_fp16(grads, send=copy_to):
    checks.arrays(grads)
    halves = [g.astype('float16') for g in grads]
    allreduce(halves, send)
    return grads
''', 'nothing was summed.*\\n(.|\\n)*astype makes a copy'),
    'a float16 allreduce that sends float32': ('helpers.precision.allreduce_fp16', '''
def allreduce_fp16(grads, send=copy_to):
    checks.arrays(grads)
    allreduce(grads, send)
    for g in grads:
        g.astype('float16').astype(g.dtype).copyto(g)
    return grads
''', 'the arrays travelled as float32: cast to float16 before the allreduce'),
    'a loss scale whose count survives an overflow': ('helpers.precision.next_scale', '''
def next_scale(scale, updated, good_steps, growth_interval=2000):
    if not updated:
        return scale / 2, good_steps
    good_steps += 1
    return (scale * 2, 0) if good_steps == growth_interval else (scale, good_steps)
''', 'the count of good steps starts again from 0'),
    'loss scaling that never unscales': ('helpers.precision.train_batch_fp16', broken(
        'helpers.precision.train_batch_fp16', ('sgd(ps, lr, scale)', 'sgd(ps, lr, 1)')),
        r'moved 256 times as far .* divide the update by the scale'),
    'loss scaling that never skips an overflowing step': ('helpers.precision.train_batch_fp16', broken(
        'helpers.precision.train_batch_fp16', ('return False  ', 'pass  ')),
        r'the float16 gradients overflow: the step must be skipped(.|\n)*return False'),
    'accumulation that divides by the micro-batch': ('helpers.accumulation.train_batch_accumulated', broken(
        'helpers.accumulation.train_batch_accumulated', ('sgd(ps, lr, n)', 'sgd(ps, lr, X.shape[0])')),
        r'3 micro-batches of 2 on 1 device(.|\n)*moved 3 times as far(.|\n)*not by one micro-batch'),
    'accumulation that communicates every micro-batch': ('helpers.accumulation.train_batch_accumulated', broken(
        'helpers.accumulation.train_batch_accumulated',
        ('        n += X.shape[0]\n'                   # the allreduce loop moved into the micro-batch loop
         '    for i in range(len(device_params[0])):     # one allreduce per parameter, for all m\n'
         '        allreduce(',
         '        n += X.shape[0]\n'
         '        for i in range(len(device_params[0])):\n'
         '            allreduce(')),
        'no communication inside the loop over the 3 micro-batches'),
    'shards that drop the remainder': ('helpers.dist_train.my_shard', '''
def my_shard(X, y, rank, num_workers):
    q = len(X) // num_workers
    begin, end = rank * q, (rank + 1) * q
    return X[begin:end], y[begin:end], (begin, end)
''', r'1 example\(s\) \(the remainder of 10 ÷ 3\) were dropped'),
    'steps of the largest shard': ('helpers.dist_train.steps_per_epoch', '''
def steps_per_epoch(n_train, num_workers, batch_size):
    return -(-n_train // num_workers) // batch_size
''', 'the largest shard'),
    'views that are copies': ('helpers.sharding.views_of', '''
def views_of(flat, params):
    ends = np.cumsum([p.size for p in params]).tolist()
    return [flat[e - p.size:e].reshape(p.shape).copy() for p, e in zip(params, ends)]
''', 'must share the flat array.s memory'),
    'a flat replica left on the first device': ('helpers.sharding.flat_replica', '''
def flat_replica(params, device):
    flat = nd.concat(*[p.reshape(-1) for p in params], dim=0)
    return flat, views_of(flat, params)
''', r'on the device(.|\n)*got: +shape \(10,\) on cpu\(0\)(.|\n)*copyto\(device\)'),
    'a flat gradient autograd knows nothing of': ('helpers.sharding.attach_flat_grad', '''
def attach_flat_grad(flat, views):
    return nd.zeros_like(flat)
''', 'autograd.mark_variables'),
    'a forward_backward that ignores the forward given': ('helpers.sharding.forward_backward', '''
def forward_backward(X, y, device_params, devices, forward=lenet_scratch):
    X_shards, y_shards = split_batch(X, y, devices)
    with autograd.record():
        ls = [loss(lenet_scratch(Xs, ps), ys) for Xs, ys, ps in zip(X_shards, y_shards, device_params)]
    for l in ls:
        l.backward()
    return [l.sum() for l in ls]
''', 'call forward'),
    'a replicated step that does not pass send on': ('helpers.sharding.train_batch_replicated', '''
def train_batch_replicated(X, y, replicas, devices, updaters, sum_grads=allreduce, send=copy_to):
    checks.flat_replicas(replicas, devices, updaters)
    losses = forward_backward(X, y, [r.params for r in replicas], devices)
    sum_grads([r.grads for r in replicas])
    for r, update in zip(replicas, updaters):
        update(0, r.grads, r.weights)
    return losses
''', 'passing send on'),
    'a checkpoint without the optimizer state': ('helpers.checkpoint.save_checkpoint', '''
def save_checkpoint(prefix, net, trainer, device):
    nd.save(f'{prefix}.params', [p.data(device) for p in net.collect_params().values()])
''', r"got: +\['ckpt.params'\](.|\n)*trainer.save_states"),
    'a resume that forgets the optimizer state': ('helpers.checkpoint.load_checkpoint', '''
def load_checkpoint(prefix, net, trainer):
    for p, value in zip(net.collect_params().values(), nd.load(f'{prefix}.params')):
        p.set_data(value)
''', r'the weights came back, the optimizer.s state did not(.|\n)*trainer.load_states'),
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
