"""The networks the series trains: LeNet (from scratch and in Gluon) and d2l's ResNet-18.

- :func:`init_lenet_params` / :func:`lenet_scratch` -- LeNet as a plain list of NDArrays and a
  forward function, trained entirely by hand in notebook 05;
- :func:`lenet` -- the same architecture as a Gluon ``HybridSequential`` (notebooks 06, 07, 08);
- :func:`resnet18` -- d2l's slightly modified ResNet-18 for 28x28 inputs (notebook 06).

Both LeNets use ReLU and max pooling (the modern variant, not the 1998 sigmoid/average-pool one):
with plain SGD they reach about 0.88 test accuracy on Fashion-MNIST within a few epochs, where the
sigmoid version needs ten or more. The scratch and the Gluon LeNet have the same layers, shapes and
initialisation scheme (Xavier-uniform weights, zero biases).
"""
import numpy as np
import mxnet as mx
from mxnet import nd
from mxnet.gluon import nn
from d2l import mxnet as d2l

__all__ = ['LENET_SHAPES', 'init_lenet_params', 'lenet_scratch', 'replicate_params', 'lenet',
           'Residual', 'resnet18']

# (name, shape) of the scratch LeNet's parameters, in the order of the list.
LENET_SHAPES = (
    ('conv1.weight', (6, 1, 5, 5)), ('conv1.bias', (6,)),
    ('conv2.weight', (16, 6, 5, 5)), ('conv2.bias', (16,)),
    ('fc1.weight', (120, 16 * 5 * 5)), ('fc1.bias', (120,)),
    ('fc2.weight', (84, 120)), ('fc2.bias', (84,)),
    ('fc3.weight', (10, 84)), ('fc3.bias', (10,)),
)


def _xavier_uniform(rng, shape):
    """Glorot/Xavier uniform: U(-a, a), a = sqrt(6 / (fan_in + fan_out)) (as ``init.Xavier()``)."""
    receptive = int(np.prod(shape[2:])) if len(shape) > 2 else 1
    fan_in, fan_out = shape[1] * receptive, shape[0] * receptive
    a = np.sqrt(6.0 / (fan_in + fan_out))
    return rng.uniform(-a, a, size=shape).astype(np.float32)


def init_lenet_params(seed=0, ctx=None):
    """LeNet's parameters as a list of 10 NDArrays (weights Xavier-uniform, biases zero) on ``ctx``.

    Created *once*, from a NumPy generator seeded with ``seed``: the same seed gives the same
    values on any machine, whatever the number of devices used later (notebook 05).
    """
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f'seed must be an int, got {seed!r}')
    rng = np.random.default_rng(seed)
    ctx = ctx or mx.cpu()
    return [nd.array(_xavier_uniform(rng, shape) if name.endswith('weight')
                     else np.zeros(shape, np.float32), ctx=ctx)
            for name, shape in LENET_SHAPES]


def lenet_scratch(X, params):
    """Forward pass of the from-scratch LeNet: ``X`` of shape (n, 1, 28, 28) -> logits (n, 10).

    Every parameter must be on the same device as ``X`` (notebook 05)."""
    W1, b1, W2, b2, W3, b3, W4, b4, W5, b5 = params
    H = nd.relu(nd.Convolution(X, W1, b1, kernel=(5, 5), pad=(2, 2), num_filter=6))
    H = nd.Pooling(H, kernel=(2, 2), stride=(2, 2), pool_type='max')
    H = nd.relu(nd.Convolution(H, W2, b2, kernel=(5, 5), num_filter=16))
    H = nd.Pooling(H, kernel=(2, 2), stride=(2, 2), pool_type='max')
    H = nd.relu(nd.FullyConnected(H, W3, b3, num_hidden=120))   # flattens (n, 16, 5, 5) itself
    H = nd.relu(nd.FullyConnected(H, W4, b4, num_hidden=84))
    return nd.FullyConnected(H, W5, b5, num_hidden=10)


def replicate_params(params, device):
    """Copy every parameter to ``device`` and attach a gradient buffer there (notebook 05).

    The copies are independent arrays: updating one device's replica does not touch another's."""
    new_params = [p.copyto(device) for p in params]
    for p in new_params:
        p.attach_grad()
    return new_params


def lenet():
    """LeNet as a Gluon ``HybridSequential`` (uninitialised): the same layers as
    :func:`lenet_scratch`. Initialise with ``net.initialize(init.Xavier(), ctx=devices)``
    (notebook 06; used again in 07 and 08)."""
    net = nn.HybridSequential()
    net.add(nn.Conv2D(6, kernel_size=5, padding=2, activation='relu'),
            nn.MaxPool2D(pool_size=2, strides=2),
            nn.Conv2D(16, kernel_size=5, activation='relu'),
            nn.MaxPool2D(pool_size=2, strides=2),
            nn.Dense(120, activation='relu'),
            nn.Dense(84, activation='relu'),
            nn.Dense(10))
    return net


class Residual(d2l.Residual):
    """d2l's residual block -- the same layers, built by d2l's own ``__init__`` -- with a forward
    pass that also accepts classic ``mx.nd`` arrays.

    d2l 1.0.3's ``Residual.forward`` calls ``npx.relu``, which only takes ``mx.np`` arrays; the
    series works with classic NDArrays (``mx.nd``), so only the two ``relu`` calls differ here."""

    def forward(self, X):
        relu = nd.relu if isinstance(X, nd.NDArray) and not isinstance(X, mx.np.ndarray) \
            else mx.npx.relu
        Y = relu(self.bn1(self.conv1(X)))
        Y = self.bn2(self.conv2(Y))
        if self.conv3:
            X = self.conv3(X)
        return relu(Y + X)


def resnet18(num_classes=10):
    """d2l's ResNet-18 variant for small images (``d2l.resnet18``: 3x3 first convolution, no max
    pooling), uninitialised, with its residual blocks switched to :class:`Residual` so it runs on
    classic NDArrays (notebook 06). Initialise with ``net.initialize(init.Normal(sigma=0.01), ...)``
    as d2l does, or ``init.Xavier()``."""
    if isinstance(num_classes, bool) or not isinstance(num_classes, (int, np.integer)) or num_classes < 1:
        raise ValueError(f'num_classes must be a positive whole number, got {num_classes!r}')
    net = d2l.resnet18(int(num_classes))
    stack = [net]
    while stack:
        block = stack.pop()
        if type(block) is d2l.Residual:
            block.__class__ = Residual  # same attributes, only forward differs
        stack.extend(block._children.values())
    return net
