"""16-bit gradients on the wire, and loss scaling (notebook 13).

Sending a gradient as float16 instead of float32 halves the bytes of every allreduce. The price is
float16's range: its smallest positive (subnormal) number is 2**-24 (about 6e-8), its smallest
normal one 2**-14 (about 6.1e-5, below which a value keeps fewer than 11 significant bits) and its
largest 65504. Gradient entries below half of 2**-24 become 0 ("underflow"), entries above 65504
become inf ("overflow"). *Loss scaling* (Micikevicius et al., "Mixed Precision Training", ICLR 2018)
multiplies the loss, and so every gradient, by a scale S before the backward pass, moving the small
entries up into float16's range, and divides the update by S afterwards; *dynamic* loss scaling
picks S at run time: a step whose gradients overflowed is skipped and S halved; after many good
steps in a row S is doubled. MXNet's own ``mxnet.contrib.amp`` ``LossScaler`` starts at 2**16 and
doubles after 2000 good steps (python/mxnet/contrib/amp/loss_scaler.py, MXNet 1.9.1); PyTorch's
``torch.cuda.amp.GradScaler`` uses the same defaults.

The lesson functions (:func:`allreduce_fp16`, :func:`train_batch_fp16`, :func:`next_scale`) are the
text of notebook 13's lesson cells (``tools/lessons.py``). :func:`float16_fate` counts what the cast
does to an array of values; :func:`train_fp16` runs the loss-scaled step with dynamic scaling;
:func:`amp_probe` runs MXNet's AMP in a fresh process and reports what it did.
"""
import numpy as np
import mxnet as mx
from mxnet import autograd, nd

from helpers import checks
from helpers.comm import allreduce, copy_to
from helpers.models import lenet_scratch
from helpers.split import split_batch
from helpers.train import loss, sgd

__all__ = ['FP16_TINY', 'FP16_MIN_NORMAL', 'FP16_MAX', 'allreduce_fp16', 'float16_fate', 'all_finite',
           'train_batch_fp16', 'next_scale', 'train_fp16', 'amp_probe']

FP16_TINY = 2.0 ** -24          # smallest positive float16 (subnormal)
FP16_MIN_NORMAL = 2.0 ** -14    # smallest normal float16: below it, fewer than 11 significant bits
FP16_MAX = 65504.0              # largest finite float16


def allreduce_fp16(grads, send=copy_to):
    """Sum arrays with 16 bits on the wire: cast to float16, allreduce, cast back, in place (notebook 13)."""
    checks.arrays(grads, floating=True)
    halves = [g.astype('float16') for g in grads]        # what travels: 2 bytes per value
    allreduce(halves, send)                               # the sum is added up in float16 too
    for g, h in zip(grads, halves):
        h.astype(g.dtype).copyto(g)
    return grads


def float16_fate(values, scale=1.0):
    """What casting ``values * scale`` (NumPy or NDArray) to float16 does to the non-zero entries,
    as fractions of them that add up to 1 (notebook 13): ``'zero'`` (underflow: became 0),
    ``'subnormal'`` (kept, with fewer than 11 significant bits), ``'inf'`` (overflow, or infinite
    already), ``'normal'``, and ``'nan'`` (not a number before the cast, and after it)."""
    v = values.asnumpy() if isinstance(values, nd.NDArray) else np.asarray(values)
    if not np.issubdtype(v.dtype, np.floating):
        raise TypeError(f'values must be floating point, got {v.dtype}')
    scale = checks.positive(scale, 'scale')
    v = np.abs(v[v != 0].astype(np.float64)) * scale
    if v.size == 0:
        raise ValueError('values has no non-zero entry: nothing to cast')
    h = np.abs(v.astype(np.float16).astype(np.float64))
    counts = {'zero': np.sum(h == 0), 'subnormal': np.sum((h > 0) & (h < FP16_MIN_NORMAL)),
              'inf': np.sum(np.isinf(h)), 'normal': np.sum((h >= FP16_MIN_NORMAL) & np.isfinite(h)),
              'nan': np.sum(np.isnan(h))}
    return {k: float(c) / v.size for k, c in counts.items()}


def all_finite(arrays):
    """Whether every entry of every array is finite (no inf, no nan), read once for all of them with
    MXNet's ``multi_all_finite``, the operator AMP's loss scaler uses (notebook 13)."""
    if not checks.parameters(arrays, 'arrays'):
        raise ValueError('arrays is empty: give at least one NDArray to check')
    return bool(nd.multi_all_finite(*arrays, num_arrays=len(arrays)).asscalar())


def train_batch_fp16(X, y, device_params, devices, lr, scale):
    """Notebook 05's step with float16 gradients on the wire and loss scaling: the mean loss times
    ``scale``, a 16-bit allreduce, then SGD divided by ``scale``, or no update at all if a gradient
    overflowed (notebook 13). Returns whether it updated."""
    checks.scaled_step(device_params, devices, lr, scale)
    X_shards, y_shards = split_batch(X, y, devices)
    with autograd.record():                    # the mean over the whole batch, scaled
        ls = [loss(lenet_scratch(Xs, ps), ys).sum() * (scale / X.shape[0])
              for Xs, ys, ps in zip(X_shards, y_shards, device_params)]
    for l in ls:
        l.backward()
    for i in range(len(device_params[0])):
        allreduce_fp16([ps[i].grad for ps in device_params])
    if not all_finite([p.grad for p in device_params[0]]):
        return False                           # overflow: skip this step
    for ps in device_params:
        sgd(ps, lr, scale)                     # p -= lr * grad / scale
    return True


def next_scale(scale, updated, good_steps, growth_interval=2000):
    """Dynamic loss scaling: after an overflow halve the scale; after ``growth_interval`` good steps
    in a row double it (notebook 13). Returns ``(scale, good_steps)`` for the next step."""
    scale, good_steps = checks.loss_scale(scale, updated, good_steps, growth_interval)
    if not updated:
        return scale / 2, 0
    good_steps += 1
    return (scale * 2, 0) if good_steps == growth_interval else (scale, good_steps)


def train_fp16(params, batches, devices, lr, scale, dynamic=True, growth_interval=2000, step=None,
               rescale=None):
    """Train copies of ``params`` on ``devices`` over ``batches`` with ``step`` (default
    :func:`train_batch_fp16`) and, if ``dynamic``, the loss scale chosen by ``rescale`` (default
    :func:`next_scale`) after every step (notebook 13; the notebook passes its own lesson cells).
    Returns ``(device_params, history)``, the history a dict of per-step lists ``scale`` (the scale the
    step used) and ``updated``."""
    from helpers.models import replicate_params
    devices = checks.devices(devices)
    scale, lr = checks.positive(scale, 'scale'), checks.positive(lr, 'lr')
    dynamic, growth_interval = checks.flag(dynamic, 'dynamic'), checks.whole(growth_interval, 'growth_interval', 1)
    step = train_batch_fp16 if step is None else checks.function(step, 'step')
    rescale = next_scale if rescale is None else checks.function(rescale, 'rescale')
    batches = checks.batches(batches, 'batches')
    device_params = [replicate_params(params, d) for d in devices]
    history, good = {'scale': [], 'updated': []}, 0
    for X, y in batches:
        updated = step(X, y, device_params, devices, lr, scale)
        history['scale'].append(scale)
        history['updated'].append(bool(updated))
        if dynamic:
            scale, good = rescale(scale, updated, good, growth_interval)
    return device_params, history


def amp_probe(target_dtype, batch_size=16, seed=0):
    """What MXNet's own AMP (``mxnet.contrib.amp``) does to notebook 06's Gluon LeNet on ``cpu(0)``
    with ``target_dtype`` 'float16' or 'bfloat16' (notebook 13). ``amp.init()`` rewrites MXNet's
    operators for the whole process, for good: run this in a fresh process,
    ``helpers.memory.in_fresh_process('helpers.precision.amp_probe', 'float16')``.

    Returns a dict: the dtype of the first convolution's output (inferred when it is pushed),
    whether that convolution was then computed, the dtype of the network's output, the loss scale
    AMP starts with, the dtype of the weights and their gradients after one step of ``Trainer``
    with AMP's loss scaling, and ``error``: the last line of MXNet's error if a step failed (MXNet
    reports an operator's failure when its result is read)."""
    checks.choice(target_dtype, 'target_dtype', ('float16', 'bfloat16'))   # all before amp.init(): for good
    batch_size, seed = checks.whole(batch_size, 'batch_size', 1, 1 << 16), checks.whole(seed, 'seed')
    from mxnet import gluon
    from mxnet.contrib import amp
    amp.init(target_dtype=target_dtype)
    from helpers.models import lenet
    net = lenet([mx.cpu(0)], seed)
    rng = np.random.default_rng(seed)
    X = nd.array(rng.uniform(size=(batch_size, 1, 28, 28)))
    y = nd.array(rng.integers(0, 10, batch_size))
    found = {'target_dtype': target_dtype, 'error': None}

    def name(dtype):
        return np.dtype(dtype).names[0] if np.dtype(dtype).names else np.dtype(dtype).name

    try:
        first = net[0](X)
        found['first convolution output'] = name(first.dtype)          # inferred when it is pushed
        first.wait_to_read()                                           # computed: raises if it cannot be
        found['first convolution computed'] = True
        found['network output'] = name(net(X).dtype)
        trainer = gluon.Trainer(list(net.collect_params().values()), 'sgd', {'learning_rate': 0.1})
        amp.init_trainer(trainer)
        found['initial loss scale'] = trainer._amp_loss_scaler.loss_scale
        with autograd.record():
            ls = loss(net(X), y)
            with amp.scale_loss(ls, trainer) as scaled:
                autograd.backward(scaled)
        trainer.step(batch_size)
        weight = net[0].weight
        found['weight'] = name(weight.data().dtype)
        found['gradient'] = name(weight.grad().dtype)
        found['finite weights after a step'] = bool(np.isfinite(weight.data().asnumpy()).all())
    except mx.base.MXNetError as e:
        found['error'] = [line for line in str(e).strip().splitlines() if line.strip()][-1]
    return found
