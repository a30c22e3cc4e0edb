"""The laws and checks of :mod:`helpers.train` (notebooks 05, 06): minibatch SGD, the step on k devices
as one step on the whole batch with replicas identical to the last bit, the accuracy on k devices, and
Gluon's step like one device's. ``tests/test_train.py`` calls the same laws.
"""
import numpy as np
from mxnet import autograd, gluon, nd

from helpers.lessoncheck.machinery import Broken, CPU, Law, _fmt, _n, lesson, tiny_data

__all__ = ['check_sgd', 'check_train_batch_scratch', 'check_evaluate_accuracy', 'check_train_batch', 'SGD_CASES',
           'law_sgd_formula', 'STEP_CASES', 'law_step_is_sgd_on_the_batch', 'law_replicas_stay_identical',
           'law_accuracy_on_k_devices', 'GLUON_STEP_CASES', 'law_gluon_step_like_one_device']


SGD_CASES = [dict(lr=lr, batch_size=b, seed=s) for s, (lr, b) in
             enumerate(((0.1, 1), (0.1, 7), (1.0, 64), (1e-4, 512), (10.0, 3), (0.5, 256)))]


_SGD_PARAMS = (((3, 4), 1), ((5,), 2), ((2, 2, 2), 0))      # shapes and devices: several, each on its own


def law_sgd_formula(sgd, lr, batch_size, seed):
    """Notebook 05: ``sgd(params, lr, batch_size)`` sets every parameter of the list (here three, of
    different shapes, on different devices) to w - lr * grad / batch_size, in place (the same array, on
    its own device)."""
    rng = np.random.default_rng(seed)
    ws = [rng.normal(size=shape) for shape, _ in _SGD_PARAMS]
    gs = [rng.normal(size=shape) for shape, _ in _SGD_PARAMS]
    params = []
    for w, g, (_, d) in zip(ws, gs, _SGD_PARAMS):
        p = nd.array(w, dtype='float64', ctx=CPU[d])
        p.attach_grad()
        p.grad[:] = nd.array(g, dtype='float64', ctx=CPU[d])
        params.append(p)
    given = list(params)
    sgd(params, lr, batch_size)
    if [id(p) for p in params] != [id(p) for p in given]:
        raise Broken('sgd must update the parameters in place', why='write p -= ..., not p = p - ...')
    for i, (p, w, g, (shape, d)) in enumerate(zip(params, ws, gs, _SGD_PARAMS)):
        want = w - lr * g / batch_size
        got = p.asnumpy()
        if p.context != CPU[d]:
            raise Broken(f'parameter {i} must stay on {CPU[d]}', got=str(p.context), why='update it in place')
        if np.allclose(got, want, rtol=1e-12, atol=1e-12):
            continue
        step, need = (got - w).reshape(-1), (want - w).reshape(-1)
        ratio = float(np.dot(step, need) / np.dot(need, need))
        untouched = [j for j, (q, v) in enumerate(zip(params, ws)) if np.array_equal(q.asnumpy(), v)]
        why = (f'parameter {i} did not change, while parameter{"s" * (i > 1)} {", ".join(map(str, range(i)))} '
               f'did: update every parameter of the list (a return inside the loop stops after the first)'
               if i > 0 and not step.any() and not set(range(i)) & set(untouched) else
               'the parameter did not change: update it in place (p -= ...; `p = p - ...` only renames p)'
               if not step.any() else
               f'the step is {ratio:.4g} times the right one: divide by the batch size ({batch_size})'
               if np.isclose(ratio, batch_size) and batch_size != 1 else
               'the step goes up the gradient: subtract it' if np.isclose(ratio, -1) else
               f'the step is {ratio:.4g} times the right one')
        raise Broken(f'parameter {i} (shape {shape}, on {CPU[d]}) after sgd of {len(params)} parameters',
                     expected=_fmt(want), got=_fmt(got), why=why)


STEP_CASES = [dict(k=k, n=n) for k, n in ((1, 9), (2, 9), (3, 10), (4, 33), (8, 33))]


def _reference_step(params, X, y, lr):
    """One SGD step of the whole batch's mean loss on one device (autograd, no splitting)."""
    from helpers.models import lenet_scratch
    from helpers.train import loss
    ws = [p.copy() for p in params]
    for w in ws:
        w.attach_grad()
    with autograd.record():
        total = loss(lenet_scratch(X, ws), y).sum()
    total.backward()
    return [(w - lr * w.grad / X.shape[0]).asnumpy() for w in ws], total.asscalar()


def law_step_is_sgd_on_the_batch(train_batch_scratch, k, n, lr=0.1, seed=0):
    """Notebook 05: one step on k devices is one SGD step on the whole batch's mean loss, computed on
    one device: every replica ends with w - lr * (gradient of the summed loss) / batch size (float64,
    to 1e-10); it returns each device's loss sum, on that device, adding up to the batch's."""
    from helpers.models import init_lenet_params, replicate_params
    params = [p.astype('float64') for p in init_lenet_params(seed)]
    Xn, yn = tiny_data(n, seed)
    X, y = nd.array(Xn, dtype='float64'), nd.array(yn, dtype='int32')
    want, total = _reference_step(params, X, y, lr)
    reps = [replicate_params(params, d) for d in CPU[:k]]
    sums = train_batch_scratch(X, y, reps, CPU[:k], lr)
    for i, replica in enumerate(reps):
        gap = max(float(np.abs(p.asnumpy() - w).max()) for p, w in zip(replica, want))
        if gap > 1e-10:
            w0 = params[0].asnumpy().reshape(-1)
            step, need = replica[0].asnumpy().reshape(-1) - w0, want[0].reshape(-1) - w0
            ratio = float(np.dot(step, need) / np.dot(need, need))
            from helpers.split import shard_sizes
            shards = shard_sizes(n, k)
            apart = k > 1 and any(max(float(np.abs(p.asnumpy() - q.asnumpy()).max()) for p, q in zip(r, reps[0])) > 0
                                  for r in reps[1:])
            power = next((j for j in (1, 2) if k > 1 and np.isclose(ratio, k ** -j, rtol=1e-3)), None)
            why = (f'the weights moved {ratio:.3g} times as far as one SGD step: divide the summed gradient by the '
                   f'batch size ({n})' if np.isclose(ratio, n, rtol=1e-3) and n > 1 else
                   f'the weights moved {ratio:.3g} times as far: divide by the whole batch ({n}), not a shard'
                   if any(np.isclose(ratio, n / s, rtol=1e-3) for s in shards) and k > 1 else
                   'the replicas differ from each other: each device used only its own shard\'s gradient; sum the '
                   'gradients across devices (allreduce) before the update' if apart else
                   f'the weights moved 1/{k ** power} of one SGD step: the allreduce already makes the sum of the '
                   f'whole batch\'s gradient, so divide by the batch size ({n}) once, not by the number of devices '
                   f'({k}){" too" if power == 1 else " twice"}' if power else
                   f'the step is {ratio:.3g} times the right one' if np.isfinite(ratio) else None)
            raise Broken(f'replica {i} after one step differs from one SGD step on the whole batch by {gap:.2g}',
                         expected=f'fc3.bias = {_fmt(want[-1])}', got=f'fc3.bias = {_fmt(replica[-1].asnumpy())}',
                         why=why)
    if not isinstance(sums, (list, tuple)) or len(sums) != k or [s.context for s in sums] != CPU[:k]:
        raise Broken('the step returns one loss sum per device, on that device',
                     got=str([getattr(s, 'context', s) for s in sums]) if isinstance(sums, (list, tuple))
                     else repr(sums))
    got = sum(float(s.asscalar()) for s in sums)
    if not np.isclose(got, total, rtol=1e-8):
        raise Broken('the loss sums add up to the loss of the whole batch', expected=f'{total:.6f}', got=f'{got:.6f}',
                     why='return [l.sum() for l in ls]: the sum of each device\'s per-example losses')


def law_replicas_stay_identical(train_batch_scratch, k, steps=2, lr=0.1):
    """Notebook 05: after several float32 steps the k replicas and their gradients are identical to
    the last bit."""
    from helpers.models import init_lenet_params, replicate_params
    reps = [replicate_params(init_lenet_params(0), d) for d in CPU[:k]]
    Xn, yn = tiny_data(33 * steps, 1)
    for s in range(steps):
        train_batch_scratch(nd.array(Xn[33 * s:33 * (s + 1)]), nd.array(yn[33 * s:33 * (s + 1)], dtype='int32'),
                            reps, CPU[:k], lr)
    for i, replica in enumerate(reps[1:], 1):
        for j, (p, q) in enumerate(zip(replica, reps[0])):
            for what, a, b in (('weights', p, q), ('gradient', p.grad, q.grad)):
                if not np.array_equal(a.asnumpy(), b.asnumpy()):
                    raise Broken(f'replica {i} and replica 0 differ in parameter {j}\'s {what} after {steps} steps',
                                 expected='identical bits', got=f'largest difference '
                                 f'{float(np.abs(a.asnumpy() - b.asnumpy()).max()):.2g}',
                                 why='every device must apply the same update to the same summed gradient')


def law_accuracy_on_k_devices(evaluate_accuracy, k, n=70, batch_size=32):
    """Notebook 05: the accuracy over all batches (the last one smaller) on k devices equals the
    accuracy computed on one device, with NumPy; every batch is split over the k devices
    (``split_batch``), each shard evaluated on its own device."""
    from helpers.data import ArrayLoader
    from helpers.split import shard_sizes
    Xn, yn = tiny_data(n, 2)
    W = np.random.default_rng(3).normal(size=(784, 10)).astype(np.float32)
    calls = []

    def net(X):
        calls.append((X.context, X.shape[0]))
        return nd.dot(X.reshape((X.shape[0], -1)), nd.array(W, ctx=X.context))
    want = float(((Xn.reshape(n, -1) @ W).argmax(axis=1) == yn).mean())
    got = evaluate_accuracy(net, ArrayLoader(Xn, yn, batch_size), CPU[:k])
    if not np.isclose(got, want, rtol=0, atol=1e-9):
        raise Broken(f'{n} examples in batches of {batch_size} on {k} device{"s" * (k > 1)}', expected=f'{want:.6f}',
                     got=f'{got!r}', why='count the correct predictions of every shard of every batch, and divide '
                                         'by the number of examples seen')
    batches = [min(batch_size, n - b) for b in range(0, n, batch_size)]
    shards = [(CPU[i], s) for b in batches for i, s in enumerate(shard_sizes(b, k))]
    if sorted(calls, key=str) != sorted(shards, key=str):
        on = sorted({str(c) for c, _ in calls})
        raise Broken(f'where the net ran: {n} examples in batches of {batch_size} on {_n(k, "device")}',
                     expected=f'every batch split over {", ".join(map(str, CPU[:k]))}: shards of '
                              f'{[s for _, s in shards]} examples', got=f'the net ran on {", ".join(on)}, on '
                                                                      f'{[m for _, m in calls]} examples',
                     why=('everything ran on one device: split each batch over the devices (split_batch) and '
                          'evaluate each shard on its own device' if len(on) == 1 and k > 1 else
                          'split each batch with split_batch(X, y, devices) and run the net once per shard'))


GLUON_STEP_CASES = [dict(k=k, n=n) for k, n in ((2, 9), (3, 33))]


def law_gluon_step_like_one_device(train_batch, k, n, steps=2):
    """Notebook 06: two steps of ``train_batch`` on k devices take the step one device takes (to 1e-5),
    every device's copy stays identical, and the Trainer divides by the whole batch; each device runs
    the forward pass on its own shard of the batch (``split_batch``), once per step."""
    from helpers.models import lenet
    from helpers.split import shard_sizes
    Xn, yn = tiny_data(n, 4)
    X, y = nd.array(Xn), nd.array(yn, dtype='int32')
    nets, trainers, calls = {}, {}, []
    for devices in (CPU[:1], CPU[:k]):
        net = lenet(devices, seed=0)
        if len(devices) == k:
            net.register_forward_hook(lambda block, inputs, out: calls.append((inputs[0].context, inputs[0].shape[0])))
        trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.1})
        for _ in range(steps):
            train_batch(net, X, y, trainer, devices)
        nets[len(devices)], trainers[len(devices)] = net, trainer
    split = sorted(((CPU[i], s) for _ in range(steps) for i, s in enumerate(shard_sizes(n, k))), key=str)
    if sorted(calls, key=str) != split:
        on = sorted({str(c) for c, _ in calls})
        raise Broken(f'where the forward pass ran in {steps} steps on {k} devices',
                     expected=f'each step: shards of {shard_sizes(n, k)} examples on {", ".join(map(str, CPU[:k]))}',
                     got=f'net ran on {", ".join(on) or "no device"}, on {[m for _, m in calls]} examples',
                     why=('the whole batch ran on one device: split it (split_batch(X, y, devices)) and run net on '
                          'every shard, each on its own device' if len(on) == 1 else
                          'split the batch with split_batch(X, y, devices) and run net once per shard'))
    rescale = trainers[k]._optimizer.rescale_grad
    if not np.isclose(rescale, 1 / n):
        raise Broken('trainer.step must divide by the whole batch', expected=f'rescale_grad 1/{n}',
                     got=f'rescale_grad {rescale:.4g} (1/{1 / rescale:.4g})', why='call trainer.step(X.shape[0])')
    for (name, p1), p2 in zip(nets[1].collect_params().items(), nets[k].collect_params().values()):
        copies = [p2.data(d).asnumpy() for d in CPU[:k]]
        if any(not np.array_equal(c, copies[0]) for c in copies):
            raise Broken(f'{name}: the copies on the {k} devices differ', expected='identical bits')
        if not np.allclose(p1.data(CPU[0]).asnumpy(), copies[0], rtol=0, atol=1e-5):
            raise Broken(f'{name} after {steps} steps on {k} devices differs from 1 device',
                         why='forward and backward on every shard, then one trainer.step')


@lesson('helpers.train.sgd', hint='in place, for every parameter: w - lr * grad / batch_size')
def check_sgd():
    """Check your ``sgd(params, lr, batch_size)`` (notebook 05): w - lr * grad / batch_size, in place."""
    return [Law('every parameter of the list becomes w - lr * grad / batch_size, in place, on its own device',
                law_sgd_formula,
                SGD_CASES, lambda lr, batch_size, seed: f'lr = {lr}, batch_size = {batch_size}')]


@lesson('helpers.train.train_batch_scratch', hint='split; forward/backward per device; allreduce each gradient; sgd')
def check_train_batch_scratch():
    """Check your ``train_batch_scratch(X, y, device_params, devices, lr)`` (notebook 05): one step on k
    devices is one SGD step on the whole batch; the replicas stay identical."""
    return [
        Law('one step on k devices = one SGD step on the whole batch\'s mean loss on one device (float64); '
            'it returns every device\'s loss sum', law_step_is_sgd_on_the_batch, STEP_CASES,
            lambda k, n: f'a batch of {n} images on {k} device{"s" * (k > 1)}'),
        Law('the replicas and their gradients stay identical to the last bit (float32, 2 steps)',
            law_replicas_stay_identical, [dict(k=k) for k in (2, 3)], lambda k: f'{k} devices'),
    ]


@lesson('helpers.train.evaluate_accuracy', hint='count correct predictions per device; add once at the end; divide')
def check_evaluate_accuracy():
    """Check your ``evaluate_accuracy(net, data_iter, devices)`` (notebook 05) against NumPy."""
    return [Law('the accuracy of all batches (the last one smaller) on k devices equals NumPy\'s; every batch is '
                'split over the devices',
                law_accuracy_on_k_devices, [dict(k=k) for k in (1, 2, 3, 4)], lambda k: f'{k} devices')]


@lesson('helpers.train.train_batch', hint='split; forward/backward per device under autograd.record(); trainer.step')
def check_train_batch():
    """Check your ``train_batch(net, X, y, trainer, devices)`` (notebook 06): k devices take the step of one."""
    return [Law('k devices take the step one device takes, each running its own shard; the copies stay identical, '
                'step divides by the batch',
                law_gluon_step_like_one_device, GLUON_STEP_CASES, lambda k, n: f'a batch of {n} on {k} devices')]
