"""Bad input, swept (issue 22): every public callable of helpers/ is fed wrong types and wrong values,
drawn by Hypothesis, one argument at a time, from a valid call. Each must end in a clear error --
``TypeError`` for a wrong type, ``ValueError`` for a wrong value (the policy of helpers.checks), its
message naming the argument -- within a time bound (no hang), within a memory bound (no unbounded
allocation), without starting a process or sending a signal, and never by returning (no silent
wrong answer).

How it works (the machinery is tests/bad_input.py):

- ``ENTRIES`` has one entry per public callable (a function or class named in the ``__all__`` of a
  module of helpers/, as tests/test_docstrings.py walks them), keyed by where it is defined:
  :class:`Sweep` -- a valid *baseline* call and the *kind* of each argument to corrupt (every other
  argument listed in ``free`` with the reason it is not checked) -- or :class:`Exempt`, with the
  reason it takes no input to check (an exception class, a record the helpers fill themselves, no
  arguments). A public callable without an entry fails ``test_every_public_callable_has_an_entry``,
  which says what to add.
- The baseline call must succeed (``test_the_baseline_call_is_valid``): the sweep corrupts valid
  calls, so what it finds is the corrupted argument's doing. A helper that starts processes
  (``starts=True``: jobs, namespaces, the launcher) is never run: its baseline must get as far as
  starting one, which the sweep's guard turns into :class:`~bad_input.WouldStart`; a bad argument must
  be refused before that.
- ``test_bad_input_is_refused`` runs per (callable, argument): Hypothesis draws wrong values of the
  argument's kind (tests/bad_input.py), derandomized and without a database, so every run tries the
  same cases.

Adding an entry for a new helper: give the baseline call (a function returning its arguments, fresh
objects each time) and a kind per argument, e.g.
``'helpers.buckets.bucket_sizes': Sweep(lambda: dict(sizes=[3, 5], limit=4), sizes=counts(1),
limit=Count(1))``.
"""
import importlib
import inspect
import json
import os
import pkgutil
import platform
import re
import subprocess
import sys

import matplotlib
if 'matplotlib.pyplot' not in sys.modules:    # Agg, chosen before helpers.plot makes an IPython shell: after
    matplotlib.use('Agg')                     # that, matplotlib 3.7 resolving a backend imports IPython's
    __import__('matplotlib.pyplot').pyplot.switch_backend('Agg')    # backend2gui, which IPython 9 removed

import mxnet as mx                                         # noqa: E402
import numpy as np                                         # noqa: E402
import pytest                                              # noqa: E402
from hypothesis import HealthCheck, Phase, given, settings  # noqa: E402
from mxnet import gluon, nd                                # noqa: E402

import helpers                                             # noqa: E402
from bad_input import (Array, Arrays, Bad, Callable, Choice, Count, Custom, Device, Devices, Env,  # noqa: E402
                       Flag, Mapping, Maybe, NonNegative, Number, Obj, Path, Positive, Seconds, Strings, Text,
                       Weights, WouldSignal, WouldStart, bounded, environment, sizes_list)
from helpers import checks                                 # noqa: E402

platform.processor()          # runs `uname -p` once and keeps the answer: save_results asks, within the guard

# Every (callable, argument) pair is tried on this many drawn values; the same ones every run.
# BAD_INPUT_EXAMPLES=60 tries more (a few minutes): worth it after adding a kind or an entry.
SWEEP = settings(max_examples=int(os.environ.get('BAD_INPUT_EXAMPLES', 12)), deadline=None, derandomize=True,
                 database=None, phases=[Phase.explicit, Phase.generate],   # no shrinking: each case is small
                 suppress_health_check=list(HealthCheck))


class Sweep:
    """The entry of a helper that checks its input.

    ``baseline``: a function returning the keyword arguments of a valid call (fresh objects each
    time: calls may change their arguments); ``kinds``: the kind of each argument to corrupt
    (tests/bad_input.py); ``free``: ``{argument: why any value is fine or is not checked}``, so
    that every parameter is accounted for; ``call``: what to call instead of the helper (e.g. to
    spread ``*args``, or to enter a context manager); ``names``: more words that count as naming an
    argument in an error message; ``starts``: the helper starts processes (or sends signals), so
    the baseline must reach that and stop there; ``run_baseline``: the reason, where the valid call
    is too slow to run here (its arguments are still bound to the signature);
    ``errors``: an argument whose bad values end in an error class of the helper's own;
    ``reported``: an argument whose bad values are reported in the result (a predicate on it)."""

    def __init__(self, baseline, free=None, call=None, names=None, starts=False, run_baseline=True, errors=None,
                 reported=None, **kinds):
        self.baseline, self.kinds, self.free = baseline, kinds, dict(free or {})
        self.call, self.names, self.starts = call, dict(names or {}), starts
        self.run_baseline, self.errors, self.reported = run_baseline, dict(errors or {}), dict(reported or {})

    def arguments(self):
        return dict(self.baseline())


class Exempt:
    """The entry of a public callable with no input to check: ``why``."""

    def __init__(self, why):
        self.why = why


# ================================================================================ shared baselines
CPU = [mx.cpu(0), mx.cpu(1)]
NO_ARGUMENTS = Exempt('takes no arguments')
RECORD = Exempt('a record the helpers fill in themselves; it holds what it is given')
EXCEPTION = Exempt('an exception class: its arguments are its message and what it carries')
POLICY = 'a parameter of the policy, set by the helper that calls it'
MESSAGE = 'only printed in messages: any value will do'
ECHO = 'True, False or a function: every value means something'
FIGSIZE = "matplotlib's own argument: it refuses a bad size itself"
ALT = Maybe(Text(('', '   ')))      # a figure's text alternative: None (described from the axes) or a sentence


def _arrays(k=2, size=4):
    return [nd.ones((size,), ctx=CPU[i % 2] if k <= 2 else mx.cpu(i)) for i in range(k)]


def _replicas():
    from helpers.models import init_lenet_params, replicate_params
    params = init_lenet_params(0)
    return [replicate_params(params, d) for d in CPU]


def _images(n=4):
    return nd.array(np.random.default_rng(0).uniform(size=(n, 1, 28, 28)).astype(np.float32))


def _loader(n=8, batch=4):
    from helpers.data import ArrayLoader
    rng = np.random.default_rng(0)
    return ArrayLoader(rng.uniform(size=(n, 1, 28, 28)).astype(np.float32), rng.integers(0, 10, n).astype(np.int32),
                       batch)


def _net_and_trainer():
    from helpers.models import lenet
    net = lenet(CPU)
    return net, gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.1})


def _with_grads(params):
    for p in params:
        p.attach_grad()
    return params


def _data_dir():
    from helpers.data import find_data_dir
    return find_data_dir(download=False)[0]


def _history():
    return {'epoch': [1, 2], 'loss': [0.9, 0.5], 'test_acc': [0.6, 0.8], 'seconds': [1.0, 1.0]}


def _spans():
    from helpers.tracing import Span
    return [Span('cpu(0)', 'broadcast_add', 0.0, 1.0), Span('cpu(1)', 'CopyCPU2CPU', 0.5, 2.0)]


def _figure():
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(3, 2))
    ax.plot([1, 2], [3, 4])
    return fig


def _reaped():
    """A process that has exited and been reaped (made once, outside the sweep's guard)."""
    if not hasattr(_reaped, 'proc'):
        _reaped.proc = subprocess.Popen(['true'], start_new_session=True)
        _reaped.proc.wait()
    return _reaped.proc


def _as_if_namespaces(fn):
    """``fn()`` as on a machine that can make namespaces: it goes on to make them (the guard stops it)."""
    from helpers import netns
    saved, netns._AVAILABLE = netns._AVAILABLE, (True, '')
    try:
        return fn()
    finally:
        netns._AVAILABLE = saved


def _network():
    from helpers import netns
    return netns.Network(clean_leftovers=False)     # nothing made yet: the guard stops the first `ip`


def _count_bads(minimum, values):
    """Bad lists of whole numbers (by type) for an argument that holds counts."""
    return [Bad(5, TypeError, 'not a list'), Bad('12', TypeError, 'a string'), Bad({4: 1}, TypeError, 'a dict'),
            Bad([4, 2.5], TypeError, 'a float among them'), Bad([True], TypeError, 'a bool among them')] + values


def _strings_of(values):
    return Custom([Bad(v, TypeError, 'not a list of strings') for v in values])


def _whole_or_array(minimum):
    """Bad values of a whole number that may also be an array of them (notebook 09's models)."""
    return Custom([Bad('4', TypeError, 'a string'), Bad(None, TypeError, 'None'), Bad(True, TypeError, 'a bool'),
                   Bad(2.5, TypeError, 'a float'), Bad([2.5], TypeError, 'floats'), Bad(['2'], TypeError, 'strings'),
                   Bad({2: 1}, TypeError, 'a dict'), Bad(minimum - 1, ValueError, f'below {minimum}'),
                   Bad([256, minimum - 1], ValueError, f'one below {minimum}')])


# ================================================================================ the entries
K_ARRAY = Custom([Bad('4', TypeError, 'a string'), Bad(None, TypeError, 'None'), Bad(True, TypeError, 'a bool'),
                  Bad({2: 1}, TypeError, 'a dict'), Bad(['2', '4'], TypeError, 'strings'),
                  Bad(2j, TypeError, 'complex'), Bad(0, ValueError, '0 devices'), Bad(-3, ValueError, 'negative'),
                  Bad(0.5, ValueError, 'below 1'), Bad(float('nan'), ValueError, 'nan'),
                  Bad(float('inf'), ValueError, 'inf'), Bad([2, 0], ValueError, 'a 0 among them'),
                  Bad(np.array([1, -1]), ValueError, 'a negative among them')])

# A job's placement (helpers.placement.two_hosts): process name -> {'netns': ..., 'host': ...}.
PLACE = Custom([Bad(5, TypeError, 'not a dict'), Bad({'worker 0': 5}, TypeError, 'an entry that is not a dict'),
                Bad({'worker 0': {'netns': ''}}, ValueError, 'an empty namespace name'),
                Bad({'worker 0': {'host': 5}}, TypeError, 'a number for an address')])

ENTRIES = {
    # ---------------------------------------------------------------------------- helpers.checks
    'helpers.checks.whole': Sweep(
        lambda: dict(value=3, name='n', minimum=1, maximum=10), value=Count(1, 10),
        names={'value': ('n',)},
        free={'name': MESSAGE, 'minimum': POLICY, 'maximum': POLICY}),
    'helpers.checks.positive': Sweep(
        lambda: dict(value=0.5, name='lr', maximum=None), value=Positive(),
        names={'value': ('lr',)}, free={'name': MESSAGE, 'maximum': POLICY}),
    'helpers.checks.number': Sweep(
        lambda: dict(value=0.5, name='alpha', minimum=0, maximum=2),
        value=Number(0, 2, low_ok=True), names={'value': ('alpha',)},
        free={'name': MESSAGE, 'minimum': POLICY, 'maximum': POLICY}),
    'helpers.checks.seconds': Sweep(
        lambda: dict(value=30, name='timeout'), value=Seconds(),
        names={'value': ('timeout',)}, free={'name': MESSAGE}),
    'helpers.checks.flag': Sweep(
        lambda: dict(value=True, name='shuffle'), value=Flag(), names={'value': ('shuffle',)},
        free={'name': MESSAGE}),
    'helpers.checks.choice': Sweep(
        lambda: dict(value='local', name='kv_type', options=('local', 'device')),
        value=Choice(('local', 'device')), names={'value': ('kv_type',)},
        free={'name': MESSAGE, 'options': POLICY}),
    'helpers.checks.text': Sweep(
        lambda: dict(value='lo', name='dev'), value=Text(('', '  ')),
        names={'value': ('dev',)}, free={'name': MESSAGE}),
    'helpers.checks.path': Sweep(
        lambda: dict(value='/tmp', name='root'), value=Path(), names={'value': ('root',)},
        free={'name': MESSAGE}),
    'helpers.checks.function': Sweep(
        lambda: dict(value=print, name='fn'), value=Callable(), names={'value': ('fn',)},
        free={'name': MESSAGE}),
    'helpers.checks.ordered': Sweep(
        lambda: dict(values=[1, 2], name='sizes'), names={'values': ('sizes',)},
        values=Custom(_count_bads(0, [])[:3] + [Bad({1, 2}, TypeError, 'a set')]),
        free={'name': MESSAGE}),
    'helpers.checks.counts': Sweep(
        lambda: dict(values=[1, 2], name='sizes', minimum=1), names={'values': ('sizes',)},
        values=sizes_list(1), free={'name': MESSAGE, 'minimum': POLICY}),
    'helpers.checks.mapping': Sweep(
        lambda: dict(value={}, name='env'), value=Mapping(), names={'value': ('env',)},
        free={'name': MESSAGE}),
    'helpers.checks.strings': Sweep(
        lambda: dict(value=['python'], name='command', empty=False), value=Strings(),
        names={'value': ('command',)}, free={'name': MESSAGE, 'empty': POLICY}),
    'helpers.checks.fits': Sweep(
        lambda: dict(nbytes=1024, what='an array'), names={'nbytes': ('an array',)},
        nbytes=Custom([Bad(2 ** 70, ValueError, 'more than any memory'),
                       Bad(float('inf'), ValueError, 'infinite'),
                       Bad('1024', TypeError, 'a string'), Bad(None, TypeError, 'None')]),
        free={'what': MESSAGE}),
    'helpers.checks.devices': Sweep(
        lambda: dict(devs=CPU, name='devices'), devs=Devices(),
        names={'devs': ('devices',)}, free={'name': MESSAGE, 'present': POLICY, 'empty': POLICY}),
    'helpers.checks.placement': Sweep(lambda: dict(place={'worker 0': {'netns': 'mxdp-1-a-x', 'host': '10.0.0.2'}},
                                                   name='place'), place=PLACE, free={'name': MESSAGE}),
    'helpers.checks.program': Sweep(
        lambda: dict(command=[sys.executable, '-c', 'pass'], env=None, cwd=None, name='command'),
        command=Custom([Bad(['/nonexistent/mxdp-sweep/prog'], ValueError, 'no such file'),
                        Bad(['no-such-program-mxdp'], ValueError, 'not on PATH'),
                        Bad([__file__], ValueError, 'a file that is not executable')]),
        free={'env': 'checked by its caller (checks.mapping): only its PATH is read',
              'cwd': 'checked by its caller (checks.path)', 'name': MESSAGE}),
    'helpers.checks.arrays': Sweep(
        lambda: dict(arrs=_arrays(), min_size=1), arrs=Arrays(),
        names={'arrs': ('allreduce', 'array')}, free={'min_size': POLICY, 'ring': POLICY, 'floating': POLICY}),
    'helpers.checks.weights': Sweep(
        lambda: dict(ws=[1, 3], k=2), ws=Weights('k'), names={'ws': ('weight',)},
        free={'k': POLICY}),
    'helpers.checks.shards': Sweep(
        lambda: dict(n=10, k=2, ws=None), n=Count(0), k=Count(1, checks.MAX_DEVICES),
        ws=Maybe(Weights('k')),
        names={'n': ('examples',), 'k': ('devices',), 'ws': ('weight',)}),
    'helpers.checks.batch': Sweep(
        lambda: dict(data=nd.arange(6), devs=CPU, ws=None, shard_bounds=__import__('helpers.split').split.shard_bounds),
        data=Array(lambda good, call: [nd.arange(1), nd.array(np.zeros(0, np.float32))]), devs=Devices(),
        ws=Maybe(Weights('devs')),
        names={'data': ('split_and_load', 'example', 'ndarray'), 'devs': ('devices',), 'ws': ('weight',)},
        free={'shard_bounds': "the caller's own cut (split_and_load passes notebook 03's shard_bounds)"}),
    'helpers.checks.labels': Sweep(
        lambda: dict(X=nd.ones((4, 2)), y=nd.ones(4)),
        X=Custom([Bad(5, TypeError, 'no length'), Bad(None, TypeError, 'None'),
                  Bad(nd.ones((3, 2)), ValueError, 'another length')]),
        y=Custom([Bad(5.0, TypeError, 'no length'), Bad('abcd', TypeError, 'a string'),
                  Bad(nd.ones(5), ValueError, 'another length')]),
        names={'X': ('example',), 'y': ('label',)}),
    'helpers.checks.cost_model': Sweep(
        lambda: dict(k=4, nbytes=1e6, alpha=1e-5, bandwidth=1e9, gamma=0.0),
        k=K_ARRAY, nbytes=NonNegative(), alpha=NonNegative(), bandwidth=Positive(),
        gamma=NonNegative(), names={'k': ('devices',)}),
    'helpers.checks.replicas': Sweep(
        lambda: dict(device_params=_replicas(), devs=CPU), devs=Devices(),
        device_params=Custom(lambda good, call: [
            Bad(5, TypeError, 'not a list'), Bad(good[:1], ValueError, 'one replica short'),
            Bad([good[0], good[0]], ValueError, 'replica 1 on the wrong device'),
            Bad([[np.ones(2)], good[1]], TypeError, 'a NumPy array'),
            Bad({0: good[0], 1: good[1]}, TypeError, 'a dict')]),
        names={'devs': ('devices',), 'device_params': ('replica', 'parameter')}),

    # ---------------------------------------------------------------------------- helpers.split
    'helpers.split.shard_sizes': Sweep(
        lambda: dict(n=10, k=2, weights=None), n=Count(0),
        k=Count(1, checks.MAX_DEVICES), weights=Maybe(Weights('k')),
        names={'n': ('examples',), 'k': ('devices',)}),
    'helpers.split.shard_bounds': Sweep(
        lambda: dict(n=10, k=2, weights=[1, 2]), n=Count(0),
        k=Count(1, checks.MAX_DEVICES), weights=Maybe(Weights('k')),
        names={'n': ('examples',), 'k': ('devices',)}),
    'helpers.split.split_and_load': Sweep(
        lambda: dict(data=nd.arange(6), devices=CPU, weights=[1, 2]),
        data=Array(lambda good, call: [nd.arange(1)]), devices=Devices(),
        weights=Maybe(Weights('devices')),
        names={'data': ('split_and_load', 'example', 'ndarray')}),
    'helpers.split.split_batch': Sweep(
        lambda: dict(X=nd.ones((6, 2)), y=nd.arange(6), devices=CPU, weights=None),
        X=Array(lambda good, call: [nd.ones((5, 2)), nd.ones((1, 2))]),
        y=Array(lambda good, call: [nd.arange(7)]), devices=Devices(),
        weights=Maybe(Weights('devices')),
        names={'X': ('example', 'split_and_load'), 'y': ('label', 'split_and_load')}),

    # ---------------------------------------------------------------------------- helpers.comm
    'helpers.comm.copy_to': Sweep(
        lambda: dict(x=nd.ones(3), to=mx.cpu(1)), x=Array(),
        to=Obj((mx.Context, nd.NDArray), values=[Bad(mx.cpu(-1), ValueError, 'no such device'),
                                                 Bad(nd.ones(4), ValueError, 'another shape')]),
        names={'x': ('ndarray', 'copy'), 'to': ('device', 'array', 'copy')}),
    'helpers.comm.CommStats': Sweep(
        lambda: dict(send=__import__('helpers.comm').comm.copy_to), send=Callable()),
    'helpers.comm.allreduce_naive': Sweep(
        lambda: dict(arrays=_arrays()), arrays=Arrays(),
        names={'arrays': ('allreduce', 'array')},
        free={'send': 'a function: not called at all for k = 1; a non-function '
                      "fails at the first transfer with Python's TypeError"}),
    'helpers.comm.owner_chunk': Sweep(
        lambda: dict(i=1, k=4), i=Count(0, 3), k=Count(1, checks.MAX_DEVICES),
        names={'i': ('device',), 'k': ('devices',)}),
    'helpers.comm.reduce_scatter': Sweep(
        lambda: dict(arrays=_arrays()), arrays=Arrays(min_size='k'),
        names={'arrays': ('allreduce', 'array', 'ring')}, free={'send': 'as allreduce_naive'}),
    'helpers.comm.all_gather': Sweep(
        lambda: dict(arrays=_arrays()), arrays=Arrays(min_size='k'),
        names={'arrays': ('allreduce', 'array', 'ring')}, free={'send': 'as allreduce_naive'}),
    'helpers.comm.allreduce_ring': Sweep(
        lambda: dict(arrays=_arrays()), arrays=Arrays(min_size='k'),
        names={'arrays': ('allreduce', 'array', 'ring')}, free={'send': 'as allreduce_naive'}),
    'helpers.comm.allreduce': Sweep(
        lambda: dict(arrays=_arrays()), arrays=Arrays(),
        names={'arrays': ('allreduce', 'array')}, free={'send': 'as allreduce_naive'}),

    # ---------------------------------------------------------------------------- helpers.costmodel
    'helpers.costmodel.naive_bytes_per_device': Sweep(
        lambda: dict(k=4, size=100, itemsize=4),
        k=Count(1, checks.MAX_DEVICES), size=Count(0), itemsize=Count(1)),
    'helpers.costmodel.ring_bytes_per_device': Sweep(
        lambda: dict(k=4, size=100, itemsize=4),
        k=Count(1, checks.MAX_DEVICES), size=Count(0), itemsize=Count(1),
        names={'k': ('devices',), 'size': ('examples',)}),
    'helpers.costmodel.ring_lower_bound': Sweep(
        lambda: dict(k=4, nbytes=1e6), k=K_ARRAY, nbytes=NonNegative(),
        names={'k': ('devices',)}),
    **{f'helpers.costmodel.cost_{name}': Sweep(lambda: dict(k=4, nbytes=1e6, alpha=1e-5, bandwidth=1e9, gamma=1e-11),
                                               k=K_ARRAY, nbytes=NonNegative(), alpha=NonNegative(),
                                               bandwidth=Positive(), gamma=NonNegative(), names={'k': ('devices',)})
       for name in ('naive', 'ring', 'tree', 'rabenseifner')},
    # ---------------------------------------------------------------------------- helpers.link
    'helpers.link.Link': Sweep(
        lambda: dict(alpha=1e-3, bandwidth=1e9), alpha=Number(0, checks.MAX_SECONDS, low_ok=True),
        bandwidth=Positive(), free={'name': MESSAGE}),
    'helpers.link.preset': Sweep(
        lambda: dict(name='PCIe 3.0 x16', step=0.1, nbytes=1e6),
        name=Choice(tuple(__import__('helpers.costmodel').costmodel.LINKS)), step=Positive(), nbytes=Positive(),
        names={'name': ('link',)}),
    'helpers.link.overhead': Sweep(
        lambda: dict(devices=[mx.cpu(0), mx.cpu(1)], messages=2, rounds=1, allreduce=None),
        devices=Maybe(Devices(minimum=2)), messages=Count(1, 10_000), rounds=Count(1, 1_000),
        allreduce=Maybe(Callable())),
    'helpers.link.LinkStore': Sweep(
        lambda: dict(link=None, allreduce=__import__('helpers.comm').comm.allreduce_naive),
        link=Obj((__import__('helpers.link').link.Link,), none=True), allreduce=Callable()),
    'helpers.costmodel.link': Sweep(
        lambda: dict(name='PCIe 3.0 x16'),
        name=Choice(tuple(__import__('helpers.costmodel').costmodel.LINKS)),
        names={'name': ('link',)}),

    # ---------------------------------------------------------------------------- helpers.data
    'helpers.data.get_fashion_mnist_labels': Sweep(
        lambda: dict(labels=[0, 9, np.int32(3)]),
        labels=Custom([Bad(5, TypeError, 'not a list'), Bad(['a'], TypeError, 'a string label'),
                       Bad([2.7], TypeError, 'a float label'), Bad([True], TypeError, 'a bool label'),
                       Bad([10], ValueError, 'no such class'), Bad([-1], ValueError, 'a negative class'),
                       Bad({1: 0}, TypeError, 'a dict')])),
    'helpers.data.find_data_dir': Sweep(
        lambda: dict(root=_data_dir(), download=False, mirrors=(), timeout=1.0),
        root=Maybe(Path(missing=__import__('helpers.data').data.DataNotFoundError)),
        download=Flag(), timeout=Seconds(),
        mirrors=_strings_of([5, 'http://x/', [3], None]),
        names={'root': ('directory',), 'mirrors': ('mirror',)}),
    'helpers.data.load_arrays': Sweep(
        lambda: dict(train=False, root=_data_dir(), download=False), train=Flag(),
        root=Maybe(Path()), download=Flag(), names={'root': ('directory',)}),
    'helpers.data.ArrayLoader': Sweep(
        lambda: dict(X=np.zeros((6, 2), np.float32), y=np.arange(6), batch_size=4, shuffle=True, seed=0,
                     last_batch='keep', ctx=mx.cpu(1)),
        X=Custom([Bad(5, TypeError, 'no length'), Bad(np.zeros((5, 2)), ValueError, 'another length'),
                  Bad(np.zeros((0, 2)), ValueError, 'empty')]),
        y=Custom([Bad(None, TypeError, 'None'), Bad(np.arange(7), ValueError, 'another length')]),
        batch_size=Count(1), shuffle=Flag(), seed=Maybe(Count(0)), last_batch=Choice(('keep', 'discard')),
        ctx=Maybe(Device()), names={'X': ('example', 'dataset'), 'y': ('label', 'dataset')}),
    'helpers.data.load_data_fashion_mnist': Sweep(
        lambda: dict(batch_size=64, n_train=100, n_test=100, seed=0, root=_data_dir()), batch_size=Count(1),
        n_train=Maybe(Count(1, 60000)), n_test=Maybe(Count(1, 10000)), seed=Maybe(Count(0)), root=Maybe(Path()),
        names={'root': ('directory',)}),
    'helpers.data.as_dataset': Sweep(
        lambda: dict(train=False, root=_data_dir()), train=Flag(), root=Maybe(Path()),
        names={'root': ('directory',)}),
    'helpers.data.DataNotFoundError': EXCEPTION,
    'helpers.data.ChecksumError': EXCEPTION,

    # ---------------------------------------------------------------------------- helpers.devices
    'helpers.devices.num_gpus': NO_ARGUMENTS,
    'helpers.devices.forced_standins': Sweep(
        lambda: {'$MXDP_DEVICES': 'cpu:3'}, call=lambda: __import__(
        'helpers.devices').devices.forced_standins(), **{'$MXDP_DEVICES': Env(
            ['cpu:0', 'cpu:00', 'gpu', 'gpu:2', 'cpu:-1', 'cpu:2.5', 'cpu:x', 'cpu:', 'cpus', '2', 'cpu:\u0663',
             f'cpu:{checks.MAX_DEVICES + 1}', 'cpu:' + '9' * 30])}),
    'helpers.devices.get_devices': Sweep(
        lambda: {'k': 3, '$MXDP_DEVICES': None}, k=Maybe(Count(1, checks.MAX_DEVICES)),
        call=lambda k: __import__('helpers.devices').devices.get_devices(k),
        **{'$MXDP_DEVICES': Env([f'cpu:{10 ** 12}', 'cpu:0', 'tpu:2'])}),
    'helpers.devices.device_kind': Sweep(
        lambda: dict(devices=CPU), devices=Devices()),
    'helpers.devices.describe': Sweep(
        lambda: dict(devices=CPU), devices=Devices()),

    # ---------------------------------------------------------------------------- helpers.gpu_code
    'helpers.gpu_code.fatbin': Sweep(lambda: dict(path=None), path=Maybe(Path(missing=ValueError))),
    'helpers.gpu_code.library_code': Sweep(lambda: dict(path=None), path=Maybe(Path(missing=ValueError))),
    'helpers.gpu_code.containers': Sweep(
        lambda: dict(data=b''), data=Custom([Bad('abc', TypeError, 'a string'), Bad([1, 2], TypeError, 'a list'),
                                             Bad(None, TypeError, 'None'), Bad(5, TypeError, 'a number')])),
    'helpers.gpu_code.runs_on': Sweep(
        lambda: dict(code=[('SASS', 86)], capability=(8, 6)),
        code=Custom([Bad('SASS86', TypeError, 'a string'), Bad(None, TypeError, 'None'),
                     Bad(86, TypeError, 'a number'), Bad([86], ValueError, 'an arch without its kind'),
                     Bad([('XYZ', 86)], ValueError, 'an unknown kind'),
                     Bad([('SASS', 'x')], TypeError, 'an arch that is no number'),
                     Bad([('SASS', -1)], ValueError, 'a negative arch')]),
        capability=Custom([Bad([8, 6], TypeError, 'a list'), Bad(None, TypeError, 'None'),
                           Bad(8.6, TypeError, 'a number'),
                           Bad((8,), ValueError, 'one number'), Bad((8, 'a'), TypeError, 'a minor that is no number'),
                           Bad((8.0, 6), TypeError, 'a float major'), Bad((8, 10), ValueError, 'minor 10'),
                           Bad((0, 0), ValueError, 'major 0')]),
        names={'code': ('code',), 'capability': ('capability',)}),
    'helpers.gpu_code.compute_capability': Sweep(
        lambda: dict(device_id=0), device_id=Count(0, checks.MAX_DEVICES)),

    # ---------------------------------------------------------------------------- helpers.job, job_node, launcher
    'helpers.job.run_local_job': Sweep(
        lambda: dict(command=[sys.executable, '-c', 'pass'], num_workers=2, num_servers=1, timeout=60, env=None,
                     echo=False, place=None), starts=True,
        command=Strings(), num_workers=Count(1, checks.MAX_PROCESSES), num_servers=Count(1, checks.MAX_PROCESSES),
        timeout=Seconds(), env=Maybe(Mapping()), place=Maybe(Mapping()), free={'echo': ECHO}),
    'helpers.job.Job': Sweep(
        lambda: dict(command=[sys.executable, '-c', 'pass'], num_workers=2, num_servers=1, timeout=60, env={'A': '1'},
                     echo=False, cwd=None, place=None), starts=True,
        command=Strings(), num_workers=Count(1, checks.MAX_PROCESSES), num_servers=Count(1, checks.MAX_PROCESSES),
        timeout=Seconds(), env=Maybe(Mapping()), place=Maybe(PLACE), cwd=Maybe(Path()), free={'echo': ECHO}),
    'helpers.job.JobResult': RECORD,
    'helpers.job.DistJobError': EXCEPTION,
    'helpers.job.DistJobTimeout': EXCEPTION,
    'helpers.job.DistJobStalled': EXCEPTION,
    'helpers.job.job_processes': Sweep(
        lambda: dict(jobdir='/tmp/mxdp-dist-none'), jobdir=Path()),
    'helpers.job_node.progress': Sweep(
        lambda: dict(step=3, final=False, rank=None), step=Count(0), final=Flag(),
        rank=Maybe(Count(0, checks.MAX_PROCESSES))),
    'helpers.job_node.run_script': Sweep(
        lambda: dict(main=lambda: True), main=Callable(),
        run_baseline='it ends the process that calls it, which is its job (tests/test_dist.py runs it in one)'),
    'helpers.job_faults.Tracebacks': NO_ARGUMENTS,
    'helpers.job_faults.stopped': Sweep(
        lambda: dict(pids=[os.getpid()]),
        pids=Custom([Bad('123', TypeError, 'a string'), Bad([None], TypeError, 'None'),
                     Bad([True], TypeError, 'a bool pid'), Bad([0], ValueError, 'pid 0 (the whole group)'),
                     Bad([-1], ValueError, 'pid -1 (every process)')]),
        names={'pids': ('pid',)}),
    'helpers.job_faults.links_down': Sweep(
        lambda: dict(place={}, timeout=5.0), place=PLACE, timeout=Seconds()),
    'helpers.launcher.launcher_path': NO_ARGUMENTS,
    'helpers.launcher.try_launcher': Sweep(
        lambda: dict(args=['--launcher', 'local'], patched=True, timeout=60),
        starts=True, args=Custom([Bad('-n 2', TypeError, 'a string'),
                                  Bad(['-n', 2], TypeError, 'a number among them'),
                                  Bad(None, TypeError, 'None')]),
        patched=Flag(), timeout=Seconds()),

    # ---------------------------------------------------------------- helpers.cluster, placement, netns, procs
    'helpers.cluster.ssh_commands': Sweep(
        lambda: dict(hosts=['10.0.0.1', '10.0.0.2'], script_args=['--epochs', '1'], num_servers=None, hostfile='hosts',
                     repo='/srv/repo', python='/srv/repo/.venv/bin/python', interface=None, env={'PS_VERBOSE': '1'},
                     scheduler='10.0.0.1'),
        hosts=Custom([Bad('10.0.0.1', TypeError, 'a string'), Bad(['node1'], ValueError, 'a host name'),
                      Bad([], ValueError, 'no hosts'), Bad([10], TypeError, 'a number'), Bad(None, TypeError, 'None')]),
        script_args=Custom([Bad('--epochs 1', TypeError, 'a string'), Bad(['--epochs', 1], TypeError, 'a number')]),
        num_servers=Maybe(Count(1, checks.MAX_PROCESSES)), hostfile=Text(('', 'my hosts')),
        repo=Custom([Bad('/a b', ValueError, 'needs quoting'), Bad(5, TypeError, 'a number')]),
        python=Maybe(Custom([Bad('/a b/python', ValueError, 'needs quoting'), Bad(5, TypeError, 'a number')])),
        interface=Maybe(Text(('', 'eth 0'))), env=Maybe(Mapping()), names={'hosts': ('host',)},
        scheduler=Maybe(Custom([Bad('node1', ValueError, 'a host name'), Bad('', ValueError, 'empty'),
                                Bad(10, TypeError, 'a number')]))),
    'helpers.placement.two_hosts': Sweep(
        lambda: dict(net=_network(), num_workers=2, num_servers=1), starts=True,
        net=Obj(__import__('helpers.netns').netns.Network),
        num_workers=Count(1, checks.MAX_PROCESSES),
        num_servers=Count(1, checks.MAX_PROCESSES)),
    'helpers.placement.two_machines': Sweep(
        lambda: dict(num_workers=2, num_servers=1), starts=True,
        call=lambda **kw: _as_if_namespaces(lambda: __import__('helpers.placement').placement.two_machines(
            **kw).__enter__()),
        num_workers=Count(1, checks.MAX_PROCESSES),
        num_servers=Count(1, checks.MAX_PROCESSES)),
    'helpers.placement.run_side_by_side': Sweep(
        lambda: dict(jobs={'a': ([sys.executable, '-c', 'pass'], 2)}, timeout=60, failures='raise', isolate=False),
        starts=True, jobs=Custom([Bad(5, TypeError, 'not a dict'), Bad([('a', 2)], TypeError, 'a list'),
                                  Bad({}, ValueError, 'no jobs'), Bad({'a': 'python'}, TypeError, 'not a pair'),
                                  Bad({'a': (['python'], 0)}, ValueError, 'no workers'),
                                  Bad({'a': ('python', 2)}, TypeError, 'a command as a string')]),
        timeout=Seconds(), failures=Choice(('raise', 'return')), isolate=Flag(),
        names={'jobs': ('job', 'command', 'worker')}),
    'helpers.netns.NetnsError': EXCEPTION,
    'helpers.netns.available': NO_ARGUMENTS,
    'helpers.netns.Network': Sweep(
        lambda: dict(clean_leftovers=False), clean_leftovers=Flag()),
    'helpers.netns.Link': RECORD,
    'helpers.netns.links_down': Sweep(
        lambda: dict(ns=None, timeout=5.0), starts=True, ns=Maybe(Text(('',))), timeout=Seconds()),
    'helpers.netns.counters': Sweep(
        lambda: dict(ns=None, dev='lo'), starts=True, ns=Maybe(Text(('',))),
        dev=Text(('',))),
    'helpers.netns.cap': Sweep(
        lambda: dict(ns='mxdp-1-a-x', dev='veth0', rate=100e6, kind='tbf', burst=None,
                     latency=0.1), starts=True, ns=Maybe(Text(('',))),
        dev=Text(('',)), rate=Positive(), kind=Choice(('tbf', 'htb')),
        burst=Maybe(Count(1)), latency=Seconds()),
    'helpers.netns.uncap': Sweep(
        lambda: dict(ns='mxdp-1-a-x', dev='veth0'), starts=True, ns=Maybe(Text(('',))),
        dev=Text(('',))),
    'helpers.netns.exec_prefix': Sweep(
        lambda: dict(ns='mxdp-1-a-x'), ns=Text(('',))),
    'helpers.netns.namespaces': NO_ARGUMENTS,
    'helpers.netns.leftovers': NO_ARGUMENTS,
    'helpers.netns.remove_leftovers': NO_ARGUMENTS,
    'helpers.procs.alive': Sweep(
        lambda: dict(pid=os.getpid()), pid=Count(1)),
    'helpers.procs.kill': Sweep(
        lambda: dict(pids=[], grace=1.0),
        pids=Custom([Bad('123', TypeError, 'a string'), Bad([None], TypeError, 'None'),
                     Bad(['1'], TypeError, 'a string pid'), Bad([True], TypeError, 'a bool pid'),
                     Bad([0], ValueError, 'pid 0 (the whole group)'),
                     Bad([-1], ValueError, 'pid -1 (every process)')]),
        grace=Number(0, checks.MAX_SECONDS, low_ok=True), names={'pids': ('pid',)}),
    'helpers.procs.kill_group': Sweep(
        lambda: dict(proc=_reaped(), grace=1.0, also=()), starts=True,
        proc=Obj(subprocess.Popen), grace=Number(0, checks.MAX_SECONDS, low_ok=True),
        also=Custom([Bad('1', TypeError, 'a string'), Bad([None], TypeError, 'None'),
                     Bad([0], ValueError, 'pid 0'), Bad([-1], ValueError, 'pid -1')]),
        names={'also': ('pid',)}),

    # ---------------------------------------------------------------------------- helpers.dist_train
    'helpers.dist_train.parse_args': Sweep(
        lambda: dict(argv=['--epochs', '1']),
        argv=Maybe(_strings_of([5, '--epochs 1', ['--epochs', 1], {'epochs': 1}]))),
    'helpers.dist_train.command': Sweep(
        lambda: dict(module='helpers.dist_train', kvstore='dist_async'),
        call=lambda module, kvstore: __import__('helpers.dist_train').dist_train.command(
            module, kvstore=kvstore),
        module=Text(('', 'a b')), kvstore=Choice(('dist_sync', 'dist_device_sync',
                                                   'dist_async'))),
    'helpers.dist_train.read_results': Sweep(
        lambda: dict(out=_results_dir(), num_workers=2),
        out=Path(missing=FileNotFoundError), num_workers=Count(1, checks.MAX_DEVICES),
        names={'out': ('result',)}),
    'helpers.dist_train.plot_timelines': Sweep(
        lambda: dict(runs={'dist_sync': _results()}, slow_rank=1),
        runs=Custom([Bad(5, TypeError, 'not a dict'), Bad([], TypeError, 'a list'),
                     Bad({}, ValueError, 'no runs'),
                     Bad({'a': [{'rank': 0}]}, ValueError, 'no stamps')]),
        slow_rank=Maybe(Count(0)), alt=ALT, free={'figsize': FIGSIZE},
        names={'runs': ('run',)}),
    'helpers.dist_train.worker_devices': Sweep(
        lambda: dict(index=1, count=2), index=Count(0),
        count=Count(1, checks.MAX_DEVICES)),
    'helpers.dist_train.my_shard': Sweep(
        lambda: dict(X=np.zeros((10, 2)), y=np.arange(10), rank=1, num_workers=3),
        X=Custom([Bad(5, TypeError, 'no length'), Bad(np.zeros((9, 2)), ValueError,
                                                       'another length')]),
        rank=Count(0, 2), num_workers=Count(1, checks.MAX_DEVICES),
        names={'X': ('example',), 'rank': ('worker',)},
        free={'y': 'as X (the same check)'}),
    'helpers.dist_train.steps_per_epoch': Sweep(
        lambda: dict(n_train=1000, num_workers=2, batch_size=64),
        n_train=Count(0), num_workers=Count(1, checks.MAX_DEVICES),
        batch_size=Count(1)),
    'helpers.dist_train.train_worker': Sweep(
        lambda: dict(kv=mx.kv.create('local'), devices=CPU, X=np.zeros((8, 1, 28, 28), np.float32),
                     y=np.zeros(8, np.int32), batch_size=4, steps=1, lr=0.1, epochs=1, seed=0, on_step=None),
        kv=Obj(mx.kv.KVStoreBase), devices=Devices(), batch_size=Count(1), steps=Count(1), lr=Positive(),
        epochs=Count(1), seed=Count(0), on_step=Maybe(Callable()),
        X=Custom([Bad(5, TypeError, 'no length'), Bad(np.zeros((7, 1, 28, 28)), ValueError, 'another length')]),
        free={'y': 'as X (the same check)'}, names={'kv': ('store',), 'X': ('example',)}),
    'helpers.dist_train.network_bytes': NO_ARGUMENTS,
    'helpers.dist_train.traffic_per_step': Sweep(
        lambda: dict(result={'net_bytes': [[0, 0], [10, 20], [30, 60]]}),
        result=Custom([Bad(5, TypeError, 'not a dict'),
                       Bad({}, ValueError, 'no net_bytes'),
                       Bad({'net_bytes': [[0, 0]]}, ValueError, 'one step'),
                       Bad({'net_bytes': 'ab'}, TypeError, 'a string')]),
        names={'result': ('net_bytes', 'step')}),
    'helpers.dist_train.push_then_pull': Sweep(
        lambda: dict(kv=mx.kv.create('local')), kv=Obj(mx.kv.KVStoreBase),
        names={'kv': ('store',)}),
    'helpers.dist_train.main': Exempt("the script's entry point in a job's worker: its arguments are parse_args' "
                                      '(swept there), and a valid call creates a dist store, which needs a scheduler'),

    # ---------------------------------------------------------------------------- helpers.kvstore
    'helpers.kvstore.merge_buffer_owners': Sweep(
        lambda: dict(sizes=[3, 5, 1], k=2), sizes=sizes_list(1),
        k=Count(1, checks.MAX_DEVICES), names={'sizes': ('size',)}),
    'helpers.kvstore.reduce_owners': Sweep(
        lambda: dict(sizes=[3, 5], devices=CPU), sizes=sizes_list(1),
        devices=Devices(minimum=2), names={'sizes': ('size',)}),
    'helpers.kvstore.updates_on_store': Sweep(
        lambda: dict(kv_type='device', num_devices=2, sizes=[10, 20]),
        kv_type=Choice(('local', 'device')),
        num_devices=Count(1, checks.MAX_DEVICES), sizes=sizes_list(1),
        names={'sizes': ('size',)}),
    'helpers.kvstore.store_memory': Sweep(
        lambda: dict(cases=[('local', None)], k=2, size=1000, timeout=60), starts=True,
        cases=Custom([Bad(5, TypeError, 'not a list'), Bad([], ValueError, 'no case'),
                      Bad([('nccl', None)], ValueError, 'an unknown store'),
                      Bad([('local', 'adam')], ValueError, 'an unknown extra'),
                      Bad(['local'], TypeError, 'not a pair'),
                      Bad({'local': None}, TypeError, 'a dict')]),
        k=Count(1, checks.MAX_DEVICES), size=Count(1, 2 ** 50), timeout=Seconds(),
        names={'cases': ('kv_type', 'case', 'extra')}),
    'helpers.kvstore.pushpull_seconds': Sweep(
        lambda: dict(kv_type='local', devices=CPU, size=100, repeat=1),
        kv_type=Choice(('local', 'device')), devices=Devices(),
        size=Count(1, 2 ** 50), repeat=Count(1)),
    'helpers.kvstore.compressed_pushes': Sweep(
        lambda: dict(grad=np.array([0.3, -0.7, 0.1]), steps=2, threshold=0.5, ctx=None),
        grad=Custom([Bad('abc', TypeError, 'a string'), Bad(None, TypeError, 'None'),
                     Bad({0: 1.0}, TypeError, 'a dict'),
                     Bad(np.zeros((2, 2)), ValueError, '2-D'), Bad([], ValueError, 'empty'),
                     Bad([0.1, float('nan')], ValueError, 'nan')]),
        steps=Count(1), threshold=Positive(), ctx=Maybe(Device())),

    # ---------------------------------------------------------------------------- helpers.lessoncheck
    'helpers.lessoncheck.Broken': EXCEPTION,
    'helpers.lessoncheck.CheckFailed': EXCEPTION,
    'helpers.lessoncheck.Law': RECORD,
    'helpers.lessoncheck.Report': RECORD,
    'helpers.lessoncheck.lesson': Exempt('a decorator for the checks of this module, applied when it is imported: a '
                                         'mistake fails there, in front of the maintainer who made it'),
    'helpers.lessoncheck.run': Exempt('the engine of verify and every check_* (swept there), given laws of this '
                                      'module'),
    'helpers.lessoncheck.verify': Sweep(
        lambda: dict(qualname='helpers.split.shard_sizes', fn=print),
        run_baseline='its laws run in tests/test_lessoncheck.py',
        qualname=Choice(tuple(__import__('helpers.lessoncheck').lessoncheck.CHECKS)),
        fn=Callable(), reported={'fn': lambda report: not report.ok},
        names={'qualname': ('lesson', 'check')}),
    'helpers.lessoncheck.graded': Sweep(
        lambda: dict(qualname='helpers.comm.copy_to', cells=['', 'def copy_to(x, to):\n    return x.copyto(to)\n']),
        run_baseline='it starts a fresh Python; tests/test_assignments.py runs it, and nbgrader runs it there too',
        qualname=Choice(tuple(__import__('helpers.lessoncheck').lessoncheck.CHECKS)),
        cells=Custom([Bad('def copy_to(x, to): pass', TypeError, 'one string, not a list of them'),
                      Bad(None, TypeError, 'None'), Bad([1, 2], TypeError, 'not strings'),
                      Bad({'In': []}, TypeError, 'a dict')]),
        names={'qualname': ('lesson', 'check')}),
    **{f'helpers.lessoncheck.check_{lesson.rpartition(".")[2]}': Sweep(
        lambda lesson=lesson: dict(fn=_lesson(lesson)), run_baseline='its laws run in tests/test_lessoncheck.py',
        fn=Callable(), errors={'fn': __import__('helpers.lessoncheck').lessoncheck.CheckFailed},
        names={'fn': ('function',)})
       for lesson in __import__('helpers.lessoncheck').lessoncheck.CHECKS},

    # ---------------------------------------------------------------------------- helpers.models
    'helpers.models.init_lenet_params': Sweep(
        lambda: dict(seed=3), seed=Count(0)),
    'helpers.models.lenet_scratch': Sweep(
        lambda: dict(X=_images(2), params=__import__('helpers.models').models.init_lenet_params(0)),
        X=Array(lambda good, call: [nd.ones((2, 3, 28, 28)), nd.ones((2, 1, 14, 14)), nd.ones((28, 28))]),
        params=Custom(lambda good, call: [Bad(good[:9], ValueError, 'nine parameters'), Bad(5, TypeError, 'not a list'),
                                          Bad([p.asnumpy() for p in good], TypeError, 'NumPy arrays'),
                                          Bad(good[:1] + [good[0]] + good[2:], ValueError, 'a wrong shape')]),
        names={'X': ('image',), 'params': ('parameter',)}),
    'helpers.models.replicate_params': Sweep(
        lambda: dict(params=__import__('helpers.models').models.init_lenet_params(0), device=mx.cpu(1)),
        params=Custom([Bad(5, TypeError, 'not a list'), Bad([np.ones(3)], TypeError, 'a NumPy array'),
                       Bad(nd.ones(3), TypeError, 'a single NDArray'), Bad({'w': nd.ones(3)}, TypeError, 'a dict')]),
        device=Device(), names={'params': ('parameter',)}),
    'helpers.models.lenet': Sweep(
        lambda: dict(devices=CPU, seed=0), devices=Devices(), seed=Count(0)),
    'helpers._residual.Residual': Exempt("d2l's residual block: its constructor is d2l's (d2l.Residual), "
                                         'unchanged; only forward differs'),
    'helpers.models.resnet18': Sweep(
        lambda: dict(devices=CPU[:1], num_classes=10, width=1, seed=0), devices=Devices(),
        num_classes=Count(1, 10 ** 10), width=Count(1, 10 ** 6), seed=Count(0)),

    # ---------------------------------------------------------------------------- helpers.plot
    'helpers.plot.use_png': NO_ARGUMENTS,
    'helpers.plot.slide_fonts': NO_ARGUMENTS,
    'helpers.plot.show': Sweep(
        lambda: dict(alt='a line', fig=_figure()),
        alt=Maybe(Text(('', '   '))),
        fig=Maybe(Obj(__import__('matplotlib.figure').figure.Figure, values=[
            Bad(__import__('matplotlib.figure').figure.Figure(), ValueError, 'an empty figure')])),
        names={'fig': ('figure',)}),
    'helpers.plot.plot': Sweep(
        lambda: dict(X=[1, 2, 3], Y=[[1, 4, 9]], alt='squares'),
        call=lambda X, Y, alt: __import__('helpers.plot').plot.plot(X, Y, alt=alt),
        alt=Maybe(Text(('', ' '))), free={'X': "d2l.plot's own arguments", 'Y': 'as X'}),
    'helpers.plot.history': Sweep(
        lambda: dict(histories=_history(), title=None, figsize=(6, 3), alt='curves'),
        histories=Custom([Bad(5, TypeError, 'not a dict'), Bad([1, 2], TypeError, 'a list'),
                          Bad({}, ValueError, 'no history'),
                          Bad({'epoch': [1, 2], 'loss': [1.0]}, ValueError, 'missing a curve'),
                          Bad(dict(_history(), loss=[0.5]), ValueError, 'lengths differ'),
                          Bad({'a': 5}, TypeError, 'a run that is not a history')]),
        alt=Maybe(Text(('',))), title=Maybe(Text(())), free={'figsize': FIGSIZE},
        names={'histories': ('history', 'epoch', 'loss')}),
    'helpers.plot.timeline': Sweep(
        lambda: dict(spans=_spans(), classify=None, title=None, figsize=(6, 2), alt='lanes'),
        spans=Custom([Bad(5, TypeError, 'not a list'), Bad([('cpu(0)', 'x')], TypeError,
                                                          'not spans'),
                      Bad([], ValueError, 'no span'), Bad({'a': 1}, TypeError, 'a dict')]),
        classify=Maybe(Callable()), alt=Maybe(Text(('',))), title=Maybe(Text(())),
        free={'figsize': FIGSIZE}, names={'spans': ('span',)}),
    'helpers.plot.allreduce_sweep': Sweep(
        lambda: dict(sizes=[4, 8], measured={('ring', 2, 4): 0.1, ('ring', 2, 8): 0.2},
                     model={('ring', 2, 4): 0.1, ('ring', 2, 8): 0.2}, alt='times', figsize=(6, 2)),
        sizes=Custom([Bad(5, TypeError, 'not a list'), Bad([], ValueError, 'no size'),
                      Bad([4, 16], ValueError, 'a size not measured')]),
        measured=Custom([Bad({}, ValueError, 'empty'), Bad({('ring', 2, 4): 0.1}, ValueError, 'a size missing'),
                         Bad({'ring': 0.1}, TypeError, 'not (algorithm, k, bytes)'), Bad([1], TypeError, 'a list'),
                         Bad({('ring', 2, 4): -1.0, ('ring', 2, 8): 0.2}, ValueError, 'negative seconds')]),
        model=Custom([Bad({}, ValueError, 'empty'), Bad({('naive', 2, 4): 0.1, ('naive', 2, 8): 0.1}, ValueError,
                                                       'another algorithm')]),
        alt=ALT, free={'figsize': FIGSIZE}),
    'helpers.plot.step_timelines': Sweep(
        lambda: dict(panels={'sync': {'rank 0': [0.0, 1.0, 2.0]}}, figsize=(6, 3),
                     alt='steps'),
        panels=Custom([Bad(5, TypeError, 'not a dict'), Bad({}, ValueError, 'no panel'),
                       Bad({'a': [1, 2]}, TypeError, 'a panel that is not a dict'),
                       Bad({'a': {}}, ValueError, 'a panel with no lane'),
                       Bad({'a': {'w': []}}, ValueError, 'a lane with no time'),
                       Bad({'a': {'w': ['x']}}, TypeError, 'a time that is not a number')]),
        alt=Maybe(Text(('',))), free={'figsize': FIGSIZE},
        names={'panels': ('panel', 'lane', 'time')}),

    # ---------------------------------------------------------------------------- helpers.replay
    'helpers.replay.record': Sweep(
        lambda: dict(fn=__import__('helpers.comm').comm.allreduce_naive, k=2, size=None,
                     devices=None, reduced=False, name=None),
        fn=Callable(), k=Count(1, 11), size=Maybe(Count(1, 2 ** 40)),
        devices=Maybe(Devices()), reduced=Flag(), name=Maybe(Text(('',)))),
    'helpers.replay.reference': Sweep(
        lambda: dict(name='allreduce_ring', k=2, size=None),
        name=Choice(('allreduce_ring', 'allreduce_naive', 'reduce_scatter', 'all_gather')),
        k=Count(1, 11), size=Maybe(Count(1, 2 ** 40))),
    'helpers.replay.Replay': RECORD,
    'helpers.replay.Message': RECORD,
    'helpers.replay.holding': Sweep(
        lambda: dict(values=[17.0, 34.0], k=2, size=2),
        values=Custom([Bad('ab', TypeError, 'a string'), Bad({1: 2}, TypeError, 'a dict'),
                       Bad(None, TypeError, 'None')]),
        k=Count(1, 11), size=Count(1)),
    'helpers.replay.label': Sweep(
        lambda: dict(counts=(1, 1, 0)),
        counts=Custom([Bad(5, TypeError, 'a number'), Bad('11', TypeError, 'a string'),
                       Bad((1, 'a'), TypeError, 'a string count'), Bad((1, -1), ValueError,
                                                                       'a negative count'),
                       Bad((1.5,), TypeError, 'a float count')])),

    # ---------------------------------------------------------------------------- helpers.scaling
    'helpers.scaling.WarmUp': Sweep(
        lambda: dict(base_lr=0.4, warmup_steps=10, warmup_begin_lr=0.1,
                     warmup_mode='linear'),
        base_lr=Positive(), warmup_steps=Count(0), warmup_begin_lr=NonNegative(),
        warmup_mode=Choice(('linear', 'constant'))),
    'helpers.scaling.lr_recipe': Sweep(
        lambda: dict(recipe='warmup', batch_size=256, warmup_steps=10, base_lr=0.1,
                     base_batch=64),
        recipe=Choice(('fixed', 'linear', 'warmup')), batch_size=Count(1),
        warmup_steps=Count(0), base_lr=Positive(), base_batch=Count(1)),
    'helpers.scaling.train_recipe': Sweep(
        lambda: dict(recipe='linear', batch_size=32, devices=CPU, epochs=1, n_train=64, n_test=64, warmup_epochs=1,
                     base_lr=0.1, base_batch=64, seed=0, rule=None),
        recipe=Choice(('fixed', 'linear', 'warmup')), batch_size=Count(1), devices=Devices(), epochs=Count(1),
        n_train=Maybe(Count(1, 60000)), n_test=Maybe(Count(1, 10000)), warmup_epochs=Count(0), base_lr=Positive(),
        base_batch=Count(1), seed=Count(0), rule=Maybe(Callable())),
    'helpers.plot.large_batch': Sweep(
        lambda: dict(grid=__import__('helpers.scaling').scaling.stored_results('scaling_large_batch'), batch=512),
        grid=Custom([Bad(5, TypeError, 'not a dict'), Bad({}, ValueError, 'no runs')]),
        batch=Custom([Bad('512', TypeError, 'a string'), Bad(500, ValueError, 'not in the grid'),
                      Bad(0, ValueError, 'zero')]), alt=ALT),
    'helpers.scaling.epoch_time': Sweep(
        lambda: dict(k=4, n=60000, batch=256, overhead=1e-3, per_example=1e-4,
                     nbytes=1e6, alpha=1e-5, bandwidth=1e9),
        k=K_ARRAY, n=_whole_or_array(0), batch=_whole_or_array(1), overhead=NonNegative(),
        per_example=NonNegative(), nbytes=NonNegative(), alpha=NonNegative(),
        bandwidth=Positive(), names={'k': ('devices',)}),
    'helpers.plot.speedups': Sweep(
        lambda: dict(speedup={('LeNet', 'PCIe'): [1.0, 1.8, 2.5]}),
        speedup=Custom([Bad(5, TypeError, 'not a dict'), Bad({}, ValueError, 'empty'),
                        Bad({'LeNet': [1.0]}, TypeError, 'a key that is not a pair'),
                        Bad({('a', 'b'): 'xy'}, TypeError, 'a curve of strings'),
                        Bad({('a', 'b'): []}, ValueError, 'an empty curve')]), alt=ALT),
    'helpers.scaling.pushpull_step': Sweep(
        lambda: dict(nbytes=1e6, rate=1e9, alpha=1e-4, compression=False),
        nbytes=NonNegative(), rate=Positive(), alpha=NonNegative(), compression=Flag()),
    'helpers.scaling.reached_link': Sweep(
        lambda: dict(step={'nbytes': 1e6, 'median': 0.02}, alpha=1e-4),
        step=Custom([Bad(5, TypeError, 'not a dict'), Bad({}, ValueError, 'no median'),
                     Bad({'nbytes': 1e6, 'median': 1e-4}, ValueError,
                         'faster than its latency'),
                     Bad({'nbytes': '1', 'median': 0.1}, TypeError, 'a string')]),
        alpha=NonNegative(), names={'step': ('median', 'nbytes')}),
    'helpers.plot.pushpull': Sweep(
        lambda: dict(rows=[{'rate': 1e9, 'size': 10, 'compression': False,
                            'median': 0.01, 'predicted': 0.008}], labels={10: '40 B'}),
        rows=Custom([Bad(5, TypeError, 'not a list'), Bad([5], TypeError, 'not rows')]),
        labels=Custom([Bad(5, TypeError, 'not a dict'),
                       Bad({}, ValueError, 'a size without a label')]),
        alt=ALT, names={'rows': ('row',), 'labels': ('label',)}),
    'helpers.pushpull.measure_pushpull': Sweep(
        lambda: dict(sizes=[10], rates=[None, 1e9], compression=False, steps=1,
                     timeout=60, echo=False), starts=True,
        sizes=sizes_list(1), rates=Custom([Bad(5, TypeError, 'not a list'),
                                           Bad([0], ValueError, 'a zero rate'),
                                           Bad(['1e9'], TypeError, 'a string')]),
        compression=Flag(), steps=Count(1), timeout=Seconds(), free={'echo': ECHO},
        names={'sizes': ('size',), 'rates': ('rate',)}),
    'helpers.pushpull.PushPullResult': RECORD,
    'helpers.scaling.save_results': Sweep(
        lambda: dict(result={'a': 1}, path=os.path.join(_tmp(), 'r.json'), start=0.0),
        result=Mapping(), path=Path(), start=Number()),
    'helpers.scaling.stored_results': Sweep(
        lambda: dict(benchmark='scaling_pushpull'),
        benchmark=Choice(('scaling_pushpull', 'scaling_large_batch'))),

    # ---------------------------------------------------------------------------- helpers.source
    'helpers.source.show': Sweep(
        lambda: dict(objs=[Sweep, _history]),
        call=lambda objs: __import__('helpers.source').source.show(*objs),
        objs=Custom([Bad([], ValueError, 'nothing'), Bad([5], TypeError, 'a number'),
                     Bad(['f'], TypeError, 'a string'), Bad([print], TypeError, 'a builtin')]),
        names={'objs': ('function', 'class')}),

    # ---------------------------------------------------------------------------- helpers.timing
    'helpers.timing.time_it': Sweep(
        lambda: dict(fn=lambda: None, repeat=2, warmup=0, sync=True), fn=Callable(),
        repeat=Count(1), warmup=Count(0), sync=Flag()),
    'helpers.timing.compare': Sweep(
        lambda: dict(variants={'a': lambda: None, 'b': lambda: None}, repeat=1),
        variants=Custom([Bad(5, TypeError, 'not a dict'), Bad([print], TypeError, 'a list'),
                         Bad({}, ValueError, 'nothing to compare'),
                         Bad({'a': 5}, TypeError, 'not a function')]),
        repeat=Count(1), names={'variants': ('variant', 'fn')}),
    'helpers.timing.copy_times': Sweep(
        lambda: dict(src=mx.cpu(0), dst=mx.cpu(1), sizes=[4096], repeat=1, fresh=False),
        src=Device(), dst=Device(), repeat=Count(1), fresh=Flag(),
        sizes=Custom(_count_bads(4, [Bad([6], ValueError, 'not whole float32s'),
                                     Bad([0], ValueError, 'zero'),
                                     Bad([2 ** 62], ValueError, 'beyond any memory')])),
        names={'sizes': ('size',)}),
    'helpers.timing.fit_alpha_beta': Sweep(
        lambda: dict(sizes=[1e3, 1e6, 1e7], seconds=[1e-5, 2e-4, 2e-3]),
        sizes=Custom([Bad('abc', TypeError, 'a string'), Bad(None, TypeError, 'None'),
                      Bad([1e3, 1e6], ValueError, 'another length'),
                      Bad([1e3, -1, 1e7], ValueError, 'negative'),
                      Bad([1e3, float('nan'), 1e7], ValueError, 'nan')]),
        seconds=Custom([Bad(['a', 'b', 'c'], TypeError, 'strings'),
                        Bad([1e-5], ValueError, 'one pair'),
                        Bad([0.0, 2e-4, 2e-3], ValueError, 'a zero time'),
                        Bad([1e-5, float('inf'), 2e-3], ValueError, 'inf')])),
    'helpers.timing.Relation': Sweep(
        lambda: dict(times_a=[2.0, 2.1, 2.2], times_b=[1.0, 1.1, 1.0], at_least=1.5,
                     what='a / b'),
        times_a=Custom([Bad(5, TypeError, 'not a list'), Bad([1.0, 2.0], ValueError, 'two'),
                        Bad([1.0, 'x', 2.0], TypeError, 'a string'),
                        Bad([1.0, 0.0, 1.0], ValueError, 'a zero time'),
                        Bad([1.0, float('nan'), 1.0], ValueError, 'nan')]),
        times_b=Custom([Bad(None, TypeError, 'None'), Bad([1.0, -1.0, 1.0], ValueError,
                                                          'negative')]),
        at_least=Positive(), free={'what': MESSAGE},
        names={'times_a': ('timing', 'times'), 'times_b': ('timing', 'times')}),
    'helpers.timing.relation': Sweep(
        lambda: dict(a=lambda: None, b=lambda: None, at_least=1.5, repeat=3, what='a/b'),
        a=Callable(), b=Callable(), at_least=Positive(), repeat=Count(3),
        free={'what': MESSAGE}),

    # ---------------------------------------------------------------------------- helpers.tracing
    'helpers.tracing.Span': RECORD,
    'helpers.tracing.traceable': Sweep(
        lambda: dict(devices=CPU), devices=Devices(minimum=0, present=False)),
    'helpers.tracing.trace': Sweep(
        lambda: dict(fn=lambda: nd.ones(2) + 1), call=lambda fn: __import__(
        'helpers.tracing').tracing.trace(fn), fn=Callable()),
    'helpers.tracing.phase': Sweep(
        lambda: dict(name='broadcast_add'), name=Text(('',))),
    'helpers.tracing.busy': Sweep(
        lambda: dict(spans=_spans()),
        spans=Custom([Bad(5, TypeError, 'not a list'), Bad([5], TypeError, 'not spans'),
                      Bad({'a': 1}, TypeError, 'a dict'),
                      Bad([('cpu(0)', 'x', 2.0, 1.0)], ValueError, 'ends before it starts')]),
        names={'spans': ('span',)}),
    'helpers.tracing.overlap': Sweep(
        lambda: dict(spans=_spans(), at_least=2),
        spans=Custom([Bad(5, TypeError, 'not a list'), Bad([5], TypeError, 'not spans')]),
        at_least=Count(1), names={'spans': ('span',)}),

    # ---------------------------------------------------------------------------- helpers.train
    'helpers.train.sgd': Sweep(
        lambda: dict(params=_with_grads([nd.ones(3), nd.ones(2, ctx=mx.cpu(1))]), lr=0.1,
                     batch_size=8),
        params=Custom([Bad(5, TypeError, 'not a list'), Bad([np.ones(3)], TypeError, 'NumPy'),
                       Bad(nd.ones(3), TypeError, 'a single NDArray'),
                       Bad([nd.ones(3)], ValueError, 'no gradient attached')]),
        lr=Positive(), batch_size=Positive(), names={'params': ('parameter',)}),   # notebook 13: the loss scale
    'helpers.train.train_batch_scratch': Sweep(
        lambda: dict(X=_images(4), y=nd.array([1, 2, 3, 4]), device_params=_replicas(), devices=CPU, lr=0.1),
        X=Array(lambda good, call: [_images(3), _images(1)]), devices=Devices(), lr=Positive(),
        names={'X': ('example', 'split_and_load'), 'device_params': ('replica', 'parameter')},
        device_params=Custom(lambda good, call: [Bad(5, TypeError, 'not a list'),
                                                 Bad(good[:1], ValueError, 'one replica short')]),
        free={'y': 'as X (split_batch checks both)',
              'send': "a function: called for every message; a non-function fails at the first transfer with "
                      "Python's TypeError"}),
    'helpers.train.train_batch': Sweep(
        lambda: dict(zip(('net', 'trainer'), _net_and_trainer()), X=_images(4), y=nd.array([1, 2, 3, 4]), devices=CPU,
                     weights=None),
        net=Obj(gluon.Block), trainer=Obj(gluon.Trainer), X=Array(lambda good, call: [_images(3), _images(1)]),
        devices=Devices(), weights=Maybe(Weights('devices')), free={'y': 'as X (split_batch checks both)'},
        names={'X': ('example', 'split_and_load'), 'net': ('network',)}),
    'helpers.train.evaluate_accuracy': Sweep(
        lambda: dict(net=_net_and_trainer()[0], data_iter=_loader(), devices=CPU), net=Callable(), devices=Devices(),
        data_iter=Custom([Bad(5, TypeError, 'not iterable'), Bad([], ValueError, 'no batch'),
                          Bad([(nd.ones((2, 1, 28, 28)),)], TypeError, 'no labels')]),
        names={'data_iter': ('batch', 'data')}),
    'helpers.train.scratch_net': Sweep(
        lambda: dict(device_params=_replicas(), devices=CPU, forward=None),
        devices=Devices(), forward=Maybe(Callable()),
        device_params=Custom(lambda good, call: [
            Bad(5, TypeError, 'not a list'), Bad(good[:1], ValueError, 'one replica short')]),
        names={'device_params': ('replica', 'parameter')}),
    'helpers.train.train_scratch': Sweep(
        lambda: dict(params=__import__('helpers.models').models.init_lenet_params(0), train_iter=_loader(),
                     test_iter=_loader(), devices=CPU, lr=0.1, num_epochs=1, progress=False, step=None, evaluate=None,
                     forward=None),
        params=Custom([Bad(5, TypeError, 'not a list'), Bad([np.ones(3)], TypeError, 'NumPy arrays')]),
        train_iter=Custom([Bad(5, TypeError, 'not iterable'), Bad([], ValueError, 'no batch')]),
        test_iter=Custom([Bad(None, TypeError, 'None'), Bad([], ValueError, 'no batch')]),
        devices=Devices(), num_epochs=Count(1), progress=Flag(), step=Maybe(Callable()),
        evaluate=Maybe(Callable()), forward=Maybe(Callable()),
        lr=Custom([Bad('0.1', TypeError, 'a string'), Bad(None, TypeError, 'None'), Bad(True, TypeError, 'a bool'),
                   Bad(0, ValueError, 'zero'), Bad(float('nan'), ValueError, 'nan'), Bad(-0.1, ValueError, 'negative'),
                   Bad([0.1, 0.1], ValueError, 'two rates for one epoch'), Bad(['0.1'], TypeError, 'a string rate'),
                   Bad([float('inf')], ValueError, 'an infinite rate')]),
        names={'params': ('parameter',), 'train_iter': ('batch', 'train'), 'test_iter': ('batch', 'test')}),
    'helpers.train.train': Sweep(
        lambda: dict(zip(('net', 'trainer'), _net_and_trainer()), train_iter=_loader(), test_iter=_loader(),
                     devices=CPU, num_epochs=1, progress=False, step=None),
        net=Obj(gluon.Block), trainer=Obj(gluon.Trainer), devices=Devices(), num_epochs=Count(1), progress=Flag(),
        step=Maybe(Callable()), train_iter=Custom([Bad(5, TypeError, 'not iterable'), Bad([], ValueError, 'no batch')]),
        test_iter=Custom([Bad(None, TypeError, 'None'), Bad([], ValueError, 'no batch')]),
        names={'net': ('network',), 'train_iter': ('batch', 'train'), 'test_iter': ('batch', 'test')}),
    'helpers.train.max_gap': Sweep(
        lambda: dict(a=[nd.ones(3), nd.ones((2, 2))], b=[nd.ones(3), nd.zeros((2, 2))]),
        a=Custom(lambda good, call: [
            Bad(5, TypeError, 'not a list'), Bad(good[:1], ValueError, 'fewer arrays'),
            Bad([], ValueError, 'no arrays'), Bad(good + good, ValueError, 'more arrays'),
            Bad([nd.ones(3), nd.ones(4)], ValueError, 'another shape'),
            Bad({0: good[0]}, TypeError, 'a dict'), Bad(good[0], TypeError, 'one array'),
            Bad([good[0], 'x'], TypeError, 'a string among them')]),
        b=Custom(lambda good, call: [Bad(good[:1], ValueError, 'fewer arrays'),
                                     Bad(None, TypeError, 'None')]),
        names={'a': ('array', 'model'), 'b': ('array', 'model')}),
}


def like(other, fn, rename=None, extra=None, free=None, names=None, call=None):
    """The entry of a check of helpers.checks that guards the helper ``other``: its baseline and its
    kinds, for the parameters of ``fn`` (``rename``: ``{parameter of fn: parameter of other}``;
    ``extra``: baseline values of parameters ``other`` does not have; ``call``: as in :class:`Sweep`)."""
    source, rename, free = ENTRIES[other], dict(rename or {}), dict(free or {})
    params = [p for p in inspect.signature(fn).parameters if p not in free]
    origin = {p: rename.get(p, p) for p in params}

    def baseline():
        found = source.arguments()
        return {**{p: found[o] for p, o in origin.items() if o in found}, **(extra or {})}

    kinds = {p: source.kinds[o] for p, o in origin.items() if o in source.kinds}
    words = {p: tuple(source.names.get(o, ())) + (o,) + tuple((names or {}).get(p, ())) for p, o in origin.items()}
    errors = {p: source.errors[o] for p, o in origin.items() if o in source.errors}
    free.update({p: source.free[o] for p, o in origin.items() if o in source.free and p not in kinds})
    return Sweep(baseline, free=free, names=words, errors=errors, call=call, **kinds)


NAME = {'name': MESSAGE}
ENTRIES.update({f'helpers.checks.{name}': like(other, getattr(checks, name), **options) for name, other, options in [
    ('devices_and_bytes', 'helpers.costmodel.ring_lower_bound', {}),
    ('bytes_per_device', 'helpers.costmodel.naive_bytes_per_device', {}),
    ('index', 'helpers.comm.owner_chunk', dict(free={**NAME, 'count_name': MESSAGE}, extra=dict(name='i'))),
    ('context', 'helpers.models.replicate_params', dict(rename={'value': 'device'}, free=NAME,
                                                         extra=dict(name='device'))),
    ('ndarray', 'helpers.comm.copy_to', dict(rename={'value': 'x'}, free=NAME, extra=dict(name='x'))),
    ('parameters', 'helpers.models.replicate_params', dict(free={**NAME, 'grads': POLICY})),
    ('copy', 'helpers.comm.copy_to', {}),
    ('link', 'helpers.link.Link', {}),
    ('link_send', 'helpers.comm.copy_to', {}),
    ('sweep_times', 'helpers.plot.allreduce_sweep', dict(rename={'table': 'measured'}, free={**NAME, 'sizes': POLICY},
                                                         extra=dict(name='measured', sizes=[4, 8]))),
    ('replica', 'helpers.models.replicate_params', {}),
    ('lenet', 'helpers.models.lenet_scratch', dict(free={'shapes': POLICY},
                                                   extra=dict(shapes=__import__('helpers.models').models.LENET_SHAPES))),
    ('update', 'helpers.train.sgd', {}),
    ('gluon_step', 'helpers.train.train_batch', {}),
    ('batches', 'helpers.train.train_scratch', dict(rename={'source': 'train_iter'}, free=NAME,
                                                    extra=dict(name='train_iter'))),
    ('evaluation', 'helpers.train.evaluate_accuracy', dict(rename={'devs': 'devices'},    # batches are lazy: iterate
                                                           call=lambda net, data_iter, devs: list(
                                                               checks.evaluation(net, data_iter, devs)))),
    ('loop', 'helpers.train.train_scratch', {}),
    ('same_arrays', 'helpers.train.max_gap', {}),
    ('class_ids', 'helpers.data.get_fashion_mnist_labels', dict(rename={'values': 'labels'}, extra=dict(n_classes=10),
                                                                 free={**NAME, 'n_classes': POLICY})),
    ('vector', 'helpers.kvstore.compressed_pushes', dict(rename={'values': 'grad'}, free=NAME,
                                                         extra=dict(name='grad'))),
    ('numeric', 'helpers.replay.holding', dict(free=NAME, extra=dict(name='values'))),
    ('module', 'helpers.dist_train.command', dict(rename={'value': 'module'}, free=NAME, extra=dict(name='module'))),
    ('whole_or_array', 'helpers.scaling.epoch_time', dict(rename={'value': 'n'}, free={**NAME, 'minimum': POLICY},
                                                          extra=dict(name='n', minimum=0))),
    ('epoch_model', 'helpers.scaling.epoch_time', {}),
    ('pushpull', 'helpers.scaling.pushpull_step', {}),
    ('measured_step', 'helpers.scaling.reached_link', {}),
    ('warmup', 'helpers.scaling.WarmUp', {}),
    ('large_batch', 'helpers.scaling.lr_recipe', dict(free={'recipes': POLICY},
                                                      extra=dict(recipes=('fixed', 'linear', 'warmup')))),
    ('kvstore', 'helpers.dist_train.push_then_pull', dict(free=NAME)),
    ('store_cases', 'helpers.kvstore.store_memory', dict(free={'store_types': POLICY, 'extras': POLICY},
                                                         extra=dict(store_types=('local', 'device'),
                                                                    extras=(None, 'sgd', 'momentum', '2bit')))),
    ('processes', 'helpers.placement.two_machines', dict(free=NAME)),
    ('pids', 'helpers.procs.kill', dict(rename={'values': 'pids'}, free=NAME)),
    ('interface', 'helpers.netns.uncap', {}),
    ('epoch_steps', 'helpers.dist_train.steps_per_epoch', {}),
    ('worker_shard', 'helpers.dist_train.my_shard', {}),
    ('worker', 'helpers.dist_train.train_worker', {}),
    ('results', 'helpers.dist_train.plot_timelines', dict(free=NAME)),
    ('byte_counters', 'helpers.dist_train.traffic_per_step', {}),
    ('timings', 'helpers.timing.Relation', dict(rename={'values': 'times_a'}, free={**NAME, 'minimum': POLICY},
                                                extra=dict(name='times_a', minimum=3))),
    ('spans', 'helpers.tracing.busy', dict(rename={'values': 'spans'}, free=NAME)),
    ('figure', 'helpers.plot.show', dict(free={'title': 'as helpers.plot.history title'})),
    ('curves', 'helpers.plot.history', {}),
    ('lanes', 'helpers.plot.step_timelines', {}),
    ('grid', 'helpers.plot.large_batch', dict(rename={'values': 'grid'})),
    ('speedups', 'helpers.plot.speedups', dict(rename={'values': 'speedup'})),
    ('pushpull_rows', 'helpers.plot.pushpull', {}),
]})
ENTRIES['helpers.checks.option'] = Sweep(
    lambda: dict(value='dist_sync', name='kvstore', action=_action('kvstore')), value=Choice(('dist_sync',
                                                                                               'dist_async',
                                                                                               'dist_device_sync')),
    names={'value': ('kvstore',)}, free={'name': MESSAGE, 'action': "the script's own argparse action"})


# ----------------------------------------------------------- helpers that main gained after the sweep began
ENTRIES.update({
    'helpers.devices.parse_devices': Sweep(
        lambda: dict(value='cpu:2', gpus=0),
        value=Text(('', 'cpu:0', 'cpu:00', 'gpu:', 'gpu:0,0', 'gpu:0', 'xpu:1', 'cpu:2,3', 'cpu:1000000000000')),
        gpus=Count(0), names={'value': ('MXDP_DEVICES',)}),
    'helpers.devices.gpu_pool': Sweep(
        lambda: dict(chosen=None), chosen=Maybe(Devices(present=False))),   # parse_devices checked the ids
    'helpers.kvstore.arrays_per_key': Sweep(
        lambda: dict(k=2, extra='sgd'), k=Count(1), extra=Choice((None, 'sgd', 'momentum', '2bit'))),
    'helpers.lessoncheck.find': Sweep(
        lambda: dict(qualname='helpers.split.shard_sizes'), qualname=Text(()),
        names={'qualname': ('lesson',)}),
    'helpers.job.loopback_address': Sweep(
        lambda: dict(rng=None),
        rng=Custom([Bad(5, TypeError, 'a seed, not a generator'), Bad('x', TypeError, 'a string'),
                    Bad(np.random.default_rng(0), TypeError, "NumPy's Generator (integers, not randint)")])),
    'helpers.buckets.plan_buckets': Sweep(
        lambda: dict(sizes=[3, 5, 2], bucket_bytes=16, itemsize=4),
        sizes=sizes_list(1), bucket_bytes=Count(1), itemsize=Count(1), names={'sizes': ('size',)}),
    'helpers.checks.bucket_plan': Sweep(
        lambda: dict(sizes=[3, 5, 2], bucket_bytes=16, itemsize=4),
        sizes=sizes_list(1), bucket_bytes=Count(1), itemsize=Count(1), names={'sizes': ('size',)}),
    'helpers.buckets.bucketed_time': Sweep(
        lambda: dict(sizes=[3, 5, 2], bucket_bytes=16, cost=lambda m: 1e-3 + 1e-9 * m, itemsize=4),
        sizes=sizes_list(1), bucket_bytes=Count(1), cost=Callable(), itemsize=Count(1),
        names={'sizes': ('size',)}),
    'helpers.sharding.zero_bytes': Sweep(
        lambda: dict(n_params=1000, k=4, weight_bytes=4, grad_bytes=4, state_bytes=8, stage=1),
        n_params=Count(1), k=Count(1), weight_bytes=NonNegative(), grad_bytes=NonNegative(),
        state_bytes=NonNegative(), stage=Custom([Bad(4, ValueError, 'no stage 4'), Bad(-1, ValueError, 'negative'),
                                                 Bad(1.0, TypeError, 'a float'), Bad('1', TypeError, 'a string')])),
    'helpers.precision.next_scale': Sweep(
        lambda: dict(scale=1024.0, updated=True, good_steps=3, growth_interval=2000),
        scale=Positive(), updated=Flag(), good_steps=Custom([
            Bad(-1, ValueError, 'negative'), Bad(2000, ValueError, 'at growth_interval: never grows again'),
            Bad(2.5, TypeError, 'a fraction of a step'), Bad('3', TypeError, 'a string')]),
        growth_interval=Custom([Bad(0, ValueError, 'zero'), Bad(-5, ValueError, 'negative'),
                                Bad(2000.0, TypeError, 'a float'), Bad(None, TypeError, 'None')])),
    'helpers.precision.float16_fate': Sweep(
        lambda: dict(values=np.array([1e-8, 1.0, 7e4], np.float32), scale=1.0),
        values=Custom([Bad(np.array([1, 2]), TypeError, 'integers'), Bad(np.zeros(3, np.float32), ValueError,
                                                                             'no non-zero entry'),
                       Bad(np.array(['a']), TypeError, 'strings')]),
        scale=Positive()),
    'helpers.precision.all_finite': Sweep(
        lambda: dict(arrays=[nd.ones(3), nd.zeros((2, 2))]),
        arrays=Custom([Bad([], ValueError, 'empty'), Bad(nd.ones(3), TypeError, 'a single NDArray'),
                       Bad([np.ones(3)], TypeError, 'a NumPy array'), Bad({'a': nd.ones(3)}, TypeError, 'a dict'),
                       Bad(5, TypeError, 'a number')])),
    'helpers.scaling.grid_by_setting': Sweep(
        lambda: dict(grid={'runs': [{'batch': 64, 'recipe': 'fixed', 'lr': 0.1, 'seed': 0}]}),
        grid=Custom([Bad(5, TypeError, 'not a dict'), Bad({}, ValueError, 'no runs'),
                     Bad({'runs': []}, ValueError, 'empty runs'), Bad({'runs': [5]}, ValueError, 'a run of no keys'),
                     Bad({'runs': [{'batch': 64}]}, ValueError, 'a run without recipe and lr')])),
    'helpers.memory.StorageMeter': NO_ARGUMENTS,
    'helpers.buckets.Overlap': RECORD,
    'helpers.sharding.Replica': RECORD,
    'helpers.checkpoint.main': Exempt("the script's entry point in a job's worker: its arguments are its argparse's "
                                      'and a valid call trains and saves a checkpoint in a dist job'),
})
ENTRIES.update({f'helpers.checks.{name}': like(other, getattr(checks, name)) for name, other in [
    ('grid_runs', 'helpers.scaling.grid_by_setting'), ('loss_scale', 'helpers.precision.next_scale')]})

# ------------------------------------------------------------------ notebooks 05-13: the helpers that waited (PENDING)
def _bucket_grads():
    return [[nd.ones(3, ctx=d) for d in CPU], [nd.ones((2, 2), ctx=d) for d in CPU]]


def _losses_and_groups():
    from mxnet import autograd
    ps = [nd.ones(3, ctx=d) for d in CPU]
    for p in ps:
        p.attach_grad()
    with autograd.record():
        losses = [(p * p).sum() for p in ps]
    return {'losses': losses, 'groups': [[p.grad for p in ps]]}


def _gluon_params():
    from helpers.models import lenet
    return list(lenet(CPU).collect_params().values())


def _backward_spans():
    from helpers.tracing import Span
    return [Span('cpu(0)', '_backward_Convolution', 0.0, 2.0), Span('cpu(1)', 'CopyCPU2CPU', 1.0, 3.0)]


def _flat_replicas():
    from helpers.models import init_lenet_params
    from helpers.sharding import adam_updaters, make_replicas
    return make_replicas(init_lenet_params(0), CPU), adam_updaters(CPU, 1e-3, 4)


def _flat_step():
    replicas, updaters = _flat_replicas()
    return dict(X=_images(4), y=nd.array([1, 2, 3, 4]), replicas=replicas, devices=CPU, updaters=updaters)


FLAT_STEP = dict(
    X=Array(lambda good, call: [_images(1)]), devices=Devices(),
    replicas=Custom(lambda good, call: [Bad(5, TypeError, 'not a list'), Bad(good[:1], ValueError, 'one replica short'),
                                        Bad([r.weights for r in good], TypeError, 'flat arrays, not replicas')]),
    updaters=Custom(lambda good, call: [Bad(5, TypeError, 'not a list'), Bad(good[:1], ValueError, 'one short'),
                                        Bad([5, 5], TypeError, 'not updaters')]),
    names={'X': ('example', 'split_and_load'), 'replicas': ('replica',), 'updaters': ('updater',)})


def _two_params():
    return [nd.ones((2, 2)), nd.ones(6)]


def _net_and_adam():
    from helpers.checkpoint import adam_trainer
    from helpers.models import lenet
    net = lenet(CPU)
    return {'net': net, 'trainer': adam_trainer(net, 1e-3)}


def _checkpoint():
    """A checkpoint written once (prefix)."""
    from helpers.checkpoint import save_checkpoint
    prefix = os.path.join(_tmp(), 'checkpoint')
    if not os.path.isfile(prefix + '.states'):
        save_checkpoint(prefix, device=mx.cpu(0), **_net_and_adam())
    return prefix


def _worker_results():
    path = os.path.join(_tmp(), 'checkpoint-results')
    os.makedirs(path, exist_ok=True)
    for r in range(2):
        with open(os.path.join(path, f'result-rank{r}.json'), 'w') as f:
            json.dump({'rank': r, 'first_step': 0, 'steps': 2, 'wrote': []}, f)
        np.savez(os.path.join(path, f'weights-rank{r}.npz'), p0=np.ones(3))
    return path


def _seed_runs():
    return [{'kvstore': s, 'ranks': [{'seconds': 1.0 + r + i, 'test_acc': 0.8} for r in range(2)]}
            for s in ('dist_sync', 'dist_async') for i in range(2)]


LENET_PARAMS = Custom([Bad(5, TypeError, 'not a list'), Bad([np.ones(3)], TypeError, 'a NumPy array'),
                       Bad(nd.ones(3), TypeError, 'a single NDArray'), Bad({'w': nd.ones(3)}, TypeError, 'a dict')])
SCRATCH_REPLICAS = Custom(lambda good, call: [Bad(5, TypeError, 'not a list'),
                                              Bad(good[:1], ValueError, 'one replica short')])

ENTRIES.update({
    'helpers.accumulation.accumulating_replica': Sweep(
        lambda: dict(params=__import__('helpers.models').models.init_lenet_params(0), device=mx.cpu(1)),
        params=LENET_PARAMS, device=Device(), names={'params': ('parameter',)}),
    'helpers.accumulation.train_batch_accumulated': Sweep(
        lambda: dict(micro_batches=[(_images(4), nd.array([1, 2, 3, 4]))] * 2, devices=CPU, lr=0.1,
                     device_params=[__import__('helpers.accumulation').accumulation.accumulating_replica(
                         __import__('helpers.models').models.init_lenet_params(0), d) for d in CPU]),
        micro_batches=Custom([Bad(5, TypeError, 'not a list'), Bad([], ValueError, 'no micro-batch'),
                              Bad([(_images(4),)], TypeError, 'no labels'),
                              Bad({0: (_images(4), nd.ones(4))}, TypeError, 'a dict'),
                              Bad([(_images(4).asnumpy(), nd.ones(4))], TypeError, 'NumPy images')]),
        device_params=SCRATCH_REPLICAS, devices=Devices(), lr=Positive(),
        names={'device_params': ('replica', 'parameter')}, free={'send': 'as allreduce_naive'}),
    'helpers.buckets.backward_and_send': Sweep(
        lambda: dict(_losses_and_groups(), wait=False, allreduce=__import__('helpers.comm').comm.allreduce_naive),
        losses=Custom([Bad(5, TypeError, 'not a list'), Bad([], ValueError, 'no loss'),
                       Bad(nd.ones(3), TypeError, 'a single NDArray'), Bad([np.ones(1)], TypeError, 'NumPy')]),
        groups=Custom([Bad(5, TypeError, 'not a list'), Bad([nd.ones(3)], TypeError, 'an NDArray, not a group'),
                       Bad({0: [nd.ones(3)]}, TypeError, 'a dict'), Bad([[]], ValueError, 'an empty group'),
                       Bad([[nd.ones(3), nd.ones(4, ctx=mx.cpu(1))]], ValueError, 'two shapes')]),
        wait=Flag(), allreduce=Callable()),
    'helpers.buckets.allreduce_bucketed': Sweep(
        lambda: dict(grads=_bucket_grads(), bucket_bytes=16), bucket_bytes=Count(1),
        grads=Custom(lambda good, call: [
            Bad(5, TypeError, 'not a list'), Bad([], ValueError, 'no gradient'),
            Bad(good[0], TypeError, 'one gradient'), Bad({0: good[0]}, TypeError, 'a dict'),
            Bad([good[0], good[1][::-1]], ValueError, 'devices in another order'),
            Bad([good[0], [a.astype('float64') for a in good[1]]], TypeError, 'two dtypes')]),
        free={'allreduce': 'as allreduce_naive: a function, not called before the checks'}),
    'helpers.buckets.bucket_gradients': Sweep(
        lambda: dict(params=_gluon_params(), bucket_bytes=64), bucket_bytes=Count(1),
        params=Custom(lambda good, call: [
            Bad(5, TypeError, 'not a list'), Bad([], ValueError, 'no parameter'),
            Bad(good[0], TypeError, 'one parameter'), Bad([nd.ones(3)], TypeError, 'NDArrays'),
            Bad([gluon.Parameter('w', shape=(3,))], ValueError, 'not initialised'),
            Bad({p.name: p for p in good}, TypeError, 'a dict')]),
        names={'params': ('parameter',)}),
    'helpers.buckets.flat_buckets': Sweep(
        lambda: dict(sizes=[3, 5, 2], bucket_bytes=16, devices=CPU, dtype='float32'),
        sizes=sizes_list(1), bucket_bytes=Count(1), devices=Devices(),
        dtype=Custom([Bad(None, TypeError, 'None: NumPy reads it as float64'), Bad(5, TypeError, 'a number'),
                      Bad('xx', ValueError, 'no dtype'), Bad('U3', ValueError, 'strings'),
                      Bad('complex64', ValueError, 'not an NDArray dtype'), Bad(['float32'], TypeError, 'a list')]),
        names={'sizes': ('size',)}),
    'helpers.buckets.overlap': Sweep(
        lambda: dict(spans=_backward_spans(), classify=__import__('helpers.tracing').tracing.phase),
        spans=Custom([Bad(5, TypeError, 'not a list'), Bad([], ValueError, 'no span'),
                      Bad([('cpu(0)', 'x')], TypeError, 'not spans'), Bad({'a': 1}, TypeError, 'a dict'),
                      Bad([('cpu(0)', '_backward_x', 2.0, 1.0)], ValueError, 'ends before it starts'),
                      Bad([('cpu(0)', 'CopyCPU2CPU', 0.0, 1.0)], ValueError, 'no backward operator')]),
        classify=Callable(), names={'spans': ('span', 'trace')}),
    'helpers.buckets.time_buckets': Sweep(
        lambda: dict(sizes=[3, 5], bucket_sizes=[16], devices=CPU, single=(64,), repeat=1,
                     allreduce=__import__('helpers.comm').comm.allreduce_naive),
        sizes=sizes_list(1), devices=Devices(), repeat=Count(1), allreduce=Callable(),
        bucket_sizes=Custom(_count_bads(1, [Bad([], ValueError, 'empty'), Bad([0], ValueError, 'zero bytes')])),
        single=Custom(_count_bads(4, [Bad([2], ValueError, 'below 4 bytes')])),
        names={'sizes': ('size',), 'bucket_sizes': ('bucket',)}),
    'helpers.checkpoint.adam_trainer': Sweep(
        lambda: dict(net=_net_and_adam()['net'], lr=1e-3, kvstore='device', update_on_kvstore=None),
        net=Obj(gluon.Block), lr=Positive(), update_on_kvstore=Maybe(Flag()),
        kvstore=Custom([Bad(5, TypeError, 'a number'), Bad(['device'], TypeError, 'a list'),
                        Bad('', ValueError, 'empty')]), names={'net': ('network',)}),
    'helpers.checkpoint.init_store': Sweep(
        lambda: dict(trainer=_net_and_adam()['trainer']), trainer=Obj(gluon.Trainer)),
    'helpers.checkpoint.command': Sweep(
        lambda: dict(steps=20, save_at=10, resume=False, ckpt='/tmp/c', out='/tmp/o'),
        call=lambda steps, save_at, resume, ckpt, out: __import__('helpers.checkpoint').checkpoint.command(
            steps=steps, save_at=save_at, resume=resume, ckpt=ckpt, out=out),
        steps=Custom([Bad('20', TypeError, 'a string'), Bad(2.5, TypeError, 'a float'), Bad(None, TypeError, 'None')]),
        save_at=Custom([Bad('10', TypeError, 'a string'), Bad(True, TypeError, 'a bool')]),
        resume=Flag(), ckpt=Text(('', ' ')), out=Text(('',))),
    'helpers.checkpoint.save_checkpoint': Sweep(
        lambda: dict(prefix=os.path.join(_tmp(), 'saved'), device=mx.cpu(0), **_net_and_adam()),
        prefix=Custom([Bad(5, TypeError, 'a number'), Bad(None, TypeError, 'None'), Bad(['c'], TypeError, 'a list'),
                       Bad('', ValueError, 'empty'),
                       Bad('/nonexistent/mxdp-sweep/c', FileNotFoundError, 'no directory')]),
        net=Obj(gluon.Block), trainer=Obj(gluon.Trainer),
        device=Custom([Bad(mx.cpu(5), ValueError, 'a device the network is not on'),
                       Bad([mx.cpu(0)], TypeError, 'a list'), Bad('cpu(0)', TypeError, 'a string'),
                       Bad(mx.cpu(-1), ValueError, 'a negative id')]),
        names={'net': ('network',), 'prefix': ('directory',)}),
    'helpers.checkpoint.load_checkpoint': Sweep(
        lambda: dict(prefix=_checkpoint(), **_net_and_adam()),
        prefix=Path(missing=FileNotFoundError), net=Obj(gluon.Block), trainer=Obj(gluon.Trainer),
        names={'net': ('network',), 'prefix': ('checkpoint',)}),
    'helpers.checkpoint.read_results': Sweep(
        lambda: dict(out=_worker_results(), num_workers=2),
        out=Path(missing=FileNotFoundError), num_workers=Count(1, checks.MAX_PROCESSES), names={'out': ('result',)}),
    'helpers.checkpoint.run_job': Sweep(
        lambda: dict(command=[sys.executable, '-c', 'pass'], num_workers=2, attempts=1, timeout=60, echo=False),
        starts=True, command=Strings(), num_workers=Count(1, checks.MAX_PROCESSES), attempts=Count(1),
        timeout=Seconds(), free={'echo': ECHO}),
    'helpers.dist_train.plot_seeds': Sweep(
        lambda: dict(runs=_seed_runs(), alt='seconds and accuracy', figsize=(6, 3)),
        runs=Custom(lambda good, call: [
            Bad(5, TypeError, 'not a list'), Bad([], ValueError, 'no run'), Bad({'a': 1}, TypeError, 'a dict'),
            Bad([{'kvstore': 'dist_sync'}], ValueError, 'no ranks'), Bad(good[:2], ValueError, 'no dist_async run'),
            Bad([dict(good[0], kvstore='local')] + good, ValueError, 'another store'),
            Bad([dict(good[0], ranks=good[0]['ranks'][:1])] + good, ValueError, 'one rank'),
            Bad([dict(good[0], ranks=[{'seconds': 'x', 'test_acc': 0.5}] * 2)] + good, TypeError, 'a string')]),
        alt=ALT, free={'figsize': FIGSIZE}, names={'runs': ('run',)}),
    'helpers.memory.in_fresh_process': Sweep(
        lambda: dict(function='helpers.procs.alive', timeout=60, synchronous=False), starts=True,
        call=lambda function, timeout, synchronous: __import__('helpers.memory').memory.in_fresh_process(
            function, 1, timeout=timeout, synchronous=synchronous),
        function=Custom([Bad(5, TypeError, 'a number'), Bad(print, TypeError, 'a function, not its name'),
                         Bad('alive', ValueError, 'no module'), Bad('helpers.x y', ValueError, 'not a name'),
                         Bad('', ValueError, 'empty')]), timeout=Seconds(), synchronous=Flag()),
    'helpers.models.batchnorm_step': Sweep(
        lambda: dict(layer=gluon.nn.BatchNorm(), X=nd.array(np.random.default_rng(0).normal(size=(4, 3))),
                     devices=CPU, weights=None),
        layer=Obj(gluon.Block, values=[Bad(gluon.nn.Dense(2), ValueError, 'not a normalisation layer')]),
        X=Array(lambda good, call: [nd.ones((1, 3))]), devices=Devices(), weights=Maybe(Weights('devices')),
        names={'X': ('example', 'split_and_load'), 'layer': ('batchnorm',)}),
    'helpers.models.equal_weight_batchnorm': Sweep(
        lambda: dict(X=np.random.default_rng(0).normal(size=(4, 3)), bounds=[(0, 2), (2, 4)], eps=1e-5),
        X=Custom([Bad('abc', TypeError, 'a string'), Bad(None, TypeError, 'None'), Bad(np.ones(4), ValueError, '1-d'),
                  Bad([['a']], TypeError, 'strings'), Bad({'a': 1}, TypeError, 'a dict')]),
        bounds=Custom([Bad(5, TypeError, 'not a list'), Bad({(0, 4): 1}, TypeError, 'a dict'),
                       Bad([], ValueError, 'no shard'), Bad([(0, 2), (2, 99)], ValueError, 'beyond the batch'),
                       Bad([(2, 1)], ValueError, 'empty'), Bad([(0.0, 2)], TypeError, 'a float'),
                       Bad([(0, 1, 2)], TypeError, 'not a pair'), Bad([(-1, 2)], ValueError, 'negative')]),
        eps=Positive(), names={'bounds': ('shard',)}),
    'helpers.models.sync_batchnorm_steps': Sweep(
        lambda: dict(cases=[(np.ones((4, 3)), None)], devices=CPU, timeout=60, env=None), starts=True,
        cases=Custom([Bad(5, TypeError, 'not a list'), Bad([], ValueError, 'no case'),
                      Bad([(np.ones((4, 3)),)], TypeError, 'no weights'),
                      Bad([np.ones((4, 3))], TypeError, 'not a pair'),
                      Bad([(np.ones((4, 3)), [1.0])], ValueError, 'one weight for two devices'),
                      Bad([(np.ones((4, 3)), {0: 1, 1: 1})], TypeError, 'weights in a dict'),
                      Bad([('abc', None)], TypeError, 'a string batch'),
                      Bad([(np.ones((1, 3)), None)], ValueError, 'fewer examples than devices')]),
        devices=Devices(), timeout=Seconds(),
        env=Custom([Bad(5, TypeError, 'a number'), Bad(['A'], TypeError, 'a list'),
                    Bad({'A': 5}, TypeError, 'a value not a string'), Bad({5: 'x'}, TypeError, 'a key not a string')]),
        names={'cases': ('case', 'weight')}),
    'helpers.plot.history_spread': Sweep(
        lambda: dict(runs={'a': [_history(), _history()]}, title=None, figsize=(6, 3), alt='curves'),
        runs=Custom([Bad(5, TypeError, 'not a dict'), Bad({}, ValueError, 'no label'),
                     Bad({'a': []}, ValueError, 'no history'),
                     Bad({'a': [5]}, TypeError, 'not a history'), Bad({'a': _history()}, TypeError, 'one history'),
                     Bad([_history()], TypeError, 'a list'),
                     Bad({'a': [_history(), dict(_history(), epoch=[2, 3])]}, ValueError, 'other epochs'),
                     Bad({'a': [dict(_history(), loss=[1.0])]}, ValueError, 'lengths differ')]),
        title=Maybe(Text(())), alt=ALT, free={'figsize': FIGSIZE}, names={'runs': ('run', 'history')}),
    'helpers.plot.timelines': Sweep(
        lambda: dict(panels={'a': _spans(), 'b': _spans()}, classify=None, min_width=0.0, figsize=(6, 3), alt='lanes'),
        panels=Custom([Bad(5, TypeError, 'not a dict'), Bad({}, ValueError, 'no panel'),
                       Bad({'a': []}, ValueError, 'no span'),
                       Bad({'a': 5}, TypeError, 'spans not a list'), Bad({'a': [('x',)]}, TypeError, 'not spans'),
                       Bad([_spans()], TypeError, 'a list')]),
        classify=Maybe(Callable()), min_width=NonNegative(), alt=ALT, free={'figsize': FIGSIZE},
        names={'panels': ('panel',)}),
    'helpers.precision.allreduce_fp16': Sweep(
        lambda: dict(grads=_arrays()), grads=Arrays(floating=True), names={'grads': ('allreduce', 'array')},
        free={'send': 'as allreduce_naive'}),
    'helpers.precision.amp_probe': Sweep(
        lambda: dict(target_dtype='float16', batch_size=16, seed=0),
        run_baseline='amp.init() rewrites MXNet\'s operators for the whole process, for good: only in a fresh one',
        target_dtype=Choice(('float16', 'bfloat16')), batch_size=Count(1, 1 << 16), seed=Count(0)),
    'helpers.precision.train_batch_fp16': Sweep(
        lambda: dict(X=_images(4), y=nd.array([1, 2, 3, 4]), device_params=_replicas(), devices=CPU, lr=0.1,
                     scale=1024.0),
        X=Array(lambda good, call: [_images(1)]), devices=Devices(), lr=Positive(), scale=Positive(),
        device_params=SCRATCH_REPLICAS, free={'y': 'as X (split_batch checks both)'},
        names={'X': ('example', 'split_and_load'), 'device_params': ('replica', 'parameter')}),
    'helpers.precision.train_fp16': Sweep(
        lambda: dict(params=__import__('helpers.models').models.init_lenet_params(0), devices=CPU, lr=0.1,
                     batches=[(_images(4), nd.array([1, 2, 3, 4]))], scale=1024.0, dynamic=True, growth_interval=2000,
                     step=None, rescale=None),
        params=LENET_PARAMS, devices=Devices(), lr=Positive(), scale=Positive(), dynamic=Flag(),
        growth_interval=Count(1), step=Maybe(Callable()), rescale=Maybe(Callable()),
        batches=Custom([Bad(5, TypeError, 'not iterable'), Bad([], ValueError, 'no batch'),
                        Bad([(_images(4),)], TypeError, 'no labels'), Bad({'a': 1}, TypeError, 'a dict')]),
        names={'params': ('parameter',), 'batches': ('batch',)}),
    'helpers.plot.grid_seeds': Sweep(
        lambda: dict(groups=__import__('helpers.scaling').scaling.grid_by_setting(
            __import__('helpers.scaling').scaling.stored_results('scaling_large_batch')), epochs=5, alt='accuracy',
            base_lr=0.1, base_batch=64, figsize=(8, 4)),
        groups=Custom([Bad(5, TypeError, 'not a dict'), Bad({}, ValueError, 'empty'),
                       Bad({(64, 'fixed', 0.1): [{}]}, ValueError, 'a run without test_acc'),
                       Bad({64: []}, ValueError, 'a key that is not (batch, recipe, lr)')]),
        epochs=Custom([Bad(0, ValueError, 'zero'), Bad('5', TypeError, 'a string'), Bad(None, TypeError, 'None')]),
        base_lr=Custom([Bad('0.1', TypeError, 'a string'), Bad(0, ValueError, 'zero'),
                        Bad(0.3, ValueError, 'not in the grid')]),
        base_batch=Custom([Bad('64', TypeError, 'a string'), Bad(63, ValueError, 'not in the grid'),
                           Bad(0, ValueError, 'zero')]),
        alt=ALT, free={'figsize': FIGSIZE}, names={'groups': ('run', 'key')}),
    'helpers.scaling.plot_grid_seeds': Sweep(
        lambda: dict(grid=__import__('helpers.scaling').scaling.stored_results('scaling_large_batch'), alt='accuracy',
                     base_lr=0.1, base_batch=64, figsize=(8, 4)),
        grid=Custom([Bad(5, TypeError, 'not a dict'), Bad({}, ValueError, 'no runs'),
                     Bad({'runs': [{'batch': 64}]}, ValueError, 'a run without recipe and lr')]),
        base_lr=Custom([Bad('0.1', TypeError, 'a string'), Bad(0, ValueError, 'zero'),
                        Bad(0.3, ValueError, 'not in the grid'),
                        Bad(float('nan'), ValueError, 'nan')]),
        base_batch=Custom([Bad('64', TypeError, 'a string'), Bad(63, ValueError, 'not in the grid'),
                           Bad(0, ValueError, 'zero'), Bad(64.0, TypeError, 'a float')]),
        alt=ALT, free={'figsize': FIGSIZE}, names={'grid': ('run',)}),
    'helpers.sharding.adam_updaters': Sweep(
        lambda: dict(devices=CPU, lr=1e-3, batch_size=4), devices=Devices(), lr=Positive(), batch_size=Count(1)),
    'helpers.sharding.views_of': Sweep(
        lambda: dict(flat=nd.arange(10), params=_two_params()),
        flat=Array(lambda good, call: [nd.arange(9), nd.arange(11), nd.ones((2, 5))]),
        params=Custom([Bad(5, TypeError, 'not a list'), Bad(nd.ones(10), TypeError, 'a single NDArray'),
                       Bad([np.ones(10)], TypeError, 'NumPy'), Bad([], ValueError, 'empty'),
                       Bad([nd.ones(11)], ValueError, 'more elements than flat')]),
        names={'params': ('parameter',)}),
    'helpers.sharding.flat_replica': Sweep(
        lambda: dict(params=_two_params(), device=mx.cpu(1)), params=LENET_PARAMS, device=Device(),
        names={'params': ('parameter',)}),
    'helpers.sharding.attach_flat_grad': Sweep(
        lambda: dict(zip(('flat', 'views'),
                          __import__('helpers.sharding').sharding.flat_replica(_two_params(), mx.cpu(0)))),
        flat=Array(lambda good, call: [nd.arange(9), nd.ones((2, 5))]),
        views=Custom([Bad(5, TypeError, 'not a list'), Bad([], ValueError, 'empty'),
                      Bad([nd.ones(3)], ValueError, 'too few'),
                      Bad(nd.ones(10), TypeError, 'a single NDArray')]),
        names={'views': ('view',)}),
    'helpers.sharding.make_replicas': Sweep(
        lambda: dict(params=_two_params(), devices=CPU),
        params=Custom([Bad(5, TypeError, 'not a list'), Bad([np.ones(3)], TypeError, 'NumPy'),
                       Bad([], ValueError, 'empty'), Bad(nd.ones(3), TypeError, 'a single NDArray'),
                       Bad({'w': nd.ones(3)}, TypeError, 'a dict')]),
        devices=Devices(), names={'params': ('parameter',)}),
    'helpers.sharding.forward_backward': Sweep(
        lambda: dict(X=_images(4), y=nd.array([1, 2, 3, 4]), device_params=[r.params for r in _flat_replicas()[0]],
                     devices=CPU),
        X=Array(lambda good, call: [_images(1)]), devices=Devices(), device_params=SCRATCH_REPLICAS,
        free={'y': 'as X (split_batch checks both)',
              'forward': "a function: a non-function fails at its first call with Python's TypeError"},
        names={'X': ('example', 'split_and_load'), 'device_params': ('replica', 'parameter')}),
    'helpers.sharding.train_batch_replicated': Sweep(
        _flat_step, **FLAT_STEP,
        free={'y': 'as X (split_batch checks both)', 'send': 'as allreduce_naive', 'sum_grads': 'as send'}),
    'helpers.sharding.train_batch_sharded': Sweep(
        _flat_step, **FLAT_STEP, free={'y': 'as X (split_batch checks both)', 'send': 'as allreduce_naive'}),
    'helpers.sharding.comm_and_update': Sweep(
        lambda: dict({k: v for k, v in _flat_step().items() if k not in 'Xy'}, sharded=True),
        sharded=Flag(), **{k: v for k, v in FLAT_STEP.items() if k != 'X'},
        free={'send': 'as allreduce_naive', 'sum_grads': 'as send'}),
    'helpers.sharding.state_elements': Sweep(
        lambda: dict(updaters=_flat_replicas()[1]),
        updaters=Custom(lambda good, call: [Bad(5, TypeError, 'not a list'), Bad([5], TypeError, 'not an updater'),
                                            Bad(dict(enumerate(good)), TypeError, 'a dict'),
                                            Bad(good[0], TypeError, 'one updater')]),
        names={'updaters': ('updater',)}),
    'helpers.sharding.measure_memory': Sweep(
        lambda: dict(cases=[[2, False]], n_params=1000, seed=0),
        run_baseline="starts MXNet's profiler for the whole process: only in a fresh one (in_fresh_process)",
        cases=Custom([Bad(5, TypeError, 'not a list'), Bad([], ValueError, 'no case'),
                      Bad([(0, False)], ValueError, 'k = 0'),
                      Bad([(2, 'yes')], TypeError, 'sharded a string'), Bad([(2,)], ValueError, 'no sharded'),
                      Bad([2], TypeError, 'not a pair'), Bad({2: True}, TypeError, 'a dict')]),
        n_params=Maybe(Count(1)), seed=Count(0), names={'cases': ('case',)}),
})
ENTRIES.update({f'helpers.checks.{name}': like(other, getattr(checks, name), **options) for name, other, options in [
    ('buckets', 'helpers.buckets.allreduce_bucketed', {}),
    ('bucket_params', 'helpers.buckets.bucket_gradients', {}),
    ('flat_replicas', 'helpers.sharding.comm_and_update', dict(rename={'reps': 'replicas', 'devs': 'devices'})),
    ('sends', 'helpers.buckets.backward_and_send', {}),
    ('dtype', 'helpers.buckets.flat_buckets', dict(rename={'value': 'dtype'}, free=NAME)),
    ('views', 'helpers.sharding.views_of', dict(free=NAME)),
    ('norm_layer', 'helpers.models.batchnorm_step', dict(rename={'devs': 'devices'})),
    ('checkpoint', 'helpers.checkpoint.save_checkpoint', dict(free={'load': POLICY})),
    ('checkpoint_files', 'helpers.checkpoint.load_checkpoint', {}),
    ('scaled_step', 'helpers.precision.train_batch_fp16', dict(rename={'devs': 'devices'})),
    ('accumulation', 'helpers.accumulation.train_batch_accumulated', dict(rename={'devs': 'devices'})),
    ('updaters', 'helpers.sharding.state_elements', dict(rename={'values': 'updaters'}, free=NAME)),
    ('memory_cases', 'helpers.sharding.measure_memory', {}),
    ('shard_bounds', 'helpers.models.equal_weight_batchnorm', dict(free={**NAME, 'n': POLICY}, extra=dict(n=4))),
    ('spread_runs', 'helpers.plot.history_spread', {}),
    ('span_panels', 'helpers.plot.timelines', {}),
    ('seed_runs', 'helpers.dist_train.plot_seeds', dict(free={'stores': POLICY})),
    ('environment', 'helpers.models.sync_batchnorm_steps', dict(rename={'env': 'env'}, free=NAME)),
]})
# notebook 08's seed figure is drawn by helpers.plot; dist_train.plot_seeds hands it the runs (issue 23)
ENTRIES['helpers.plot.sync_async_seeds'] = like('helpers.dist_train.plot_seeds',
                                                __import__('helpers.plot').plot.sync_async_seeds)
ENTRIES['helpers.checks.setting_groups'] = like('helpers.plot.grid_seeds', checks.setting_groups)

# ------------------------------------------------------------------------------ helpers.zero (notebook 12)
def _copy_to(x, to):
    return __import__('helpers.comm').comm.copy_to(x, to)


def _zero_units():
    return __import__('helpers.zero').zero.mlp_units([5, 3, 2])          # units of 18 and 8 parameters


def _zero_flats():
    return __import__('helpers.zero').zero.init_mlp(_zero_units(), 0)


def _zero_model(stage=3, grads=True):
    from helpers.zero import attach_grads, make_model
    model = make_model(_zero_flats(), _zero_units(), CPU, stage)
    return attach_grads(model) if grads else model


def _zero_step():
    from helpers.sharding import adam_updaters
    X = nd.array(np.random.default_rng(0).standard_normal((4, 5)))
    return dict(X=X, y=nd.array([0, 1, 0, 1]), model=_zero_model(), devices=CPU,
                updaters=adam_updaters(CPU, 1e-3, 4))


def _unit_bads(fits_w=False):
    def bads(good, call):
        from helpers.zero import Unit
        found = [Bad(5, TypeError, 'not a Unit'), Bad((3, 2, True), TypeError, 'a plain tuple'),
                 Bad(Unit(3, 0, True), ValueError, 'no outputs'), Bad(Unit(3, 2, 1), TypeError, 'relu not a bool'),
                 Bad(Unit(3.0, 2, True), TypeError, 'a float fan_in')]
        return found + ([Bad(Unit(4, 2, True), ValueError, 'more weights than w holds')] if fits_w else [])
    return Custom(bads)


def _units_bads(good, call):
    from helpers.zero import Unit
    return [Bad(5, TypeError, 'not a list'), Bad([], ValueError, 'empty'), Bad([(5, 3, True)], TypeError, 'a tuple'),
            Bad(good[0], TypeError, 'a single unit'), Bad([Unit(5, 3, True), Unit(4, 2, False)], ValueError,
                                                            'inputs that are not the outputs before'),
            Bad([Unit(5, 0, True), Unit(0, 2, False)], ValueError, 'no outputs')]


UNITS = Custom(_units_bads)
FLATS = Custom(lambda good, call: [
    Bad(5, TypeError, 'not a list'), Bad(good[0], TypeError, 'a single NDArray'),
    Bad(good[:1], ValueError, 'one short'),
    Bad([g.asnumpy() for g in good], TypeError, 'NumPy'), Bad([good[0][:10], good[1]], ValueError, 'too small'),
    Bad([good[0].reshape((2, 9)), good[1]], ValueError, 'not flat'),
    Bad([good[0], good[1].astype('float64')], TypeError, 'two dtypes')])
ZERO_SHARDS = Custom(lambda good, call: [
    Bad(5, TypeError, 'not a list'), Bad(good[0], TypeError, 'one shard'), Bad([], ValueError, 'empty'),
    Bad([g.asnumpy() for g in good], TypeError, 'NumPy'), Bad([good[0], nd.ones(good[0].size + 1)], ValueError,
                                                             'two sizes'),
    Bad([g.reshape((1, -1)) for g in good], ValueError, 'not flat')])
MODEL = Custom(lambda good, call: [
    Bad(5, TypeError, 'not a Model'), Bad(tuple(good), TypeError, 'a plain tuple'),
    Bad(good._replace(grads=None), ValueError, 'no gradient buffers'),
    Bad(good._replace(shards=good.shards[:1]), ValueError, 'shards for one unit of two'),
    Bad(good._replace(grads=[gs[:1] for gs in good.grads]), ValueError, 'one gradient buffer short')])
ZERO_STEP = dict(X=Array(lambda good, call: [nd.ones((1, 5)), nd.ones((4, 7))]), devices=Devices(), model=MODEL,
                 updaters=Custom(lambda good, call: [Bad(5, TypeError, 'not a list'),
                                                     Bad(good[:1], ValueError, 'one short'),
                                                     Bad([5, 5], TypeError, 'not updaters')]),
                 names={'X': ('example', 'split_and_load', 'x'), 'updaters': ('updater',), 'model': ('unit',)})
DTYPE = Custom([Bad(None, TypeError, 'None: NumPy reads it as float64'), Bad(5, TypeError, 'a number'),
                Bad('xx', ValueError, 'no dtype'), Bad('complex64', ValueError, 'not an NDArray dtype')])
ENTRIES.update({
    'helpers.zero.Unit': RECORD,
    'helpers.zero.Model': RECORD,
    'helpers.zero.mlp_units': Sweep(lambda: dict(sizes=[5, 3, 2]), sizes=sizes_list(1), names={'sizes': ('size',)}),
    'helpers.zero.init_mlp': Sweep(lambda: dict(units=_zero_units(), seed=0, dtype='float32'), units=UNITS,
                                   seed=Count(0), dtype=DTYPE),
    'helpers.zero.mlp_params': Sweep(lambda: dict(flats=_zero_flats(), units=_zero_units()), flats=FLATS, units=UNITS,
                                     names={'flats': ('flat',)}),
    'helpers.zero.mlp': Sweep(
        lambda: dict(X=nd.ones((4, 5)),
                     params=__import__('helpers.zero').zero.mlp_params(_zero_flats(), _zero_units())),
        X=Array(lambda good, call: [nd.ones((4, 7)), nd.ones(5)]),
        params=Custom(lambda good, call: [Bad(5, TypeError, 'not a list'), Bad(good[0], TypeError, 'one NDArray'),
                                          Bad(good[:3], ValueError, 'a weight without its bias'),
                                          Bad(good[2:], ValueError, 'the first layer missing')]),
        names={'params': ('param',)}),
    'helpers.zero.mine': Sweep(lambda: dict(a=nd.arange(10), i=1, k=4), a=Array(lambda good, call: [nd.ones((2, 5))]),
                               i=Count(0, 3), k=Count(1, checks.MAX_DEVICES), names={'i': ('device',)}),
    'helpers.zero.shard': Sweep(lambda: dict(flat=nd.arange(10), devices=CPU),
                                flat=Array(lambda good, call: [nd.ones((2, 5)), nd.array(np.zeros(0, np.float32))]),
                                devices=Devices()),
    'helpers.zero.gather': Sweep(lambda: dict(shards=__import__('helpers.zero').zero.shard(nd.arange(10), CPU)),
                                 shards=ZERO_SHARDS, free={'send': 'as allreduce_naive'}),
    'helpers.zero.unpack': Sweep(lambda: dict(w=_zero_flats()[1], unit=_zero_units()[1]),
                                 w=Array(lambda good, call: [nd.ones(7), nd.ones((2, 4))]), unit=_unit_bads(True)),
    'helpers.zero.dense': Sweep(lambda: dict(x=nd.ones((4, 3)), w=_zero_flats()[1], unit=_zero_units()[1]),
                                x=Array(lambda good, call: [nd.ones((4, 2)), nd.ones(3)]),
                                w=Array(lambda good, call: [nd.ones(7), nd.ones((2, 4))]), unit=_unit_bads(True)),
    'helpers.zero.dense_grads': Sweep(
        lambda: dict(x=nd.ones((4, 3)), y=nd.ones((4, 2)), dy=nd.ones((4, 2)), w=_zero_flats()[1],
                     unit=_zero_units()[1]),
        x=Array(lambda good, call: [nd.ones((4, 2)), nd.ones(3)]), y=Array(lambda good, call: [nd.ones((3, 2))]),
        dy=Array(lambda good, call: [nd.ones((4, 3)), nd.ones(8)]),
        w=Array(lambda good, call: [nd.ones(7), nd.ones((2, 4))]), unit=_unit_bads(True)),
    'helpers.zero.Fetcher': Sweep(
        lambda: dict(shards=[__import__('helpers.zero').zero.shard(f, CPU) for f in _zero_flats()], send=_copy_to,
                     prefetch=False),
        shards=Custom(lambda good, call: [Bad(5, TypeError, 'not a list'), Bad([], ValueError, 'no unit'),
                                          Bad(good[0], TypeError, "one unit's shards, not a list of them"),
                                          Bad([good[0], good[1][:1]], ValueError, 'a unit on one device of two')]),
        send=Callable(), prefetch=Flag(), names={'shards': ('shard',)}),
    'helpers.zero.ZeroLayer': Sweep(lambda: dict(unit=_zero_units()[0], j=0, fetch=print,
                                                 grads=__import__('helpers.zero').zero.shard(nd.arange(10), CPU),
                                                 send=_copy_to),
                                    unit=_unit_bads(), j=Count(0), fetch=Callable(), grads=ZERO_SHARDS,
                                    send=Callable()),
    'helpers.zero.make_model': Sweep(lambda: dict(flats=_zero_flats(), units=_zero_units(), devices=CPU, stage=3),
                                     flats=FLATS, units=UNITS, devices=Devices(), stage=Count(2, 3),
                                     names={'flats': ('flat',)}),
    'helpers.zero.attach_grads': Sweep(
        lambda: dict(model=_zero_model(grads=False)),
        model=Custom(lambda good, call: [Bad(5, TypeError, 'not a Model'), Bad(tuple(good), TypeError, 'a tuple'),
                                         Bad(good._replace(shards=[]), ValueError, 'no shards')]),
        names={'model': ('shard', 'unit')}),
    'helpers.zero.train_batch_zero': Sweep(_zero_step, **ZERO_STEP, prefetch=Flag(),
                                           free={'y': 'as X (split_batch checks both)', 'send': 'as allreduce_naive'}),
    'helpers.zero.train_batch_gathered': Sweep(_zero_step, **ZERO_STEP,
                                               free={'y': 'as X (split_batch checks both)',
                                                     'send': 'as allreduce_naive'}),
    'helpers.zero.full_weights': Sweep(lambda: dict(model=_zero_model(), device=0), model=MODEL, device=Count(0, 1),
                                       names={'model': ('unit',)}),
    'helpers.zero.build': Sweep(
        lambda: dict(stage='ZeRO-3', flats=_zero_flats(), units=_zero_units(), devices=CPU),
        stage=Choice(__import__('helpers.zero').zero.STAGES + ('ZeRO-3 under autograd',)), flats=FLATS, units=UNITS,
        devices=Devices(), names={'flats': ('flat',)}),
    'helpers.zero.step': Sweep(
        lambda: dict(stage='ZeRO-3', **{('state' if k == 'model' else k): v for k, v in _zero_step().items()}),
        stage=Choice(__import__('helpers.zero').zero.STAGES + ('ZeRO-3 under autograd',)),
        **{('state' if k == 'model' else k): v for k, v in ZERO_STEP.items() if k != 'names'},
        prefetch=Flag(), names={**ZERO_STEP['names'], 'state': ('model', 'unit')},
        free={'y': 'as X (split_batch checks both)', 'send': 'as allreduce_naive'}),
    'helpers.zero.phase': Sweep(lambda: dict(name='FullyConnected'), name=Text()),
    'helpers.zero.forward_end': Sweep(
        lambda: dict(spans=[helpers.tracing.Span('cpu(0)', 'FullyConnected', 0.0, 1.0)]),
        spans=Custom([Bad(5, TypeError, 'not a list'), Bad([5], TypeError, 'not spans'),
                      Bad([], ValueError, 'no FullyConnected')]), names={'spans': ('span', 'FullyConnected')}),
    'helpers.zero.measure_stages': Sweep(
        lambda: dict(cases=[[2, 'ZeRO-3']], sizes=[5, 3, 2], batch=8, seed=0),
        run_baseline="starts MXNet's profiler for the whole process: only in a fresh one (in_fresh_process)",
        cases=Custom([Bad(5, TypeError, 'not a list'), Bad([], ValueError, 'no case'),
                      Bad([(0, 'ZeRO-3')], ValueError, 'k = 0'), Bad([(2, 3)], TypeError, 'a stage number'),
                      Bad([(2, 'ZeRO-4')], ValueError, 'no such stage'), Bad([(2,)], ValueError, 'no stage'),
                      Bad([(checks.MAX_DEVICES + 1, 'ZeRO-3')], ValueError, 'more devices than there can be'),
                      Bad({2: 'ZeRO-3'}, TypeError, 'a dict')]),
        sizes=sizes_list(1), batch=Count(2), seed=Count(0), names={'cases': ('case',), 'sizes': ('size',)}),
})
ENTRIES.update({f'helpers.checks.{name}': like(other, getattr(checks, name), **options) for name, other, options in [
    ('layer_sizes', 'helpers.zero.mlp_units', {}),
    ('units', 'helpers.zero.init_mlp', dict(rename={'values': 'units'}, free=NAME)),
    ('unit_arrays', 'helpers.zero.mlp_params', dict(rename={'values': 'units'})),
    ('mlp', 'helpers.zero.mlp', {}),
    ('chunk_of', 'helpers.zero.mine', {}),
    ('shard', 'helpers.zero.shard', dict(rename={'devs': 'devices'})),
    ('unit_shards', 'helpers.zero.gather', dict(rename={'values': 'shards'}, free=NAME)),
    ('gather', 'helpers.zero.gather', dict(rename={'values': 'shards'}, free={'send': 'as allreduce_naive'},
                                           extra=dict(send=_copy_to))),
    ('unit_weights', 'helpers.zero.unpack', dict(free=NAME)),
    ('dense', 'helpers.zero.dense', {}),
    ('dense_grads', 'helpers.zero.dense_grads', {}),
    ('fetcher', 'helpers.zero.Fetcher', dict(rename={'values': 'shards'})),
    ('zero_layer', 'helpers.zero.ZeroLayer', {}),
    ('zero_parts', 'helpers.zero.make_model', dict(rename={'values': 'units', 'devs': 'devices'})),
    ('zero_model', 'helpers.zero.attach_grads', dict(free={'grads': POLICY}, extra=dict(grads=False))),
    ('zero_step', 'helpers.zero.train_batch_zero', dict(rename={'devs': 'devices'})),
    ('stage_cases', 'helpers.zero.measure_stages', dict(free={'stages': POLICY},
                                                        extra=dict(stages=__import__('helpers.zero').zero.STAGES))),
]})

# Public callables without an entry yet: none. test_every_public_callable_has_an_entry holds every
# new one to an entry (a helper of a notebook to come gets its entry with it).
PENDING = set()


def _action(dest):
    from helpers.dist_train import _parser
    return next(a for a in _parser()._actions if a.dest == dest)


def _lesson(qualname):
    module, _, name = qualname.rpartition('.')
    return getattr(importlib.import_module(module), name)


def _tmp():
    import tempfile
    if not hasattr(_tmp, 'dir'):
        _tmp.dir = tempfile.mkdtemp(prefix='mxdp-bad-input-')
    return _tmp.dir


def _results():
    return [{'rank': r, 'stamps': [0.0, 1.0 + r, 2.0 + r], 'net_bytes': [[0, 0], [5, 5], [9, 9]]} for r in range(2)]


def _results_dir():
    path = os.path.join(_tmp(), 'results')
    os.makedirs(path, exist_ok=True)
    for r in _results():
        with open(os.path.join(path, f'result-rank{r["rank"]}.json'), 'w') as f:
            json.dump(r, f)
    return path


# ================================================================================ the public callables
def public_callables():
    """``{'helpers.module.name': object}`` for every function and class named in the ``__all__`` of a
    module of helpers/ (as tests/test_docstrings.py walks them), keyed by where it is defined: a
    name re-exported by another module (helpers.dist) is the same callable."""
    found = {}
    for m in sorted(m.name for m in pkgutil.iter_modules(helpers.__path__) if not m.name.startswith('_')):
        module = importlib.import_module(f'helpers.{m}')
        for name in getattr(module, '__all__', []):
            obj = getattr(module, name)
            if inspect.isfunction(obj) or inspect.isclass(obj):
                found.setdefault(f'{obj.__module__}.{obj.__qualname__}', obj)
    return found


PUBLIC = public_callables()
SWEEPS = sorted(q for q, e in ENTRIES.items() if isinstance(e, Sweep) and q in PUBLIC)
CASES = [(q, a) for q in SWEEPS for a in ENTRIES[q].kinds]


def test_every_public_callable_has_an_entry():
    missing = sorted(set(PUBLIC) - set(ENTRIES) - PENDING)
    assert not missing, (
        f'no entry in tests/test_bad_input.py ENTRIES for {", ".join(missing)}. Add one per callable: '
        "Sweep(lambda: dict(<the arguments of a valid call>), <argument>=<kind from tests/bad_input.py>, ..., "
        "free={'<argument>': '<why any value is fine>'}), or Exempt('<why it takes no input to check>')")
    stale = sorted(set(ENTRIES) - set(PUBLIC))
    assert not stale, f'entries for callables that are not public (any more): {", ".join(stale)}'
    done = sorted(PENDING & set(ENTRIES)) + sorted(PENDING - set(PUBLIC))
    assert not done, f'PENDING lists callables that have an entry or are not public: {", ".join(done)}'


def test_no_callable_waits_for_an_entry():
    assert not PENDING, f'{len(PENDING)} public callables have no entry yet: {", ".join(sorted(PENDING))}'


def _parameters(qualname):
    entry = ENTRIES[qualname]
    params = inspect.signature(entry.call or PUBLIC[qualname]).parameters.values()
    if entry.call and [p.kind for p in params] == [inspect.Parameter.VAR_KEYWORD]:   # call(**kw): the helper's
        params = inspect.signature(PUBLIC[qualname]).parameters.values()
    return [p.name for p in params if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]


@pytest.mark.parametrize('qualname', SWEEPS)
def test_every_argument_is_swept_or_said_free(qualname):
    """A new parameter of a helper needs a kind in its entry, or a reason in ``free``."""
    entry = ENTRIES[qualname]
    params = set(_parameters(qualname))
    accounted = {a for a in entry.kinds if not a.startswith('$')} | set(entry.free)
    assert params == accounted, (f'{qualname}: parameters without a kind or a reason in `free`: '
                                 f'{sorted(params - accounted)}; kinds or reasons for no parameter: '
                                 f'{sorted(accounted - params)}')


def _call(qualname, arguments):
    """A function of no arguments that calls the helper with ``arguments`` (``$NAME`` ones set as
    environment variables)."""
    entry = ENTRIES[qualname]
    env = {k[1:]: v for k, v in arguments.items() if k.startswith('$')}
    kwargs = {k: v for k, v in arguments.items() if not k.startswith('$')}
    fn = entry.call or PUBLIC[qualname]

    def call():
        with environment(env):
            return fn(**kwargs)
    return call


def _tidy():
    import matplotlib.pyplot as plt
    plt.close('all')


@pytest.mark.parametrize('qualname', SWEEPS)
def test_the_baseline_call_is_valid(qualname):
    entry = ENTRIES[qualname]
    arguments = entry.arguments()
    inspect.signature(entry.call or PUBLIC[qualname]).bind(**{k: v for k, v in arguments.items()
                                                               if not k.startswith('$')})
    if entry.run_baseline is not True:
        return                                  # the reason is in the entry
    out = bounded(_call(qualname, arguments))
    _tidy()
    assert not out.hung, f'{qualname}: the valid call did not return within {out.seconds:.0f} s'
    if entry.starts:
        assert isinstance(out.error, (WouldStart, WouldSignal)), (
            f'{qualname} (starts=True): the valid call should get as far as starting a process, got '
            f'{out.error!r}' if out.error else f'{qualname}: returned {out.value!r}')
    else:
        assert out.error is None, f'{qualname}: the valid call raised {out.error!r}'


def _names(qualname, argument):
    words = {argument, argument.replace('_', ' '), argument.lstrip('$'), argument.rstrip('s')}
    words |= set(ENTRIES[qualname].names.get(argument, ()))
    return {w.lower() for w in words if w}


def _named(message, words):
    """Whether ``message`` names one of ``words`` as a word of its own (``k``, not the k of 'work';
    a plural counts)."""
    return any(re.search(rf'(?<![a-z0-9_]){re.escape(w)}(?:s|es)?(?![a-z0-9_])', message) for w in words)


def judge(qualname, argument, bad, out):
    """Why this outcome breaks the policy, or None."""
    entry = ENTRIES[qualname]
    call = f'{qualname}({argument}={bad.value!r:.100}) [{bad.what}]'
    if out.hung:
        return f'{call} did not return within {out.seconds:.0f} s: a hang'
    if isinstance(out.error, (MemoryError,)) or (isinstance(out.error, mx.base.MXNetError)
                                                  and 'allocate' in str(out.error)):
        return f'{call} ran out of the {2}-GiB memory bound ({type(out.error).__name__}): an unbounded allocation'
    if isinstance(out.error, WouldStart):
        return f'{call} started a process before refusing the bad {argument}: {out.error}'
    if isinstance(out.error, WouldSignal):
        return f'{call} sent a signal before refusing the bad {argument}: {out.error}'
    if argument in entry.reported:
        if out.returned and entry.reported[argument](out.value):
            return None
        if out.returned:
            return f'{call} returned {out.value!r:.200}, which does not report the bad {argument}'
    if out.returned:
        return f'{call} returned {out.value!r:.200}: the bad value was accepted (a silent wrong answer)'
    expected = entry.errors.get(argument, bad.error)
    if not isinstance(out.error, expected):
        return (f'{call} raised {type(out.error).__name__}: {str(out.error)[:300]!r}; '
                f'the policy says {expected.__name__}')
    message = str(out.error).lower()
    if not _named(message, _names(qualname, argument)):
        return (f'{call} raised {type(out.error).__name__} {str(out.error)[:300]!r}, which does not name '
                f'the argument (any of {sorted(_names(qualname, argument))})')
    return None


@pytest.mark.parametrize('qualname, argument', CASES, ids=[f'{q.removeprefix("helpers.")}-{a}' for q, a in CASES])
def test_bad_input_is_refused(qualname, argument):
    entry = ENTRIES[qualname]
    good = entry.arguments()

    @SWEEP
    @given(bad=entry.kinds[argument].bad(good.get(argument), good))
    def sweep(bad):
        arguments = entry.arguments()
        arguments[argument] = bad.value
        out = bounded(_call(qualname, arguments))
        _tidy()
        problem = judge(qualname, argument, bad, out)
        assert problem is None, problem

    sweep()


# ================================================================================ what the sweep changed
def _refused(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_the_defects_measured_in_issue_22_are_refused_at_once():
    """The tester's cases (issue 22), each now a clear error before any work (before: the comment)."""
    from helpers import devices, dist, split, train
    ones = [nd.ones(2), nd.ones(3)]
    _refused(lambda: split.shard_sizes(10, 2, {0: 1, 1: 3}), TypeError, 'weights.*dict')   # was [0, 10]: its keys
    _refused(lambda: train.max_gap(ones, ones[:1]), ValueError, 'same number')            # was 0.0: "identical"
    _refused(lambda: devices.get_devices(10 ** 12), ValueError, 'k must be at most')      # was: memory ran out
    with environment({'MXDP_DEVICES': f'cpu:{10 ** 12}'}):
        _refused(devices.forced_standins, ValueError, 'MXDP_DEVICES')                     # was 10**12 stand-ins
    for timeout in (float('inf'), 10 ** 9):                                              # was: watchdogs crashed
        _refused(lambda: dist.run_local_job(['true'], timeout=timeout), ValueError, 'timeout')


def test_more_silent_answers_the_sweep_found_are_refused():
    """A few of the bad inputs that used to return an answer (before: the comment)."""
    from helpers import data, dist_train, models, procs, replay, scaling, train
    params = models.init_lenet_params(0)
    _refused(lambda: models.replicate_params(params[0], mx.cpu(1)), TypeError, 'single')  # was: one per row
    _refused(lambda: procs.alive(None), TypeError, 'pid')                                  # was True (this process)
    _refused(lambda: data.get_fashion_mnist_labels([-1]), ValueError, 'labels')           # was 'ankle boot'
    _refused(lambda: data.load_arrays(train='False'), TypeError, 'train')                 # was the training set
    _refused(lambda: dist_train.my_shard(np.arange(6), np.arange(6), -1, 2), ValueError, 'rank')  # was the last shard
    _refused(lambda: scaling.lr_recipe('linear', 0, 10), ValueError, 'batch_size')        # was a rate of 0
    _refused(lambda: train.sgd(_with_grads([nd.ones(2)]), 0.1, 0), ValueError, 'batch_size')   # was: weights inf
    _refused(lambda: replay.record(__import__('helpers.comm').comm.allreduce_naive, k=10 ** 6), ValueError,
             'k must be at most')                                                          # was 16**k: a hang


def test_bad_input_of_the_helpers_merged_from_main_is_refused():
    """Helpers of notebooks 09-13 the sweep covers since main was merged (before: the comment)."""
    from helpers import buckets, job, lessoncheck, precision, scaling, sharding
    _refused(lambda: buckets.plan_buckets({0: 3, 1: 5}, 16), TypeError, 'sizes.*dict')   # was: keys as sizes
    _refused(lambda: precision.next_scale(8.0, True, 2000, 2000), ValueError, 'good_steps')   # was: never grows again
    _refused(lambda: precision.next_scale(-8.0, False, 0), ValueError, 'scale')      # was -4.0
    _refused(lambda: sharding.zero_bytes(10, 2, weight_bytes=-4), ValueError, 'weight_bytes')  # was negative bytes
    _refused(lambda: job.loopback_address(5), TypeError, 'rng')                          # was AttributeError 'randint'
    _refused(lambda: lessoncheck.verify('shard_sizes', print), ValueError, 'qualname')    # was 'Empty module name'
    _refused(lambda: scaling.grid_by_setting({'runs': [{'batch': 64}]}), ValueError, 'recipe')   # was KeyError
    _refused(lambda: precision.all_finite([]), ValueError, 'arrays')                      # was: a segfault


def test_bad_input_of_the_helpers_that_waited_is_refused():
    """Helpers of notebooks 05-13 that were PENDING (before: the comment)."""
    from helpers import buckets, checkpoint, models, precision, sharding
    from helpers.comm import allreduce_naive
    _refused(lambda: buckets.backward_and_send(wait='no', allreduce=allreduce_naive, **_losses_and_groups()),
             TypeError, 'wait')                                                     # was: 'no' read as True
    _refused(lambda: buckets.flat_buckets([3], 16, CPU, dtype=None), TypeError, 'dtype')       # was: float64
    _refused(lambda: checkpoint.command(steps=2, resume='False', ckpt='c', out='o'), TypeError,
             'resume')                                                              # was: --resume added
    replicas, updaters = _flat_replicas()
    _refused(lambda: sharding.comm_and_update(replicas, CPU, updaters, sharded='no'), TypeError,
             'sharded')                                                             # was: the sharded update
    _refused(lambda: sharding.forward_backward(_images(4), nd.ones(4), [replicas[0].params], CPU), ValueError,
             'replica')                                                             # was: device 1 left out (zip)
    _refused(lambda: precision.train_batch_fp16(_images(4), nd.ones(4), _replicas(), CPU, 0.1, float('nan')),
             ValueError, 'scale')                                                   # was False: 'an overflow'
    _refused(lambda: precision.train_fp16(__import__('helpers.models').models.init_lenet_params(0), [], CPU, 0.1, 1.0),
             ValueError, 'batches')                                                 # was: an empty history
    _refused(lambda: models.sync_batchnorm_steps([], CPU), ValueError, 'cases')     # was: a process started, []
    _refused(lambda: sharding.make_replicas(nd.ones(3), CPU), TypeError, 'params')  # was: 'truth value ... ambiguous'
