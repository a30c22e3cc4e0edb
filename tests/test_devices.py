import mxnet as mx
import pytest

from helpers import devices


@pytest.mark.parametrize('k', [1, 2, 4, 8])
def test_get_devices_returns_k_devices_of_one_kind(k):
    ds = devices.get_devices(k)
    assert len(ds) == k
    kind = devices.device_kind(ds)
    assert [d.device_id for d in ds] == list(range(k))
    # With fewer GPUs than asked for (always the case on CI), CPU stand-ins, never a crash.
    if devices.num_gpus() < k:
        assert kind == 'cpu'


@pytest.mark.parametrize('bad', [0, -1, 2.0, '2', None, True])
def test_bad_k_is_a_value_error(bad):
    with pytest.raises(ValueError, match='k must be'):
        devices.get_devices(bad)


def test_describe_names_the_devices_and_the_reason():
    line = devices.describe(devices.get_devices(3))
    assert line.count('\n') == 0
    if devices.num_gpus() < 3:
        assert line.startswith('using 3 CPU stand-in(s) [cpu(0), cpu(1), cpu(2)]')
        assert 'GPU(s) found, 3 needed' in line


def test_forcing_cpu_stand_ins(monkeypatch):
    monkeypatch.setenv(devices.FORCE_ENV, 'cpu')
    assert devices.num_gpus() == 0
    assert devices.get_devices(2) == [mx.cpu(0), mx.cpu(1)]
    assert 'MXDP_DEVICES=cpu' in devices.describe(devices.get_devices(2))


def test_mixed_devices_are_rejected():
    with pytest.raises(ValueError, match='one kind'):
        devices.device_kind([mx.cpu(0), mx.gpu(0)])
    with pytest.raises(ValueError):
        devices.device_kind([])
