"""What MXNet's engine ran, on which device, and when: a timeline from MXNet's own profiler
(notebook 01; the data-parallel step's timeline in notebook 04).

:func:`trace` runs a function under ``mx.profiler`` (``profile_imperative=True``: every operator
the engine executes), waits for the engine, and returns one :class:`Span` per operator: the device
it ran on (the profiler keeps one lane per context, ``cpu/0``, ``cpu/1``, ``gpu/0``, ...), its name,
and its start and end in milliseconds from the first operator. :func:`phase` sorts an operator
into the parts of a data-parallel step (forward, backward, communication, update) for plotting
with :func:`helpers.plot.timeline`. :func:`busy` and :func:`overlap` measure a trace: how long each
device ran operators, and how long two or more devices ran them at the same time.
"""
import atexit
import collections
import functools
import json
import os
import shutil
import tempfile

import mxnet as mx

from helpers import checks

__all__ = ['Span', 'traceable', 'trace', 'phase', 'busy', 'overlap', 'WIRE']

# The name that starts every message of an emulated link in the profiler (helpers.link):
# 'wire cpu(0)>cpu(1)'. Its span is the time the message holds its ports.
WIRE = 'wire'

Span = collections.namedtuple('Span', 'device name start end')
Span.__doc__ = 'One operator the engine ran: device, name, start and end in ms (notebooks 01, 05).'


_LANES = {}   # profiler pid -> lane name; MXNet names its lanes only in the first dump of a process


def _cores():
    """The processor cores this process may run on: MXNet's profiler has one CPU lane per core."""
    return len(os.sched_getaffinity(0)) if hasattr(os, 'sched_getaffinity') else os.cpu_count()


@functools.lru_cache(maxsize=None)
def _cuda_build():
    """Whether this MXNet was built with CUDA. Its profiler then has 32 GPU lanes, however many GPUs
    are visible (``kMaxNumGpus`` in ``Profiler::Profiler``, src/profiler/profiler.cc); without CUDA,
    none."""
    return mx.runtime.Features().is_enabled('CUDA')


def _device(pid):
    """The context of a profiler lane. The profiler has one CPU lane per processor core, then the
    GPU lanes, then 'cpu pinned' and 'cpu shared' (``Profiler::DeviceIndex``,
    src/profiler/profiler.h): a CPU context whose id is beyond the number of cores lands on a lane
    named for something else. On a build without CUDA (no GPU lanes) the last two lanes can only be
    ``cpu(pid)``; on a CUDA build they are pinned and shared host memory."""
    name = _LANES.get(pid, '')
    if name.startswith(('cpu/', 'gpu/')):
        return name.replace('/', '(') + ')'
    if _cuda_build():
        return {'cpu pinned/': 'cpu_pinned(0)', 'cpu shared/': 'cpu_shared(0)'}.get(name)
    return f'cpu({pid})'


def _events(text):
    """The events of one ``mx.profiler.dump(finished=False)``: the first dump of a process is an
    unterminated JSON object, later ones are continuations that start with a comma."""
    text = text.strip()
    if text.startswith('{'):
        text = text[text.index('[') + 1:]
    return json.loads('[' + text.lstrip(',').rstrip().rstrip(',') + ']')


def traceable(devices):
    """The first of ``devices`` that MXNet's profiler can show under their own name (notebooks 01,
    05): every GPU, and CPU contexts up to one per processor core, plus two more on a build without
    CUDA, whose operators land on the lanes MXNet names 'cpu pinned' and 'cpu shared'. Beyond that,
    in MXNet 1.9.1 (``Profiler::DeviceIndex``, src/profiler/profiler.h), a CPU context's operators
    land on a GPU's lane on a CUDA build, even one with no visible GPU, and would be shown as that
    GPU's; without CUDA they index past the lanes, and the profiler aborts the process
    (``CHECK_LT(idx, DeviceCount())``, same file). So a notebook traces only these."""
    devices = checks.devices(devices, present=False, empty=True)    # it also answers for lists it cannot show
    lanes = _cores() + (0 if _cuda_build() else 2)
    shown = []
    for d in devices:
        if d.device_type == 'cpu' and d.device_id >= lanes:
            break
        shown.append(d)
    return shown


_TRACE_DIR = []


def _trace_dir():
    """One scratch folder per process for the profiler's file, removed at exit. Not a folder per
    trace: MXNet's profiler may write its file again after ``dump`` returned (a per-trace
    TemporaryDirectory failed to remove itself, "Directory not empty", about once in 600 traces)."""
    if not _TRACE_DIR:
        _TRACE_DIR.append(tempfile.mkdtemp(prefix='mxdp-trace-'))
        atexit.register(shutil.rmtree, _TRACE_DIR[0], True)
    return _TRACE_DIR[0]


def trace(fn, *args, **kwargs):
    """Run ``fn(*args, **kwargs)`` under MXNet's profiler; return ``(result, spans)`` with one
    :class:`Span` per operator run on a device, sorted by start time (notebook 01)."""
    checks.function(fn, 'fn')
    mx.nd.waitall()
    path = os.path.join(_trace_dir(), 'profile.json')
    if os.path.exists(path):
        os.remove(path)
    # profile_memory=False: MXNet's default is True, and its storage counters are set up lazily, by the
    # first allocation profiled, without a safe lock: a second device's thread that allocates meanwhile
    # sees the list half-filled and aborts the cell ("Invalid device index: 1"; DeviceStorageProfiler::
    # Init, src/profiler/storage_profiler.h, MXNet 1.9.1; seen once, three test workers on two cores).
    # A trace reads no counter (helpers.memory does, started before anything is allocated).
    mx.profiler.set_config(profile_imperative=True, profile_memory=False, aggregate_stats=False, filename=path)
    mx.profiler.set_state('run')
    try:
        result = fn(*args, **kwargs)
        mx.nd.waitall()
    finally:
        mx.profiler.set_state('stop')
    mx.profiler.dump(finished=False)      # finished=True would forbid any later trace
    with open(path) as f:
        events = _events(f.read())
    _LANES.update({e['pid']: e['args']['name'] for e in events if e.get('ph') == 'M'})
    begun, spans = {}, []
    for e in events:
        if e.get('ph') in ('B', 'E') and isinstance(e.get('pid'), int) and _device(e['pid']):
            key = (e['pid'], e['tid'], e['name'])
            if e['ph'] == 'B':
                begun[key] = e['ts']
            elif key in begun:
                spans.append((_device(e['pid']), e['name'], begun.pop(key), e['ts']))
    spans = [s for s in spans if s[1] != 'DeleteVariable']     # the engine freeing memory
    spans = [(_wire_lane(n) or d, n, b, e) for d, n, b, e in spans]
    t0 = min((s[2] for s in spans), default=0)
    spans = [Span(d, n, (b - t0) / 1e3, (e - t0) / 1e3) for d, n, b, e in spans]
    return result, sorted(spans, key=lambda s: (s.start, s.end, s.device, s.name))


def _wire_lane(name):
    """The lane of an emulated link's message (helpers.link): its sender's send port,
    ``'cpu(0) wire'``; None for any other operator. A message sent from a custom operator's or an
    ``autograd.Function``'s thread is named ``'<op type>::wire ...'`` (notebook 12)."""
    name = name.rpartition('::')[2]
    if name.startswith(WIRE + ' ') and '>' in name:
        return name[len(WIRE) + 1:].split('>')[0] + ' ' + WIRE
    return None


def phase(name):
    """The part of a data-parallel step an operator belongs to, from its name as MXNet 1.9.1's
    profiler records it (notebook 05): ``'backward'``, ``'communication'``, ``'wire'``,
    ``'update'`` or ``'forward'``.

    * backward: ``_backward_*`` operators; ``ImperativeBulk``, because autograd's backward pass
      pushes its operators in bulks of up to 15 (``Imperative::Backward``,
      src/imperative/imperative.cc, with ``MXNET_EXEC_BULK_EXEC_MAX_NODE_TRAIN_BWD``) under that
      name (``ThreadedEngine::BulkFlush``, src/engine/threaded_engine.h); and ``SetValueOp``, the
      head gradient of ones it starts from;
    * communication: copies between devices (``CopyCPU2CPU``, ``CopyCPU2GPU``, ...: ``CopyFromTo``,
      src/ndarray/ndarray.cc), KVStore operators (src/kvstore/comm.h), ``ElementwiseSum``, and the
      additions of a hand-written allreduce (``a += b`` runs ``broadcast_add``);
    * wire: a message of an emulated link (:mod:`helpers.link`), for the time it holds its ports;
    * update: optimizer operators (``sgd_update``, ...) and the arithmetic of hand-written SGD
      (``p -= lr * p.grad / batch_size`` runs ``_mul_scalar``, ``_div_scalar``, ``broadcast_sub``).

    Names cannot tell every use apart: the loss's negation is a ``_mul_scalar`` too (counted as
    update), and a residual connection's ``Y + X`` a ``broadcast_add``. The scratch LeNet step of
    notebook 05 has no addition in its forward pass; its one negation per device takes microseconds.
    A hybridized network's forward pass in training, unless ``static_alloc``, is pushed in bulks named
    ``ImperativeBulk`` too (``CachedOp::Forward`` sets the engine's bulk size,
    src/imperative/cached_op.cc), so it counts as backward: add the two for such a network.
    """
    lowered = checks.text(name, 'name').lower()
    if _wire_lane(name):
        return WIRE
    if lowered.startswith('_backward') or lowered in ('imperativebulk', 'setvalueop'):
        return 'backward'
    if ('copy' in lowered or 'kvstore' in lowered
            or lowered in ('elementwisesum', 'add_n', 'broadcast_add', 'elemwise_add', '_plus')):
        return 'communication'
    if 'update' in lowered or lowered in ('_mul_scalar', '_div_scalar', 'broadcast_sub',
                                          'elemwise_sub', '_minus', '_minus_scalar'):
        return 'update'
    return 'forward'


def _busy_intervals(spans):
    """``{device: [(start, end), ...]}``: the times each device ran at least one operator, as
    disjoint intervals sorted by start (overlapping or touching spans of one device merged)."""
    spans = checks.spans(spans)
    per_device = collections.defaultdict(list)
    for s in spans:
        per_device[s.device].append((s.start, s.end))
    merged = {}
    for device, intervals in sorted(per_device.items()):
        out = []
        for start, end in sorted(intervals):
            if out and start <= out[-1][1]:
                out[-1][1] = max(out[-1][1], end)
            else:
                out.append([start, end])
        merged[device] = [tuple(i) for i in out]
    return merged


def busy(spans):
    """Milliseconds during which each device ran at least one operator, ``{device: ms}``, from the
    spans of :func:`trace` (notebooks 01, 05): operators of one device that overlap count once."""
    return {d: sum(end - start for start, end in intervals) for d, intervals in _busy_intervals(spans).items()}


def overlap(spans, at_least=2):
    """Milliseconds during which ``at_least`` devices or more ran an operator at the same time, from
    the spans of :func:`trace` (notebook 04: does MXNet run a ring's sends at once? notebook 05: do the
    devices' lanes overlap, or take turns? and both notebooks' solutions). 0 for lanes that only
    take turns; spans that merely touch do not count."""
    at_least = checks.whole(at_least, 'at_least', 1)
    edges = sorted((t, step) for intervals in _busy_intervals(spans).values()
                   for start, end in intervals for t, step in ((start, 1), (end, -1)))
    total, running, last = 0.0, 0, None         # at equal times an end (-1) sorts before a start
    for t, step in edges:
        if running >= at_least:
            total += t - last
        running, last = running + step, t
    return total
