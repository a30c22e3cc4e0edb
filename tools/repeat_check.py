"""Run the notebooks several times and report every cell whose assertion or compared output changed.

    python -m tools.repeat_check [-n 3] [--hog] [notebooks/NN-*.ipynb ...]    (make repeat N=3 HOG=1)

Each run executes every notebook from the top in a fresh kernel, exactly as nbval does (same
kernel, working directory notebooks/), into a scratch copy: the committed notebooks are not touched.
For every code cell it records whether it raised (an assertion that failed) and its text output,
sanitized with tests/sanitize.cfg as nbval does. It then reports, per notebook:

* cells that raised in some run (with the error): an assertion that does not hold every time;
* cells compared by nbval (not tagged ``nbval-ignore-output``) whose sanitized output differs from
  the committed one in some run: ``make test`` would fail on them;
* cells tagged ``nbval-ignore-output`` whose output varied between runs, with the range of every
  number that changed: the run-to-run variation the cell's assertions must tolerate.

``--hog`` starts a busy-loop process pinned to CPU 0 for the whole check (on a 2-core machine: one
core kept busy), to find timing assumptions that only hold on a quiet machine. Exits 1 if any cell
raised or a compared output differed.
"""
import argparse
import configparser
import os
import re
import subprocess
import sys
import tempfile
import time

from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

from tools import nb as nbtools

ROOT = nbtools.ROOT
NUMBER = re.compile(r'-?\d+(?:\.\d+)?(?:e[-+]?\d+)?')


def sanitizers():
    cfg = configparser.ConfigParser()
    cfg.read(os.path.join(ROOT, 'tests', 'sanitize.cfg'))
    return [(re.compile(cfg[s]['regex']), cfg[s]['replace']) for s in cfg.sections()]


def text_of(cell, rules):
    parts = []
    for out in cell.get('outputs', []):
        if out.output_type == 'stream':
            parts.append(out.text)
        elif out.output_type in ('execute_result', 'display_data') and 'image/png' not in out.data:
            parts.append(out.data.get('text/plain', ''))
        elif out.output_type == 'error':
            parts.append(f'{out.ename}: {out.evalue}')
    text = ''.join(parts)
    for regex, replace in rules:
        text = regex.sub(replace, text)
    return text


def run_once(path, timeout):
    """Execute a copy of the notebook; return ``(cells, seconds)``: per code cell ``(source, tags,
    text output, error or None)``. Execution goes on past a failing cell, as nbval does."""
    nb = nbtools.read(path)
    client = NotebookClient(nb, timeout=timeout, kernel_name='python3', allow_errors=True,
                            resources={'metadata': {'path': os.path.dirname(path)}})
    start = time.perf_counter()
    try:
        client.execute()
    except CellExecutionError:
        pass
    return nb, time.perf_counter() - start


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('notebooks', nargs='*')
    p.add_argument('-n', type=int, default=3, help='runs per notebook')
    p.add_argument('--hog', action='store_true', help='keep CPU 0 busy during the runs')
    p.add_argument('--timeout', type=int, default=1800, help='seconds per cell')
    args = p.parse_args(argv)
    paths = args.notebooks or nbtools.numbered() + nbtools.solutions()
    rules = sanitizers()
    hog = None
    if args.hog:
        hog = subprocess.Popen([sys.executable, '-c', 'import os\nos.sched_setaffinity(0, {0})\nwhile True: pass'])
        print('busy loop on CPU 0: pid', hog.pid, flush=True)
    bad = False
    try:
        for path in paths:
            path = os.path.abspath(path)
            committed = nbtools.read(path)
            code = [c for c in committed.cells if c.cell_type == 'code']
            runs, walls = [], []
            for i in range(args.n):
                with tempfile.TemporaryDirectory():
                    nb, wall = run_once(path, args.timeout)
                runs.append([c for c in nb.cells if c.cell_type == 'code'])
                walls.append(wall)
            name = nbtools.rel(path)
            print(f'\n{name}: {args.n} runs, wall time ' + ', '.join(f'{w:.0f} s' for w in walls), flush=True)
            for j, cell in enumerate(code):
                ignored = 'nbval-ignore-output' in cell.metadata.get('tags', [])
                errors = [next((o for o in r[j].outputs if o.output_type == 'error'), None) for r in runs]
                texts = [text_of(r[j], rules) for r in runs]
                first = cell.source.strip().splitlines()[0][:60] if cell.source.strip() else ''
                if any(errors):
                    bad = True
                    e = next(e for e in errors if e)
                    print(f'  cell {j} [{first}]: RAISED in {sum(map(bool, errors))}/{args.n} runs: '
                          f'{e.ename}: {e.evalue[:200]}')
                elif not ignored and any(t != text_of(cell, rules) for t in texts):
                    bad = True
                    print(f'  cell {j} [{first}]: compared output differs from the committed one in '
                          f'{sum(t != text_of(cell, rules) for t in texts)}/{args.n} runs')
                elif ignored and len(set(texts)) > 1:
                    numbers = [NUMBER.findall(t) for t in texts]
                    ranges = []
                    if len({len(n) for n in numbers}) == 1:
                        for values in zip(*numbers):
                            if len(set(values)) > 1:
                                v = [float(x) for x in values]
                                ranges.append(f'{min(v):g}..{max(v):g}')
                    print(f'  cell {j} [{first}]: output varies (not compared); changing numbers: '
                          + (', '.join(ranges[:8]) + (' ...' if len(ranges) > 8 else '') if ranges else 'text differs'))
    finally:
        if hog:
            hog.kill()
            hog.wait()
    print('\nresult:', 'cells changed (see above)' if bad else 'every assertion held and every compared output matched')
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
