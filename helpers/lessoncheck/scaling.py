"""The laws and checks of :mod:`helpers.scaling` (notebook 09): the warm-up schedule against MXNet's,
the large-batch recipes, the time of an epoch and of a push and pull. ``tests/test_scaling.py`` calls
the same laws.
"""
import numpy as np
import mxnet as mx

from helpers.lessoncheck.machinery import Broken, Law, _refuses, lesson

__all__ = ['check_WarmUp', 'check_lr_recipe', 'check_epoch_time', 'check_pushpull_step', 'WARMUP_CASES',
           'law_warmup_like_mxnet', 'RECIPE_CASES', 'law_lr_recipe', 'law_lr_recipe_refuses_an_unknown_recipe',
           'EPOCH_CASES', 'law_epoch_time', 'PUSHPULL_CASES', 'law_pushpull_step']


WARMUP_CASES = [dict(base_lr=b, warmup_steps=w, begin=s) for b, w, s in
                ((1.6, 12, 0.1), (0.4, 1, 0.1), (0.8, 5, 0.0), (3.2, 40, 0.1), (0.25, 7, 0.05))]


def law_warmup_like_mxnet(WarmUp, base_lr, warmup_steps, begin):
    """Notebook 09: ``WarmUp(base_lr=..., warmup_steps=..., warmup_begin_lr=...)`` is an MXNet
    ``LRScheduler`` whose rate, update by update, is that of MXNet's ``FactorScheduler`` with the same
    warm-up and a step it never reaches (to 1e-9, relative: the same ramp written another way rounds
    differently): the linear ramp, then ``base_lr`` for good."""
    ours = WarmUp(base_lr=base_lr, warmup_steps=warmup_steps, warmup_begin_lr=begin)
    if not isinstance(ours, mx.lr_scheduler.LRScheduler):
        raise Broken('WarmUp must be an MXNet LRScheduler', why='class WarmUp(mx.lr_scheduler.LRScheduler)')
    theirs = mx.lr_scheduler.FactorScheduler(step=10 ** 9, base_lr=base_lr, warmup_steps=warmup_steps,
                                             warmup_begin_lr=begin)
    updates = list(range(3 * warmup_steps + 3)) + [10 ** 6]
    want, got = [theirs(u) for u in updates], []
    for u in updates:
        try:
            got.append(ours(u))
        except AssertionError as e:         # MXNet's get_warmup_lr asserts num_update < warmup_steps
            if isinstance(e, Broken):
                raise
            raise Broken(f'WarmUp(...)({u}) failed inside MXNet (base_lr {base_lr}, warmup_steps {warmup_steps})',
                         expected=f'{theirs(u):.6g}', got='AssertionError from get_warmup_lr',
                         why='get_warmup_lr serves the warm-up only (it asserts num_update < warmup_steps): after '
                             f'the warm-up ({warmup_steps} updates) the rate stays at base_lr for good, '
                             'return self.base_lr')
    for u, a, b in zip(updates, got, want):
        number = isinstance(a, (int, float, np.integer, np.floating)) and not isinstance(a, bool)
        if not number or not np.isclose(a, b, rtol=1e-9, atol=1e-12):     # the same rate, however it is summed
            shown = [u for u in (0, warmup_steps // 2, warmup_steps - 1, warmup_steps, 10 ** 6) if u >= 0]
            why = (f'after the warm-up ({warmup_steps} updates) the rate stays at base_lr ({base_lr}) for good'
                   if u >= warmup_steps else
                   f'during the warm-up the rate is get_warmup_lr(num_update): {begin} rising linearly to '
                   f'{base_lr} over {warmup_steps} updates')
            raise Broken(f'the rate at update {u} (base_lr {base_lr}, warmup_steps {warmup_steps}, warmup_begin_lr '
                         f'{begin})', expected=', '.join(f'update {v}: {theirs(v):.6g}' for v in shown)
                         + f' (update {u}: {b!r})',
                         got=', '.join(f'update {v}: {_rate(ours, v)}' for v in shown) + f' (update {u}: {a!r})',
                         why=why)


def _rate(scheduler, update):
    """A scheduler's rate at ``update`` in 6 digits, or what it returned or raised instead."""
    try:
        rate = scheduler(update)
    except Exception as e:
        return f'{type(e).__name__}'
    return f'{rate:.6g}' if isinstance(rate, (int, float, np.integer, np.floating)) else repr(rate)[:40]


RECIPE_CASES = [dict(recipe=r, batch_size=b, warmup_steps=w, base_lr=lr, base_batch=bb)
                for r in ('fixed', 'linear', 'warmup')
                for b, w, lr, bb in ((64, 10, 0.1, 64), (128, 10, 0.1, 64), (32, 10, 0.1, 64), (1024, 20, 0.1, 64),
                                     (4096, 0, 0.1, 64), (512, 7, 0.05, 256), (2048, 1, 0.2, 128))]


def law_lr_recipe(lr_recipe, recipe, batch_size, warmup_steps, base_lr, base_batch):
    """Notebook 09: ``'fixed'`` gives ``{'learning_rate': base_lr}``; ``'linear'`` ``base_lr * batch_size /
    base_batch``; ``'warmup'`` the same rate and, where it is above ``base_lr`` and ``warmup_steps`` > 0, an
    ``lr_scheduler`` rising linearly from ``base_lr`` to it over ``warmup_steps`` updates, then staying."""
    lr = base_lr if recipe == 'fixed' else base_lr * batch_size / base_batch
    ramp = recipe == 'warmup' and warmup_steps > 0 and lr > base_lr
    call = f'lr_recipe({recipe!r}, {batch_size}, {warmup_steps}, base_lr={base_lr}, base_batch={base_batch})'
    got = lr_recipe(recipe, batch_size, warmup_steps, base_lr, base_batch)
    want_keys = ['learning_rate'] + (['lr_scheduler'] if ramp else [])
    if not isinstance(got, dict) or sorted(got) != sorted(want_keys):
        raise Broken(call, expected=f'a dict with {want_keys}', got=repr(got)[:160],
                     why=('a ramp only where there is something to warm up to: warmup_steps > 0 and a scaled rate '
                          'above base_lr' if isinstance(got, dict) and 'lr_scheduler' in got and not ramp else
                          'the warmup recipe adds an lr_scheduler (a WarmUp) beside the learning rate'
                          if ramp else None))
    if not np.isclose(got['learning_rate'], lr, rtol=1e-12, atol=0):
        ratio = got['learning_rate'] / lr
        why = ('the linear scaling rule multiplies base_lr by batch_size / base_batch' if
               np.isclose(ratio, (base_batch / batch_size) ** 2) and batch_size != base_batch else
               f'the fixed recipe keeps base_lr ({base_lr})' if recipe == 'fixed' else None)
        raise Broken(f'{call}["learning_rate"]', expected=f'{lr:g}', got=f'{got["learning_rate"]!r}', why=why)
    if ramp:
        sched = got['lr_scheduler']
        updates = sorted({0, 1, warmup_steps // 2, warmup_steps - 1, warmup_steps, warmup_steps + 5})
        want = [base_lr + (lr - base_lr) * u / warmup_steps if u < warmup_steps else lr for u in updates]
        rates = [sched(u) for u in updates]
        if not isinstance(sched, mx.lr_scheduler.LRScheduler) or not np.allclose(rates, want, rtol=1e-9, atol=0):
            raise Broken(f'{call}["lr_scheduler"], update by update',
                         expected=', '.join(f'{u}: {w:.5g}' for u, w in zip(updates, want)),
                         got=', '.join(f'{u}: {r:.5g}' for u, r in zip(updates, rates)),
                         why=('the ramp starts at base_lr: WarmUp(base_lr=lr, warmup_steps=warmup_steps, '
                              'warmup_begin_lr=base_lr)' if not np.isclose(rates[0], base_lr) else
                              'an MXNet LRScheduler: notebook 09\'s WarmUp'))


def law_lr_recipe_refuses_an_unknown_recipe(lr_recipe, recipe):
    """Notebook 09: a recipe other than 'fixed', 'linear' and 'warmup' is refused with a ValueError."""
    if not _refuses(lambda: lr_recipe(recipe, 256, 10), ValueError):
        raise Broken(f'lr_recipe({recipe!r}, 256, 10) must be refused with a ValueError', got='another outcome',
                     why='keep the first line: if recipe not in RECIPES: raise ValueError(...)')


def _epoch_formula(k, n, batch, overhead, per_example, nbytes, alpha, bandwidth, ceil=True, share=True, ring=True):
    kf = np.asarray(k, dtype=float)
    steps = np.ceil(n / np.asarray(batch, dtype=float)) if ceil else n / np.asarray(batch, dtype=float)
    talk = (2 * (kf - 1) * (alpha + nbytes / kf / bandwidth) if ring else
            2 * (kf - 1) * (alpha + nbytes / bandwidth))
    return steps * (overhead + np.asarray(batch) / (kf if share else 1) * per_example + talk)


EPOCH_CASES = [dict(k=k, n=n, batch=b, overhead=o, per_example=p, nbytes=nb, alpha=a, bandwidth=bw)
               for k, n, b, o, p, nb, a, bw in (
                   (1, 60000, 256, 2e-3, 1e-4, 44e6, 1e-5, 15e9), (2, 60000, 128, 0.0, 1e-4, 44e6, 1e-5, 15e9),
                   (3, 1000, 96, 1e-3, 5e-5, 1e6, 2e-5, 1e9), (8, 60000, 512, 2e-3, 1e-4, 4.4e7, 1e-5, 1.5e10),
                   (64, 50000, 4096, 1e-2, 1e-7, 1e9, 1e-3, 1e10), ([1, 2, 4, 8], 60000, [256, 512, 1024, 2048], 0.0,
                                                                   1e-4, 44e6, 1e-5, 15e9))]


def law_epoch_time(epoch_time, k, n, batch, overhead, per_example, nbytes, alpha, bandwidth):
    """Notebook 09: ceil(n / batch) steps, each a fixed overhead, the compute of one device's share
    (batch / k examples) and a ring allreduce of the gradients, 2 (k-1) (alpha + nbytes / k / bandwidth);
    for a number of devices or an array of them; no communication at k = 1."""
    args = (np.asarray(k) if isinstance(k, list) else k, n, np.asarray(batch) if isinstance(batch, list) else batch,
            overhead, per_example, nbytes, alpha, bandwidth)
    want = _epoch_formula(*args)
    got = np.asarray(epoch_time(*args), dtype=float)
    if got.shape == want.shape and np.allclose(got, want, rtol=1e-9, atol=0):
        return
    why = None
    for kind, alt in (('ceil', dict(ceil=False)), ('share', dict(share=False)), ('ring', dict(ring=False))):
        if got.shape == want.shape and np.allclose(got, _epoch_formula(*args, **alt), rtol=1e-9, atol=0):
            why = {'ceil': f'n / batch = {np.asarray(n / np.asarray(batch, dtype=float)).tolist()} is not whole: the '
                           'last, smaller batch is a step too (np.ceil)',
                   'share': 'the devices compute in parallel: each takes batch / k examples, not the whole batch',
                   'ring': 'the gradients go round a ring: each of the 2 (k-1) messages carries nbytes / k '
                           '(costmodel.cost_ring)'}[kind]
    raise Broken(f'epoch_time(k={np.asarray(k).tolist()}, n={n}, batch={np.asarray(batch).tolist()}, '
                 f'overhead={overhead:g}, '
                 f'per_example={per_example:g}, nbytes={nbytes:g}, alpha={alpha:g}, bandwidth={bandwidth:g})',
                 expected=str(np.round(want, 6).tolist()), got=str(np.round(got, 6).tolist()), why=why)


PUSHPULL_CASES = [dict(nbytes=n, rate=r, alpha=a, compression=c)
                  for n, r, a in ((4, 1e9, 1e-4), (246_824, 100e6, 2e-4), (10 * 2 ** 20, 100e6, 1e-3),
                                  (44_000_000, 1e9, 5e-5), (1e9, 25e9, 1e-5))
                  for c in (False, True)]


def _pushpull_formula(nbytes, rate, alpha, compression, pull=False, payload=True, bits=True, two=True):
    from helpers.scaling import FRAME_PAYLOAD
    push = nbytes / 16 if compression else nbytes
    back = nbytes / 16 if compression and pull else nbytes
    goodput = rate / (8 if bits else 1) * (FRAME_PAYLOAD if payload else 1)
    return (2 if two else 1) * alpha + (push + back) / goodput


def law_pushpull_step(pushpull_step, nbytes, rate, alpha, compression):
    """Notebook 09: two messages of latency alpha, the push (1/16 of the bytes with 2-bit compression)
    and the pull (always full float32), at the link's goodput: rate / 8 bytes per second times the
    payload of a frame, FRAME_PAYLOAD."""
    want = _pushpull_formula(nbytes, rate, alpha, compression)
    got = pushpull_step(nbytes, rate, alpha, compression)
    if np.isclose(got, want, rtol=1e-9, atol=0):
        return
    why = None
    for alt, words in ((dict(pull=True), '2-bit compression shrinks the push only: the server answers the pull '
                                         'with full float32 values'),
                       (dict(payload=False), 'a capped link carries FRAME_PAYLOAD (1448 of every 1514) bytes of data '
                                             'per byte on the wire: goodput = rate / 8 * FRAME_PAYLOAD'),
                       (dict(bits=False), 'rate is in bits per second: divide by 8 for bytes'),
                       (dict(two=False), 'two messages, the push and the pull, each pay the latency alpha')):
        if np.isclose(got, _pushpull_formula(nbytes, rate, alpha, compression, **alt), rtol=1e-9, atol=0):
            why = words
    raise Broken(f'pushpull_step({nbytes:g}, rate={rate:g}, alpha={alpha:g}, compression={compression})',
                 expected=f'{want:.6g} s', got=f'{got!r}', why=why)


@lesson('helpers.scaling.WarmUp', hint='during warm-up self.get_warmup_lr(num_update), then self.base_lr',
        methods=['__call__'])
def check_WarmUp():
    """Check your class ``WarmUp`` (notebook 09) against MXNet's own warm-up, update by update."""
    return [Law("an LRScheduler whose rate is MXNet's FactorScheduler's with the same warm-up: the linear ramp, then "
                "base_lr for good", law_warmup_like_mxnet, WARMUP_CASES,
                lambda base_lr, warmup_steps, begin: f'base_lr {base_lr}, warmup_steps {warmup_steps}, '
                                                     f'warmup_begin_lr {begin}')]


@lesson('helpers.scaling.lr_recipe', hint='fixed: base_lr; linear: base_lr * batch_size / base_batch; warmup: + WarmUp')
def check_lr_recipe():
    """Check your ``lr_recipe(recipe, batch_size, warmup_steps, base_lr, base_batch)`` (notebook 09)."""
    return [
        Law('fixed keeps base_lr, linear scales it by batch_size / base_batch, warmup adds a ramp from base_lr '
            'where there is one to take', law_lr_recipe, RECIPE_CASES,
            lambda recipe, batch_size, warmup_steps, base_lr, base_batch:
            f'{recipe!r}, batch {batch_size}, warmup_steps {warmup_steps}, base_lr {base_lr}, base_batch {base_batch}'),
        Law('an unknown recipe refused', law_lr_recipe_refuses_an_unknown_recipe,
            [dict(recipe=r) for r in ('sqrt', 'Linear')], lambda recipe: f'recipe {recipe!r}'),
    ]


@lesson('helpers.scaling.epoch_time', hint='ceil(n / batch) steps of overhead + batch / k * per_example + cost_ring')
def check_epoch_time():
    """Check your ``epoch_time(k, n, batch, ...)`` (notebook 09) against the formula."""
    return [Law('ceil(n / batch) (overhead + batch / k * per_example + 2 (k-1) (alpha + nbytes / k / bandwidth)), '
                'for a number or an array of k', law_epoch_time, EPOCH_CASES,
                lambda k, n, batch, overhead, per_example, nbytes, alpha, bandwidth:
                f'k = {k}, n = {n}, batch {batch}, overhead {overhead:g} s, {per_example:g} s per example, '
                f'{nbytes:g} bytes, alpha {alpha:g} s, bandwidth {bandwidth:g} B/s')]


@lesson('helpers.scaling.pushpull_step',
        hint='2 alpha + (push + nbytes) / (rate / 8 * FRAME_PAYLOAD); 2-bit: push / 16')
def check_pushpull_step():
    """Check your ``pushpull_step(nbytes, rate, alpha, compression)`` (notebook 09) against the formula."""
    return [Law('2 alpha + (push + nbytes) / (rate / 8 * FRAME_PAYLOAD), the push nbytes / 16 with 2-bit '
                'compression, the pull always nbytes', law_pushpull_step, PUSHPULL_CASES,
                lambda nbytes, rate, alpha, compression: f'{nbytes:g} bytes, {rate:g} bit/s, alpha {alpha:g} s, '
                                                         f'{"2-bit compression" if compression else "no compression"}')]
