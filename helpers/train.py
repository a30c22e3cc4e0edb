"""Training and evaluating on k devices: the by-hand step of notebook 05 and the Gluon loop of 06.

- :func:`sgd`, :func:`train_batch_scratch`, :func:`train_scratch` -- LeNet trained entirely by
  hand (notebook 05): replicas of the parameters, one forward/backward per device, gradients summed
  with our own :func:`helpers.comm.allreduce`, the same SGD update on every device;
- :func:`train_batch`, :func:`train` -- the same with Gluon: ``Trainer.step`` does the reduction
  and the update (notebook 06; used again in 07 and 08);
- :func:`evaluate_accuracy` -- parallel evaluation: every batch is split across the devices;
- :func:`plot_history` -- the training curves, as a PNG figure.

Both loops print one short line per epoch while they run (``progress=True``) and return a history:
a dict of per-epoch lists ``epoch, loss, train_acc, test_acc, seconds`` (``seconds``: training
time of the epoch, evaluation excluded).

Metrics are summed *on the devices* as NDArrays and read back once per epoch: reading a number
(``float(...)``) waits for the engine, and doing that after every batch would stop MXNet from
preparing the next batch while the devices compute.

Bad input gives clear errors before any work is done: a batch with fewer examples than devices,
a learning rate that is not a positive number, parameters that do not live on the devices the
data is sent to.
"""
import math
import numbers

import mxnet as mx
from mxnet import autograd, gluon, nd
from d2l import mxnet as d2l

from helpers.comm import allreduce
from helpers.models import lenet_scratch, replicate_params
from helpers.split import split_batch

__all__ = ['check_devices', 'check_lr', 'check_batch', 'check_params_on', 'sgd',
           'train_batch_scratch', 'train_scratch', 'train_batch', 'evaluate_accuracy', 'train',
           'plot_history']


# ---------------------------------------------------------------- checks (clear errors early)

def check_devices(devices):
    """``devices`` as a non-empty list of ``mx.Context`` without repeats, else ``ValueError``/``TypeError``."""
    if isinstance(devices, mx.Context):
        raise TypeError(f'devices must be a list of contexts, e.g. [{devices}], got the single context {devices}')
    try:
        devices = list(devices)
    except TypeError:
        raise TypeError(f'devices must be a list of contexts, got {devices!r}') from None
    if not devices:
        raise ValueError('devices is empty: need at least one device')
    for d in devices:
        if not isinstance(d, mx.Context):
            raise TypeError(f'devices must be mx.Context objects such as mx.cpu(0), got {d!r}')
    if len(set(devices)) != len(devices):
        raise ValueError(f'devices must be distinct, got {devices}')
    return devices


def check_lr(lr):
    """``float(lr)`` if ``lr`` is a finite positive number; ``TypeError`` / ``ValueError`` otherwise."""
    if isinstance(lr, bool) or not isinstance(lr, numbers.Real):
        raise TypeError(f'the learning rate must be a number, got {lr!r} ({type(lr).__name__})')
    if not (math.isfinite(lr) and lr > 0):
        raise ValueError(f'the learning rate must be a positive finite number, got {lr!r}')
    return float(lr)


def check_batch(X, devices):
    """``ValueError`` if the batch ``X`` has fewer examples than there are devices."""
    n, k = X.shape[0], len(devices)
    if n < k:
        raise ValueError(f'a batch of {n} example(s) cannot be split across {k} devices: every device '
                         f'needs at least one example (use a batch size >= {k} or fewer devices)')


def check_params_on(params, devices):
    """``ValueError`` unless every parameter lives on every device the data will be sent to.

    ``params``: a Gluon ``Block`` (its ``collect_params()``), a ``ParameterDict``, or -- for the
    scratch model -- a list with one list of NDArrays per device, ``params[i]`` on ``devices[i]``.
    """
    if isinstance(params, gluon.Block):
        params = params.collect_params()
    if isinstance(params, gluon.ParameterDict):
        for name, p in params.items():
            try:
                ctxs = p.list_ctx()
            except RuntimeError as e:
                raise ValueError(f'parameter {name} is not initialised: call net.initialize(ctx=devices) '
                                 f'first ({e})') from None
            missing = [d for d in devices if d not in ctxs]
            if missing:
                raise ValueError(f'parameter {name} lives on {ctxs} but the data goes to {devices}: '
                                 f'nothing on {missing}. Initialise with net.initialize(ctx=devices) or '
                                 f'move it with net.collect_params().reset_ctx(devices)')
        return
    params = list(params)
    if len(params) != len(devices):
        raise ValueError(f'got parameters for {len(params)} device(s) but {len(devices)} device(s): '
                         f'need one replica per device')
    for i, (replica, device) in enumerate(zip(params, devices)):
        for j, p in enumerate(replica):
            if not isinstance(p, nd.NDArray):
                raise TypeError(f'parameter {j} of replica {i} is a {type(p).__name__}, not an NDArray')
            if p.context != device:
                raise ValueError(f'parameter {j} of replica {i} lives on {p.context}, but replica {i}\'s '
                                 f'data goes to {device}: replicate the parameters to each device first')


# ---------------------------------------------------------------- notebook 05: all by hand

def sgd(params, lr, batch_size):
    """Minibatch SGD, in place: ``param -= lr * grad / batch_size`` (the gradient is of the loss
    *summed* over the batch). Runs on the device where ``param`` lives (notebook 05)."""
    for param in params:
        param[:] = param - lr * param.grad / batch_size


def _step_metrics(ls, y_hats, y_shards):
    """Per device, an NDArray ``[loss sum, correct predictions]`` (still on that device)."""
    return [nd.concat(l.sum(), (y_hat.argmax(axis=1) == y.astype(y_hat.dtype)).sum(), dim=0)
            for l, y_hat, y in zip(ls, y_hats, y_shards)]


def train_batch_scratch(X, y, device_params, devices, lr, forward=lenet_scratch, loss=None):
    """One data-parallel SGD step, entirely by hand (notebook 05).

    1. split the batch: one shard of ``X`` and ``y`` per device;
    2. on every device, forward and backward on its shard with its own replica of the parameters;
    3. sum each parameter's gradients across the devices with our ``allreduce``
       (afterwards every device holds the gradient of the whole batch);
    4. apply the same SGD update on every device, so the replicas stay identical.

    Returns, per device, an NDArray ``[loss sum, correct predictions]`` of its shard (not read yet).
    """
    check_batch(X, devices)
    check_params_on(device_params, devices)
    loss = loss or gluon.loss.SoftmaxCrossEntropyLoss()
    X_shards, y_shards = split_batch(X, y, devices)
    with autograd.record():                      # forward on every device
        y_hats = [forward(X_shard, params) for X_shard, params in zip(X_shards, device_params)]
        ls = [loss(y_hat, y_shard) for y_hat, y_shard in zip(y_hats, y_shards)]
    for l in ls:                                 # backward on every device
        l.backward()
    for i in range(len(device_params[0])):       # sum the gradients of parameter i across devices
        allreduce([params[i].grad for params in device_params])
    for params in device_params:                 # the same update on every device
        sgd(params, lr, X.shape[0])
    return _step_metrics(ls, y_hats, y_shards)


# ---------------------------------------------------------------- notebook 06: with Gluon

def train_batch(net, X, y, loss, trainer, devices, weights=None):
    """One data-parallel step with Gluon (notebook 06): split, forward/backward on every device,
    then ``trainer.step`` sums the gradients across devices and updates every copy.

    ``weights`` splits the batch in proportion to them, for devices of unequal speed (notebook 07;
    the weighted split of notebook 03). ``trainer.step`` is told the whole batch size either way:
    the summed gradient is that of the whole batch, so the split changes where the work is done,
    not the result.

    Returns, per device, an NDArray ``[loss sum, correct predictions]`` of its shard (not read yet).
    """
    check_batch(X, devices)
    check_params_on(net, devices)
    X_shards, y_shards = split_batch(X, y, devices, weights=weights)
    with autograd.record():
        y_hats = [net(X_shard) for X_shard in X_shards]
        ls = [loss(y_hat, y_shard) for y_hat, y_shard in zip(y_hats, y_shards)]
    for l in ls:
        l.backward()
    trainer.step(X.shape[0])
    return _step_metrics(ls, y_hats, y_shards)


def evaluate_accuracy(net, data_iter, devices):
    """Accuracy of ``net`` on ``data_iter``, every batch split across ``devices`` (notebooks 05, 06).

    ``net``: a Gluon block whose parameters live on every device, or a list of callables, one per
    device (``net[i](X_shard)`` runs on ``devices[i]``; used for the scratch LeNet). A final batch
    smaller than the number of devices is simply spread over fewer devices.
    """
    devices = check_devices(devices)
    if isinstance(net, gluon.Block):
        check_params_on(net, devices)
        nets = [net] * len(devices)
    else:
        nets = list(net)
        if len(nets) != len(devices) or not all(callable(f) for f in nets):
            raise TypeError('net must be a Gluon Block or a list of callables, one per device')
    correct = [nd.zeros((1,), ctx=d) for d in devices]
    n = 0
    for X, y in data_iter:
        k = min(len(devices), X.shape[0])
        X_shards, y_shards = split_batch(X, y, devices[:k])
        for i, (X_shard, y_shard) in enumerate(zip(X_shards, y_shards)):
            y_hat = nets[i](X_shard)
            correct[i] += (y_hat.argmax(axis=1) == y_shard.astype(y_hat.dtype)).sum()
        n += X.shape[0]
    if n == 0:
        raise ValueError('data_iter yielded no batch')
    return sum(float(c.asscalar()) for c in correct) / n


# ---------------------------------------------------------------- the epoch loop, shared

def _check_epochs(num_epochs):
    if isinstance(num_epochs, bool) or not isinstance(num_epochs, numbers.Integral) or num_epochs < 1:
        raise ValueError(f'num_epochs must be a positive whole number, got {num_epochs!r}')
    return int(num_epochs)


def _fit(step, evaluate, train_iter, num_epochs, devices, progress, plot, title):
    history = {'epoch': [], 'loss': [], 'train_acc': [], 'test_acc': [], 'seconds': []}
    timer = d2l.Timer()
    for epoch in range(1, num_epochs + 1):
        timer.start()
        sums = [nd.zeros((2,), ctx=d) for d in devices]
        n = 0
        for X, y in train_iter:
            for i, m in enumerate(step(X, y, epoch)):
                sums[i] += m
            n += X.shape[0]
        loss_sum, correct = (sum(s) for s in zip(*(s.asnumpy() for s in sums)))  # waits for the devices
        seconds = timer.stop()
        test_acc = evaluate()
        for key, value in zip(history, (epoch, loss_sum / n, correct / n, test_acc, seconds)):
            history[key].append(float(value) if key != 'epoch' else value)
        if progress:
            print(f'epoch {epoch}/{num_epochs}: loss {loss_sum / n:.3f}, train acc {correct / n:.3f}, '
                  f'test acc {test_acc:.3f}, {seconds:.1f} s', flush=True)
    if progress:
        print(f'{sum(history["seconds"]) / num_epochs:.1f} s/epoch on {len(devices)} device(s) '
              f'[{", ".join(str(d) for d in devices)}]', flush=True)
    if plot:
        plot_history(history, title)
    return history


def train_scratch(params, train_iter, test_iter, devices, lr, num_epochs, progress=True, plot=True):
    """Train the scratch LeNet on ``devices`` (notebook 05): replicate ``params`` (created once, on
    any device) to every device, then run :func:`train_batch_scratch` over ``num_epochs`` epochs.

    ``lr``: a positive number, or a list of them, one per epoch (a step schedule).
    Returns ``(device_params, history)``: the final replicas (one list per device) and the history.
    ``params`` itself is not modified.
    """
    devices = check_devices(devices)
    num_epochs = _check_epochs(num_epochs)
    if isinstance(lr, (list, tuple)):
        lrs = [check_lr(v) for v in lr]
        if len(lrs) != num_epochs:
            raise ValueError(f'got {len(lrs)} learning rates for {num_epochs} epochs: need one per epoch')
    else:
        lrs = [check_lr(lr)] * num_epochs
    device_params = [replicate_params(params, d) for d in devices]

    def step(X, y, epoch):
        return train_batch_scratch(X, y, device_params, devices, lrs[epoch - 1])

    def evaluate():
        return evaluate_accuracy([lambda X, p=p: lenet_scratch(X, p) for p in device_params],
                                 test_iter, devices)

    history = _fit(step, evaluate, train_iter, num_epochs, devices, progress, plot,
                   f'scratch LeNet, {len(devices)} device(s)')
    return device_params, history


def train(net, train_iter, test_iter, devices, trainer, num_epochs, loss=None, progress=True, plot=True):
    """Train a Gluon ``net`` on ``devices`` with ``trainer`` (notebook 06; used in 07 and 08).

    ``net`` must already be initialised on every device (``net.initialize(ctx=devices)``) and
    ``trainer`` built on its parameters. ``loss`` defaults to softmax cross-entropy. Prints one
    line per epoch (``progress``), draws the curves at the end (``plot``), returns the history.
    """
    devices = check_devices(devices)
    num_epochs = _check_epochs(num_epochs)
    check_params_on(net, devices)
    if not isinstance(trainer, gluon.Trainer):
        raise TypeError(f'trainer must be a gluon.Trainer, got {type(trainer).__name__}')
    check_lr(trainer.learning_rate)
    loss = loss or gluon.loss.SoftmaxCrossEntropyLoss()

    def step(X, y, epoch):
        return train_batch(net, X, y, loss, trainer, devices)

    def evaluate():
        return evaluate_accuracy(net, test_iter, devices)

    return _fit(step, evaluate, train_iter, num_epochs, devices, progress, plot,
                f'{type(net).__name__}, {len(devices)} device(s)')


def plot_history(history, title=None):
    """Training loss, training and test accuracy per epoch, as a PNG figure (via ``helpers.plot``)."""
    from helpers import plot as hplot
    epochs = history['epoch']
    hplot.plot(epochs, [history['loss'], history['train_acc'], history['test_acc']],
               xlabel='epoch', legend=['train loss', 'train acc', 'test acc'],
               xlim=[1, max(epochs[-1], 2)], fmts=('-', 'm--', 'g-.'), figsize=(3.5, 2.5))
    axes = hplot.plt.gca()
    if title:
        axes.set_title(title, fontsize=9)
    hplot.plt.show()
    return axes
