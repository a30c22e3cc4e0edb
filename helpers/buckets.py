"""Sending gradients while the backward pass still runs, and fusing them into buckets (notebook 10).

Two ideas that every data-parallel framework after MXNet's ``Trainer`` is built on (PyTorch DDP,
Horovod, DeepSpeed):

- **Overlap.** ``loss.backward()`` only *queues* the backward pass: MXNet's engine runs it on its
  worker threads while Python goes on. An allreduce queued right after it waits, inside the engine,
  for exactly the gradients it reads, and starts as soon as they are written -- while the backward
  pass still computes the earlier layers. :func:`backward_and_send` is the step's communication
  written both ways: wait for the whole backward pass first (``wait=True``), or queue everything
  at once. :func:`overlap` measures, from a profiler trace (:func:`helpers.tracing.trace`), how much
  of the communication ran while the backward pass was running.
- **Buckets.** Every allreduce pays a fixed cost per message, the ``alpha`` of the alpha-beta model
  (notebooks 01, 04), whatever its size: 76 small gradients pay it 76 times. :func:`plan_buckets`
  groups gradients, last layer first, into buckets of about ``bucket_bytes``;
  :func:`allreduce_bucketed` packs each bucket into one flat array per device by copying, sums it
  with one allreduce and copies the sums back; :func:`bucket_gradients` avoids the copies the way
  frameworks do: every gradient buffer becomes a view into its bucket
  (``autograd.mark_variables``), so the backward pass writes each gradient straight into its slot
  and the bucket *is* the message. :func:`bucketed_time` prices a bucketed allreduce
  with a cost model, :func:`time_buckets` measures one.

The sums are those of :func:`helpers.comm.allreduce_naive`, which adds device 1, 2, ... to device 0
in the same order for every element: bucketed or not, every gradient gets the same bits
(``tests/test_buckets.py`` checks it for 1 to 8 devices). The lesson functions
(``backward_and_send``, ``plan_buckets``, ``allreduce_bucketed``, ``bucket_gradients``) are the
text of notebook 10's lesson cells, kept identical by ``tools/lessons.py``; their input checks are
in :mod:`helpers.checks`.
"""
import collections

from mxnet import autograd, nd

from helpers import checks, tracing
from helpers.comm import CommStats, allreduce_naive
from helpers.timing import compare

__all__ = ['backward_and_send', 'Overlap', 'overlap', 'plan_buckets', 'allreduce_bucketed',
           'bucket_gradients', 'flat_buckets', 'bucketed_time', 'time_buckets']


def backward_and_send(losses, groups, wait=False, allreduce=allreduce_naive):
    """Backward on every device, then one allreduce per group (a gradient or a bucket, one array
    per device), in order (notebook 10); ``wait=True`` first waits for the whole backward pass."""
    checks.sends(losses, groups, wait, allreduce)
    for l in losses:
        l.backward()                    # queued: the engine runs it while Python goes on
    if wait:
        nd.waitall()                    # wait until every gradient is written
    for arrays in groups:
        allreduce(arrays)               # queued: starts as soon as its gradients are written


Overlap = collections.namedtuple('Overlap', 'backward communication hidden after')
Overlap.__doc__ = ('Milliseconds of one traced step (notebook 10): the backward pass (first to last '
                   'backward operator), the communication, the part of it that ran during the '
                   'backward pass, and how long the trace went on after the backward pass ended.')


def _union(intervals):
    merged = []
    for start, end in sorted(intervals):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return merged


def overlap(spans, classify=tracing.phase):
    """How much communication ran during the backward pass, from the spans of
    :func:`helpers.tracing.trace` of a backward pass and what follows it (notebook 10).

    The backward pass runs from its first operator's start to its last one's end, on any device;
    communication is every operator that ``classify`` calls ``'communication'`` or ``'wire'`` (a
    message on an emulated link, :mod:`helpers.link`) and that starts after the backward pass has
    begun (so the shard copies before a forward pass do not count). Times are of the union over all
    devices: two copies at once count once. Returns an :class:`Overlap`; ``hidden / communication``
    is the fraction hidden behind the backward pass.
    """
    spans, classify = [tracing.Span(*s) for s in checks.spans(spans)], checks.function(classify, 'classify')
    phases = [(classify(s.name), s) for s in spans]
    backward = [s for p, s in phases if p == 'backward']
    if not backward:
        raise ValueError('the trace has no backward operator: trace the backward pass and what follows it')
    begin, end = min(s.start for s in backward), max(s.end for s in backward)
    comm = _union((s.start, s.end) for p, s in phases
                  if p in ('communication', 'wire') and s.start >= begin)
    total = sum(e - b for b, e in comm)
    hidden = sum(max(0.0, min(e, end) - max(b, begin)) for b, e in comm)
    return Overlap(end - begin, total, hidden, max(s.end for s in spans) - end)


def plan_buckets(sizes, bucket_bytes, itemsize=4):
    """Group gradients of ``sizes`` elements (in layer order) into buckets of about
    ``bucket_bytes``, last layer first (notebook 10). A bucket closes as soon as it holds
    ``bucket_bytes`` or more. Returns one list per bucket of ``(i, begin, end)``: gradient ``i``
    fills elements ``begin:end`` of its bucket."""
    checks.bucket_plan(sizes, bucket_bytes, itemsize)
    buckets, bucket, filled = [], [], 0
    for i in reversed(range(len(sizes))):           # backward writes the last layer's first
        bucket.append((i, filled, filled + sizes[i]))
        filled += sizes[i]
        if filled * itemsize >= bucket_bytes:       # full: close it, start the next
            buckets.append(bucket)
            bucket, filled = [], 0
    if bucket:
        buckets.append(bucket)
    return buckets


def allreduce_bucketed(grads, bucket_bytes, allreduce=allreduce_naive):
    """Sum every gradient across devices, in place, with one allreduce per bucket of about
    ``bucket_bytes`` (notebook 10): pack each bucket's gradients into one flat array per device
    (a copy), allreduce it, copy the sums back. ``grads[i]``: gradient i on every device."""
    itemsize = checks.buckets(grads, bucket_bytes)
    for plan in plan_buckets([g[0].size for g in grads], bucket_bytes, itemsize):
        flats = [nd.concat(*[grads[i][d].reshape(-1) for i, _, _ in plan], dim=0)     # pack
                 for d in range(len(grads[0]))]
        allreduce(flats)
        for d, flat in enumerate(flats):                                              # unpack
            for i, begin, end in plan:
                flat[begin:end].reshape(grads[i][d].shape).copyto(grads[i][d])
    return grads


def bucket_gradients(params, bucket_bytes):
    """Give every Gluon parameter of ``params`` gradient buffers that are views into flat buckets
    of about ``bucket_bytes``, one per device: backward then writes each gradient straight into
    its bucket (notebook 10). Returns the buckets, last layer first: ``[bucket][device]``."""
    itemsize = checks.bucket_params(params, bucket_bytes)
    buckets = []
    for plan in plan_buckets([p.list_data()[0].size for p in params], bucket_bytes, itemsize):
        flats = [nd.zeros(plan[-1][2], ctx=x.context, dtype=x.dtype) for x in params[0].list_data()]
        for i, begin, end in plan:
            params[i]._grad = [f[begin:end].reshape(params[i].shape) for f in flats]   # Gluon's buffers
            autograd.mark_variables(params[i].list_data(), params[i]._grad)           # autograd's
        buckets.append(flats)
    return buckets


def flat_buckets(sizes, bucket_bytes, devices, dtype='float32'):
    """The buckets :func:`bucket_gradients` would make for gradients of ``sizes`` elements, as
    arrays of ones on ``devices``: ``[bucket][device]`` (notebook 10's sweep; the benchmark)."""
    devices, dtype = checks.devices(devices), checks.dtype(dtype)
    plans = plan_buckets(sizes, bucket_bytes, dtype.itemsize)
    return [[nd.ones(plan[-1][2], ctx=d, dtype=dtype) for d in devices] for plan in plans]


def bucketed_time(sizes, bucket_bytes, cost, itemsize=4):
    """Seconds of a bucketed allreduce by a cost model (notebook 10): the buckets of
    :func:`plan_buckets` one after the other, each costing ``cost(m)`` seconds for its ``m`` bytes,
    e.g. ``lambda m: alpha + beta * m`` (alpha and beta fitted on allreduces of single arrays, with
    :func:`helpers.timing.fit_alpha_beta`) or ``lambda m: cost_ring(k, m, alpha, bandwidth)``
    (:mod:`helpers.costmodel`). With ``alpha + beta m``: ``n alpha + beta N`` for ``n`` buckets of
    ``N`` bytes in all."""
    if not callable(cost):
        raise TypeError(f'cost must be a function of a message size in bytes, got {type(cost).__name__}')
    return sum(cost(plan[-1][2] * itemsize) for plan in plan_buckets(sizes, bucket_bytes, itemsize))


def time_buckets(sizes, bucket_sizes, devices, single=(), repeat=5, allreduce=allreduce_naive):
    """Measure ``allreduce`` of gradients of ``sizes`` elements in buckets of each of
    ``bucket_sizes`` bytes, the buckets being views (no packing copies) on ``devices``
    (the sweep of notebook 10). In the same rounds, for fitting the alpha-beta model under the same
    conditions, it times allreduces of single arrays of each of ``single`` bytes, several in a row
    as in a step (up to 16, at most 16 MiB per device). Every variant runs in turn, round after
    round (:func:`helpers.timing.compare`).

    Returns ``(rows, seconds)``: one dict per bucket size -- ``bucket_bytes``, ``buckets``,
    ``messages`` and ``bytes`` (all devices, from :class:`helpers.comm.CommStats`) and ``seconds``
    (median) -- and the median seconds per allreduce of each size in ``single``."""
    devices, repeat = checks.devices(devices), checks.whole(repeat, 'repeat', 1)
    bucket_sizes, single = checks.counts(bucket_sizes, 'bucket_sizes', 1), checks.counts(single, 'single', 4)
    if not bucket_sizes:
        raise ValueError('bucket_sizes is empty: give at least one bucket size in bytes')
    checks.bucket_plan(sizes, bucket_sizes[0], 4)
    checks.function(allreduce, 'allreduce')
    runs, rows = {}, []
    for bucket_bytes in bucket_sizes:
        buckets = flat_buckets(sizes, bucket_bytes, devices)
        stats = CommStats()
        for b in buckets:
            allreduce(b, send=stats.send)
        rows.append(dict(bucket_bytes=bucket_bytes, buckets=len(buckets), messages=stats.messages,
                         bytes=sum(stats.sent.values())))
        runs['bucket', bucket_bytes] = lambda buckets=buckets: [allreduce(b) for b in buckets]
    counts = {}
    for nbytes in single:
        counts[nbytes] = min(16, max(2, 2 ** 24 // nbytes))
        arrays = [[nd.ones(nbytes // 4, ctx=d) for d in devices] for _ in range(counts[nbytes])]
        runs['single', nbytes] = lambda arrays=arrays: [allreduce(a) for a in arrays]
    seconds = compare(runs, repeat=repeat)
    for row in rows:
        row['seconds'] = seconds['bucket', row['bucket_bytes']]
    return rows, [seconds['single', n] / counts[n] for n in single]
