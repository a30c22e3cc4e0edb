"""The guards of :mod:`helpers.zero` (notebook 12), in the training layer (``helpers.LAYERS``) beside
``_training.py``, which would otherwise pass the length a maintainer can hold: a perceptron's units and
their flat arrays, shards, the dense layer and its gradients, a ``ZeroLayer``, a sharded model and its step.
"""
import collections.abc

from helpers.checks._kinds import (
    MAX_DEVICES, _is_array, _short, choice, devices, flag, function, index, ndarray, ordered, parameters, whole)

__all__ = ['layer_sizes', 'units', 'unit_arrays', 'chunk_of', 'shard', 'unit_shards', 'gather', 'mlp', 'unit_weights',
           'dense', 'dense_grads', 'fetcher', 'zero_layer', 'zero_parts', 'zero_model', 'zero_step', 'stage_cases']


_UNIT_FIELDS = ('fan_in', 'fan_out', 'relu')


def layer_sizes(sizes):
    """``list(sizes)``: the widths of a perceptron's layers, inputs first (notebook 12): at least two
    whole numbers >= 1."""
    found = [whole(s, f'sizes[{i}]', 1, 1 << 20) for i, s in enumerate(ordered(sizes, 'sizes'))]
    if len(found) < 2:
        raise ValueError(f'sizes must give at least two widths (inputs and outputs), got {found}')
    return found


def _unit(u, name):
    if getattr(u, '_fields', None) != _UNIT_FIELDS:
        raise TypeError(f'{name} must be a helpers.zero.Unit(fan_in, fan_out, relu), got {_short(u)}')
    whole(u.fan_in, f'{name}.fan_in', 1, 1 << 20)
    whole(u.fan_out, f'{name}.fan_out', 1, 1 << 20)
    flag(u.relu, f'{name}.relu')
    return u


def units(values, name='units'):
    """``list(values)``: the units of a perceptron (notebook 12), at least one, each a ``Unit`` whose
    inputs are the outputs of the one before."""
    found = ordered(values, name)
    if not found:
        raise ValueError(f'{name} is empty: a model needs at least one unit')
    for i, u in enumerate(found):
        _unit(u, f'{name}[{i}]')
        if i and u.fan_in != found[i - 1].fan_out:
            raise ValueError(f'{name}[{i}] takes {u.fan_in} inputs, but {name}[{i - 1}] gives {found[i - 1].fan_out}')
    return found


def unit_weights(w, unit, name='w'):
    """A flat (1-d) NDArray holding at least ``unit``'s weights and biases (notebook 12)."""
    _unit(unit, 'unit')
    ndarray(w, name)
    size = unit.fan_out * unit.fan_in + unit.fan_out
    if w.ndim != 1 or w.size < size:
        raise ValueError(f'{name} must be a flat array of at least {size} elements (the unit\'s weights and '
                         f'biases), got shape {w.shape}')


def unit_arrays(flats, values):
    """The flat arrays of a model's units, one per unit of ``values`` (notebook 12)."""
    import numpy as np
    values = units(values)
    if _is_array(flats):
        raise TypeError(f'flats must be a list of flat arrays, one per unit, got a single {type(flats).__name__}')
    found = ordered(flats, 'flats')
    if len(found) != len(values):
        raise ValueError(f'got {len(found)} flat array(s) for {len(values)} unit(s): need one per unit')
    for i, (w, u) in enumerate(zip(found, values)):
        unit_weights(w, u, f'flats[{i}]')
    if len({np.dtype(w.dtype) for w in found}) > 1:
        raise TypeError('flats must all be of one dtype')
    return found


def chunk_of(a, i, k):
    """A flat NDArray, ``k`` a number of devices and ``i`` one of them (notebook 12)."""
    ndarray(a, 'a')
    if a.ndim != 1:
        raise ValueError(f'a must be a flat (1-d) array, got shape {a.shape}')
    whole(k, 'k', 1, MAX_DEVICES)
    index(i, k, 'i')


def shard(flat, devs):
    """A flat, non-empty NDArray and the devices to shard it over; returns ``k`` (notebook 12)."""
    ndarray(flat, 'flat')
    if flat.ndim != 1 or flat.size == 0:
        raise ValueError(f'flat must be a non-empty flat (1-d) array, got shape {flat.shape}')
    return len(devices(devs))


def unit_shards(values, name='shards'):
    """One flat NDArray per device, all of one size (>= 1) and dtype (notebook 12); returns ``k``."""
    import numpy as np
    if _is_array(values):
        raise TypeError(f'{name} must be a list of flat arrays, one per device, got a single {type(values).__name__}')
    found = ordered(values, name)
    if not found:
        raise ValueError(f'{name} is empty: need one shard per device')
    for i, s in enumerate(found):
        ndarray(s, f'{name}[{i}]')
        if s.ndim != 1 or s.size == 0:
            raise ValueError(f'{name}[{i}] must be a non-empty flat (1-d) array, got shape {s.shape}')
        if s.size != found[0].size or s.dtype != found[0].dtype:
            raise ValueError(f'{name}[{i}] has {s.size} {np.dtype(s.dtype)}, {name}[0] {found[0].size} '
                             f'{np.dtype(found[0].dtype)}: shards of one unit have one size')
    if len(found) > MAX_DEVICES:
        raise ValueError(f'{name}: {len(found)} shards, more than {MAX_DEVICES} devices')
    return len(found)


def dense(x, w, unit):
    """The input ``x`` (examples first, ``unit.fan_in`` features each) and flat weights of a dense layer
    (notebook 12)."""
    import numpy as np
    unit_weights(w, unit)
    ndarray(x, 'x')
    if x.ndim < 2 or int(np.prod(x.shape[1:])) != unit.fan_in:
        raise ValueError(f'x must hold examples of {unit.fan_in} features (the unit\'s fan_in), got shape {x.shape}')


def dense_grads(x, y, dy, w, unit):
    """:func:`dense`'s input, and its output ``y`` and that output's gradient ``dy``, one row per example
    of ``x``, ``unit.fan_out`` columns (notebook 12)."""
    dense(x, w, unit)
    for name, value in (('y', y), ('dy', dy)):
        ndarray(value, name)
        if value.shape != (x.shape[0], unit.fan_out):
            raise ValueError(f'{name} must have shape {(x.shape[0], unit.fan_out)} (examples, fan_out), '
                             f'got {value.shape}')


def _model_shards(values, name):
    found = ordered(values, name)
    if not found:
        raise ValueError(f'{name} is empty: give one list of shards per unit')
    for j, ss in enumerate(found):
        if unit_shards(ss, f'{name}[{j}]') != len(found[0]) or [s.context for s in ss] != [s.context for s in found[0]]:
            raise ValueError(f'{name}[{j}] must be on the devices of {name}[0]: one shard per device per unit')
    return found


def gather(values, send):
    """The shards of one unit (:func:`unit_shards`) and a send function (notebook 12); returns ``k``."""
    function(send, 'send')
    return unit_shards(values)


def mlp(X, params):
    """A batch ``X`` and a perceptron's parameters ``[W0, b0, W1, b1, ...]`` (notebook 12): weight
    matrices and biases that fit each other and ``X``'s features."""
    import numpy as np
    ndarray(X, 'X')
    params = parameters(params)
    if not params or len(params) % 2:
        raise ValueError(f'params must be weight matrices and biases in pairs, got {len(params)} array(s)')
    width = int(np.prod(X.shape[1:])) if X.ndim >= 2 else None
    for j in range(0, len(params), 2):
        W, b = params[j], params[j + 1]
        if W.ndim != 2 or b.shape != (W.shape[0],) or W.shape[1] != width:
            raise ValueError(f'params[{j}] and params[{j + 1}] must be a weight matrix (outputs, {width}) and its '
                             f'bias for the examples of X, got {W.shape} and {b.shape}')
        width = W.shape[0]


def fetcher(values, send, prefetch):
    """Every unit's shards (one list per unit, :func:`unit_shards`, on the same devices), a send function and
    whether to prefetch (notebook 12); returns them."""
    return _model_shards(values, 'shards'), function(send, 'send'), flag(prefetch, 'prefetch')


def zero_layer(unit, j, fetch, grads, send):
    """A :class:`helpers.zero.ZeroLayer`'s unit, its index ``j``, its fetch function, the gradient
    buffers of its shards (one per device) and its send function (notebook 12); returns them."""
    unit_shards(grads, 'grads')
    return _unit(unit, 'unit'), whole(j, 'j', 0), function(fetch, 'fetch'), list(grads), function(send, 'send')


def zero_parts(flats, values, devs, stage):
    """The flat units of ``make_model``, their units, the devices and the stage, 2 or 3 (notebook 12);
    returns ``k``. Not two GPUs or more: a ``ZeroLayer`` spans the devices, and MXNet 1.9.1 hands an
    ``autograd.Function``'s backward every array as one device's, the first output's (the Chunk made
    from a TBlob, include/mxnet/ndarray.h): right for CPU stand-ins, which share one memory, not for GPUs."""
    unit_arrays(flats, values)
    devs = devices(devs)
    whole(stage, 'stage', 2, 3)
    if len(devs) > 1 and any(d.device_type == 'gpu' for d in devs):
        raise ValueError(f'devices must be CPU stand-ins (or one GPU), got {devs}: MXNet 1.9.1 gives a Function '
                         'spanning devices the arrays of its backward as the first device\'s (notebook 12)')
    return len(devs)


def zero_model(model, grads=True):
    """A :class:`helpers.zero.Model` (notebook 12): its units, one list of shards per unit (on the same
    devices), with ``grads`` a gradient buffer per shard, and ZeRO-2's whole weights or None."""
    if getattr(model, '_fields', None) != ('units', 'shards', 'grads', 'full'):
        raise TypeError(f'model must be a helpers.zero.Model (make_model), got {_short(model)}')
    values = units(model.units, 'model.units')
    _model_shards(model.shards, 'model.shards')
    if len(model.shards) != len(values):
        raise ValueError(f'model has {len(model.shards)} list(s) of shards for {len(values)} unit(s)')
    if grads:
        if model.grads is None:
            raise ValueError('model has no gradient buffers: attach_grads(model) first')
        for j, (ss, gs) in enumerate(zip(model.shards, ordered(model.grads, 'model.grads'))):
            gs = ordered(gs, f'model.grads[{j}]')
            if len(gs) != len(ss) or any(not isinstance(g, type(s)) or g.shape != s.shape for g, s in zip(gs, ss)):
                raise ValueError(f'model.grads[{j}] must hold one buffer of its shard\'s shape per shard')
    return model


def zero_step(model, devs, updaters, prefetch=False):
    """The input of a ZeRO-2 or ZeRO-3 step (notebook 12): a :func:`zero_model` with gradients, its
    shards on ``devs`` (one per device), one optimizer updater per device, and whether to prefetch;
    returns the devices."""
    zero_model(model)
    flag(prefetch, 'prefetch')
    devs = devices(devs)
    if [s.context for s in model.shards[0]] != list(devs):
        raise ValueError(f'model\'s shards live on {[s.context for s in model.shards[0]]}, not on the devices '
                         f'{devs}: one shard per device, in order')
    if not isinstance(updaters, (list, tuple)):
        raise TypeError(f'updaters must be a list of one optimizer updater per device, got {_short(updaters)}')
    if len(updaters) != len(devs):
        raise ValueError(f'got {len(updaters)} updater(s) for {len(devs)} device(s): need one updater per device')
    for i, u in enumerate(updaters):
        if not callable(u):
            raise TypeError(f'updaters[{i}] must be callable, e.g. mx.optimizer.get_updater(opt), got {_short(u)}')
    return devs


def stage_cases(cases, stages):
    """``[(k, stage), ...]`` of ``measure_stages`` (notebook 12): at least one case, ``k`` a whole
    number of devices >= 1, ``stage`` one of ``stages``."""
    found = ordered(cases, 'cases')
    if not found:
        raise ValueError('cases is empty: give at least one (k, stage)')
    for i, case in enumerate(found):
        if isinstance(case, (str, bytes)) or not isinstance(case, collections.abc.Sequence):
            raise TypeError(f'cases[{i}] must be a pair (k, stage), got {_short(case)}')
        if len(case) != 2:
            raise ValueError(f'cases[{i}] must be a pair (k, stage), got {_short(case)}')
        whole(case[0], f'cases[{i}]: k', 1, MAX_DEVICES)
        choice(case[1], f'cases[{i}]: stage', stages)
    return found
