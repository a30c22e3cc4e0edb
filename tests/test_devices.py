"""helpers.devices (notebook 00): one place decides which devices the series uses."""
import mxnet as mx
import numpy as np
import pytest

from helpers import devices


@pytest.fixture
def no_override(monkeypatch):
    monkeypatch.delenv(devices.FORCE_ENV, raising=False)


def test_default_is_every_gpu_or_two_stand_ins(no_override):
    ds = devices.get_devices()
    if devices.num_gpus():
        assert ds == [mx.gpu(i) for i in range(devices.num_gpus())]
    else:
        assert ds == [mx.cpu(0), mx.cpu(1)]


@pytest.mark.parametrize('value, k', [('cpu', 2), ('cpu:1', 1), ('cpu:4', 4), (' CPU:8 ', 8), ('cpu:03', 3)])
def test_the_environment_variable_sets_k_and_forces_stand_ins(monkeypatch, value, k):
    monkeypatch.setenv(devices.FORCE_ENV, value)
    assert devices.get_devices() == [mx.cpu(i) for i in range(k)]
    assert devices.get_devices(3) == [mx.cpu(i) for i in range(3)]   # explicit k: stand-ins too
    assert f'{devices.FORCE_ENV}=' in devices.describe(devices.get_devices())


@pytest.mark.parametrize('value', ['gpu', 'cpu:0', 'cpu:00', 'cpu:', 'cpu:x', 'cpu:-1', 'cpu:2.5', 'cpu:²',
                                   'cpu:4:4', '4'])
def test_a_malformed_override_is_a_value_error_naming_the_variable(monkeypatch, value):
    monkeypatch.setenv(devices.FORCE_ENV, value)
    with pytest.raises(ValueError, match=devices.FORCE_ENV):
        devices.get_devices()


@pytest.mark.parametrize('k', [1, 2, np.int64(4), 8])
def test_explicit_k_gives_k_devices_of_one_kind(no_override, k):
    ds = devices.get_devices(k)
    assert len(ds) == k and [d.device_id for d in ds] == list(range(k))
    assert devices.device_kind(ds) == ('gpu' if devices.num_gpus() >= k else 'cpu')


@pytest.mark.parametrize('bad, error', [(0, ValueError), (-1, ValueError), (2.0, TypeError),
                                        ('2', TypeError), (True, TypeError)])
def test_bad_k_is_refused(no_override, bad, error):
    with pytest.raises(error, match='k must be'):
        devices.get_devices(bad)


def test_describe_says_what_and_why(no_override):
    line = devices.describe([mx.cpu(0), mx.cpu(1), mx.cpu(2)])
    assert line.startswith('using 3 CPU stand-ins [cpu(0), cpu(1), cpu(2)]: ') and '\n' not in line
    one = devices.describe([mx.cpu(0)])
    assert 'using 1 CPU stand-in [cpu(0)]' in one and 'nothing to split' in one


def test_mixed_or_empty_device_lists_are_refused():
    with pytest.raises(ValueError, match='one kind|not on this machine'):   # without a GPU, gpu(0) is not there
        devices.device_kind([mx.cpu(0), mx.gpu(0)])
    with pytest.raises(ValueError, match='one kind'):
        devices.device_kind([mx.cpu(0), mx.cpu_pinned(0)])
    with pytest.raises(ValueError, match='empty'):
        devices.device_kind([])
    with pytest.raises(TypeError, match='single context'):
        devices.describe(mx.cpu(0))
