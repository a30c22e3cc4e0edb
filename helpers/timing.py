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

__all__ = ['time_it', 'compare', 'copy_times', 'fit_alpha_beta', 'Relation', 'relation']


def time_it(fn, repeat=5, warmup=1, sync=True):
    """Median wall time in seconds of ``fn()`` over ``repeat`` runs, after ``warmup`` untimed runs
    (notebook 01). With ``sync=True`` each run ends with ``mx.nd.waitall()``, so the time includes
    the work the engine ran asynchronously; ``sync=False`` shows what a naive timer reports."""
    if not callable(fn):
        raise TypeError(f'fn must be callable, got {type(fn).__name__}')
    repeat, warmup = checks.whole(repeat, 'repeat', 1), checks.whole(warmup, 'warmup', 0)
    sync = checks.flag(sync, 'sync')
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
    checks.mapping(variants, 'variants')
    if not variants:
        raise ValueError('variants is empty: give {name: function} to compare')
    for name, fn in variants.items():
        checks.function(fn, f'variants[{name!r}]')
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
    checks.context(src, 'src')
    checks.context(dst, 'dst')
    repeat, fresh = checks.whole(repeat, 'repeat', 1), checks.flag(fresh, 'fresh')
    sizes = checks.counts(sizes, 'sizes', 4)
    for nbytes in sizes:
        if nbytes % 4:
            raise ValueError(f'size {nbytes} is not a multiple of 4 bytes (one float32)')
        checks.fits(2 * nbytes, f'two arrays of {nbytes} bytes (sizes)')
    out = []
    for nbytes in sizes:
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
    n = np.asarray([checks.number(v, 'sizes', 0) for v in checks.ordered(sizes, 'sizes')], dtype=float)
    t = np.asarray(checks.timings(seconds, 'seconds'), dtype=float)
    if n.shape != t.shape or n.ndim != 1 or len(n) < 2:
        raise ValueError('need at least two (size, seconds) pairs of equal length')
    A = np.stack([np.ones_like(n), n], axis=1) / t[:, None]
    (alpha, beta), *_ = np.linalg.lstsq(A, np.ones_like(t), rcond=None)
    return float(alpha), float(beta)


class Relation:
    """What a run shows about the claim "``a`` takes at least ``at_least`` times as long as ``b``"
    (:func:`relation`; notebooks 06, 09). ``ratio`` is median(a) / median(b); ``noise`` the relative
    spread of the measurements (the interquartile ranges of both, over their medians, compounded);
    ``verdict`` is ``'shown'`` when even the least favourable reading of the noise keeps the ratio
    above ``at_least``, ``'refuted'`` when even the most favourable one keeps it below, and
    ``'too busy'`` when the noise of this run straddles ``at_least``: the machine was too busy to
    tell. :meth:`check` asserts the claim unless the machine was too busy, and says which it was."""

    def __init__(self, times_a, times_b, at_least, what='a / b'):
        times_a, times_b = checks.timings(times_a, 'times_a', 3), checks.timings(times_b, 'times_b', 3)
        self.what, self.at_least = what, checks.positive(at_least, 'at_least')
        qa, qb = (np.percentile(t, [25, 50, 75]) for t in (times_a, times_b))
        self.ratio = qa[1] / qb[1]
        self.noise = (1 + (qa[2] - qa[0]) / qa[1]) * (1 + (qb[2] - qb[0]) / qb[1]) - 1
        low, high = self.ratio / (1 + self.noise), self.ratio * (1 + self.noise)
        self.verdict = 'shown' if low > self.at_least else 'refuted' if high < self.at_least else 'too busy'

    def __str__(self):
        text = f'{self.what} = {self.ratio:.2f} (noise of this run {self.noise:.0%}; the claim: > {self.at_least:g})'
        return text + {'shown': ': shown', 'refuted': ': NOT shown', 'too busy':
                       ': the machine was too busy to tell (run it again on a quieter machine)'}[self.verdict]

    def check(self):
        """Print what this run shows; AssertionError if it refutes the claim. Returns None, so that a
        notebook cell ending in ``.check()`` shows the printed line only."""
        print(self)
        assert self.verdict != 'refuted', str(self)


def relation(a, b, at_least, repeat=9, what='a / b'):
    """Time ``a()`` and ``b()`` side by side, ``repeat`` interleaved rounds each (as :func:`compare`),
    and return the :class:`Relation` "a takes at least ``at_least`` times as long as b" (notebooks 06,
    09). A timing claim is asserted only where the run can show it: never failed by a busy machine,
    never passed without being measured."""
    repeat = checks.whole(repeat, 'repeat', 3)
    if not (callable(a) and callable(b)):
        raise TypeError('a and b must be callables')
    checks.positive(at_least, 'at_least')
    time_it(a, repeat=1, warmup=1)
    time_it(b, repeat=1, warmup=1)
    times_a, times_b = [], []
    for _ in range(repeat):
        times_a.append(time_it(a, repeat=1, warmup=0))
        times_b.append(time_it(b, repeat=1, warmup=0))
    return Relation(times_a, times_b, at_least, what)
