"""Where reduction and update happen: measurements and small tools for KVStore -- notebook 07.

- :func:`pushpull_seconds` -- median time of one ``push`` (a list of per-device values, summed)
  plus ``pull`` (to every device) through a ``local`` or ``device`` store;
- :func:`store_memory` -- host memory (RSS) a store allocates for one key, measured in a fresh
  process so that MXNet's memory pool starts empty;
- :func:`compressed_pushes` -- what a store with 2-bit gradient compression receives when the same
  gradient is pushed several times (the residual error feedback at work).

The weighted split for devices of unequal speed is ``helpers.train.train_batch(..., weights=...)``.
"""
import json
import os
import subprocess
import sys

import numpy as np
import mxnet as mx
from mxnet import nd

from helpers.timing import time_it
from helpers import checks

__all__ = ['STORE_TYPES', 'pushpull_seconds', 'store_memory', 'compressed_pushes']

STORE_TYPES = ('local', 'device')


def _check_type(kv_type):
    if kv_type not in STORE_TYPES:
        raise ValueError(f'kv_type must be one of {STORE_TYPES}, got {kv_type!r}')


def _check_size(size):
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 1:
        raise ValueError(f'size must be a positive whole number of float32 values, got {size!r}')


def pushpull_seconds(kv_type, devices, size, repeat=5):
    """Median seconds of ``push`` of one float32 array of ``size`` values per device (summed by the
    store) followed by ``pull`` of the sum back to every device (notebook 07)."""
    _check_type(kv_type)
    _check_size(size)
    devices = checks.devices(devices)
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


def _measure_memory(kv_type, num_devices, size):
    import psutil
    proc = psutil.Process()
    devices = [mx.cpu(i) for i in range(num_devices)]
    grads = [nd.ones((size,), ctx=d) for d in devices]
    outs = [nd.zeros((size,), ctx=d) for d in devices]
    nd.waitall()
    rss = [proc.memory_info().rss]
    kv = mx.kv.create(kv_type)
    kv.init(0, nd.zeros((size,)))
    nd.waitall()
    rss.append(proc.memory_info().rss)
    kv.push(0, grads)
    kv.pull(0, out=outs)
    nd.waitall()
    rss.append(proc.memory_info().rss)
    return {'init_mb': (rss[1] - rss[0]) / 1e6, 'first_push_mb': (rss[2] - rss[1]) / 1e6,
            'array_mb': size * 4 / 1e6}


def store_memory(kv_type, num_devices=2, size=16_000_000, timeout=120):
    """Host memory in MB that a ``kv_type`` store allocates for one float32 key of ``size`` values,
    with ``num_devices`` CPU stand-ins: ``{'init_mb', 'first_push_mb', 'array_mb'}`` (notebook 07).

    Measured as the growth of the resident set size of a fresh Python process, after ``init`` and
    after the first ``push``/``pull``. CPU stand-ins share the host's memory, so this is the total
    over all "devices"; on GPUs the same buffers land in GPU memory (see notebook 07).
    """
    _check_type(kv_type)
    _check_size(size)
    code = ('import json, sys; from helpers.kvstore import _measure_memory; '
            f'print(json.dumps(_measure_memory({kv_type!r}, {int(num_devices)}, {int(size)})))')
    env = dict(os.environ, OMP_NUM_THREADS='1')
    proc = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                          timeout=timeout, env=env, start_new_session=True)
    if proc.returncode != 0:
        raise RuntimeError(f'memory measurement failed: {proc.stderr.strip().splitlines()[-1:]}')
    return json.loads(proc.stdout.strip().splitlines()[-1])


def compressed_pushes(grad, steps, threshold=0.5, ctx=None):
    """Push the same gradient ``grad`` (a 1-D NumPy array) ``steps`` times into a ``device`` store
    with 2-bit compression; return a ``(steps, len(grad))`` array of what the store received each time.

    With 2-bit compression each value sent is ``+threshold``, ``-threshold`` or ``0``; what was not
    sent is kept as a *residual* and added to the next gradient (error feedback), so over many
    pushes the sum of what was sent follows the sum of the true gradients (notebook 07).
    """
    grad = np.asarray(grad, dtype=np.float32)
    if grad.ndim != 1 or grad.size == 0:
        raise ValueError(f'grad must be a non-empty 1-D array, got shape {grad.shape}')
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 1:
        raise ValueError(f'steps must be a positive whole number, got {steps!r}')
    ctx = ctx or mx.cpu()
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
