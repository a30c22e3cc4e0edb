"""Sharding the optimizer: the update between the ring's two halves (notebook 11).

Notebook 04's ring allreduce is a reduce-scatter (:func:`helpers.comm.reduce_scatter`: afterwards
device ``i`` holds the finished sum of chunk ``owner_chunk(i, k)`` only) followed by an all-gather
(:func:`helpers.comm.all_gather`: every finished chunk travels to every device). A replicated step
(notebook 05) runs the whole allreduce and then the same optimizer update on every device, each
device keeping a full copy of the optimizer's state. A *sharded* step updates between the halves:
device ``i`` updates only chunk ``owner_chunk(i, k)`` of the weights, with the optimizer state of
that chunk only, and the all-gather then sends the updated *weights* instead of the summed
gradients. Same bytes on the wire, the same new weights, and 1/k of the optimizer state per device:
the first stage of ZeRO (Rajbhandari et al., SC 2020).

To cut the parameters into the ring's chunks, each replica keeps all its weights in ONE flat array
and all its gradients in another (:func:`flat_replica`, :func:`attach_flat_grad`); the model's
parameters are views into them (``flat[b:e].reshape(shape)`` shares the array's memory), so the
backward pass writes straight into the flat gradient and an all-gather into the flat weights is
seen by the model. PyTorch's FSDP does the same with its ``FlatParameter``.

The lesson functions (:func:`views_of`, :func:`flat_replica`, :func:`attach_flat_grad`,
:func:`forward_backward`, :func:`train_batch_replicated`, :func:`train_batch_sharded`) are the text
of notebook 11's lesson cells (``tools/lessons.py``). Each device's optimizer is an MXNet updater
(``mx.optimizer.get_updater``), which creates its state (Adam: mean and variance, each the size of
the weights it is given) the first time it updates: :func:`adam_updaters`. :func:`measure_memory`
reads what each device holds from MXNet's own storage counters (:mod:`helpers.memory`).
"""
import collections

import numpy as np
import mxnet as mx
from mxnet import autograd, nd

from helpers import checks
from helpers.comm import all_gather, allreduce, copy_to, owner_chunk, reduce_scatter
from helpers.models import lenet_scratch
from helpers.split import shard_bounds, split_batch
from helpers.train import loss

__all__ = ['Replica', 'views_of', 'flat_replica', 'attach_flat_grad', 'make_replicas', 'forward_backward',
           'adam_updaters', 'train_batch_replicated', 'train_batch_sharded', 'state_elements',
           'zero_bytes', 'measure_memory', 'comm_and_update']

Replica = collections.namedtuple('Replica', 'weights grads params')
Replica.__doc__ = ('One device\'s copy of the model (notebook 11): ``weights`` and ``grads`` are flat '
                   'arrays; ``params`` are views of ``weights``, one per parameter, in order.')


def views_of(flat, params):
    """Each of ``params``' shapes as a view of the next elements of ``flat`` (notebook 11)."""
    checks.views(flat, params)
    ends = np.cumsum([p.size for p in params]).tolist()
    return [flat[e - p.size:e].reshape(p.shape) for p, e in zip(params, ends)]


def flat_replica(params, device):
    """A copy of ``params`` on ``device`` as ONE flat array, and the parameters as views of it (notebook 11)."""
    checks.replica(params, device)
    flat = nd.concat(*[p.reshape(-1) for p in params], dim=0).copyto(device)
    return flat, views_of(flat, params)


def attach_flat_grad(flat, views):
    """One flat gradient array beside ``flat``: backward writes each parameter's gradient into its
    view of it (notebook 11)."""
    checks.views(flat, views, 'views')
    grad = nd.zeros_like(flat)
    autograd.mark_variables(views, views_of(grad, views))
    return grad


def make_replicas(params, devices):
    """One :class:`Replica` of ``params`` per device: :func:`flat_replica`, then :func:`attach_flat_grad`
    (notebook 11)."""
    devices = checks.devices(devices)
    if not checks.parameters(params):
        raise ValueError('params is empty: give a list of NDArrays (e.g. init_lenet_params())')
    replicas = []
    for d in devices:
        weights, views = flat_replica(params, d)
        replicas.append(Replica(weights, attach_flat_grad(weights, views), views))
    return replicas


def forward_backward(X, y, device_params, devices, forward=lenet_scratch):
    """Notebook 05's first moves: split the batch, forward and backward on every device (notebook 11;
    notebook 13 accumulates with it). Returns each device's loss sum, not read yet."""
    checks.replicas(device_params, devices)
    X_shards, y_shards = split_batch(X, y, devices)
    with autograd.record():
        ls = [loss(forward(Xs, ps), ys) for Xs, ys, ps in zip(X_shards, y_shards, device_params)]
    for l in ls:
        l.backward()                           # into each parameter's gradient buffer
    return [l.sum() for l in ls]


def adam_updaters(devices, lr, batch_size, **adam):
    """One MXNet Adam updater per device, each with an optimizer of its own (its own step count and
    state), dividing the summed gradient by ``batch_size`` (``rescale_grad``) (notebook 11).
    Extra keyword arguments go to ``mx.optimizer.Adam`` (``beta1``, ``beta2``, ``epsilon``, ``wd``)."""
    devices = checks.devices(devices)
    lr, batch_size = checks.positive(lr, 'lr'), checks.whole(batch_size, 'batch_size', 1)
    return [mx.optimizer.get_updater(mx.optimizer.Adam(learning_rate=lr, rescale_grad=1 / batch_size, **adam))
            for _ in devices]


def train_batch_replicated(X, y, replicas, devices, updaters, sum_grads=allreduce, send=copy_to):
    """Notebook 05's step with any optimizer: allreduce, then every device updates all of its
    weights with its own full optimizer state (notebook 11)."""
    checks.flat_replicas(replicas, devices, updaters)
    losses = forward_backward(X, y, [r.params for r in replicas], devices)
    sum_grads([r.grads for r in replicas], send)          # every device: the whole summed gradient
    for r, update in zip(replicas, updaters):              # every device: the whole update
        update(0, r.grads, r.weights)
    return losses


def train_batch_sharded(X, y, replicas, devices, updaters, send=copy_to):
    """The sharded step: reduce-scatter the gradients, update only the chunk this device owns
    (with its own state for that chunk), all-gather the weights (notebook 11)."""
    k = checks.flat_replicas(replicas, devices, updaters)
    losses = forward_backward(X, y, [r.params for r in replicas], devices)
    reduce_scatter([r.grads for r in replicas], send)      # device i: summed chunk owner_chunk(i, k)
    chunks = shard_bounds(replicas[0].weights.size, k)
    for i, (r, update) in enumerate(zip(replicas, updaters)):
        b, e = chunks[owner_chunk(i, k)]
        update(0, r.grads[b:e], r.weights[b:e])            # its chunk only: state for 1/k of it
    all_gather([r.weights for r in replicas], send)        # every device: every updated chunk
    return losses


def state_elements(updaters):
    """Elements of optimizer state each updater holds, ``[n_0, n_1, ...]`` (notebook 11): the
    arrays its optimizer created (Adam: mean and variance), read from the updater itself."""
    def count(state):
        if isinstance(state, nd.NDArray):
            return state.size
        if isinstance(state, (list, tuple)):
            return sum(count(s) for s in state)
        return 0
    return [sum(count(s) for s in u.states.values()) for u in checks.updaters(updaters)]


def zero_bytes(n_params, k, weight_bytes=4, grad_bytes=4, state_bytes=8, stage=1):
    """Bytes per device for ``n_params`` parameters on ``k`` devices by the formula of the ZeRO paper
    (Rajbhandari et al., SC 2020, section 5.2, Figure 1): replicated (``stage=0``) every device holds
    weights, gradients and optimizer state; stage 1 ('P_os') divides the optimizer state by ``k``,
    stage 2 ('P_os+g') the gradients too, stage 3 ('P_os+g+p') the weights too. Bytes per parameter:
    the paper's mixed-precision Adam is ``weight_bytes=2, grad_bytes=2, state_bytes=12`` (fp32
    weights, momentum and variance); notebook 11 trains in float32 with Adam: 4, 4 and 8.
    Returns ``{'weights': ..., 'gradients': ..., 'optimizer state': ...}`` (notebook 11)."""
    n_params, k = checks.whole(n_params, 'n_params', 1), checks.whole(k, 'k', 1)
    stage = checks.whole(stage, 'stage', 0)
    for name, value in (('weight_bytes', weight_bytes), ('grad_bytes', grad_bytes), ('state_bytes', state_bytes)):
        checks.number(value, name, 0)
    if stage > 3:
        raise ValueError(f'stage must be 0 (replicated), 1, 2 or 3, got {stage}')
    return {'weights': n_params * weight_bytes / (k if stage >= 3 else 1),
            'gradients': n_params * grad_bytes / (k if stage >= 2 else 1),
            'optimizer state': n_params * state_bytes / (k if stage >= 1 else 1)}


def _growth(meter, devices, before):
    now = meter.read()
    return [now.get(str(d), 0) - before.get(str(d), 0) for d in devices]


def measure_memory(cases, n_params=None, seed=0):
    """Bytes each device holds for the weights, the gradients and the Adam state, read from MXNet's
    own storage counters (:class:`helpers.memory.StorageMeter`), for each ``(k, sharded)`` of
    ``cases``: ``k`` CPU stand-ins, replicated or sharded, one case after the other, each freed before
    the next (notebook 11). The model is LeNet, or with ``n_params`` a flat model of that many
    float32 parameters with a gradient of ones (the benchmark). Run it in a fresh process:
    ``in_fresh_process('helpers.sharding.measure_memory', [[2, False], [2, True]])``.

    Each number is a change of a device's counter: the weights and the gradients are what the
    counters grow by while :func:`flat_replica` and :func:`attach_flat_grad` run on every device; the
    optimizer state is what they drop by when, after one step, the updaters are deleted (their state
    is all they hold). Returns one ``{what: [bytes per device]}`` per case.
    """
    from helpers.memory import StorageMeter
    from helpers.models import init_lenet_params
    cases, seed = checks.memory_cases(cases), checks.whole(seed, 'seed')
    if n_params is not None:
        checks.whole(n_params, 'n_params', 1)
    if n_params is None:
        params = init_lenet_params(seed)
        from helpers.data import load_data_fashion_mnist
        X, y = next(iter(load_data_fashion_mnist(64, n_train=64, seed=seed)[0]))
    else:
        params = [nd.array(np.random.default_rng(seed).standard_normal(checks.whole(n_params, 'n_params', 1)),
                           dtype='float32')]
    nd.waitall()
    meter, results = StorageMeter(), []
    for k, sharded in cases:
        devices = [mx.cpu(i) for i in range(checks.whole(k, 'k', 1))]
        found, before = {}, meter.read()
        flats = [flat_replica(params, d) for d in devices]
        found['weights'] = _growth(meter, devices, before)
        before = meter.read()
        replicas = [Replica(w, attach_flat_grad(w, views), views) for w, views in flats]
        found['gradients'] = _growth(meter, devices, before)
        updaters = adam_updaters(devices, 1e-3, 64)
        if n_params is None:
            (train_batch_sharded if sharded else train_batch_replicated)(X, y, replicas, devices, updaters)
        else:                                   # no model: a gradient of ones, then the update
            for r in replicas:
                r.grads[:] = 1.0
            comm_and_update(replicas, devices, updaters, sharded)
        before = meter.read()
        del updaters
        found['optimizer state'] = [-b for b in _growth(meter, devices, before)]
        results.append(found)
        del flats, replicas
    meter.stop()
    return results


def comm_and_update(replicas, devices, updaters, sharded, send=copy_to, sum_grads=allreduce):
    """The second half of a step, sharded (as :func:`train_batch_sharded`) or replicated (as
    :func:`train_batch_replicated`, summing with ``sum_grads``), with the gradients already in the
    replicas: what notebook 11's benchmark (benchmarks/sharding.py) times for a model of any size."""
    k, sharded = checks.flat_replicas(replicas, devices, updaters), checks.flag(sharded, 'sharded')
    if sharded:
        reduce_scatter([r.grads for r in replicas], send)
        chunks = shard_bounds(replicas[0].weights.size, k)
        for i, (r, update) in enumerate(zip(replicas, updaters)):
            b, e = chunks[owner_chunk(i, k)]
            update(0, r.grads[b:e], r.weights[b:e])
        all_gather([r.weights for r in replicas], send)
    else:
        sum_grads([r.grads for r in replicas], send)
        for r, update in zip(replicas, updaters):
            update(0, r.grads, r.weights)

