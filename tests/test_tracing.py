"""helpers.tracing (notebooks 01, 05): which devices the profiler can show, and under which name;
how long devices were busy, and busy at the same time.

MXNet 1.9.1's profiler keeps one lane per processor core, then 32 GPU lanes on a CUDA build (none
without CUDA), then 'cpu pinned' and 'cpu shared' (``Profiler::Profiler``, src/profiler/profiler.cc;
``Profiler::DeviceIndex``, src/profiler/profiler.h). This machine's build has no CUDA, so the CUDA
layout is checked with the build flag and the lane names patched."""
import os

import mxnet as mx
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from mxnet import nd

from helpers import tracing

CORES = 2


def _cuda_lanes():
    names = [f'cpu/{i}' for i in range(CORES)] + [f'gpu/{i}' for i in range(32)]
    return dict(enumerate(names + ['cpu pinned/', 'cpu shared/']))


@pytest.mark.parametrize('cuda, gpus', [(False, 0), (True, 0), (True, 2)])
def test_traceable_keeps_only_cpu_contexts_with_a_lane_of_their_own(monkeypatch, cuda, gpus):
    monkeypatch.setattr(tracing, '_cores', lambda: CORES)
    monkeypatch.setattr(tracing, '_cuda_build', lambda: cuda)
    cpus = [mx.cpu(i) for i in range(CORES + 4)]
    lanes = CORES if cuda else CORES + 2          # without CUDA: the 'cpu pinned' and 'cpu shared' lanes
    assert tracing.traceable(cpus) == cpus[:lanes]
    gpu_list = [mx.gpu(i) for i in range(gpus)]
    assert tracing.traceable(gpu_list) == gpu_list


def test_lanes_are_named_as_contexts_on_a_cuda_build(monkeypatch):
    monkeypatch.setattr(tracing, '_cuda_build', lambda: True)
    monkeypatch.setattr(tracing, '_LANES', _cuda_lanes())
    assert [tracing._device(p) for p in (0, 1, CORES, CORES + 31)] == ['cpu(0)', 'cpu(1)', 'gpu(0)', 'gpu(31)']
    assert [tracing._device(CORES + 32), tracing._device(CORES + 33)] == ['cpu_pinned(0)', 'cpu_shared(0)']


def test_without_cuda_the_last_two_lanes_are_cpu_stand_ins(monkeypatch):
    monkeypatch.setattr(tracing, '_cuda_build', lambda: False)
    names = [f'cpu/{i}' for i in range(CORES)] + ['cpu pinned/', 'cpu shared/']
    monkeypatch.setattr(tracing, '_LANES', dict(enumerate(names)))
    assert [tracing._device(p) for p in range(CORES + 2)] == [f'cpu({i})' for i in range(CORES + 2)]


def test_trace_names_the_device_every_operator_ran_on():
    devices = tracing.traceable([mx.cpu(i) for i in range(4)])
    xs = [nd.ones((50, 50), ctx=d) for d in devices]
    _, spans = tracing.trace(lambda: [nd.dot(x, x) for x in xs])
    assert sorted(s.device for s in spans if s.name == 'dot') == sorted(str(d) for d in devices)
    assert tracing._cuda_build() == mx.runtime.Features().is_enabled('CUDA')


def test_trace_leaves_the_storage_counters_off():
    """MXNet's profiler counts memory by default, and its counters' lazy set-up races between device
    threads (helpers/tracing.py, trace): a trace turns them off, so its dump holds no memory counter."""
    xs = [nd.ones((50, 50), ctx=d) for d in tracing.traceable([mx.cpu(0), mx.cpu(1)])]
    tracing.trace(lambda: [nd.dot(x, x) for x in xs])
    with open(os.path.join(tracing._trace_dir(), 'profile.json')) as f:
        dump = f.read()
    assert '"ph": "B"' in dump and '"Memory: ' not in dump     # the counters are named Memory: cpu/0, ...


def _spans(*triples):
    return [tracing.Span(device, 'op', start, end) for device, start, end in triples]


def test_busy_merges_the_spans_of_each_device():
    spans = _spans(('cpu(0)', 0, 2), ('cpu(0)', 1, 3), ('cpu(0)', 5, 6), ('cpu(1)', 2, 4))
    assert tracing.busy(spans) == {'cpu(0)': 4, 'cpu(1)': 2}
    assert tracing.busy([]) == {}


def test_overlap_counts_only_time_when_enough_devices_run_at_once():
    spans = _spans(('cpu(0)', 0, 4), ('cpu(1)', 1, 2), ('cpu(1)', 3, 6), ('cpu(2)', 3.5, 5))
    assert tracing.overlap(spans) == 1 + 1 + 1          # [1, 2], [3, 4], then cpu(1) with cpu(2) [4, 5]
    assert tracing.overlap(spans, at_least=3) == 0.5     # [3.5, 4]
    assert tracing.overlap(spans, at_least=1) == 6
    assert tracing.overlap(_spans(('cpu(0)', 0, 1), ('cpu(1)', 1, 2))) == 0     # touching: taking turns
    assert tracing.overlap(_spans(('cpu(0)', 0, 2), ('cpu(0)', 1, 3))) == 0     # one device with itself
    with pytest.raises(ValueError):
        tracing.overlap(spans, at_least=0)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(['cpu(0)', 'cpu(1)', 'cpu(2)']), st.integers(0, 40),
                          st.integers(1, 10)), max_size=12), st.integers(1, 3))
def test_overlap_is_what_a_fine_grid_counts(triples, at_least):
    # notebook 05's first version: sample the time on a grid and count the busy devices at every tick
    spans = _spans(*[(d, start, start + length) for d, start, length in triples])
    grid = np.arange(0, 51, 0.25) + 0.125              # integer span ends: ticks between them are exact
    busy = [np.any([(s.start <= grid) & (grid < s.end) for s in spans if s.device == d] or [grid < 0], axis=0)
            for d in ('cpu(0)', 'cpu(1)', 'cpu(2)')]
    assert tracing.overlap(spans, at_least) == 0.25 * (np.sum(busy, axis=0) >= at_least).sum()
    assert sum(tracing.busy(spans).values()) == 0.25 * np.sum(busy)
