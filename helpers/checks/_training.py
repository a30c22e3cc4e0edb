"""The guards of the training helpers (``helpers.LAYERS``; notebooks 05-13): the training step and
loop, a worker of a distributed job, large batches and the speed-up model, flat and sharded
replicas, loss scaling, accumulation and checkpoints.
"""
import collections.abc

from helpers.checks._kinds import (
    MAX_DEVICES, _is_mapping, _short, _unordered, choice, context, counts, devices, flag, function, index, mapping,
    ndarray, number, ordered, parameters, path, positive, text, whole, whole_or_array)
from helpers.checks._infrastructure import labels

__all__ = ['replicas', 'update', 'gluon_step', 'batches', 'evaluation', 'loop', 'same_arrays', 'kvstore', 'epoch_steps',
           'worker_shard', 'worker', 'option', 'results', 'byte_counters', 'epoch_model', 'pushpull', 'measured_step',
           'warmup', 'large_batch', 'grid_runs', 'flat_replicas', 'views', 'updaters', 'memory_cases', 'loss_scale',
           'scaled_step', 'accumulation', 'checkpoint', 'checkpoint_files']


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
