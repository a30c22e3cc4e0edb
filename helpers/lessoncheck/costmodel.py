"""The laws and checks of :mod:`helpers.costmodel` (notebook 04): the alpha-beta-gamma cost of the
naive and the ring allreduce, for a number of devices or an array of them.
"""
import numpy as np

from helpers.lessoncheck.machinery import Broken, Law, _refuses, lesson

__all__ = ['check_cost_naive', 'check_cost_ring', 'law_cost_formula', 'COST_CASES']


def law_cost_formula(fn, kind, k, nbytes, alpha, bandwidth, gamma):
    """Notebook 04: the alpha-beta-gamma cost, 2(k-1)(alpha + N beta) + (k-1) N gamma for the naive
    algorithm, 2(k-1)(alpha + N/k beta) + (k-1)/k N gamma for the ring (beta = 1 / bandwidth), for
    a number of devices or an array of them; 0 at k = 1."""
    k = np.asarray(k)
    kf, beta = k.astype(float), 1 / bandwidth
    want = (2 * (kf - 1) * (alpha + nbytes * beta) + (kf - 1) * nbytes * gamma if kind == 'naive' else
            2 * (kf - 1) * (alpha + nbytes / kf * beta) + (kf - 1) / kf * nbytes * gamma)
    got = np.asarray(fn(k if k.ndim else int(k), nbytes, alpha, bandwidth, gamma), dtype=float)
    if got.shape != want.shape or not np.allclose(got, want, rtol=1e-12, atol=0):
        raise Broken(f'{fn.__name__}(k={k.tolist()}, N={nbytes:g} B, alpha={alpha:g} s, bandwidth={bandwidth:g} B/s, '
                     f'gamma={gamma:g} s/B)', expected=str(want.tolist()), got=str(got.tolist()))
    if not _refuses(lambda: fn(0, nbytes, alpha, bandwidth), ValueError) or \
            not _refuses(lambda: fn(2, nbytes, alpha, 0), ValueError):
        raise Broken('k = 0 devices and a bandwidth of 0 must be refused with a ValueError',
                     why='keep the guard line `checks.cost_model(...)`')


COST_CASES = [dict(k=k, nbytes=n, alpha=a, bandwidth=bw, gamma=g)
              for k in (1, 2, 3, 8, [2, 4, 1024])
              for n, a, bw, g in ((44e6, 10e-6, 32e9, 0.0), (4000, 1e-6, 1e9, 1e-11))]


@lesson('helpers.costmodel.cost_naive', hint='2 (k-1) messages of N bytes, one after another; (k-1) N bytes added')
def check_cost_naive():
    """Check your ``cost_naive(k, nbytes, alpha, bandwidth, gamma)`` (notebook 04) against the formula."""
    return [Law('2 (k-1) (alpha + N / bandwidth) + (k-1) N gamma, for a number or an array of k; bad input refused',
                lambda fn, **case: law_cost_formula(fn, 'naive', **case), COST_CASES,
                lambda k, nbytes, alpha, bandwidth, gamma: f'k = {k}, N = {nbytes:g} B, alpha = {alpha:g} s, '
                                                           f'bandwidth = {bandwidth:g} B/s, gamma = {gamma:g} s/B')]


@lesson('helpers.costmodel.cost_ring', hint='2 (k-1) steps of one N/k chunk per link; (k-1)/k N bytes added')
def check_cost_ring():
    """Check your ``cost_ring(k, nbytes, alpha, bandwidth, gamma)`` (notebook 04) against the formula."""
    return [Law('2 (k-1) (alpha + N/k / bandwidth) + (k-1)/k N gamma, for a number or an array of k; bad input refused',
                lambda fn, **case: law_cost_formula(fn, 'ring', **case), COST_CASES,
                lambda k, nbytes, alpha, bandwidth, gamma: f'k = {k}, N = {nbytes:g} B, alpha = {alpha:g} s, '
                                                           f'bandwidth = {bandwidth:g} B/s, gamma = {gamma:g} s/B')]
