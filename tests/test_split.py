"""Unit and property tests of helpers.split (notebook 03): the laws the notebook shows once."""
import mxnet as mx
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from helpers import lessoncheck, split
from helpers.split import shard_bounds, shard_sizes, split_and_load, split_batch

CTX = [mx.cpu(i) for i in range(8)]
FAST = settings(max_examples=40, deadline=None)


def _data(n, rest=(3,)):
    return mx.nd.array(np.arange(n * int(np.prod(rest))).reshape((n,) + rest))


def test_same_shards_as_gluon_uneven_split():
    """Ours == gluon.utils.split_and_load(even_split=False) wherever every device gets an example,
    for every batch size n from 1 to 40 on every k from 1 to 8 devices (all 320 pairs); with a
    divisible batch also == Gluon's default (even_split=True); with n < k ours refuses. The law is
    helpers.lessoncheck's, which the readers' check_split_and_load sweeps over the same pairs."""
    checked = 0
    for n in range(1, 41):
        for k in range(1, 9):
            lessoncheck.law_split_like_gluon(split_and_load, n, k)
            checked += 1
    assert checked == 40 * 8


def test_the_guard_judges_the_cut_split_and_load_makes(monkeypatch):
    """An edited rule reaches the guard (notebook 03, exercise 1): split_and_load's guard checks the
    cut its shard_bounds makes, so a rule that gives every positive weight an example is accepted."""
    data = _data(10)
    with pytest.raises(ValueError, match=r'\[10, 0\]'):
        split_and_load(data, CTX[:2], [100, 1])
    monkeypatch.setattr(split, 'shard_sizes', lambda n, k, weights=None: [n - k + 1] + [1] * (k - 1))
    assert [len(s) for s in split_and_load(data, CTX[:2], [100, 1])] == [9, 1]


@FAST
@given(n=st.integers(0, 60), weights=st.lists(st.integers(0, 5), min_size=1, max_size=6))
def test_weighted_split_then_concatenate_is_the_identity(n, weights):
    if sum(weights) == 0:
        weights = weights[:-1] + [1]
    k = len(weights)
    sizes = shard_sizes(n, k, weights)
    assert sum(sizes) == n and min(sizes) >= 0
    ideal = [n * w / sum(weights) for w in weights]
    assert all(abs(s - x) < 1 for s, x in zip(sizes, ideal))   # never a whole example off
    bounds = shard_bounds(n, k, weights)
    assert bounds[0][0] == 0 and bounds[-1][1] == n
    assert all(a[1] == b[0] for a, b in zip(bounds, bounds[1:]))
    if n == 0:
        return
    if 0 in sizes:                                   # a device would get nothing: refused
        with pytest.raises(ValueError, match='no example'):
            split_and_load(_data(n), CTX[:k], weights)
        return
    data = _data(n)
    shards = split_and_load(data, CTX[:k], weights)
    assert [s.context for s in shards] == CTX[:k]
    np.testing.assert_array_equal(np.concatenate([s.asnumpy() for s in shards]), data.asnumpy())


@FAST
@given(n=st.integers(0, 60), k=st.integers(1, 8), scale=st.sampled_from([1, 2.5, np.int64(7), np.float32(0.1)]))
def test_equal_weights_give_gluons_uneven_sizes(n, k, scale):
    q, r = divmod(n, k)
    assert shard_sizes(n, k, [scale] * k) == shard_sizes(n, k) == [q + 1] * r + [q] * (k - r)


def test_weighted_examples():
    assert shard_sizes(256, 2, [3, 1]) == [192, 64]
    assert shard_sizes(10, 2, [3, 1]) == [8, 2]              # 7.5 / 2.5: the tie goes to device 0
    assert shard_sizes(10, 3, [0.1, 0.2, 0.7]) == [1, 2, 7]
    assert shard_sizes(10, 3, np.array([2, 2, 1])) == [4, 4, 2]


def test_shards_are_views_until_copied():
    batch = mx.nd.arange(12, ctx=CTX[0]).reshape((6, 2))
    shards = split_and_load(batch, CTX[:2])
    shards[0][:] = -1                      # shard 0 stays on the batch's device: a view
    shards[1][:] = -2                      # shard 1 was copied: the batch does not change
    assert batch[:3].asnumpy().min() == -1 and batch[3:].asnumpy().min() >= 6


def test_split_batch_keeps_labels_with_examples():
    X, y = _data(7), mx.nd.arange(7)
    for weights, sizes in ((None, [3, 2, 2]), ([3, 1, 1], [4, 2, 1])):
        Xs, ys = split_batch(X, y, CTX[:3], weights)
        assert [len(x) for x in Xs] == [len(t) for t in ys] == sizes
        for x, t in zip(Xs, ys):
            assert x.context == t.context
            np.testing.assert_array_equal(x.asnumpy()[:, 0] / 3, t.asnumpy())


@pytest.mark.parametrize('call, error, match', [
    (lambda: shard_sizes(4, 0), ValueError, 'at least 1'),
    (lambda: shard_sizes(4, 2.0), TypeError, 'whole number'),
    (lambda: shard_sizes(-1, 2), ValueError, 'at least 0'),
    (lambda: shard_sizes(4, 2, [1, -1]), ValueError, '>= 0'),
    (lambda: shard_sizes(4, 2, [0, 0]), ValueError, 'all weights are zero'),
    (lambda: shard_sizes(4, 2, [1, 1, 1]), ValueError, 'one weight per device'),
    (lambda: shard_sizes(4, 2, [1, float('nan')]), ValueError, 'finite'),
    (lambda: shard_sizes(4, 2, ['1', 1]), TypeError, 'numbers'),
    (lambda: shard_sizes(4, 2, 3), TypeError, 'list of numbers'),
    (lambda: split_and_load(_data(4), []), ValueError, 'is empty'),
    (lambda: split_and_load(_data(4), mx.cpu(0)), TypeError, 'single context'),
    (lambda: split_and_load(_data(4), [mx.cpu(0), mx.cpu(0)]), ValueError, 'distinct'),
    (lambda: split_and_load(_data(2), CTX[:4]), ValueError, 'no example'),
    (lambda: split_and_load(_data(4), CTX[:2], [4, 0]), ValueError, 'no example'),
    (lambda: split_and_load(np.ones((4, 2)), CTX[:2]), TypeError, 'NDArray'),
    (lambda: split_batch(_data(4), mx.nd.arange(5), CTX[:2]), ValueError, 'same first dimension'),
])
def test_bad_input_is_a_clear_error(call, error, match):
    with pytest.raises(error, match=match):
        call()
