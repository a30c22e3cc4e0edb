"""Which devices the series trains on: every GPU the machine has, or CPU stand-ins (notebook 00).

One place decides: :func:`get_devices` with no argument returns

* every GPU MXNet can see (``k`` = the number of GPUs, 1 or more), on a GPU machine -- every GPU
  that the installed MXNet has machine code for: ``mxnet-cu112`` 1.9.1 runs on compute capability
  5.0 to 8.9, not on an H100 or later (:mod:`helpers.gpu_code`); a GPU it cannot run on is left out,
  and :func:`describe` says why;
* two CPU stand-ins ``[cpu(0), cpu(1)]`` otherwise;
* what the environment variable ``MXDP_DEVICES`` asks for, when it is set (:func:`parse_devices`):
  ``cpu:k`` for ``k`` CPU stand-ins on any machine (``cpu`` alone means ``cpu:2``), to run the
  series at another ``k`` or to leave the GPUs alone; ``gpu:0,2`` for the GPUs MXNet numbers 0 and
  2, in that order (the ``--gpus 0,2`` of MXNet's FAQ, "Multiple GPUs within a Single Machine").

MXNet numbers the GPUs it can *see*, from 0: with ``CUDA_VISIBLE_DEVICES=2,3`` in the environment
of the process, CUDA shows it two GPUs, which MXNet calls ``gpu(0)`` (the machine's GPU 2) and
``gpu(1)`` (its GPU 3), so ``MXDP_DEVICES=gpu:1`` then means the machine's GPU 3. (CUDA's
``cudaGetDeviceCount`` counts only the visible devices, which the CUDA Programming Guide, "CUDA
Environment Variables", describes; MXNet's ``mx.context.num_gpus()`` is that count,
``Context::GetGPUCount`` in include/mxnet/base.h, and ``mx.gpu(i)`` hands ``i`` to
``cudaSetDevice``, ``DeviceStore::SetDevice`` in src/common/cuda_utils.h. "The machine's GPU 2" is
GPU 2 in CUDA's order, which is ``nvidia-smi``'s with ``CUDA_DEVICE_ORDER=PCI_BUS_ID`` and usually
when all GPUs are one model; CUDA's default, ``FASTEST_FIRST``, puts the fastest first.)

MXNet gives every CPU context its own id and its own engine worker thread, so arrays really live
"on" different contexts and every lesson about placement, splitting and reduction shows up; they
share the same cores and memory, so speed-ups are limited by the cores. Every notebook prints
:func:`describe`, so its output says what it ran on. With a single device (a 1-GPU machine)
nothing is split or summed: the notebooks still run and say so.
"""
import os
import re

import mxnet as mx

from helpers import checks, gpu_code

__all__ = ['FORCE_ENV', 'num_gpus', 'parse_devices', 'forced_standins', 'get_devices', 'gpu_pool', 'device_kind',
           'describe']

FORCE_ENV = 'MXDP_DEVICES'
DEFAULT_STANDINS = 2
FORMS = ('"cpu" (two CPU stand-ins), "cpu:k" (k >= 1 stand-ins, e.g. cpu:4) or "gpu:i,j,..." '
         '(those GPUs as MXNet numbers them, e.g. gpu:0,2)')


def num_gpus():
    """Number of GPUs MXNet can use (notebook 00): 0 on a CPU-only build or without a usable
    driver (never raises). Under ``CUDA_VISIBLE_DEVICES`` only the visible GPUs count."""
    try:
        return mx.context.num_gpus()
    except mx.base.MXNetError:  # a CUDA build without a usable driver
        return 0


# The checks sit below this module and import none of helpers/ (no import circle): they count the GPUs
# a list of devices may name with num_gpus, handed down here, so a test that stands GPUs in by replacing
# num_gpus stands them in for the checks too.
checks.count_gpus_with(lambda: num_gpus())


def _cannot_run(i):
    """Why the installed MXNet cannot run its kernels on ``gpu(i)``, or None: where it can, and where
    nobody can tell (no driver to ask, a library that cannot be read). :mod:`helpers.gpu_code`."""
    capability = gpu_code.compute_capability(i)
    try:
        code = gpu_code.library_code() if capability else None
    except (OSError, ValueError):
        return None
    if not code or gpu_code.runs_on(code, capability):
        return None
    archs = ', '.join(f'sm_{arch}' for arch in sorted({arch for _, arch in code}))
    return (f'gpu({i}) has compute capability {capability[0]}.{capability[1]}, and this MXNet has machine '
            f'code for {archs} only, so none of its kernels can run there (docs/gpu.md)')


def _runnable_gpus():
    """The ids of the GPUs MXNet sees and can run its kernels on."""
    return [i for i in range(num_gpus()) if _cannot_run(i) is None]


def _gpu_ids(value, ids, gpus):
    """The GPU ids of ``gpu:i,j,...`` as a list, checked against the ``gpus`` GPUs MXNet sees."""
    ids = [int(i) for i in re.split(r'\s*,\s*', ids)]
    repeated = sorted({i for i in ids if ids.count(i) > 1})
    if repeated:
        raise ValueError(f'{FORCE_ENV}={value!r}: GPU {repeated[0]} is listed twice; '
                         'list each GPU once, e.g. MXDP_DEVICES=gpu:0,2')
    missing = [i for i in ids if i >= gpus]
    if missing:
        seen = f'{gpus} GPUs, numbered 0 to {gpus - 1}' if gpus > 1 else 'one GPU, gpu(0)' if gpus else 'no GPU'
        visible = os.environ.get('CUDA_VISIBLE_DEVICES')
        under = (f' (CUDA_VISIBLE_DEVICES={visible!r} is set: MXNet numbers the visible GPUs from 0)'
                 if visible is not None else '')
        raise ValueError(f'{FORCE_ENV}={value!r}: there is no GPU {missing[0]}: MXNet sees {seen}{under}; '
                         'use MXDP_DEVICES=cpu:k for CPU stand-ins')
    return ids


def parse_devices(value, gpus):
    """The devices ``MXDP_DEVICES=value`` selects on a machine where MXNet sees ``gpus`` GPUs
    (notebook 00): ``None`` for an empty value (nothing asked for), ``[cpu(0), ..., cpu(k-1)]`` for
    ``cpu:k`` (``cpu`` alone: two), ``[gpu(i), gpu(j), ...]`` for ``gpu:i,j,...`` in that order.
    Case and spaces around the value and its commas do not matter. A ``ValueError`` naming the
    variable for anything else: an unknown form, ``cpu:0``, an empty, repeated or missing GPU id."""
    if not isinstance(value, str):
        raise TypeError(f'value must be the text of {FORCE_ENV}, e.g. "gpu:0,2", got {value!r} '
                        f'({type(value).__name__})')
    gpus = checks.whole(gpus, 'gpus')
    text = value.strip().lower()
    if not text:
        return None
    cpu = re.fullmatch(r'cpu(?::([0-9]+))?', text)              # 'cpu' or 'cpu:' + ASCII digits
    gpu = re.fullmatch(r'gpu:\s*([0-9]+(?:\s*,\s*[0-9]+)*)', text)
    if cpu and (cpu[1] is None or int(cpu[1]) > 0):              # 'cpu:0' and 'cpu:00' alike refused
        k = DEFAULT_STANDINS if cpu[1] is None else checks.whole(int(cpu[1]), FORCE_ENV, 1, checks.MAX_DEVICES)
        return [mx.cpu(i) for i in range(k)]
    if gpu:
        return [mx.gpu(i) for i in _gpu_ids(value, gpu[1], gpus)]
    raise ValueError(f'{FORCE_ENV}={value!r}: expected {FORMS}')


def _chosen():
    """What ``MXDP_DEVICES`` selects on this machine (:func:`parse_devices`), or None if unset."""
    value = os.environ.get(FORCE_ENV, '')
    if not value.strip():
        return None
    chosen = parse_devices(value, num_gpus() if 'gpu' in value.lower() else 0)
    for d in chosen:
        why = _cannot_run(d.device_id) if d.device_type == 'gpu' else None
        if why:
            raise ValueError(f'{FORCE_ENV}={value!r}: {why}; use MXDP_DEVICES=cpu:k for CPU stand-ins')
    return chosen


def forced_standins():
    """``k`` if ``MXDP_DEVICES`` asks for ``k`` CPU stand-ins (``cpu`` or ``cpu:k``), else None
    (notebooks 00, 08). A malformed value is a ``ValueError`` naming the variable."""
    chosen = _chosen()
    return len(chosen) if chosen and chosen[0].device_type == 'cpu' else None


def get_devices(k=None):
    """The devices a notebook trains on (notebook 00; every notebook calls it once).

    ``k=None``: every GPU (that MXNet can run its kernels on), else two CPU stand-ins;
    ``MXDP_DEVICES`` overrides it (``cpu:k``: ``k`` stand-ins; ``gpu:0,2``: those GPUs). An
    explicit ``k`` (a demonstration that needs exactly ``k`` devices) gives the first ``k`` of those
    GPUs (every GPU, or the ones ``MXDP_DEVICES`` lists) if there are that many and stand-ins are
    not forced, else ``k`` CPU stand-ins.
    """
    if k is not None:
        k = checks.whole(k, 'k', 1, checks.MAX_DEVICES)
    chosen = _chosen()
    if k is None:
        if chosen:
            return chosen
        gpus = _runnable_gpus()
        return [mx.gpu(i) for i in gpus] if gpus else [mx.cpu(i) for i in range(DEFAULT_STANDINS)]
    pool = gpu_pool(chosen)
    return pool[:k] if len(pool) >= k else [mx.cpu(i) for i in range(k)]


def gpu_pool(chosen=None):
    """The GPUs the series may use on this machine, in order (notebooks 00, 08): the ones
    ``MXDP_DEVICES=gpu:...`` lists, none if it forces CPU stand-ins, else every GPU MXNet sees and
    can run its kernels on.
    ``chosen``: what :func:`parse_devices` made of ``MXDP_DEVICES`` (default: read it now)."""
    chosen = _chosen() if chosen is None else checks.devices(chosen, 'chosen', present=False)
    if chosen is None:
        return [mx.gpu(i) for i in _runnable_gpus()]
    return [d for d in chosen if d.device_type == 'gpu']


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
    chosen = _chosen()
    asked = f'{FORCE_ENV}={os.environ.get(FORCE_ENV, "").strip()}'
    if device_kind(devices) == 'gpu':
        line = f'{k} GPU{"s" * (k > 1)} [{names}] of {num_gpus()} found' + (f': {asked}' if chosen else '')
        left_out = [why for why in map(_cannot_run, range(num_gpus())) if why]
        if left_out:
            line += f'; {len(left_out)} left out, e.g. {left_out[0]}'

    else:
        gpus = num_gpus()
        why = (asked if chosen and chosen[0].device_type == 'cpu'
               else 'no GPU found' if not gpus
               else f'{gpus} GPU(s) found' if _runnable_gpus()
               else f'{gpus} GPU(s) found, which this MXNet cannot run on: {_cannot_run(0)}')
        line = f'{k} CPU stand-in{"s" * (k > 1)} [{names}]: {why}'
    if k == 1:
        line += ('; one device: nothing to split or sum here (MXDP_DEVICES=cpu:2 shows two '
                 'CPU stand-ins)')
    return 'using ' + line
