"""Unit and property tests of helpers.comm (notebook 04)."""
import mxnet as mx
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from helpers.comm import (CommStats, allreduce, allreduce_naive, allreduce_ring, chunk_bounds,
                          cost_naive, cost_ring, cost_tree, naive_bytes_per_device,
                          ring_bytes_per_device)

CTX = [mx.cpu(i) for i in range(8)]
ALGORITHMS = [allreduce_naive, allreduce_ring, allreduce]
shapes = st.lists(st.integers(1, 9), min_size=1, max_size=3).map(tuple)


@settings(max_examples=60, deadline=None)
@given(k=st.integers(1, 8), shape=shapes, seed=st.integers(0, 2**16),
       algorithm=st.sampled_from(ALGORITHMS), dtype=st.sampled_from(['float32', 'float64']))
def test_allreduce_equals_numpy_sum_on_every_device(k, shape, seed, algorithm, dtype):
    rng = np.random.default_rng(seed)
    xs = [rng.standard_normal(shape).astype(dtype) for _ in range(k)]
    arrays = [mx.nd.array(x, ctx=c, dtype=dtype) for x, c in zip(xs, CTX)]
    out = algorithm(arrays)
    assert out == arrays or all(a is b for a, b in zip(out, arrays))
    expected = np.sum(xs, axis=0)
    first = arrays[0].asnumpy()
    for a, c in zip(arrays, CTX):
        assert a.context == c and a.shape == shape and a.dtype == np.dtype(dtype)
        np.testing.assert_allclose(a.asnumpy(), expected, rtol=1e-5, atol=1e-5)
    if algorithm is not allreduce_ring:     # naive: every device holds the very same bits
        for a in arrays:
            np.testing.assert_array_equal(a.asnumpy(), first)


def test_ring_leaves_all_devices_identical():
    # Each chunk is summed once, on one device, then copied: every device gets the same bits.
    rng = np.random.default_rng(1)
    arrays = [mx.nd.array(rng.standard_normal(1001), ctx=c) for c in CTX[:7]]
    allreduce_ring(arrays)
    for a in arrays[1:]:
        np.testing.assert_array_equal(a.asnumpy(), arrays[0].asnumpy())


def test_integer_arrays_are_exact():
    arrays = [mx.nd.full((5, 3), i + 1, ctx=c, dtype='int32') for i, c in enumerate(CTX[:5])]
    allreduce_ring(arrays)
    assert all((a.asnumpy() == 15).all() for a in arrays)


@settings(max_examples=60, deadline=None)
@given(k=st.integers(1, 8), size=st.integers(1, 100))
def test_bytes_sent_match_the_formulas(k, size):
    for algorithm, formula in ((allreduce_naive, naive_bytes_per_device(k, 4 * size)),
                               (allreduce_ring, ring_bytes_per_device(k, size, 4))):
        arrays = [mx.nd.ones(size, ctx=c) for c in CTX[:k]]
        stats = CommStats()
        algorithm(arrays, stats=stats)
        expected = formula if k > 1 else [0]
        assert stats.sent == expected
        assert sum(stats.received) == sum(stats.sent)
        assert stats.steps == 2 * (k - 1)
    if size % k == 0:                       # the textbook formula: 2 (k-1)/k N per device
        assert ring_bytes_per_device(k, size, 4) == [2 * (k - 1) * 4 * size // k] * k
    assert sum(ring_bytes_per_device(k, size, 4)) == 2 * (k - 1) * 4 * size   # same total as naive


@given(size=st.integers(0, 100), k=st.integers(1, 9))
def test_chunk_bounds_cover_the_array(size, k):
    b = chunk_bounds(size, k)
    assert len(b) == k and b[0][0] == 0 and b[-1][1] == size
    assert all(x[1] == y[0] for x, y in zip(b, b[1:]))
    assert max(e - s for s, e in b) - min(e - s for s, e in b) <= 1


@pytest.mark.parametrize('algorithm', ALGORITHMS)
@pytest.mark.parametrize('bad, error, match', [
    ([], ValueError, 'empty list'),
    ('shapes', ValueError, 'one shape'),
    ('dtypes', TypeError, 'one dtype'),
    ('numpy', TypeError, 'NDArrays'),
])
def test_bad_input_is_refused_before_any_copy(algorithm, bad, error, match):
    if bad == 'shapes':
        arrays = [mx.nd.ones((2, 3), ctx=CTX[0]), mx.nd.ones((3, 2), ctx=CTX[1])]
    elif bad == 'dtypes':
        arrays = [mx.nd.ones(4, ctx=CTX[0]), mx.nd.ones(4, ctx=CTX[1], dtype='float64')]
    elif bad == 'numpy':
        arrays = [mx.nd.ones(4, ctx=CTX[0]), np.ones(4, dtype=np.float32)]
    else:
        arrays = bad
    before = [a.asnumpy().copy() for a in arrays if isinstance(a, mx.nd.NDArray)]
    with pytest.raises(error, match=match):
        algorithm(arrays)
    after = [a.asnumpy() for a in arrays if isinstance(a, mx.nd.NDArray)]
    for x, y in zip(before, after):
        np.testing.assert_array_equal(x, y)


def test_cost_model():
    k = np.array([2, 4, 1024])
    n, a, bw = 44e6, 10e-6, 32e9
    np.testing.assert_allclose(cost_ring(k, n, a, bw), 2 * (k - 1) * (a + n / k / bw))
    np.testing.assert_allclose(cost_naive(k, n, a, bw), 2 * (k - 1) * (a + n / bw))
    np.testing.assert_allclose(cost_tree(k, n, a, bw), 2 * np.log2(k) * (a + n / bw))
    assert cost_ring(2, n, a, bw) == cost_naive(2, n, a, bw) / 2 + a   # k=2: half the bandwidth term
    assert cost_ring(1, n, a, bw) == 0
    with pytest.raises(ValueError):
        cost_ring(0, n, a, bw)


def test_allreduce_picks_ring_for_large_arrays_on_three_or_more_devices():
    for k, size, expected in ((2, 1 << 20, 'naive'), (3, 1000, 'naive'), (3, 1 << 20, 'ring')):
        arrays = [mx.nd.full((size,), i, ctx=c) for i, c in enumerate(CTX[:k])]
        stats = CommStats()
        allreduce(arrays, stats=stats)
        assert stats.algorithms == [expected]
        assert all(a[-1].asscalar() == sum(range(k)) for a in arrays)


def test_every_public_function_names_its_notebook():
    import helpers.comm as module
    for name in module.__all__:
        obj = getattr(module, name)
        if callable(obj):
            assert 'notebook 04' in (obj.__doc__ or ''), name
