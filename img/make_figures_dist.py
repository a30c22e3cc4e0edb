"""Draw the parameter-server diagram of notebook 08 into img/ (reproducible: same bytes every run).

    .venv/bin/python img/make_figures_dist.py

- dp-parameter-server.svg  notebook 08: scheduler, servers and workers, and who talks to whom
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_figures_core import COLORS, arrow, box, plt, save  # noqa: E402

PUSH, PULL, CONTROL = COLORS[3], COLORS[0], '#8c8c8c'


def parameter_server(num_workers=3, num_servers=2):
    fig, ax = plt.subplots(figsize=(9.5, 5.2))
    # The scheduler: everybody registers with it first; afterwards it only runs barriers.
    box(ax, 4.0, 6.6, 2.6, 0.8, 'scheduler', color='#eeeeee', fontsize=11)
    ax.text(6.8, 7.0, 'DMLC_PS_ROOT_URI : PORT\nevery process registers here first;\nranks, barriers',
            fontsize=9, va='center', color=CONTROL)
    # Servers: each holds a slice of the keys, sums the pushes, runs the optimizer.
    servers = [1.5 + i * 4.6 for i in range(num_servers)]
    for i, x in enumerate(servers):
        box(ax, x, 4.3, 3.0, 1.3, '', color=COLORS[2], alpha=0.25)
        ax.text(x + 1.5, 5.25, f'server {i}', ha='center', fontsize=11)
        ax.text(x + 1.5, 4.7, 'its keys: sum the pushes,\nupdate the weights', ha='center',
                fontsize=8.5)
        arrow(ax, x + 1.5, 5.6, 5.3 + (i - 0.5) * 0.6, 6.6, color=CONTROL, style='<|-|>', lw=0.8)
    # Workers: a copy of the network, a shard of the data, one or more devices each.
    workers = [0.4 + j * 3.45 for j in range(num_workers)]
    for j, x in enumerate(workers):
        box(ax, x, 0.4, 2.9, 1.9, '', color='#f3f3f3')
        ax.text(x + 1.45, 2.0, f'worker {j}', ha='center', fontsize=11)
        for d in range(2):
            box(ax, x + 0.2 + d * 1.3, 0.95, 1.2, 0.6, f'device {d}', color=COLORS[4], alpha=0.3,
                fontsize=8.5)
        ax.text(x + 1.45, 0.6, f'data shard {j}', ha='center', fontsize=8.5)
        for i, sx in enumerate(servers):           # every worker talks to every server
            start, end = x + 1.1 + 0.35 * i, sx + 0.6 + 0.45 * j
            arrow(ax, start, 2.3, end, 4.3, color=PUSH, lw=1.1)
            arrow(ax, end + 0.2, 4.3, start + 0.2, 2.3, color=PULL, lw=1.1)
    ax.plot([0.4, 0.1, 0.1, 3.6], [1.35, 1.35, 7.0, 7.0], color=CONTROL, lw=0.8)   # workers too
    arrow(ax, 3.6, 7.0, 4.0, 7.0, color=CONTROL, lw=0.8)
    ax.text(0.2, 3.0, 'every worker', fontsize=8.5, color=CONTROL, rotation=90)
    ax.plot([], [], color=PUSH, label='push: gradients (summed over the worker\'s devices first)')
    ax.plot([], [], color=PULL, label='pull: new weights')
    ax.plot([], [], color=CONTROL, label='control: start-up, barriers')
    ax.legend(loc='lower center', bbox_to_anchor=(0.5, -0.16), ncol=3, frameon=False, fontsize=9)
    ax.text(10.8, 1.3, 'workers never\ntalk to each other', fontsize=9, va='center', style='italic')
    ax.set_xlim(0, 12.5)
    ax.set_ylim(0, 7.6)
    ax.axis('off')
    save(fig, 'dp-parameter-server.svg')


if __name__ == '__main__':
    parameter_server()
