"""An emulated interconnect: links between the stand-ins whose messages take the time a real link's
would (notebooks 04, 05, 09-13).

On CPU stand-ins a "message" is a memory copy inside one process: nearly free next to the compute,
so a lesson about the *cost* of communication would show Python dispatch instead. A :class:`Link`
gives the stand-ins a link of their own. ``Link(alpha, bandwidth).send(x, to)`` has the signature
of :func:`helpers.comm.copy_to` and plugs into every collective's ``send=`` hook (and
``CommStats(link.send)`` still counts the bytes). A message of ``n`` bytes

* starts once ``x`` has been written and the message is first in the queue of both of its ports:
  every device has one *send* port and one *receive* port (full duplex), so messages from different
  devices to different devices run at once, while two messages from one device (or to one device)
  queue, in the order they were sent (one still waiting for its input holds back those behind it);
* holds both ports for ``alpha + n / bandwidth`` seconds of wall time, using no core but for the
  copy of the bytes (no thread sleeps: a clock thread ends it);
* then arrives: whatever reads the destination waits until then.

One Python thread sends (two threads sending at once could queue their messages on shared ports in
opposite orders). No process may be started with messages in flight on Python 3.9, whose
``subprocess`` forks holding Python's lock while MXNet's fork handler waits for the engine: the
helpers that start processes wait for the engine first. Arrays are copied as they are laid out in
memory: an array that a oneDNN operator leaves in its blocked layout (a convolution's output;
gradients and weights are in the default layout) must be sent as ``x.copy()``, which MXNet lays out
plainly.

It is an emulation, and says so: the alpha-beta model's link, with nothing of what a real
interconnect adds (switches shared by several links, NCCL's kernels competing with the compute for
the GPU, TCP's slow start). The namespaces of notebook 09 stay the real network.

Presets (:func:`preset`) scale the links of :data:`helpers.costmodel.LINKS` to the stand-ins: a
stand-in computes a step far more slowly than a GPU, so a link as fast as the GPU's would make
communication look free. A preset keeps the proportion of one step's communication to one step's
compute that the real link has on a real GPU (:data:`REFERENCE`).

The emulator costs time of its own per message, about 0.1-0.3 ms here (one engine operation, one
Python call from an engine worker and one completion from the clock thread, all waiting for Python's
lock): :func:`overhead` measures it, and the notebooks count it into the alpha their model uses.
Input checks are in :mod:`helpers.checks`.
"""
import atexit
import ctypes
import heapq
import itertools
import os
import sys
import threading
import time

import numpy as np
import mxnet as mx
from mxnet import nd
from mxnet.base import _LIB, check_call

from helpers import checks, costmodel
from helpers.comm import allreduce_naive, copy_to
from helpers.tracing import WIRE

__all__ = ['Link', 'preset', 'REFERENCE', 'overhead', 'LinkStore']

# The real system whose proportions a preset keeps: d2l's ResNet-18 on Fashion-MNIST, batch 256 on
# gpu(0), 13.2 s per epoch of 60,000 images (d2l-ai/1day-notebooks, notebooks-3/3-multiple-gpus-gluon,
# stored output, 2019; notebook 09), i.e. 235 steps; the GPUs are the four Tesla V100-SXM2 that the
# same repository's notebooks-3/2-multiple-gpus and notebooks-2/1-use-gpu print with nvidia-smi (whose
# output also shows another process on gpu(0), so the reference GPU may have been shared). Its float32
# gradient (11,175,818 trained parameters, notebook 09) is the message.
REFERENCE = dict(system='ResNet-18, batch 256, on one GPU of a four-V100-SXM2 machine', step=13.2 / 235,
                 nbytes=4 * 11_175_818,
                 source='d2l-ai/1day-notebooks, notebooks-3/3-multiple-gpus-gluon (2019): 13.2 s per epoch '
                        'of 60,000 Fashion-MNIST images at batch 256 on gpu(0) of four Tesla V100-SXM2 '
                        '(nvidia-smi in notebooks-3/2-multiple-gpus); 11,175,818 parameters')


# --- The engine side: asynchronous operations from Python -----------------------------------------
# MXNet's C API pushes a function of ours to the engine as an asynchronous operation
# (MXEnginePushAsyncND, include/mxnet/c_api.h): it is called when the arrays it reads have been
# written and those it writes are free, with a completion callback that we may call later, from any
# thread (ThreadedEngine::OnCompleteStatic, src/engine/threaded_engine.cc; MXNet's own
# KVStoreDist::PullDefault, src/kvstore/kvstore_dist.h, has ps-lite's thread call it later). Until it is
# called, the arrays stay held. `kCPUPrioritized` sends the call to the pool of priority workers of the
# default engine, ThreadedEnginePerDevice (MXNET_CPU_PRIORITY_NTHREADS, 4), so it does not wait behind
# the compute queued on a stand-in's own worker (FnProperty, include/mxnet/engine.h: kCPUPrioritized
# = 3); with MXNET_ENGINE_TYPE=NaiveEngine every send would wait for its own completion. A deleter of
# the parameter (MXNet wraps it in a shared_ptr that dies with the operation, run or not: an input
# that failed skips the function) forgets the message.
_ASYNC = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)
_DONE = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)
_PRIORITIZED = ctypes.c_int(3)


class _Callback(ctypes.Structure):
    """``engine::CallbackOnComplete`` (include/mxnet/engine.h): a function, the engine, a parameter."""
    _fields_ = [('fn', ctypes.c_void_p), ('engine', ctypes.c_void_p), ('param', ctypes.c_void_p)]

    @classmethod
    def copy(cls, address):
        cb = cls.from_address(address)       # lives on the engine's stack only during the call
        return cls(cb.fn, cb.engine, cb.param)

    def __call__(self):
        _DONE(self.fn)(self.engine, self.param, None)


class _Clock(threading.Thread):
    """One thread that ends every message on time: a heap of (deadline, callback)."""

    def __init__(self):
        super().__init__(daemon=True, name='mxdp-link-clock')
        self.ready = threading.Condition()
        self.busy = threading.Lock()               # held while a message ends (see _hold_clock)
        self.heap, self.order = [], itertools.count()

    def at(self, deadline, callback):
        with self.ready:
            heapq.heappush(self.heap, (deadline, next(self.order), callback))
            self.ready.notify()

    def run(self):
        if sys.platform.startswith('linux'):     # wake within microseconds, not Linux's default 50 µs
            try:
                ctypes.CDLL(None).prctl(29, 1000, 0, 0, 0)      # PR_SET_TIMERSLACK, in ns
            except (OSError, AttributeError):
                pass
        while True:
            with self.ready:
                while not self.heap or self.heap[0][0] > time.perf_counter():
                    self.ready.wait(self.heap[0][0] - time.perf_counter() if self.heap else None)
                _, _, callback = heapq.heappop(self.heap)
                self.busy.acquire()
            try:
                callback()
            except Exception as e:                 # never reached: the callback only enters MXNet
                print(f'helpers.link: a message could not end: {e!r}', file=sys.stderr)
            finally:
                self.busy.release()


_STATE = {'clock': None, 'pid': None}
_LOCK = threading.Lock()
_MESSAGES = {}
_IDS = itertools.count(1)
_FAILED = []                # what made a message fail on the wire, until the next send reports it


def _clock():
    with _LOCK:
        if _STATE['clock'] is None or _STATE['pid'] != os.getpid():    # a forked child starts its own
            _STATE['clock'], _STATE['pid'] = _Clock(), os.getpid()
            _STATE['clock'].start()
        return _STATE['clock']


def _on_wire(run_context, on_complete, key):
    """A message begins: its input is written and its ports are free. Copy the bytes (CPU arrays),
    then hold the ports until the message's time is up."""
    done = _Callback.copy(on_complete)
    try:
        start = time.perf_counter()
        with _LOCK:
            seconds, arrays = _MESSAGES.pop(key)
        if arrays:                       # CPU arrays of one dtype: the wire copies them itself
            x, out = arrays
            nbytes = x.size * np.dtype(x.dtype).itemsize
            with _Pointer(out) as dst:
                try:
                    with _Pointer(x) as src:
                        ctypes.memmove(dst, src, nbytes)      # releases the GIL
                except Exception:
                    ctypes.memset(dst, 0xFF, nbytes)          # every bit set: NaN in a float, -1 in a signed int
                    raise
        _clock().at(max(start + seconds, time.perf_counter()), done)
    except Exception as e:                 # never leave the engine waiting, never fail in silence
        # The engine's completion can carry an error only as a C++ dmlc::Error (CallbackOnComplete,
        # include/mxnet/engine.h), which Python cannot make: the next send raises it (Link.send).
        with _LOCK:
            _FAILED.append(repr(e))
        print(f'helpers.link: a message failed on the wire: {e!r}', file=sys.stderr)
        done()


def _forget(key):
    """The operation is gone (run, or skipped after a failed input): forget its message."""
    with _LOCK:
        _MESSAGES.pop(key, None)


_WIRE_FN = _ASYNC(_on_wire)                # kept alive: MXNet calls them
_FORGET_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(_forget)


def _push(key, run_on, reads, writes, name):
    handles = lambda arrays: (ctypes.c_void_p * len(arrays))(*[a.handle for a in arrays])
    ctx = (ctypes.c_int * 2)(1, run_on.device_id if run_on.device_type == 'cpu' else 0)   # a CPU context
    check_call(_LIB.MXEnginePushAsyncND(_WIRE_FN, ctypes.c_void_p(key), _FORGET_FN, ctx, handles(reads),
                                        len(reads), handles(writes), len(writes), ctypes.byref(_PRIORITIZED),
                                        0, name.encode(), False))


class _DLTensor(ctypes.Structure):
    """The head of DLPack's ``DLManagedTensor`` (include/dlpack/dlpack.h): its data pointer first."""
    _fields_ = [('data', ctypes.c_void_p)]


class _Pointer:
    """``with _Pointer(a) as p``: the address of ``a``'s first element, read from inside the wire's own
    operation, once ``a`` has been written (``MXNDArrayToDLPack``: ``NDArray::ToDLPack``,
    src/ndarray/ndarray.cc, reads ``data()`` and waits for nothing). Read earlier, on the sending
    thread, the address of an array a pending operation will allocate could race that allocation
    (``Chunk::CheckAndAlloc``, include/mxnet/ndarray.h, runs in the operation)."""

    def __init__(self, a):
        self.a, self.tensor = a, ctypes.c_void_p()

    def __enter__(self):
        check_call(_LIB.MXNDArrayToDLPack(self.a.handle, ctypes.byref(self.tensor)))
        return _DLTensor.from_address(self.tensor.value).data

    def __exit__(self, *exc):
        check_call(_LIB.MXNDArrayCallDLPackDeleter(self.tensor))


def _drain():
    """Before the interpreter ends or forks: wait for every message in flight, once a link has been
    used. (A message has left ``_MESSAGES`` and not yet reached the clock while it copies, so only the
    engine knows; an idle ``waitall`` takes microseconds.) MXNet's own exit handler waits for its
    engine too (``MXNotifyShutdown``, src/c_api/c_api.cc); this one runs first, while the clock can
    still take Python's lock."""
    if _STATE.get('used'):
        nd.waitall()


def _hold_clock():
    """Before a fork and at the interpreter's end: wait for the messages in flight, then keep the
    clock from entering MXNet's engine, until the fork is done (:func:`_after_fork_in_parent`) or, at
    the end, for good. ``waitall`` returns as soon as the last completion has counted its operation
    (``ThreadedEngine::OnComplete``, src/engine/threaded_engine.cc), while the clock thread may still
    be inside that call, freeing the operation: taking the clock's lock waits for it to leave.

    * A fork: a child inherits no threads but every lock as it was. MXNet's own fork handler
      (``LibraryInitializer``, src/initialize.cc) stops and restarts its engine in both processes,
      which must not find an engine lock held by a completion halfway through.
    * The end: a daemon thread still in MXNet's code while MXNet shuts down aborted a process
      ("terminate called without an active exception", seen once with two suites at once)."""
    _drain()
    clock = _STATE['clock'] if _STATE['pid'] == os.getpid() else None
    if clock is not None:
        clock.busy.acquire()


def _after_fork_in_parent():
    clock = _STATE['clock'] if _STATE['pid'] == os.getpid() else None
    if clock is not None and clock.busy.locked():
        clock.busy.release()


atexit.register(_hold_clock)     # registered after MXNet's own: runs before it; never released
if hasattr(os, 'register_at_fork'):
    os.register_at_fork(before=_hold_clock, after_in_parent=_after_fork_in_parent)


# --- The link -------------------------------------------------------------------------------------
class Link:
    """An emulated link between every pair of devices: each message costs ``alpha`` seconds plus its
    bytes at ``bandwidth`` bytes per second, with one send and one receive port per device
    (notebook 04). ``link.send`` plugs into every collective's ``send=``."""

    def __init__(self, alpha, bandwidth, name=None):
        self.alpha, self.bandwidth = checks.link(alpha, bandwidth)
        self.name = None if name is None else checks.text(name, 'name')
        self._ports = {}

    def seconds(self, nbytes):
        """The modelled time of one message of ``nbytes`` bytes: ``alpha + nbytes / bandwidth``."""
        return self.alpha + checks.number(nbytes, 'nbytes', 0) / self.bandwidth

    def _port(self, device, kind):
        key = (device.device_type, device.device_id, kind)
        if key not in self._ports:
            self._ports[key] = nd.zeros(1, ctx=device)     # only its engine variable is used
        return self._ports[key]

    def send(self, x, to):
        """Send ``x`` over the link to ``to``: a device (returns a new array there) or an array,
        written in place -- :func:`helpers.comm.copy_to`, taking the link's time (notebook 04). A
        message that fails on the wire (its bytes unreadable: an array in oneDNN's layout, which
        ``NDArray::SetTBlob``, src/ndarray/ndarray.cc, refuses to expose) sets every bit of its destination
        (NaN in floats, -1 in signed integers), and the next ``send`` raises its error."""
        checks.link_send(x, to)
        with _LOCK:
            failed, _FAILED[:] = list(_FAILED), []
        if failed:
            hint = ('; an array in oneDNN\'s layout (on a CPU, a convolution\'s output, for one) is sent as '
                    'x.copy(), which MXNet writes in the default layout' if 'MKLDNN' in failed[0] else '')
            raise RuntimeError(f'{len(failed)} earlier message(s) over the link failed on the wire, and their '
                               'destinations have every bit set (NaN in floats) where the bytes should be: '
                               f'{failed[0]}{hint}')
        src = x.context
        out = nd.empty(x.shape, ctx=to, dtype=x.dtype) if isinstance(to, mx.Context) else to
        nbytes = x.size * np.dtype(x.dtype).itemsize
        key = next(_IDS)
        _STATE['used'] = True
        same = np.dtype(out.dtype) == np.dtype(x.dtype)
        if src.device_type == 'cpu' and out.context.device_type == 'cpu' and same:     # the wire copies
            message = (nbytes / self.bandwidth + self.alpha, (x, out))
        else:                       # MXNet's copy first (a GPU's copy engine; a cast), then the wire
            x.copyto(out)
            message = (nbytes / self.bandwidth + self.alpha, None)
        with _LOCK:
            _MESSAGES[key] = message
        _push(key, src, [x], [out, self._port(src, 'send'), self._port(out.context, 'receive')],
              f'{WIRE} {src}>{out.context}')        # x and out are never one array: checks.link_send
        return out

    def __repr__(self):
        name = f'{self.name}: ' if self.name else ''
        return f'Link({name}alpha={self.alpha * 1e3:.3g} ms, bandwidth={self.bandwidth / 1e6:.4g} MB/s)'


def preset(name, step, nbytes):
    """The link ``name`` of :data:`helpers.costmodel.LINKS`, scaled to the stand-ins (notebooks 05,
    09-13): for a model whose step computes in ``step`` seconds here and sends ``nbytes`` of
    gradient, a link on which communication takes the same share of the step as it does for
    :data:`REFERENCE` on real GPUs. The stand-in is ``d = step / REFERENCE['step']`` times slower and
    its message ``b = nbytes / REFERENCE['nbytes']`` times as large, so alpha is multiplied by ``d``
    and the bandwidth by ``b / d``: every collective's modelled time is then ``d`` times the real
    one, at every k."""
    p = costmodel.link(name)
    step, nbytes = checks.positive(step, 'step'), checks.positive(nbytes, 'nbytes')
    slower, larger = step / REFERENCE['step'], nbytes / REFERENCE['nbytes']
    return Link(p['alpha'] * slower, p['bandwidth'] * larger / slower, name=f'{name}, scaled')


def overhead(devices=None, messages=20, rounds=5, allreduce=None):
    """Seconds each message of a collective costs here beyond ``alpha + n / bandwidth``
    (notebooks 04, 10): the emulator's own work and the stand-ins' dispatch, the fastest of
    ``rounds`` rounds (a busy machine only adds to it). It is the floor of every link's alpha, and
    the models of the notebooks add it to alpha.

    Without ``allreduce``: ``messages`` one-element messages sent back and forth between the first
    two ``devices`` over a link of no latency, each added to an array on arrival before the next one
    leaves, per message. With ``allreduce`` (e.g. ``allreduce_ring``): the seconds per step of
    that allreduce of one element per device on all ``devices``, one step being one of the
    ``2 (k - 1)`` rounds of messages of notebook 04's model, ``messages`` allreduces in a row; this
    counts what one Python thread spends issuing each step's messages too."""
    devices = checks.devices([mx.cpu(0), mx.cpu(1)] if devices is None else devices)
    if len(devices) < 2:
        raise ValueError(f'overhead needs at least two devices to send between, got {devices}')
    messages = checks.whole(messages, 'messages', 1, 10_000)
    rounds = checks.whole(rounds, 'rounds', 1, 1_000)
    link = Link(0.0, 1e15)
    if allreduce is None:
        ends = [nd.zeros(1, ctx=d) for d in devices[:2]]

        def run(n):
            for i in range(n):
                mine = ends[(i + 1) % 2]
                mine += link.send(ends[i % 2], mine.context)
            nd.waitall()
        per = 1
    else:
        checks.function(allreduce, 'allreduce')
        arrays = [nd.zeros(len(devices), ctx=d) for d in devices]

        def run(n):
            for _ in range(n):
                allreduce(arrays, send=link.send)
            nd.waitall()
        per = 2 * (len(devices) - 1)
    run(2)                                               # the ports exist, the clock runs
    best = float('inf')
    for _ in range(rounds):
        start = time.perf_counter()
        run(messages)
        best = min(best, time.perf_counter() - start)
    return best / messages / per


# --- Gluon's Trainer over the link ----------------------------------------------------------------
@mx.kv.KVStoreBase.register
class LinkStore(mx.kv.KVStoreBase):
    """A KVStore of the series' own (notebooks 06, 10): its ``pushpull`` is the series' allreduce
    (notebook 04) over a :class:`Link`, so that Gluon's ``Trainer`` sums its gradients over the same
    emulated link as the hand-written code: ``gluon.Trainer(params, 'sgd', {...},
    kvstore=LinkStore(link))``. It keeps no weights and no optimizer: each device updates its own
    copy with the summed gradients (``update_on_kvstore`` is False), as with the ``device`` store
    and ``update_on_kvstore=False``. Registered with MXNet (``KVStoreBase.register``, the way
    MXNet's own ``TestStore`` does, python/mxnet/kvstore/base.py; MXNet 2.0 registers its Horovod and
    BytePS stores the same way), so ``mx.kv.create('linkstore')`` makes one without a link: plain copies."""

    def __init__(self, link=None, allreduce=allreduce_naive):
        if link is not None and not isinstance(link, Link):
            raise TypeError(f'link must be a helpers.link.Link or None, got {type(link).__name__}')
        self.link = link
        self.allreduce = checks.function(allreduce, 'allreduce')

    @property
    def send(self):
        return copy_to if self.link is None else self.link.send

    def broadcast(self, key, value, out, priority=0):
        """Copy the first device's initial weights to every device (before training: not over the link)."""
        for o in out if isinstance(out, (list, tuple)) else [out]:
            if o is not value:
                value.copyto(o)

    def pushpull(self, key, value, out=None, priority=0):
        """Sum ``value`` (one array per device) over the link, in place; then copy the sums to ``out``,
        if given. ``priority`` is not used: the engine runs each message when its gradient is written."""
        values = [value] if isinstance(value, nd.NDArray) else list(value)
        self.allreduce(values, send=self.send)
        if out is not None:
            for v, o in zip(values, out if isinstance(out, (list, tuple)) else [out]):
                if o is not v:
                    v.copyto(o)

    @staticmethod
    def is_capable(capability):
        """No optimizer on the store: the Trainer updates every device's copy itself."""
        return False

    def set_optimizer(self, optimizer):
        raise NotImplementedError('LinkStore keeps no optimizer: create the Trainer with update_on_kvstore=False '
                                  '(the default for a store that cannot update)')

    @property
    def type(self):
        return 'linkstore'

    @property
    def rank(self):
        return 0

    @property
    def num_workers(self):
        return 1
