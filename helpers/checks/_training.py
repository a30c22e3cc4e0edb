"""The guards of the training helpers (``helpers.LAYERS``; notebooks 05-13): the training step and
loop, a worker of a distributed job, large batches and the speed-up model, flat and sharded
replicas, ZeRO-2 and ZeRO-3, loss scaling, accumulation and checkpoints.
"""
import collections.abc

from helpers.checks._kinds import (
    MAX_DEVICES, _is_array, _is_mapping, _short, _unordered, choice, context, counts, devices, flag, function, index,
    mapping, ndarray, number, ordered, parameters, path, positive, text, whole, whole_or_array)
from helpers.checks._infrastructure import labels

__all__ = ['replicas', 'update', 'gluon_step', 'batches', 'evaluation', 'loop', 'same_arrays', 'kvstore', 'epoch_steps',
           'worker_shard', 'worker', 'option', 'results', 'byte_counters', 'epoch_model', 'pushpull', 'measured_step',
           'warmup', 'large_batch', 'grid_runs', 'flat_replicas', 'views', 'updaters', 'memory_cases', 'loss_scale',
           'scaled_step', 'accumulation', 'checkpoint', 'checkpoint_files', 'layer_sizes', 'units', 'unit_arrays',
           'chunk_of', 'shard', 'unit_shards', 'gather', 'mlp', 'unit_weights', 'dense', 'dense_grads', 'fetcher', 'zero_layer',
           'zero_parts', 'zero_model', 'zero_step', 'stage_cases']


# ----------------------------------------------------------------- helpers.train (notebooks 05, 06)
def replicas(device_params, devs):
    """One list of parameters per device, replica ``i`` living on ``devs[i]`` (notebook 05)."""
    import mxnet as mx
    devs = devices(devs)
    device_params = ordered(device_params, 'device_params (one list of parameters per device)')
    for i, replica in enumerate(device_params):
        if (isinstance(replica, mx.nd.NDArray) or _unordered(replica)
                or not isinstance(replica, collections.abc.Iterable)):
            raise TypeError(f'device_params[{i}] must be the list of parameters of replica {i}, got {_short(replica)}')
    if len(device_params) != len(devs):
        raise ValueError(f'got parameters for {len(device_params)} device(s) but {len(devs)} '
                         'device(s): need one replica per device')
    for i, (replica, d) in enumerate(zip(device_params, devs)):
        for j, p in enumerate(replica):
            if not isinstance(p, mx.nd.NDArray):
                raise TypeError(f'parameter {j} of replica {i} is a {type(p).__name__}, not an NDArray')
            if p.context != d:
                raise ValueError(f'parameter {j} of replica {i} lives on {p.context}, but replica '
                                 f"{i}'s data goes to {d}: replicate the parameters to each device first")


def update(params, lr, batch_size):
    """The arguments of minibatch SGD (notebook 05): NDArrays with gradients, a learning rate > 0
    and a batch size > 0 (0 would divide by zero: every weight inf or nan). A number, not only a
    whole one: notebook 13 divides by its loss scale there."""
    parameters(params, grads=True)
    positive(lr, 'lr')
    positive(batch_size, 'batch_size')


def gluon_step(net, trainer):
    """The model and trainer of a Gluon training step (notebook 06)."""
    from mxnet import gluon
    if not isinstance(net, gluon.Block):
        raise TypeError(f'net must be a Gluon network (a gluon.Block), got {type(net).__name__}')
    if not isinstance(trainer, gluon.Trainer):
        raise TypeError(f'trainer must be a gluon.Trainer, got {type(trainer).__name__}')


class _Batches:
    """Iterates ``source`` afresh each time, like the loader it wraps; ``ValueError`` at the end of
    a pass that gave no batch (an accuracy or a loss would divide by zero)."""

    def __init__(self, source, name):
        if _unordered(source) or not isinstance(source, collections.abc.Iterable):
            raise TypeError(f'{name} must give batches (X, y) when iterated, e.g. an ArrayLoader, got '
                            f'{_short(source)} ({type(source).__name__})')
        if isinstance(source, collections.abc.Sized) and len(source) == 0:
            raise ValueError(f'{name} has no batch: there is nothing to train on or to evaluate')
        self.source, self.name = source, name

    def __iter__(self):
        n = 0
        for batch in self.source:
            if not isinstance(batch, (tuple, list)) or len(batch) != 2:
                raise TypeError(f'{self.name} must give batches (X, y), got {_short(batch)}')
            n += 1
            yield batch
        if n == 0:
            raise ValueError(f'{self.name} gave no batch: there is nothing to train on or to evaluate')

    def __len__(self):
        return len(self.source)


def batches(source, name):
    """``source`` (an ArrayLoader, a list of ``(X, y)``) as batches that say so when they are
    wrong: ``TypeError`` for something that gives no ``(X, y)`` pairs, ``ValueError`` for a pass
    with no batch (notebooks 05, 06)."""
    return _Batches(source, name)


def evaluation(net, data_iter, devs):
    """The arguments of ``evaluate_accuracy`` (notebook 05); returns ``data_iter`` as
    :func:`batches`."""
    function(net, 'net')
    devices(devs)
    return batches(data_iter, 'data_iter')


def loop(train_iter, test_iter, progress, **functions):
    """The arguments of a training loop (notebooks 05, 06): the two iterators as :func:`batches`,
    ``progress`` True or False, and every function of ``functions`` None (the default) or callable."""
    flag(progress, 'progress')
    for name, fn in functions.items():
        if fn is not None:
            function(fn, name)
    return batches(train_iter, 'train_iter'), batches(test_iter, 'test_iter')


def same_arrays(a, b):
    """Two lists of NDArrays, pairwise of one shape (notebooks 05, 06: ``max_gap``). Lists of
    different lengths would compare only their common part; an empty list would have no gap."""
    a, b = parameters(a, 'a'), parameters(b, 'b')
    if len(a) != len(b) or not a:
        raise ValueError(f'a and b must hold the same number of arrays (at least one), got {len(a)} and {len(b)}')
    for i, (p, q) in enumerate(zip(a, b)):
        if p.shape != q.shape:
            raise ValueError(f'a[{i}] and b[{i}] have different shapes: {p.shape} and {q.shape}')


# ----------------------------------------------------------------- helpers.dist_train (notebook 08)
def kvstore(kv, name='kv'):
    """``kv`` if it is an MXNet KVStore (notebooks 07, 08), or a stand-in with callable ``push`` and
    ``pull`` (the lessons use only those; ``helpers.lessoncheck`` checks them on a recording store)."""
    import mxnet as mx
    if not (isinstance(kv, mx.kv.KVStoreBase)
            or (callable(getattr(kv, 'push', None)) and callable(getattr(kv, 'pull', None)))):
        raise TypeError(f'{name} must be a KVStore (mx.kv.create(...)), got {_short(kv)} ({type(kv).__name__})')
    return kv


def epoch_steps(n_train, num_workers, batch_size):
    """The arguments of ``steps_per_epoch`` (notebook 08)."""
    return (whole(n_train, 'n_train', 0), whole(num_workers, 'num_workers', 1, MAX_DEVICES),
            whole(batch_size, 'batch_size', 1))


def worker_shard(X, y, rank, num_workers):
    """The arguments of ``my_shard`` (notebook 08): examples and labels of one length, and a rank
    ``0 <= rank < num_workers`` (a negative rank would take another worker's shard)."""
    labels(X, y)
    index(rank, num_workers, 'rank', 'num_workers')


def worker(kv, steps, lr, epochs, on_step):
    """The arguments of ``train_worker`` (notebook 08) that nothing below it checks."""
    kvstore(kv)
    whole(steps, 'steps', 1)
    positive(lr, 'lr')
    whole(epochs, 'epochs', 1)
    if on_step is not None:
        function(on_step, 'on_step')


def option(value, name, action):
    """``value`` if the ``argparse`` action ``action`` of a script would take it (notebook 08: the
    options of ``helpers.dist_train.command``): one of its choices, of its type."""
    if action.choices is not None:
        return choice(value, name, tuple(action.choices))
    if action.type is int:
        return whole(value, name, minimum=-2 ** 63)
    if action.type is float:
        return number(value, name)
    return text(value, name)


def results(runs, name='runs'):
    """``{title: [result, ...]}`` of workers' result dicts with ``rank`` and ``stamps`` (notebook 08)."""
    mapping(runs, name)
    if not runs:
        raise ValueError(f'{name} is empty: give at least one run')
    for title, found in runs.items():
        for r in ordered(found, f'{name}[{title!r}]'):
            if not _is_mapping(r) or 'rank' not in r or 'stamps' not in r:
                raise ValueError(f'{name}[{title!r}] must hold result dicts with a rank and stamps, got {_short(r)}')
    return runs


def byte_counters(result):
    """The ``net_bytes`` of a worker's result dict (notebook 08): at least 3 readings ``[received,
    sent]`` (two steps to measure one)."""
    mapping(result, 'result')
    if 'net_bytes' not in result:
        raise ValueError('result has no net_bytes: it is not a result dict of helpers.dist_train')
    net = ordered(result['net_bytes'], "result['net_bytes']")
    for i, reading in enumerate(net):
        if len(counts(reading, f"result['net_bytes'][{i}]")) != 2:
            raise ValueError(f"result['net_bytes'][{i}] must be [received, sent], got {reading!r}")
    if len(net) < 3:
        raise ValueError(f'need at least 2 steps to measure a step, got {len(net) - 1}')
    return net


# -------------------------------------------------------------------- helpers.scaling (notebook 09)
def epoch_model(n, batch, overhead, per_example):
    """The arguments of the time-per-epoch model (notebook 09) that the cost model does not check:
    ``n`` and ``batch`` whole numbers (or arrays of them, like ``k``)."""
    whole_or_array(n, 'n', 0)
    whole_or_array(batch, 'batch', 1)
    number(overhead, 'overhead', 0)
    number(per_example, 'per_example', 0)


def pushpull(nbytes, rate, alpha, compression):
    """The arguments of the push + pull model (notebook 09)."""
    number(nbytes, 'nbytes', 0)
    positive(rate, 'rate (bits per second)')
    number(alpha, 'alpha', 0)
    flag(compression, 'compression')


def measured_step(step, alpha):
    """A measured push + pull step (``nbytes``, ``median``) slower than its two latencies ``alpha``
    (notebook 09): else no bandwidth can explain it."""
    mapping(step, 'step')
    if 'nbytes' not in step or 'median' not in step:
        raise ValueError(f"step must hold 'nbytes' and 'median', got keys {sorted(step)}")
    number(step['nbytes'], "step['nbytes']", 0)
    median, alpha = positive(step['median'], "step['median']"), number(alpha, 'alpha', 0)
    if median <= 2 * alpha:
        raise ValueError(f"step['median'] ({median:g} s) is no longer than its two latencies (2 alpha = "
                         f'{2 * alpha:g} s): no bandwidth explains it')


def warmup(base_lr, warmup_steps, warmup_begin_lr, warmup_mode):
    """The arguments of a warm-up schedule (notebook 09), as MXNet's ``LRScheduler`` takes them:
    ``base_lr`` > 0, ``warmup_steps`` >= 0 (an int: MXNet asserts it), ``0 <= warmup_begin_lr <=
    base_lr``, ``warmup_mode`` 'linear' or 'constant'."""
    base_lr = positive(base_lr, 'base_lr')
    begin = number(warmup_begin_lr, 'warmup_begin_lr', 0, base_lr)
    return (base_lr, whole(warmup_steps, 'warmup_steps', 0), begin,
            choice(warmup_mode, 'warmup_mode', ('linear', 'constant')))


def large_batch(recipe, recipes, batch_size, warmup_steps, base_lr, base_batch):
    """The arguments of a large-batch recipe (notebook 09)."""
    choice(recipe, 'recipe', recipes)
    whole(batch_size, 'batch_size', 1)
    whole(warmup_steps, 'warmup_steps', 0)
    positive(base_lr, 'base_lr')
    whole(base_batch, 'base_batch', 1)


def grid_runs(grid):
    """A stored large-batch grid (notebook 09): a dict whose ``'runs'`` is a non-empty list of runs,
    each a dict with ``batch``, ``recipe`` and ``lr``."""
    mapping(grid, 'grid')
    if 'runs' not in grid:
        raise ValueError("grid must be the stored large-batch results (a dict with 'runs'): "
                         "helpers.scaling.stored_results('scaling_large_batch')")
    runs = ordered(grid['runs'], "grid['runs']")
    if not runs:
        raise ValueError("grid['runs'] is empty: there is no run to group")
    for i, r in enumerate(runs):
        if not _is_mapping(r) or not {'batch', 'recipe', 'lr'} <= set(r):
            raise ValueError(f"grid['runs'][{i}] must be a run with 'batch', 'recipe' and 'lr', got {_short(r)}")
        number(r['lr'], f"grid['runs'][{i}]['lr']", 0)
    return runs


# ------------------------------------------------------------------- helpers.sharding (notebook 11)
def flat_replicas(reps, devs, updaters):
    """The input of notebook 11's steps: one flat replica per device, living there, all of one size
    and dtype, and one optimizer updater per device. Returns ``k``. A refused call changes nothing."""
    import numpy as np
    import mxnet as mx
    devs = devices(devs)
    if isinstance(reps, mx.nd.NDArray) or not isinstance(reps, (list, tuple)):
        raise TypeError(f'replicas must be a list of flat replicas, one per device, got {type(reps).__name__}')
    if not isinstance(updaters, (list, tuple)):
        raise TypeError(f'updaters must be a list, one optimizer updater per device, got {type(updaters).__name__}')
    if not len(reps) == len(devs) == len(updaters):
        raise ValueError(f'got {len(reps)} replica(s), {len(devs)} device(s) and {len(updaters)} updater(s): '
                         'need one of each per device')
    for i, (r, d, u) in enumerate(zip(reps, devs, updaters)):
        if not (isinstance(r, tuple) and len(r) == 3 and all(isinstance(a, mx.nd.NDArray) for a in r[:2])):
            raise TypeError(f'replica {i} must be (weights, grads, params) with flat NDArrays, as '
                            'helpers.sharding.make_replicas builds it')
        if not callable(u):
            raise TypeError(f'updater {i} must be callable, e.g. mx.optimizer.get_updater(opt), got {u!r}')
        weights, grads = r[0], r[1]
        if weights.ndim != 1 or grads.shape != weights.shape or weights.context != d or grads.context != d:
            raise ValueError(f'replica {i}: weights {weights.shape} on {weights.context} and grads {grads.shape} '
                             f'on {grads.context} must be flat arrays of one shape on {d}')
        if weights.shape != reps[0][0].shape or weights.dtype != reps[0][0].dtype:
            raise ValueError(f'replica {i} has {weights.size} {np.dtype(weights.dtype)} weights, replica 0 '
                             f'has {reps[0][0].size} {np.dtype(reps[0][0].dtype)}: every replica must be a copy '
                             'of one model')
    if reps[0][0].size < len(devs):
        raise ValueError(f'the ring cuts the weights into one chunk per device: {reps[0][0].size} weights '
                         f'for {len(devs)} devices')
    return len(devs)


def views(flat, params, name='params'):
    """A flat 1-d NDArray and the NDArrays ``params`` whose sizes add up to its size (notebook 11:
    each parameter a view of the next elements of ``flat``)."""
    ndarray(flat, 'flat')
    params = parameters(params, name)
    if flat.ndim != 1:
        raise ValueError(f'flat must be a flat (1-d) array, got shape {flat.shape}')
    if not params or sum(p.size for p in params) != flat.size:
        raise ValueError(f'{name} must hold as many elements in all as flat ({flat.size}), got '
                         f'{sum(p.size for p in params)} in {len(params)} array(s)')


def updaters(values, name='updaters'):
    """``list(values)`` if it is a list of MXNet optimizer updaters (``mx.optimizer.get_updater``; notebook 11)."""
    import mxnet as mx
    values = ordered(values, name)
    for i, u in enumerate(values):
        if not isinstance(u, mx.optimizer.Updater):
            raise TypeError(f'{name}[{i}] must be an updater (mx.optimizer.get_updater(...)), got {_short(u)}')
    return values


def memory_cases(cases):
    """``[(k, sharded), ...]`` of ``measure_memory`` (notebook 11): at least one case, ``k`` a
    whole number of devices >= 1, ``sharded`` True or False."""
    found = ordered(cases, 'cases')
    if not found:
        raise ValueError('cases is empty: give at least one (k, sharded)')
    for i, case in enumerate(found):
        if isinstance(case, (str, bytes)) or not isinstance(case, collections.abc.Sequence):
            raise TypeError(f'cases[{i}] must be a pair (k, sharded), got {_short(case)}')
        if len(case) != 2:
            raise ValueError(f'cases[{i}] must be a pair (k, sharded), got {_short(case)}')
        whole(case[0], f'cases[{i}]: k', 1, MAX_DEVICES)
        flag(case[1], f'cases[{i}]: sharded')
    return found


# ------------------------ helpers.precision, helpers.accumulation, helpers.checkpoint (notebook 13)
def loss_scale(scale, updated, good_steps, growth_interval):
    """The arguments of dynamic loss scaling (notebook 13): ``scale`` a finite number > 0, ``updated``
    True or False, ``0 <= good_steps < growth_interval`` (at or past it the scale would never grow
    again: the count only meets ``growth_interval`` going up by one); returns ``(scale, good_steps)``."""
    flag(updated, 'updated')
    interval = whole(growth_interval, 'growth_interval', 1)
    return positive(scale, 'scale'), whole(good_steps, 'good_steps', 0, interval - 1)


def scaled_step(device_params, devs, lr, scale):
    """The arguments of a loss-scaled step (notebook 13): :func:`replicas`, a learning rate and a
    loss scale, each a finite number > 0 (a scale of nan would skip every step as an overflow)."""
    replicas(device_params, devs)
    positive(lr, 'lr')
    positive(scale, 'scale')


def accumulation(micro_batches, device_params, devs, lr):
    """The arguments of an accumulated step (notebook 13): a non-empty list of micro-batches
    ``(X, y)``, :func:`replicas` and a learning rate > 0. Nothing is computed before this passes."""
    replicas(device_params, devs)
    positive(lr, 'lr')
    found = ordered(micro_batches, 'micro_batches')
    if not found:
        raise ValueError('micro_batches is empty: a step needs at least one micro-batch (X, y)')
    for i, b in enumerate(found):
        if not isinstance(b, (tuple, list)) or len(b) != 2:
            raise TypeError(f'micro_batches[{i}] must be a pair (X, y), got {_short(b)}')
        ndarray(b[0], f'micro_batches[{i}] X')


def checkpoint(prefix, net, trainer, device=None, load=False):
    """The arguments of ``save_checkpoint`` (a ``device`` the network lives on) and, with ``load``,
    of ``load_checkpoint`` (a checkpoint at ``prefix`` that fits ``net`` and ``trainer``) (notebook 13).
    Nothing is written before this passes, and with ``load`` every file and array was read and checked:
    a load that fails, fails here, before any weight or state has changed (:func:`checkpoint_files`).
    ``trainer`` must hold the network's parameters in the network's order, as ``adam_trainer`` makes
    it: the saved state is keyed by position."""
    import os
    path(prefix, 'prefix')
    gluon_step(net, trainer)
    params = list(net.collect_params().values())
    if [id(p) for p in trainer._params] != [id(p) for p in params]:
        mine = {id(p) for p in params}
        raise ValueError('trainer does not train net\'s parameters' if {id(p) for p in trainer._params} != mine
                         else 'trainer holds net\'s parameters in another order (a ParameterDict is sorted by name), '
                         'and its state is saved by position: make it with helpers.checkpoint.adam_trainer(net, lr)')
    if load:
        return checkpoint_files(prefix, net, trainer)
    context(device, 'device')
    if not os.path.isdir(os.path.dirname(os.path.abspath(prefix))):
        raise FileNotFoundError(f'prefix {prefix!r}: its directory does not exist')
    for p in params:
        if device not in p.list_ctx():
            raise ValueError(f'device {device} holds no copy of {p.name}: the network lives on {p.list_ctx()}')


def _param_names(net):
    """Each parameter of ``net`` as ``'0.weight' (conv0_weight, (6, 1, 5, 5) float32)'``: its place in
    the network (the same in every copy of it) and the name Gluon gave it (a process-wide counter)."""
    import numpy as np
    places = {id(p): place for place, p in net._collect_params_with_prefix().items()}
    return [f"{places.get(id(p), '?')} ({p.name}, {tuple(p.shape)} {np.dtype(p.dtype).name})"
            for p in net.collect_params().values()]


def checkpoint_files(prefix, net, trainer):
    """Read and check both files of a checkpoint against ``net`` and ``trainer`` before anything is
    loaded (notebook 13): ``PREFIX.params`` must hold one array per parameter, in the network's order,
    each of the parameter's shape and dtype (the lesson saves them as a list: positions, no names, so
    that a network built later, whose Gluon names differ, can load them); ``PREFIX.states`` must be a
    ``Trainer``'s state (``Trainer.save_states``: the optimizer's state per parameter index, pickled,
    with the optimizer), of the trainer's optimizer, for parameter indices the trainer has, every
    array of parameter ``i``'s shape. ``ValueError`` naming the file and what did not match (a
    truncated file, another model's checkpoint, a changed layer); ``FileNotFoundError`` for a missing
    one. Returns nothing."""
    import os
    import pickle
    import numpy as np
    import mxnet as mx
    path(prefix, 'prefix')
    gluon_step(net, trainer)
    missing = [f'{prefix}{ext}' for ext in ('.params', '.states') if not os.path.isfile(f'{prefix}{ext}')]
    if missing:
        raise FileNotFoundError(f'prefix {prefix!r}: no checkpoint there ({", ".join(missing)} missing)')
    params, names = list(net.collect_params().values()), _param_names(net)
    weights = f'{prefix}.params'
    try:
        saved = mx.nd.load(weights)
    except mx.base.MXNetError as e:
        raise ValueError(f'{weights} is not a file of arrays MXNet can read (truncated?): '
                         f'{str(e).strip().splitlines()[0][:200]}') from None
    if isinstance(saved, dict):
        raise ValueError(f'{weights} holds named arrays ({", ".join(list(saved)[:3])}, ...), as save_parameters '
                         'writes them; save_checkpoint writes the weights as a list: load that file with '
                         'net.load_parameters')
    if len(saved) != len(params):
        raise ValueError(f'{weights} holds {len(saved)} arrays, but the network has {len(params)} parameters: '
                         f'a checkpoint of another model? The network\'s: {"; ".join(names[:4])}'
                         + ('; ...' if len(names) > 4 else ''))
    for i, (p, a) in enumerate(zip(params, saved)):
        if tuple(a.shape) != tuple(p.shape) or np.dtype(a.dtype) != np.dtype(p.dtype):
            raise ValueError(f'{weights}: array {i} has shape {tuple(a.shape)} {np.dtype(a.dtype).name}, '
                             f'but the network\'s parameter {i} is {names[i]}: a checkpoint of another model?')
    states = f'{prefix}.states'
    with open(states, 'rb') as f:
        raw = f.read()
    try:
        found = pickle.loads(raw)
    except Exception as e:        # truncated: EOFError, UnpicklingError, or MXNet's error for an array in it
        why = (str(e).strip().splitlines() or [''])[0][:200]
        raise ValueError(f'{states} is not a Trainer\'s saved state (truncated? {len(raw)} bytes): '
                         f'{type(e).__name__}: {why}') from None
    optimizer = None
    if isinstance(found, tuple) and len(found) == 2:
        found, optimizer = found
    if not isinstance(found, dict) or not all(isinstance(key, int) for key in found):
        raise ValueError(f'{states} is not a Trainer\'s saved state: expected the optimizer\'s state per '
                         f'parameter index (Trainer.save_states), got {_short(found)}')
    if optimizer is not None and type(optimizer) is not type(trainer._optimizer):
        raise ValueError(f'{states} holds the state of {type(optimizer).__name__}, but trainer runs '
                         f'{type(trainer._optimizer).__name__}: its state would not fit')
    multi = getattr(optimizer or trainer._optimizer, 'multi_precision', False)
    for key, state in sorted(found.items()):
        if not 0 <= key < len(params):
            raise ValueError(f'{states} holds a state for parameter index {key}, but trainer has '
                             f'{len(params)} parameters (0 to {len(params) - 1}): a checkpoint of another model?')
        leaves, todo = [], [state]
        while todo:
            x = todo.pop()
            if isinstance(x, (tuple, list)):
                todo.extend(x)
            elif isinstance(x, mx.nd.NDArray):
                leaves.append(x)
        allowed = {np.dtype(params[key].dtype)} | ({np.dtype('float32')} if multi else set())
        for a in leaves:
            if tuple(a.shape) != tuple(params[key].shape) or np.dtype(a.dtype) not in allowed:
                raise ValueError(f'{states}: the state of parameter {key} holds an array of shape '
                                 f'{tuple(a.shape)} {np.dtype(a.dtype).name}, but parameter {key} is '
                                 f'{names[key]}: a checkpoint of another model?')
# ----------------------------------------------------------------------- helpers.zero (notebook 13)
_UNIT_FIELDS = ('fan_in', 'fan_out', 'relu')


def layer_sizes(sizes):
    """``list(sizes)``: the widths of a perceptron's layers, inputs first (notebook 13): at least two
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
    """``list(values)``: the units of a perceptron (notebook 13), at least one, each a ``Unit`` whose
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
    """A flat (1-d) NDArray holding at least ``unit``'s weights and biases (notebook 13)."""
    _unit(unit, 'unit')
    ndarray(w, name)
    size = unit.fan_out * unit.fan_in + unit.fan_out
    if w.ndim != 1 or w.size < size:
        raise ValueError(f'{name} must be a flat array of at least {size} elements (the unit\'s weights and '
                         f'biases), got shape {w.shape}')


def unit_arrays(flats, values):
    """The flat arrays of a model's units, one per unit of ``values`` (notebook 13)."""
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
    """A flat NDArray, ``k`` a number of devices and ``i`` one of them (notebook 13)."""
    ndarray(a, 'a')
    if a.ndim != 1:
        raise ValueError(f'a must be a flat (1-d) array, got shape {a.shape}')
    whole(k, 'k', 1, MAX_DEVICES)
    index(i, k, 'i')


def shard(flat, devs):
    """A flat, non-empty NDArray and the devices to shard it over; returns ``k`` (notebook 13)."""
    ndarray(flat, 'flat')
    if flat.ndim != 1 or flat.size == 0:
        raise ValueError(f'flat must be a non-empty flat (1-d) array, got shape {flat.shape}')
    return len(devices(devs))


def unit_shards(values, name='shards'):
    """One flat NDArray per device, all of one size (>= 1) and dtype (notebook 13); returns ``k``."""
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
    (notebook 13)."""
    import numpy as np
    unit_weights(w, unit)
    ndarray(x, 'x')
    if x.ndim < 2 or int(np.prod(x.shape[1:])) != unit.fan_in:
        raise ValueError(f'x must hold examples of {unit.fan_in} features (the unit\'s fan_in), got shape {x.shape}')


def dense_grads(x, y, dy, w, unit):
    """:func:`dense`'s input, and its output ``y`` and that output's gradient ``dy``, one row per example
    of ``x``, ``unit.fan_out`` columns (notebook 13)."""
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
    """The shards of one unit (:func:`unit_shards`) and a send function (notebook 13); returns ``k``."""
    function(send, 'send')
    return unit_shards(values)


def mlp(X, params):
    """A batch ``X`` and a perceptron's parameters ``[W0, b0, W1, b1, ...]`` (notebook 13): weight
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
    whether to prefetch (notebook 13); returns them."""
    return _model_shards(values, 'shards'), function(send, 'send'), flag(prefetch, 'prefetch')


def zero_layer(unit, j, fetch, send):
    """A :class:`helpers.zero.ZeroLayer`'s unit, its index ``j`` and its fetch and send functions
    (notebook 13); returns them."""
    return _unit(unit, 'unit'), whole(j, 'j', 0), function(fetch, 'fetch'), function(send, 'send')


def zero_parts(flats, values, devs, stage):
    """The flat units of ``make_model``, their units, the devices and the stage, 2 or 3 (notebook 13);
    returns ``k``. Not two GPUs or more: a ``ZeroLayer`` spans the devices, and MXNet 1.9.1 hands an
    ``autograd.Function``'s backward every array as one device's, the first output's (the Chunk made
    from a TBlob, include/mxnet/ndarray.h): right for CPU stand-ins, which share one memory, not for GPUs."""
    unit_arrays(flats, values)
    devs = devices(devs)
    whole(stage, 'stage', 2, 3)
    if len(devs) > 1 and any(d.device_type == 'gpu' for d in devs):
        raise ValueError(f'devices must be CPU stand-ins (or one GPU), got {devs}: MXNet 1.9.1 gives a Function '
                         'spanning devices the arrays of its backward as the first device\'s (notebook 13)')
    return len(devs)


def zero_model(model, grads=True):
    """A :class:`helpers.zero.Model` (notebook 13): its units, one list of shards per unit (on the same
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
    """The input of a ZeRO-2 or ZeRO-3 step (notebook 13): a :func:`zero_model` with gradients, its
    shards on ``devs`` (one per device), one optimizer updater per device, and whether to prefetch;
    returns ``k``."""
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
    return len(devs)


def stage_cases(cases, stages):
    """``[(k, stage), ...]`` of ``measure_stages`` (notebook 13): at least one case, ``k`` a whole
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
