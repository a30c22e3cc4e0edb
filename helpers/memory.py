"""How many bytes MXNet holds on each device, from MXNet's own accounting (notebooks 11-13).

MXNet allocates every NDArray's memory through one object, its storage (``StorageImpl::Alloc`` and
``Free``, src/storage/storage.cc, MXNet 1.9.1), and that object reports every allocation and every
free to a *storage profiler* (``DeviceStorageProfiler``, src/profiler/storage_profiler.h): one
counter per device, ``Memory: cpu/0``, ``Memory: cpu/1``, ..., raised by the size of each block
allocated on that device and lowered by the size of each block freed, while MXNet's profiler runs
with ``profile_memory=True``. The counters appear in the profiler's dump as counter events.

What the counter counts, exactly: the bytes MXNet *asked for* (``handle.size``) on that device and
has not freed, through its storage -- every NDArray's data, the optimizer's state, the engine's
scratch space -- and nothing else: not Python objects, not NumPy arrays, not what a library such as
oneDNN allocates on its own, not how the C library rounds a request up. For CPU stand-ins that is
the clean per-"device" number that the process's resident memory (``helpers.kvstore.store_memory``)
cannot give, since all stand-ins share one address space.

Caveats, all from the same source. A counter only moves while the profiler runs, and a block
allocated before it started lowers it when freed (down to 0, not below): so :class:`StorageMeter`
is started in a *fresh process*, before anything is allocated (:func:`in_fresh_process`). MXNet's
profiler has one lane per processor core, then 32 GPU lanes on a CUDA build, then ``cpu pinned``
and ``cpu shared`` (``Profiler::DeviceIndex``, src/profiler/profiler.h); a CPU stand-in whose id
is beyond the cores is counted on a later lane (on a build without CUDA, ``cpu(cores)`` on the
'cpu pinned' lane, which :class:`StorageMeter` maps back), and beyond all lanes MXNet aborts the
process. :func:`helpers.tracing.traceable` says which stand-ins are safe.
"""
import gc
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import mxnet as mx

from helpers import checks

__all__ = ['StorageMeter', 'in_fresh_process']

_COUNTER = re.compile(r'"ph": "C",\s*"ts": (\d+),\s*"args": \{ "Memory: ([^"]*)": (\d+) \}')
_LANE = re.compile(r'"args": \{\s*"name": "([^"]*)"\s*\},\s*"pid": (\d+),\s*"name": "process_name"')


class StorageMeter:
    """Bytes MXNet's storage holds per device, read from the profiler's memory counters (notebook 11).

    ``meter = StorageMeter()`` starts MXNet's profiler with only ``profile_memory`` on;
    ``meter.read()`` waits for the engine and returns ``{'cpu(0)': bytes, 'cpu(1)': bytes, ...}``
    for every device that allocated something since; ``meter.stop()`` stops the profiler. Start it
    before anything is allocated (a fresh process: :func:`in_fresh_process`), see the module's
    docstring for why and for what it counts.
    """

    def __init__(self):
        self._dir = tempfile.mkdtemp(prefix='mxdp-memory-')
        self._path = os.path.join(self._dir, 'profile.json')
        mx.profiler.set_config(profile_memory=True, profile_imperative=False, profile_symbolic=False,
                               profile_api=False, aggregate_stats=False, filename=self._path)
        mx.profiler.set_state('run')
        self._running, self._since, self._held = True, 0, {}

    def _device(self, lane, cpu_lanes):
        if lane.startswith(('cpu/', 'gpu/')):
            return lane.replace('/', '(') + ')'
        if not mx.runtime.Features().is_enabled('CUDA'):          # beyond the cores: next lanes
            return {'cpu pinned/': f'cpu({cpu_lanes})', 'cpu shared/': f'cpu({cpu_lanes + 1})'}.get(lane, lane)
        return lane

    def _counters(self):
        found = None
        gc.collect()                             # arrays kept only by reference cycles are freed; then
        for _ in range(10):                      # wait until a wait frees nothing more: an operator lets go
            mx.nd.waitall()                      # of its arrays only after the engine counted it done, so a
            time.sleep(0.02)                     # free can follow a wait (a copy's source, measured)
            mx.profiler.dump(finished=False)
            with open(self._path) as f:
                text = f.read()
            if found == len(_COUNTER.findall(text)):
                break
            found = len(_COUNTER.findall(text))
        cpu_lanes = sum(1 for name, _ in _LANE.findall(text) if name.startswith('cpu/'))
        return [(int(ts), self._device(lane, cpu_lanes), int(value))      # in time order: the dump is
                for ts, lane, value in sorted(_COUNTER.findall(text), key=lambda c: int(c[0]))]   # by thread

    def read(self):
        """``{device: bytes}`` held now, per MXNet's storage profiler (notebook 11)."""
        if not self._running:
            raise RuntimeError('this StorageMeter was stopped')
        held = {}
        for ts, device, value in self._counters():
            held[device] = value                 # the latest value wins
            self._since = max(self._since, ts)
        self._held = held
        return held

    def peak(self):
        """``{device: bytes}``: the most each device held at any moment since the last :meth:`read`
        (or :meth:`peak`), every allocation and free of the engine counted (notebook 12)."""
        if not self._running:
            raise RuntimeError('this StorageMeter was stopped')
        since, high = self._since, dict(self._held)
        for ts, device, value in self._counters():
            if ts > since:
                high[device] = max(high.get(device, 0), value)
                self._held[device] = value
                self._since = max(self._since, ts)
        return high

    def stop(self):
        """Stop the profiler (notebook 11)."""
        if self._running:
            mx.profiler.set_state('stop')
            self._running = False
            shutil.rmtree(self._dir, ignore_errors=True)


def in_fresh_process(function, *args, timeout=600, synchronous=False):
    """``function(*args)`` run in a fresh Python process, its JSON-able result returned (notebooks 11-13).
    ``function`` is named by its module and name, e.g. ``'helpers.sharding.measure_memory'``;
    the arguments must be JSON-able. A memory measurement needs a process where nothing was allocated
    before the meter started; a global switch such as ``mxnet.contrib.amp.init()`` must not change
    the notebook's own process.

    ``synchronous=True`` runs the process on MXNet's ``NaiveEngine``, which runs each operation when it
    is pushed, on the pushing thread: an array is freed as soon as its last holder (Python, a view,
    autograd's recorded graph) lets go of it, so the same program reaches the same *peak*
    (:meth:`StorageMeter.peak`) in every run. Otherwise the process runs on the engine its environment
    names, by default the threaded one: there an operation waiting in the engine holds its arrays, and an
    array is freed only after the operations pushed earlier on it (its engine variable) have run, so a
    peak also counts arrays the program is done with, as many as the engine is behind, which varies from
    run to run (notebook 12's aside)."""
    if not isinstance(function, str):
        raise TypeError(f"function must be named as 'module.name', got {function!r}")
    if '.' not in function:
        raise ValueError(f"function must be named as 'module.name', got {function!r}")
    checks.module(function, 'function')
    timeout = checks.seconds(timeout, 'timeout')
    synchronous = checks.flag(synchronous, 'synchronous')
    module, _, name = function.rpartition('.')
    code = (f'import json, sys; from {module} import {name}; '
            f'print("\\nRESULT " + json.dumps({name}(*json.loads(sys.argv[1]))))')
    env = dict(os.environ, OMP_NUM_THREADS=os.environ.get('OMP_NUM_THREADS', '1'))
    if synchronous:                       # read once, when the engine is made (src/engine/engine.cc)
        env['MXNET_ENGINE_TYPE'] = 'NaiveEngine'
    mx.nd.waitall()        # Python 3.9 forks holding its lock: no emulated message may be in flight (helpers.link)
    proc = subprocess.run([sys.executable, '-c', code, json.dumps(list(args))], capture_output=True,
                          text=True, timeout=timeout, env=env, start_new_session=True)
    lines = [line for line in proc.stdout.splitlines() if line.startswith('RESULT ')]
    if proc.returncode != 0 or not lines:
        tail = (proc.stderr.strip() or proc.stdout.strip()).splitlines()[-3:]
        raise RuntimeError(f'{function}{tuple(args)} failed in a fresh process: {tail}')
    return json.loads(lines[-1][len('RESULT '):])
