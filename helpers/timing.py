"""Honest timings under MXNet's asynchronous engine (notebook 01; used by notebooks 04, 07, 09 and
the benchmarks).

MXNet operators return as soon as the work is *queued*; the work itself runs later on the engine's
worker threads. A timer that does not wait for the engine measures how fast Python can enqueue,
not how fast the device computes. :func:`time_it` waits (``mx.nd.waitall()``) before it stops the
clock, repeats, and reports the median, which is robust to the odd slow run on a shared machine.
"""
import statistics
import time

import numpy as np
import mxnet as mx

from helpers import checks

__all__ = ['time_it', 'compare', 'copy_times', 'fit_alpha_beta']


def time_it(fn, repeat=5, warmup=1, sync=True):
    """Median wall time in seconds of ``fn()`` over ``repeat`` runs, after ``warmup`` untimed runs
    (notebook 01). With ``sync=True`` each run ends with ``mx.nd.waitall()``, so the time includes
    the work the engine ran asynchronously; ``sync=False`` shows what a naive timer reports."""
    if not callable(fn):
        raise TypeError(f'fn must be callable, got {type(fn).__name__}')
    repeat, warmup = checks.whole(repeat, 'repeat', 1), checks.whole(warmup, 'warmup', 0)
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


def compare(variants, repeat=5):
    """Median seconds of each of several callables (``{name: fn}``), measured side by side: one
    warm-up run each, then ``repeat`` rounds in which every variant runs once, in turn, so that a
    busy moment of the machine hits all of them alike (notebooks 04, 07; the benchmarks)."""
    repeat = checks.whole(repeat, 'repeat', 1)
    times = {name: [] for name in variants}
    for fn in variants.values():
        time_it(fn, repeat=1, warmup=1)
    for _ in range(repeat):
        for name, fn in variants.items():
            times[name].append(time_it(fn, repeat=1, warmup=0))
    return {name: statistics.median(t) for name, t in times.items()}


def copy_times(src, dst, sizes, repeat=5, fresh=False):
    """Median seconds to copy a float32 array of each byte size in ``sizes`` from device ``src`` to
    device ``dst`` (notebook 01).

    ``fresh=False`` copies into an array allocated once on ``dst`` beforehand (``x.copyto(y)``):
    the copy alone. ``fresh=True`` copies into a new array every time (``x.copyto(dst)``), which
    also pays for allocating -- and, for large arrays, for the operating system handing out and
    zeroing fresh memory pages on first touch.

    Copies below 4 MiB are timed more often than ``repeat`` (up to 100 times for the smallest):
    a copy of microseconds is no longer than the noise of a single run.
    """
    out = []
    for nbytes in sizes:
        if checks.whole(nbytes, 'size', 4) % 4:
            raise ValueError(f'size {nbytes} is not a multiple of 4 bytes (one float32)')
        x = mx.nd.ones((nbytes // 4,), ctx=src)
        y = mx.nd.zeros((nbytes // 4,), ctx=dst)
        runs = max(repeat, min(100, 2 ** 22 // nbytes))
        out.append(time_it((lambda: x.copyto(dst)) if fresh else (lambda: x.copyto(y)), repeat=runs))
    return out


def fit_alpha_beta(sizes, seconds):
    """Least-squares fit of ``t = alpha + beta * n`` (the alpha-beta model of notebooks 01 and 04).

    Returns ``(alpha, beta)``: seconds per message and seconds per byte (1 / bandwidth). Weighted
    by 1/t, so that small and large messages count alike.
    """
    n = np.asarray(sizes, dtype=float)
    t = np.asarray(seconds, dtype=float)
    if n.shape != t.shape or n.ndim != 1 or len(n) < 2:
        raise ValueError('need at least two (size, seconds) pairs of equal length')
    A = np.stack([np.ones_like(n), n], axis=1) / t[:, None]
    (alpha, beta), *_ = np.linalg.lstsq(A, np.ones_like(t), rcond=None)
    return float(alpha), float(beta)
