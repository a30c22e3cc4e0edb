"""16-bit gradients on the wire and loss scaling (helpers.precision, notebook 13): exactly half the
bytes for k = 1..8 and any size, the float16 sum on every device, what the cast does to small and large
values, the dynamic scale's rule, a step that skips on overflow, and what MXNet's AMP does on CPU."""
import mxnet as mx
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from mxnet import nd

from helpers import lessoncheck
from helpers.comm import CommStats, allreduce
from helpers.data import load_data_fashion_mnist
from helpers.memory import in_fresh_process
from helpers.models import init_lenet_params, replicate_params
from helpers.precision import (FP16_MAX, FP16_MIN_NORMAL, FP16_TINY, all_finite, allreduce_fp16, float16_fate,
                               next_scale, train_batch_fp16, train_fp16)
from helpers.train import max_gap

CTX = [mx.cpu(i) for i in range(8)]


@settings(max_examples=40, deadline=None)
@given(k=st.integers(1, 8), n=st.integers(1, 300), seed=st.integers(0, 2**16))
def test_float16_on_the_wire_sends_exactly_half_and_sums_in_float16(k, n, seed):
    """helpers.lessoncheck's laws (the readers' check_allreduce_fp16): in place, the float16 sum, identical
    bits on every device, float32 kept; half the bytes of the same allreduce."""
    lessoncheck.law_fp16_sums(allreduce_fp16, k, n, seed)
    lessoncheck.law_fp16_bytes_are_half(allreduce_fp16, k, n)


def test_float16_bytes_are_exactly_half_of_the_same_algorithms():
    for k in range(1, 9):
        for n in (k, 1000, 1001):
            full, half = CommStats(), CommStats()
            allreduce([nd.ones(n, ctx=c) for c in CTX[:k]], send=full.send)
            allreduce_fp16([nd.ones(n, ctx=c) for c in CTX[:k]], send=half.send)
            assert [2 * b for b in half.per_device(CTX[:k])] == full.per_device(CTX[:k])     # of allreduce itself
            assert half.messages == full.messages


def test_integers_are_refused_where_float16_would_round_them():
    """float16 holds every integer only up to 2048: [3001, 1] + [2, 1] would come back [3002, 2]. The
    16-bit allreduce refuses integers, untouched, and says what it takes; allreduce adds them exactly."""
    grads = [nd.array([3001, 1], ctx=c, dtype='int32') for c in CTX[:2]]
    with pytest.raises(TypeError, match='floating-point arrays .* got int32.* exact'):
        allreduce_fp16(grads)
    assert [g.asnumpy().tolist() for g in grads] == [[3001, 1], [3001, 1]]
    assert allreduce(grads)[0].asnumpy().tolist() == [6002, 2]


def test_what_the_cast_does():
    values = np.array([FP16_TINY / 4, FP16_TINY * 3, FP16_MIN_NORMAL * 2, 1.0, 1e5, 0.0])
    fate = float16_fate(values)
    assert fate == {'zero': 0.2, 'subnormal': 0.2, 'inf': 0.2, 'normal': 0.4, 'nan': 0.0}   # the 0 is not counted
    scaled = float16_fate(values, scale=2 ** 10)                  # everything moves up by 10 binades
    assert scaled == {'zero': 0.0, 'subnormal': 0.2, 'inf': 0.2, 'normal': 0.6, 'nan': 0.0}
    assert float16_fate(np.array([np.nan, 1.0])) == {'zero': 0.0, 'subnormal': 0.0, 'inf': 0.0, 'normal': 0.5,
                                                      'nan': 0.5}       # every non-zero entry counted once
    assert float16_fate(np.array([np.inf, -np.inf, np.nan, 1e-9]))['inf'] == 0.5
    assert float16_fate(nd.array([FP16_MAX]))['normal'] == 1.0
    with pytest.raises(TypeError):
        float16_fate(np.arange(3))
    with pytest.raises(ValueError):
        float16_fate(np.zeros(3))
    with pytest.raises(ValueError):
        float16_fate(values, scale=-1)


@pytest.mark.parametrize('case', lessoncheck.SCALE_CASES)
def test_next_scale_halves_on_overflow_and_doubles_after_the_interval(case):
    """helpers.lessoncheck's law (the readers' check_next_scale), step by step."""
    lessoncheck.law_next_scale(next_scale, **case)


@settings(max_examples=30, deadline=None)
@given(updates=st.lists(st.booleans(), min_size=1, max_size=20), interval=st.integers(1, 5))
def test_next_scale_on_any_run_of_steps(updates, interval):
    lessoncheck.law_next_scale(next_scale, updates, interval, 2.0 ** 16)


def test_all_finite():
    assert all_finite([nd.ones(3), nd.zeros(2)])
    assert not all_finite([nd.ones(3), nd.array([np.inf])])
    assert not all_finite([nd.array([np.nan])])


@pytest.mark.parametrize('case', lessoncheck.FP16_STEP_CASES)
def test_the_loss_scaled_step_keeps_the_laws_of_the_readers_check(case):
    """helpers.lessoncheck's law (the readers' check_train_batch_fp16): skipped on overflow, else notebook
    05's step to float16 rounding."""
    lessoncheck.law_fp16_step(train_batch_fp16, **case)


@pytest.mark.parametrize('k', [1, 2, 3])
def test_a_loss_scaled_step_skips_on_overflow_and_is_notebook_05s_step_otherwise(k):
    """The same on Fashion-MNIST, and the float16 rounding shows: not bit for bit notebook 05's step."""
    devices = CTX[:k]
    params = init_lenet_params(0)
    X, y = next(iter(load_data_fashion_mnist(32, n_train=32, seed=0)[0]))
    skipped = [replicate_params(params, d) for d in devices]
    assert train_batch_fp16(X, y, skipped, devices, 0.1, 2.0 ** 30) is False
    assert max_gap(skipped[0], params) == 0                        # an overflow leaves the weights alone
    stepped = [replicate_params(params, d) for d in devices]
    assert train_batch_fp16(X, y, stepped, devices, 0.1, 2.0 ** 8) is True
    from helpers.train import train_batch_scratch
    reference = [replicate_params(params, d) for d in devices]
    train_batch_scratch(X, y, reference, devices, 0.1)           # float32 on the wire
    gap = max_gap(stepped[0], reference[0])
    assert 0 < gap < 1e-4                                          # float16 rounding, nothing more
    assert all(max_gap(r, stepped[0]) == 0 for r in stepped)


def test_dynamic_scaling_finds_a_scale_that_fits():
    devices = CTX[:2]
    batches = list(load_data_fashion_mnist(32, n_train=32 * 12, seed=0)[0])
    _, history = train_fp16(init_lenet_params(0), batches, devices, 0.1, 2.0 ** 24, growth_interval=4)
    scales, updated = history['scale'], history['updated']
    assert not updated[0] and scales[1] == scales[0] / 2           # too large: skipped, halved
    first = updated.index(True)
    assert all(not u for u in updated[:first]) and scales[first] == 2.0 ** 24 / 2 ** first
    for s, u, s_next in zip(scales, updated, scales[1:]):
        assert s_next in (s / 2, s, s * 2) and (u or s_next == s / 2)
    with pytest.raises(ValueError):
        train_fp16(init_lenet_params(0), batches, devices, 0.1, 0.0)


def test_mxnet_amp_float16_cannot_run_a_dense_layer_on_cpu():
    """mxnet.contrib.amp casts CPU arrays to float16 too (_cast_symbol_NDArray, amp.py), and MXNet 1.9.1
    has no float16 matrix product on CPU (linalg_impl.h: 'FP16 gemm on cpu not implemented!')."""
    found = in_fresh_process('helpers.precision.amp_probe', 'float16')
    assert found['first convolution output'] == 'float16'
    assert 'FP16 gemm on cpu not implemented' in found['error']
    with pytest.raises(ValueError):
        from helpers.precision import amp_probe
        amp_probe('float64')
