"""Draw the static diagrams of notebooks 02-04 into img/ (reproducible: same bytes every run).

    .venv/bin/python img/make_figures_core.py

- dp-data-vs-model.svg  notebook 02: data parallelism vs model parallelism
- dp-batch-split.svg    notebook 03: even, uneven and weighted splits of a batch
- dp-ring-steps.svg     notebook 04: reduce-scatter and all-gather steps of ring allreduce, k = 4
- dp-naive-vs-ring.svg  notebook 04: who sends what to whom in the naive and the ring allreduce
- dp-store-placement.svg notebook 07: where the `local` and `device` stores keep merge buffers, weights
                        and optimizer state, with the update on the store or on the devices
"""
import os

import matplotlib

matplotlib.use('Agg')
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import FancyArrowPatch, Rectangle  # noqa: E402

OUT = os.path.dirname(os.path.abspath(__file__))
plt.rcParams.update({'svg.hashsalt': 'mxnet-dp', 'svg.fonttype': 'none', 'font.size': 10,
                     'font.family': 'DejaVu Sans'})
COLORS = ['#4c72b0', '#dd8452', '#55a868', '#c44e52', '#8172b3', '#937860', '#da8bc3', '#8c8c8c']


def save(fig, name):
    fig.savefig(os.path.join(OUT, name), format='svg', metadata={'Date': None}, bbox_inches='tight')
    plt.close(fig)
    print('wrote', os.path.join('img', name))


def box(ax, x, y, w, h, text='', color='white', alpha=1.0, fontsize=9, edge='black', textcolor='black'):
    ax.add_patch(Rectangle((x, y), w, h, facecolor=color, edgecolor=edge, alpha=alpha, lw=1))
    if text:
        ax.text(x + w / 2, y + h / 2, text, ha='center', va='center', fontsize=fontsize, color=textcolor)


def arrow(ax, x0, y0, x1, y1, color='black', style='-|>', lw=1.2, rad=0.0, shrink=0):
    ax.add_patch(FancyArrowPatch((x0, y0), (x1, y1), arrowstyle=style, mutation_scale=10,
                                 color=color, lw=lw, connectionstyle=f'arc3,rad={rad}',
                                 shrinkA=shrink, shrinkB=shrink))


def two_devices(ax, title):
    """A panel titled ``title`` with two grey device frames; returns their left x positions."""
    ax.set_title(title, fontsize=12)
    xs = [0.2 + d * 3.8 for d in range(2)]
    for d, x in enumerate(xs):
        box(ax, x, 0.2, 2.4, 4.3, '', color='#f3f3f3')
        ax.text(x + 1.2, 4.7, f'device {d}', ha='center', fontsize=12)
    return xs


LAYER_Y = [2.55, 1.55, 0.55]          # layer 1, 2, 3 from the top: data enters at the top


def data_vs_model():
    fig, axes = plt.subplots(1, 2, figsize=(10, 4.4))
    # Data parallelism: the whole model on each device, a shard of the batch each, entering layer 1.
    ax = axes[0]
    for d, x in enumerate(two_devices(ax, 'data parallelism\n(whole model on every device, batch cut into shards)')):
        box(ax, x + 0.2, 3.6, 2.0, 0.6, f'shard {d}', color=COLORS[4 + d], alpha=0.4, fontsize=11)
        for j, y in enumerate(LAYER_Y):
            box(ax, x + 0.2, y, 2.0, 0.6, f'layer {j + 1}', color=COLORS[j], alpha=0.35, fontsize=11)
        for y in (3.6, *LAYER_Y[:2]):                      # shard -> layer 1 -> layer 2 -> layer 3
            arrow(ax, x + 1.2, y, x + 1.2, y - 0.4)
    arrow(ax, 2.7, 1.85, 3.9, 1.85, color=COLORS[3], style='<|-|>')
    ax.text(3.3, 2.05, 'allreduce\ngradients', ha='center', va='bottom', fontsize=11, color=COLORS[3])
    ax.set_xlim(0, 6.7)
    ax.set_ylim(0, 5.0)
    ax.axis('off')
    # Model parallelism: layers on different devices, the whole batch flows through both.
    ax = axes[1]
    x0, x1 = two_devices(ax, 'model parallelism\n(layers split, whole batch on each)')
    box(ax, x0 + 0.2, 3.6, 2.0, 0.6, 'whole batch', color=COLORS[4], alpha=0.4, fontsize=11)
    box(ax, x0 + 0.2, LAYER_Y[0], 2.0, 0.6, 'layer 1', color=COLORS[0], alpha=0.35, fontsize=11)
    box(ax, x0 + 0.2, LAYER_Y[1], 2.0, 0.6, 'layer 2', color=COLORS[1], alpha=0.35, fontsize=11)
    box(ax, x1 + 0.2, LAYER_Y[1], 2.0, 0.6, 'layer 3', color=COLORS[2], alpha=0.35, fontsize=11)
    for y in (3.6, LAYER_Y[0]):
        arrow(ax, x0 + 1.2, y, x0 + 1.2, y - 0.4)
    arrow(ax, x0 + 2.2, LAYER_Y[1] + 0.42, x1 + 0.2, LAYER_Y[1] + 0.42, color=COLORS[3])
    ax.text(3.3, LAYER_Y[1] + 0.72, 'activations', ha='center', fontsize=11, color=COLORS[3])
    arrow(ax, x1 + 0.2, LAYER_Y[1] + 0.18, x0 + 2.2, LAYER_Y[1] + 0.18, color=COLORS[3])
    ax.text(3.3, LAYER_Y[1] - 0.3, 'gradients', ha='center', fontsize=11, color=COLORS[3])
    ax.set_xlim(0, 6.7)
    ax.set_ylim(0, 5.0)
    ax.axis('off')
    save(fig, 'dp-data-vs-model.svg')


def batch_split():
    """Not the worked examples of notebook 03 (10 on 4 devices, weights [3, 1]): it asks the reader to
    predict those."""
    rows = [('even: n = 12, k = 4', [3, 3, 3, 3]),
            ('uneven: n = 11, k = 4', [3, 3, 3, 2]),
            ('weighted [2, 1]: n = 10, k = 2 (shares 6.67 and 3.33)', [7, 3])]
    fig, ax = plt.subplots(figsize=(8.5, 3.4))
    for r, (label, sizes) in enumerate(rows):
        y = 2.5 - r * 1.2
        ax.text(0, y + 0.6, label, fontsize=12)
        x, example = 0, 0
        for d, s in enumerate(sizes):
            for e in range(s):
                box(ax, x + e * 0.55, y, 0.55, 0.45, str(example), color=COLORS[d], alpha=0.45, fontsize=11)
                example += 1
            ax.text(x + s * 0.275, y - 0.25, f'device {d}', ha='center', fontsize=11, color=COLORS[d])
            x += s * 0.55 + 0.2
    ax.set_xlim(-0.1, 7.6)
    ax.set_ylim(-0.1, 3.4)
    ax.axis('off')
    save(fig, 'dp-batch-split.svg')


def ring_steps(k=4):
    """Each panel: k devices (rows) x k chunks (columns). A cell's label lists the devices whose
    contribution it holds; arrows show what is sent in the next step. The send from the last device
    to the first (the ring's wrap-around) leaves the grid at the bottom and re-enters it at the top,
    around the right side, so that no arrow crosses a cell."""
    # contrib[d][c] = set of devices whose values chunk c on device d currently sums
    contrib = [[{d} for _ in range(k)] for d in range(k)]
    panels = [('start', [row[:] for row in contrib], [])]
    for step in range(k - 1):          # reduce-scatter
        sends = [(i, (i - step) % k) for i in range(k)]
        new = [[set(s) for s in row] for row in contrib]
        for i, c in sends:
            new[(i + 1) % k][c] = contrib[(i + 1) % k][c] | contrib[i][c]
        panels[-1] = panels[-1][:2] + (sends,)
        contrib = new
        panels.append((f'reduce-scatter step {step + 1}', [row[:] for row in contrib], []))
    for step in range(k - 1):          # all-gather
        sends = [(i, (i + 1 - step) % k) for i in range(k)]
        new = [[set(s) for s in row] for row in contrib]
        for i, c in sends:
            new[(i + 1) % k][c] = set(contrib[i][c])
        panels[-1] = panels[-1][:2] + (sends,)
        contrib = new
        panels.append((f'all-gather step {step + 1}', [row[:] for row in contrib], []))
    w, h, px, py = 1.5, 0.62, 1.62, 1.0          # cell width and height, column and row pitch
    cols, unit = 4, 0.5                          # panels per row; inches per unit
    rows_ = -(-len(panels) // cols)
    top = (k - 1) * py + h                       # upper edge of the top row
    xlims = [(-1.2, k * px + 0.3)] + [(-0.2, k * px + 0.3)] * (cols - 1)   # device names: first column
    ylim = (-0.45, top + 0.45)
    widths = [hi - lo for lo, hi in xlims]
    size = (unit * sum(widths) * 1.08, (unit * (ylim[1] - ylim[0]) + 0.5) * rows_ + 0.5)
    fig, axes = plt.subplots(rows_, cols, figsize=size,
                             gridspec_kw={'width_ratios': widths, 'wspace': 0.08})
    for ax in axes.flat:
        ax.axis('off')
    for n, (ax, (title, state, sends)) in enumerate(zip(axes.flat, panels)):
        ax.set_title(title, fontsize=13)
        for d in range(k):
            if n % cols == 0:
                ax.text(-0.15, (k - 1 - d) * py + h / 2, f'dev {d}', ha='right', va='center', fontsize=13)
            for c in range(k):
                s = state[d][c]
                full = len(s) == k
                label = 'Σ' if full else '+'.join(str(x) for x in sorted(s))
                box(ax, c * px, (k - 1 - d) * py, w, h, label, color=COLORS[c] if full else 'white',
                    alpha=0.55 if full else 1.0, fontsize=12, edge=COLORS[c])
        for i, c in sends:
            x = c * px + w / 2
            if i == k - 1:   # wrap-around: out at the bottom, round the right side, in at the top
                right = k * px + 0.05
                ax.plot([x, x, right, right, x], [0, -0.3, -0.3, top + 0.3, top + 0.3],
                        color='crimson', lw=1.2, solid_joinstyle='round')
                arrow(ax, x, top + 0.3, x, top, color='crimson', lw=1.2)
            else:
                arrow(ax, x, (k - 1 - i) * py, x, (k - 2 - i) * py + h, color='crimson', lw=1.2)
        ax.set_xlim(*xlims[n % cols])
        ax.set_ylim(*ylim)
        ax.set_aspect('equal')
    fig.suptitle(f'ring allreduce on k = {k} devices: columns are the {k} chunks of the array, a cell '
                 'lists whose values it holds (Σ = all);\nred arrows: what is sent in the next step '
                 f'(dev {k - 1} sends to dev 0 round the right side)', fontsize=13)
    save(fig, 'dp-ring-steps.svg')


def naive_vs_ring(k=4):
    """Two panels: the naive allreduce (everyone to device 0 and back) and the ring (each device to
    its right neighbour). No byte counts: notebook 04 asks the reader to predict them."""
    import math
    from matplotlib.lines import Line2D
    fig, axes = plt.subplots(1, 2, figsize=(11, 5.2))
    pos = [(math.cos(math.pi / 2 - 2 * math.pi * d / k) * 1.6, math.sin(math.pi / 2 - 2 * math.pi * d / k) * 1.6)
           for d in range(k)]

    def devices(ax):
        for d, (x, y) in enumerate(pos):
            ax.add_patch(plt.Circle((x, y), 0.46, facecolor=COLORS[d], alpha=0.35, edgecolor='black'))
            ax.text(x, y, f'dev {d}', ha='center', va='center', fontsize=12)
        ax.set_xlim(-2.7, 2.7)
        ax.set_ylim(-3.0, 2.9)
        ax.set_aspect('equal')
        ax.axis('off')

    ax = axes[0]
    ax.set_title('naive: reduce to device 0, then broadcast', fontsize=13)
    devices(ax)
    x0, y0 = pos[0]
    for d in range(1, k):
        x, y = pos[d]
        arrow(ax, x, y, x0, y0, color=COLORS[3], rad=0.15, lw=1.6, shrink=24)    # reduce
        arrow(ax, x0, y0, x, y, color=COLORS[0], rad=0.15, lw=1.6, shrink=24)    # broadcast
    ax.legend(handles=[Line2D([], [], color=COLORS[3], lw=2, label='1. reduce: arrays to device 0'),
                       Line2D([], [], color=COLORS[0], lw=2, label='2. broadcast: the sum back')],
              loc='upper center', bbox_to_anchor=(0.5, 1.0), ncol=1, fontsize=11, frameon=False)
    ax.text(0, -2.55, 'every array passes through device 0:\nfirst in, then out', ha='center', fontsize=12)
    ax = axes[1]
    ax.set_title('ring: each device sends to its right neighbour', fontsize=13)
    devices(ax)
    for d in range(k):
        (x, y), (x1, y1) = pos[d], pos[(d + 1) % k]
        arrow(ax, x, y, x1, y1, color=COLORS[2], rad=-0.25, lw=1.8, shrink=24)
    ax.text(0, -2.55, f'2(k-1) = {2 * (k - 1)} steps; in each, every device\n'
            'can send one chunk of N/k at the same time', ha='center', fontsize=12)
    save(fig, 'dp-naive-vs-ring.svg')


def store_placement(k=3):
    """Notebook 07: one key of a single-machine KVStore on k GPUs, four panels: ``local`` / ``device``
    (rows) x update on the store / on the devices (columns, Gluon's ``update_on_kvstore``). What the
    store allocates is hatched and orange; what every device holds for training is plain grey. MXNet
    1.9.1: ``CommCPU::Reduce`` / ``CommDevice::Reduce`` (src/kvstore/comm.h) make the merge buffer
    and k-1 copy buffers; ``KVStoreLocal::PushImpl`` (src/kvstore/kvstore_local.h) moves the store's
    weights to the merge buffer's GPU; the optimizer creates its state next to the weights it updates."""
    fig, axes = plt.subplots(2, 2, figsize=(13, 10))
    xs = [0.3 + d * 3.25 for d in range(k)]            # left edge of each GPU's items
    step, top = 0.6, 3.3                               # rows inside a GPU box, from the top down

    def item(ax, x, y, text, mine, w=2.75):
        ax.add_patch(Rectangle((x, y), w, 0.48, facecolor='#d9d9d9' if mine else COLORS[1],
                               alpha=1.0 if mine else 0.45, edgecolor='black', lw=1,
                               hatch=None if mine else '//'))
        ax.text(x + w / 2, y + 0.24, text, ha='center', va='center', fontsize=12,
                bbox=None if mine else dict(facecolor='white', edgecolor='none', alpha=0.85, pad=0.6))

    for r, kv in enumerate(('local', 'device')):
        for c, on_store in enumerate((True, False)):
            ax = axes[r, c]
            where = 'on the store' if on_store else 'on every device'
            ax.set_title(f"'{kv}' store, update {where}\n(update_on_kvstore={on_store})", fontsize=13)
            box(ax, 0.1, 4.7, 9.75, 2.15, '', color='#f7f7f7')
            ax.text(0.3, 6.55, 'host (CPU) memory', fontsize=12, va='center')
            buffers = ['merge buffer', f'copy buffers x {k - 1}']
            buffers += ["store's weights", 'optimizer state'] if on_store else []
            mine = ['weights', 'gradient'] + ([] if on_store else ['optimizer state'])
            for d, x in enumerate(xs):
                box(ax, x - 0.15, -1.1, 3.05, 5.35, '', color='#f7f7f7')
                owner = kv == 'device' and d == 0
                ax.text(x + 1.375, 3.95, f'GPU {d}' + (' (owner)' if owner else ''), ha='center',
                        va='center', fontsize=12, fontweight='bold' if owner else 'normal')
                rows = mine + (buffers if owner else [])
                for i, text in enumerate(rows):
                    item(ax, x, top - step * i, text, i < len(mine))
            if kv == 'local':
                for i, text in enumerate(buffers):
                    item(ax, 0.3 + 4.8 * (i % 2), 5.75 - 0.65 * (i // 2), text, False, w=4.5)
                for x in xs:
                    arrow(ax, x + 1.375, 4.3, x + 1.375, 4.65, style='<|-|>', lw=1.6)
            else:
                ax.text(4.95, 5.7, 'nothing of this key', ha='center', va='center', fontsize=12, color='#555555')
                for x in xs[1:]:                          # below the boxes, to the owner
                    arrow(ax, x + 1.375, -1.15, xs[0] + 1.9, -1.15, style='<|-|>', lw=1.6, rad=-0.22)
            back = 'new weights' if on_store else 'the summed gradient'
            ax.text(4.95, -2.35, f'push: every gradient in;  pull: {back} out', ha='center', va='center',
                    fontsize=12)
            ax.set_xlim(0, 10)
            ax.set_ylim(-2.6, 7.0)
            ax.axis('off')
    fig.suptitle(f'One key on k = {k} GPUs. Hatched: what the store allocates; grey: what every GPU holds '
                 'to train', fontsize=13)
    fig.tight_layout()
    save(fig, 'dp-store-placement.svg')

if __name__ == '__main__':
    naive_vs_ring()
    data_vs_model()
    batch_split()
    ring_steps()
    store_placement()
