"""A parameter server across two network namespaces, timed (notebook 09): the job that
``helpers.scaling``'s model of a push + pull step is checked against.

:func:`measure_pushpull` runs it: scheduler, server and worker 0 on "machine" a, worker 1 on "machine"
b, a capped veth between them (``helpers.netns``), every process started and stopped by
``helpers.dist.Job``. Each process runs this module as a script (``python -m helpers.pushpull ...``):
in the scheduler and the server ``import mxnet`` turns the process into its role; the workers time
their steps (:func:`main`) and print one ``RESULT`` line. Like ``helpers.dist_train``, a job script
beside the code that starts it.
"""
import argparse
import json
import os
import statistics
import sys
import time

import mxnet as mx  # in the scheduler and server of a job this line runs the role and exits

from helpers import checks

__all__ = ['measure_pushpull', 'PushPullResult']


class PushPullResult:
    """The steps one worker measured in :func:`measure_pushpull` (notebook 09): ``rows`` is a list
    of dicts ``rate`` (bit/s, None = no cap), ``size`` (float32 values), ``nbytes``,
    ``compression``, ``seconds`` (every timed step), ``median``, ``sent`` and ``received`` (bytes
    per step on the worker's side of the veth, from the kernel's counters)."""

    def __init__(self, rows, worker, wall_time):
        self.rows, self.worker, self.wall_time = rows, worker, wall_time

    def median(self, rate, size):
        """Median seconds of the steps at this rate and size."""
        return next(r['median'] for r in self.rows if r['rate'] == rate and r['size'] == size)

    def __repr__(self):
        return f'PushPullResult({len(self.rows)} rows from {self.worker}, job {self.wall_time:.0f} s)'


def measure_pushpull(sizes, rates, compression=False, steps=3, timeout=180, echo=False):
    """Run a ``dist_sync`` parameter server across two network namespaces and time push + pull
    (notebook 09). "Machine" a holds the scheduler, the server and worker 0; "machine" b holds
    worker 1; a veth joins them. For each rate in ``rates`` (bit/s; None: no cap) each worker caps
    its own machine's side of the veth, then, for every size in ``sizes`` (float32 values per key),
    times ``steps`` steps (after one untimed) if the cap alone makes one message (a push, or a pull)
    last half a second or more, else 10 times as many: short steps vary more, and cost little to repeat. Returns the
    :class:`PushPullResult` of worker 1, whose every byte crosses the veth. Every namespace and
    process is gone when it returns or raises (``helpers.netns.Network``, ``helpers.dist.Job``)."""
    from helpers import dist, netns
    sizes = checks.counts(sizes, 'sizes', 1)
    rates = [None if r is None else checks.positive(r, 'rate') for r in checks.ordered(rates, 'rates')]
    compression, timeout = checks.flag(compression, 'compression'), checks.seconds(timeout, 'timeout')
    command = [sys.executable, '-m', 'helpers.pushpull', '--sizes', ','.join(map(str, sizes)),
               '--rates', ','.join('none' if r is None else repr(r) for r in rates),
               '--steps', str(checks.whole(steps, 'steps', 1))] + (['--compression'] if compression else [])
    with netns.Network() as net:
        a, b = net.namespace('a'), net.namespace('b')
        link = net.veth(a, b)
        on_a, on_b = {'netns': a, 'host': link.addr_a}, {'netns': b, 'host': link.addr_b}
        place = {'scheduler': on_a, 'server 0': on_a, 'worker 0': on_a, 'worker 1': on_b}
        job = dist.run_local_job(command, num_workers=2, num_servers=1, timeout=timeout, echo=echo,
                                 env={'MXDP_VETH': link.dev_a}, place=place)
    line = next(t for t in job.output('worker 1') if t.startswith('RESULT '))
    return PushPullResult(json.loads(line[len('RESULT '):]), 'worker 1', job.wall_time)


def main(argv=None):
    """One worker of :func:`measure_pushpull` (the scheduler and server never get here)."""
    from helpers import netns
    p = argparse.ArgumentParser()
    p.add_argument('--sizes', required=True)
    p.add_argument('--rates', required=True)
    p.add_argument('--steps', type=int, default=3)
    p.add_argument('--compression', action='store_true')
    args = p.parse_args(argv)
    dev = os.environ['MXDP_VETH']
    sizes = [int(s) for s in args.sizes.split(',')]
    kv = mx.kv.create('dist_sync')
    if args.compression:
        kv.set_gradient_compression({'type': '2bit', 'threshold': 0.5})
    for key, size in enumerate(sizes):
        kv.init(key, mx.nd.zeros(size))
    rows = []
    for rate in [None if r == 'none' else float(r) for r in args.rates.split(',')]:
        kv._barrier()                    # nobody is still sending at the previous rate
        if rate:
            netns.cap(None, dev, rate)   # this machine's side of the link
        else:
            netns.uncap(None, dev)
        kv._barrier()                    # both machines run at the new rate
        for key, size in enumerate(sizes):
            grad, weight = mx.nd.full(size, 0.7), mx.nd.zeros(size)
            long = rate is not None and 8 * 4 * size / rate >= 0.5      # one message at the cap alone
            steps = args.steps if long else 10 * args.steps              # short: cheap, noisier
            seconds, before = [], None
            for i in range(steps + 1):                # the first step is not timed
                if i == 1:
                    before = netns.counters(None, dev)
                start = time.perf_counter()
                kv.push(key, grad)
                kv.pull(key, out=weight)
                weight.wait_to_read()
                seconds.append(time.perf_counter() - start)
            after = netns.counters(None, dev)
            rows.append({'rate': rate, 'size': size, 'nbytes': 4 * size, 'compression': args.compression,
                         'seconds': seconds[1:], 'median': statistics.median(seconds[1:]),
                         'sent': (after['tx_bytes'] - before['tx_bytes']) / steps,
                         'received': (after['rx_bytes'] - before['rx_bytes']) / steps})
    kv._barrier()
    print('RESULT ' + json.dumps(rows), flush=True)


if __name__ == '__main__':
    main()
