"""Unit and property tests of helpers.buckets (notebook 10): bucket plans, the bucketed allreduce (packed
by copying, or as views written by the backward pass) against the unbucketed one, bit for bit, for 1 to
8 devices; the overlap measure; and bad input refused before any work."""
import mxnet as mx
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from mxnet import gluon, nd

from helpers.lessoncheck import _small_losses as _backward, _small_net as _net  # the laws' own small net
from helpers import lessoncheck, tracing
from helpers.buckets import (Overlap, allreduce_bucketed, backward_and_send, bucket_gradients, bucketed_time,
                             flat_buckets, overlap, plan_buckets, time_buckets)
from helpers.comm import allreduce_naive

CTX = [mx.cpu(i) for i in range(8)]
shapes = st.lists(st.integers(1, 7), min_size=1, max_size=3).map(tuple)
# bucket sizes from smaller than any gradient (1 byte) to larger than all of them together
bucket_sizes = st.one_of(st.just(1), st.integers(1, 400), st.just(10 ** 9))


@settings(max_examples=100, deadline=None)
@given(sizes=st.lists(st.integers(1, 50), min_size=1, max_size=12), bucket_bytes=bucket_sizes,
       itemsize=st.sampled_from([2, 4, 8]))
def test_plan_covers_every_gradient_once_last_layer_first(sizes, bucket_bytes, itemsize):
    """helpers.lessoncheck's law (the readers' check_plan_buckets): each gradient once, last layer first,
    contiguous slots, every bucket but the last closed by its last gradient."""
    lessoncheck.law_plan_buckets(plan_buckets, sizes, bucket_bytes, itemsize)
    plans = plan_buckets(sizes, bucket_bytes, itemsize)
    if bucket_bytes <= min(sizes) * itemsize:
        assert len(plans) == len(sizes)                                # smaller than one gradient
    if bucket_bytes >= sum(sizes) * itemsize:
        assert len(plans) == 1                                         # larger than all of them


def _grads(k, shape_list, seed, dtype='float32'):
    rng = np.random.default_rng(seed)
    return [[nd.array(rng.standard_normal(s), ctx=c, dtype=dtype) for c in CTX[:k]] for s in shape_list]


@settings(max_examples=60, deadline=None)
@given(k=st.integers(1, 8), shape_list=st.lists(shapes, min_size=1, max_size=8), bucket_bytes=bucket_sizes,
       seed=st.integers(0, 2 ** 16), dtype=st.sampled_from(['float32', 'float64']))
def test_bucketed_allreduce_has_the_bits_of_the_unbucketed_one(k, shape_list, bucket_bytes, seed, dtype):
    """helpers.lessoncheck's law (the readers' check_allreduce_bucketed): in place, each gradient with its own
    allreduce's bits, one allreduce per bucket."""
    lessoncheck.law_bucketed_like_unbucketed(allreduce_bucketed, k, shape_list, bucket_bytes, dtype, seed)


@settings(max_examples=40, deadline=None)
@given(k=st.integers(1, 8), shape_list=st.lists(shapes, min_size=1, max_size=8), bucket_bytes=bucket_sizes,
       seed=st.integers(0, 2 ** 16))
def test_allreduce_of_view_buckets_has_the_bits_of_the_unbucketed_one(k, shape_list, bucket_bytes, seed):
    """Buckets as views (what bucket_gradients makes): writing the views writes the bucket, and one
    allreduce per bucket leaves every view holding the per-gradient allreduce's bits."""
    grads = _grads(k, shape_list, seed)
    plans = plan_buckets([int(np.prod(s)) for s in shape_list], bucket_bytes)
    reference = [[g.copy() for g in per_device] for per_device in grads]
    for per_device in reference:
        allreduce_naive(per_device)
    for plan in plans:
        flats = [nd.zeros(plan[-1][2], ctx=c) for c in CTX[:k]]
        for i, begin, end in plan:
            for d, f in enumerate(flats):
                f[begin:end].reshape(shape_list[i])[:] = grads[i][d]        # what backward does
        allreduce_naive(flats)
        for i, begin, end in plan:
            for d, f in enumerate(flats):
                np.testing.assert_array_equal(f[begin:end].reshape(shape_list[i]).asnumpy(),
                                              reference[i][d].asnumpy())




@pytest.mark.parametrize('k', [1, 2, 3])
@pytest.mark.parametrize('bucket_bytes', [1, 100, 10 ** 9])
def test_backward_writes_into_the_buckets_the_values_of_attach_grad(k, bucket_bytes):
    """helpers.lessoncheck's law (the readers' check_bucket_gradients): backward writes every gradient into
    its slot of its bucket, and Gluon's and autograd's buffers are those views."""
    lessoncheck.law_bucket_views(bucket_gradients, k, bucket_bytes)


@pytest.mark.parametrize('case', lessoncheck.BACKWARD_CASES)
def test_backward_and_send_sums_every_group_in_order(case):
    """helpers.lessoncheck's law (the readers' check_backward_and_send): per gradient or per bucket of views,
    waiting or not, every gradient ends with its allreduce's bits."""
    lessoncheck.law_backward_and_send(backward_and_send, **case)


def test_overlap_counts_only_communication_during_the_backward_pass():
    S = tracing.Span
    spans = [S('cpu(0)', 'CopyCPU2CPU', 0, 1),               # before the backward pass: a shard copy
             S('cpu(0)', 'ImperativeBulk', 2, 10), S('cpu(1)', 'ImperativeBulk', 3, 12),
             S('cpu(1)', 'CopyCPU2CPU', 5, 7), S('cpu(0)', 'broadcast_add', 6, 8),   # 5-8 once: 3 ms
             S('cpu(0)', 'CopyCPU2CPU', 11, 14), S('cpu(0)', 'sgd_update', 14, 15)]
    o = overlap(spans)
    assert o == Overlap(backward=10, communication=6, hidden=4, after=3)
    with pytest.raises(ValueError, match='no backward'):
        overlap(spans[:1])


def test_waiting_hides_nothing_on_a_real_trace():
    devices = CTX[:2]
    net, params = _net(devices)
    losses = _backward(net, devices)
    _, spans = tracing.trace(backward_and_send, losses, [p.list_grad() for p in reversed(params)], True)
    o = overlap(spans)
    assert o.communication > 0 and o.hidden == 0


def test_model_and_measurement_count_buckets_messages_and_bytes():
    sizes = [10, 20, 30, 40]
    assert bucketed_time(sizes, 1, lambda m: 1.0) == 4                 # one bucket per gradient
    assert bucketed_time(sizes, 10 ** 9, lambda m: 2 + m) == 2 + 400   # one bucket of 400 bytes
    rows, single = time_buckets(sizes, [1, 10 ** 9], CTX[:3], single=[4, 4096], repeat=1)
    assert len(single) == 2 and all(t > 0 for t in single)
    same_bytes = 4 * 400                                       # 2 (k - 1) N, however the buckets are cut
    assert [(r['buckets'], r['messages'], r['bytes']) for r in rows] == [(4, 16, same_bytes), (1, 4, same_bytes)]
    assert all(r['seconds'] > 0 for r in rows)
    flats = flat_buckets(sizes, 120, CTX[:2])
    assert [f[0].size for f in flats] == [40, 30, 30] and flats[0][1].context == CTX[1]


def test_bad_input_is_refused_before_any_work():
    for bad in ('bucket_bytes 0', 'bucket_bytes -5', 'bucket_bytes 2.5', 'bucket_bytes True', 'no gradient',
                'an array, not a list', 'mixed dtypes', 'one gradient of two shapes', 'devices in another order'):
        lessoncheck.law_bucketed_refuses_bad_input(allreduce_bucketed, bad)        # nothing changed either
    for bad in ('no gradient', 'a size of 0', 'a bucket of 0 bytes', 'sizes not a list'):
        lessoncheck.law_plan_refuses_bad_input(plan_buckets, bad)
    grads = _grads(2, [(3,), (4,)], 0)                          # and each message names what is wrong
    for bad, error, match in (
            (0, ValueError, 'bucket_bytes must be at least 1'),
            (2.5, TypeError, 'bucket_bytes must be a whole number')):
        with pytest.raises(error, match=match):
            allreduce_bucketed(grads, bad)
    with pytest.raises(TypeError, match='grads mixes dtypes'):
        allreduce_bucketed(grads + _grads(2, [(2,)], 0, 'float64'), 100)
    with pytest.raises(ValueError, match=r'grads\[1\] lives on'):
        allreduce_bucketed([grads[0], grads[1][::-1]], 100)
    with pytest.raises(ValueError, match=r'sizes\[1\] must be at least 1'):
        plan_buckets([3, 0], 100)
    with pytest.raises(TypeError, match='cost must be a function'):
        bucketed_time([3], 100, 1e-6)


def test_bad_parameters_are_refused_before_any_work():
    net, params = _net(CTX[:2])
    with pytest.raises(ValueError, match='params is empty'):
        bucket_gradients([], 100)
    with pytest.raises(TypeError, match='list of Gluon parameters'):
        bucket_gradients(net.collect_params(), 100)
    with pytest.raises(ValueError, match="grad_req='null'"):
        bucket_gradients(list(net.collect_params().values()), 100)           # BatchNorm's running mean
    with pytest.raises(ValueError, match='bucket_bytes must be at least 1'):
        bucket_gradients(params, 0)
    other, _ = _net(CTX[2:4])
    with pytest.raises(ValueError, match='lives on'):
        bucket_gradients(params + [list(other.collect_params().values())[0]], 100)
    fresh = gluon.Parameter('w', shape=(3,))
    with pytest.raises(ValueError, match='not initialised'):
        bucket_gradients([fresh], 100)
    wide = gluon.Parameter('v', shape=(3,), dtype='float64')
    wide.initialize(ctx=CTX[:2])
    with pytest.raises(TypeError, match='params mixes dtypes'):
        bucket_gradients(params + [wide], 100)
    assert all(p.list_grad()[0].shape == p.shape for p in params)       # untouched
