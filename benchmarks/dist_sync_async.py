"""dist_sync vs dist_async with one slow worker, over several seeds: how long each worker takes and how
accurate its final weights are (notebook 08 plots the stored results).

    .venv/bin/python benchmarks/dist_sync_async.py [--delay 0.03] [--seeds 0,1,2,3,4] [--out FILE]

Runs helpers.dist_train as a local parameter-server job (2 workers, 1 server, loopback), one epoch
of 93 steps of 64 images per worker at learning rate 0.3 (notebook 08's settings), worker 1 sleeping
``--delay`` seconds after every step, with dist_sync and then with dist_async for each seed in turn
(so that a busy moment of the machine hits both). A seed fixes the initial weights and each worker's
data order; a dist_async run also depends on the order in which the gradients reach the server, so
two runs of one seed differ too. Prints each worker's training time and test accuracy, then the
median and range over the seeds, and writes every run to a JSON file (default
``benchmarks/dist_sync_async.json``, which the repository keeps). Notebook 08 asserts only what holds
on a loaded machine -- in dist_sync the fast worker's step i + 1 ends after the slow worker's sleep
after step i (causality), in dist_async the fast worker ends first -- and reads the spread from here.
"""
import argparse
import os
import statistics
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

from helpers import dist, dist_train
from helpers.scaling import save_results

DEFAULT_OUT = os.path.join(ROOT, 'benchmarks', 'dist_sync_async.json')
SETTINGS = dict(epochs=1, batch_size=64, n_train=12000, lr=0.3, slow_rank=1)   # notebook 08's run


def one_run(kvstore, delay, seed):
    """One job: per rank, its seconds of training, test accuracy and last epoch's training loss."""
    with tempfile.TemporaryDirectory() as out:
        job = dist.run_local_job(dist_train.command(kvstore=kvstore, step_delay=delay, seed=seed, out=out,
                                                    **SETTINGS), timeout=600, echo=False)
        ranks = [{'rank': r['rank'], 'seconds': r['seconds'], 'test_acc': r['test_acc'],
                  'loss': r['epoch_loss'][-1], 'steps': r['steps']} for r in dist_train.read_results(out)]
    return {'kvstore': kvstore, 'seed': seed, 'job_seconds': job.wall_time, 'ranks': ranks}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--delay', type=float, default=0.03)
    p.add_argument('--seeds', default='0,1,2,3,4')
    p.add_argument('--out', default=DEFAULT_OUT)
    args = p.parse_args(argv)
    result = {'settings': dict(SETTINGS, delay=args.delay, seeds=args.seeds, num_workers=2, num_servers=1),
              'load_average_at_start': os.getloadavg(), 'runs': []}     # a busy machine slows every job
    start = time.perf_counter()
    for seed in (int(s) for s in args.seeds.split(',')):
        for kvstore in ('dist_sync', 'dist_async'):         # in turn, so a busy moment hits both
            run = one_run(kvstore, args.delay, seed)
            result['runs'].append(run)
            print(f'seed {seed} {kvstore:10s}: ' + ', '.join(
                f"rank {r['rank']} {r['seconds']:4.1f} s acc {r['test_acc']:.3f}" for r in run['ranks']), flush=True)
    for kvstore in ('dist_sync', 'dist_async'):
        runs = [r['ranks'] for r in result['runs'] if r['kvstore'] == kvstore]
        for rank in (0, 1):
            for key, unit in (('seconds', ' s'), ('test_acc', '')):
                xs = [ranks[rank][key] for ranks in runs]
                print(f'{kvstore:10s} rank {rank} {key:8s}: median {statistics.median(xs):.3f}{unit}, '
                      f'range {min(xs):.3f} to {max(xs):.3f}')
    print(f'wrote {args.out} ({save_results(result, args.out, start):.0f} s)')


if __name__ == '__main__':
    main()
