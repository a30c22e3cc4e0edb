"""What more devices buy (notebook 09): large batches and their learning rates, a model of the time
per epoch against the number of devices, and a model of a parameter server's push + pull step.

- :func:`lr_recipe` -- the optimizer settings of three large-batch recipes: a fixed learning rate,
  the linear scaling rule, the rule with gradual warm-up (Goyal et al. 2017, sections 2.1-2.2);
  :func:`train_recipe` trains LeNet with one of them; :func:`grid_by_setting` groups the stored grid
  of ``benchmarks/scaling_large_batch.py`` by setting;
- :func:`epoch_time` -- seconds per epoch on ``k`` devices: per-step overhead, compute per example,
  and a ring allreduce of the gradients (``helpers.costmodel``; between machines this stands for
  a ring such as NCCL's or Horovod's, not MXNet's parameter server);
- :func:`pushpull_step` -- what one worker of a ``dist_sync`` parameter server sends and receives
  in a step, and the alpha-beta prediction of its time (2-bit compression shrinks the push only);
  ``helpers.pushpull.measure_pushpull`` runs the real thing across two network namespaces.

Notebook 09 reaches its figures (drawn by ``helpers.plot``) and the measured job
(``helpers.pushpull``) through this module too: the names it imports from here stay as they were.
"""
import json
import math
import os
import platform
import time

import numpy as np
import mxnet as mx

from helpers import checks, costmodel, plot
from helpers.plot import large_batch as plot_large_batch, pushpull as plot_pushpull, speedups as plot_speedups
from helpers.pushpull import PushPullResult, measure_pushpull

__all__ = ['RECIPES', 'WarmUp', 'lr_recipe', 'train_recipe', 'plot_large_batch', 'grid_by_setting',
           'plot_grid_seeds', 'epoch_time',
           'plot_speedups', 'FRAME_PAYLOAD', 'pushpull_step', 'reached_link', 'plot_pushpull',
           'measure_pushpull', 'PushPullResult', 'save_results', 'stored_results']

RECIPES = ('fixed', 'linear', 'warmup')

class WarmUp(mx.lr_scheduler.LRScheduler):
    """Learning rate ``warmup_begin_lr`` rising linearly to ``base_lr`` over ``warmup_steps``
    updates, then ``base_lr`` (notebook 09; MXNet's ramp: ``LRScheduler.get_warmup_lr``)."""

    def __init__(self, base_lr=0.01, warmup_steps=0, warmup_begin_lr=0, warmup_mode='linear'):
        super().__init__(*checks.warmup(base_lr, warmup_steps, warmup_begin_lr, warmup_mode))

    def __call__(self, num_update):
        if num_update < self.warmup_steps:
            return self.get_warmup_lr(num_update)
        return self.base_lr


def lr_recipe(recipe, batch_size, warmup_steps, base_lr=0.1, base_batch=64):
    """Optimizer settings (``gluon.Trainer``'s ``optimizer_params``) of one large-batch recipe
    (notebook 09): ``'fixed'`` keeps ``base_lr``; ``'linear'`` multiplies it by ``batch_size /
    base_batch`` (the linear scaling rule); ``'warmup'`` also ramps up linearly from ``base_lr``
    over the first ``warmup_steps`` steps (Goyal et al. 2017, sections 2.1 and 2.2)."""
    checks.large_batch(recipe, RECIPES, batch_size, warmup_steps, base_lr, base_batch)
    if recipe == 'fixed':
        return {'learning_rate': base_lr}
    lr = base_lr * batch_size / base_batch                  # the linear scaling rule
    if recipe == 'linear' or warmup_steps == 0 or lr <= base_lr:
        return {'learning_rate': lr}
    ramp = WarmUp(base_lr=lr, warmup_steps=warmup_steps, warmup_begin_lr=base_lr)
    return {'learning_rate': lr, 'lr_scheduler': ramp}


def train_recipe(recipe, batch_size, devices, epochs, n_train=None, n_test=None, warmup_epochs=1,
                 base_lr=0.1, base_batch=64, seed=0, rule=None):
    """Train LeNet (``helpers.models.lenet``, hybridized) on ``devices`` with one recipe of
    ``rule`` (default :func:`lr_recipe`; notebook 09 passes its lesson cell) for ``epochs`` epochs
    of the first ``n_train`` images (notebook 09; the benchmark ``benchmarks/scaling_large_batch.py``).
    Warm-up lasts ``warmup_epochs`` epochs.
    Returns the history of ``helpers.train.train`` plus ``recipe``, ``batch``, ``lr``, ``steps``
    (per epoch) and ``diverged``: training stops after the first epoch whose loss is not finite."""
    from helpers.data import load_data_fashion_mnist   # here, not above: the processes of a
    from helpers.models import lenet                   # parameter-server job start faster
    from helpers.train import train                    # without d2l and its plotting
    epochs = checks.whole(epochs, 'epochs', 1)
    checks.large_batch(recipe, RECIPES, batch_size, 0, base_lr, base_batch)
    checks.whole(warmup_epochs, 'warmup_epochs')
    checks.whole(seed, 'seed')
    if rule is not None:
        checks.function(rule, 'rule')
    train_iter, test_iter = load_data_fashion_mnist(batch_size, n_train, n_test, seed)
    settings = (rule or lr_recipe)(recipe, batch_size, warmup_epochs * len(train_iter), base_lr, base_batch)
    net = lenet(devices, seed)
    net.hybridize()
    trainer = mx.gluon.Trainer(net.collect_params(), 'sgd', settings)
    history = {'epoch': [], 'loss': [], 'test_acc': [], 'seconds': []}
    for epoch in range(1, epochs + 1):
        h = train(net, train_iter, test_iter, devices, trainer, 1, progress=False)
        h['epoch'] = [epoch]
        for key in history:
            history[key] += h[key]
        if not math.isfinite(h['loss'][0]):
            break
    return dict(history, recipe=recipe, batch=batch_size, lr=settings['learning_rate'],
                steps=len(train_iter), diverged=not math.isfinite(history['loss'][-1]))


def grid_by_setting(grid):
    """The runs of a stored large-batch grid (:func:`stored_results`, ``benchmarks/scaling_large_batch.py``)
    grouped by setting (notebook 09): ``{(batch, recipe, lr): [run, ...]}``, one run per seed, ``lr``
    the rate the recipe reaches (rounded to 6 digits), settings in the order of the file."""
    checks.grid_runs(grid)
    groups = {}
    for r in grid['runs']:
        groups.setdefault((r['batch'], r['recipe'], round(r['lr'], 6)), []).append(r)
    return groups


def plot_grid_seeds(grid, alt=None, base_lr=0.1, base_batch=64, figsize=(8, 4.4)):
    """The stored large-batch grid over its seeds (notebook 09): ``helpers.plot.grid_seeds`` of its runs
    grouped by setting (:func:`grid_by_setting`); ``alt``: the text alternative."""
    groups = grid_by_setting(grid)
    epochs = (grid.get('settings') or {}).get('epochs')         # None: plot refuses it, naming epochs
    return plot.grid_seeds(groups, epochs, alt=alt, base_lr=base_lr, base_batch=base_batch,
                           figsize=figsize)


def save_results(result, path, start):
    """Write a benchmark's ``result`` dict to ``path`` as JSON (what :func:`stored_results` reads for
    notebook 09), with this machine and the wall time since ``start`` (``time.perf_counter()``);
    return that wall time in seconds."""
    checks.mapping(result, 'result')
    checks.path(path, 'path')
    checks.number(start, 'start')
    result['machine'] = {'python': platform.python_version(), 'cpus': os.cpu_count(),
                         'processor': platform.processor() or platform.machine(), 'kernel': platform.release()}
    result['wall_seconds'] = time.perf_counter() - start
    with open(path, 'w') as f:
        json.dump(result, f, indent=1)
    return result['wall_seconds']


def stored_results(benchmark):
    """The results that ``benchmarks/<benchmark>.py`` wrote and the repository keeps, as a dict
    (notebooks 08 and 09 and their solutions read them; found from this file, whatever the working
    directory)."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    stored = sorted(f[:-len('.json')] for f in os.listdir(os.path.join(root, 'benchmarks')) if f.endswith('.json'))
    with open(os.path.join(root, 'benchmarks', f'{checks.choice(benchmark, "benchmark", stored)}.json')) as f:
        return json.load(f)


# --------------------------------------------------------------------------- time per epoch against k
def epoch_time(k, n, batch, overhead, per_example, nbytes, alpha, bandwidth):
    """Predicted seconds of one epoch of ``n`` examples on ``k`` devices at global batch ``batch``
    (notebook 09): every step pays a fixed ``overhead``, the compute of one device's shard
    (``batch / k`` examples at ``per_example`` seconds each; the devices run in parallel) and a
    ring allreduce of the ``nbytes`` of gradients over links of latency ``alpha`` and ``bandwidth``."""
    checks.epoch_model(n, batch, overhead, per_example)
    steps = np.ceil(n / batch)
    talk = costmodel.cost_ring(k, nbytes, alpha, bandwidth)      # 0 for k = 1
    return steps * (overhead + batch / k * per_example + talk)


# --------------------------------------------------------------------------- the parameter server
# TCP payload per byte that a rate cap counts: a 1500-byte IP packet carries 1448 bytes of data
# (20 bytes of IP header, 20 of TCP header, 12 of TCP timestamp option) in a 1514-byte Ethernet frame
# (14 bytes of header; tc counts frames without preamble and checksum).
FRAME_PAYLOAD = 1448 / 1514


def pushpull_step(nbytes, rate, alpha, compression=False):
    """Predicted seconds of one ``dist_sync`` step of a worker whose link to the server is capped
    at ``rate`` bits per second (notebook 09): push the gradient, then pull the whole array, each
    one message of latency ``alpha``. 2-bit compression sends 2 bits per 32-bit value in the push
    only: the server answers a pull with full float32 values (``DefaultStorageResponse``,
    src/kvstore/kvstore_dist_server.h)."""
    checks.pushpull(nbytes, rate, alpha, compression)
    push = nbytes / 16 if compression else nbytes
    goodput = rate / 8 * FRAME_PAYLOAD                  # bytes of data per second
    return 2 * alpha + (push + nbytes) / goodput


def reached_link(step, alpha):
    """The link a measured push + pull ``step`` implies (notebook 09): ``{'alpha': alpha,
    'bandwidth': bytes per second}``, the rate at which the step's two messages of ``step['nbytes']``
    each crossed once their latency is taken off: :func:`pushpull_step` solved for the rate."""
    checks.measured_step(step, alpha)
    return {'alpha': alpha, 'bandwidth': 2 * step['nbytes'] / (step['median'] - 2 * alpha)}
