"""Draw the static diagrams of notebooks 02-04 into img/ (reproducible: same bytes every run).

    .venv/bin/python img/make_figures_core.py

- dp-data-vs-model.svg  notebook 02: data parallelism vs model parallelism
- dp-batch-split.svg    notebook 03: even, uneven and weighted splits of a batch
- dp-ring-steps.svg     notebook 04: reduce-scatter and all-gather steps of ring allreduce, k = 4
- dp-naive-vs-ring.svg  notebook 04: who sends what to whom in the naive and the ring allreduce
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
    ax.set_title(title, fontsize=10)
    xs = [0.5 + d * 3 for d in range(2)]
    for d, x in enumerate(xs):
        box(ax, x, 0.3, 2.2, 3.6, '', color='#f3f3f3')
        ax.text(x + 1.1, 4.1, f'device {d}', ha='center')
    return xs


def data_vs_model():
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.6))
    # Data parallelism: the whole model on each device, a shard of the batch each.
    ax = axes[0]
    for d, x in enumerate(two_devices(ax, 'data parallelism\n(whole model on every device, batch split)')):
        for j, name in enumerate(['layer 1', 'layer 2', 'layer 3']):
            box(ax, x + 0.3, 2.9 - j * 0.9, 1.6, 0.6, name, color=COLORS[j], alpha=0.35)
        box(ax, x + 0.3, 0.45, 1.6, 0.45, f'shard {d} of batch', color=COLORS[4 + d], alpha=0.4, fontsize=8)
        arrow(ax, x + 1.1, 0.9, x + 1.1, 1.1)
    arrow(ax, 2.7, 2.2, 3.5, 2.2, color=COLORS[3], style='<|-|>')
    ax.text(3.1, 2.45, 'allreduce\ngradients', ha='center', fontsize=8, color=COLORS[3])
    ax.set_xlim(0, 6.2)
    ax.set_ylim(0, 4.6)
    ax.axis('off')
    # Model parallelism: layers on different devices, the whole batch flows through both.
    ax = axes[1]
    two_devices(ax, 'model parallelism\n(layers split, whole batch on each)')
    box(ax, 0.8, 2.9, 1.6, 0.6, 'layer 1', color=COLORS[0], alpha=0.35)
    box(ax, 0.8, 2.0, 1.6, 0.6, 'layer 2', color=COLORS[1], alpha=0.35)
    box(ax, 3.8, 2.0, 1.6, 0.6, 'layer 3', color=COLORS[2], alpha=0.35)
    box(ax, 0.8, 0.45, 1.6, 0.45, 'whole batch', color=COLORS[4], alpha=0.4, fontsize=8)
    arrow(ax, 2.4, 2.3, 3.8, 2.3, color=COLORS[3])
    ax.text(3.1, 2.55, 'activations', ha='center', fontsize=8, color=COLORS[3])
    arrow(ax, 3.8, 2.05, 2.4, 2.05, color=COLORS[3])
    ax.text(3.1, 1.65, 'gradients', ha='center', fontsize=8, color=COLORS[3])
    ax.set_xlim(0, 6.2)
    ax.set_ylim(0, 4.6)
    ax.axis('off')
    save(fig, 'dp-data-vs-model.svg')


def batch_split():
    rows = [('even, n=12, k=4', [3, 3, 3, 3]),
            ('uneven, n=10, k=4 (Gluon: even_split=False)', [3, 3, 2, 2]),
            ('weighted [3, 1], n=10, k=2', [8, 2])]
    fig, ax = plt.subplots(figsize=(7.5, 2.6))
    for r, (label, sizes) in enumerate(rows):
        y = 2.2 - r * 1.0
        ax.text(0, y + 0.55, label, fontsize=9)
        x, example = 0, 0
        for d, s in enumerate(sizes):
            for e in range(s):
                box(ax, x + e * 0.5, y, 0.5, 0.4, str(example), color=COLORS[d], alpha=0.45, fontsize=7)
                example += 1
            ax.text(x + s * 0.25, y - 0.2, f'device {d}', ha='center', fontsize=7, color=COLORS[d])
            x += s * 0.5 + 0.15
    ax.set_xlim(-0.1, 7.0)
    ax.set_ylim(-0.1, 3.0)
    ax.axis('off')
    save(fig, 'dp-batch-split.svg')


def ring_steps(k=4):
    """Each panel: k devices (rows) x k chunks (columns). A cell's label lists the devices whose
    contribution it holds; arrows show what is sent in the next step."""
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
    n = len(panels)
    cols = 4
    rows_ = -(-n // cols)
    fig, axes = plt.subplots(rows_, cols, figsize=(3.0 * cols, 2.7 * rows_))
    for ax in axes.flat:
        ax.axis('off')
    for ax, (title, state, sends) in zip(axes.flat, panels):
        ax.set_title(title, fontsize=9)
        for d in range(k):
            ax.text(-0.15, k - 1 - d + 0.3, f'dev {d}', ha='right', va='center', fontsize=8)
            for c in range(k):
                s = state[d][c]
                full = len(s) == k
                label = 'Σ' if full else '+'.join(str(x) for x in sorted(s))
                box(ax, c, k - 1 - d, 0.9, 0.6, label, color=COLORS[c] if full else 'white',
                    alpha=0.55 if full else 1.0, fontsize=7, edge=COLORS[c])
        for i, c in sends:
            j = (i + 1) % k
            y0, y1 = k - 1 - i + 0.05, k - 1 - j + 0.55
            if j == 0:   # wrap-around: from the last device back to the first, drawn on the side
                arrow(ax, c + 0.92, k - 1 - i + 0.3, c + 0.92, k - 1 - j + 0.3, color='crimson',
                      lw=1.0, rad=-0.35)
            else:
                arrow(ax, c + 0.6, y0, c + 0.6, y1, color='crimson', lw=1.0)
        ax.set_xlim(-0.9, k + 0.3)
        ax.set_ylim(-0.3, k + 0.1)
        ax.set_aspect('equal')
    fig.suptitle(f'ring allreduce on k = {k} devices: columns are the k chunks of the array; '
                 'a cell lists whose values it holds (Σ = all); red: sent in the next step',
                 fontsize=9)
    save(fig, 'dp-ring-steps.svg')


def naive_vs_ring(k=4):
    """Two panels: the naive allreduce (everyone to device 0 and back) and the ring (each device to
    its right neighbour), with the bytes each device sends for an array of N bytes."""
    import math
    fig, axes = plt.subplots(1, 2, figsize=(9.5, 4.2))
    pos = [(math.cos(math.pi / 2 - 2 * math.pi * d / k) * 1.6, math.sin(math.pi / 2 - 2 * math.pi * d / k) * 1.6)
           for d in range(k)]

    def devices(ax):
        for d, (x, y) in enumerate(pos):
            ax.add_patch(plt.Circle((x, y), 0.42, facecolor=COLORS[d], alpha=0.35, edgecolor='black'))
            ax.text(x, y, f'dev {d}', ha='center', va='center', fontsize=10)
        ax.set_xlim(-2.6, 2.6)
        ax.set_ylim(-2.9, 2.4)
        ax.set_aspect('equal')
        ax.axis('off')

    ax = axes[0]
    ax.set_title('naive: reduce to device 0, then broadcast', fontsize=11)
    devices(ax)
    x0, y0 = pos[0]
    for d in range(1, k):
        x, y = pos[d]
        arrow(ax, x, y, x0, y0, color=COLORS[3], rad=0.15, lw=1.4, shrink=22)    # reduce
        arrow(ax, x0, y0, x, y, color=COLORS[0], rad=0.15, lw=1.4, shrink=22)    # broadcast
    ax.text(-2.5, 2.1, '1. reduce', color=COLORS[3], fontsize=10)
    ax.text(-2.5, 1.75, '2. broadcast', color=COLORS[0], fontsize=10)
    ax.text(0, -2.45, f'device 0 sends {k - 1}N and receives {k - 1}N,\none after the other; the others send N',
            ha='center', fontsize=10)
    ax = axes[1]
    ax.set_title('ring: each device sends to its right neighbour', fontsize=11)
    devices(ax)
    for d in range(k):
        (x, y), (x1, y1) = pos[d], pos[(d + 1) % k]
        arrow(ax, x, y, x1, y1, color=COLORS[2], rad=-0.25, lw=1.6, shrink=22)
    ax.text(0, -2.45, f'2(k-1) = {2 * (k - 1)} steps; in each, every device sends\none chunk of N/k at the same time: '
            f'2(k-1)/k N = {2 * (k - 1) / k:g}N each', ha='center', fontsize=10)
    save(fig, 'dp-naive-vs-ring.svg')


if __name__ == '__main__':
    naive_vs_ring()
    data_vs_model()
    batch_split()
    ring_steps()
