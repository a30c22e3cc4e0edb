"""helpers.devices (notebook 00): one place decides which devices the series uses."""
import mxnet as mx
import numpy as np
import pytest

from helpers import devices


@pytest.fixture
def no_override(monkeypatch):
    monkeypatch.delenv(devices.FORCE_ENV, raising=False)


@pytest.fixture
def four_gpus(monkeypatch):
    """As if MXNet saw four GPUs: creating mx.gpu(i) contexts needs no GPU, only counting them does."""
    monkeypatch.setattr(devices, 'num_gpus', lambda: 4)


def test_default_is_every_gpu_or_two_stand_ins(no_override):
    ds = devices.get_devices()
    if devices._runnable_gpus():
        assert ds == [mx.gpu(i) for i in devices._runnable_gpus()]
    else:
        assert ds == [mx.cpu(0), mx.cpu(1)]


def test_default_on_a_machine_with_gpus_is_every_gpu(no_override, four_gpus):
    assert devices.get_devices() == [mx.gpu(i) for i in range(4)]
    assert devices.get_devices(3) == [mx.gpu(0), mx.gpu(1), mx.gpu(2)]
    assert devices.get_devices(5) == [mx.cpu(i) for i in range(5)]      # more than there are: stand-ins
    assert devices.describe(devices.get_devices()) == 'using 4 GPUs [gpu(0), gpu(1), gpu(2), gpu(3)] of 4 found'


@pytest.mark.parametrize('value, k', [('cpu', 2), ('cpu:1', 1), ('cpu:4', 4), (' CPU:8 ', 8), ('cpu:03', 3)])
def test_the_environment_variable_sets_k_and_forces_stand_ins(monkeypatch, value, k):
    monkeypatch.setenv(devices.FORCE_ENV, value)
    assert devices.get_devices() == [mx.cpu(i) for i in range(k)]
    assert devices.get_devices(3) == [mx.cpu(i) for i in range(3)]   # explicit k: stand-ins too
    assert devices.forced_standins() == k
    assert f'{devices.FORCE_ENV}=' in devices.describe(devices.get_devices())


def test_stand_ins_are_forced_on_a_gpu_machine_too(monkeypatch, four_gpus):
    monkeypatch.setenv(devices.FORCE_ENV, 'cpu:3')
    assert devices.get_devices() == [mx.cpu(i) for i in range(3)]
    assert devices.get_devices(2) == [mx.cpu(0), mx.cpu(1)]
    assert devices.describe(devices.get_devices()).endswith(': MXDP_DEVICES=cpu:3')


@pytest.mark.parametrize('value, ids', [('gpu:0,2', [0, 2]), ('gpu:3', [3]), ('gpu:2,0', [2, 0]),
                                        (' GPU:0, 1 ,3 ', [0, 1, 3]), ('gpu:00,01', [0, 1]),
                                        ('gpu:0,1,2,3', [0, 1, 2, 3])])
def test_gpu_ids_select_those_gpus_in_that_order(monkeypatch, four_gpus, value, ids):
    monkeypatch.setenv(devices.FORCE_ENV, value)
    chosen = devices.get_devices()
    assert chosen == [mx.gpu(i) for i in ids]
    assert devices.forced_standins() is None
    line = devices.describe(chosen)
    assert line.startswith(f'using {len(ids)} GPU') and 'of 4 found' in line and f'{devices.FORCE_ENV}=' in line


def test_explicit_k_takes_the_first_selected_gpus_else_stand_ins(monkeypatch, four_gpus):
    monkeypatch.setenv(devices.FORCE_ENV, 'gpu:3,1')
    assert devices.get_devices(1) == [mx.gpu(3)]
    assert devices.get_devices(2) == [mx.gpu(3), mx.gpu(1)]
    assert devices.get_devices(3) == [mx.cpu(0), mx.cpu(1), mx.cpu(2)]    # only two GPUs selected


@pytest.mark.parametrize('value, gpus, said', [
    ('gpu:4', 4, 'no GPU 4: MXNet sees 4 GPUs, numbered 0 to 3'),      # an id beyond the GPUs present
    ('gpu:0,7', 4, 'no GPU 7'),
    ('gpu:1', 1, 'no GPU 1: MXNet sees one GPU, gpu(0)'),
    ('gpu:0', 0, 'no GPU 0: MXNet sees no GPU'),                        # a CPU machine
    ('gpu:0,2,0', 4, 'GPU 0 is listed twice'),                          # a repeated id
    ('gpu:1,01', 4, 'GPU 1 is listed twice'),
])
def test_a_gpu_that_is_not_there_or_listed_twice_is_a_value_error(monkeypatch, value, gpus, said):
    monkeypatch.setattr(devices, 'num_gpus', lambda: gpus)
    monkeypatch.setenv(devices.FORCE_ENV, value)
    for call in (devices.get_devices, lambda: devices.get_devices(1), devices.forced_standins):
        with pytest.raises(ValueError, match=devices.FORCE_ENV) as error:
            call()
        assert said in str(error.value)


def test_the_error_says_how_cuda_visible_devices_renumbers(monkeypatch):
    monkeypatch.setattr(devices, 'num_gpus', lambda: 2)
    monkeypatch.setenv('CUDA_VISIBLE_DEVICES', '2,3')
    with pytest.raises(ValueError, match="CUDA_VISIBLE_DEVICES='2,3' is set: MXNet numbers the visible GPUs from 0"):
        devices.parse_devices('gpu:3', devices.num_gpus())
    assert devices.parse_devices('gpu:1', devices.num_gpus()) == [mx.gpu(1)]   # the machine's GPU 3


@pytest.mark.parametrize('value', ['gpu', 'gpu:', 'gpu:,', 'gpu:0,', 'gpu:,1', 'gpu:0,,1', 'gpu:-1', 'gpu:1.5',
                                   'gpu:x', 'gpu:0;2', 'gpu:0 2', 'gpu:²', 'gpu(0)', 'gpu:0:1', 'cuda:0', 'gpus:0',
                                   'cpu:0', 'cpu:00', 'cpu:', 'cpu:x', 'cpu:-1', 'cpu:2.5', 'cpu:²', 'cpu:4:4',
                                   'cpu:0,1', '4', 'all'])
def test_a_malformed_value_is_a_value_error_naming_the_variable(monkeypatch, four_gpus, value):
    monkeypatch.setenv(devices.FORCE_ENV, value)
    with pytest.raises(ValueError, match=devices.FORCE_ENV):
        devices.get_devices()
    with pytest.raises(ValueError, match='expected "cpu"'):
        devices.parse_devices(value, 4)


@pytest.mark.parametrize('value', ['', '   '])
def test_an_empty_value_asks_for_nothing(monkeypatch, four_gpus, value):
    assert devices.parse_devices(value, 4) is None
    monkeypatch.setenv(devices.FORCE_ENV, value)
    assert devices.get_devices() == [mx.gpu(i) for i in range(4)]


@pytest.mark.parametrize('value, gpus, error', [(None, 4, TypeError), (['gpu:0'], 4, TypeError),
                                                (b'gpu:0', 4, TypeError), ('gpu:0', '4', TypeError),
                                                ('gpu:0', 2.0, TypeError), ('gpu:0', -1, ValueError)])
def test_parse_devices_refuses_bad_arguments(value, gpus, error):
    with pytest.raises(error, match='value must be|gpus must be'):
        devices.parse_devices(value, gpus)


def test_parse_devices_says_what_a_value_would_select_on_another_machine():
    assert devices.parse_devices('gpu:0,2', 8) == [mx.gpu(0), mx.gpu(2)]
    assert devices.parse_devices('gpu:0,2', np.int64(3)) == [mx.gpu(0), mx.gpu(2)]
    assert devices.parse_devices('cpu:3', 0) == [mx.cpu(0), mx.cpu(1), mx.cpu(2)]
    assert devices.parse_devices('cpu', 8) == [mx.cpu(0), mx.cpu(1)]


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


# A GPU that the installed MXNet has no machine code for (mxnet-cu112 1.9.1 on an H100: SASS for
# sm_50..sm_86 only; helpers.gpu_code). Stood in: four GPUs, whose compute capabilities are given.
MXNET_CU112 = {('SASS', a): 198 for a in (50, 60, 70, 80, 86)}


@pytest.fixture
def capabilities(monkeypatch, four_gpus):
    def given(*ccs):
        monkeypatch.setattr(devices.gpu_code, 'compute_capability', lambda i: ccs[i])
        monkeypatch.setattr(devices.gpu_code, 'library_code', lambda path=None: dict(MXNET_CU112))
    return given


def test_gpus_mxnet_cannot_run_on_are_left_out_and_described(no_override, capabilities):
    capabilities((9, 0), (9, 0), (9, 0), (9, 0))
    assert devices.get_devices() == [mx.cpu(0), mx.cpu(1)] and devices.gpu_pool() == []
    line = devices.describe(devices.get_devices())
    assert '4 GPU(s) found, which this MXNet cannot run on: gpu(0) has compute capability 9.0' in line
    assert 'sm_50, sm_60, sm_70, sm_80, sm_86 only' in line


def test_only_the_gpus_it_can_run_on_are_used_and_the_others_named(no_override, capabilities):
    capabilities((8, 0), (9, 0), (8, 9), (7, 5))
    assert devices.get_devices() == [mx.gpu(0), mx.gpu(2), mx.gpu(3)]
    assert devices.get_devices(2) == [mx.gpu(0), mx.gpu(2)]
    line = devices.describe(devices.get_devices())
    assert line.startswith('using 3 GPUs [gpu(0), gpu(2), gpu(3)] of 4 found; 1 left out, e.g. gpu(1) has '
                           'compute capability 9.0'), line
    capabilities((8, 0), (8, 6), (8, 9), (7, 5))
    assert 'left out' not in devices.describe(devices.get_devices())


def test_asking_for_a_gpu_mxnet_cannot_run_on_is_a_value_error_naming_the_variable(monkeypatch, capabilities):
    capabilities((8, 6), (9, 0), (9, 0), (9, 0))
    monkeypatch.setenv(devices.FORCE_ENV, 'gpu:0,1')
    with pytest.raises(ValueError, match=r"MXDP_DEVICES='gpu:0,1': gpu\(1\) has compute capability 9.0.*cpu:k"):
        devices.get_devices()
    monkeypatch.setenv(devices.FORCE_ENV, 'gpu:0')
    assert devices.get_devices() == [mx.gpu(0)]


def test_where_nobody_can_tell_every_gpu_is_used(no_override, four_gpus, monkeypatch):
    monkeypatch.setattr(devices.gpu_code, 'compute_capability', lambda i: None)      # no driver to ask
    assert devices.get_devices() == [mx.gpu(i) for i in range(4)]
    monkeypatch.setattr(devices.gpu_code, 'compute_capability', lambda i: (9, 0))
    monkeypatch.setattr(devices.gpu_code, 'library_code', lambda path=None: {})      # a library with no GPU code
    assert devices.get_devices() == [mx.gpu(i) for i in range(4)]
