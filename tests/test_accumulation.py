"""Gradient accumulation (helpers.accumulation, notebook 13): m micro-batches on k devices, then one
allreduce, take the step of the whole batch of k * m * b (float64, to rounding) and send the bytes of
one step, whatever m."""
import mxnet as mx
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from mxnet import nd

from helpers import lessoncheck
from helpers.accumulation import accumulating_replica, train_batch_accumulated
from helpers.data import load_data_fashion_mnist
from helpers.models import init_lenet_params

CTX = [mx.cpu(i) for i in range(8)]


@settings(max_examples=12, deadline=None)
@given(k=st.integers(1, 4), m=st.integers(1, 4), b=st.integers(1, 6))
def test_m_micro_batches_are_one_step_of_the_whole_batch(k, m, b):
    """helpers.lessoncheck's laws (the readers' check_train_batch_accumulated): one step of the whole batch,
    twice in a row (float64, to 1e-12), replicas identical, gradients zero after, m * k losses; and the
    bytes of one allreduce per parameter, whatever m."""
    b = max(b, k)                                        # every device gets an example of every micro-batch
    lessoncheck.law_accumulation_is_one_big_step(train_batch_accumulated, k, m, b)
    lessoncheck.law_accumulation_communicates_once(train_batch_accumulated, k, m, b)


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
