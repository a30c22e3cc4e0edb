"""helpers.netns: namespaces, veth pairs, rate caps and byte counters -- and that every namespace, link
and process is removed however a run ends (notebooks 08, 09).

Skipped, saying why, where namespaces cannot be made (not root, no `ip`/`tc`, a container without
the capability). Every test checks that it left nothing behind; the rate test asserts only a lower
bound on time (a cap cannot be beaten; a busy machine only makes transfers slower).
"""
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from helpers import netns, procs

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OK, WHY = netns.available()
needs_netns = pytest.mark.skipif(not OK, reason=f'network namespaces not available: {WHY}')

# A tiny TCP sink and source (standard library only): the sink reads until the source stops
# sending, then answers with the count; the source times the whole exchange.
SINK = textwrap.dedent('''
    import socket, sys
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((sys.argv[1], 5599)); s.listen(1); print('listening', flush=True)
    c, _ = s.accept(); n = 0
    while True:
        b = c.recv(1 << 16)
        if not b: break
        n += len(b)
    c.sendall(str(n).encode()); c.close(); print(n, flush=True)
''')
SOURCE = textwrap.dedent('''
    import socket, sys, time
    c = socket.create_connection((sys.argv[1], 5599), timeout=30)
    t = time.perf_counter(); c.sendall(b'x' * int(sys.argv[2])); c.shutdown(socket.SHUT_WR)
    assert int(c.recv(64)) == int(sys.argv[2])
    print(time.perf_counter() - t)
''')


def ours(pid=None):
    """Namespaces of this module made by process ``pid`` (default: this one)."""
    pid = os.getpid() if pid is None else pid
    return [n for n in netns.namespaces() if n.startswith(f'{netns.PREFIX}-{pid}-')]


alive = procs.alive


def test_available_says_why():
    ok, why = netns.available()
    assert isinstance(ok, bool) and isinstance(why, str)
    assert ok == (why == '')


def test_exec_prefix():
    assert netns.exec_prefix('x') == ['ip', 'netns', 'exec', 'x']


@needs_netns
def test_names_are_unique_per_run_and_say_whose_they_are():
    with netns.Network() as n1, netns.Network() as n2:
        a1, a2 = n1.namespace('a'), n2.namespace('a')
        assert a1 != a2
        for name in (a1, a2):
            assert name.startswith(f'mxdp-{os.getpid()}-') and name.endswith('-a')
            assert name in netns.namespaces() and name not in netns.leftovers()
    assert ours() == []


@needs_netns
def test_bad_input_is_refused_and_leaves_nothing():
    with netns.Network() as net:
        with pytest.raises(ValueError):
            net.namespace('Bad_Label')
        with pytest.raises(TypeError):
            net.namespace(3)
        a = net.namespace('a')
        with pytest.raises(ValueError):
            net.namespace('a')                       # same label twice
        with pytest.raises(ValueError):
            net.veth(a, a)
        with pytest.raises(ValueError):
            net.veth(a, 'not-ours')
        b = net.namespace('b')
        link = net.veth(a, b)
        for rate in (0, -1, float('inf')):
            with pytest.raises(ValueError, match='rate'):
                net.cap(a, link.dev_a, rate)
        for rate in ('100mbit', True, None):                # one policy: a wrong type is a TypeError
            with pytest.raises(TypeError, match='rate'):
                net.cap(a, link.dev_a, rate)
        with pytest.raises(ValueError):
            net.cap(a, link.dev_a, 1e6, kind='netem')
        with pytest.raises(netns.NetnsError, match='failed'):
            net.cap(a, 'nosuchdev', 1e6)             # tc's own error, with its message
        with pytest.raises(TypeError):
            net.popen(a, 'sleep 1')
    with pytest.raises(netns.NetnsError, match='closed'):
        net.namespace('c')
    assert ours() == []


@needs_netns
def test_veth_carries_traffic_counted_and_capped():
    """1 MB through a 20 Mbit/s cap takes at least 0.35 s (0.4 s at the cap, less the bucket's
    burst), and both ends' counters see every payload byte."""
    nbytes, rate = 1_000_000, 20e6
    with netns.Network() as net:
        a, b = net.namespace('a'), net.namespace('b')
        link = net.veth(a, b)
        assert (link.addr_a, link.addr_b) == ('10.77.0.1', '10.77.0.2')
        net.cap(a, link.dev_a, rate)
        sink = net.popen(b, [sys.executable, '-c', SINK, link.addr_b], stdout=subprocess.PIPE, text=True)
        assert sink.stdout.readline().strip() == 'listening'
        before = netns.counters(a, link.dev_a)
        out = net.run(a, [sys.executable, '-c', SOURCE, link.addr_b, str(nbytes)], timeout=60)
        assert out.returncode == 0, out.stderr
        assert int(sink.stdout.readline()) == nbytes
        sink.wait(timeout=10)
        after = netns.counters(a, link.dev_a)
        seconds = float(out.stdout)
        assert seconds > 0.35, f'{nbytes} bytes under a {rate / 1e6:g} Mbit/s cap took only {seconds:.3f} s'
        assert after['tx_bytes'] - before['tx_bytes'] >= nbytes
        assert netns.counters(b, link.dev_b)['rx_bytes'] >= nbytes
    assert ours() == []


@needs_netns
def test_htb_cap_and_uncap():
    with netns.Network() as net:
        a, b = net.namespace('a'), net.namespace('b')
        link = net.veth(a, b)
        net.cap(a, link.dev_a, 50e6, kind='htb')
        shown = subprocess.run(netns.exec_prefix(a) + ['tc', 'qdisc', 'show', 'dev', link.dev_a],
                               capture_output=True, text=True, timeout=10).stdout
        assert 'htb' in shown
        net.cap(a, link.dev_a, 50e6)                 # replaces the htb cap
        net.uncap(a, link.dev_a)
        # a process inside the namespace caps its own interface (ns=None)
        out = net.run(a, [sys.executable, '-c', 'from helpers import netns; netns.cap(None, "veth0", 1e6)'],
                      timeout=60, cwd=ROOT)
        assert out.returncode == 0, out.stderr
        shown = subprocess.run(netns.exec_prefix(a) + ['tc', 'qdisc', 'show', 'dev', link.dev_a],
                               capture_output=True, text=True, timeout=10).stdout
        assert 'tbf' in shown and 'rate 1Mbit' in shown
        net.uncap(a, link.dev_a)
        shown = subprocess.run(netns.exec_prefix(a) + ['tc', 'qdisc', 'show', 'dev', link.dev_a],
                               capture_output=True, text=True, timeout=10).stdout
        assert 'tbf' not in shown and 'htb' not in shown
    assert ours() == []


@needs_netns
def test_a_failing_step_still_removes_namespaces_links_and_processes():
    with pytest.raises(RuntimeError, match='a step failed'):
        with netns.Network() as net:
            a, b = net.namespace('a'), net.namespace('b')
            net.veth(a, b)
            sleeper = net.popen(b, ['sleep', '300'])
            # a grandchild in its own session: only the namespace sweep can find it
            net.popen(a, ['sh', '-c', 'setsid sleep 300 & wait'])
            time.sleep(0.3)
            inside = netns._pids_in(a)
            assert inside, 'the processes in a were not found'
            raise RuntimeError('a step failed')
    assert ours() == []
    assert not alive(sleeper.pid)
    assert not any(alive(p) for p in inside)


@needs_netns
def test_run_past_its_timeout_kills_the_group():
    with netns.Network() as net:
        a = net.namespace('a')
        with pytest.raises(subprocess.TimeoutExpired):
            net.run(a, ['sh', '-c', 'sleep 300 & sleep 300'], timeout=0.5)
        time.sleep(0.2)
        assert netns._pids_in(a) == []
    assert ours() == []


# The script puts back Python's own Ctrl-C handler first. A suite started in the background of a
# non-interactive shell (`make test &`, nohup, some CI runners) inherits SIGINT ignored, and Python then
# installs no handler: the SIGINT below would be lost and the script would sleep its 300 s. That, not
# load, is what failed this test twice beside every-k runs (both suites had been started with `&`).
SCRIPT = textwrap.dedent('''
    import os, signal, sys, time
    signal.signal(signal.SIGINT, signal.default_int_handler)
    from helpers import netns, procs
    with netns.Network() as net:
        a, b = net.namespace('a'), net.namespace('b')
        net.veth(a, b)
        p = net.popen(b, ['sleep', '300'])
        print(p.pid, flush=True)
        time.sleep(300)
''')


def start_script():
    proc = subprocess.Popen([sys.executable, '-c', SCRIPT], stdout=subprocess.PIPE, text=True, cwd=ROOT)
    sleeper = int(proc.stdout.readline())
    assert len(ours(proc.pid)) == 2
    return proc, sleeper


# How long a Network's clean-up may take by its own bounds: the group's kill (SIGTERM and SIGKILL
# waits, the reap and the group's wait, each its 2-second grace) and, per namespace, `ip netns pids`
# and `ip netns delete` (CALL_TIMEOUT each) around a kill (two waits of 2 s), with 10 s for the
# interpreter's exit. It takes well under a second; a lost Ctrl-C or a hang still fails.
GRACE = 2.0
CLEANUP_BOUND = 4 * GRACE + 2 * (2 * netns.CALL_TIMEOUT + 2 * GRACE) + 10


@needs_netns
def test_ctrl_c_removes_everything():
    proc, sleeper = start_script()
    proc.send_signal(signal.SIGINT)                  # KeyboardInterrupt inside the with block
    proc.wait(timeout=CLEANUP_BOUND)
    assert ours(proc.pid) == []
    assert not alive(sleeper)


@needs_netns
def test_a_killed_run_leaves_leftovers_that_are_found_and_removed():
    proc, sleeper = start_script()
    proc.kill()                                      # nothing runs: namespaces and the sleeper stay
    proc.wait(timeout=30)
    left = ours(proc.pid)
    assert len(left) == 2
    # another test run may remove them first (it removes every leftover): both outcomes are right
    assert all(n in netns.leftovers() or n not in netns.namespaces() for n in left)
    netns.remove_leftovers()
    # the sleeper dies when its namespace is cleaned, by this run or by another run cleaning at the same
    # time; give the other run's kill a bounded moment to land (a loaded machine delays it)
    deadline = time.monotonic() + 15
    while alive(sleeper) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert ours(proc.pid) == [] and not alive(sleeper)


@needs_netns
def test_a_running_owner_is_not_a_leftover():
    with netns.Network() as net:
        a = net.namespace('a')
        assert a not in netns.leftovers()
        assert a not in netns.remove_leftovers()
        assert a in netns.namespaces()
    assert ours() == []


@needs_netns
def test_several_runs_cleaning_the_same_leftovers_at_once_all_succeed():
    """Two test sessions on one machine both remove a dead run's namespaces: whoever deletes one
    first, the other finds it gone, which is not an error (issue 22: concurrent runs)."""
    code = ("import os; from helpers import netns; n = netns.Network(clean_leftovers=False); "
            "n.namespace('a'); n.namespace('b'); os._exit(0)")           # dies without cleaning up
    dead = subprocess.Popen([sys.executable, '-c', code])
    assert dead.wait(timeout=60) == 0 and len(ours(dead.pid)) == 2
    cleaners = [subprocess.Popen([sys.executable, '-c', 'from helpers import netns; netns.remove_leftovers()'],
                                 stderr=subprocess.PIPE, text=True) for _ in range(3)]
    results = [(p.wait(timeout=60), p.stderr.read()) for p in cleaners]
    assert all(code == 0 for code, _ in results), results
    assert ours(dead.pid) == []
