"""The networks the series trains: LeNet (by hand and in Gluon) and d2l's ResNet-18 (notebooks 05, 06).

- :func:`init_lenet_params`, :func:`lenet_scratch`, :func:`replicate_params` -- LeNet as a list of
  NDArrays and a forward function, trained entirely by hand in notebook 05;
- :func:`lenet` -- the same architecture as a Gluon ``HybridSequential``, seeded and initialised on
  the devices in one call (notebooks 06-09);
- :func:`resnet18` -- d2l's ResNet-18 variant for 28x28 images (3x3 first convolution, no max
  pooling), with a ``width`` knob: ``width=64`` is d2l's network, smaller widths keep the same
  architecture with fewer channels, which CPU stand-ins can train in a minute (notebook 06, exercise 1);
- :func:`batchnorm_step` -- one training-mode forward and backward of a fresh BatchNorm (or
  SyncBatchNorm) layer on a batch split over devices: its outputs and every device's running mean
  (notebook 06, exercise 2);
- :func:`sync_batchnorm_steps` -- the same for ``SyncBatchNorm``, in a fresh process stopped after a
  timeout: the layer waits at a barrier without a timeout of its own (notebook 06, exercise 2);
- :func:`equal_weight_batchnorm` -- what ``SyncBatchNorm`` computes, in NumPy: the shards' statistics
  averaged with equal weight, whatever the shards' sizes (notebook 06, exercise 2).

Both LeNets use ReLU and max pooling (the modern variant, not the 1998 sigmoid/average-pool one):
with plain SGD they reach about 0.88 test accuracy on Fashion-MNIST in a few epochs. Every builder
seeds MXNet's generator and initialises the parameters *at once* (no deferred initialisation), so
the same seed gives the same initial weights whatever runs before it, on any number of devices:
Gluon draws every parameter once, on the CPU, and copies it to each device.
"""
import json
import os
import signal
import subprocess
import sys
import tempfile

import numpy as np
import mxnet as mx
from mxnet import autograd, init, nd
from mxnet.gluon import nn

from helpers import checks
from helpers.split import split_and_load

__all__ = ['LENET_SHAPES', 'init_lenet_params', 'lenet_scratch', 'replicate_params', 'lenet',
           'Residual', 'resnet18', 'batchnorm_step', 'sync_batchnorm_steps',  # noqa: F822 (Residual: __getattr__)
           'equal_weight_batchnorm']

# (name, shape) of the scratch LeNet's parameters, in the order of the list.
LENET_SHAPES = (
    ('conv1.weight', (6, 1, 5, 5)), ('conv1.bias', (6,)),
    ('conv2.weight', (16, 6, 5, 5)), ('conv2.bias', (16,)),
    ('fc1.weight', (120, 16 * 5 * 5)), ('fc1.bias', (120,)),
    ('fc2.weight', (84, 120)), ('fc2.bias', (84,)),
    ('fc3.weight', (10, 84)), ('fc3.bias', (10,)),
)


def init_lenet_params(seed=0):
    """LeNet's 10 parameters as NDArrays on the CPU: Xavier-uniform weights, zero biases, drawn from
    a NumPy generator seeded with ``seed`` -- the same values on any machine (notebook 05)."""
    rng = np.random.default_rng(checks.whole(seed, 'seed'))
    params = []
    for name, shape in LENET_SHAPES:
        fan_in, fan_out = np.prod(shape[1:]), shape[0] * np.prod(shape[2:])
        bound = np.sqrt(6 / (fan_in + fan_out))        # Glorot & Bengio (2010), as init.Xavier()
        value = rng.uniform(-bound, bound, shape) if name.endswith('weight') else np.zeros(shape)
        params.append(nd.array(value, dtype='float32'))
    return params


def lenet_scratch(X, params):
    """LeNet's forward pass: images ``X`` (n, 1, 28, 28) -> logits (n, 10), computed on the device
    where ``X`` and ``params`` live (notebook 05)."""
    checks.lenet(X, params, LENET_SHAPES)
    W1, b1, W2, b2, W3, b3, W4, b4, W5, b5 = params
    H = nd.relu(nd.Convolution(X, W1, b1, kernel=(5, 5), pad=(2, 2), num_filter=6))
    H = nd.Pooling(H, kernel=(2, 2), stride=(2, 2), pool_type='max')
    H = nd.relu(nd.Convolution(H, W2, b2, kernel=(5, 5), num_filter=16))
    H = nd.Pooling(H, kernel=(2, 2), stride=(2, 2), pool_type='max')
    H = nd.relu(nd.FullyConnected(H, W3, b3, num_hidden=120))   # flattens (n, 16, 5, 5) itself
    H = nd.relu(nd.FullyConnected(H, W4, b4, num_hidden=84))
    return nd.FullyConnected(H, W5, b5, num_hidden=10)


def replicate_params(params, device):
    """A copy of every parameter on ``device``, each with a gradient buffer there (notebook 05)."""
    checks.replica(params, device)
    replica = [p.copyto(device) for p in params]
    for p in replica:
        p.attach_grad()
    return replica


def lenet(devices, seed=0):
    """LeNet as a Gluon ``HybridSequential`` -- the layers of :func:`lenet_scratch` -- with its
    parameters initialised (Xavier, zero biases) on every device of ``devices`` right after
    ``mx.random.seed(seed)`` (notebook 06; used in 07, 08 and 09)."""
    devices = checks.devices(devices)
    net = nn.HybridSequential()
    net.add(nn.Conv2D(6, kernel_size=5, padding=2, activation='relu', in_channels=1),
            nn.MaxPool2D(pool_size=2, strides=2),
            nn.Conv2D(16, kernel_size=5, activation='relu', in_channels=6),
            nn.MaxPool2D(pool_size=2, strides=2),
            nn.Dense(120, activation='relu', in_units=16 * 5 * 5),
            nn.Dense(84, activation='relu', in_units=120),
            nn.Dense(10, in_units=84))
    mx.random.seed(checks.whole(seed, 'seed'))
    net.initialize(init.Xavier(), ctx=devices)
    return net


def __getattr__(name):
    """``Residual`` (:mod:`helpers._residual`) is imported the first time it is asked for (PEP 562),
    as it derives from d2l's block: importing d2l imports pandas and matplotlib's pyplot, some 0.5
    CPU seconds that every process importing this module would otherwise pay, each worker of a
    distributed job among them, which trains LeNet only."""
    if name == 'Residual':
        from helpers._residual import Residual
        return Residual
    raise AttributeError(f'module {__name__!r} has no attribute {name!r}')


def resnet18(devices, num_classes=10, width=64, seed=0):
    """d2l's ResNet-18 variant (``d2l.resnet18``, section "Concise Implementation for Multiple
    GPUs"), with ``width`` channels in its first stage (d2l: 64; the stages have width, 2 width,
    4 width and 8 width channels), initialised like d2l (``init.Normal(0.01)``) on every device
    right after ``mx.random.seed(seed)`` (notebook 06)."""
    devices = checks.devices(devices)
    width, num_classes = checks.whole(width, 'width', 1), checks.whole(num_classes, 'num_classes', 1)
    checks.fits(4 * len(devices) * (2_750 * width ** 2 + 8 * width * num_classes),    # ~11.2 M parameters at 64
                f'a ResNet-18 of width {width}, num_classes {num_classes}')

    from helpers._residual import Residual          # d2l imported here, not with this module (above)

    def stage(channels, first=False):
        blk = nn.Sequential()
        blk.add(Residual(channels) if first else Residual(channels, use_1x1conv=True, strides=2),
                Residual(channels))
        return blk

    net = nn.Sequential()
    net.add(nn.Conv2D(width, kernel_size=3, strides=1, padding=1), nn.BatchNorm(), nn.Activation('relu'),
            stage(width, first=True), stage(2 * width), stage(4 * width), stage(8 * width),
            nn.GlobalAvgPool2D(), nn.Dense(num_classes))
    mx.random.seed(checks.whole(seed, 'seed'))
    net.initialize(init.Normal(sigma=0.01), ctx=devices)
    net(nd.zeros((1, 1, 28, 28), ctx=devices[0]))      # finish deferred initialisation now
    return net


def batchnorm_step(layer, X, devices, weights=None):
    """A fresh normalisation ``layer`` (``nn.BatchNorm`` or ``SyncBatchNorm``) on the batch ``X``
    split over ``devices`` (notebook 06): initialise, forward in training mode, backward. Returns
    the outputs, in batch order, and each device's running mean after the step, as NumPy arrays."""
    checks.norm_layer(layer, devices)
    layer.initialize(ctx=devices)
    shards = split_and_load(X, devices, weights)
    with autograd.record():                   # training mode: normalise with batch statistics
        outs = [layer(shard) for shard in shards]
    for out in outs:
        out.backward()
    means = [layer.running_mean.data(d).asnumpy() for d in devices]
    return np.concatenate([out.asnumpy() for out in outs]), means


_SYNC_SCRIPT = """
import json, sys
import numpy as np
import mxnet as mx
from mxnet.gluon.contrib.nn import SyncBatchNorm
from helpers.models import batchnorm_step
folder, devices = sys.argv[1], [mx.Context(t, i) for t, i in json.loads(sys.argv[2])]
cases = json.load(open(folder + '/cases.json'))
for i, weights in enumerate(cases):
    X = mx.nd.array(np.load(f'{folder}/X{i}.npy'))
    out, means = batchnorm_step(SyncBatchNorm(num_devices=len(devices)), X, devices, weights)
    np.savez(f'{folder}/result{i}.npz', out, *means)
"""


def sync_batchnorm_steps(cases, devices, timeout=120, env=None):
    """:func:`batchnorm_step` of a ``SyncBatchNorm(num_devices=len(devices))`` for each ``(X, weights)``
    of ``cases`` (a fresh layer each), run in a fresh Python process (notebook 06). Returns a list of
    ``(outputs, running means)``, as :func:`batchnorm_step` does.

    ``SyncBatchNorm`` waits at a barrier until ``num_devices`` devices have arrived, with no timeout
    (``Barrier::Wait``, src/operator/contrib/sync_batch_norm-inl.h, MXNet 1.9.1). A wait that never
    ends would hang the caller for good, so the layer runs in a process of its own, in a session of
    its own, killed with everything it started after ``timeout`` seconds: then ``TimeoutError``.

    On CPU stand-ins the wait is certain never to end when the devices are more than the scratch
    buffers that all CPU contexts share (``MXNET_CPU_TEMP_COPY``, 4 by default; ``ResourceManagerImpl``,
    src/resource.cc): the backward pass of every device borrows one, two of them get the same one, and
    the engine runs those two one after the other, while the first waits at the barrier for the second.
    So the process gets at least one buffer per device, unless ``env`` (a dict added to its
    environment) sets ``MXNET_CPU_TEMP_COPY`` itself."""
    devices = checks.devices(devices)
    timeout, env = checks.seconds(timeout, 'timeout'), checks.environment(env)
    cases = checks.ordered(cases, 'cases')
    if not cases:
        raise ValueError('cases is empty: give at least one (X, weights)')
    for i, case in enumerate(cases):
        if not isinstance(case, (tuple, list)) or len(case) != 2:
            raise TypeError(f'cases[{i}] must be a pair (X, weights), got {case!r:.80}')
        X = checks.numeric(case[0], f'cases[{i}]: X')
        if X.ndim < 2 or len(X) < len(devices):
            raise ValueError(f'cases[{i}]: X must be a batch (n, channels, ...) of at least one example per '
                             f'device ({len(devices)}), got shape {X.shape}')
        if case[1] is not None:
            checks.weights(case[1], len(devices))
    with tempfile.TemporaryDirectory(prefix='mxdp-syncbn-') as folder:
        all_weights = []
        for i, (X, weights) in enumerate(cases):
            if weights is not None:
                checks.weights(weights, len(devices))
                weights = [float(w) for w in weights]
            np.save(os.path.join(folder, f'X{i}.npy'), X.asnumpy() if isinstance(X, nd.NDArray) else np.asarray(X))
            all_weights.append(weights)
        with open(os.path.join(folder, 'cases.json'), 'w') as f:
            json.dump(all_weights, f)
        where = json.dumps([[d.device_type, d.device_id] for d in devices])
        copies = max(int(os.environ.get('MXNET_CPU_TEMP_COPY', 4)), len(devices))
        env = {**os.environ, 'MXNET_CPU_TEMP_COPY': str(copies), **env}
        proc = subprocess.Popen([sys.executable, '-c', _SYNC_SCRIPT, folder, where], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env=env, start_new_session=True)
        try:
            _, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)            # the process and anything it started
            proc.communicate()
            raise TimeoutError(f'SyncBatchNorm on {devices} did not finish within {timeout:g} s: its '
                               'barrier waits without a timeout (notebook 06 says when it never '
                               'returns); the process was killed') from None
        if proc.returncode != 0:
            raise RuntimeError(f'SyncBatchNorm on {devices} failed: {err.strip().splitlines()[-3:]}')
        results = []
        for i in range(len(all_weights)):
            with np.load(os.path.join(folder, f'result{i}.npz')) as saved:
                arrays = [saved[f'arr_{j}'] for j in range(len(saved.files))]
            results.append((arrays[0], arrays[1:]))
        return results


def equal_weight_batchnorm(X, bounds, eps=1e-5):
    """What ``SyncBatchNorm`` outputs in training mode (scale 1, shift 0) for a batch ``X`` of shape
    (n, channels, ...) cut into shards at ``bounds`` (``[(begin, end), ...]``, one per device), in
    NumPy (notebook 06). Every shard's mean of x and of x**2, per channel, is averaged over the shards
    with equal weight, whatever their sizes, as ``SharedND::MeanReady`` does
    (src/operator/contrib/sync_batch_norm-inl.h, MXNet 1.9.1); the variance is the mean square minus
    the squared mean. With shards of equal size this is BatchNorm over the whole batch."""
    X, eps = checks.numeric(X, 'X').astype(np.float64), checks.positive(eps, 'eps')
    if X.ndim < 2:
        raise ValueError(f'X must be a batch of shape (n, channels, ...), got shape {X.shape}')
    bounds = checks.shard_bounds(bounds, len(X))
    axes = (0,) + tuple(range(2, X.ndim))                   # every axis but the channels'
    mean = np.mean([X[b:e].mean(axis=axes) for b, e in bounds], axis=0)
    square = np.mean([(X[b:e] ** 2).mean(axis=axes) for b, e in bounds], axis=0)
    shape = (1, -1) + (1,) * (X.ndim - 2)
    return (X - mean.reshape(shape)) / np.sqrt((square - mean ** 2).reshape(shape) + eps)
