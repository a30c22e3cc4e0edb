"""Which devices the series trains on: every GPU the machine has, or CPU stand-ins (notebook 00).

One place decides: :func:`get_devices` with no argument returns

* every GPU MXNet can see (``k`` = the number of GPUs, 1 or more), on a GPU machine;
* two CPU stand-ins ``[cpu(0), cpu(1)]`` otherwise;
* ``k`` CPU stand-ins when the environment variable ``MXDP_DEVICES=cpu:k`` is set (``cpu`` alone
  means ``cpu:2``), on any machine: to run the series at another ``k``, or to leave the GPUs alone.

MXNet gives every CPU context its own id and its own engine worker thread, so arrays really live
"on" different contexts and every lesson about placement, splitting and reduction shows up; they
share the same cores and memory, so speed-ups do not. Every notebook prints :func:`describe`, so
its output says what it ran on. With a single device (a 1-GPU machine) nothing is split or
summed: the notebooks still run and say so.
"""
import os
import re

import mxnet as mx

from helpers import checks

__all__ = ['FORCE_ENV', 'num_gpus', 'forced_standins', 'get_devices', 'device_kind', 'describe']

FORCE_ENV = 'MXDP_DEVICES'
DEFAULT_STANDINS = 2


def num_gpus():
    """Number of GPUs MXNet can use (notebook 00): 0 on a CPU-only build or without a usable
    driver (never raises)."""
    try:
        return mx.context.num_gpus()
    except mx.base.MXNetError:  # a CUDA build without a usable driver
        return 0


def forced_standins():
    """``k`` if ``MXDP_DEVICES`` asks for ``k`` CPU stand-ins (``cpu`` or ``cpu:k``), else None
    (notebook 00). A malformed value is a ``ValueError`` naming the variable."""
    value = os.environ.get(FORCE_ENV, '').strip().lower()
    if not value:
        return None
    match = re.fullmatch(r'cpu(?::([0-9]+))?', value)          # 'cpu' or 'cpu:' + ASCII digits
    if not match or (match[1] is not None and int(match[1]) == 0):   # 'cpu:0' and 'cpu:00' alike
        raise ValueError(f'{FORCE_ENV}={value!r}: expected "cpu" (two CPU stand-ins) or "cpu:k" '
                         '(k >= 1 stand-ins), e.g. MXDP_DEVICES=cpu:4')
    return DEFAULT_STANDINS if match[1] is None else checks.whole(int(match[1]), FORCE_ENV, 1, checks.MAX_DEVICES)


def get_devices(k=None):
    """The devices a notebook trains on (notebook 00; every notebook calls it once).

    ``k=None``: every GPU, else two CPU stand-ins; ``MXDP_DEVICES=cpu:k`` forces ``k`` stand-ins.
    An explicit ``k`` (a demonstration that needs exactly ``k`` devices) gives ``k`` GPUs if there
    are that many (and stand-ins are not forced), else ``k`` CPU stand-ins.
    """
    forced = forced_standins()
    if k is None:
        if forced:
            return [mx.cpu(i) for i in range(forced)]
        gpus = num_gpus()
        return [mx.gpu(i) for i in range(gpus)] if gpus else [mx.cpu(i) for i in range(DEFAULT_STANDINS)]
    k = checks.whole(k, 'k', 1, checks.MAX_DEVICES)
    if not forced and num_gpus() >= k:
        return [mx.gpu(i) for i in range(k)]
    return [mx.cpu(i) for i in range(k)]


def device_kind(devices):
    """``'gpu'`` if every device is a GPU, ``'cpu'`` if every one is a CPU context (notebook 00);
    ``ValueError`` for a mix or an empty list."""
    kinds = {d.device_type for d in checks.devices(devices)}
    if len(kinds) != 1 or not kinds <= {'cpu', 'gpu'}:
        raise ValueError(f'expected devices of one kind (all gpu or all cpu), got {list(devices)}')
    return kinds.pop()


def describe(devices):
    """One line saying which devices are used and why (notebook 00), e.g.
    ``'2 CPU stand-ins [cpu(0), cpu(1)]: no GPU found'``."""
    devices = checks.devices(devices)
    k, names = len(devices), ', '.join(str(d) for d in devices)
    if device_kind(devices) == 'gpu':
        line = f'{k} GPU{"s" * (k > 1)} [{names}] of {num_gpus()} found'
    else:
        why = (f'{FORCE_ENV}={os.environ[FORCE_ENV]}' if forced_standins()
               else f'{num_gpus()} GPU(s) found' if num_gpus() else 'no GPU found')
        line = f'{k} CPU stand-in{"s" * (k > 1)} [{names}]: {why}'
    if k == 1:
        line += ('; one device: nothing to split or sum here (MXDP_DEVICES=cpu:2 shows two '
                 'CPU stand-ins)')
    return 'using ' + line
