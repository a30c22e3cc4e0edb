"""Draw the parameter-server diagram of notebook 08 into img/ (reproducible: same bytes every run).

    .venv/bin/python img/make_figures_dist.py

- dp-parameter-server.svg  notebook 08: scheduler, servers and workers, and who talks to whom
  (its text 12 pt and larger, to be read when projected)
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


if __name__ == '__main__':
    parameter_server()
