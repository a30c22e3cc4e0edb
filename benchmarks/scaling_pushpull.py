"""A parameter server across two network namespaces, the long version (notebook 09 plots its stored
results where it cannot run the live experiment): ``dist_sync`` push + pull time of one worker against
the gradient size, under several rate caps, with and without 2-bit compression.

    python benchmarks/scaling_pushpull.py            # as root, with `ip` and `tc` (a few minutes)
    python benchmarks/scaling_pushpull.py --sizes 1,61706 --rates none,100e6 --out /tmp/x.json

``helpers.pushpull.measure_pushpull``: "machine" a runs the scheduler, the server and worker 0;
"machine" b runs worker 1; a veth joins them, each side capped with ``tc tbf`` by its own worker.
Sizes (float32 values): 1 (the latency alpha), 61,706 (LeNet), 2,621,440 (10 MiB), 11,183,626
(``helpers.models.resnet18``, width 64). Rates: none (the machine's own speed), 100 Mbit/s, 1 Gbit/s.
Each row is worker 1's median over ``--steps`` timed steps (10 times as many where the cap alone
keeps one message under 0.5 s; the stored JSON predates that rule: its rows of 2.6 M values and
more are medians of 5 steps), with the bytes per step the kernel counted on its side of the veth, next
to ``helpers.scaling.pushpull_step``'s prediction with alpha = half the median step of the 1-value
array.

Writes ``benchmarks/scaling_pushpull.json`` (kept in the repository) unless ``--out`` says otherwise.
"""
import argparse
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

from helpers import netns
from helpers.pushpull import measure_pushpull
from helpers.scaling import pushpull_step, save_results

DEFAULT_OUT = os.path.join(ROOT, 'benchmarks', 'scaling_pushpull.json')


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--sizes', default='1,61706,2621440,11183626')
    p.add_argument('--rates', default='none,100e6,1e9')
    p.add_argument('--steps', type=int, default=5)
    p.add_argument('--out', default=DEFAULT_OUT)
    args = p.parse_args(argv)
    ok, why = netns.available()
    if not ok:
        sys.exit(f'cannot run: {why}')
    sizes = [int(s) for s in args.sizes.split(',')]
    rates = [None if r == 'none' else float(r) for r in args.rates.split(',')]
    result = {'settings': vars(args), 'rows': []}
    start = time.perf_counter()
    for compression in (False, True):
        res = measure_pushpull(sizes, rates, compression=compression, steps=args.steps, timeout=1800)
        for rate in rates:
            alpha = res.median(rate, min(sizes)) / 2
            for row in (r for r in res.rows if r['rate'] == rate):
                row['predicted'] = pushpull_step(row['nbytes'], rate, alpha, compression) if rate else None
                result['rows'].append(row)
                pred = f'{row["predicted"] * 1e3:9.1f} ms' if rate else '        -'
                print(f'{"2-bit" if compression else "plain"} rate {str(rate):>7} size {row["size"]:>9}: '
                      f'{row["median"] * 1e3:9.1f} ms, predicted {pred}; sent {row["sent"]:12.0f} B, '
                      f'received {row["received"]:12.0f} B', flush=True)
    print(f'wrote {args.out} ({save_results(result, args.out, start):.0f} s)')


if __name__ == '__main__':
    main()
