"""Summing gradients across devices: allreduce written by hand, and its cost model.

Derived in notebook 04 (allreduce by hand); ``allreduce`` is used by the from-scratch training
loop (notebook 05).

An *allreduce* takes one array per device, all of the same shape and dtype, and leaves on every
device the elementwise sum of all of them. Two algorithms are written here:

- :func:`allreduce_naive`: every device sends its array to device 0, which adds them up and sends
  the sum back (the version of the classic d2l / straight-dope tutorials). Device 0 sends and
  receives ``(k-1) N`` bytes: the root's link is the bottleneck.
- :func:`allreduce_ring`: the devices form a ring; each array is cut into ``k`` chunks; in
  ``k-1`` *reduce-scatter* steps every device passes one chunk to its right neighbour, which adds
  it to its own, until device ``i`` holds the full sum of chunk ``(i+1) % k``; in ``k-1``
  *all-gather* steps the finished chunks travel once more round the ring. Every device sends
  ``2 (k-1)/k N`` bytes, whatever ``k``: no bottleneck.

Both work in place and return the list they were given. A :class:`CommStats` passed as
``stats=`` counts the bytes each device sends and receives and the number of transfer steps.

The alpha-beta cost model (:func:`cost_naive`, :func:`cost_ring`, :func:`cost_tree`) prices one
message of ``m`` bytes at ``alpha + m * beta`` (``alpha``: latency, ``beta = 1 / bandwidth``).
"""

import numpy as np
import mxnet as mx

from helpers.split import shard_bounds

__all__ = ['CommStats', 'check_arrays', 'chunk_bounds', 'allreduce_naive', 'allreduce_ring',
           'allreduce', 'RING_MIN_ELEMENTS', 'naive_bytes_per_device', 'ring_bytes_per_device',
           'time_allreduce', 'cost_naive', 'cost_ring', 'cost_tree', 'LINKS']


class CommStats:
    """Bytes sent/received per device and number of sequential transfer steps (notebook 04).

    ``sent[i]`` / ``received[i]``: bytes device ``i`` (position ``i`` in the list of arrays) sent /
    received; ``steps``: rounds of transfers that depend on the previous round (a lower bound on
    the number of latencies ``alpha`` the algorithm pays); ``algorithms``: which algorithm each
    call used (``'naive'`` or ``'ring'``). Counts accumulate over calls.
    """

    def __init__(self, k=0):
        self.sent = [0] * k
        self.received = [0] * k
        self.steps = 0
        self.algorithms = []

    def _grow(self, k):
        while len(self.sent) < k:
            self.sent.append(0)
            self.received.append(0)

    def record(self, src, dst, nbytes):
        """Count one transfer of ``nbytes`` from device ``src`` to device ``dst``."""
        self._grow(max(src, dst) + 1)
        self.sent[src] += nbytes
        self.received[dst] += nbytes

    def __repr__(self):
        return (f'CommStats(sent={self.sent}, received={self.received}, steps={self.steps}, '
                f'algorithms={self.algorithms})')


def check_arrays(arrays):
    """Validate the input of an allreduce before anything is copied (notebook 04).

    Returns the arrays as a list. ``ValueError`` for an empty list or different shapes,
    ``TypeError`` for something that is not an NDArray or for different dtypes.
    """
    if isinstance(arrays, mx.nd.NDArray):
        raise TypeError('allreduce takes a list of NDArrays (one per device), got a single NDArray')
    arrays = list(arrays)
    if not arrays:
        raise ValueError('allreduce of an empty list: need at least one array (one per device)')
    for i, a in enumerate(arrays):
        if not isinstance(a, mx.nd.NDArray):
            raise TypeError(f'allreduce takes NDArrays, but array {i} is a {type(a).__name__}')
    shape, dtype = arrays[0].shape, np.dtype(arrays[0].dtype)
    for i, a in enumerate(arrays[1:], 1):
        if a.shape != shape:
            raise ValueError(f'allreduce needs arrays of one shape: array 0 has shape {shape}, '
                             f'array {i} has shape {a.shape}')
        if np.dtype(a.dtype) != dtype:
            raise TypeError(f'allreduce needs arrays of one dtype: array 0 is {dtype}, '
                            f'array {i} is {np.dtype(a.dtype)}')
    return arrays


def chunk_bounds(size, k):
    """``[(begin, end), ...]``: the ``k`` contiguous chunks a ring allreduce cuts ``size``
    elements into (notebook 04). It is the uneven split of notebook 03 (the first ``size % k``
    chunks are one element longer); a chunk may be empty when ``size < k``."""
    return shard_bounds(size, k, even_split=False)


def allreduce_naive(arrays, stats=None):
    """Reduce onto the first device, then broadcast the sum back (notebook 04; the classic d2l /
    straight-dope ``allreduce``). In place: afterwards every array holds the elementwise sum, on
    its own device. Returns the list. Device 0 sends and receives ``(k-1) * N`` bytes.
    """
    arrays = check_arrays(arrays)
    k, nbytes = len(arrays), arrays[0].size * np.dtype(arrays[0].dtype).itemsize
    root = arrays[0]
    for i in range(1, k):                       # reduce: everyone sends to device 0
        root += arrays[i].as_in_context(root.context)
        if stats is not None:
            stats.record(i, 0, nbytes)
    for i in range(1, k):                       # broadcast: device 0 sends the sum to everyone
        root.copyto(arrays[i])
        if stats is not None:
            stats.record(0, i, nbytes)
    if stats is not None:
        stats._grow(k)
        stats.steps += 2 * (k - 1)              # device 0 handles one transfer at a time
        stats.algorithms.append('naive')
    return arrays


def allreduce_ring(arrays, stats=None):
    """Ring allreduce: reduce-scatter then all-gather round a ring of ``k`` devices (notebook 04).

    In place: afterwards every array holds the elementwise sum, on its own device. Returns the
    list. Correct for any ``k >= 1`` and any size (chunks differ by at most one element; some are
    empty if there are fewer elements than devices). Device ``i`` sends ``2N - |chunk i+1| -
    |chunk i+2|`` bytes, i.e. exactly ``2 (k-1)/k N`` when ``k`` divides the size.
    """
    arrays = check_arrays(arrays)
    k = len(arrays)
    if stats is not None:
        stats._grow(k)
        stats.algorithms.append('ring')
    if k == 1:
        return arrays
    itemsize = np.dtype(arrays[0].dtype).itemsize
    flat = [a.reshape(-1) for a in arrays]      # views: writing into them writes into the arrays
    bounds = chunk_bounds(flat[0].size, k)

    # One receive buffer per device, reused by every reduce-scatter step (allocating a fresh
    # array per message costs more than the copy on CPU stand-ins).
    longest = max(end - begin for begin, end in bounds)
    inbox = [mx.nd.empty((max(longest, 1),), ctx=a.context, dtype=a.dtype) for a in arrays]

    def send(step, reduce):
        # In one step every device i sends one chunk to its right neighbour (i+1) % k; on real
        # links these k transfers run at the same time, so a step costs one message of N/k.
        for i in range(k):
            dst = (i + 1) % k
            if reduce:   # reduce-scatter: chunk (i - step) % k; the neighbour adds it to its own
                begin, end = bounds[(i - step) % k]
            else:        # all-gather: finished chunk (i + 1 - step) % k; the neighbour overwrites
                begin, end = bounds[(i + 1 - step) % k]
            if end == begin:                    # an empty chunk (fewer elements than devices)
                continue
            if reduce:
                received = inbox[dst][:end - begin]
                flat[i][begin:end].copyto(received)
                target = flat[dst][begin:end]
                target += received
            else:
                flat[i][begin:end].copyto(flat[dst][begin:end])
            if stats is not None:
                stats.record(i, dst, (end - begin) * itemsize)

    for step in range(k - 1):                   # reduce-scatter
        send(step, reduce=True)
    for step in range(k - 1):                   # all-gather
        send(step, reduce=False)
    if stats is not None:
        stats.steps += 2 * (k - 1)
    return arrays


RING_MIN_ELEMENTS = 1 << 20   # below this many elements per array, allreduce uses the naive version


def allreduce(arrays, stats=None):
    """The allreduce the from-scratch training loop uses (notebook 04; used in notebook 05):
    the ring for large arrays on three or more devices, the naive version otherwise.

    Both give the same sums, identical on every device. Notebook 04 measures which is faster on
    the devices at hand: with k = 2 both send the same bytes and the naive version needs fewer
    operations; for small arrays (LeNet's gradients) the ring's ``2 k (k-1)`` small operations
    cost far more than they save; for large arrays on k >= 3 devices the ring spreads both the
    traffic and the additions over all devices (on GPUs: over all links; on CPU stand-ins: over
    the engine's per-device threads), while the naive version does all additions on device 0.
    """
    arrays = check_arrays(arrays)
    if len(arrays) >= 3 and arrays[0].size >= RING_MIN_ELEMENTS:
        return allreduce_ring(arrays, stats=stats)
    return allreduce_naive(arrays, stats=stats)


def naive_bytes_per_device(k, nbytes):
    """Bytes each device sends in :func:`allreduce_naive` (notebook 04): ``[(k-1) N, N, ..., N]``."""
    return [(k - 1) * nbytes] + [nbytes] * (k - 1)


def ring_bytes_per_device(k, size, itemsize=4):
    """Bytes each device sends in :func:`allreduce_ring` of ``size`` elements (notebook 04):
    ``2 (k-1)/k * N`` per device when ``k`` divides ``size`` (``N = size * itemsize``)."""
    if k == 1:
        return [0]
    chunks = [(e - b) * itemsize for b, e in chunk_bounds(size, k)]
    total = size * itemsize
    return [2 * total - chunks[(i + 1) % k] - chunks[(i + 2) % k] for i in range(k)]


# Published link bandwidths (bytes/s) and assumed latencies (s) for the cost-model plot of
# notebook 04. Bandwidths: NVIDIA (NVLink, up to ~100 GB/s between two GPUs), PCI-SIG (PCIe 4.0
# x16, 32 GB/s per direction), IEEE 802.3 (100 Gb Ethernet, 12.5 GB/s line rate, ~10 GB/s in
# practice). Latencies are round, assumed orders of magnitude, not measurements.
LINKS = {
    'NVLink (~100 GB/s)': dict(alpha=5e-6, bandwidth=100e9),
    'PCIe 4.0 x16 (32 GB/s)': dict(alpha=10e-6, bandwidth=32e9),
    '100 GbE (~10 GB/s)': dict(alpha=50e-6, bandwidth=10e9),
}


def _check_model(k, nbytes, alpha, bandwidth):
    k = np.asarray(k, dtype=float)
    if np.any(k < 1):
        raise ValueError(f'k must be >= 1 devices, got {k}')
    if nbytes < 0 or alpha < 0 or bandwidth <= 0:
        raise ValueError('need nbytes >= 0, alpha >= 0 and bandwidth > 0')
    return k


def cost_naive(k, nbytes, alpha, bandwidth):
    """alpha-beta time (s) of reduce-to-one + broadcast (notebook 04): the root receives ``k-1``
    messages of ``N`` bytes, one after the other, then sends ``k-1``: ``2 (k-1) (alpha + N beta)``.
    ``k`` may be a NumPy array."""
    k = _check_model(k, nbytes, alpha, bandwidth)
    return 2 * (k - 1) * (alpha + nbytes / bandwidth)


def cost_ring(k, nbytes, alpha, bandwidth):
    """alpha-beta time (s) of ring allreduce (notebook 04): ``2 (k-1)`` steps of ``N/k`` bytes,
    ``2 (k-1) alpha + 2 (k-1)/k N beta``: the bandwidth term hardly grows with ``k``, the latency
    term grows linearly."""
    k = _check_model(k, nbytes, alpha, bandwidth)
    return 2 * (k - 1) * (alpha + nbytes / k / bandwidth)


def cost_tree(k, nbytes, alpha, bandwidth):
    """alpha-beta time (s) of binomial-tree reduce + broadcast (notebook 04), unpipelined:
    ``2 ceil(log2 k)`` rounds, each passing whole ``N``-byte messages:
    ``2 ceil(log2 k) (alpha + N beta)``. Few latencies, but every level moves all the data."""
    k = _check_model(k, nbytes, alpha, bandwidth)
    return 2 * np.ceil(np.log2(k)) * (alpha + nbytes / bandwidth)


def time_allreduce(devices, size=11_000_000, repeat=5, dtype='float32'):
    """Median seconds of one allreduce of ``size`` elements per device, for each variant, measured
    side by side in one run (notebook 04 and ``benchmarks/allreduce.py``).

    Variants: ``'naive'``, ``'ring'`` (this module) and MXNet's ``'kv device'`` / ``'kv local'``
    (``kv.pushpull`` of one key over all devices: reduce where the store says, then broadcast).
    Every variant is first checked to produce the right sum on every device. Returns a dict.
    """
    from helpers.timing import time_it
    devices = list(devices)
    if not devices:
        raise ValueError('time_allreduce needs at least one device')
    arrays = [mx.nd.ones((size,), ctx=d, dtype=dtype) for d in devices]
    stores = {name: mx.kv.create(kind) for name, kind in (('kv device', 'device'), ('kv local', 'local'))}
    for kv in stores.values():
        kv.init(0, mx.nd.zeros((size,), ctx=devices[0], dtype=dtype))
    variants = {'naive': lambda: allreduce_naive(arrays),
                'ring': lambda: allreduce_ring(arrays),
                'kv device': lambda: stores['kv device'].pushpull(0, arrays, out=arrays),
                'kv local': lambda: stores['kv local'].pushpull(0, arrays, out=arrays)}
    k = len(devices)
    for name, fn in variants.items():          # correctness first: ones everywhere -> k everywhere
        for a in arrays:
            a[:] = 1
        fn()
        for a in arrays:
            if a[:min(size, 1000)].asnumpy().tolist() != [k] * min(size, 1000) or a[-1].asscalar() != k:
                raise AssertionError(f'{name} did not produce the sum on {a.context}')
    times = {}
    for name, fn in variants.items():
        for a in arrays:                        # values stay finite: zeros sum to zeros
            a[:] = 0
        times[name] = time_it(fn, repeat=repeat, warmup=1)
    return times
