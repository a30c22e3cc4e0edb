"""Large batches, the long version (notebook 09 plots its stored results): LeNet on Fashion-MNIST at
global batches from 64 to 4096, each with three learning-rate recipes, for the same number of epochs.

    python benchmarks/scaling_large_batch.py                      # the stored run (about an hour here)
    python benchmarks/scaling_large_batch.py --n-train 6000 --epochs 2 --batches 64,1024 --out /tmp/x.json

Recipes (``helpers.scaling.lr_recipe``): ``fixed`` keeps the base learning rate 0.1 of batch 64
(notebooks 05 and 06); ``linear`` multiplies it by batch / 64 (the linear scaling rule, Goyal et al.
2017, section 2.1); ``warmup`` ramps linearly from 0.1 to that rate over the first epoch (their
section 2.2, which ramps over 5 of 90 epochs). At batch 64 the three are the same run, done once.
Plain SGD, no momentum and no weight decay, as in notebooks 05-08; the same seed (initial weights
and data order) for every run; the devices of ``helpers.devices.get_devices()`` (the accuracy of a
step does not depend on how many devices share the batch, up to float rounding).

Writes a JSON file (default ``benchmarks/scaling_large_batch.json``, which the repository keeps):
the settings, the machine, and one history per run (``helpers.scaling.train_recipe``: per-epoch
loss, test accuracy and seconds; ``diverged`` when a loss stopped being finite).
"""
import argparse
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from helpers.devices import describe, get_devices  # noqa: E402
from helpers.scaling import RECIPES, save_results, train_recipe  # noqa: E402

DEFAULT_OUT = os.path.join(ROOT, 'benchmarks', 'scaling_large_batch.json')


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--n-train', type=int, default=60000)
    p.add_argument('--n-test', type=int, default=10000)
    p.add_argument('--epochs', type=int, default=5)
    p.add_argument('--batches', default='64,128,256,512,1024,2048,4096')
    p.add_argument('--out', default=DEFAULT_OUT)
    args = p.parse_args(argv)
    devices = get_devices()
    batches = [int(b) for b in args.batches.split(',')]
    result = {'settings': dict(vars(args), base_lr=0.1, base_batch=64, warmup_epochs=1, seed=0,
                               devices=describe(devices)),
              'runs': []}
    start = time.perf_counter()
    for b in batches:
        for recipe in (RECIPES[:1] if b == 64 else RECIPES):
            h = train_recipe(recipe, b, devices, args.epochs, args.n_train, args.n_test)
            result['runs'].append(h)
            print(f'batch {b:5d} {recipe:7s} lr {h["lr"]:5.2f}: test acc '
                  + ' '.join(f'{a:.3f}' for a in h['test_acc'])
                  + (' (diverged)' if h['diverged'] else '') + f'  [{sum(h["seconds"]):.0f} s]', flush=True)
    print(f'wrote {args.out} ({save_results(result, args.out, start) / 60:.0f} min)')


if __name__ == '__main__':
    main()
