"""Training on k devices: the step by hand (notebook 05), the step with Gluon (notebook 06), parallel
evaluation, and the epoch loop that both share (used again in notebooks 07-09).

The lesson functions -- :func:`sgd`, :func:`train_batch_scratch`, :func:`train_batch`,
:func:`evaluate_accuracy` -- are the text of notebook 05's and 06's lesson cells (kept identical by
``tools.lessons``). :func:`train_scratch` and :func:`train` run them for a number of epochs,
print one line per epoch and return the history: a dict of per-epoch lists ``epoch``, ``loss``
(mean training loss), ``test_acc`` and ``seconds`` (training time of the epoch, evaluation
excluded). Plot it with :func:`helpers.plot.history`.

The steps return the per-device loss sums *as NDArrays*, on their devices, without reading them:
reading a number (``float(...)``) waits for the engine, and doing that after every batch would keep
MXNet from queueing the next batch while the devices compute. The loop adds them up on the devices
and reads once per epoch.
"""
import time

import numpy as np
from mxnet import autograd, gluon, nd

from helpers import checks
from helpers.comm import allreduce, copy_to
from helpers.models import lenet_scratch, replicate_params
from helpers.split import split_batch

__all__ = ['loss', 'sgd', 'train_batch_scratch', 'train_batch', 'evaluate_accuracy', 'scratch_net',
           'train_scratch', 'train', 'max_gap']

loss = gluon.loss.SoftmaxCrossEntropyLoss()   # one value per example; backward() sums them


def sgd(params, lr, batch_size):
    """Minibatch SGD, in place, on the device where each parameter lives (notebook 05)."""
    checks.update(params, lr, batch_size)
    for p in params:
        p -= lr * p.grad / batch_size


def train_batch_scratch(X, y, device_params, devices, lr, send=copy_to):
    """One data-parallel SGD step, all by hand: split, forward/backward, allreduce (every message
    through ``send``), update (notebook 05). Returns each device's loss sum, not read yet."""
    checks.replicas(device_params, devices)
    X_shards, y_shards = split_batch(X, y, devices)
    with autograd.record():                    # forward on every device, on its own shard
        ls = [loss(lenet_scratch(Xs, ps), ys) for Xs, ys, ps in zip(X_shards, y_shards, device_params)]
    for l in ls:                               # backward on every device
        l.backward()
    for i in range(len(device_params[0])):     # sum each parameter's gradient across devices
        allreduce([ps[i].grad for ps in device_params], send)
    for ps in device_params:                   # the same update on every device
        sgd(ps, lr, X.shape[0])
    return [l.sum() for l in ls]


def train_batch(net, X, y, trainer, devices, weights=None):
    """One data-parallel step with Gluon: split, forward/backward on every device, then
    ``trainer.step`` sums the gradients and updates every copy (notebook 06). Returns each
    device's loss sum, not read yet."""
    checks.gluon_step(net, trainer)
    X_shards, y_shards = split_batch(X, y, devices, weights)
    with autograd.record():
        ls = [loss(net(Xs), ys) for Xs, ys in zip(X_shards, y_shards)]
    for l in ls:
        l.backward()
    trainer.step(X.shape[0])                   # divide by the whole batch, not the shard
    return [l.sum() for l in ls]


def evaluate_accuracy(net, data_iter, devices):
    """Accuracy of ``net`` on ``data_iter``, every batch split across ``devices``; ``net`` runs on
    the device of its input (notebook 05)."""
    batches = checks.evaluation(net, data_iter, devices)
    correct, n = [nd.zeros(1, ctx=d) for d in devices], 0
    for X, y in batches:
        for i, (Xs, ys) in enumerate(zip(*split_batch(X, y, devices))):
            correct[i] += (net(Xs).argmax(axis=1) == ys.astype('float32')).sum()
        n += len(y)
    return sum(c.asscalar() for c in correct) / n


def scratch_net(device_params, devices, forward=None):
    """The scratch LeNet as a function of a shard: it runs ``forward`` (default
    :func:`helpers.models.lenet_scratch`) with the replica on the shard's device (notebook 05: what
    :func:`evaluate_accuracy` needs)."""
    checks.replicas(device_params, devices)
    forward = lenet_scratch if forward is None else checks.function(forward, 'forward')
    replica, forward = dict(zip(devices, device_params)), forward or lenet_scratch
    return lambda X: forward(X, replica[X.context])


def max_gap(a, b):
    """Largest ``|a - b|`` over two lists of arrays, wherever they live: how far apart two models'
    weights are (notebooks 05, 06: 0.0 means equal to the last bit)."""
    checks.same_arrays(a, b)
    return max(float(np.abs(p.asnumpy() - q.asnumpy()).max()) for p, q in zip(a, b))


def _fit(step, evaluate, train_iter, num_epochs, devices, progress):
    num_epochs = checks.whole(num_epochs, 'num_epochs', 1)
    history = {'epoch': [], 'loss': [], 'test_acc': [], 'seconds': []}
    for epoch in range(1, num_epochs + 1):
        start = time.perf_counter()
        sums, n = [nd.zeros(1, ctx=d) for d in devices], 0
        for X, y in train_iter:
            for i, s in enumerate(step(X, y, epoch)):
                sums[i] += s
            n += len(y)
        # float(): Python numbers in the history, in float64 on NumPy 1 and 2 alike (NumPy 2 would
        # divide a float32 by n in float32, NEP 50, and JSON cannot save a NumPy float32)
        train_loss = sum(float(s.asscalar()) for s in sums) / n       # waits for the devices
        seconds = time.perf_counter() - start
        test_acc = float(evaluate())
        for key, value in zip(history, (epoch, train_loss, test_acc, seconds)):
            history[key].append(value)
        if progress:
            print(f'epoch {epoch}/{num_epochs}: loss {train_loss:.3f}, test acc {test_acc:.3f}, '
                  f'{seconds:.1f} s', flush=True)
    return history


def train_scratch(params, train_iter, test_iter, devices, lr, num_epochs, progress=True, step=None,
                  evaluate=None, forward=None):
    """Train the scratch LeNet on ``devices`` (notebook 05): copy ``params`` to every device, run
    ``step`` (default :func:`train_batch_scratch`) on every batch for ``num_epochs`` epochs and
    ``evaluate`` (default :func:`evaluate_accuracy`) after each, on the network ``forward``
    (default :func:`helpers.models.lenet_scratch`). ``lr``: a number, or one per epoch. A notebook
    passes its own lesson cells as ``step``, ``evaluate`` and ``forward``, so that editing them
    changes the run. Returns ``(device_params, history)``; ``params`` itself is not modified."""
    devices = checks.devices(devices)
    num_epochs = checks.whole(num_epochs, 'num_epochs', 1)
    params = checks.parameters(params)
    train_iter, test_iter = checks.loop(train_iter, test_iter, progress, step=step, evaluate=evaluate, forward=forward)
    lrs = [checks.positive(v, 'lr') for v in (lr if isinstance(lr, (list, tuple)) else [lr] * num_epochs)]
    if len(lrs) != num_epochs:
        raise ValueError(f'lr: got {len(lrs)} learning rates for {num_epochs} epochs: need one per epoch')
    step, evaluate = step or train_batch_scratch, evaluate or evaluate_accuracy
    device_params = [replicate_params(params, d) for d in devices]
    history = _fit(lambda X, y, epoch: step(X, y, device_params, devices, lrs[epoch - 1]),
                   lambda: evaluate(scratch_net(device_params, devices, forward), test_iter, devices),
                   train_iter, num_epochs, devices, progress)
    return device_params, history


def train(net, train_iter, test_iter, devices, trainer, num_epochs, progress=True, step=None):
    """Train a Gluon ``net`` (initialised on every device) with ``trainer``, running ``step``
    (default :func:`train_batch`; notebook 06 passes its lesson cell) on every batch and
    :func:`evaluate_accuracy` after each epoch (notebook 06; used in 07-09). Returns the history."""
    devices = checks.devices(devices)
    checks.gluon_step(net, trainer)
    train_iter, test_iter = checks.loop(train_iter, test_iter, progress, step=step)
    for name, p in net.collect_params().items():
        missing = [d for d in devices if d not in p.list_ctx()]
        if missing:
            raise ValueError(f'parameter {name} lives on {p.list_ctx()}, not on {missing}: '
                             'initialise the net on every device (e.g. lenet(devices))')
    step = step or train_batch
    return _fit(lambda X, y, epoch: step(net, X, y, trainer, devices),
                lambda: evaluate_accuracy(net, test_iter, devices), train_iter, num_epochs, devices,
                progress)
