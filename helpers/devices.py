"""Which devices the series trains on: real GPUs when there are enough, CPU stand-ins otherwise.

Taught in notebook 00 (setup and devices). Every later notebook calls :func:`get_devices` once and
prints :func:`describe` so its output says which devices it used.

On a machine with fewer than ``k`` GPUs the series uses ``mx.cpu(0) ... mx.cpu(k-1)``. MXNet
gives each CPU context its own id, so arrays really do live "on" different contexts and every
lesson about placement, splitting and reduction shows up; they share the same cores and memory,
so speed-ups do not.

Set the environment variable ``MXDP_DEVICES=cpu`` to force CPU stand-ins on a GPU machine.
"""
import os

import mxnet as mx

__all__ = ['num_gpus', 'get_devices', 'describe', 'device_kind']

FORCE_ENV = 'MXDP_DEVICES'


def _check_k(k):
    # bool is an int subclass; get_devices(True) is almost certainly a mistake.
    if isinstance(k, bool) or not isinstance(k, int):
        raise ValueError(f'k must be a whole number of devices, got {k!r} ({type(k).__name__})')
    if k < 1:
        raise ValueError(f'k must be at least 1 device, got {k}')


def num_gpus():
    """Number of GPUs MXNet can use (0 on a CPU-only build or machine; never raises)."""
    if os.environ.get(FORCE_ENV, '').lower() == 'cpu':
        return 0
    try:
        return mx.context.num_gpus()
    except mx.base.MXNetError:  # CUDA build without a usable driver
        return 0


def get_devices(k=2):
    """The ``k`` devices the series uses: ``[gpu(0)..gpu(k-1)]`` if there are at least ``k`` GPUs,
    else the CPU stand-ins ``[cpu(0)..cpu(k-1)]``.

    Raises ``ValueError`` if ``k`` is not a whole number >= 1.
    """
    _check_k(k)
    if num_gpus() >= k:
        return [mx.gpu(i) for i in range(k)]
    return [mx.cpu(i) for i in range(k)]


def device_kind(devices):
    """'gpu' if every device is a GPU, 'cpu' if every one is a CPU; ``ValueError`` if mixed or empty."""
    kinds = {d.device_type for d in devices}
    if len(kinds) != 1 or 'cpu_pinned' in kinds or 'cpu_shared' in kinds:
        raise ValueError(f'expected devices of one kind (all gpu or all cpu), got {list(devices)}')
    return kinds.pop()


def describe(devices):
    """One line saying which devices are used and why, e.g.
    ``'using 2 CPU stand-ins [cpu(0), cpu(1)]: 0 GPUs found, 2 needed'``.
    """
    devices = list(devices)
    k, found = len(devices), num_gpus()
    names = ', '.join(str(d) for d in devices)
    if device_kind(devices) == 'gpu':
        return f'using {k} GPU(s) [{names}]: {found} GPU(s) found'
    if os.environ.get(FORCE_ENV, '').lower() == 'cpu':
        why = f'{FORCE_ENV}=cpu forces CPU stand-ins'
    else:
        why = f'{found} GPU(s) found, {k} needed'
    return f'using {k} CPU stand-in(s) [{names}]: {why}'
