"""The core of :mod:`helpers.plot`: how every figure is drawn and shown (PNG, alt text, the
plotted numbers), the palette, and the generic figures (curves, training histories, timelines)."""

import html

import matplotlib.pyplot as plt
from d2l import mxnet as d2l
from matplotlib_inline import backend_inline

from helpers import checks

__all__ = ['use_png', 'slide_fonts', 'show', 'plot', 'history', 'history_spread', 'timeline', 'timelines',
           'step_timelines', 'plt', 'PALETTE', 'LINESTYLES', 'FMTS', 'PHASE_COLORS', 'PHASE_HATCHES', 'FALLBACK_ALT']

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

# Text a reader can read where the figure is smallest (docs/accessibility.md): the book shows a
# figure in its column, BOOK_COLUMN_PX CSS px wide at a 1280-px window (790 at 1920, 755 at 1024),
# scaled down to it when the PNG is wider. There the figure's smallest text must still be at least
# MIN_SHOWN_TEXT_PX px: smallest font (pt) x dpi / 72 x min(1, BOOK_COLUMN_PX / PNG width). At the
# series' 10 pt (the rcParams above) and matplotlib-inline's 100 dpi, a figure at most 1,060 px wide.
# `show` stores the numbers in the output's metadata (SIZE_KEY); tests/test_figure_rules.py checks them.
BOOK_COLUMN_PX = 688
MIN_SHOWN_TEXT_PX = 9
SIZE_KEY = 'helpers.plot'


def text_size(fig, png):
    """``{'width_px', 'smallest_pt', 'shown_px'}`` of a figure and its PNG (``print_figure``'s bytes):
    the PNG's width, the smallest font of any text drawn (titles, labels, ticks, legends, annotations),
    and that font's height in CSS px where the book shows the figure (:data:`BOOK_COLUMN_PX`)."""
    import struct
    from matplotlib.text import Text
    width, _ = struct.unpack('>II', png[16:24])
    fig.canvas.draw()                       # tick labels exist once drawn
    sizes = [t.get_fontsize() for t in fig.findobj(Text)
             if t.get_visible() and t.get_text().strip() and t.get_figure() is fig]
    smallest = min(sizes) if sizes else None
    dpi = fig.dpi if plt.rcParams['savefig.dpi'] == 'figure' else plt.rcParams['savefig.dpi']
    shown = None if smallest is None else smallest * dpi / 72 * min(1.0, BOOK_COLUMN_PX / width)
    return {'width_px': width, 'smallest_pt': smallest, 'shown_px': None if shown is None else round(shown, 2)}


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
    raw = print_figure(fig, 'png', bbox_inches='tight')
    png = base64.b64encode(raw).decode('ascii')
    table = _table(fig)
    size = text_size(fig, raw)
    page = f'<img alt="{html.escape(alt)}" src="data:image/png;base64,{png}">'
    if table:
        page += f'<details><summary>The numbers in this figure</summary>{table}</details>'
    plt.close(fig)
    display({'image/png': png, 'text/html': page, 'text/plain': alt}, metadata={SIZE_KEY: size}, raw=True)


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


def timeline(spans, classify=None, title=None, figsize=(8, 2.6), alt=None):
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
    figsize = figsize or (8, 0.8 + len(panels) * (0.5 + 0.4 * lanes))     # legend beside: under 1,060 px
    fig, axes = plt.subplots(len(panels), 1, figsize=figsize, sharex=True, squeeze=False)
    for ax, (title, spans) in zip(axes[:, 0], panels.items()):
        devices = sorted({s.device for s in spans})
        _bars(ax, spans, devices, classify, min_width, tall=('communication',))
        ax.set_yticks(range(len(devices)))
        ax.set_yticklabels(devices)
        ax.set_ylim(len(devices) - 0.4, -0.6)
        ax.set_title(title, loc='left')
    axes[-1, 0].set_xlabel('time (ms)')
    if classify:           # one entry per phase (each panel has its own bars of it), beside, off the data
        entries = {}
        for ax in axes[:, 0]:
            for handle, label in zip(*ax.get_legend_handles_labels()):
                entries.setdefault(label, handle)
        order = sorted(entries, key=lambda k: (list(PHASE_COLORS).index(k) if k in PHASE_COLORS else len(PHASE_COLORS),
                                               k))
        fig.legend([entries[k] for k in order], order, loc='upper left', bbox_to_anchor=(1.0, 0.95), frameon=False)
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
