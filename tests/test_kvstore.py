"""helpers.kvstore (notebook 07): push sums, 2-bit compression with error feedback, weighted steps."""
import numpy as np
import mxnet as mx
import pytest
from hypothesis import given, settings, strategies as st
from mxnet import gluon, init

from helpers import kvstore as kvs
from helpers.models import lenet
from helpers.train import train_batch

DEVICES = [mx.cpu(0), mx.cpu(1)]


def test_pushpull_seconds_measures_and_checks_the_sum():
    for kv_type in kvs.STORE_TYPES:
        assert kvs.pushpull_seconds(kv_type, DEVICES, 1000, repeat=2) > 0


def test_bad_arguments():
    with pytest.raises(ValueError):
        kvs.pushpull_seconds('dist_sync', DEVICES, 10)
    with pytest.raises(ValueError):
        kvs.pushpull_seconds('local', DEVICES, 0)
    with pytest.raises(ValueError):
        kvs.compressed_pushes(np.zeros((2, 2)), 3)
    with pytest.raises(ValueError):
        kvs.compressed_pushes([1.0], 0)
    with pytest.raises(ValueError):
        kvs.store_memory('local', size=-1)


@settings(max_examples=15, deadline=None)
@given(st.lists(st.floats(-2, 2, width=32), min_size=1, max_size=6),
       st.integers(1, 6), st.sampled_from([0.25, 0.5, 1.0]))
def test_compression_sends_levels_and_keeps_the_rest(values, steps, tau):
    g = np.array(values, dtype=np.float32)
    received = kvs.compressed_pushes(g, steps, threshold=tau)
    assert received.shape == (steps, len(g))
    assert set(np.unique(received)) <= {-tau, 0.0, tau}
    # error feedback: for values below the threshold, what was sent never lags by tau or more
    lag = np.abs(np.arange(1, steps + 1)[:, None] * g - np.cumsum(received, axis=0))
    small = np.abs(g) < tau
    assert np.all(lag[:, small] < tau + 1e-5)


def test_compression_example_of_notebook_07():
    received = kvs.compressed_pushes([0.3], 6, threshold=0.5)[:, 0]
    assert received.tolist() == [0.0, 0.5, 0.0, 0.5, 0.5, 0.0]


def test_local_store_refuses_compression():
    with pytest.raises(Exception, match='not supported'):
        mx.kv.create('local').set_gradient_compression({'type': '2bit', 'threshold': 0.5})


def _one_step(weights):
    mx.random.seed(0)
    net = lenet()
    net.initialize(init.Xavier(), ctx=DEVICES)
    trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.1}, kvstore='device')
    rng = np.random.default_rng(0)
    X = mx.nd.array(rng.random((32, 1, 28, 28), dtype=np.float32))
    y = mx.nd.array(rng.integers(0, 10, 32), dtype='int32')
    metrics = train_batch(net, X, y, gluon.loss.SoftmaxCrossEntropyLoss(), trainer, DEVICES,
                          weights=weights)
    loss = sum(m[0].asscalar() for m in metrics)  # per device: [loss sum, correct predictions]
    return loss, [p.data(d).asnumpy() for p in net.collect_params().values() for d in DEVICES]


def test_weighted_split_gives_the_same_step():
    loss_even, even = _one_step(None)
    loss_weighted, weighted = _one_step([3, 1])
    assert np.isclose(loss_even, loss_weighted, rtol=1e-5)
    assert all(np.allclose(a, b, atol=1e-5) for a, b in zip(even, weighted))


def test_store_memory_counts_two_arrays_per_key():
    m = kvs.store_memory('local', num_devices=2, size=4_000_000)
    assert 1.5 < (m['init_mb'] + m['first_push_mb']) / m['array_mb'] < 2.5
