"""The laws and checks of :mod:`helpers.precision` (notebook 13): the float16 allreduce (the sum of
the rounded inputs, half the bytes), the dynamic loss scale, and the loss-scaled step that skips an
overflow. ``tests/test_precision.py`` calls the same laws.
"""
import numpy as np
from mxnet import nd

from helpers.lessoncheck.machinery import Broken, CPU, Law, _devices_words, _fmt, _n, lesson, tiny_data

__all__ = ['check_allreduce_fp16', 'check_next_scale', 'check_train_batch_fp16', 'FP16_CASES', 'law_fp16_sums',
           'law_fp16_bytes_are_half', 'FP16_BYTES_CASES', 'SCALE_CASES', 'law_next_scale', 'FP16_STEP_CASES',
           'law_fp16_step']


FP16_CASES = sorted([dict(k=k, n=n, seed=7 * k + n) for k in range(1, 9) for n in (1, k + 1, 37)],
                    key=lambda c: (c['n'], c['k']))


def law_fp16_sums(allreduce_fp16, k, n, seed):
    """Notebook 13: in place, every device ends with the sum of the float16-rounded inputs (added up in
    float16: to k float16 roundings), identical bits on every device, in the arrays' own dtype."""
    rng = np.random.default_rng(seed)
    xs = [rng.standard_normal(n).astype(np.float32) for _ in range(k)]
    grads = [nd.array(x, ctx=c) for x, c in zip(xs, CPU)]
    given = list(grads)
    if allreduce_fp16(grads) is not grads:
        raise Broken('allreduce_fp16 works in place and returns grads', why='end with `return grads`')
    exact = np.sum([x.astype(np.float16) for x in xs], axis=0, dtype=np.float64)
    values = [g.asnumpy() for g in grads]
    for i, (g, c) in enumerate(zip(grads, CPU)):
        if g is not given[i] or g.context != c or np.dtype(g.dtype) != np.float32:
            raise Broken(f'gradient {i} must stay the same float32 array on {c}',
                         got=f'{np.dtype(g.dtype)} on {g.context}',
                         why='cast the sums back and copy them into the gradients: h.astype(g.dtype).copyto(g)')
    if k > 1 and all(np.array_equal(v, x) for v, x in zip(values, xs)):
        raise Broken(f'nothing was summed ({_n(k, "device")}, {_n(n, "element")})', expected=_fmt(exact),
                     got=_devices_words(values),
                     why='astype makes a copy: allreduce the float16 copies, then copy the sums back into grads')
    if not np.allclose(values[0], exact, rtol=k * 2e-3, atol=k * 2e-3):
        raise Broken(f'device 0 does not hold the sum ({_n(k, "device")}, {_n(n, "element")})',
                     expected=f'{_fmt(exact)} (to float16 rounding; the inputs: {_devices_words(xs)})',
                     got=_fmt(values[0]))
    if any(not np.array_equal(v, values[0]) for v in values):
        raise Broken('the devices hold different bits', expected='identical bits on every device',
                     got=_devices_words(values), why='one allreduce of the float16 copies, then the same cast back')


def _allreduce_bytes(k, shapes, dtype):
    """``{algorithm: (bytes sent per device, messages)}`` of one allreduce per array of ``shapes`` on k
    devices, for notebook 04's algorithms (the ring only where every array has k elements or more)."""
    from helpers import comm
    found = {}
    for name in ('allreduce', 'allreduce_naive', 'allreduce_ring'):
        if name == 'allreduce_ring' and min(int(np.prod(s)) for s in shapes) < k:
            continue
        stats = comm.CommStats()
        for shape in shapes:
            getattr(comm, name)([nd.zeros(shape, ctx=d, dtype=dtype) for d in CPU[:k]], send=stats.send)
        found[name] = (stats.per_device(CPU[:k]), stats.messages)
    return found


def law_fp16_bytes_are_half(allreduce_fp16, k, n):
    """Notebook 13: every transfer goes through ``send``, and each device sends exactly half the bytes
    of the same allreduce of the float32 arrays (notebook 04's ``allreduce``, or its naive or ring
    algorithm), in the same number of messages."""
    from helpers.comm import CommStats
    half = CommStats()
    allreduce_fp16([nd.ones(n, ctx=c) for c in CPU[:k]], send=half.send)
    got = half.per_device(CPU[:k])
    full = _allreduce_bytes(k, [(n,)], 'float32')
    if any(got == [b // 2 for b in sent] and half.messages == messages for sent, messages in full.values()):
        return
    want, messages = full['allreduce']
    why = ('no byte went through send: pass send on to allreduce' if not any(got) and any(want) else
           'the arrays travelled as float32: cast to float16 before the allreduce'
           if any(got == sent for sent, _ in full.values()) else None)
    raise Broken(f'bytes sent by each device, {_n(n, "float32 element")} on {_n(k, "device")}',
                 expected=f'{[b // 2 for b in want]} (half of allreduce\'s {want}), {messages} messages',
                 got=f'{got}, {half.messages} messages', why=why)


FP16_BYTES_CASES = [dict(k=k, n=n) for k in range(1, 9) for n in (k, 1001)]


SCALE_CASES = [dict(updates=u, interval=i, scale=s) for u, i, s in (
    ([False], 2000, 1024.0), ([True], 2000, 1024.0), ([True, True, True], 3, 8.0), ([True, True, True, True], 2, 1.0),
    ([True, False, True, True], 2, 2.0 ** 16), ([True, True, False, True, True, True], 3, 4.0),
    ([False, False, False], 5, 2.0 ** 24), ([True] * 7 + [False] + [True] * 3, 4, 0.5),
    ([True, True, False, True, True], 2, 2.0 ** 24), ([True, True, True], 1, 2.0 ** 40))]


def _scale_rule(updates, interval, scale):
    """Notebook 13's dynamic loss scale, step by step: ``[(scale, good steps)]`` after each step."""
    good, out = 0, []
    for updated in updates:
        if not updated:
            scale, good = scale / 2, 0
        else:
            good += 1
            scale, good = (scale * 2, 0) if good == interval else (scale, good)
        out.append((scale, good))
    return out


def law_next_scale(next_scale, updates, interval, scale):
    """Notebook 13: after a step that overflowed (``updated`` False) the scale halves and the count of
    good steps starts again from 0; after ``growth_interval`` good steps in a row it doubles (count 0);
    otherwise it stays and the count grows by one. The default interval is 2000."""
    want, s, good, history = _scale_rule(updates, interval, scale), scale, 0, []
    for step, updated in enumerate(updates):
        got = tuple(next_scale(s, updated, good, interval))
        history.append(f'{"good" if updated else "overflow"} -> {got}')
        if got != want[step]:
            why = ('after an overflow the count of good steps starts again from 0' if not updated and got[0] == s / 2
                   else 'an overflow halves the scale (and the step is skipped)' if not updated else
                   f'double the scale after growth_interval ({interval}) good steps in a row, and start counting '
                   'again from 0' if want[step][0] != s else
                   'a good step keeps the scale and counts one more good step')
            raise Broken(f'next_scale from scale {_power(scale)}, growth_interval {interval}',
                         expected='; '.join(f'{"good" if u else "overflow"} -> {w}'
                                            for u, w in zip(updates[:step + 1], want)),
                         got='; '.join(history), why=why)
        s, good = got
    want = ((64.0, 1999), (128.0, 0))
    try:
        default = (tuple(next_scale(64.0, True, 1998)), tuple(next_scale(64.0, True, 1999)))
    except ValueError as e:                  # the guard refuses 1998 good steps of a smaller default interval
        default = f'ValueError: {e}'
    if default != want:
        given = (tuple(next_scale(64.0, True, 1998, 2000)), tuple(next_scale(64.0, True, 1999, 2000)))
        raise Broken('next_scale(64, True, 1998) and next_scale(64, True, 1999), with the default growth_interval',
                     expected=f'{want[0]}, {want[1]}',
                     got=default if isinstance(default, str) else f'{default[0]}, {default[1]}',
                     why='the default growth_interval is 2000 (MXNet\'s and PyTorch\'s): growth_interval=2000 in the '
                         'signature' if given == want else
                         f'with growth_interval=2000 given too it returns {given[0]}, {given[1]}: after '
                         'growth_interval good steps in a row the scale doubles, from any scale, however many steps '
                         'that takes')


# LeNet's float16 gradients overflow at a loss scale of 2**40, and not at 2**8
FP16_STEP_CASES = [dict(k=k, n=n, scale=s, overflows=s > 2 ** 20) for k, n in ((1, 5), (2, 9), (3, 10))
                   for s in (2.0 ** 40, 2.0 ** 8)]


def law_fp16_step(train_batch_fp16, k, n, scale, overflows, lr=0.1):
    """Notebook 13: a loss-scaled step whose float16 gradients overflow returns False and leaves every
    weight alone; otherwise it returns True and takes notebook 05's step (float32 on the wire) to
    float16 rounding (1e-4), the replicas identical to the last bit."""
    from helpers.models import init_lenet_params, replicate_params
    from helpers.train import max_gap, train_batch_scratch
    params = init_lenet_params(0)
    Xn, yn = tiny_data(n, 9)
    X, y = nd.array(Xn), nd.array(yn, dtype='int32')
    reps = [replicate_params(params, d) for d in CPU[:k]]
    updated = train_batch_fp16(X, y, reps, CPU[:k], lr, scale)
    if overflows:
        gap = max_gap(reps[0], params)
        if updated is not False or not gap == 0:
            raise Broken(f'with scale {_power(scale)} the float16 gradients overflow: the step must be skipped',
                         expected='returns False, every weight unchanged',
                         got=f'returns {updated!r}, weights moved by {gap:.3g}',
                         why='after the allreduce: if not all_finite([p.grad for p in device_params[0]]): return False '
                             '(before any update)')
        return
    ref = [replicate_params(params, d) for d in CPU[:k]]
    train_batch_scratch(X, y, ref, CPU[:k], lr)
    gap = max_gap(reps[0], ref[0])
    if updated is not True or not gap < 1e-4:
        w0 = params[-1].asnumpy().reshape(-1)
        step, need = reps[0][-1].asnumpy().reshape(-1) - w0, ref[0][-1].asnumpy().reshape(-1) - w0
        ratio = float(np.dot(step, need) / np.dot(need, need))
        from helpers.split import shard_sizes
        why = ('the step was skipped although nothing overflowed' if updated is False or not step.any() else
               f'the weights moved {ratio:.4g} times as far as notebook 05\'s step: divide the update by the scale '
               '(sgd(ps, lr, scale))' if np.isclose(ratio, scale, rtol=1e-2) else
               f'the weights moved {ratio:.4g} times as far: the loss is the mean over the whole batch, '
               '* (scale / X.shape[0])' if any(np.isclose(ratio, n / s, rtol=1e-2) for s in shard_sizes(n, k)) or
               np.isclose(ratio, n, rtol=1e-2) else
               'it returns whether it updated: True' if updated is not True and gap < 1e-4 else
               f'the weights moved {ratio:.4g} times as far as notebook 05\'s step')
        raise Broken(f'a step with scale {_power(scale)} on {k} device{"s" * (k > 1)} (no overflow)',
                     expected=f'returns True, fc3.bias = {_fmt(ref[0][-1].asnumpy())} (to 1e-4)',
                     got=f'returns {updated!r}, fc3.bias = {_fmt(reps[0][-1].asnumpy())}', why=why)
    for i, r in enumerate(reps[1:], 1):
        if max_gap(r, reps[0]) != 0:
            raise Broken(f'replica {i} and replica 0 differ after the step', expected='identical bits',
                         why='every device applies the same update to the same summed gradient')


def _power(x):
    """``2**40`` for a power of two, else the number."""
    e = np.log2(x) if x > 0 else 0.5
    return f'2**{int(e)}' if e == int(e) and abs(e) >= 4 else f'{x:g}'


@lesson('helpers.precision.allreduce_fp16', hint='float16 copies (astype), allreduce them, cast back into the grads')
def check_allreduce_fp16():
    """Check your ``allreduce_fp16(grads, send)`` (notebook 13): the float16 sum, in place, half the bytes."""
    return [
        Law('in place, every device ends with the sum of the float16-rounded inputs, identical bits, float32 kept '
            '(k = 1-8)', law_fp16_sums, FP16_CASES,
            lambda k, n, seed: f'{n} float32 element{"s" * (n > 1)} on {k} device{"s" * (k > 1)}'),
        Law('every transfer goes through send: exactly half the bytes of the float32 allreduce',
            law_fp16_bytes_are_half, FP16_BYTES_CASES,
            lambda k, n: f'{n} float32 element{"s" * (n > 1)} on {k} device{"s" * (k > 1)}'),
    ]


@lesson('helpers.precision.next_scale',
        hint='overflow: (scale / 2, 0); else count it; interval reached: (scale * 2, 0)')
def check_next_scale():
    """Check your ``next_scale(scale, updated, good_steps, growth_interval)`` (notebook 13)."""
    return [Law('an overflow halves the scale and resets the count; growth_interval good steps in a row double it',
                law_next_scale, SCALE_CASES,
                lambda updates, interval, scale: f'scale {_power(scale)}, growth_interval {interval}, steps '
                                                 + ', '.join('good' if u else 'overflow' for u in updates))]


@lesson('helpers.precision.train_batch_fp16',
        hint='loss sum * scale / batch; backward; allreduce_fp16; overflow: return False; else sgd by scale')
def check_train_batch_fp16():
    """Check your ``train_batch_fp16(X, y, device_params, devices, lr, scale)`` (notebook 13): it skips an
    overflowing step and otherwise takes notebook 05's step."""
    return [Law("an overflowing step is skipped (False, weights unchanged); otherwise notebook 05's step to float16 "
                "rounding (True), the replicas identical", law_fp16_step, FP16_STEP_CASES,
                lambda k, n, scale, overflows: f'a batch of {n} on {k} device{"s" * (k > 1)}, loss scale '
                                               f'{_power(scale)} ' + ('(its float16 gradients overflow)'
                                                                      if overflows else '(no overflow)'))]
