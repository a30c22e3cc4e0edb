"""The laws and checks of :mod:`helpers.accumulation` (notebook 13): m micro-batches take one step of
the whole batch, with one allreduce per parameter. ``tests/test_accumulation.py`` calls the same laws.
"""
import numpy as np
from mxnet import nd

from helpers.lessoncheck.machinery import Broken, CPU, Law, _fmt, _n, lesson, tiny_data
from helpers.lessoncheck.precision import _allreduce_bytes

__all__ = ['check_train_batch_accumulated', 'ACCUMULATION_CASES', 'law_accumulation_is_one_big_step',
           'law_accumulation_communicates_once', 'ACCUMULATION_BYTES_CASES']


ACCUMULATION_CASES = [dict(k=k, m=m, b=b) for k, m, b in ((1, 1, 2), (1, 3, 2), (2, 2, 3), (3, 3, 4))]


def _micro_batches(m, b, seed):
    Xn, yn = tiny_data(2 * m * b, seed)
    return [(nd.array(Xn[j * b:(j + 1) * b], dtype='float64'), nd.array(yn[j * b:(j + 1) * b], dtype='int32'))
            for j in range(2 * m)]


def law_accumulation_is_one_big_step(train_batch_accumulated, k, m, b, lr=0.1):
    """Notebook 13: m micro-batches of b examples split over k devices, gradients added up
    (``grad_req='add'``) and ONE allreduce, take one SGD step of the whole batch of m * b examples
    (notebook 05's step, float64, to 1e-12), twice in a row; the replicas stay identical, the gradients
    are zero afterwards, and it returns the m * k loss sums."""
    from helpers.accumulation import accumulating_replica
    from helpers.models import init_lenet_params, replicate_params
    from helpers.train import max_gap, train_batch_scratch
    params = [p.astype('float64') for p in init_lenet_params(0)]
    acc = [accumulating_replica(params, d) for d in CPU[:k]]
    ref = [replicate_params(params, d) for d in CPU[:k]]
    micro = _micro_batches(m, b, 10 + k)
    for step in range(2):
        batch = micro[step * m:(step + 1) * m]
        losses = train_batch_accumulated(batch, acc, CPU[:k], lr)
        X, y = nd.concat(*[x for x, _ in batch], dim=0), nd.concat(*[t for _, t in batch], dim=0)
        w_before = ref[0][-1].asnumpy().reshape(-1)
        train_batch_scratch(X, y, ref, CPU[:k], lr)
        gap = max_gap(acc[0], ref[0])
        if gap > 1e-12:
            if step == 0:
                have, need = acc[0][-1].asnumpy().reshape(-1) - w_before, ref[0][-1].asnumpy().reshape(-1) - w_before
                ratio = float(np.dot(have, need) / np.dot(need, need))
            else:
                ratio = None
            why = (f'the weights moved {ratio:.3g} times as far as one step of the whole batch: divide by the whole '
                   f'batch ({m * b} examples, all {m} micro-batches), not by one micro-batch' if ratio is not None and
                   m > 1 and np.isclose(ratio, m, rtol=1e-3) else
                   f'the weights moved {ratio:.3g} times as far: divide the summed gradient by the batch size '
                   f'({m * b})' if ratio is not None and np.isclose(ratio, m * b, rtol=1e-3) else
                   'the first step is right, the second is not: set every gradient back to zero after the update '
                   '(grad_req=\'add\' keeps adding)' if step == 1 else
                   f'the weights moved {ratio:.3g} times as far as one step of the whole batch')
            raise Broken(f'after step {step + 1}, {m} micro-batch{"es" * (m > 1)} of {b} on {k} device'
                         f'{"s" * (k > 1)} differ from one step of the {m * b} examples by {gap:.2g}',
                         expected=f'fc3.bias = {_fmt(ref[0][-1].asnumpy())}',
                         got=f'fc3.bias = {_fmt(acc[0][-1].asnumpy())}',
                         why=why)
        if not isinstance(losses, (list, tuple)) or len(losses) != m * k:
            raise Broken('the step returns every device\'s loss sum of every micro-batch', expected=f'{m * k} losses',
                         got=f'{len(losses) if isinstance(losses, (list, tuple)) else repr(losses)[:60]}')
    for i, r in enumerate(acc[1:], 1):
        if max_gap(r, acc[0]) != 0:
            raise Broken(f'replica {i} and replica 0 differ', expected='identical bits',
                         why='one allreduce per parameter, then the same update on every device')
    if any(p.grad.asnumpy().any() for r in acc for p in r):
        raise Broken('after the step every gradient must be zero, ready for the next accumulation',
                     why='p.grad[:] = 0 for every parameter, after the update')


def law_accumulation_communicates_once(train_batch_accumulated, k, m, b=2):
    """Notebook 13: every transfer goes through ``send``, and a step of m micro-batches sends the
    bytes of ONE allreduce per parameter (notebook 04's ``allreduce``, or its naive or ring
    algorithm), whatever m."""
    from helpers.accumulation import accumulating_replica
    from helpers.comm import CommStats
    from helpers.models import init_lenet_params
    params = [p.astype('float64') for p in init_lenet_params(0)]
    acc = [accumulating_replica(params, d) for d in CPU[:k]]
    stats = CommStats()
    train_batch_accumulated(_micro_batches(m, max(b, k), 3)[:m], acc, CPU[:k], 0.1, send=stats.send)
    got = stats.per_device(CPU[:k])
    once = _allreduce_bytes(k, [p.shape for p in params], 'float64')
    if any(got == sent for sent, _ in once.values()):
        return
    want = once['allreduce'][0]
    why = ('no byte went through send: pass send on to allreduce' if not any(got) and any(want) else
           f'each device sent {got[0] / want[0]:.3g} times the bytes of one allreduce per parameter: no '
           f'communication inside the loop over the {m} micro-batches, one allreduce per parameter after it'
           if want[0] else None)
    raise Broken(f'bytes sent by each device in a step of {_n(m, "micro-batch", "micro-batches")} on '
                 f'{_n(k, "device")}', expected=str(want),
                 got=str(got), why=why)


ACCUMULATION_BYTES_CASES = [dict(k=k, m=m) for k, m in ((2, 1), (2, 3), (3, 2))]


@lesson('helpers.accumulation.train_batch_accumulated',
        hint='forward_backward per micro-batch (grads add up); one allreduce per parameter; sgd by all n; zero')
def check_train_batch_accumulated():
    """Check your ``train_batch_accumulated(micro_batches, device_params, devices, lr, send)`` (notebook 13):
    one step of the whole batch, one allreduce."""
    return [
        Law('sends the bytes of one allreduce per parameter, whatever the number of micro-batches',
            law_accumulation_communicates_once, ACCUMULATION_BYTES_CASES,
            lambda k, m: f'{_n(m, "micro-batch", "micro-batches")} on {_n(k, "device")}'),
        Law('m micro-batches take one SGD step of the whole batch (float64, twice in a row), the replicas identical, '
            'the gradients zero afterwards', law_accumulation_is_one_big_step, ACCUMULATION_CASES,
            lambda k, m, b: f'{m} micro-batch{"es" * (m > 1)} of {b} on {k} device{"s" * (k > 1)}'),
    ]
