"""Execute notebooks in place, top to bottom, in the project's environment (what `make execute` runs).

    python -m tools.execute_notebooks                      # every notebook, then every solution, in order
    python -m tools.execute_notebooks notebooks/01-*.ipynb # some of them

The committed outputs of every notebook are produced by this script, with the same kernel and
working directory that nbval uses in `make test`: the notebook's own directory (notebooks/ or
notebooks/solutions/). A cell error stops with a non-zero
exit and leaves the notebook file untouched. Prints each notebook's wall time.
"""
import os
import sys
import time

from nbclient import NotebookClient

from tools import nb as nbtools

CELL_TIMEOUT = int(os.environ.get('CELL_TIMEOUT', '1800'))


def execute(path):
    nb = nbtools.read(path)
    # The kernel runs this very interpreter (the project's venv): same as nbval --nbval-current-env.
    nb.metadata['kernelspec'] = dict(nbtools.KERNELSPEC)
    client = NotebookClient(nb, timeout=CELL_TIMEOUT, kernel_name='python3',
                            resources={'metadata': {'path': os.path.dirname(os.path.abspath(path))}})
    start = time.perf_counter()
    client.execute()
    seconds = time.perf_counter() - start
    for cell in nb.cells:  # keep diffs small: no per-run timestamps
        cell.metadata.pop('execution', None)
    nb.metadata.pop('widgets', None)
    nbtools.write(nb, path)
    return seconds


def main(paths):
    paths = paths or nbtools.numbered() + nbtools.solutions()    # the solutions are committed executed too
    for path in paths:
        print(f'{os.path.basename(path)} ...', end=' ', flush=True)
        print(f'{execute(path):.1f} s', flush=True)


if __name__ == '__main__':
    main(sys.argv[1:])
