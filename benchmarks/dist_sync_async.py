"""dist_sync vs dist_async with one slow worker: how long each worker takes (notebook 08).

    .venv/bin/python benchmarks/dist_sync_async.py [--delay 0.03] [--repeat 2]

Runs helpers.dist_train as a local parameter-server job (2 workers, 1 server, loopback), one epoch
of 93 steps of 64 images per worker, worker 1 sleeping ``--delay`` seconds after every step, first
with dist_sync and then with dist_async, ``--repeat`` times in turn. Prints each worker's training
time and the ratio fast/slow. Notebook 08 asserts only what holds on a loaded machine -- in
dist_sync the fast worker's step i + 1 ends after the slow worker's sleep after step i (causality),
in dist_async the fast worker ends first -- and leaves the ratios to this script: with dist_sync
the ratio is about 1 (the fast worker waits), with dist_async about (compute) / (compute + delay).
"""
import argparse
import os
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from helpers import dist, dist_train  # noqa: E402


def one_run(kvstore, delay):
    """Seconds of training of rank 0 and rank 1 in one job."""
    with tempfile.TemporaryDirectory() as out:
        dist.run_local_job(dist_train.command(kvstore=kvstore, epochs=1, batch_size=64, n_train=12000, lr=0.3,
                                              slow_rank=1, step_delay=delay, out=out), timeout=600, echo=False)
        return [r['seconds'] for r in dist_train.read_results(out)]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--delay', type=float, default=0.03)
    p.add_argument('--repeat', type=int, default=2)
    args = p.parse_args()
    times = {'dist_sync': [], 'dist_async': []}
    for _ in range(args.repeat):
        for kvstore in times:                 # in turn, so a busy moment hits both
            times[kvstore].append(one_run(kvstore, args.delay))
    for kvstore, runs in times.items():
        fast, slow = (statistics.median(r[i] for r in runs) for i in (0, 1))
        print(f'{kvstore:10s}: rank 0 {fast:5.2f} s, slow rank 1 {slow:5.2f} s, fast / slow {fast / slow:.2f}')


if __name__ == '__main__':
    main()
