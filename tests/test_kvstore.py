"""helpers.kvstore (notebook 07): where the device store sums each key, what a store holds per key,
push sums, 2-bit compression with error feedback."""

import numpy as np
import mxnet as mx
import pytest
from hypothesis import given, settings, strategies as st
from mxnet import gluon

from helpers import kvstore as kvs, lessoncheck
from helpers.models import lenet
from helpers.tracing import traceable
from helpers.train import train_batch

DEVICES = [mx.cpu(0), mx.cpu(1)]


# the stand-ins MXNet's profiler can show (helpers.tracing.traceable), at most 4
PROFILER_STANDINS = len(traceable([mx.cpu(i) for i in range(4)]))


@settings(max_examples=20, deadline=None)
@given(st.lists(st.integers(1, 100_000), min_size=1, max_size=12, unique=True), st.integers(2, PROFILER_STANDINS))
def test_merge_buffer_owners_is_where_mxnet_sums(sizes, k):
    # distinct sizes: MXNet sorts keys with std::sort, whose order among equal sizes is unspecified
    assert kvs.merge_buffer_owners(sizes, k) == kvs.reduce_owners(sizes, [mx.cpu(i) for i in range(k)])


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(1, 10**9), min_size=1, max_size=30), st.integers(1, 8))
def test_merge_buffer_owners_balances_greedily(sizes, k):
    """helpers.lessoncheck's laws (the readers' check_merge_buffer_owners): one device per key, the largest
    on device 0, loads never more than one key apart; for distinct sizes, the greedy rule's devices."""
    lessoncheck.law_merge_owners_balanced(kvs.merge_buffer_owners, sizes, k)
    if len(set(sizes)) == len(sizes):
        lessoncheck.law_merge_owners_greedy(kvs.merge_buffer_owners, sizes, k)


def test_one_huge_key_has_a_device_to_itself():
    sizes = [102_760_448, 16_777_216, 4_096_000] + [4096] * 10    # VGG-16's three dense layers, and biases
    owners = kvs.merge_buffer_owners(sizes, 4)
    assert owners[0] == 0 and 0 not in owners[1:]


def test_bad_arguments():
    for bad in ('a fractional size', 'a size of 0', 'no device'):      # helpers.lessoncheck's law
        lessoncheck.law_merge_owners_refuses_bad_input(kvs.merge_buffer_owners, bad)
    with pytest.raises(ValueError):
        kvs.reduce_owners([10], [mx.cpu(0)])
    with pytest.raises(ValueError, match='cannot show'):        # beyond the profiler's lanes
        kvs.reduce_owners([10], [mx.cpu(0), mx.cpu(1), mx.cpu(len(traceable([mx.cpu(i) for i in range(99)])))])
    with pytest.raises(ValueError):
        kvs.pushpull_seconds('dist_sync', DEVICES, 10)
    with pytest.raises(ValueError):
        kvs.pushpull_seconds('local', DEVICES, 0)
    with pytest.raises(ValueError):
        kvs.compressed_pushes(np.zeros((2, 2)), 3)
    with pytest.raises(ValueError):
        kvs.compressed_pushes([1.0], 0)
    with pytest.raises(ValueError):
        kvs.store_memory([('local', 'adam')], 2)
    with pytest.raises(ValueError):
        kvs.store_memory([('nccl', None)], 2)


def test_store_memory_per_key_depends_on_k():
    # k = 1 and 3: neither of the notebook's usual 2 and 4, measured in one process. Merge buffer +
    # k - 1 copy buffers (none at k = 1); an optimizer on the store adds its weights and momentum;
    # 2-bit compression k copy buffers, k residuals and 2k - 1 arrays of 1/16: arrays_per_key
    cases = [('local', None), ('device', None), ('device', 'momentum'), ('device', '2bit')]
    found = kvs.store_memory(cases, [1, 3])
    for k, row in zip((1, 3), found):
        for (kv_type, extra), arrays in zip(cases, row):
            # the nearest whole count of arrays: beside a second test suite at load 8, the local store at
            # k = 4 came out more than a quarter of an array off twice (issue 35), and the 1/16-size arrays
            # of 2-bit compression may reuse freed heap memory
            assert abs(arrays - kvs.arrays_per_key(k, extra)) < 0.5, (k, extra, arrays)
    assert kvs.store_memory(cases[:1], 3)[0] == pytest.approx(found[1][0], abs=0.25)   # one k: a flat list


def test_arrays_per_key_is_the_model_of_the_source():
    assert [kvs.arrays_per_key(k) for k in (1, 2, 3, 8)] == [0, 2, 3, 8]
    assert [kvs.arrays_per_key(k, 'momentum') for k in (1, 2, 8)] == [2, 4, 10]
    assert [kvs.arrays_per_key(k, 'sgd') for k in (1, 4)] == [1, 5]
    assert kvs.arrays_per_key(2, '2bit') == 5 + 3 / 16
    with pytest.raises(ValueError, match='extra'):
        kvs.arrays_per_key(2, 'adam')
    with pytest.raises(ValueError, match='k'):
        kvs.arrays_per_key(0)
    with pytest.raises(TypeError, match='k'):
        kvs.arrays_per_key(2.0)
    with pytest.raises(ValueError, match='empty'):
        kvs.store_memory([('local', None)], [])


def test_pushpull_seconds_measures_and_checks_the_sum():
    for kv_type in kvs.STORE_TYPES:
        assert kvs.pushpull_seconds(kv_type, DEVICES, 1000, repeat=2) > 0


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
    net = lenet(DEVICES, seed=0)
    trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.1}, kvstore='device')
    rng = np.random.default_rng(0)
    X = mx.nd.array(rng.random((32, 1, 28, 28), dtype=np.float32))
    y = mx.nd.array(rng.integers(0, 10, 32), dtype='int32')
    loss = sum(l.asscalar() for l in train_batch(net, X, y, trainer, DEVICES, weights))
    return loss, [p.data(d).asnumpy() for p in net.collect_params().values() for d in DEVICES]


def test_the_store_sums_the_whole_batch_gradient_however_it_was_split():
    loss_even, even = _one_step(None)
    loss_weighted, weighted = _one_step([3, 1])
    assert np.isclose(loss_even, loss_weighted, rtol=1e-5)
    assert all(np.allclose(a, b, atol=1e-5) for a, b in zip(even, weighted))


def test_updates_on_store_follows_the_16_m_rule_for_local_only(monkeypatch):
    monkeypatch.delenv('MXNET_UPDATE_ON_KVSTORE', raising=False)
    assert kvs.updates_on_store('local', 4, [2 ** 24, 10])            # exactly 2**24: still on the store
    assert not kvs.updates_on_store('local', 4, [2 ** 24 + 1, 10])    # more: on the devices
    assert kvs.updates_on_store('device', 4, [2 ** 27])               # only the name 'local' counts
    assert not kvs.updates_on_store('device', 1, [10])                # one device: no store at all
    monkeypatch.setenv('MXNET_UPDATE_ON_KVSTORE', '0')
    assert not kvs.updates_on_store('device', 4, [10])
    with pytest.raises(ValueError):
        kvs.updates_on_store('local', 4, [])
    with pytest.raises(ValueError):
        kvs.updates_on_store('local', 0, [10])


@pytest.mark.parametrize('size', [10, 2 ** 24 + 1])
def test_updates_on_store_is_the_choice_of_gluons_trainer(size):
    # a real Trainer on two devices, left to choose, with one parameter of this size
    param = gluon.Parameter('w', shape=(size,))
    param.initialize(ctx=DEVICES)
    trainer = gluon.Trainer([param], 'sgd', {'learning_rate': 0.1}, kvstore='local')
    trainer._init_kvstore()
    assert trainer._update_on_kvstore == kvs.updates_on_store('local', len(DEVICES), [size]) == (size <= 2 ** 24)
