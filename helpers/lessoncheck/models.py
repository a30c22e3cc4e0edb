"""The laws and checks of :mod:`helpers.models` (notebook 05): LeNet's parameters, its forward pass by
hand against Gluon's, and its replicas on a device. ``tests/test_models.py`` calls the same laws.
"""
import numpy as np
import mxnet as mx
from mxnet import nd

from helpers.lessoncheck.machinery import Broken, CPU, Law, _fmt, _n, lesson, tiny_data

__all__ = ['check_init_lenet_params', 'check_lenet_scratch', 'check_replicate_params', 'law_init_lenet_params',
           'law_lenet_like_gluon', 'law_replicate_params']


def law_init_lenet_params(init_lenet_params, seed):
    """Notebook 05: LeNet's 10 parameters with LENET_SHAPES' shapes, float32 on the CPU, biases zero,
    weights drawn uniformly from ±sqrt(6 / (fan_in + fan_out)) (Xavier): within the bound, with the
    spread of that uniform distribution, bound / sqrt(3), to 20 %, and a mean near 0; the same seed
    gives the same bits, another seed other weights."""
    from helpers.models import LENET_SHAPES
    a, b, c = init_lenet_params(seed), init_lenet_params(np.int64(seed)), init_lenet_params(seed + 1)
    if [tuple(p.shape) for p in a] != [shape for _, shape in LENET_SHAPES]:
        raise Broken('the parameters\' shapes', expected=str([s for _, s in LENET_SHAPES]),
                     got=str([tuple(p.shape) for p in a]))
    for (name, _), p, q, r in zip(LENET_SHAPES, a, b, c):
        if np.dtype(p.dtype) != np.float32 or p.context != mx.cpu():
            raise Broken(f'{name} must be float32 on cpu(0)', got=f'{np.dtype(p.dtype)} on {p.context}')
        if not np.array_equal(p.asnumpy(), q.asnumpy()):
            raise Broken(f'{name}: the same seed must give the same values',
                         why='draw from np.random.default_rng(seed)')
        if name.endswith('bias'):
            if p.asnumpy().any():
                raise Broken(f'{name} must start at zero', got=_fmt(p.asnumpy()))
        else:
            fan_in, fan_out = int(np.prod(p.shape[1:])), p.shape[0] * int(np.prod(p.shape[2:]))
            bound = np.sqrt(6 / (fan_in + fan_out))
            w = p.asnumpy().astype(np.float64)
            if np.abs(w).max() > bound:
                raise Broken(f'{name} must lie within ±{bound:.4f} (Xavier)',
                             got=f'largest |w| {np.abs(w).max():.4f}',
                             why=_init_why(w, bound, fan_in, fan_out))
            # uniform on ±bound: spread bound / sqrt(3); for n of them the sample's spread is within 20 % of it
            # with certainty (its relative standard error is about 0.45 / sqrt(n), n >= 150 here)
            spread = float(w.std())
            if not abs(spread / (bound / np.sqrt(3)) - 1) < 0.2 or abs(float(w.mean())) > 0.2 * bound:
                raise Broken(f'{name} ({w.size} weights) must be drawn uniformly from ±{bound:.4f} (Xavier)',
                             expected=f'a spread (standard deviation) of bound / sqrt(3) = {bound / np.sqrt(3):.4f}, '
                                      f'mean 0',
                             got=f'a spread of {spread:.4f}, mean {float(w.mean()):.4f}, largest |w| '
                                 f'{np.abs(w).max():.4f}', why=_init_why(w, bound, fan_in, fan_out))
            if np.array_equal(p.asnumpy(), r.asnumpy()):
                raise Broken(f'{name}: seeds {seed} and {seed + 1} gave the same values')


def _init_why(w, bound, fan_in, fan_out):
    """What a wrong initialiser drew, in words (or None)."""
    spread, top = float(w.std()), float(np.abs(w).max())
    for words, want in ((f'sqrt(2 / (fan_in + fan_out)) = {np.sqrt(2 / (fan_in + fan_out)):.4f} as the bound',
                         np.sqrt(2 / (fan_in + fan_out)) / np.sqrt(3)),
                        ('a normal distribution of spread 0.01', 0.01), ('a normal distribution of spread 1', 1.0)):
        if abs(spread / want - 1) < 0.2:
            return (f'these weights look drawn with {words}: Xavier-uniform draws from the uniform distribution '
                    f'on ±sqrt(6 / (fan_in + fan_out)) = ±{bound:.4f}, here fan_in {fan_in}, fan_out {fan_out}')
    if top > bound and abs(spread / (bound / np.sqrt(3)) - 1) < 0.2:
        return ('the spread is Xavier\'s, but some weights lie beyond the bound: draw uniformly '
                '(rng.uniform(-bound, bound, shape)), not from a normal distribution')
    return (f'rng.uniform(-bound, bound, shape) with bound = sqrt(6 / (fan_in + fan_out)) = {bound:.4f} '
            f'(fan_in {fan_in}, fan_out {fan_out})')


def law_lenet_like_gluon(lenet_scratch, seed, n):
    """Notebook 05: the scratch LeNet's logits equal the Gluon LeNet's (helpers.models.lenet) with the
    same weights, shape (n, 10), computed on the device of the input."""
    from helpers.models import init_lenet_params, lenet, replicate_params
    params = init_lenet_params(seed)
    net = lenet([mx.cpu(0)])
    for gp, p in zip(net.collect_params().values(), params):
        gp.set_data(p)
    X = nd.array(tiny_data(n, seed)[0])
    out, want = lenet_scratch(X, params), net(X)
    if out.shape != (n, 10) or not np.allclose(out.asnumpy(), want.asnumpy(), rtol=1e-5, atol=1e-6):
        raise Broken(f'logits of {n} images', expected=_fmt(want.asnumpy()[0]) + ' (image 0)',
                     got=(_fmt(out.asnumpy()[0]) + ' (image 0)') if out.shape == (n, 10) else f'shape {out.shape}',
                     why='conv 5x5 pad 2 (6) - relu - max pool 2 - conv 5x5 (16) - relu - max pool 2 - '
                         'dense 120 - relu - dense 84 - relu - dense 10')
    on = lenet_scratch(nd.array(X.asnumpy(), ctx=CPU[1]), replicate_params(params, CPU[1])).context
    if on != CPU[1]:
        raise Broken('the forward pass must run on the device of its input', expected='cpu(1)', got=str(on))


def law_replicate_params(replicate_params, device):
    """Notebook 05: a copy of every parameter on the device, with a gradient buffer there; changing
    the copy leaves the original alone."""
    from helpers.models import init_lenet_params
    params = init_lenet_params(0)
    reps = replicate_params(params, CPU[device])
    if len(reps) != len(params):
        raise Broken('one copy per parameter', expected=str(len(params)), got=str(len(reps)))
    for i, (p, q) in enumerate(zip(params, reps)):
        if q.context != CPU[device] or q.grad is None or q.grad.context != CPU[device]:
            raise Broken(f'parameter {i} must be on {CPU[device]} with a gradient buffer there',
                         got=f'on {q.context}, gradient {None if q.grad is None else q.grad.context}',
                         why='copyto(device), then attach_grad()')
        if not np.array_equal(p.asnumpy(), q.asnumpy()):
            raise Broken(f'parameter {i}: the copy differs from the original')
    reps[0][:] = 0
    if not params[0].asnumpy().any():
        raise Broken('changing the copy changed the original: it must be a copy, not the same array')


@lesson('helpers.models.init_lenet_params',
        hint='LENET_SHAPES; Xavier-uniform weights from default_rng(seed), zero biases')
def check_init_lenet_params():
    """Check your ``init_lenet_params(seed)`` (notebook 05): shapes, float32, zero biases, Xavier bounds,
    determinism."""
    return [Law('LENET_SHAPES, float32 on the CPU, zero biases, weights uniform on the Xavier bounds, same seed same '
                'bits',
                law_init_lenet_params, [dict(seed=s) for s in (0, 1, 7)], lambda seed: f'seed {seed}')]


@lesson('helpers.models.lenet_scratch', hint='conv-relu-pool twice, then three dense layers, with nd operators')
def check_lenet_scratch():
    """Check your ``lenet_scratch(X, params)`` (notebook 05) against Gluon's LeNet with the same weights."""
    return [Law("the logits of Gluon's LeNet with the same weights, on the input's device", law_lenet_like_gluon,
                [dict(seed=s, n=n) for s, n in ((0, 1), (3, 4))],
                lambda seed, n: f'{_n(n, "image")}, weights of seed {seed}')]


@lesson('helpers.models.replicate_params', hint='copyto(device), then attach_grad() on each copy')
def check_replicate_params():
    """Check your ``replicate_params(params, device)`` (notebook 05): independent copies with gradients."""
    return [Law('a copy of every parameter on the device, with a gradient buffer there; the original untouched',
                law_replicate_params, [dict(device=d) for d in (0, 1, 3)], lambda device: f'device cpu({device})')]
