"""Unit and property tests of helpers.split (notebook 03)."""
import mxnet as mx
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from mxnet.gluon.utils import split_and_load as gluon_split_and_load

from helpers.split import shard_bounds, shard_sizes, split_and_load, split_batch

CTX = [mx.cpu(i) for i in range(8)]
FAST = settings(max_examples=40, deadline=None)


def _data(n, rest=(3,)):
    return mx.nd.array(np.arange(n * int(np.prod(rest))).reshape((n,) + rest))


@FAST
@given(n=st.integers(1, 40), k=st.integers(1, 8), even=st.booleans(), axis=st.sampled_from([0, 1]))
def test_same_as_gluon_without_weights(n, k, even, axis):
    data = _data(n) if axis == 0 else _data(3, (n,))
    ctx = CTX[:k]
    try:
        expected = gluon_split_and_load(data, ctx, batch_axis=axis, even_split=even)
    except Exception as gluon_error:  # noqa: BLE001 -- ours must refuse too, with a ValueError
        with pytest.raises(ValueError):
            split_and_load(data, ctx, batch_axis=axis, even_split=even)
        return
    ours = split_and_load(data, ctx, batch_axis=axis, even_split=even)
    assert len(ours) == len(expected) == k
    for a, b, c in zip(ours, expected, ctx):
        assert a.context == b.context == c
        assert a.shape == b.shape
        np.testing.assert_array_equal(a.asnumpy(), b.asnumpy())


@FAST
@given(n=st.integers(1, 60), weights=st.lists(st.integers(0, 5), min_size=1, max_size=6))
def test_weighted_split_then_concatenate_is_identity(n, weights):
    if sum(weights) == 0:
        weights = weights[:-1] + [1]
    k = len(weights)
    sizes = shard_sizes(n, k, even_split=False, weights=weights)
    assert sum(sizes) == n and min(sizes) >= 0
    ideal = [n * w / sum(weights) for w in weights]
    assert all(abs(s - x) < 1 for s, x in zip(sizes, ideal))   # never more than one off the ideal
    bounds = shard_bounds(n, k, even_split=False, weights=weights)
    assert bounds[0][0] == 0 and bounds[-1][1] == n
    assert all(a[1] == b[0] for a, b in zip(bounds, bounds[1:]))
    data = _data(n)
    if 0 in sizes and k > 1:
        with pytest.raises(ValueError, match='no example'):
            split_and_load(data, CTX[:k], even_split=False, weights=weights)
        return
    shards = split_and_load(data, CTX[:k], even_split=False, weights=weights)
    assert [s.context for s in shards] == CTX[:k]
    back = np.concatenate([s.asnumpy() for s in shards])
    np.testing.assert_array_equal(back, data.asnumpy())


@FAST
@given(n=st.integers(0, 50), k=st.integers(1, 8))
def test_equal_weights_give_the_unweighted_split(n, k):
    assert shard_sizes(n, k, even_split=False, weights=[2.5] * k) == shard_sizes(n, k, even_split=False)


def test_weighted_examples():
    assert shard_sizes(256, 2, weights=[3, 1]) == [192, 64]
    assert shard_sizes(10, 2, even_split=False, weights=[3, 1]) == [8, 2]   # 7.5/2.5: tie -> index 0
    assert shard_sizes(10, 3, even_split=False, weights=[0.1, 0.2, 0.7]) == [1, 2, 7]
    with pytest.raises(ValueError, match='exactly in proportion'):
        shard_sizes(10, 2, weights=[3, 1])


def test_numpy_input_and_single_device():
    shards = split_and_load(np.arange(6, dtype=np.float32), CTX[:2])
    assert [s.asnumpy().tolist() for s in shards] == [[0, 1, 2], [3, 4, 5]]
    whole = split_and_load(_data(5), CTX[:1])      # k=1: the whole batch, even_split irrelevant
    assert whole[0].shape == (5, 3)


def test_split_batch_keeps_labels_with_examples():
    X = _data(7)
    y = mx.nd.arange(7)
    Xs, ys = split_batch(X, y, CTX[:3])
    assert [x.shape[0] for x in Xs] == [y.shape[0] for y in ys] == [3, 2, 2]
    for x, lab in zip(Xs, ys):
        np.testing.assert_array_equal(x.asnumpy()[:, 0] / 3, lab.asnumpy())
    Xs, ys = split_batch(X, y, CTX[:2], weights=[3, 1])
    assert [x.shape[0] for x in Xs] == [y.shape[0] for y in ys] == [5, 2]


@pytest.mark.parametrize('call, match', [
    (lambda: shard_sizes(4, 0), 'at least 1 part'),
    (lambda: shard_sizes(4, -2), 'at least 1 part'),
    (lambda: split_and_load(_data(4), []), 'ctx_list is empty'),
    (lambda: split_and_load(_data(5), CTX[:2]), 'cannot be split evenly'),
    (lambda: split_and_load(_data(2), CTX[:4], even_split=False), 'no example'),
    (lambda: split_and_load(_data(4), CTX[:2], weights=[1, -1]), 'negative'),
    (lambda: split_and_load(_data(4), CTX[:2], weights=[0, 0]), 'all weights are zero'),
    (lambda: split_and_load(_data(4), CTX[:2], weights=[1, 1, 1]), 'one weight per device'),
    (lambda: split_and_load(_data(4), CTX[:2], weights=[1, float('nan')]), 'finite'),
    (lambda: split_and_load(_data(4), CTX[:2], weights=[4, 0]), 'no example'),
    (lambda: split_and_load(_data(4), CTX[:2], batch_axis=2), 'batch_axis'),
    (lambda: split_batch(_data(4), mx.nd.arange(5), CTX[:2]), 'same first dimension'),
])
def test_bad_input_raises_value_error_naming_the_problem(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_every_public_function_names_its_notebook():
    import helpers.split as module
    for name in module.__all__:
        assert 'notebook 03' in (getattr(module, name).__doc__ or ''), name
