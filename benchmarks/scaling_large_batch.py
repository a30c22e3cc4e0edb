"""Large batches, the long version (notebook 09 plots its stored results): LeNet on Fashion-MNIST at
global batches from 64 to 512, each with three learning-rate recipes, and batch 64 at the larger
rates the linear rule gives the larger batches, for the same number of epochs, over several seeds.

    nice -n 10 python benchmarks/scaling_large_batch.py            # the stored run (about an hour here)
    python benchmarks/scaling_large_batch.py --n-train 6000 --epochs 2 --batches 64,1024 --seeds 0 --out /tmp/x.json

Recipes (``helpers.scaling.lr_recipe``): ``fixed`` keeps the base learning rate 0.1 of batch 64
(notebooks 05 and 06); ``linear`` multiplies it by batch / 64 (the linear scaling rule, Goyal et al.
2017, section 2.1); ``warmup`` ramps linearly from 0.1 to that rate over the first epoch (their
section 2.2, which ramps over 5 of 90 epochs). At batch 64 the three are the same run, done once.
``--small-batch-rates`` adds batch 64 at ``fixed`` rates the linear rule gives larger batches (0.4:
batch 256, 0.8: batch 512): the control that tells whether a failure belongs to the batch or to the
rate. Plain SGD, no momentum and no weight decay, as in notebooks 05-08. A seed fixes the initial
weights and the data order; every run is done once per seed of ``--seeds`` (seed by seed, so that an
interrupted run still holds every setting for the seeds it finished). The devices of
``helpers.devices.get_devices()`` (the accuracy of a step does not depend on how many devices share the
batch, up to float rounding).

Writes a JSON file (default ``benchmarks/scaling_large_batch.json``, which the repository keeps) after
every run: the settings, the machine, and one history per run (``helpers.scaling.train_recipe``:
per-epoch loss, test accuracy and seconds; ``diverged`` when a loss stopped being finite; ``seed``).
``--resume`` keeps the runs already in that file and does only the missing ones.
"""
import argparse
import json
import os
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

from helpers.devices import describe, get_devices
from helpers.scaling import RECIPES, save_results, train_recipe

DEFAULT_OUT = os.path.join(ROOT, 'benchmarks', 'scaling_large_batch.json')


def grid(batches, small_batch_rates, base_lr=0.1, base_batch=64):
    """The settings of one seed: ``(recipe, batch, base_lr)`` for every run."""
    runs = []
    for b in batches:
        runs += [(recipe, b, base_lr) for recipe in (RECIPES[:1] if b == base_batch else RECIPES)]
    return runs + [('fixed', base_batch, lr) for lr in small_batch_rates]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--n-train', type=int, default=30000)
    p.add_argument('--n-test', type=int, default=10000)
    p.add_argument('--epochs', type=int, default=5)
    p.add_argument('--batches', default='64,128,256,512')
    p.add_argument('--small-batch-rates', default='0.4,0.8', help='batch 64 at these fixed rates too')
    p.add_argument('--seeds', default='0,1,2')
    p.add_argument('--out', default=DEFAULT_OUT)
    p.add_argument('--resume', action='store_true', help='keep the runs already in --out')
    args = p.parse_args(argv)
    devices = get_devices()
    batches = [int(b) for b in args.batches.split(',')]
    rates = [float(r) for r in args.small_batch_rates.split(',') if r]
    seeds = [int(s) for s in args.seeds.split(',')]
    done, spent = [], 0.0
    if args.resume and os.path.exists(args.out):
        with open(args.out) as f:
            old = json.load(f)
        done, spent = old['runs'], old.get('wall_seconds', 0.0)
    result = {'settings': dict(vars(args), base_lr=0.1, base_batch=64, warmup_epochs=1,
                               devices=describe(devices)),
              'runs': done}
    start = time.perf_counter() - spent
    for seed in seeds:
        for recipe, b, base_lr in grid(batches, rates):
            if any((r['seed'], r['recipe'], r['batch'], r['base_lr']) == (seed, recipe, b, base_lr) for r in done):
                continue
            h = train_recipe(recipe, b, devices, args.epochs, args.n_train, args.n_test, base_lr=base_lr, seed=seed)
            result['runs'].append(dict(h, seed=seed, base_lr=base_lr))
            print(f'seed {seed} batch {b:5d} {recipe:7s} lr {h["lr"]:5.2f}: test acc '
                  + ' '.join(f'{a:.3f}' for a in h['test_acc'])
                  + (' (diverged)' if h['diverged'] else '') + f'  [{sum(h["seconds"]):.0f} s]', flush=True)
            save_results(result, args.out, start)
    print(f'wrote {args.out} ({save_results(result, args.out, start) / 60:.0f} min)')


if __name__ == '__main__':
    main()
