"""Every figure of the series (notebooks 00 to 09): d2l's plotting, stored as PNG, readable when projected.

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

__all__ = ['use_png', 'slide_fonts', 'show', 'plot', 'history', 'timeline', 'step_timelines', 'plt']

# Readable on a projector: labels and ticks no smaller than this many points.
plt.rcParams.update({'font.size': 11, 'axes.titlesize': 12, 'axes.labelsize': 11,
                     'legend.fontsize': 10, 'xtick.labelsize': 10, 'ytick.labelsize': 10})

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


def _table(fig):
    """The numbers of every labelled line of ``fig`` as HTML tables, one per axes ('' if none)."""
    tables = []
    for ax in fig.axes:
        lines = [ln for ln in ax.get_lines() if len(ln.get_xdata()) > 1]
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
        caption = ax.get_title() or ax.get_ylabel()
        cells = ''.join(f'<tr>{"".join(f"<td>{_number(v)}</td>" for v in row)}</tr>' for row in rows)
        tables.append(f'<table><caption>{html.escape(caption)}</caption><tr>'
                      f'{"".join(f"<th>{html.escape(str(h))}</th>" for h in head)}</tr>{cells}</table>')
    return ''.join(tables)


def show(alt=None, fig=None):
    """Show ``fig`` (default: the current figure) with the text alternative ``alt`` and, for a plot of
    lines, a collapsed table of its numbers (notebooks 00 to 09; module docstring). Outside a Jupyter
    kernel: ``plt.show()``."""
    checks.figure(alt, fig=fig)
    fig = plt.gcf() if fig is None else fig
    if alt is None:                                # a description from the axes, until one is written
        alt = '; '.join(f'{ax.get_title() or "a plot"}: {ax.get_ylabel()} against {ax.get_xlabel()}'
                        for ax in fig.axes if ax.get_xlabel() or ax.get_ylabel()) or 'a figure'
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
    for label, h in histories.items():
        ax_loss.plot(h['epoch'], h['loss'], 'o-', label=label)
        ax_acc.plot(h['epoch'], h['test_acc'], 'o-', label=label)
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


PHASE_COLORS = {'forward': 'tab:blue', 'backward': 'tab:orange', 'communication': 'tab:red',
                'update': 'tab:green', 'other': 'tab:blue',
                'copy': 'tab:red', 'addition': 'tab:purple'}      # an allreduce's parts (notebook 04)


def timeline(spans, classify=None, title=None, figsize=(9, 2.6), alt=None):
    """One lane per device, one bar per operator the engine ran (``helpers.tracing.trace``);
    colours by ``classify(name)`` (e.g. ``helpers.tracing.phase``), else one colour (notebooks 01, 04)."""
    checks.figure(alt, title)
    if classify is not None:
        checks.function(classify, 'classify')
    if not checks.spans(spans):
        raise ValueError('spans is empty: there is nothing to draw')
    devices = sorted({s.device for s in spans})
    fig, ax = plt.subplots(figsize=figsize)
    seen = set()
    for s in spans:
        kind = classify(s.name) if classify else 'other'
        ax.barh(devices.index(s.device), s.end - s.start, left=s.start, height=0.6,
                color=PHASE_COLORS.get(kind, 'tab:blue'), edgecolor='white', linewidth=0.3,
                label=kind if kind not in seen and classify else None)
        seen.add(kind)
    ax.set_yticks(range(len(devices)))
    ax.set_yticklabels(devices)
    ax.invert_yaxis()
    ax.set_xlabel('time (ms)')
    if classify:
        ax.legend(loc='upper left', bbox_to_anchor=(1.01, 1.0), frameon=False)   # beside, off the data
    if title:
        ax.set_title(title)
    fig.tight_layout()
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
        for (name, stamps), style in zip(lanes.items(), ('-', '--', '-.', ':')):
            ax.plot([t - t0 for t in stamps], range(len(stamps)), style, drawstyle='steps-post',
                    lw=2, label=name)
        ax.set_title(title)
        ax.set_xlabel('seconds since the first step began')
        ax.grid(True, alpha=0.3)
        ax.legend(loc='lower right')
    axes[0][0].set_ylabel('steps done')
    fig.tight_layout()
    show(alt, fig)
