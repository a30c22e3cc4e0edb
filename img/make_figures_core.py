"""Draw the static diagrams of notebooks 02-04 into img/ (reproducible: same bytes every run).

    .venv/bin/python img/make_figures_core.py

- dp-data-vs-model.svg  notebook 02: data parallelism vs model parallelism
- dp-batch-split.svg    notebook 03: even, uneven and weighted splits of a batch
- dp-ring-steps.svg     notebook 04: reduce-scatter and all-gather steps of ring allreduce, k = 4
- dp-naive-vs-ring.svg  notebook 04: who sends what to whom in the naive and the ring allreduce
- dp-overlap-buckets.svg notebook 10: sending after the backward pass, as gradients are ready, in buckets
- dp-sharded-step.svg   notebook 11: the replicated and the sharded optimizer step, k = 3
- dp-four-moves.svg     notebook 05: the four moves of a data-parallel step on two devices
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


def overlap_buckets():
    """One device's backward pass (four layers, the last first) and, below it, when its gradients go
    over the link: after the backward pass, as each is ready, in two buckets, in one bucket. Every
    message pays a fixed cost (dark) before its bytes (light). Made-up unit costs, no measurement:
    a layer 1, alpha 1, a gradient's bytes 0.4, so that the picture shows both effects."""
    layer, alpha, nbytes = 1.0, 1.0, 0.4
    ready = {g: (4 - g + 1) * layer for g in (4, 3, 2, 1)}        # gradient g is written at the end of its box
    plans = [('(a) wait, then send', [[4], [3], [2], [1]], True),
             ('(b) send as ready', [[4], [3], [2], [1]], False),
             ('(b) in 2 buckets', [[4, 3], [2, 1]], False),
             ('(b) in 1 bucket', [[4, 3, 2, 1]], False)]
    fig, ax = plt.subplots(figsize=(9.5, 3.9))
    y = len(plans) + 0.9
    ax.text(-0.3, y + 0.3, 'backward: layer Li writes gi', ha='right', va='center', fontsize=11)
    for g in (4, 3, 2, 1):
        box(ax, ready[g] - layer, y, layer, 0.6, f'L{g}', color=COLORS[1], alpha=0.8, fontsize=10)
    end_backward = ready[1]
    ax.plot([end_backward] * 2, [0.1, y + 0.8], color='gray', ls=':', lw=1)
    ax.text(end_backward, y + 1.0, 'backward ends', ha='center', fontsize=10, color='gray')
    for row, (name, buckets, wait) in enumerate(plans):
        y = len(plans) - 1 - row + 0.2
        ax.text(-0.3, y + 0.3, name, ha='right', va='center', fontsize=11)
        free = 0.0
        for bucket in buckets:
            start = max(free, end_backward if wait else max(ready[g] for g in bucket))
            size = nbytes * len(bucket)
            box(ax, start, y, alpha, 0.6, '', color=COLORS[3], alpha=0.9)
            box(ax, start + alpha, y, size, 0.6, ','.join(f'g{g}' for g in bucket), color=COLORS[3], alpha=0.3,
                fontsize=9)
            free = start + alpha + size
        ax.plot([free, free], [y - 0.1, y + 0.7], color='black', lw=2)
        ax.text(free + 0.1, y + 0.3, f'done at {free:g}', va='center', fontsize=10)
    ax.text(0, -0.35, 'dark: the fixed cost of a message (alpha); light: its bytes. Unit costs made up for '
            'the picture: a layer 1, alpha 1, a gradient 0.4.', fontsize=10)
    ax.set_xlim(-3.6, 11.2)
    ax.set_ylim(-0.6, len(plans) + 2.1)
    ax.axis('off')
    save(fig, 'dp-overlap-buckets.svg')


def sharded_step(k=3):
    """Two rows of panels, k devices each: the replicated step (allreduce, then every device updates
    every chunk with the optimizer state of every chunk) and the sharded step (reduce-scatter, device i
    updates chunk i + 1 with that chunk's state only, all-gather of the weights). A device's row shows
    its k chunks; 'Σ' marks a summed gradient chunk, 'new' an updated weight chunk; the state column
    shows which chunks' Adam moments (m, v) the device keeps."""
    owner = {i: (i + 1) % k for i in range(k)}              # helpers.comm.owner_chunk
    w, h, px, py = 0.95, 0.55, 1.05, 0.85
    stages = [('replicated', ['gradients', 'after allreduce', 'update (state: m, v)', 'weights']),
              ('sharded', ['gradients', 'after reduce-scatter', 'update (state: m, v)', 'after all-gather'])]
    fig, axes = plt.subplots(2, 4, figsize=(14, 6.2), gridspec_kw={'wspace': 0.12, 'hspace': 0.55})
    for row, (name, titles) in enumerate(stages):
        for col, title in enumerate(titles):
            ax = axes[row][col]
            ax.set_title(title, fontsize=12)
            ax.axis('off')
            for d in range(k):
                y = (k - 1 - d) * py
                if col == 0:
                    ax.text(-0.15, y + h / 2, f'dev {d}', ha='right', va='center', fontsize=12)
                for c in range(k):
                    x = c * px
                    if col == 0:                            # each device's own gradient
                        box(ax, x, y, w, h, f'g{d}', color=COLORS[d], alpha=0.25, fontsize=11)
                    elif col == 1:
                        done = name == 'replicated' or c == owner[d]
                        box(ax, x, y, w, h, 'Σ' if done else 'part', color=COLORS[c] if done else 'white',
                            alpha=0.55 if done else 1.0, fontsize=11, edge=COLORS[c],
                            textcolor='black' if done else '#888888')
                    elif col == 2:
                        keeps = name == 'replicated' or c == owner[d]
                        box(ax, x, y, w, h, 'm, v' if keeps else '', color=COLORS[c] if keeps else 'white',
                            alpha=0.55 if keeps else 1.0, fontsize=11, edge=COLORS[c] if keeps else '#cccccc')
                    else:
                        box(ax, x, y, w, h, 'new', color=COLORS[c], alpha=0.55, fontsize=11, edge=COLORS[c])
            ax.set_xlim(-0.9 if col == 0 else -0.1, k * px)
            ax.set_ylim(-0.2, k * py)
        axes[row][0].text(-0.9, k * py + 0.55, f'{name} step', fontsize=14, fontweight='bold', ha='left')
    fig.suptitle(f'one optimizer step on k = {k} devices: columns of a panel are the {k} chunks of the flat '
                 'array; Σ = summed over all devices;\nsharded: device i keeps the Adam state (m, v) '
                 f'of one chunk only, 1/{k} of the replicated state, and the wire carries the same bytes',
                 fontsize=12, y=1.04)
    save(fig, 'dp-sharded-step.svg')


def four_moves():
    """The four moves of one data-parallel step on two devices, left to right: split the batch,
    forward and backward on every device with its own replica, allreduce the gradients, the same
    update everywhere. Colours are the phase colours of notebook 05's timeline (helpers.plot), and
    every box is also labelled, so nothing depends on colour alone."""
    blue, orange, red, green = 'tab:blue', 'tab:orange', 'tab:red', 'tab:green'
    fig, ax = plt.subplots(figsize=(12, 4.4))
    ax.set_xlim(-0.2, 15.6)
    ax.set_ylim(-1.0, 5.9)
    ax.axis('off')
    lanes = {0: 3.3, 1: 0.6}                                   # y of each device's row of boxes
    for d, y in lanes.items():
        box(ax, 2.75, y - 0.3, 12.8, 1.75, '', color='#f3f3f3', edge='#bbbbbb')
        ax.text(2.85, y + 1.2, f'device {d}: its own copy of the weights W', ha='left', va='center',
                fontsize=12, style='italic')
    titles = [(1.1, '1. split'), (7.0, '2. forward + backward'), (10.6, '3. allreduce'), (14.0, '4. same update')]
    for x, t in titles:
        ax.text(x, 5.6, t, ha='center', va='center', fontsize=14, weight='bold')
    # 1. split: the batch on the left, one shard per device
    box(ax, 0.0, 1.2, 2.2, 2.6, 'batch\nof B\nexamples', color='#dddddd', fontsize=13)
    for d, y in lanes.items():
        box(ax, 3.0, y, 1.5, 0.9, f'shard {d}', color='#dddddd', fontsize=12)
        arrow(ax, 2.2, 2.5, 3.0, y + 0.45, lw=1.5)
    # 2. forward, then backward, on each device: its shard's gradient
    for d, y in lanes.items():
        box(ax, 4.8, y, 1.6, 0.9, 'forward', color=blue, alpha=0.35, fontsize=12)
        box(ax, 6.7, y, 1.6, 0.9, 'backward', color=orange, alpha=0.45, fontsize=12)
        box(ax, 8.6, y, 0.8, 0.9, f'g{d}', color=orange, alpha=0.45, fontsize=14)
        for x0, x1 in ((4.5, 4.8), (6.4, 6.7), (8.3, 8.6)):
            arrow(ax, x0, y + 0.45, x1, y + 0.45, lw=1.5)
    # 3. allreduce: both gradients in, their sum out to both devices
    box(ax, 9.8, 1.75, 1.6, 1.5, 'g0 + g1', color=red, alpha=0.3, fontsize=14)
    for d, y in lanes.items():
        mid = 2.5 + (0.4 if d == 0 else -0.4)
        arrow(ax, 9.4, y + 0.45, 9.8, mid, color=red, lw=1.5)
        box(ax, 11.8, y, 0.8, 0.9, 'g', color=red, alpha=0.3, fontsize=14)
        arrow(ax, 11.4, mid, 11.8, y + 0.45, color=red, lw=1.5)
    # 4. the same update on every device: the copies stay identical
    for d, y in lanes.items():
        box(ax, 12.9, y, 2.5, 0.9, 'W -= lr / B * g', color=green, alpha=0.35, fontsize=13)
        arrow(ax, 12.6, y + 0.45, 12.9, y + 0.45, lw=1.5)
    ax.text(7.7, -0.6, 'after the allreduce every device holds the same sum g of the shard gradients, '
            'so the same update\nkeeps the copies of W identical, to the last bit', ha='center', va='center',
            fontsize=12)
    save(fig, 'dp-four-moves.svg')


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
    overlap_buckets()
    sharded_step()
    four_moves()
    store_placement()
