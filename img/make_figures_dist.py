"""Draw the parameter-server diagram of notebook 08 into img/ (reproducible: same bytes every run).

    .venv/bin/python img/make_figures_dist.py

- dp-parameter-server.svg  notebook 08: scheduler, servers and workers, and who talks to whom
  (its text 12 pt and larger, to be read when projected)
- dp-two-machines.svg      notebook 09: two "machines" (network namespaces) joined by a capped veth pair,
  the parameter server's processes placed on them, and what crosses the cable in one step
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_figures_core import COLORS, arrow, box, plt, save  # noqa: E402

PUSH, PULL, CONTROL = COLORS[3], COLORS[0], '#8c8c8c'


def parameter_server(num_workers=3, num_servers=2):
    fig, ax = plt.subplots(figsize=(9, 5.8))
    # The scheduler: everybody registers with it first; afterwards it only runs barriers.
    box(ax, 4.2, 6.8, 2.6, 0.8, 'scheduler', color='#eeeeee', fontsize=14)
    ax.text(7.0, 7.2, 'DMLC_PS_ROOT_URI : PORT\nevery process registers here;\nranks, barriers',
            fontsize=12, va='center', color='#666666')
    # Servers: each holds a slice of the keys, sums the pushes, runs the optimizer.
    servers = [1.0 + i * 5.0 for i in range(num_servers)]
    for i, x in enumerate(servers):
        box(ax, x, 4.2, 3.8, 1.6, '', color=COLORS[2], alpha=0.25)
        ax.text(x + 1.9, 5.4, f'server {i}', ha='center', va='center', fontsize=14)
        ax.text(x + 1.9, 4.7, 'its keys: sums pushes,\nupdates weights', ha='center', va='center',
                fontsize=12)
        arrow(ax, x + 1.9, 5.8, 5.5 + (i - 0.5) * 0.6, 6.8, color=CONTROL, style='<|-|>', lw=0.8)
    # Workers: a copy of the network, a shard of the data, one or more devices each.
    workers = [0.4 + j * 3.45 for j in range(num_workers)]
    for j, x in enumerate(workers):
        box(ax, x, 0.3, 3.1, 2.0, '', color='#f3f3f3')
        ax.text(x + 1.55, 1.95, f'worker {j}', ha='center', va='center', fontsize=14)
        for d in range(2):
            box(ax, x + 0.15 + d * 1.45, 0.95, 1.35, 0.65, f'device {d}', color=COLORS[4], alpha=0.3,
                fontsize=12)
        ax.text(x + 1.55, 0.6, f'data shard {j}', ha='center', va='center', fontsize=12)
        for i, sx in enumerate(servers):           # every worker talks to every server
            start, end = x + 1.2 + 0.35 * i, sx + 0.7 + 0.5 * j
            arrow(ax, start, 2.3, end, 4.2, color=PUSH, lw=1.1)
            arrow(ax, end + 0.2, 4.2, start + 0.2, 2.3, color=PULL, lw=1.1)
    ax.plot([0.4, 0.1, 0.1, 3.8], [1.3, 1.3, 7.2, 7.2], color=CONTROL, lw=0.8)   # workers too
    arrow(ax, 3.8, 7.2, 4.2, 7.2, color=CONTROL, lw=0.8)
    ax.text(-0.25, 3.3, 'every worker', fontsize=12, color='#666666', rotation=90, va='center')
    ax.plot([], [], color=PUSH, lw=2, label='push: gradients (a worker sums its devices first)')
    ax.plot([], [], color=PULL, lw=2, label='pull: new weights')
    ax.plot([], [], color=CONTROL, lw=2, label='control: start-up, barriers')
    ax.legend(loc='upper left', bbox_to_anchor=(0.0, 0.02), ncol=2, frameon=False, fontsize=12)
    ax.text(10.9, 1.3, 'workers never\ntalk to\neach other', fontsize=12, va='center', style='italic')
    ax.set_xlim(0, 12.5)
    ax.set_ylim(0, 7.8)
    ax.axis('off')
    save(fig, 'dp-parameter-server.svg')


def two_machines():
    """Notebook 09, part 2: scheduler, server 0 and worker 0 on machine a, worker 1 on machine b; only
    worker 1's push and pull cross the veth pair, whose every end is capped by tc and counted by the kernel."""
    fig, ax = plt.subplots(figsize=(10.5, 4.4))
    for x, w, name, addr in ((0.2, 5.3, 'a', '10.77.0.1'), (7.9, 3.4, 'b', '10.77.0.2')):
        box(ax, x, 0.25, w, 4.2, '', color='#f3f3f3')
        ax.text(x + w / 2, 4.05, f'machine {name}', ha='center', va='center', fontsize=15, weight='bold')
        ax.text(x + w / 2, 3.6, f'namespace …-{name}, {addr}', ha='center', va='center', fontsize=12)
    box(ax, 0.5, 2.55, 1.9, 0.7, 'scheduler', color='#e0e0e0', fontsize=13)
    box(ax, 2.6, 1.65, 1.9, 0.7, 'server 0', color=COLORS[2], alpha=0.35, fontsize=13)
    box(ax, 2.6, 0.5, 1.9, 0.7, 'worker 0', color=COLORS[4], alpha=0.3, fontsize=13)
    box(ax, 9.1, 1.65, 1.9, 0.7, 'worker 1', color=COLORS[4], alpha=0.3, fontsize=13)
    arrow(ax, 3.3, 1.2, 3.3, 1.65, color=PUSH, lw=2)             # worker 0 <-> server 0: a's loopback
    arrow(ax, 3.8, 1.65, 3.8, 1.2, color=PULL, lw=2)
    ax.text(1.45, 0.95, "a's loopback:\nnot on the cable", ha='center', va='center', fontsize=12,
            color='#555555')
    for x in (4.6, 8.0):                                            # the veth pair: one end in each
        box(ax, x, 1.65, 0.8, 0.7, 'veth0', color='white', fontsize=12)
    ax.plot([5.4, 8.0], [2.0, 2.0], color='#8c8c8c', lw=5, solid_capstyle='butt')
    for y, color, (x0, x1) in ((2.2, PUSH, (9.1, 4.5)), (1.8, PULL, (4.5, 9.1))):
        arrow(ax, x0, y, x1, y, color=color, lw=2.5)               # through both ends and the cable
    ax.text(6.7, 2.75, 'a veth pair:\nthe "cable"', ha='center', va='center', fontsize=12)
    ax.text(6.7, 1.0, 'each end capped\n(tc tbf, R bit/s);\nthe kernel counts\nevery byte',
            ha='center', va='center', fontsize=12, color='#555555')
    ax.plot([], [], color=PUSH, lw=2.5, label='push: the gradient, N bytes (N/16 with 2-bit compression)')
    ax.plot([], [], color=PULL, lw=2.5, label='pull: the new weights, N bytes (always float32)')
    ax.legend(loc='upper left', bbox_to_anchor=(0.0, 0.02), ncol=1, frameon=False, fontsize=12)
    ax.set_xlim(0, 11.5)
    ax.set_ylim(0.2, 4.5)
    ax.axis('off')
    save(fig, 'dp-two-machines.svg')


if __name__ == '__main__':
    parameter_server()
    two_machines()
