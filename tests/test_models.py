"""helpers.models: the scratch LeNet, the Gluon LeNet and d2l's ResNet-18 (notebooks 05, 06)."""
import numpy as np
import mxnet as mx
import pytest
from mxnet import init, nd
from d2l import mxnet as d2l

from helpers.models import (LENET_SHAPES, Residual, init_lenet_params, lenet, lenet_scratch,
                            replicate_params, resnet18)


def test_init_lenet_params_shapes_and_determinism():
    a, b, c = init_lenet_params(0), init_lenet_params(0), init_lenet_params(1)
    assert [p.shape for p in a] == [shape for _, shape in LENET_SHAPES]
    for (name, _), p, q, r in zip(LENET_SHAPES, a, b, c):
        assert p.dtype == np.float32 and p.context == mx.cpu()
        np.testing.assert_array_equal(p.asnumpy(), q.asnumpy())
        if name.endswith('bias'):
            assert not p.asnumpy().any()
        else:
            assert not np.array_equal(p.asnumpy(), r.asnumpy())
            fan_in = int(np.prod(p.shape[1:]))
            fan_out = p.shape[0] * int(np.prod(p.shape[2:]))
            assert np.abs(p.asnumpy()).max() <= np.sqrt(6 / (fan_in + fan_out))


def test_init_lenet_params_rejects_non_int_seed():
    with pytest.raises(TypeError):
        init_lenet_params(0.5)


def test_scratch_lenet_equals_gluon_lenet_with_the_same_weights():
    params = init_lenet_params(3)
    net = lenet()
    net.initialize(init.Xavier())
    X = nd.random.uniform(shape=(4, 1, 28, 28))
    net(X)  # finish deferred initialisation
    gluon_params = list(net.collect_params().values())
    assert [p.shape for p in gluon_params] == [p.shape for p in params]
    for gp, p in zip(gluon_params, params):
        gp.set_data(p)
    out = lenet_scratch(X, params)
    assert out.shape == (4, 10)
    np.testing.assert_allclose(out.asnumpy(), net(X).asnumpy(), rtol=1e-5, atol=1e-6)


def test_replicate_params_makes_independent_copies_with_grads():
    params = init_lenet_params(0)
    r0, r1 = replicate_params(params, mx.cpu(0)), replicate_params(params, mx.cpu(1))
    assert all(p.context == mx.cpu(1) and p.grad is not None for p in r1)
    r1[0][:] = 0
    assert r0[0].asnumpy().any() and params[0].asnumpy().any()


def test_resnet18_is_d2ls_and_runs_on_classic_ndarrays():
    net = resnet18(10)
    residuals = [b for b in net[3]._children.values()]
    assert all(isinstance(b, d2l.Residual) and type(b) is Residual for b in residuals)
    net.initialize(init.Xavier(), ctx=[mx.cpu(0), mx.cpu(1)])
    out = net(nd.random.uniform(shape=(2, 1, 28, 28), ctx=mx.cpu(1)))
    assert out.shape == (2, 10) and out.context == mx.cpu(1)


@pytest.mark.parametrize('bad', [0, -1, 2.5, True])
def test_resnet18_rejects_bad_num_classes(bad):
    with pytest.raises(ValueError):
        resnet18(bad)
