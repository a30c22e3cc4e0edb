"""helpers.models (notebooks 05, 06): the scratch LeNet, the Gluon LeNet and d2l's ResNet-18, each
seeded and initialised in one call: the same seed gives the same weights on any number of devices."""
import numpy as np
import mxnet as mx
import pytest
from mxnet import nd
from d2l import mxnet as d2l

from helpers import lessoncheck
from helpers.models import (Residual, init_lenet_params, lenet, lenet_scratch,
                            replicate_params, resnet18)

DEVICES = [mx.cpu(0), mx.cpu(1)]


def values(net, ctx):
    return [p.data(ctx).asnumpy() for p in net.collect_params().values()]


def test_init_lenet_params_shapes_bounds_and_determinism():
    for seed in (0, 1, 7):                  # helpers.lessoncheck's law (the readers' check_init_lenet_params)
        lessoncheck.law_init_lenet_params(init_lenet_params, seed)


@pytest.mark.parametrize('seed,error', [(0.5, TypeError), ('0', TypeError), (True, TypeError), (-1, ValueError)])
def test_init_lenet_params_refuses_bad_seeds(seed, error):
    with pytest.raises(error, match='seed'):
        init_lenet_params(seed)


def test_scratch_lenet_equals_gluon_lenet_with_the_same_weights():
    """... on the device of its input (helpers.lessoncheck's law, the readers' check_lenet_scratch)."""
    for seed, n in ((0, 1), (3, 4)):
        lessoncheck.law_lenet_like_gluon(lenet_scratch, seed, n)


def test_scratch_lenet_computes_on_the_device_of_its_input():
    reps = replicate_params(init_lenet_params(0), mx.cpu(1))
    assert lenet_scratch(nd.zeros((2, 1, 28, 28), ctx=mx.cpu(1)), reps).context == mx.cpu(1)


def test_replicate_params_makes_independent_copies_with_gradient_buffers():
    for device in (0, 1, 3):                # helpers.lessoncheck's law (the readers' check_replicate_params)
        lessoncheck.law_replicate_params(replicate_params, device)


def test_lenet_same_seed_same_weights_on_any_number_of_devices():
    one, two, again, other = lenet(DEVICES[:1], 0), lenet(DEVICES, 0), lenet(DEVICES, 0), lenet(DEVICES, 1)
    mx.random.uniform(shape=(100,))                  # drawing in between changes nothing: lenet seeds
    for a, b, c, d in zip(values(one, DEVICES[0]), values(two, DEVICES[1]), values(again, DEVICES[0]),
                          values(other, DEVICES[0])):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(a, c)
        assert a.shape == d.shape
    assert any(not np.array_equal(a, d) for a, d in zip(values(one, DEVICES[0]), values(other, DEVICES[0])))
    for p in two.collect_params().values():           # initialised at once, on every device
        assert p.list_ctx() == DEVICES


def test_resnet18_is_d2ls_network_with_a_width_knob():
    net = resnet18(DEVICES, num_classes=7, width=4, seed=0)
    residuals = [b for stage in (net[3], net[4]) for b in stage._children.values()]
    assert all(isinstance(b, d2l.Residual) and type(b) is Residual for b in residuals)
    assert net[0].weight.shape == (4, 1, 3, 3) and net[-1].weight.shape == (7, 32)   # 8 x width
    out = net(nd.random.uniform(shape=(2, 1, 28, 28), ctx=mx.cpu(1)))
    assert out.shape == (2, 7) and out.context == mx.cpu(1)
    full = resnet18([mx.cpu(0)], 10, 64, 0)
    n = sum(p.data().size for p in full.collect_params().values())
    assert 11_000_000 < n < 11_300_000                # d2l's ResNet-18: about 11.2 million


def test_resnet18_same_seed_same_weights_on_1_and_k_devices():
    a, b = resnet18(DEVICES[:1], 10, 4, seed=5), resnet18(DEVICES, 10, 4, seed=5)
    for x, y in zip(values(a, DEVICES[0]), values(b, DEVICES[1])):
        np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize('kwargs,error', [({'num_classes': 0}, ValueError), ({'num_classes': 2.5}, TypeError),
                                          ({'width': 0}, ValueError), ({'width': True}, TypeError),
                                          ({'seed': -1}, ValueError)])
def test_resnet18_refuses_bad_arguments(kwargs, error):
    with pytest.raises(error):
        resnet18(DEVICES, **kwargs)


@pytest.mark.parametrize('devices,error', [(mx.cpu(0), TypeError), ([], ValueError),
                                           ([mx.cpu(0), mx.cpu(0)], ValueError)])
def test_builders_refuse_bad_device_lists(devices, error):
    for build in (lenet, resnet18):
        with pytest.raises(error):
            build(devices)
