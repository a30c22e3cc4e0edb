"""Every figure of the series (notebooks 00 to 09): d2l's plotting, stored as PNG, readable when projected.

d2l switches the inline backend to SVG. SVG outputs carry per-run ids, which nbval would compare
(and report as differences); PNG outputs it skips. So every figure goes through this module, which
renders PNG, uses fonts large enough for a projector, and otherwise keeps d2l's look.

Every function draws one figure and returns None, so a cell that ends with it shows only the
figure (nbval does not honour IPython's trailing ``;``).
"""
import matplotlib.pyplot as plt
from d2l import mxnet as d2l
from matplotlib_inline import backend_inline

__all__ = ['use_png', 'slide_fonts', 'plot', 'history', 'timeline', 'step_timelines', 'plt']

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


def plot(*args, **kwargs):
    """``d2l.plot`` (same arguments: X, Y, xlabel, ylabel, legend, xlim, ylim, xscale, yscale,
    fmts, figsize, axes) with PNG output (notebooks 01, 04, 09). Pass ``axes=`` to draw into axes
    of your own."""
    kwargs.setdefault('figsize', (5, 3.2))
    d2l.plot(*args, **kwargs)
    use_png()


def history(histories, title=None, figsize=(8, 3.2)):
    """Training curves of one or several runs (``{label: history}``, or one history): training loss
    and test accuracy per epoch, side by side, with whole-number epoch ticks (notebooks 05-09)."""
    if 'epoch' in histories:
        histories = {None: histories}
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
    plt.show()


PHASE_COLORS = {'forward': 'tab:blue', 'backward': 'tab:orange', 'communication': 'tab:red',
                'update': 'tab:green', 'other': 'tab:blue',
                'copy': 'tab:red', 'addition': 'tab:purple'}      # an allreduce's parts (notebook 04)


def timeline(spans, classify=None, title=None, figsize=(9, 2.6)):
    """One lane per device, one bar per operator the engine ran (``helpers.tracing.trace``);
    colours by ``classify(name)`` (e.g. ``helpers.tracing.phase``), else one colour (notebooks 01, 04)."""
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
    plt.show()


def step_timelines(panels, figsize=(10, 3.4)):
    """Steps done against time, one line per worker, one panel per run (notebook 08: dist_sync
    beside dist_async). ``panels`` maps a panel title to ``{worker name: [t0, t1, ..., tn]}``: the
    wall-clock times at which the worker began its first step (t0) and ended each step."""
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
    plt.show()
