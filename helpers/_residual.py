"""d2l's residual block for :func:`helpers.models.resnet18`, which also exports it as
``helpers.models.Residual``. A module of its own because it derives from d2l's class: importing d2l
imports pandas and matplotlib's pyplot, some 0.5 CPU seconds, so :mod:`helpers.models` imports this
module only when a ResNet is built or ``Residual`` is asked for, not in every process that trains
LeNet (each worker of a distributed job)."""
import mxnet as mx
from mxnet import nd
from d2l import mxnet as d2l

__all__ = ['Residual']


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
