"""helpers.job_faults: the faults of a parameter-server job that kill nothing, found from outside it --
an exception read from a process's output, a frozen process, a link that is down (notebook 08; the jobs
themselves, with each fault injected, are in tests/test_dist.py)."""
import os
import signal
import subprocess
import sys
import time

import pytest

from helpers import job_faults, netns

MXNET_ERROR = """Traceback (most recent call last):
  File "/repo/helpers/dist_train.py", line 267, in main
    net = train_worker(kv, devices, X, y)
mxnet.base.MXNetError: Traceback (most recent call last):
  File "../src/kvstore/kvstore_dist.h", line 349
MXNetError: Check failed: gradient_compression_->get_type() == CompressionType::kNone: Compression not supported"""

CHAINED = """Traceback (most recent call last):
  File "w.py", line 3, in <module>
    open('/nonexistent')
FileNotFoundError: [Errno 2] No such file or directory: '/nonexistent'

During handling of the above exception, another exception occurred:

Traceback (most recent call last):
  File "w.py", line 5, in <module>
    raise RuntimeError('no data')
RuntimeError: no data"""


def _fed(text, at=100.0):
    tracebacks = job_faults.Tracebacks()
    for line in text.splitlines():
        tracebacks.feed('worker 1', line, at)
    return tracebacks


@pytest.mark.parametrize('text, last', [
    ('Traceback (most recent call last):\n  File "x.py", line 1\nValueError: bad', 'ValueError: bad'),
    (MXNET_ERROR, 'MXNetError: Check failed: gradient_compression_->get_type() == CompressionType::kNone: '
                  'Compression not supported'),
    (CHAINED, 'RuntimeError: no data'),
])
def test_the_last_line_of_an_uncaught_exception_is_read_from_the_output(text, last):
    tracebacks = _fed(text)
    assert tracebacks.raised('worker 1') == last and tracebacks.raised('worker 0') is None
    assert tracebacks.hung('worker 1', 100.0 + job_faults.RAISE_GRACE - 0.1) is None       # not yet
    assert tracebacks.hung('worker 1', 100.0 + job_faults.RAISE_GRACE) == job_faults.RAISE_GRACE


def test_a_process_that_goes_on_after_a_traceback_has_not_stopped():
    """A logged exception (logging.exception) followed by more output, or by a step finished after it, is no
    fault; a step finished before the exception is no news."""
    printed = _fed('Traceback (most recent call last):\n  File "x.py", line 1\nKeyError: 3')
    printed.feed('worker 1', 'epoch 2: loss 0.41', 101.0)
    assert printed.raised('worker 1') is None and printed.hung('worker 1', 200.0) is None
    stepped = _fed('Traceback (most recent call last):\nKeyError: 3')
    stepped.went_on('worker 1', at=99.0)              # finished before the exception was seen: still raised
    assert stepped.raised('worker 1') == 'KeyError: 3'
    stepped.went_on('worker 1', at=101.0)
    assert stepped.raised('worker 1') is None
    unfinished = _fed('Traceback (most recent call last):\n  File "x.py", line 1')
    assert unfinished.raised('worker 1') is None      # its last line has not arrived yet


def test_a_stopped_process_is_seen_at_once_and_a_gone_one_is_left_out():
    proc = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])
    try:
        assert job_faults.stopped([proc.pid]) == []
        os.kill(proc.pid, signal.SIGSTOP)
        deadline = time.monotonic() + 10
        while not job_faults.stopped([proc.pid]) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert job_faults.stopped([proc.pid]) == [proc.pid]
        os.kill(proc.pid, signal.SIGCONT)
    finally:
        proc.kill()
        proc.wait(10)
    assert job_faults.stopped([proc.pid]) == []


@pytest.mark.skipif(not netns.available()[0], reason='no network namespaces here')
def test_a_link_set_down_is_named_on_both_sides_and_a_gone_namespace_too():
    with netns.Network() as net:
        a, b = net.namespace('a'), net.namespace('b')
        link = net.veth(a, b)
        place = {'server 0': {'netns': a, 'host': link.addr_a}, 'worker 0': {'netns': b, 'host': link.addr_b}}
        assert job_faults.links_down(place) == []        # up when veth() returns: the carrier is waited for
        subprocess.run(['ip', '-n', b, 'link', 'set', link.dev_b, 'down'], check=True, timeout=30)
        deadline = time.monotonic() + 10
        while len(job_faults.links_down(place)) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert job_faults.links_down(place) == [
            (a, link.dev_a, 'up but without carrier (its other end is down)', ['server 0']),
            (b, link.dev_b, 'DOWN', ['worker 0'])]
    assert job_faults.links_down(place) == [(a, None, 'gone', ['server 0']), (b, None, 'gone', ['worker 0'])]
    assert job_faults.links_down({'scheduler': {'host': '127.0.0.1'}}) == []      # no namespace: nothing to look at
