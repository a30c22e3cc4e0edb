"""What more devices buy (notebook 09): large batches and their learning rates, a model of the time
per epoch against the number of devices, and a parameter server across two network namespaces.

- :func:`lr_recipe` -- the optimizer settings of three large-batch recipes: a fixed learning rate,
  the linear scaling rule, the rule with gradual warm-up (Goyal et al. 2017, sections 2.1-2.2);
  :func:`train_recipe` trains LeNet with one of them;
- :func:`epoch_time` -- seconds per epoch on ``k`` devices: per-step overhead, compute per example,
  and a ring allreduce of the gradients (``helpers.costmodel``; between machines this stands for
  a ring such as NCCL's or Horovod's, not MXNet's parameter server);
- :func:`pushpull_step` -- what one worker of a ``dist_sync`` parameter server sends and receives
  in a step, and the alpha-beta prediction of its time (2-bit compression shrinks the push only);
  :func:`measure_pushpull` runs the real thing: scheduler, server and worker 0 on "machine" a,
  worker 1 on "machine" b, a capped veth between them (``helpers.netns``), every process started
  and stopped by ``helpers.dist.Job``. Each process runs this module as a script
  (``python -m helpers.scaling pushpull ...``): in the scheduler and the server ``import mxnet``
  turns the process into its role; the workers time their steps and print one ``RESULT`` line.
"""
import argparse
import itertools
import json
import math
import os
import platform
import statistics
import sys
import time

import numpy as np
import mxnet as mx  # in the scheduler and server of a job this line runs the role and exits

from helpers import checks, costmodel

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


def plot_large_batch(grid, batch=512, alt=None):
    """The figure of the stored large-batch grid (:func:`stored_results`) in notebook 09: test accuracy
    per epoch of batch 64 and of ``batch`` under each recipe (left), and after the last epoch against
    the batch size (right). Legends below the axes, off the data; ``alt``: the text alternative. For a
    grid of one seed; a grid of several seeds: :func:`plot_grid_seeds`."""
    from helpers import plot         # here: the processes of a job need no matplotlib
    batches = checks.grid(grid, batch)
    epochs = range(1, grid['settings']['epochs'] + 1)
    with plot.slide_fonts():
        fig, (left, right) = plot.plt.subplots(1, 2, figsize=(8, 4.8))
        colors = dict(zip(RECIPES, ('tab:blue', 'tab:orange', 'tab:green')))
        for r in grid['runs']:
            if r['batch'] in (64, batch):
                color = 'black' if r['batch'] == 64 else colors[r['recipe']]
                left.plot(epochs, r['test_acc'], 'o--' if r['batch'] == 64 else 'o-', color=color,
                          label=f"{r['batch']} {r['recipe']} ({r['lr']:g})")
        for recipe, marker in zip(RECIPES, 'osv'):
            runs = [r for r in grid['runs'] if r['recipe'] == recipe or r['batch'] == 64]
            right.plot([r['batch'] for r in runs], [r['test_acc'][-1] for r in runs], marker + '-',
                       color=colors[recipe], ms=7, label=recipe)
        for ax in (left, right):
            ax.axhline(0.1, color='gray', ls=':', label='chance')
            ax.set_ylim(0, 1)
            ax.grid(True, alpha=0.3)
        left.set(xlabel='epoch', ylabel='test accuracy', xticks=list(epochs),
                 title=f'batch {batch} and 64, per epoch')
        right.set_xscale('log', base=2)
        right.set_xticks(batches, [str(b) for b in batches], rotation=45)
        right.set(xlabel='global batch size', title=f"after {len(epochs)} epochs")
        left.legend(title='batch, recipe (rate)', loc='upper center', bbox_to_anchor=(0.5, -0.3),
                    ncol=2, frameon=False)
        right.legend(loc='upper center', bbox_to_anchor=(0.5, -0.42), ncol=2, frameon=False)
        fig.tight_layout()
        plot.show(alt, fig)


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
    """The stored large-batch grid over its seeds (notebook 09): the final test accuracy of each setting,
    median of the seeds (markers, joined), their range (vertical bars) and each seed (dots). Left:
    against the batch, one line per recipe, zoomed on the runs that trained (an arrow names a median
    below). Right: against the learning rate, batch ``base_batch`` at a fixed rate beside the linear rule
    and its warm-up (the batch that the rule gives that rate), from 0 to 1. ``alt``: the text alternative."""
    from helpers import plot
    checks.figure(alt)
    final = {k: [r['test_acc'][-1] for r in runs] for k, runs in grid_by_setting(grid).items()}
    base_lr, base_batch = checks.positive(base_lr, 'base_lr'), checks.whole(base_batch, 'base_batch', 1)
    if (base_batch, 'fixed', base_lr) not in final:
        raise ValueError(f'the grid has no run of batch {base_batch} (base_batch) at the fixed rate {base_lr:g} '
                         f'(base_lr): the rules start there')
    styles = {'fixed': ('o-', 'tab:blue'), 'linear': ('s--', 'tab:orange'), 'warmup': ('^-.', 'tab:green')}

    def rule_runs(recipe):          # the recipe's runs and batch base_batch at base_lr, where all three start
        return [(b, lr, v) for (b, rc, lr), v in final.items() if rc == recipe or (b, lr) == (base_batch, base_lr)]

    series = [('left', f'fixed ({base_lr:g})', 'fixed',
               [(b, v) for (b, rc, lr), v in final.items() if rc == 'fixed' and lr == base_lr])]
    series += [('left', r, r, [(b, v) for b, _, v in rule_runs(r)]) for r in ('linear', 'warmup')]
    series += [('right', f'batch {base_batch}', 'fixed',
                [(lr, v) for (b, _, lr), v in final.items() if b == base_batch])]
    series += [('right', f'{r} rule: batch {base_batch} × rate / {base_lr:g}', r,
                [(lr, v) for _, lr, v in rule_runs(r)]) for r in ('linear', 'warmup')]
    trained = [a for v in final.values() for a in v if a > 0.3]
    low = min(trained) - 0.03                         # the left panel shows the runs that trained
    with plot.slide_fonts():
        fig, axes = plot.plt.subplots(1, 2, figsize=figsize)
        panel = dict(zip(('left', 'right'), axes))
        for n, (side, label, recipe, pts) in enumerate(series):
            ax, (fmt, color) = panel[side], styles[recipe]
            pts = sorted(pts)
            x = [p * 2 ** (0.06 * (n % 3 - 1)) for p, _ in pts]        # side by side, not on top
            values = [v for _, v in pts]
            ax.plot(x, [float(np.median(v)) for v in values], fmt, color=color, ms=8, label=label)
            ax.vlines(x, [min(v) for v in values], [max(v) for v in values], color=color, lw=3, alpha=0.6)
            ax.scatter([p for p, v in zip(x, values) for _ in v], [a for v in values for a in v], s=16,
                       color=color, zorder=3)                            # every seed
            for p, v in zip(x, values):
                if side == 'left' and np.median(v) < low:                 # off the panel: say where it went
                    ax.annotate(f'{label}: {np.median(v):.2f}', (p, low), xytext=(-4, 18), ha='right', color=color,
                                textcoords='offset points', arrowprops={'arrowstyle': '->', 'color': color})
        left, right = axes
        right.axhline(0.1, color='gray', ls=':', label='chance')
        for ax, xlabel, ticks in ((left, 'global batch size', sorted({b for b, _, _ in final})),
                                  (right, 'learning rate', sorted({lr for _, _, lr in final}))):
            ax.set_xscale('log', base=2)
            ax.set_xticks(ticks, [f'{t:g}' for t in ticks])
            ax.set(xlabel=xlabel)
            ax.grid(True, alpha=0.3)
            ax.legend(loc='upper center', bbox_to_anchor=(0.5, -0.22), ncol=1, frameon=False)
        left.set(ylim=(low, max(trained) + 0.02), ylabel='test accuracy',
                 title=f"after {grid['settings']['epochs']} epochs: by batch")
        right.set(ylim=(0, 1), title='by learning rate')
        fig.tight_layout()
        plot.show(alt, fig)


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


def plot_speedups(speedup, alt=None):
    """The speed-up curves of notebook 09: ``speedup`` maps ``(model, link)`` to the predicted speed-ups
    at k = 1, 2, ... devices; one panel per model, one line per link, and k itself (ideal). One
    legend below both panels; ``alt``: the text alternative."""
    from helpers import plot
    checks.speedups(speedup)
    models = list(dict.fromkeys(model for model, _ in speedup))
    with plot.slide_fonts():
        fig, axes = plot.plt.subplots(1, len(models), figsize=(8, 4.4), sharey=True, squeeze=False)
        for ax, model in zip(axes[0], models):
            styles = itertools.cycle(['o-', 's--', '^-.', 'D-'])   # overlapping curves stay visible
            for (name, link), s in speedup.items():
                if name == model:
                    ax.plot(np.arange(1, len(s) + 1), s, next(styles), ms=4, label=link)
            k = max(len(s) for s in speedup.values())
            ax.plot([1, k], [1, k], 'k:', label='k (ideal)')
            ax.set(title=model, xlabel='GPUs k', xscale='log', yscale='log')
            ax.set_xticks([1, 2, 4, 8, 16], ['1', '2', '4', '8', '16'])
            ax.set_yticks([0.25, 0.5, 1, 2, 4, 8, 16], ['1/4', '1/2', '1', '2', '4', '8', '16'])
            ax.grid(True, alpha=0.3)
        axes[0][0].set_ylabel('predicted speed-up')
        handles, labels = axes[0][0].get_legend_handles_labels()
        fig.legend(handles, labels, loc='lower center', ncol=3, frameon=False)
        fig.tight_layout(rect=(0, 0.16, 1, 1))
        plot.show(alt, fig)


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


def _rate(bits_per_second):
    return f'{bits_per_second / 1e9:g} Gbit/s' if bits_per_second >= 1e9 else f'{bits_per_second / 1e6:g} Mbit/s'


def plot_pushpull(rows, labels, alt=None):
    """Measured against predicted push + pull steps (notebook 09's figure): one point per row of
    :func:`measure_pushpull` that has a ``'predicted'`` time, named by ``labels[size]``; colours by
    cap, shapes by compression; the dotted line is measured = predicted. Legend beside the axes;
    ``alt``: the text alternative."""
    from helpers import plot
    checks.pushpull_rows(rows, labels)
    series = [(100e6, False, 'tab:blue'), (100e6, True, 'tab:cyan'), (1e9, False, 'tab:red'),
              (1e9, True, 'tab:orange')]
    with plot.slide_fonts():
        fig, ax = plot.plt.subplots(figsize=(8, 4.4))
        for rate, compression, color in series:
            pts = [r for r in rows if r.get('predicted') and r['size'] > 1
                   and (r['rate'], r['compression']) == (rate, compression)]
            ax.plot([r['predicted'] * 1e3 for r in pts], [r['median'] * 1e3 for r in pts],
                    'o' if compression else 's', color=color, ms=9,
                    label=f"{_rate(rate)}, {'2-bit' if compression else 'plain'}")
            for r in pts:                    # plain above the diagonal, 2-bit below it
                ax.annotate(labels[r['size']], (r['predicted'] * 1e3, r['median'] * 1e3),
                            ha='left' if compression else 'right', textcoords='offset points',
                            xytext=(8, -16) if compression else (-8, 4), fontsize=12)
        ax.plot([1, 3000], [1, 3000], 'k:', label='measured\n= predicted')
        ax.set(xscale='log', yscale='log', xlabel='predicted step (ms)', ylabel='measured step (ms)',
               title='dist_sync push + pull across a capped veth')
        ax.grid(True, alpha=0.3)
        ax.legend(loc='upper left', bbox_to_anchor=(1.02, 1), frameon=False)
        fig.tight_layout()
        plot.show(alt, fig)


class PushPullResult:
    """The steps one worker measured in :func:`measure_pushpull` (notebook 09): ``rows`` is a list
    of dicts ``rate`` (bit/s, None = no cap), ``size`` (float32 values), ``nbytes``,
    ``compression``, ``seconds`` (every timed step), ``median``, ``sent`` and ``received`` (bytes
    per step on the worker's side of the veth, from the kernel's counters)."""

    def __init__(self, rows, worker, wall_time):
        self.rows, self.worker, self.wall_time = rows, worker, wall_time

    def median(self, rate, size):
        """Median seconds of the steps at this rate and size."""
        return next(r['median'] for r in self.rows if r['rate'] == rate and r['size'] == size)

    def __repr__(self):
        return f'PushPullResult({len(self.rows)} rows from {self.worker}, job {self.wall_time:.0f} s)'


def measure_pushpull(sizes, rates, compression=False, steps=3, timeout=180, echo=False):
    """Run a ``dist_sync`` parameter server across two network namespaces and time push + pull
    (notebook 09). "Machine" a holds the scheduler, the server and worker 0; "machine" b holds
    worker 1; a veth joins them. For each rate in ``rates`` (bit/s; None: no cap) each worker caps
    its own machine's side of the veth, then, for every size in ``sizes`` (float32 values per key),
    times ``steps`` steps (after one untimed) if the cap alone makes one message (a push, or a pull)
    last half a second or more, else 10 times as many: short steps vary more, and cost little to repeat. Returns the
    :class:`PushPullResult` of worker 1, whose every byte crosses the veth. Every namespace and
    process is gone when it returns or raises (``helpers.netns.Network``, ``helpers.dist.Job``)."""
    from helpers import dist, netns
    sizes = checks.counts(sizes, 'sizes', 1)
    rates = [None if r is None else checks.positive(r, 'rate') for r in checks.ordered(rates, 'rates')]
    compression, timeout = checks.flag(compression, 'compression'), checks.seconds(timeout, 'timeout')
    command = [sys.executable, '-m', 'helpers.scaling', 'pushpull', '--sizes', ','.join(map(str, sizes)),
               '--rates', ','.join('none' if r is None else repr(r) for r in rates),
               '--steps', str(checks.whole(steps, 'steps', 1))] + (['--compression'] if compression else [])
    with netns.Network() as net:
        a, b = net.namespace('a'), net.namespace('b')
        link = net.veth(a, b)
        on_a, on_b = {'netns': a, 'host': link.addr_a}, {'netns': b, 'host': link.addr_b}
        place = {'scheduler': on_a, 'server 0': on_a, 'worker 0': on_a, 'worker 1': on_b}
        job = dist.run_local_job(command, num_workers=2, num_servers=1, timeout=timeout, echo=echo,
                                 env={'MXDP_VETH': link.dev_a}, place=place)
    line = next(t for t in job.output('worker 1') if t.startswith('RESULT '))
    return PushPullResult(json.loads(line[len('RESULT '):]), 'worker 1', job.wall_time)


def _pushpull_main(argv):
    """One worker of :func:`measure_pushpull` (the scheduler and server never get here)."""
    from helpers import netns
    p = argparse.ArgumentParser()
    p.add_argument('--sizes', required=True)
    p.add_argument('--rates', required=True)
    p.add_argument('--steps', type=int, default=3)
    p.add_argument('--compression', action='store_true')
    args = p.parse_args(argv)
    dev = os.environ['MXDP_VETH']
    sizes = [int(s) for s in args.sizes.split(',')]
    kv = mx.kv.create('dist_sync')
    if args.compression:
        kv.set_gradient_compression({'type': '2bit', 'threshold': 0.5})
    for key, size in enumerate(sizes):
        kv.init(key, mx.nd.zeros(size))
    rows = []
    for rate in [None if r == 'none' else float(r) for r in args.rates.split(',')]:
        kv._barrier()                    # nobody is still sending at the previous rate
        if rate:
            netns.cap(None, dev, rate)   # this machine's side of the link
        else:
            netns.uncap(None, dev)
        kv._barrier()                    # both machines run at the new rate
        for key, size in enumerate(sizes):
            grad, weight = mx.nd.full(size, 0.7), mx.nd.zeros(size)
            long = rate is not None and 8 * 4 * size / rate >= 0.5      # one message at the cap alone
            steps = args.steps if long else 10 * args.steps              # short: cheap, noisier
            seconds, before = [], None
            for i in range(steps + 1):                # the first step is not timed
                if i == 1:
                    before = netns.counters(None, dev)
                start = time.perf_counter()
                kv.push(key, grad)
                kv.pull(key, out=weight)
                weight.wait_to_read()
                seconds.append(time.perf_counter() - start)
            after = netns.counters(None, dev)
            rows.append({'rate': rate, 'size': size, 'nbytes': 4 * size, 'compression': args.compression,
                         'seconds': seconds[1:], 'median': statistics.median(seconds[1:]),
                         'sent': (after['tx_bytes'] - before['tx_bytes']) / steps,
                         'received': (after['rx_bytes'] - before['rx_bytes']) / steps})
    kv._barrier()
    print('RESULT ' + json.dumps(rows), flush=True)


if __name__ == '__main__':
    if len(sys.argv) >= 2 and sys.argv[1] == 'pushpull':
        _pushpull_main(sys.argv[2:])
    else:
        sys.exit('usage: python -m helpers.scaling pushpull --sizes N,... --rates R,... [--steps S] [--compression]')
