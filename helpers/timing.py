"""Honest timings under MXNet's asynchronous engine (derived in notebook 01, used by the benchmarks).

MXNet operators return as soon as the work is *queued*; the work itself runs later on the engine's
threads. A timer that does not wait for the engine measures how fast Python can enqueue, not how
fast the device computes. :func:`time_it` waits (``mx.nd.waitall()``) before it stops the clock,
repeats, and reports the median, which is robust to the odd slow run on a shared machine.
"""
import statistics
import time

import numpy as np
import mxnet as mx

__all__ = ['time_it', 'copy_times', 'fit_alpha_beta']


def time_it(fn, repeat=5, warmup=1, sync=True):
    """Median wall time in seconds of ``fn()`` over ``repeat`` runs, after ``warmup`` untimed runs.

    With ``sync=True`` each run ends with ``mx.nd.waitall()``, so the time includes the work the
    engine ran asynchronously; ``sync=False`` shows what a naive timer would report.
    """
    if not callable(fn):
        raise TypeError(f'fn must be callable, got {type(fn).__name__}')
    if isinstance(repeat, bool) or not isinstance(repeat, int) or repeat < 1:
        raise ValueError(f'repeat must be a whole number >= 1, got {repeat!r}')
    if isinstance(warmup, bool) or not isinstance(warmup, int) or warmup < 0:
        raise ValueError(f'warmup must be a whole number >= 0, got {warmup!r}')
    for _ in range(warmup):
        fn()
    mx.nd.waitall()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        if sync:
            mx.nd.waitall()
        times.append(time.perf_counter() - start)
    mx.nd.waitall()  # never leave queued work behind to be billed to the next measurement
    return statistics.median(times)


def copy_times(src, dst, sizes, repeat=5, dtype='float32'):
    """Median seconds to copy a ``dtype`` array of each byte size in ``sizes`` from ``src`` to ``dst``.

    Uses ``copyto`` (a new array on ``dst`` each time, like moving a gradient between devices).
    """
    itemsize = np.dtype(dtype).itemsize
    out = []
    for nbytes in sizes:
        if nbytes < itemsize or nbytes % itemsize:
            raise ValueError(f'size {nbytes} is not a positive multiple of the {dtype} item size {itemsize}')
        x = mx.nd.ones((nbytes // itemsize,), ctx=src, dtype=dtype)
        out.append(time_it(lambda: x.copyto(dst), repeat=repeat))
    return out


def fit_alpha_beta(sizes, seconds):
    """Least-squares fit of ``t = alpha + beta * n`` (the α–β model of notebooks 01 and 04).

    Returns ``(alpha, beta)``: latency in seconds and seconds per byte (1 / bandwidth).
    Weighted by 1/t so that small and large messages count alike.
    """
    n = np.asarray(sizes, dtype=float)
    t = np.asarray(seconds, dtype=float)
    if n.shape != t.shape or n.ndim != 1 or len(n) < 2:
        raise ValueError('need at least two (size, seconds) pairs of equal length')
    A = np.stack([np.ones_like(n), n], axis=1) / t[:, None]
    (alpha, beta), *_ = np.linalg.lstsq(A, np.ones_like(t), rcond=None)
    return float(alpha), float(beta)
