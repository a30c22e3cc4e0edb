"""Where a KVStore sums and updates, and what that costs: placement, memory, time -- notebook 07.

- :func:`merge_buffer_owners` -- the lesson: which device holds each key's merge buffer in the
  ``device`` store (``CommDevice::InitMergeBuffer``, src/kvstore/comm.h, MXNet 1.9.1);
- :func:`reduce_owners` -- the same question asked of MXNet itself: the device whose engine lane
  ran each key's sum, read from MXNet's profiler;
- :func:`updates_on_store` -- whether Gluon, left to choose, updates the weights on the store:
  MXNet's own rule, asked with parameters of given sizes and no memory;
- :func:`store_memory` -- host memory a store allocates per key, in arrays' worth, measured in a
  fresh process so that nothing else moves the resident set, for one or several device counts;
- :func:`arrays_per_key` -- the same predicted from the source: the model the measurements check;
- :func:`pushpull_seconds` -- median time of one ``push`` (one array per device) plus ``pull``;
- :func:`compressed_pushes` -- what a store with 2-bit gradient compression receives when the
  same gradient is pushed several times (the residual error feedback at work).
"""
import json
import os
import subprocess
import sys
import types

import numpy as np
import mxnet as mx
from mxnet import nd

from helpers import checks
from helpers.tracing import trace, traceable
from helpers.timing import time_it

__all__ = ['STORE_TYPES', 'EXTRAS', 'merge_buffer_owners', 'reduce_owners', 'updates_on_store',
           'store_memory', 'arrays_per_key', 'pushpull_seconds', 'compressed_pushes']

STORE_TYPES = ('local', 'device')
# What can be added to a store in store_memory: an optimizer on the store, or 2-bit compression.
EXTRAS = (None, 'sgd', 'momentum', '2bit')


def _check_type(kv_type):
    checks.choice(kv_type, 'kv_type', STORE_TYPES)


def merge_buffer_owners(sizes, k):
    """The device (0 ... k-1) that holds each key's merge buffer in the ``device`` store, for keys
    of ``sizes`` elements (notebook 07): like ``CommDevice::InitMergeBuffer`` (src/kvstore/comm.h),
    the largest key first, each on the device that holds the fewest elements so far."""
    k, sizes = checks.whole(k, 'k', 1, checks.MAX_DEVICES), checks.counts(sizes, 'sizes', 1)
    load, owners = [0] * k, [None] * len(sizes)
    for key in sorted(range(len(sizes)), key=lambda i: -sizes[i]):   # largest first
        device = load.index(min(load))          # the least loaded; ties: the lowest index
        owners[key] = device
        load[device] += sizes[key]
    return owners


def reduce_owners(sizes, devices):
    """Ask MXNet where it sums each key (notebook 07): init one key per size in a fresh ``device``
    store, push one array per device for every key, and return per key the index in ``devices`` of
    the device whose engine lane ran the sum (``ElementwiseSum``), read from MXNet's profiler.
    Needs at least two devices: with one, MXNet sums nothing (``Reduce`` returns the pushed array).
    MXNet's profiler shows ``cpu(i)`` only while ``i`` < the number of cores (+ 2 on a build without
    CUDA): :func:`helpers.tracing.traceable`; other stand-ins are refused here."""
    devices = checks.devices(devices)
    if len(devices) < 2:
        raise ValueError('reduce_owners needs at least two devices: with one, nothing is summed')
    shown = traceable(devices)
    if len(shown) < len(devices):
        raise ValueError(f"MXNet's profiler cannot show {devices[len(shown)]} on this machine: use fewer "
                         'CPU stand-ins (helpers.tracing.traceable)')
    sizes = checks.counts(sizes, 'sizes', 1)
    kv = mx.kv.create('device')
    for key, n in enumerate(sizes):
        kv.init(key, nd.zeros(n))
    grads = [[nd.ones(n, ctx=d) for d in devices] for n in sizes]
    owners = []
    for key in range(len(sizes)):
        _, spans = trace(kv.push, key, grads[key])
        summed = {s.device for s in spans if s.name == 'ElementwiseSum'}
        if len(summed) != 1:
            raise RuntimeError(f'key {key}: expected one ElementwiseSum, the profiler saw {summed}')
        owners.append([str(d) for d in devices].index(summed.pop()))
    return owners


def updates_on_store(kv_type, num_devices, sizes):
    """Whether Gluon's ``Trainer``, given a store named ``kv_type`` and no ``update_on_kvstore``,
    updates dense weights on the store, for ``num_devices`` devices and parameters of ``sizes``
    elements (notebook 07). The answer is MXNet's own: ``_create_kvstore`` (python/mxnet/model.py,
    MXNet 1.9.1), which the ``Trainer`` asks (``Trainer._init_kvstore``). That function reads
    only each parameter's ``.shape``, so it gets stand-ins with a shape and no memory: VGG-16's
    sizes cost nothing. It creates the store it decides about and reads ``MXNET_UPDATE_ON_KVSTORE``."""
    _check_type(kv_type)
    num_devices = checks.whole(num_devices, 'num_devices', 1, checks.MAX_DEVICES)
    params = {f'p{i}': types.SimpleNamespace(shape=(n,)) for i, n in enumerate(checks.counts(sizes, 'sizes', 1))}
    if not params:
        raise ValueError('updates_on_store needs at least one parameter size')
    _, on_store = mx.model._create_kvstore(kv_type, num_devices, params)
    return on_store


def _measure_memory(cases, k, size):
    """In this (fresh) process: the growth of the resident set, in arrays of ``size`` float32, of
    each store of ``cases`` after init and three push/pull rounds; freed again before the next."""
    import gc
    import psutil
    proc = psutil.Process()

    def anonymous():            # resident anonymous memory, and any of it swapped out (see store_memory)
        m = proc.memory_info()
        return m.rss - getattr(m, 'shared', 0) + getattr(proc.memory_full_info(), 'swap', 0)
    devices = [mx.cpu(i) for i in range(k)]
    grads = [nd.ones((size,), ctx=d) for d in devices]
    outs = [nd.zeros((size,), ctx=d) for d in devices]
    weight = nd.zeros((size,))
    found = []
    for kv_type, extra in cases:
        gc.collect()
        nd.waitall()
        before = anonymous()
        kv = mx.kv.create(kv_type)
        if extra == '2bit':
            kv.set_gradient_compression({'type': '2bit', 'threshold': 0.5})
        elif extra in ('sgd', 'momentum'):
            kv.set_optimizer(mx.optimizer.SGD(learning_rate=0.1, momentum=0.9 if extra == 'momentum' else 0))
        kv.init(0, weight)
        for _ in range(3):
            kv.push(0, grads)
            kv.pull(0, out=outs)
        nd.waitall()
        found.append((anonymous() - before) / (4 * size))
        del kv               # its arrays are freed (large ones go back to the system: see below)
    return found


def store_memory(cases, k, size=16_000_000, timeout=300):
    """Host memory, in arrays' worth, that each store of ``cases`` holds for one float32 key of
    ``size`` values after three push/pull rounds on ``k`` CPU stand-ins (notebook 07). ``k`` may be
    a list of device counts: then a list with one such list per count, measured in the same process.

    ``cases`` is a list of ``(kv_type, extra)``: ``kv_type`` in ``STORE_TYPES``, ``extra`` in
    ``EXTRAS`` (``'sgd'`` / ``'momentum'``: that optimizer runs on the store; ``'2bit'``: 2-bit
    compression). Measured as the growth of the *anonymous* memory of a fresh Python process (its
    resident set without file-backed pages, plus any of it swapped out), one case after the other,
    each store deleted before the next. The default size, 64 MB per array, is above glibc's largest
    ``mmap`` threshold (32 MiB), so every array is its own anonymous mapping, counted when touched and
    returned to the system when freed. Not the whole resident set: it also counts the pages of
    ``libmxnet.so`` and the other libraries mapped from disk (about 160 MB here), which a machine
    short of memory drops and reads back at any moment, so that under load the growth of one case was
    seen a quarter of an array off (issue 35). CPU stand-ins share the host's memory, so
    this is the total over all "devices"; on GPUs the same buffers are split between host and GPUs
    as notebook 07 explains.
    """
    cases = checks.store_cases(cases, STORE_TYPES, EXTRAS)
    several = not isinstance(k, (int, np.integer)) or isinstance(k, bool)
    ks = [checks.whole(n, 'k', 1, checks.MAX_DEVICES) for n in (checks.ordered(k, 'k') if several else [k])]
    if not ks:
        raise ValueError('k is an empty list: need at least one device count')
    size = checks.whole(size, 'size', 1)
    checks.fits(3 * 4 * max(ks) * size, f'{max(ks)} x 3 arrays of size {size} (float32)')
    timeout = checks.seconds(timeout, 'timeout')
    code = ('import json; from helpers.kvstore import _measure_memory; '
            f'print(json.dumps([_measure_memory({list(cases)!r}, n, {size}) for n in {ks!r}]))')
    env = dict(os.environ, OMP_NUM_THREADS='1')
    mx.nd.waitall()        # Python 3.9 forks holding its lock: no emulated message may be in flight (helpers.link)
    proc = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                          timeout=timeout, env=env, start_new_session=True)
    if proc.returncode != 0:
        raise RuntimeError(f'memory measurement failed: {proc.stderr.strip().splitlines()[-3:]}')
    found = json.loads(proc.stdout.strip().splitlines()[-1])
    return found if several else found[0]


def arrays_per_key(k, extra=None):
    """How many arrays of a key's size a ``local`` or ``device`` store holds on ``k`` devices once
    training runs (notebook 07), read from MXNet 1.9.1's source (src/kvstore/comm.h,
    src/kvstore/kvstore_local.h): the merge buffer and k-1 copy buffers (none at k = 1, where
    ``Reduce`` returns the pushed array itself); with an optimizer on the store, its copy of the
    weights and the optimizer's state (SGD: none; with momentum: one array); with 2-bit compression,
    a copy buffer for every device (the owner's own push is dequantised into one too), k residuals,
    and 2k-1 compressed arrays of 1/16 each (one per device, and a copy on the owner of every other's).
    :func:`store_memory` sees those small arrays only where they do not reuse memory freed before:
    measured with 2-bit compression, expect up to (2k-1)/16 below this."""
    k, extra = checks.whole(k, 'k', 1), checks.choice(extra, 'extra', EXTRAS)
    if extra == '2bit':
        return 2 * k + 1 + (2 * k - 1) / 16
    return (k if k > 1 else 0) + {None: 0, 'sgd': 1, 'momentum': 2}[extra]


def pushpull_seconds(kv_type, devices, size, repeat=5):
    """Median seconds of ``push`` of one float32 array of ``size`` values per device (summed by the
    store) followed by ``pull`` of the sum back to every device (notebook 07)."""
    _check_type(kv_type)
    size = checks.whole(size, 'size', 1)
    devices = checks.devices(devices)
    checks.fits(4 * size * (2 * len(devices) + 1), f'{2 * len(devices) + 1} arrays of size {size} (float32)')
    kv = mx.kv.create(kv_type)
    kv.init(0, nd.zeros((size,)))
    grads = [nd.ones((size,), ctx=d) for d in devices]
    outs = [nd.zeros((size,), ctx=d) for d in devices]

    def pushpull():
        kv.push(0, grads)
        kv.pull(0, out=outs)

    seconds = time_it(pushpull, repeat=repeat, warmup=1)
    assert outs[-1][0].asscalar() == len(devices)  # the pulled value is the sum of the pushes
    return seconds


def compressed_pushes(grad, steps, threshold=0.5, ctx=None):
    """Push the same gradient ``grad`` (a 1-D NumPy array) ``steps`` times into a ``device`` store
    with 2-bit compression; return a ``(steps, len(grad))`` array of what the store received each time
    (notebook 07).

    With 2-bit compression each value sent is ``+threshold``, ``-threshold`` or ``0``; what was not
    sent is kept as a *residual* and added to the next gradient (error feedback), so over many
    pushes the sum of what was sent follows the sum of the true gradients.
    """
    grad = checks.vector(grad, 'grad')
    steps = checks.whole(steps, 'steps', 1)
    threshold = checks.positive(threshold, 'threshold')
    ctx = mx.cpu() if ctx is None else checks.context(ctx, 'ctx')
    kv = mx.kv.create('device')
    kv.set_gradient_compression({'type': '2bit', 'threshold': threshold})
    kv.init(0, nd.zeros(grad.shape, ctx=ctx))
    out = nd.zeros(grad.shape, ctx=ctx)
    received = []
    for _ in range(steps):
        kv.push(0, nd.array(grad, ctx=ctx))   # no updater: the store keeps what it received
        kv.pull(0, out=out)
        received.append(out.asnumpy())
    return np.stack(received)
