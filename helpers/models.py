"""The networks the series trains: LeNet (by hand and in Gluon) and d2l's ResNet-18 (notebooks 05, 06).

- :func:`init_lenet_params`, :func:`lenet_scratch`, :func:`replicate_params` -- LeNet as a list of
  NDArrays and a forward function, trained entirely by hand in notebook 05;
- :func:`lenet` -- the same architecture as a Gluon ``HybridSequential``, seeded and initialised on
  the devices in one call (notebooks 06-09);
- :func:`resnet18` -- d2l's ResNet-18 variant for 28x28 images (3x3 first convolution, no max
  pooling), with a ``width`` knob: ``width=64`` is d2l's network, smaller widths keep the same
  architecture with fewer channels, which CPU stand-ins can train in a minute (notebook 06).

Both LeNets use ReLU and max pooling (the modern variant, not the 1998 sigmoid/average-pool one):
with plain SGD they reach about 0.88 test accuracy on Fashion-MNIST in a few epochs. Every builder
seeds MXNet's generator and initialises the parameters *at once* (no deferred initialisation), so
the same seed gives the same initial weights whatever runs before it, on any number of devices:
Gluon draws every parameter once, on the CPU, and copies it to each device.
"""
import numpy as np
import mxnet as mx
from mxnet import init, nd
from mxnet.gluon import nn
from d2l import mxnet as d2l

from helpers import checks

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


class Residual(d2l.Residual):
    """d2l's residual block -- the same layers, built by d2l's own ``__init__`` -- with a forward pass
    that also accepts classic ``mx.nd`` arrays (notebook 06).

    d2l 1.0.3's ``Residual.forward`` calls ``npx.relu``, which only takes ``mx.np`` arrays; the
    series works with classic NDArrays (``mx.nd``), so only the two ``relu`` calls differ here."""

    def forward(self, X):
        relu = mx.npx.relu if isinstance(X, mx.np.ndarray) else nd.relu
        Y = relu(self.bn1(self.conv1(X)))
        Y = self.bn2(self.conv2(Y))
        if self.conv3:
            X = self.conv3(X)
        return relu(Y + X)


def resnet18(devices, num_classes=10, width=64, seed=0):
    """d2l's ResNet-18 variant (``d2l.resnet18``, section "Concise Implementation for Multiple
    GPUs"), with ``width`` channels in its first stage (d2l: 64; the stages have width, 2 width,
    4 width and 8 width channels), initialised like d2l (``init.Normal(0.01)``) on every device
    right after ``mx.random.seed(seed)`` (notebook 06)."""
    devices = checks.devices(devices)
    width, num_classes = checks.whole(width, 'width', 1), checks.whole(num_classes, 'num_classes', 1)
    checks.fits(4 * len(devices) * (2_750 * width ** 2 + 8 * width * num_classes),    # ~11.2 M parameters at 64
                f'a ResNet-18 of width {width}, num_classes {num_classes}')

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
