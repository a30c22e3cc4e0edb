"""helpers.checks: one policy for bad input (TypeError for a wrong type, ValueError for a bad value,
NumPy integers accepted wherever ints are)."""
import math

import mxnet as mx
import numpy as np
import pytest

from helpers import checks


@pytest.mark.parametrize('value', [3, np.int64(3), np.int32(3), np.uint8(3)])
def test_whole_numbers_accept_numpy_integers(value):
    assert checks.whole(value, 'n', 1) == 3 and type(checks.whole(value, 'n')) is int


@pytest.mark.parametrize('value', [3.0, '3', None, True, np.float64(3), [3]])
def test_whole_numbers_refuse_other_types_with_a_type_error(value):
    with pytest.raises(TypeError, match='n must be a whole number'):
        checks.whole(value, 'n')


def test_whole_numbers_below_the_minimum_are_a_value_error():
    with pytest.raises(ValueError, match='n must be at least 1, got 0'):
        checks.whole(0, 'n', 1)


@pytest.mark.parametrize('value, error', [(0, ValueError), (-0.1, ValueError), (math.inf, ValueError),
                                          (math.nan, ValueError), ('0.1', TypeError), (True, TypeError)])
def test_positive_numbers(value, error):
    with pytest.raises(error, match='lr'):
        checks.positive(value, 'lr')
    assert checks.positive(np.float32(0.5), 'lr') == 0.5


def test_device_lists():
    assert checks.devices((mx.cpu(0), mx.cpu(1))) == [mx.cpu(0), mx.cpu(1)]
    for bad, error in ((mx.cpu(0), TypeError), ('cpu', TypeError), ([0, 1], TypeError),
                       ([], ValueError), ([mx.cpu(1), mx.cpu(1)], ValueError), (3, TypeError)):
        with pytest.raises(error):
            checks.devices(bad)


def test_replicas_must_live_on_their_devices():
    devs = [mx.cpu(0), mx.cpu(1)]
    good = [[mx.nd.ones(2, ctx=d)] for d in devs]
    checks.replicas(good, devs)
    with pytest.raises(ValueError, match='one replica per device'):
        checks.replicas(good[:1], devs)
    with pytest.raises(ValueError, match='lives on cpu\\(0\\)'):
        checks.replicas([good[0], good[0]], devs)
    with pytest.raises(TypeError, match='not an NDArray'):
        checks.replicas([[np.ones(2)], good[1]], devs)


def test_a_batch_is_judged_by_the_cut_it_is_given():
    """checks.batch judges the cut of the shard_bounds passed to it (notebook 03: an edited
    shard_sizes cell changes what split_and_load refuses)."""
    data, devs = mx.nd.arange(10), [mx.cpu(0), mx.cpu(1)]
    checks.batch(data, devs, None, lambda n, k, ws: [(0, 5), (5, 10)])
    with pytest.raises(ValueError, match=r'would be \[10, 0\].*no example'):
        checks.batch(data, devs, [100, 1], lambda n, k, ws: [(0, 10), (10, 10)])
    for bad_cut in ([(0, 4), (4, 9)], [(0, 10)], [(0, 6), (6, 5)]):     # loses, merges, negative
        with pytest.raises(ValueError, match='adding up to 10'):
            checks.batch(data, devs, None, lambda n, k, ws: bad_cut)
    with pytest.raises(TypeError, match='NDArray'):
        checks.batch(np.arange(10), devs, None, lambda n, k, ws: [(0, 5), (5, 10)])
    with pytest.raises(ValueError, match='one weight per device'):
        checks.batch(data, devs, [1], lambda n, k, ws: [(0, 5), (5, 10)])
