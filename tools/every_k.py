"""Run every notebook and worked solution at k = 1, 2, ..., 8 CPU stand-in devices and report, per
notebook and per k, whether it passed under nbval (``make every-k``).

    python -m tools.every_k                           # k = 1..8, every notebook and solution
    python -m tools.every_k --k 1 3 5 notebooks/06-*.ipynb
    python -m tools.every_k --jobs 2                  # two values of k at a time

The series promises that every notebook runs unchanged for any number of devices (docs/maintainers.md,
"Any number of devices"): outputs that depend on k are in cells tagged ``nbval-ignore-output`` whose
assertions carry the claim, and a cell that does not apply at some k says so. This tool checks the
promise: for each k it runs ``pytest --nbval`` (the flags of ``make test``) with
``MXDP_DEVICES=cpu:k``, every cell bounded by ``--cell-timeout`` seconds (a hang is a failure, never a
stall), and prints a table with one row per notebook and one column per k: ``ok``, or the failing
cells. The junit files and logs stay in ``build/every-k/``. Exits 1 if anything failed.
"""
import argparse
import concurrent.futures
import os
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

from tools import nb as nbtools

OUT = os.path.join(nbtools.ROOT, 'build', 'every-k')


def run(k, paths, cell_timeout):
    """Run ``paths`` under nbval at ``cpu:k``; return ``({notebook: [failed cell ids]}, seconds)``."""
    junit = os.path.join(OUT, f'k{k}.xml')
    log = os.path.join(OUT, f'k{k}.log')
    env = {**os.environ, 'MXDP_DEVICES': f'cpu:{k}'}
    command = [sys.executable, '-m', 'pytest', '-q', '-p', 'no:randomly', '--nbval', '--nbval-current-env',
               '--sanitize-with', 'tests/sanitize.cfg', f'--nbval-cell-timeout={cell_timeout}',
               f'--junitxml={junit}'] + [nbtools.rel(p) for p in paths]
    start = time.perf_counter()
    with open(log, 'w') as f:
        subprocess.run(command, cwd=nbtools.ROOT, env=env, stdout=f, stderr=subprocess.STDOUT)
    seconds = time.perf_counter() - start
    failed = {nbtools.rel(p): [] for p in paths}
    if not os.path.exists(junit):
        return {p: ['pytest did not run (see the log)'] for p in failed}, seconds
    by_class = {p.replace('/', '.'): p for p in failed}  # junit's classname of notebooks/x.ipynb::Cell 3
    for case in ET.parse(junit).getroot().iter('testcase'):
        notebook = by_class.get(case.get('classname', ''))
        if notebook is not None and (case.find('failure') is not None or case.find('error') is not None):
            failed[notebook].append(case.get('name', '').replace('Cell ', 'cell '))
    return failed, seconds


def table(results, ks):
    rows = sorted({nb for failed, _ in results.values() for nb in failed})
    width = max(len(os.path.basename(r)) for r in rows)
    lines = [f'{"notebook":{width}s} ' + ' '.join(f'{"k=" + str(k):>8s}' for k in ks)]
    for nb in rows:
        cells = []
        for k in ks:
            bad = results[k][0].get(nb, [])
            cells.append(f'{"ok" if not bad else ",".join(c.split()[-1] for c in bad)[:8]:>8s}')
        lines.append(f'{os.path.basename(nb):{width}s} ' + ' '.join(cells))
    lines.append(f'{"minutes":{width}s} ' + ' '.join(f'{results[k][1] / 60:8.1f}' for k in ks))
    return '\n'.join(lines)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('notebooks', nargs='*', help='default: every notebook and worked solution')
    p.add_argument('--k', type=int, nargs='+', default=list(range(1, 9)), help='device counts (default 1..8)')
    p.add_argument('--jobs', type=int, default=1, help='values of k run at the same time (default 1)')
    # make test's bound (the Makefile's CELL_TIMEOUT): 600 s, this tool's old default, was exceeded by
    # notebook 05's eight training runs at k = 5 and 6 on a 2-core machine running four other suites
    p.add_argument('--cell-timeout', type=int, default=1200,
                   help="seconds a cell may run (a hang fails); default 1200, make test's")
    args = p.parse_args(argv)
    if any(k < 1 for k in args.k):
        p.error('--k: every device count must be at least 1')
    if args.jobs < 1:
        p.error('--jobs must be at least 1')
    paths = [os.path.abspath(x) for x in args.notebooks] or nbtools.numbered() + nbtools.solutions()
    os.makedirs(OUT, exist_ok=True)
    results = {}
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        futures = {pool.submit(run, k, paths, args.cell_timeout): k for k in args.k}
        for future in concurrent.futures.as_completed(futures):
            k = futures[future]
            results[k] = future.result()
            bad = sum(bool(v) for v in results[k][0].values())
            print(f'k={k}: {len(paths) - bad} of {len(paths)} notebooks passed in {results[k][1] / 60:.1f} min '
                  f'(log: {nbtools.rel(os.path.join(OUT, f"k{k}.log"))})', flush=True)
    print()
    print(table(results, sorted(results)))
    return 1 if any(v for failed, _ in results.values() for v in failed.values()) else 0


if __name__ == '__main__':
    sys.exit(main())
