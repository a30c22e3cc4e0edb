"""Every figure of the series: d2l's plotting, stored as PNG, readable when projected. The generic
figures (curves, training histories, timelines) and the figures of notebooks 08 and 09's stored
results live here; only ``helpers.replay`` draws its own (the animation of a reader's ring).

d2l switches the inline backend to SVG. SVG outputs carry per-run ids, which nbval would compare
(and report as differences); PNG outputs it skips. So every figure goes through this module, which
renders PNG, uses fonts large enough for a projector, and otherwise keeps d2l's look.

Every function draws one figure and returns None, so a cell that ends with it shows only the
figure (nbval does not honour IPython's trailing ``;``).

Every figure is shown by :func:`show` with a text alternative, ``alt``: one or two sentences that say
what is drawn and what it shows (the finding, from the numbers of the cell that drew it), never a
file name. It is stored in the notebook three ways at once: as a PNG (``image/png``, for any
notebook viewer), as an HTML ``<img alt="...">`` followed by a collapsed table of the plotted numbers
(``text/html``: what JupyterLab, the book and the decks render, and what a screen reader reads), and
as plain text (``text/plain``: the alt text, which nbval compares).
"""
import html

import matplotlib.pyplot as plt
from d2l import mxnet as d2l
from matplotlib_inline import backend_inline

from helpers import checks

__all__ = ['use_png', 'slide_fonts', 'show', 'plot', 'history', 'history_spread', 'timeline', 'timelines',
           'step_timelines', 'allreduce_sweep',
           'sync_async_seeds', 'large_batch', 'grid_seeds', 'speedups', 'pushpull', 'plt', 'PALETTE',
           'LINESTYLES', 'FMTS', 'PHASE_COLORS', 'PHASE_HATCHES', 'FALLBACK_ALT']

# Readable on a projector: labels and ticks no smaller than this many points.
plt.rcParams.update({'font.size': 11, 'axes.titlesize': 12, 'axes.labelsize': 11,
                     'legend.fontsize': 10, 'xtick.labelsize': 10, 'ytick.labelsize': 10})

# No meaning by colour alone (docs/accessibility.md). The colours: Okabe and Ito's blue, vermillion,
# bluish green and reddish purple, black, and Tol's wine. Every one has at least 3:1 contrast
# against white (WCAG's minimum for a line or a bar), and every pair stays distinct (CIEDE2000 of
# 12 or more) under protanopia, deuteranopia and tritanopia as Machado et al. (2009) simulate them
# (tests/test_plot.py; matplotlib's default colours fall to 1.3 there). Every line of a figure
# also gets a line style of its own, every curve of `plot` and `history` a marker, and every phase
# of a timeline a hatch pattern besides its colour.
PALETTE = ('#0072B2', '#D55E00', '#009E73', '#CC79A7', '#000000', '#882255')
LINESTYLES = ('-', '--', '-.', ':', (0, (6, 1.5, 1, 1.5, 1, 1.5)), (0, (9, 2.5)))
plt.rcParams['axes.prop_cycle'] = plt.cycler(color=PALETTE) + plt.cycler(linestyle=LINESTYLES)
# d2l.plot's own formats name colours ('m--', 'g-.', 'r:': red and green); these leave the colours
# to PALETTE and tell the lines apart by style and, past four, by marker too.
FMTS = ('-', '--', '-.', ':', 'o-', 's--', '^-.', 'D:')
# `history`: one marker and line style per run (a run's epochs are few: a marker on each).
RUN_FMTS = ('o-', 's--', '^-.', 'D:', 'v-', 'P--')

# Larger still for the figures of notebooks 08 and 09, which are read on a projector: no text smaller
# than 12 pt on a figure at most 8 inches wide.
_SLIDE_FONTS = {'font.size': 13, 'axes.titlesize': 13, 'axes.labelsize': 13, 'legend.fontsize': 12,
                'xtick.labelsize': 12, 'ytick.labelsize': 12}


def slide_fonts():
    """``with slide_fonts(): ...`` draws the figures of the block with :data:`_SLIDE_FONTS`
    (notebooks 08 and 09)."""
    return plt.rc_context(_SLIDE_FONTS)


def _inline_in_kernel():
    """Inside a Jupyter kernel, draw figures inline. ipykernel 7 no longer selects the inline backend
    by itself, so without this a notebook executed by nbclient/nbval shows no figures at all."""
    try:
        from IPython import get_ipython
    except ImportError:  # plain Python: leave matplotlib's backend alone
        return
    shell = get_ipython()
    if shell is not None and 'IPKernelApp' in shell.config:
        shell.run_line_magic('matplotlib', 'inline')


def use_png():
    """Render inline figures as PNG (notebook 00 on; call after anything from d2l that switched to SVG)."""
    backend_inline.set_matplotlib_formats('png')


_inline_in_kernel()
use_png()


def _number(x):
    return f'{x:.4g}' if isinstance(x, float) else html.escape(str(x))


def _line_names(ax, lines):
    """What each line is called: its label, else its entry in a legend made from a list of names
    (``ax.legend(['a', 'b'])``, as ``d2l.plot`` does), else the y axis' label."""
    legend = ax.get_legend()
    given = [t.get_text() for t in legend.get_texts()] if legend else []
    names = []
    for i, ln in enumerate(lines):
        label = ln.get_label()
        names.append(label if not label.startswith('_') else given[i] if i < len(given)
                     else ax.get_ylabel() or f'y{i + 1}')
    return names


def _html_table(caption, head, rows):
    cells = ''.join(f'<tr>{"".join(f"<td>{_number(v)}</td>" for v in row)}</tr>' for row in rows)
    return (f'<table><caption>{html.escape(caption)}</caption><tr>'
            f'{"".join(f"<th>{html.escape(str(h))}</th>" for h in head)}</tr>{cells}</table>')


def _table(fig):
    """The numbers of every labelled line of ``fig`` as HTML tables, one per axes ('' if none)."""
    tables = []
    for ax in fig.axes:
        # a reference line (axvline, axhline) is in axes coordinates on one side: named in the caption
        marks = [f'{name}: {axis} = {_number(float(values[0]))}' for ln, name in
                 zip(ax.get_lines(), _line_names(ax, ax.get_lines())) if ln.get_transform() != ax.transData
                 for axis, values in (('x', ln.get_xdata()), ('y', ln.get_ydata())) if len(set(values)) == 1]
        lines = [ln for ln in ax.get_lines() if len(ln.get_xdata()) > 1 and ln.get_transform() == ax.transData]
        if not lines:
            continue
        names = _line_names(ax, lines)
        xs = [list(ln.get_xdata()) for ln in lines]
        head = [ax.get_xlabel() or 'x'] + names
        if all(x == xs[0] for x in xs):            # one shared x column
            rows = [[x] + [ln.get_ydata()[i] for ln in lines] for i, x in enumerate(xs[0])]
        else:                                      # one (x, y) pair of columns per line
            head = sum(([f'{h}: {ax.get_xlabel() or "x"}', f'{h}: {ax.get_ylabel() or "y"}']
                        for h in head[1:]), [])
            rows = [sum(([ln.get_xdata()[i], ln.get_ydata()[i]] if i < len(ln.get_xdata()) else ['', '']
                         for ln in lines), []) for i in range(max(map(len, xs)))]
        caption = '; '.join([ax.get_title() or ax.get_ylabel()] + marks)
        tables.append(_html_table(caption, head, rows))
    return ''.join(tables) + getattr(fig, '_numbers', '')


# How a text alternative that nobody wrote starts (tests/test_alt_text.py fails on it).
FALLBACK_ALT = 'Figure without a written description: '


def show(alt=None, fig=None):
    """Show ``fig`` (default: the current figure) with the text alternative ``alt`` and, for a plot of
    lines, a collapsed table of its numbers (notebooks 00 to 09; module docstring). Outside a Jupyter
    kernel: ``plt.show()``."""
    checks.figure(alt, fig=fig)
    fig = plt.gcf() if fig is None else fig
    if alt is None:                                # a description from the axes, until one is written
        alt = FALLBACK_ALT + ('; '.join(f'{ax.get_title() or "a plot"}: {ax.get_ylabel()} against {ax.get_xlabel()}'
                                        for ax in fig.axes if ax.get_xlabel() or ax.get_ylabel()) or 'a figure')
    if not isinstance(alt, str) or not alt.strip():
        raise TypeError(f'alt must be a sentence saying what the figure shows, got {alt!r}')
    try:
        from IPython import get_ipython
        from IPython.display import display
    except ImportError:
        get_ipython = None
    if get_ipython is None or get_ipython() is None:
        plt.show()
        return
    import base64
    from IPython.core.pylabtools import print_figure
    png = base64.b64encode(print_figure(fig, 'png', bbox_inches='tight')).decode('ascii')
    table = _table(fig)
    page = f'<img alt="{html.escape(alt)}" src="data:image/png;base64,{png}">'
    if table:
        page += f'<details><summary>The numbers in this figure</summary>{table}</details>'
    plt.close(fig)
    display({'image/png': png, 'text/html': page, 'text/plain': alt}, raw=True)


def plot(*args, alt=None, **kwargs):
    """``d2l.plot`` (same arguments: X, Y, xlabel, ylabel, legend, xlim, ylim, xscale, yscale,
    fmts, figsize, axes), shown with the text alternative ``alt`` (notebooks 01, 04, 09). Pass
    ``axes=`` to draw into axes of your own; then show the figure yourself with :func:`show`."""
    checks.figure(alt)
    kwargs.setdefault('figsize', (5, 3.2))
    if len(args) < 10:
        kwargs.setdefault('fmts', FMTS)
    d2l.plot(*args, **kwargs)
    use_png()
    if kwargs.get('axes') is None:
        show(alt)


def history(histories, title=None, figsize=(8, 3.2), alt=None):
    """Training curves of one or several runs (``{label: history}``, or one history): training loss
    and test accuracy per epoch, side by side, with whole-number epoch ticks (notebooks 05-09)."""
    checks.figure(alt, title)
    histories = checks.curves(histories)
    fig, (ax_loss, ax_acc) = plt.subplots(1, 2, figsize=figsize)
    for (label, h), fmt in zip(histories.items(), RUN_FMTS * len(histories)):
        ax_loss.plot(h['epoch'], h['loss'], fmt, label=label)
        ax_acc.plot(h['epoch'], h['test_acc'], fmt, label=label)
    for ax, name in ((ax_loss, 'training loss'), (ax_acc, 'test accuracy')):
        ax.set_xlabel('epoch')
        ax.set_ylabel(name)
        ax.xaxis.get_major_locator().set_params(integer=True)
        ax.grid(True, alpha=0.3)
    if len(histories) > 1 or None not in histories:
        ax_acc.legend()
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    show(alt, fig)


def history_spread(runs, title=None, figsize=(8, 3.2), alt=None):
    """Training curves over several seeds (notebook 05): ``runs`` maps a label to a list of histories,
    one per seed, of the same epochs. For each label, the mean training loss and test accuracy per
    epoch as a line (with its own line style and marker) and a band from the lowest to the highest
    seed (with its own hatching), so that a gap between two labels can be read against the spread
    that the seed alone makes."""
    import numpy as np
    checks.figure(alt, title)
    checks.spread_runs(runs)
    fig, (ax_loss, ax_acc) = plt.subplots(1, 2, figsize=figsize)
    styles, hatches = RUN_FMTS, ('', '//', '\\\\', '..', 'xx', 'oo')
    for (label, hs), style, hatch in zip(runs.items(), styles, hatches):
        epochs = hs[0]['epoch']
        for ax, key in ((ax_loss, 'loss'), (ax_acc, 'test_acc')):
            values = np.array([h[key] for h in hs], dtype=float)
            line, = ax.plot(epochs, values.mean(axis=0), style, label=f'{label}, mean of {len(hs)}')
            ax.fill_between(epochs, values.min(axis=0), values.max(axis=0), color=line.get_color(),
                            alpha=0.15, hatch=hatch, edgecolor=line.get_color(), linewidth=0)
    for ax, name in ((ax_loss, 'training loss'), (ax_acc, 'test accuracy')):
        ax.set_xlabel('epoch')
        ax.set_ylabel(name)
        ax.xaxis.get_major_locator().set_params(integer=True)
        ax.grid(True, alpha=0.3)
    ax_acc.legend()
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    show(alt, fig)


# A timeline's phases: a colour of PALETTE each and, but for the computing phases drawn plain,
# a hatch pattern, so that the legend and the bars do not rely on colour alone.
PHASE_COLORS = {'forward': '#0072B2', 'backward': '#D55E00', 'communication': '#CC79A7',
                'update': '#009E73', 'other': '#0072B2', 'wire': '#000000',
                'copy': '#CC79A7', 'addition': '#882255'}     # an allreduce's parts (notebook 04)
PHASE_HATCHES = {'backward': '\\\\\\\\', 'communication': '////', 'update': '..', 'copy': '////'}


def _bars(ax, spans, devices, classify, min_width=0.0, tall=()):
    """One bar per span in its device's lane, coloured and hatched by phase; return the phases seen."""
    seen = []
    for s in spans:
        kind = classify(s.name) if classify else 'other'
        hatch = PHASE_HATCHES.get(kind)
        ax.barh(devices.index(s.device), max(s.end - s.start, min_width), left=s.start,
                height=0.8 if kind in tall else 0.55 if tall else 0.6, color=PHASE_COLORS.get(kind, PALETTE[0]),
                hatch=hatch, edgecolor='black' if hatch else 'white', linewidth=0.2 if hatch else 0.3,
                label=kind if kind not in seen and classify else None)
        seen += [] if kind in seen else [kind]
    return seen


def _span_table(panels, caption='the operators of each device, by phase'):
    """``{title: spans}`` as one HTML table: per panel, device and phase, the number of operators,
    their busy time and the first start and last end (what a timeline draws, in numbers)."""
    rows = []
    for title, (spans, classify) in panels.items():
        groups = {}
        for s in spans:
            groups.setdefault((s.device, classify(s.name) if classify else 'other'), []).append(s)
        for (device, kind), ss in sorted(groups.items(), key=lambda g: (str(g[0][0]), g[0][1])):
            rows.append([title or '', device, kind, len(ss), sum(s.end - s.start for s in ss),
                         min(s.start for s in ss), max(s.end for s in ss)])
    head = ['panel', 'device', 'phase', 'operators', 'busy (ms)', 'first start (ms)', 'last end (ms)']
    if not any(r[0] for r in rows):
        head, rows = head[1:], [r[1:] for r in rows]
    return _html_table(caption, head, rows)


def timeline(spans, classify=None, title=None, figsize=(9, 2.6), alt=None):
    """One lane per device, one bar per operator the engine ran (``helpers.tracing.trace``);
    colours (and hatch patterns) by ``classify(name)`` (e.g. ``helpers.tracing.phase``), else one
    colour (notebooks 01, 04)."""
    checks.figure(alt, title)
    if classify is not None:
        checks.function(classify, 'classify')
    if not checks.spans(spans):
        raise ValueError('spans is empty: there is nothing to draw')
    devices = sorted({s.device for s in spans})
    fig, ax = plt.subplots(figsize=figsize)
    _bars(ax, spans, devices, classify)
    ax.set_yticks(range(len(devices)))
    ax.set_yticklabels(devices)
    ax.invert_yaxis()
    ax.set_xlabel('time (ms)')
    if classify:
        ax.legend(loc='upper left', bbox_to_anchor=(1.01, 1.0), frameon=False)   # beside, off the data
    if title:
        ax.set_title(title)
    fig.tight_layout()
    fig._numbers = _span_table({'': (spans, classify)}, f'{title}: the operators of each device, by phase'
                               if title else 'the operators of each device, by phase')
    show(alt, fig)


def timelines(panels, classify=None, min_width=0.0, figsize=None, alt=None):
    """Several traces (``{title: spans}`` of ``helpers.tracing.trace``) stacked on one time axis,
    one lane per device each, bars coloured (and hatched) by ``classify(name)``
    (notebook 10: three ways to send the gradients, side by side). A bar shorter than ``min_width``
    ms is drawn that wide, so that operators of microseconds stay visible; its numbers are not
    changed."""
    checks.figure(alt)
    checks.span_panels(panels)
    if classify is not None:
        checks.function(classify, 'classify')
    min_width = checks.number(min_width, 'min_width', 0)
    lanes = max(len({s.device for s in spans}) for spans in panels.values())
    figsize = figsize or (9, 0.8 + len(panels) * (0.5 + 0.4 * lanes))
    fig, axes = plt.subplots(len(panels), 1, figsize=figsize, sharex=True, squeeze=False)
    for ax, (title, spans) in zip(axes[:, 0], panels.items()):
        devices = sorted({s.device for s in spans})
        _bars(ax, spans, devices, classify, min_width, tall=('communication',))
        ax.set_yticks(range(len(devices)))
        ax.set_yticklabels(devices)
        ax.set_ylim(len(devices) - 0.4, -0.6)
        ax.set_title(title, loc='left')
    axes[-1, 0].set_xlabel('time (ms)')
    if classify:                                  # each phase once, though several panels draw it
        found = {}
        for handle, label in (hl for ax in axes[:, 0] for hl in zip(*ax.get_legend_handles_labels())):
            found.setdefault(label, handle)
        fig.legend(found.values(), found.keys(), loc='upper left', bbox_to_anchor=(1.0, 0.95),
                   frameon=False)                 # beside, off the data
    fig.tight_layout()
    fig._numbers = _span_table({title: (spans, classify) for title, spans in panels.items()})
    show(alt, fig)


def step_timelines(panels, figsize=(10, 3.4), alt=None):
    """Steps done against time, one line per worker, one panel per run (notebook 08: dist_sync
    beside dist_async). ``panels`` maps a panel title to ``{worker name: [t0, t1, ..., tn]}``: the
    wall-clock times at which the worker began its first step (t0) and ended each step."""
    checks.figure(alt)
    checks.lanes(panels)
    fig, axes = plt.subplots(1, len(panels), figsize=figsize, sharex=True, sharey=True, squeeze=False)
    for ax, (title, lanes) in zip(axes[0], panels.items()):
        t0 = min(stamps[0] for stamps in lanes.values())
        for (name, stamps), style in zip(lanes.items(), LINESTYLES * len(lanes)):
            ax.plot([t - t0 for t in stamps], range(len(stamps)), linestyle=style, drawstyle='steps-post',
                    lw=2, label=name)
        ax.set_title(title)
        ax.set_xlabel('seconds since the first step began')
        ax.grid(True, alpha=0.3)
        ax.legend(loc='lower right')
    axes[0][0].set_ylabel('steps done')
    fig.tight_layout()
    show(alt, fig)


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
