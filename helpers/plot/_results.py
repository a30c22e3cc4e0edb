"""The figures of particular measurements (:mod:`helpers.plot`): notebook 04's allreduce sweep over the
emulated link, and the figures of notebooks 08 and 09's stored results."""
from helpers import checks
from helpers.plot._core import LINESTYLES, PALETTE, _html_table, plt, show, slide_fonts

__all__ = ['allreduce_sweep', 'sync_async_seeds', 'large_batch', 'grid_seeds', 'speedups', 'pushpull']


def _bytes_label(n):
    return f'{n / 2 ** 20:g} MiB' if n >= 2 ** 20 else f'{n / 2 ** 10:g} KiB' if n >= 2 ** 10 else f'{n} B'


def allreduce_sweep(sizes, measured, model, alt=None, figsize=(9, 3.4)):
    """Allreduce time against bytes per device, one panel per number of devices, measured (points)
    and modelled (lines) for each algorithm (notebook 04: naive and ring over the emulated link).
    ``measured`` and ``model`` map ``(algorithm, k, nbytes)`` to seconds."""
    checks.figure(alt)
    sizes = checks.counts(sizes, 'sizes', 1)
    if not sizes:
        raise ValueError('sizes is empty: give the bytes per device that were measured')
    checks.sweep_times(measured, 'measured', sizes)
    checks.sweep_times(model, 'model', sizes)
    names = sorted({c[0] for c in measured})
    ks = sorted({c[1] for c in measured})
    missing = sorted({(a, k) for a, k, _ in measured} - {(a, k) for a, k, _ in model})
    if missing:
        raise ValueError(f'model has no time for {missing[0]}, which measured has')
    fig, axes = plt.subplots(1, len(ks), figsize=figsize, sharey=True, squeeze=False)
    for ax, k in zip(axes[0], ks):
        for name, color, marker, style in zip(names, PALETTE, ('o', 's', '^', 'D'), LINESTYLES):
            ax.plot(sizes, [model[name, k, n] * 1e3 for n in sizes], color=color, linestyle=style,
                    label=f'{name}, model')
            ax.plot(sizes, [measured[name, k, n] * 1e3 for n in sizes], marker, color=color, ms=7,
                    markerfacecolor='white', label=f'{name}, measured')
        ax.set(xscale='log', yscale='log', title=f'k = {k} devices', xlabel='bytes per device')
        ax.set_xticks(sizes)
        ax.set_xticklabels([_bytes_label(n) for n in sizes])
        ax.minorticks_off()
        ax.grid(True, alpha=0.3)
    axes[0][0].set_ylabel('allreduce (ms)')
    axes[0][0].legend(fontsize=9)
    fig.tight_layout()
    rows = [[name, k, n, measured[name, k, n] * 1e3, model[name, k, n] * 1e3] for name in names for k in ks
            for n in sizes]
    fig._numbers = _html_table('the allreduce times drawn, in ms',
                               ['algorithm', 'devices', 'bytes per device', 'measured (ms)', 'model (ms)'], rows)
    show(alt, fig)


# --- notebook 08's figure of the stored sync/async seeds ------------------------------------------
def sync_async_seeds(runs, alt=None, figsize=(8, 3.6)):
    """The stored runs of ``benchmarks/dist_sync_async.py`` (notebook 08): each worker's seconds of
    training (left) and test accuracy (right), one point per run, for ``dist_sync`` (circles) and
    ``dist_async`` (squares), fast rank 0 and slow rank 1 side by side, a bar at each median."""
    import numpy as np
    stores = ('dist_sync', 'dist_async')
    checks.figure(alt)
    runs = checks.seed_runs(runs, stores)
    with slide_fonts():
        fig, axes = plt.subplots(1, 2, figsize=figsize)
        for ax, key, label in zip(axes, ('seconds', 'test_acc'), ('seconds of training', 'test accuracy')):
            for i, (store, rank) in enumerate((s, r) for s in stores for r in (0, 1)):
                ys = [run['ranks'][rank][key] for run in runs if run['kvstore'] == store]
                xs = i + np.linspace(-0.15, 0.15, len(ys))
                ax.plot(xs, ys, 'o' if store == stores[0] else 's', ms=7, color=PALETTE[rank], ls='none',
                        label=f"{store}, rank {rank}{' (slow)' if rank else ''}")
                ax.hlines(np.median(ys), i - 0.3, i + 0.3, colors='k', lw=2)
            ax.set_xticks(range(4), ['sync\nrank 0', 'sync\nrank 1', 'async\nrank 0', 'async\nrank 1'])
            ax.set(ylabel=label)
            ax.grid(True, axis='y', alpha=0.3)
        fig.tight_layout()
        show(alt, fig)


# --- notebook 09's figures: large batches, predicted speed-ups, a parameter server's steps ------------
def large_batch(grid, batch=512, alt=None):
    """The figure of the stored large-batch grid (``helpers.scaling.stored_results``) in notebook 09: test accuracy
    per epoch of batch 64 and of ``batch`` under each recipe (left), and after the last epoch against
    the batch size (right). Legends below the axes, off the data; ``alt``: the text alternative. For a
    grid of one seed; a grid of several seeds: :func:`grid_seeds`."""
    batches = checks.grid(grid, batch)
    epochs = range(1, grid['settings']['epochs'] + 1)
    with slide_fonts():
        fig, (left, right) = plt.subplots(1, 2, figsize=(8, 4.8))
        recipes = list(dict.fromkeys(r['recipe'] for r in grid['runs']))      # in the file's order
        colors = dict(zip(recipes, ('tab:blue', 'tab:orange', 'tab:green')))
        for r in grid['runs']:
            if r['batch'] in (64, batch):
                color = 'black' if r['batch'] == 64 else colors[r['recipe']]
                left.plot(epochs, r['test_acc'], 'o--' if r['batch'] == 64 else 'o-', color=color,
                          label=f"{r['batch']} {r['recipe']} ({r['lr']:g})")
        for recipe, marker in zip(recipes, 'osv'):
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
        show(alt, fig)


def grid_seeds(groups, epochs, alt=None, base_lr=0.1, base_batch=64, figsize=(8, 4.4)):
    """A large-batch grid over its seeds (notebook 09): ``groups`` maps ``(batch, recipe, lr)`` to the
    runs of that setting, one per seed (``helpers.scaling.grid_by_setting``), each trained ``epochs``
    epochs. The final test accuracy of each setting,
    median of the seeds (markers, joined), their range (vertical bars) and each seed (dots). Left:
    against the batch, one line per recipe, zoomed on the runs that trained (an arrow names a median
    below). Right: against the learning rate, batch ``base_batch`` at a fixed rate beside the linear rule
    and its warm-up (the batch that the rule gives that rate), from 0 to 1. ``alt``: the text alternative."""
    import numpy as np
    checks.figure(alt)
    base_lr, base_batch = checks.setting_groups(groups, epochs, base_lr, base_batch)
    final = {k: [r['test_acc'][-1] for r in runs] for k, runs in groups.items()}
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
    with slide_fonts():
        fig, axes = plt.subplots(1, 2, figsize=figsize)
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
                 title=f"after {epochs} epochs: by batch")
        right.set(ylim=(0, 1), title='by learning rate')
        fig.tight_layout()
        show(alt, fig)


def speedups(speedup, alt=None):
    """The speed-up curves of notebook 09: ``speedup`` maps ``(model, link)`` to the predicted speed-ups
    at k = 1, 2, ... devices; one panel per model, one line per link, and k itself (ideal). One
    legend below both panels; ``alt``: the text alternative."""
    import itertools

    import numpy as np
    checks.speedups(speedup)
    models = list(dict.fromkeys(model for model, _ in speedup))
    with slide_fonts():
        fig, axes = plt.subplots(1, len(models), figsize=(8, 4.4), sharey=True, squeeze=False)
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
        show(alt, fig)


def _rate(bits_per_second):
    return f'{bits_per_second / 1e9:g} Gbit/s' if bits_per_second >= 1e9 else f'{bits_per_second / 1e6:g} Mbit/s'


def pushpull(rows, labels, alt=None):
    """Measured against predicted push + pull steps (notebook 09's figure): one point per row of
    ``helpers.pushpull.measure_pushpull`` that has a ``'predicted'`` time, named by ``labels[size]``; colours by
    cap, shapes by compression; the dotted line is measured = predicted. Legend beside the axes;
    ``alt``: the text alternative."""
    checks.pushpull_rows(rows, labels)
    series = [(100e6, False, 'tab:blue'), (100e6, True, 'tab:cyan'), (1e9, False, 'tab:red'),
              (1e9, True, 'tab:orange')]
    with slide_fonts():
        fig, ax = plt.subplots(figsize=(8, 4.4))
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
        show(alt, fig)
