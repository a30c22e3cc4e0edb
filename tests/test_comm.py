"""Unit and property tests of helpers.comm and helpers.costmodel (notebook 04)."""
import mxnet as mx
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from helpers import comm, lessoncheck
from helpers.comm import CommStats, all_gather, allreduce, allreduce_naive, allreduce_ring, owner_chunk, reduce_scatter
from helpers.costmodel import (cost_naive, cost_rabenseifner, cost_ring, cost_tree, naive_bytes_per_device,
                               ring_bytes_per_device, ring_lower_bound)

CTX = [mx.cpu(i) for i in range(8)]
ALGORITHMS = [allreduce_naive, allreduce_ring, allreduce]
shapes = st.lists(st.integers(1, 9), min_size=1, max_size=3).map(tuple)


@settings(max_examples=60, deadline=None)
@given(k=st.integers(1, 8), shape=shapes, seed=st.integers(0, 2**16),
       algorithm=st.sampled_from(ALGORITHMS), dtype=st.sampled_from(['float32', 'float64']))
def test_allreduce_equals_the_numpy_sum_with_identical_bits_on_every_device(k, shape, seed, algorithm, dtype):
    """helpers.lessoncheck's law, which the readers' checks sweep over fixed cases, on random ones."""
    if algorithm is allreduce_ring and int(np.prod(shape)) < k:
        shape = (k,)
    lessoncheck.law_allreduce_sums(algorithm, k, shape, dtype, seed)


@settings(max_examples=60, deadline=None)
@given(k=st.integers(1, 8), size=st.integers(1, 40), seed=st.integers(0, 2**16),
       dtype=st.sampled_from(['float32', 'float64']))
def test_the_ring_halves_each_do_their_half(k, size, seed, dtype):
    """reduce_scatter leaves device i the sum of chunk owner_chunk(i, k); all_gather then copies every
    finished chunk to every device, bit for bit (notebooks 04, 11; helpers.lessoncheck's laws)."""
    size = max(size, k)
    assert sorted(owner_chunk(i, k) for i in range(k)) == list(range(k))     # every chunk has one owner
    lessoncheck.law_reduce_scatter_owns(reduce_scatter, k, (size,), dtype, seed)
    lessoncheck.law_all_gather_copies(all_gather, k, (size,), dtype, seed)


@pytest.mark.parametrize('collective', ALGORITHMS + [reduce_scatter, all_gather])
@pytest.mark.parametrize('stype', ['row_sparse', 'csr'])
def test_sparse_arrays_are_refused_saying_what_is_taken(collective, stype):
    """MXNet's own copy of a sparse array between devices raises NotImplementedError with no message;
    the guard refuses it first, by name, and says how to make it dense."""
    arrays = [mx.nd.array([[1, 2], [0, 0]], ctx=c).tostype(stype) for c in CTX[:2]]
    with pytest.raises(TypeError, match=f"dense NDArrays, but array 0 is {stype}.*tostype"):
        collective(arrays)


def test_ring_with_fewer_elements_than_devices_is_a_clear_error():
    arrays = [mx.nd.ones(3, ctx=c) for c in CTX[:4]]
    with pytest.raises(ValueError, match='at least 4 elements'):
        allreduce_ring(arrays)
    assert all((a.asnumpy() == 1).all() for a in arrays)
    allreduce(arrays)                                # the dispatcher uses the naive algorithm
    assert all((a.asnumpy() == 4).all() for a in arrays)


def test_integer_arrays_are_exact():
    arrays = [mx.nd.full((5, 3), i + 1, ctx=c, dtype='int32') for i, c in enumerate(CTX[:5])]
    allreduce_ring(arrays)
    assert all((a.asnumpy() == 15).all() for a in arrays)


@settings(max_examples=60, deadline=None)
@given(k=st.integers(1, 8), size=st.integers(1, 100))
def test_bytes_sent_match_the_formulas(k, size):
    size = max(size, k)
    for algorithm, formula in ((allreduce_naive, naive_bytes_per_device(k, size, 4)),
                               (allreduce_ring, ring_bytes_per_device(k, size, 4))):
        arrays = [mx.nd.ones(size, ctx=c) for c in CTX[:k]]
        stats = CommStats()
        algorithm(arrays, send=stats.send)
        assert stats.per_device(CTX[:k]) == (formula if k > 1 else [0])
        assert sum(stats.received.values()) == sum(stats.sent.values())
    if size % k == 0:                                 # the textbook formula: 2 (k-1)/k N per device
        assert ring_bytes_per_device(k, size, 4) == [ring_lower_bound(k, 4 * size)] * k
    assert sum(ring_bytes_per_device(k, size, 4)) == 2 * (k - 1) * 4 * size   # the same total as naive


@pytest.mark.parametrize('k', range(2, 9))
def test_the_lower_bound_is_on_the_busiest_device_not_on_every_device(k):
    """2 (k-1)/k N bounds the busiest device of any allreduce (Patarasuk & Yuan 2009): both algorithms
    reach it there, the ring on every device; the naive algorithm's other devices send only N, which
    is below it for k > 2 (notebook 04's naive run: 4,000 < 6,000 bytes at k = 4)."""
    size = 1000 * k                                   # k divides it: the textbook formula is exact
    bound = ring_lower_bound(k, 4 * size)
    naive, ring = naive_bytes_per_device(k, size), ring_bytes_per_device(k, size)
    assert max(naive) >= bound and max(ring) == bound and min(ring) == bound
    assert (min(naive) < bound) == (k > 2)


@pytest.mark.parametrize('algorithm', ALGORITHMS)
@pytest.mark.parametrize('bad, error, match', [
    ([], ValueError, 'empty list'),
    ('single', TypeError, 'list of NDArrays'),
    ('shapes', ValueError, 'one shape'),
    ('dtypes', TypeError, 'one dtype'),
    ('numpy', TypeError, 'NDArrays'),
    ('empty', ValueError, 'empty arrays'),
])
def test_bad_input_is_refused_before_any_copy(algorithm, bad, error, match):
    arrays = bad if isinstance(bad, list) else {
        'single': mx.nd.ones(4),
        'shapes': [mx.nd.ones((2, 3), ctx=CTX[0]), mx.nd.ones((3, 2), ctx=CTX[1])],
        'dtypes': [mx.nd.ones(4, ctx=CTX[0]), mx.nd.ones(4, ctx=CTX[1], dtype='float64')],
        'numpy': [mx.nd.ones(4, ctx=CTX[0]), np.ones(4, dtype=np.float32)],
        'empty': [mx.nd.array(np.zeros(0, np.float32), ctx=c) for c in CTX[:2]],
    }[bad]
    kept = [a.asnumpy().copy() for a in (arrays if isinstance(arrays, list) else [])
            if isinstance(a, mx.nd.NDArray) and a.size]
    with pytest.raises(error, match=match):
        algorithm(arrays)
    left = [a.asnumpy() for a in (arrays if isinstance(arrays, list) else [])
            if isinstance(a, mx.nd.NDArray) and a.size]
    for x, y in zip(kept, left):
        np.testing.assert_array_equal(x, y)


def test_allreduce_picks_the_ring_for_large_arrays_on_two_or_more_devices(monkeypatch):
    monkeypatch.setitem(comm.RING_MIN_ELEMENTS, 'cpu', 100)
    for k, size, ring in ((1, 1000, False), (2, 99, False), (2, 100, True), (3, 99, False), (3, 100, True)):
        arrays = [mx.nd.full((size,), i, ctx=c) for i, c in enumerate(CTX[:k])]
        stats = CommStats()
        allreduce(arrays, send=stats.send)
        assert stats.messages == (2 * k * (k - 1) if ring else 2 * (k - 1))
        assert all(a[-1].asscalar() == sum(range(k)) for a in arrays)
    monkeypatch.setitem(comm.RING_MIN_ELEMENTS, 'cpu', None)      # None: never the ring (GPUs)
    stats = CommStats()
    allreduce([mx.nd.ones((10 ** 6,), ctx=c) for c in CTX[:3]], send=stats.send)
    assert stats.messages == 2 * (3 - 1)


def test_cost_models():
    k = np.array([2, 4, 1024])
    n, a, bw, g = 44e6, 10e-6, 32e9, 1e-11
    np.testing.assert_allclose(cost_ring(k, n, a, bw), 2 * (k - 1) * (a + n / k / bw))
    np.testing.assert_allclose(cost_naive(k, n, a, bw), 2 * (k - 1) * (a + n / bw))
    np.testing.assert_allclose(cost_tree(k, n, a, bw), 2 * np.log2(k) * (a + n / bw))
    np.testing.assert_allclose(cost_rabenseifner(k, n, a, bw), 2 * np.log2(k) * a + 2 * (k - 1) / k * n / bw)
    np.testing.assert_allclose(cost_ring(k, n, a, bw, g) - cost_ring(k, n, a, bw), (k - 1) / k * n * g)
    np.testing.assert_allclose(cost_naive(k, n, a, bw, g) - cost_naive(k, n, a, bw), (k - 1) * n * g)
    assert cost_ring(1, n, a, bw) == cost_naive(1, n, a, bw) == 0
    assert cost_ring(2, n, a, bw) == pytest.approx(cost_naive(2, n, a, bw) - n / bw)   # k=2: half the bandwidth
    with pytest.raises(ValueError):
        cost_ring(0, n, a, bw)
    with pytest.raises(ValueError):
        cost_ring(2, n, a, 0)
