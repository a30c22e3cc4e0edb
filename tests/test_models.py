"""helpers.models (notebooks 05, 06): the scratch LeNet, the Gluon LeNet and d2l's ResNet-18, each
seeded and initialised in one call: the same seed gives the same weights on any number of devices;
BatchNorm and SyncBatchNorm on shards, SyncBatchNorm at any number of devices without a hang."""
import time

import numpy as np
import mxnet as mx
import pytest
from mxnet import nd
from d2l import mxnet as d2l

from mxnet.gluon import nn

from helpers import lessoncheck
from helpers.models import (Residual, batchnorm_step, equal_weight_batchnorm, init_lenet_params,
                            lenet, lenet_scratch, replicate_params, resnet18, sync_batchnorm_steps)
from helpers.split import shard_bounds

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


def _sorted_batch(n, seed=0):
    X = np.random.default_rng(seed).normal(size=(n, 3, 4, 4)).astype(np.float32)
    X[n // 2:] += 3                    # a batch sorted by distribution: the shards' statistics differ
    return nd.array(X)


def test_batchnorm_step_is_batchnorm_of_the_whole_batch_on_one_device():
    X = _sorted_batch(8)
    out, means = batchnorm_step(nn.BatchNorm(), X, [mx.cpu(0)])
    np.testing.assert_allclose(out, equal_weight_batchnorm(X, [(0, 8)]), atol=1e-5)
    # one step of momentum 0.9 from a running mean of 0: a tenth of the batch's mean
    np.testing.assert_allclose(means[0], 0.1 * X.asnumpy().mean(axis=(0, 2, 3)), rtol=1e-4)


def test_plain_batchnorm_normalises_every_shard_on_its_own():
    X = _sorted_batch(8)
    out, means = batchnorm_step(nn.BatchNorm(), X, DEVICES)
    np.testing.assert_allclose(out, np.concatenate([equal_weight_batchnorm(X[:4], [(0, 4)]),
                                                    equal_weight_batchnorm(X[4:], [(0, 4)])]), atol=1e-5)
    assert np.abs(means[0] - means[1]).max() > 0.1


@pytest.mark.parametrize('k,weights', [(3, None), (3, [2, 1, 1]), (5, None)])
def test_sync_batchnorm_averages_the_shards_with_equal_weight_at_any_k(k, weights, monkeypatch):
    # issue 22: a batch of 8 on 3 devices splits 3, 3, 2 and missed the whole-batch statistics;
    # at 5 devices it hung (5 devices, 4 scratch buffers). Fewer buffers than devices in this
    # process's environment: sync_batchnorm_steps gives its own process one per device.
    monkeypatch.setenv('MXNET_CPU_TEMP_COPY', '2')
    devices = [mx.cpu(i) for i in range(k)]
    cases = [(_sorted_batch(8), weights), (_sorted_batch(4 * k), None)]
    (uneven, means), (even, _) = sync_batchnorm_steps(cases, devices)
    bounds = shard_bounds(8, k, weights)
    np.testing.assert_allclose(uneven, equal_weight_batchnorm(cases[0][0], bounds), atol=1e-5)
    assert np.abs(uneven - equal_weight_batchnorm(cases[0][0], [(0, 8)])).max() > 1e-2   # not the batch's
    np.testing.assert_allclose(even, equal_weight_batchnorm(cases[1][0], [(0, 4 * k)]), atol=1e-5)
    assert all(np.array_equal(m, means[0]) for m in means)          # one shared running mean


def test_sync_batchnorm_with_fewer_scratch_buffers_than_devices_never_returns():
    # the cause of issue 22's hang, shown both ways: with one buffer per device the process finishes,
    # with one buffer fewer the same run is stopped at a timeout three times as long
    devices = [mx.cpu(0), mx.cpu(1), mx.cpu(2)]
    cases = [(_sorted_batch(12), None)]
    start = time.perf_counter()
    sync_batchnorm_steps(cases, devices, env={'MXNET_CPU_TEMP_COPY': '3'})
    enough = time.perf_counter() - start
    with pytest.raises(TimeoutError, match='did not finish'):
        sync_batchnorm_steps(cases, devices, timeout=3 * enough, env={'MXNET_CPU_TEMP_COPY': '2'})


def test_batchnorm_helpers_refuse_bad_arguments():
    X = _sorted_batch(8)
    with pytest.raises(ValueError, match='distinct'):
        sync_batchnorm_steps([(X, None)], [mx.cpu(0), mx.cpu(0)])
    with pytest.raises(ValueError, match='timeout'):
        sync_batchnorm_steps([(X, None)], DEVICES, timeout=0)
    with pytest.raises(ValueError, match='weight'):
        sync_batchnorm_steps([(X, [1])], DEVICES)
    with pytest.raises(ValueError, match='shard'):
        equal_weight_batchnorm(X, [(0, 9)])
    with pytest.raises(ValueError, match='bounds'):
        equal_weight_batchnorm(X, [])
    with pytest.raises(ValueError):
        batchnorm_step(nn.BatchNorm(), X, [mx.cpu(0), mx.cpu(0)])
