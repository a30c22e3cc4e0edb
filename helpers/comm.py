"""Summing gradients across devices: allreduce written by hand (notebook 04; used in notebook 05).

An *allreduce* takes one array per device, all of one shape and dtype, and leaves on every device
the elementwise sum of all of them. Two algorithms, both in place:

- :func:`allreduce_naive` -- every device sends its array to device 0, which adds them up and
  sends the sum back (the ``allreduce`` of the classic d2l / straight-dope tutorials);
- :func:`allreduce_ring` -- the devices form a ring and every array is cut into ``k`` chunks; in
  ``k-1`` *reduce-scatter* steps each device passes one chunk to its right neighbour, which adds
  it to its own, until device ``i`` holds the finished sum of chunk ``i+1``; in ``k-1``
  *all-gather* steps the finished chunks travel once more round the ring.

Both are written as separate MXNet operations issued from Python, and MXNet's engine orders
operations per *array*: a slice or reshape shares its array's engine variable (``NDArray::Slice``,
src/ndarray/ndarray.cc; ``NDArray::var``, include/mxnet/ndarray.h), and an operation that reads a
variable waits for every earlier write to it. So each ring step issues its k sends before its
additions: the sends read k different arrays and run at once (over an emulated link,
:mod:`helpers.link`, each on its own ports: notebook 04 traces it); the all-gather passes on the
array it received, not its copy in place. Issued the other way round, each device adding right
after its message, every send would wait for the addition before it, one chain.

Every transfer goes through one function, ``send(x, to)`` (default :func:`copy_to`): pass
``send=stats.send`` of a :class:`CommStats` to count the bytes each device sends and receives,
without a line of bookkeeping inside the algorithms. Their cost models are in
:mod:`helpers.costmodel`; input checks in :mod:`helpers.checks`.

The ring is written as its two halves, :func:`reduce_scatter` and :func:`all_gather`, because the
sharded optimizer of notebook 11 does its update between them. The lesson functions (``copy_to``,
``allreduce_naive``, ``reduce_scatter``, ``all_gather``, ``allreduce_ring``, ``allreduce``) are the
text of notebook 04's lesson cells, kept identical by ``tools.lessons``.
"""
from collections import Counter

import numpy as np
import mxnet as mx

from helpers import checks
from helpers.split import shard_bounds

__all__ = ['copy_to', 'CommStats', 'allreduce_naive', 'owner_chunk', 'reduce_scatter',
           'all_gather', 'allreduce_ring', 'allreduce', 'RING_MIN_ELEMENTS']


def copy_to(x, to):
    """Send ``x`` to ``to``: a device (returns a new array there) or an array, written in place
    (notebook 04). It is ``x.copyto(to)``, named for what it does in an allreduce."""
    checks.copy(x, to)
    return x.copyto(to)


def allreduce_naive(arrays, send=copy_to):
    """Reduce onto device 0, then broadcast the sum back; in place (notebook 04)."""
    checks.arrays(arrays)
    root = arrays[0]
    for a in arrays[1:]:                                 # reduce: everyone sends to device 0
        root += send(a, root.context)
    for a in arrays[1:]:                                 # broadcast: device 0 sends the sum back
        send(root, a)
    return arrays


def owner_chunk(i, k):
    """The chunk whose finished sum device ``i`` holds after :func:`reduce_scatter`, of the k chunks
    ``shard_bounds(size, k)`` cuts (notebooks 04, 11)."""
    i, k = checks.index(i, k, 'i (a device)')
    return (i + 1) % k


def reduce_scatter(arrays, send=copy_to):
    """Ring reduce-scatter, in place: after k-1 steps device i holds the sum of chunk i + 1
    (notebook 04)."""
    k = checks.arrays(arrays, ring=True)
    flat = [a.reshape(-1) for a in arrays]               # views: writing them writes the arrays
    chunks = shard_bounds(flat[0].size, k)               # chunk c = elements chunks[c][0]:[1]
    for s in range(k - 1):
        c = [chunks[(i - s) % k] for i in range(k)]      # device i sends chunk i - s to i + 1:
        got = [send(flat[i][b:e], flat[(i + 1) % k].context) for i, (b, e) in enumerate(c)]  # all at once
        for i, (b, e) in enumerate(c):                   # then each device adds what it received
            mine = flat[(i + 1) % k][b:e]
            mine += got[i]
    return arrays


def all_gather(arrays, send=copy_to):
    """Ring all-gather, in place: device i's chunk i + 1 travels round the ring to all
    (notebook 04)."""
    k = checks.arrays(arrays, ring=True)
    flat = [a.reshape(-1) for a in arrays]
    chunks = shard_bounds(flat[0].size, k)
    held = [flat[i][slice(*chunks[(i + 1) % k])] for i in range(k)]    # device i's finished chunk
    for s in range(k - 1):                               # every device passes what it holds to
        held = [send(held[i - 1], flat[i].context) for i in range(k)]  # i + 1, all at once ...
        for i in range(k):                               # ... which keeps a copy in place
            b, e = chunks[(i - s) % k]
            held[i].copyto(flat[i][b:e])
    return arrays


def allreduce_ring(arrays, send=copy_to):
    """Ring allreduce, in place: a reduce-scatter, then an all-gather (notebook 04)."""
    return all_gather(reduce_scatter(arrays, send), send)


# Below this many elements per array, `allreduce` uses the naive algorithm (None: always). CPU: a
# heuristic measured on one machine, four CPU stand-ins with plain copies (notebook 04's aside):
# below it the ring's 2k(k-1) messages, k(k-1) copies into place and k(k-1) additions cost more
# Python and engine work than its fewer bytes save; from 32 MiB on, where each new receive array of
# the naive algorithm takes fresh pages, the two drew level. GPU: never the ring -- not measured
# here (no GPU); GPU training sums with the KVStore ('device' or 'nccl', notebooks 06-07).
RING_MIN_ELEMENTS = {'cpu': 1 << 23, 'gpu': None}


def allreduce(arrays, send=copy_to):
    """The allreduce of notebook 05's training step (notebook 04): the ring for large arrays on
    two or more CPU devices, the naive algorithm otherwise."""
    k = checks.arrays(arrays)
    threshold = RING_MIN_ELEMENTS[arrays[0].context.device_type]
    ring = k >= 2 and threshold is not None and arrays[0].size >= threshold
    return (allreduce_ring if ring else allreduce_naive)(arrays, send)


class CommStats:
    """Counts what an allreduce sends, per device: pass ``send=stats.send`` (notebook 04).

    ``sent[ctx]`` / ``received[ctx]``: bytes device ``ctx`` sent / received; ``messages``: the
    number of transfers. Counts add up over calls. ``CommStats(link.send)`` counts what goes over
    an emulated link (:mod:`helpers.link`); by default each transfer is a :func:`copy_to`.
    """

    def __init__(self, send=copy_to):
        self.sent, self.received, self.messages = Counter(), Counter(), 0
        self._send = checks.function(send, 'send')

    def send(self, x, to):
        """Count ``x``'s bytes from its device to ``to``'s, then send it (notebook 04)."""
        nbytes = x.size * np.dtype(x.dtype).itemsize
        self.sent[x.context] += nbytes
        self.received[to if isinstance(to, mx.Context) else to.context] += nbytes
        self.messages += 1
        return self._send(x, to)

    def per_device(self, devices, what='sent'):
        """``[bytes of devices[0], bytes of devices[1], ...]`` (notebook 04)."""
        counts = self.sent if what == 'sent' else self.received
        return [counts[d] for d in devices]

    def __repr__(self):
        return f'CommStats(sent={dict(self.sent)}, received={dict(self.received)}, messages={self.messages})'
