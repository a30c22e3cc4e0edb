"""Partitioning a batch across devices: ``split_and_load`` written by hand (notebook 03).

Every split cuts the batch into *contiguous* shards, in order, so that concatenating the shards
gives the batch back and every example lands on exactly one device. The only decision is how many
examples each device gets (:func:`shard_sizes`): in proportion to ``weights`` (equal by default),
rounded by the *largest remainder* rule -- every device first gets the whole part of its ideal
share ``n * w_i / sum(w)``, and the examples left over go one each to the devices with the largest
fractional parts, ties to the lower index. With equal weights this is exactly Gluon's uneven split
(``gluon.utils.split_and_load(..., even_split=False)``: the first ``n % k`` devices get one example
more). The shares are computed with exact fractions, so no floating-point rounding can move an
example, and every shard is less than one example away from its ideal share.

Each function here is the text of one of notebook 03's lesson cells (``tools.lessons`` keeps them
identical); input checks live in :mod:`helpers.checks`.
"""
from fractions import Fraction

import numpy as np

from helpers import checks

__all__ = ['shard_sizes', 'shard_bounds', 'split_and_load', 'split_batch']


def shard_sizes(n, k, weights=None):
    """How many of ``n`` examples each of ``k`` devices gets (notebook 03)."""
    checks.shards(n, k, weights)
    weights = [Fraction(float(w)) for w in ([1] * k if weights is None else weights)]  # exact
    ideal = [n * w / sum(weights) for w in weights]                 # each device's fair share
    sizes = [int(share) for share in ideal]                         # its whole part
    for i in sorted(range(k), key=lambda i: sizes[i] - ideal[i])[:n - sum(sizes)]:
        sizes[i] += 1                                    # the rest: largest remainders first
    return sizes


def shard_bounds(n, k, weights=None):
    """``[(begin, end), ...]``: the contiguous slice of a batch of ``n`` that each device gets
    (notebook 03; notebook 04 cuts arrays into chunks with it)."""
    ends = np.cumsum(shard_sizes(n, k, weights)).tolist()
    return list(zip([0] + ends[:-1], ends))


def split_and_load(data, devices, weights=None):
    """Cut ``data`` along its first axis into one shard per device and copy each shard to its
    device (notebook 03)."""
    checks.batch(data, devices, weights, shard_bounds)    # judges the cut that shard_bounds makes
    bounds = shard_bounds(len(data), len(devices), weights)
    return [data[begin:end].as_in_context(d) for (begin, end), d in zip(bounds, devices)]


def split_batch(X, y, devices, weights=None):
    """Split examples ``X`` and labels ``y`` at the same places, one shard of each per device
    (notebook 03; used by every training step from notebook 05 on)."""
    checks.labels(X, y)
    return split_and_load(X, devices, weights), split_and_load(y, devices, weights)
