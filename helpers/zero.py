"""Sharding everything: ZeRO-2 and ZeRO-3 by hand, the idea behind FSDP (notebook 12).

Notebook 11 sharded the optimizer's state (ZeRO stage 1): every device still kept all the weights and
all the gradients. Here a device keeps 1/k of those too. A device needs a layer's whole weights only
while that layer computes, so it keeps its shard and gathers the rest just in time:

* the model is a list of *units*, one dense layer each (:class:`Unit`; FSDP's "units" are the
  modules it wraps), whose weight and bias sit in ONE flat array, padded to a multiple of ``k``
  (as FSDP1 pads its flat parameters) so that every device's shard has the same size;
* **ZeRO-3**: device ``i`` keeps chunk ``owner_chunk(i, k)`` of every unit (:func:`shard`, the chunk
  notebook 11's ring leaves finished on it: :func:`mine`). Before a layer runs forward, and again
  before it runs backward, every device all-gathers the layer's whole weights (:func:`gather`, notebook
  04's :func:`~helpers.comm.all_gather`), uses them, and drops them; the layer's gradient is
  reduce-scattered as soon as it is computed, and each device keeps and updates only its shard;
* **ZeRO-2**: the weights stay whole on every device (nothing to gather); the gradients are
  reduce-scattered layer by layer as backward writes them, each device keeping its shard only, and
  after the update the new weights are all-gathered (as in notebook 11).

MXNet's autograd keeps, until ``backward``, every array the recorded operators need: a dense layer
recorded with the gathered weights keeps them all alive, and nothing would be saved. So each layer is
an :class:`mxnet.autograd.Function` (:class:`ZeroLayer`), which autograd records as one operator that
keeps nothing but what the Function saves itself: the layer's input and output. Its ``forward``
gathers, computes (:func:`dense`) and returns; its ``backward`` gathers again, computes the gradients
by hand (:func:`dense_grads`), reduce-scatters the weights' gradient into the model's buffers and
returns only the input's: MXNet ends a Function's backward when what it returns is written, so the
layer below starts while the reduce-scatter is on the wire. A :class:`Fetcher` does the gathering; with
``prefetch`` it starts the next layer's gather while this layer computes.

The lesson functions (:func:`mine`, :func:`shard`, :func:`gather`, :func:`unpack`, :func:`dense`,
:func:`dense_grads`, :class:`Fetcher`, :class:`ZeroLayer`, :func:`make_model`, :func:`attach_grads`,
:func:`train_batch_zero`) are the text of notebook 12's lesson cells (``tools/lessons.py``); their
input checks are in :mod:`helpers.checks`. The stages side by side (replicated and ZeRO-1 with notebook 11's
code on the same model) are :func:`build` and :func:`step`; what each device holds, from MXNet's own
counters, :func:`measure_stages` (:mod:`helpers.memory`).
"""
import collections

import numpy as np
from mxnet import autograd, nd

from helpers import checks, tracing
from helpers.comm import all_gather, allreduce_ring, copy_to, owner_chunk, reduce_scatter
from helpers.sharding import Replica, adam_updaters, attach_flat_grad, comm_and_update, flat_replica, forward_backward
from helpers.split import shard_bounds, split_batch
from helpers.train import loss

__all__ = ['Unit', 'mlp_units', 'init_mlp', 'mlp_params', 'mlp', 'mine', 'shard', 'gather', 'unpack', 'dense',
           'dense_grads', 'Fetcher', 'ZeroLayer', 'Model', 'make_model', 'attach_grads', 'train_batch_zero',
           'full_weights', 'STAGES', 'build', 'step', 'train_batch_gathered', 'phase', 'forward_end',
           'measure_stages']

Unit = collections.namedtuple('Unit', 'fan_in fan_out relu')
Unit.__doc__ = ('One dense layer (notebook 12): ``fan_out x fan_in`` weights and ``fan_out`` biases, in one flat '
                'array (weight first), followed by a ReLU if ``relu``.')

Model = collections.namedtuple('Model', 'units shards grads full')
Model.__doc__ = ('A model sharded for ZeRO-2 or ZeRO-3 (notebook 12), per unit and device: ``shards[j][i]`` device '
                 "i's shard of unit j (ZeRO-2: a view of its whole weights ``full[j][i]``; ZeRO-3: ``full`` is None), "
                 "``grads[j][i]`` its gradient buffer, the shard's size.")

# The stages, by name: what each device keeps whole (notebook 12).
STAGES = ('replicated', 'ZeRO-1', 'ZeRO-2', 'ZeRO-3')


def mlp_units(sizes):
    """The units of a multilayer perceptron with layer widths ``sizes`` (inputs first), a ReLU after
    every layer but the last (notebook 12)."""
    sizes = checks.layer_sizes(sizes)
    return [Unit(a, b, j < len(sizes) - 2) for j, (a, b) in enumerate(zip(sizes[:-1], sizes[1:]))]


def init_mlp(units, seed=0, dtype='float32'):
    """One flat array per unit on the CPU: Xavier-uniform weights (as notebook 05's LeNet), zero
    biases, drawn from a NumPy generator seeded with ``seed`` (notebook 12)."""
    units, seed, dtype = checks.units(units), checks.whole(seed, 'seed'), checks.dtype(dtype)
    rng, flats = np.random.default_rng(seed), []
    for u in units:
        bound = np.sqrt(6 / (u.fan_in + u.fan_out))
        flats.append(nd.array(np.concatenate([rng.uniform(-bound, bound, u.fan_out * u.fan_in), np.zeros(u.fan_out)]),
                              dtype=dtype))
    return flats


def mlp_params(flats, units):
    """The weight matrix and bias of every unit, as views of the flat arrays ``flats``:
    ``[W0, b0, W1, b1, ...]``, the parameter list notebook 11's flat replicas take (notebook 12)."""
    checks.unit_arrays(flats, units)
    return [p for w, u in zip(flats, units) for p in unpack(w, u)]


def mlp(X, params):
    """The forward pass of the perceptron of :func:`mlp_params`' parameters (a ReLU after every
    layer but the last), for notebook 11's ``forward_backward(..., forward=mlp)`` (notebook 12)."""
    checks.mlp(X, params)
    for j in range(0, len(params), 2):
        X = nd.FullyConnected(X, params[j], params[j + 1], num_hidden=params[j].shape[0])
        X = nd.relu(X) if j + 2 < len(params) else X
    return X


def mine(a, i, k):
    """Device ``i``'s chunk of ``a`` cut in ``k``: chunk ``owner_chunk(i, k)``, the one notebook 11's
    reduce-scatter leaves finished on it (notebook 12). A view: writing it writes ``a``."""
    checks.chunk_of(a, i, k)
    b, e = shard_bounds(a.size, k)[owner_chunk(i, k)]
    return a[b:e]


def shard(flat, devices):
    """``flat`` padded with zeros to a multiple of ``k``, cut in ``k``: device ``i`` keeps
    :func:`mine`, a copy on it (notebook 12). Returns the k shards, all of one size."""
    k = checks.shard(flat, devices)
    padded = nd.zeros(-(-flat.size // k) * k, dtype=flat.dtype)         # round up to a multiple of k
    padded[:flat.size] = flat
    return [mine(padded, i, k).copyto(d) for i, d in enumerate(devices)]


def gather(shards, send=copy_to):
    """Every device's whole (padded) unit from the k shards: each puts its own in place, then
    notebook 04's ring all-gather (notebook 12). Returns k new arrays."""
    k = checks.gather(shards, send)
    fulls = [nd.empty(k * s.size, ctx=s.context, dtype=s.dtype) for s in shards]
    for i, (s, f) in enumerate(zip(shards, fulls)):
        mine(f, i, k)[:] = s
    return all_gather(fulls, send)


def unpack(w, unit):
    """The weight matrix and the bias of ``unit``, as views of its flat weights ``w`` (notebook 12)."""
    checks.unit_weights(w, unit)
    n = unit.fan_out * unit.fan_in
    return w[:n].reshape((unit.fan_out, unit.fan_in)), w[n:n + unit.fan_out]


def dense(x, w, unit):
    """A dense layer (then a ReLU if ``unit.relu``) from its flat weights ``w`` (notebook 12)."""
    checks.dense(x, w, unit)
    W, b = unpack(w, unit)
    y = nd.FullyConnected(x, W, b, num_hidden=unit.fan_out)
    return nd.relu(y) if unit.relu else y


def dense_grads(x, y, dy, w, unit):
    """:func:`dense`'s gradients by hand, from its input ``x``, output ``y`` and the gradient ``dy`` of
    the output: ``dx`` and the flat ``dw`` (weight, bias, zero padding) (notebook 12)."""
    checks.dense_grads(x, y, dy, w, unit)
    W, _ = unpack(w, unit)
    dy = dy.as_in_context(x.context)                 # a Function's backward gets every CPU array as cpu(0)
    dz = dy * (y > 0) if unit.relu else dy            # through the ReLU
    dw = nd.zeros(w.size, ctx=x.context, dtype=x.dtype)
    dW, db = unpack(dw, unit)
    nd.FullyConnected(dz.T, x.reshape((x.shape[0], -1)).T, no_bias=True, num_hidden=unit.fan_in, out=dW)  # dz' x
    nd.sum(dz, axis=0, out=db)
    dx = nd.FullyConnected(dz, W.T, no_bias=True, num_hidden=unit.fan_in)                                 # dz W
    return dx.reshape(x.shape), dw


class Fetcher:
    """Gathers unit ``j``'s whole weights on every device when a layer asks, once the layer's inputs
    ``xs`` exist; with ``prefetch``, also starts the next unit's gather, ``j + step`` (notebook 12)."""

    def __init__(self, shards, send=copy_to, prefetch=False):
        self.shards, self.send, self.prefetch, self.ahead = *checks.fetcher(shards, send, prefetch), {}

    def __call__(self, j, step, xs):
        for x in xs:                                  # the layer below has run: its weights are gone
            x.wait_to_read()
        ws = self.ahead.pop(j, None) or gather(self.shards[j], self.send)
        if self.prefetch and 0 <= j + step < len(self.shards):
            self.ahead[j + step] = gather(self.shards[j + step], self.send)     # the next one, now
        return ws


class ZeroLayer(autograd.Function):
    """One dense layer on every device at once, called as ``ZeroLayer(unit, j, fetch, grads,
    send)(*xs)``: its whole weights fetched in forward and again in backward, never kept; its backward
    reduce-scatters the weights' gradient into ``grads`` and returns the inputs' (notebook 12)."""

    def __init__(self, unit, j, fetch, grads, send=copy_to):
        super().__init__()
        self.unit, self.j, self.fetch, self.grads, self.send = checks.zero_layer(unit, j, fetch, grads, send)

    def forward(self, *xs):
        ys = [dense(x, w, self.unit) for x, w in zip(xs, self.fetch(self.j, +1, xs))]   # the whole layer, fetched
        self.save_for_backward(xs, ys)                # not the weights: they go when forward returns
        return tuple(ys)

    def backward(self, *dys):
        (xs, ys), self.saved_tensors = self.saved_tensors, ()     # and let them go (aside)
        ws = self.fetch(self.j, -1, xs)               # gathered again
        dxs, dws = zip(*[dense_grads(x, y, dy, w, self.unit) for x, y, dy, w in zip(xs, ys, dys, ws)])
        reduce_scatter(list(dws), self.send)          # device i: the sum of its chunk ...
        for i, (dw, g) in enumerate(zip(dws, self.grads)):
            mine(dw, i, len(dws)).copyto(g)           # ... into its buffer, while the layer below runs
        return dxs                                    # only what the layer below waits for


def make_model(flats, units, devices, stage=3):
    """The weights of ``flats`` for ZeRO-``stage`` on ``devices``: ZeRO-3, each device's shard of every
    unit; ZeRO-2, every device the whole (padded) unit, its shard a view of it (notebook 12)."""
    k = checks.zero_parts(flats, units, devices, stage)
    if stage == 3:
        return Model(units, [shard(f, devices) for f in flats], None, None)
    full = [gather(shard(f, devices)) for f in flats]
    return Model(units, [[mine(a, i, k) for i, a in enumerate(fs)] for fs in full], None, full)


def attach_grads(model):
    """A gradient buffer the size of each shard: each layer's backward writes its shard of the summed
    gradient there (notebook 12). Returns the model with them."""
    grads = [[nd.zeros_like(s) for s in ss] for ss in checks.zero_model(model, grads=False).shards]
    return model._replace(grads=grads)


def train_batch_zero(X, y, model, devices, updaters, send=copy_to, prefetch=False):
    """One ZeRO-2 or ZeRO-3 step: forward and backward layer by layer through :class:`ZeroLayer`,
    then each device updates its shards only (ZeRO-2: and all-gathers the weights) (notebook 12)."""
    X_shards, y_shards = split_batch(X, y, checks.zero_step(model, devices, updaters, prefetch))
    autograd.mark_variables(X_shards, [nd.zeros_like(x) for x in X_shards])     # the batch needs a gradient (aside)
    fetch = Fetcher(model.shards, send, prefetch) if model.full is None else lambda j, step, xs: model.full[j]
    with autograd.record():
        for j, unit in enumerate(model.units):
            X_shards = ZeroLayer(unit, j, fetch, model.grads[j], send)(*X_shards)
        ls = [loss(h, ys) for h, ys in zip(X_shards, y_shards)]
    autograd.backward(ls)                             # last layer first, each reduce-scatters its gradient
    nd.waitall()                                      # before any update: the backward reads the shards
    for j, (shards, grads) in enumerate(zip(model.shards, model.grads)):
        for update, s, g in zip(updaters, shards, grads):
            update(j, g, s)                           # its shard only, with state for its shard only
        if model.full is not None:
            all_gather(model.full[j], send)           # ZeRO-2: every device, the new weights
    return [l.sum() for l in ls]


def full_weights(model, device=0):
    """The whole weights of a :class:`Model` as device ``device`` would gather them, unpadded and one
    unit after the other, as a NumPy array: notebook 11's flat layout, for comparing (notebook 12)."""
    model = checks.zero_model(model)
    i = checks.whole(device, 'device', 0, len(model.shards[0]) - 1)
    fulls = [(gather(ss)[i] if model.full is None else model.full[j][i]).asnumpy()
             for j, ss in enumerate(model.shards)]
    return np.concatenate([f[:u.fan_out * u.fan_in + u.fan_out] for f, u in zip(fulls, model.units)])


# --- The stages side by side ------------------------------------------------------------------------
def build(stage, flats, units, devices):
    """What ``stage`` (a name of :data:`STAGES`, or ``'ZeRO-3 under autograd'``) keeps on ``devices``
    for the units ``flats``: notebook 11's flat replicas (replicated, ZeRO-1) or a :class:`Model`
    (notebook 12). Use it with :func:`step`."""
    stage = checks.choice(stage, 'stage', STAGES + ('ZeRO-3 under autograd',))
    devices = checks.devices(devices)
    checks.unit_arrays(flats, units)
    if stage in STAGES[:2]:
        replicas = []
        for d in devices:
            weights, views = flat_replica(mlp_params(flats, units), d)
            replicas.append(Replica(weights, attach_flat_grad(weights, views), views))
        return replicas
    return attach_grads(make_model(flats, units, devices, 2 if stage == 'ZeRO-2' else 3))


def step(stage, X, y, state, devices, updaters, send=copy_to, prefetch=False):
    """One step of ``stage`` on what :func:`build` made: replicated (the ring allreduce, then every
    device updates everything), ZeRO-1 (notebook 11), ZeRO-2 or ZeRO-3 (:func:`train_batch_zero`), or
    ZeRO-3 with the layers gathered under autograd (:func:`train_batch_gathered`) (notebook 12).
    Returns each device's loss sum."""
    stage = checks.choice(stage, 'stage', STAGES + ('ZeRO-3 under autograd',))
    if stage in STAGES[:2]:
        losses = forward_backward(X, y, [r.params for r in state], devices, forward=mlp)
        comm_and_update(state, devices, updaters, stage == 'ZeRO-1', send, sum_grads=allreduce_ring)
        return losses
    if stage == 'ZeRO-3 under autograd':
        return train_batch_gathered(X, y, state, devices, updaters, send)
    return train_batch_zero(X, y, state, devices, updaters, send, prefetch)


def train_batch_gathered(X, y, model, devices, updaters, send=copy_to):
    """ZeRO-3 the obvious way, which saves no memory in MXNet (notebook 12): every layer's weights are
    gathered right before its forward, inside ``autograd.record()``, and used by ordinary operators;
    autograd keeps what they need for backward, the gathered weights included, until ``backward``.
    The gradients of the gathered weights are then reduce-scattered, and each device updates its shard."""
    k = len(checks.zero_step(model, devices, updaters))
    if model.full is not None:
        raise ValueError('model must be a ZeRO-3 model (make_model(..., stage=3)): this step gathers the shards')
    X_shards, y_shards = split_batch(X, y, devices)
    fulls = []
    with autograd.record():
        for shards, unit in zip(model.shards, model.units):
            with autograd.pause():                    # the gather itself is not differentiated
                fulls.append(gather(shards, send))
                for w in fulls[-1]:
                    w.attach_grad()
            X_shards = [dense(x, w, unit) for x, w in zip(X_shards, fulls[-1])]
        ls = [loss(h, ys) for h, ys in zip(X_shards, y_shards)]
    autograd.backward(ls)
    for j, (ws, grads) in enumerate(zip(fulls, model.grads)):
        reduce_scatter([w.grad for w in ws], send)
        for i, (update, w, g) in enumerate(zip(updaters, ws, grads)):
            mine(w.grad, i, k).copyto(g)
            update(j, g, model.shards[j][i])
    return [l.sum() for l in ls]


def phase(name):
    """The part of a ZeRO step an operator belongs to, from its name in MXNet's profiler (notebook 12):
    ``'wire'`` (a message of an emulated link), ``'communication'`` (a ring's copies and additions),
    ``'update'``, ``'backward'`` (every other operator pushed from a :class:`ZeroLayer`'s backward, which
    MXNet's profiler names ``'::name'``, and autograd's own), ``'forward'``; None for the bookkeeping a
    timeline leaves out: the Function's backward as one operator (it spans all the others), waits and frees."""
    base = checks.text(name, 'name').rpartition('::')[2]
    if base in ('_backward_CustomFunction', 'WaitForVar', 'DeleteVariable', 'CustomOperatorWait'):
        return None
    if tracing.phase(base) in ('wire', 'update'):
        return tracing.phase(base)
    if base in ('CopyCPU2CPU', 'CopyCPU2GPU', 'CopyGPU2CPU', 'CopyGPU2GPU', 'broadcast_add'):
        return 'communication'
    return 'backward' if '::' in name or tracing.phase(base) == 'backward' else 'forward'


def forward_end(spans):
    """When a traced ZeRO step's forward ends, in the spans' milliseconds (notebook 12, benchmarks/zero.py):
    the end of its last ``FullyConnected``. A :class:`ZeroLayer`'s backward pushes ``'::FullyConnected'``,
    and the first backward operator is no measure: ``autograd.backward`` pushes its head gradients
    (``SetValueOp``) at once, while the forward still runs."""
    ends = [s.end for s in checks.spans(spans) if s.name == 'FullyConnected']
    if not ends:
        raise ValueError('spans: no FullyConnected operator, not the trace of a ZeRO step')
    return max(ends)


def _built(meter, stage, flats, units, devices):
    """:func:`build`, its weights and its gradient buffers counted apart: ``(state, weights, grads)``."""
    def growth(before):
        now = meter.read()
        return [now.get(str(d), 0) - before.get(str(d), 0) for d in devices]
    before = meter.read()
    if stage in STAGES[:2]:
        flats_views = [flat_replica(mlp_params(flats, units), d) for d in devices]
        weights, before = growth(before), meter.read()
        state = [Replica(w, attach_flat_grad(w, views), views) for w, views in flats_views]
        return state, weights, growth(before)
    model = make_model(flats, units, devices, 2 if stage == 'ZeRO-2' else 3)
    weights, before = growth(before), meter.read()
    model = attach_grads(model)
    return model, weights, growth(before)


def measure_stages(cases, sizes, batch=8, seed=0):
    """What each device holds in each ``(k, stage)`` of ``cases``, from MXNet's own storage counters
    (:class:`helpers.memory.StorageMeter`): the perceptron of widths ``sizes`` on ``k`` CPU stand-ins,
    Adam, a batch of ``batch`` random examples (notebook 12). Run it in a fresh process:
    ``in_fresh_process('helpers.zero.measure_stages', [[2, 'ZeRO-3']], [784, 256, 10])``.

    Per case, in bytes per device: ``weights`` and ``gradients``, what the counters grow by while
    they are made (:func:`build`); ``optimizer state``, what they drop by when, after two steps, the
    updaters are deleted; and ``peak``, the most the device held at any moment of the second step,
    everything included (the above, activations, gathered weights, messages in flight). Returns one
    ``{what: [bytes per device]}`` per case."""
    import gc
    from helpers.memory import StorageMeter
    import mxnet as mx
    cases = checks.stage_cases(cases, STAGES + ('ZeRO-3 under autograd',))
    units, batch, seed = mlp_units(sizes), checks.whole(batch, 'batch', 1), checks.whole(seed, 'seed')
    if max(k for k, _ in cases) > batch:
        raise ValueError(f'cases: {max(k for k, _ in cases)} devices for a batch of {batch}: every device needs '
                         'an example')
    flats = init_mlp(units, seed)
    rng = np.random.default_rng(seed)
    X = nd.array(rng.standard_normal((batch, units[0].fan_in)), dtype='float32')
    y = nd.array(rng.integers(0, units[-1].fan_out, batch), dtype='float32')
    nd.waitall()
    gc.collect()
    gc.freeze()              # what exists now is never garbage: each read's gc.collect skips it (0.25 s -> ms)
    meter, results = StorageMeter(), []
    for k, stage in cases:
        devices = [mx.cpu(i) for i in range(k)]
        state, weights, grads = _built(meter, stage, flats, units, devices)
        updaters = adam_updaters(devices, 1e-3, batch)
        step(stage, X, y, state, devices, updaters)
        meter.read()
        step(stage, X, y, state, devices, updaters)
        peak = meter.peak()
        before = meter.read()
        del updaters
        after = meter.read()
        results.append({'weights': weights, 'gradients': grads,
                        'optimizer state': [before.get(str(d), 0) - after.get(str(d), 0) for d in devices],
                        'peak': [peak.get(str(d), 0) for d in devices]})
        del state
    meter.stop()
    return results
