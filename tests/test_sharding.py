"""The sharded optimizer of notebook 11 (helpers.sharding, helpers.memory): the sharded step takes the
replicated step, bit for bit with the ring and to rounding with notebook 05's allreduce, for k = 1..8
devices, sizes k does not divide and several dtypes; each device keeps 1/k of the optimizer state,
measured by MXNet's own storage counters; the wire carries the bytes of one allreduce."""
import json
import subprocess
import sys

import mxnet as mx
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from mxnet import nd

from helpers import lessoncheck, sharding
from helpers.comm import CommStats, all_gather, allreduce_ring, owner_chunk, reduce_scatter
from helpers.data import load_data_fashion_mnist
from helpers.memory import in_fresh_process
from helpers.models import init_lenet_params, replicate_params
from helpers.sharding import (Replica, adam_updaters, attach_flat_grad, comm_and_update, flat_replica,
                              make_replicas, state_elements, train_batch_replicated, train_batch_sharded,
                              zero_bytes)
from helpers.split import shard_bounds
from helpers.train import train_batch_scratch

CTX = [mx.cpu(i) for i in range(8)]


def flat_model(n, k, dtype, seed=0):
    """k replicas of a flat model of n parameters, with a different gradient on every device."""
    rng = np.random.default_rng(seed)
    params = [nd.array(rng.standard_normal(n), dtype=dtype)]
    replicas = make_replicas(params, CTX[:k])
    for r in replicas:
        r.grads[:] = nd.array(rng.standard_normal(n), dtype=dtype, ctx=r.grads.context)
    return replicas


@settings(max_examples=40, deadline=None)
@given(k=st.integers(1, 8), n=st.integers(1, 90), seed=st.integers(0, 2**16),
       dtype=st.sampled_from(['float16', 'float32', 'float64', 'int32']))
def test_the_ring_halves_for_every_dtype_and_uneven_size(k, n, seed, dtype):
    """reduce_scatter then all_gather is allreduce_ring, bit for bit, for float16 and int32 too, and
    after reduce_scatter device i holds the finished chunk owner_chunk(i, k) (notebooks 04, 11)."""
    n = max(n, k)
    rng = np.random.default_rng(seed)
    xs = [(rng.standard_normal(n) * 4).astype(dtype) for _ in range(k)]
    a = [nd.array(x, ctx=c, dtype=dtype) for x, c in zip(xs, CTX)]
    b = [nd.array(x, ctx=c, dtype=dtype) for x, c in zip(xs, CTX)]
    reduce_scatter(a)
    chunks = shard_bounds(n, k)
    for i in range(k):
        lo, hi = chunks[owner_chunk(i, k)]
        exact = np.sum(np.stack(xs).astype(np.float64), axis=0)[lo:hi]
        np.testing.assert_allclose(a[i].asnumpy()[lo:hi].astype(np.float64), exact,
                                   rtol=0 if dtype == 'int32' else 1e-2, atol=0 if dtype == 'int32' else 0.1)
    all_gather(a)
    allreduce_ring(b)
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x.asnumpy(), y.asnumpy())


@pytest.mark.parametrize('half', [reduce_scatter, all_gather])
def test_a_half_refuses_fewer_elements_than_devices_before_any_copy(half):
    arrays = [nd.full(3, i + 1, ctx=c) for i, c in enumerate(CTX[:4])]
    with pytest.raises(ValueError, match='at least 4 elements'):
        half(arrays)
    assert [a.asnumpy().tolist() for a in arrays] == [[i + 1] * 3 for i in range(4)]


@settings(max_examples=40, deadline=None)
@given(k=st.integers(1, 8), n=st.integers(1, 200), seed=st.integers(0, 2**16),
       dtype=st.sampled_from(['float32', 'float64']), steps=st.integers(1, 3))
def test_sharded_update_is_the_replicated_one_bit_for_bit(k, n, seed, dtype, steps):
    """Summed by the same ring, updated elementwise by Adam: the same bits, whatever k, n and dtype;
    each device keeps the state of its own chunk only."""
    n = max(n, k)
    a, b = flat_model(n, k, dtype, seed), flat_model(n, k, dtype, seed)
    ua, ub = adam_updaters(CTX[:k], 0.01, 8), adam_updaters(CTX[:k], 0.01, 8)
    rng = np.random.default_rng(seed + 1)
    for _ in range(steps):
        for x, y in zip(a, b):                           # a fresh gradient per device and step
            x.grads[:] = y.grads[:] = nd.array(rng.standard_normal(n), dtype=dtype, ctx=x.grads.context)
        comm_and_update(a, CTX[:k], ua, sharded=True)
        comm_and_update(b, CTX[:k], ub, sharded=False, sum_grads=allreduce_ring)
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x.weights.asnumpy(), y.weights.asnumpy())
        np.testing.assert_array_equal(x.weights.asnumpy(), a[0].weights.asnumpy())
    sizes = [e - s for s, e in shard_bounds(n, k)]
    assert state_elements(ua) == [2 * sizes[owner_chunk(i, k)] for i in range(k)]
    assert state_elements(ub) == [2 * n] * k


@pytest.mark.parametrize('case', lessoncheck.SHARDED_CASES)
def test_the_sharded_step_keeps_the_laws_of_the_readers_check(case):
    """helpers.lessoncheck's laws (the readers' check_train_batch_sharded), LeNet in float32: the replicated
    step's weights summed by the ring, bit for bit; Adam state for the own chunk only; one ring's bytes."""
    lessoncheck.law_sharded_step_is_the_replicated_one(train_batch_sharded, **case)
    lessoncheck.law_sharded_state_is_one_chunk(train_batch_sharded, **case)
    lessoncheck.law_sharded_bytes_are_one_ring_allreduce(train_batch_sharded, case['k'])


@pytest.mark.parametrize('k', [1, 2, 3, 4])
def test_sharded_lenet_step_is_notebook_05s_step_in_float64(k):
    """LeNet (61,706 parameters: not divisible by 3 or 4), 3 batches, float64: the sharded Adam step
    equals the replicated one (allreduce of notebook 05) to rounding (bit for bit with the ring: the law
    above); with SGD it equals notebook 05's train_batch_scratch itself to rounding. (A learning rate
    that float32 holds exactly: MXNet's optimizer operators take their hyperparameters as float32,
    SGDParam and AdamParam in src/operator/optimizer_op-inl.h.)"""
    devices = CTX[:k]
    params = [p.astype('float64') for p in init_lenet_params(0)]
    batches = [(X.astype('float64'), y) for X, y in load_data_fashion_mnist(32, n_train=96, seed=0)[0]]
    sharded, replicated = (make_replicas(params, devices) for _ in range(2))
    us, ur = (adam_updaters(devices, 1e-3, 32) for _ in range(2))
    sgd_sharded = make_replicas(params, devices)
    sgd = [mx.optimizer.get_updater(mx.optimizer.SGD(learning_rate=0.125, rescale_grad=1 / 32)) for _ in devices]
    scratch = [replicate_params(params, d) for d in devices]
    for X, y in batches:
        train_batch_sharded(X, y, sharded, devices, us)
        train_batch_replicated(X, y, replicated, devices, ur)
        train_batch_sharded(X, y, sgd_sharded, devices, sgd)
        train_batch_scratch(X, y, scratch, devices, 0.125)
    w = sharded[0].weights.asnumpy()
    assert np.abs(w - replicated[0].weights.asnumpy()).max() < 1e-12
    flat05 = np.concatenate([p.asnumpy().ravel() for p in scratch[0]])
    assert np.abs(sgd_sharded[0].weights.asnumpy() - flat05).max() < 1e-12
    for r in sharded:
        np.testing.assert_array_equal(r.weights.asnumpy(), w)
        for view, p in zip(r.params, params):          # the model's parameters are views of the flat array
            assert view.shape == p.shape


def test_bytes_on_the_wire_are_one_ring_allreduce():
    for k in (1, 2, 3, 5):
        n = 101
        replicas = flat_model(n, k, 'float32')
        stats, ring = CommStats(), CommStats()
        comm_and_update(replicas, CTX[:k], adam_updaters(CTX[:k], 0.01, 8), sharded=True, send=stats.send)
        allreduce_ring([nd.ones(n, ctx=c) for c in CTX[:k]], send=ring.send)
        assert stats.per_device(CTX[:k]) == ring.per_device(CTX[:k])
        assert stats.per_device(CTX[:k], 'received') == ring.per_device(CTX[:k], 'received')


@pytest.mark.parametrize('case', lessoncheck.FLAT_CASES)
def test_views_flat_replicas_and_flat_gradients_keep_the_laws_of_the_readers_checks(case):
    """helpers.lessoncheck's laws (the readers' check_views_of, check_flat_replica, check_attach_flat_grad)."""
    lessoncheck.law_views_of(sharding.views_of, **case)
    lessoncheck.law_flat_replica(flat_replica, **case)
    lessoncheck.law_attach_flat_grad(attach_flat_grad, **case)


@pytest.mark.parametrize('case', lessoncheck.REPLICATED_CASES)
def test_forward_backward_and_the_replicated_step_keep_the_laws_of_the_readers_checks(case):
    """helpers.lessoncheck's laws (the readers' check_forward_backward, check_train_batch_replicated)."""
    lessoncheck.law_forward_backward(sharding.forward_backward, case['k'], 2 * case['k'] + 1)
    lessoncheck.law_replicated_step_is_notebook_05s(train_batch_replicated, **case)


def test_flat_replica_views_share_the_flat_arrays():
    params = init_lenet_params(0)
    w, views = flat_replica(params, CTX[1])
    g = attach_flat_grad(w, views)
    assert w.shape == (61706,) and w.context == CTX[1] and g.shape == w.shape
    w[:] = 7
    assert all((v.asnumpy() == 7).all() for v in views)
    X = nd.ones((2, 1, 28, 28), ctx=CTX[1])
    with mx.autograd.record():
        out = sharding.lenet_scratch(X, views).sum()
    out.backward()
    assert np.abs(g.asnumpy()).sum() > 0                 # backward wrote into the flat gradient


@pytest.mark.parametrize('bad, error, match', [
    ('not a list', TypeError, 'list of flat replicas'),
    ('counts', ValueError, 'one of each per device'),
    ('device', ValueError, 'must be flat arrays of one shape on'),
    ('sizes', ValueError, 'copy of one model'),
    ('updater', TypeError, 'callable'),
    ('tuple', TypeError, 'weights, grads, params'),
    ('too small', ValueError, 'one chunk per device'),
    ('updaters', TypeError, 'one optimizer updater per device'),
])
def test_bad_input_is_refused_before_any_work(bad, error, match):
    devices = CTX[:3]
    replicas = flat_model(10, 3, 'float32')
    updaters = adam_updaters(devices, 0.01, 8)
    if bad == 'not a list':
        replicas = replicas[0].weights
    elif bad == 'counts':
        replicas = replicas[:2]
    elif bad == 'device':
        replicas[1] = Replica(replicas[1].weights.copyto(CTX[5]), replicas[1].grads, replicas[1].params)
    elif bad == 'sizes':
        replicas[2] = flat_model(11, 3, 'float32')[2]
    elif bad == 'updater':
        updaters[1] = 'adam'
    elif bad == 'tuple':
        replicas[0] = (replicas[0].weights,)
    elif bad == 'too small':
        replicas = flat_model(2, 3, 'float32')
    elif bad == 'updaters':
        updaters = updaters[0]
    whole = [r for r in (replicas if isinstance(replicas, list) else []) if isinstance(r, Replica)]
    kept = [r.weights.asnumpy().copy() for r in whole]
    with pytest.raises(error, match=match):
        comm_and_update(replicas, devices, updaters, sharded=True)
    for x, r in zip(kept, whole):                        # refused before any work
        np.testing.assert_array_equal(x, r.weights.asnumpy())
    with pytest.raises(TypeError):
        make_replicas([np.ones(3)], devices)
    with pytest.raises(TypeError):
        make_replicas(init_lenet_params(0), CTX[0])


def test_zero_formula_gives_the_papers_figure_1():
    """ZeRO paper, Figure 1: 7.5 B parameters, 64 devices, mixed-precision Adam (2 + 2 + 12 bytes)."""
    gb = [sum(zero_bytes(7_500_000_000, 64, 2, 2, 12, stage).values()) / 1e9 for stage in range(4)]
    assert [round(x, 1) for x in gb] == [120.0, 31.4, 16.6, 1.9]
    assert zero_bytes(100, 4) == {'weights': 400, 'gradients': 400, 'optimizer state': 200}
    with pytest.raises(ValueError):
        zero_bytes(100, 4, stage=4)
    with pytest.raises(TypeError):
        zero_bytes(1.5, 4)


def test_storage_meter_counts_what_mxnet_allocates_per_device():
    found = in_fresh_process('helpers.sharding.measure_memory', [[2, False], [3, True]], 1001)
    assert found[0] == {'weights': [4004] * 2, 'gradients': [4004] * 2, 'optimizer state': [8008] * 2}
    chunks = [e - b for b, e in shard_bounds(1001, 3)]
    assert found[1]['weights'] == [4004] * 3
    assert found[1]['optimizer state'] == [8 * chunks[owner_chunk(i, 3)] for i in range(3)]


METER_PROBE = """
import json
from mxnet import cpu, nd
from helpers.memory import StorageMeter
meter = StorageMeter()
try:
    before = meter.read()
    x = nd.zeros(1000, ctx=cpu(1))
    grown = meter.read()
    del x
    after = meter.read()
finally:
    meter.stop()
try:
    meter.read()
    refused = False
except RuntimeError:
    refused = True
print(json.dumps([before, grown, after, refused]))
"""


def test_storage_meter_sees_growth_and_frees_in_a_fresh_process():
    # A fresh process, as the meter's docstring asks: in this one, earlier tests' allocations leave
    # the profiler's counters at values the meter cannot know (it counts from when it started).
    out = subprocess.run([sys.executable, '-c', METER_PROBE], capture_output=True, text=True, timeout=120,
                         check=True)
    before, grown, after, refused = json.loads(out.stdout.splitlines()[-1])
    assert grown.get('cpu(1)', 0) - before.get('cpu(1)', 0) == 4000
    assert after.get('cpu(1)', 0) == before.get('cpu(1)', 0)
    assert refused


def test_in_fresh_process_refuses_bad_names_and_reports_failures():
    with pytest.raises(TypeError):
        in_fresh_process(len)
    with pytest.raises(RuntimeError, match='fresh process'):
        in_fresh_process('helpers.sharding.zero_bytes', -1, 2)
