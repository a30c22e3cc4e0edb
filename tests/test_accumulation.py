"""Gradient accumulation (helpers.accumulation, notebook 12): m micro-batches on k devices, then one
allreduce, take the step of the whole batch of k * m * b (float64, to rounding) and send the bytes of
one step, whatever m."""
import mxnet as mx
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from mxnet import nd

from helpers.accumulation import accumulating_replica, train_batch_accumulated
from helpers.comm import CommStats
from helpers.data import load_data_fashion_mnist
from helpers.models import init_lenet_params, replicate_params
from helpers.train import max_gap, train_batch_scratch

CTX = [mx.cpu(i) for i in range(8)]
PARAMS = [p.astype('float64') for p in init_lenet_params(0)]


@settings(max_examples=12, deadline=None)
@given(k=st.integers(1, 4), m=st.integers(1, 4), b=st.integers(1, 6))
def test_m_micro_batches_are_one_step_of_the_whole_batch(k, m, b):
    b = max(b, k)                                        # every device gets an example of every micro-batch
    devices = CTX[:k]
    it, _ = load_data_fashion_mnist(b, n_train=2 * m * b, seed=k)
    micro = [(X.astype('float64'), y) for X, y in it]
    acc = [accumulating_replica(PARAMS, d) for d in devices]
    ref = [replicate_params(PARAMS, d) for d in devices]
    stats = CommStats()
    for step in range(2):
        batch = micro[step * m:(step + 1) * m]
        losses = train_batch_accumulated(batch, acc, devices, 0.1, send=stats.send)
        assert len(losses) == m * k
        X = nd.concat(*[x for x, _ in batch], dim=0)
        y = nd.concat(*[t for _, t in batch], dim=0)
        train_batch_scratch(X, y, ref, devices, 0.1)
    assert max_gap(acc[0], ref[0]) < 1e-12
    assert all(max_gap(r, acc[0]) == 0 for r in acc)
    assert all((p.grad.asnumpy() == 0).all() for r in acc for p in r)     # ready for the next step
    one = CommStats()                                    # the bytes of one step, whatever m
    train_batch_accumulated(micro[:1], acc, devices, 0.1, send=one.send)
    assert [2 * x for x in one.per_device(devices)] == stats.per_device(devices)


def test_accumulating_replicas_add_and_plain_ones_overwrite():
    p = accumulating_replica([nd.ones(3)], CTX[1])[0]
    for _ in range(2):
        with mx.autograd.record():
            (p * 2).sum().backward()
    assert p.grad.asnumpy().tolist() == [4.0, 4.0, 4.0]


def test_bad_input_is_refused():
    X, y = next(iter(load_data_fashion_mnist(4, n_train=4)[0]))
    acc = [accumulating_replica(init_lenet_params(0), d) for d in CTX[:2]]
    with pytest.raises(ValueError, match='one replica per device'):
        train_batch_accumulated([(X, y)], acc, CTX[:3], 0.1)
    with pytest.raises(ValueError, match='lives on'):
        train_batch_accumulated([(X, y)], acc[::-1], CTX[:2], 0.1)
    np.testing.assert_array_equal(acc[0][0].asnumpy(), init_lenet_params(0)[0].asnumpy())
