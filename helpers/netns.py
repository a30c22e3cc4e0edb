"""Network namespaces: several "machines" with a real network between them, on one Linux host
(notebooks 08 and 09).

A network namespace has its own interfaces, addresses, routes and loopback. Two namespaces joined
by a veth pair (a virtual cable) behave like two machines on a network: traffic between them
crosses the veth, where ``tc`` can cap its rate and where the kernel counts its bytes. Everything
stays inside the namespaces: nothing here touches the host's own interfaces.

    ok, why = netns.available()                 # root, `ip` and `tc`, and the kernel allows it?
    with netns.Network() as net:                # removes all it created, however the block ends
        a, b = net.namespace('a'), net.namespace('b')
        link = net.veth(a, b)                   # link.addr_a = '10.77.0.1' in a, link.addr_b in b
        net.cap(a, link.dev_a, 100e6)           # a's egress at 100 Mbit/s (tc tbf); cap b too
        before = netns.counters(a, link.dev_a)  # {'rx_bytes', 'tx_bytes', 'rx_packets', ...}
        p = net.popen(b, [sys.executable, 'server.py'])          # runs in b, own process group
        net.run(a, [sys.executable, 'client.py', link.addr_b], timeout=60)
        sent = netns.counters(a, link.dev_a)['tx_bytes'] - before['tx_bytes']

A parameter-server job across the two "machines" (notebook 09): ``helpers.job.Job`` runs each
process in its namespace at its address, e.g. ``place={'scheduler': {'netns': a, 'host':
link.addr_a}, 'server 0': {...a...}, 'worker 0': {...a...}, 'worker 1': {'netns': b, 'host':
link.addr_b}}``; every process of ``a`` talks to the others of ``a`` over ``a``'s loopback, and
only what crosses between ``a`` and ``b`` goes through the veth and its caps.

- :func:`available` -- ``(True, '')`` or ``(False, reason)``: not root, no ``ip`` or ``tc``, or the
  kernel/container refuses (tried for real, once per process);
- :class:`Network` -- the context manager that owns what it creates: :meth:`~Network.namespace`
  (loopback up), :meth:`~Network.veth` (a pair between two namespaces, addresses, up),
  :meth:`~Network.cap` (``tc tbf`` or ``htb`` on one interface's egress), :meth:`~Network.popen` /
  :meth:`~Network.run` (a process group inside a namespace), :meth:`~Network.close`;
- :func:`counters` -- an interface's byte and packet counters (``lo`` included: a whole local job
  run inside one namespace is measured on its loopback);
- :func:`cap`, :func:`uncap` -- the same cap for any namespace, or for the caller's own
  (``ns=None``): a process already inside a namespace can change its own "machine's" rate;
- :func:`exec_prefix` -- ``['ip', 'netns', 'exec', name]``, to put before any command (e.g. in
  ``helpers.job.Job(place=...)``, which takes the namespace name itself);
- :func:`leftovers`, :func:`remove_leftovers` -- namespaces of runs whose process is gone.

Guarantees. Names are unique per run: ``mxdp-<pid>-<token>-<label>``, so overlapping runs (two
test sessions) never collide. :meth:`Network.close` -- called by ``with`` on success, on error
and on ``KeyboardInterrupt``, and at interpreter exit for a Network left open -- kills every
process it started (whole process groups) and every process still inside its namespaces, then
deletes the namespaces; deleting a namespace destroys the veth ends in it, and their peers, and
their qdiscs. A veth pair is created with both ends directly inside their namespaces, so no
interface ever appears in the host's namespace. A run that was killed outright (SIGKILL, a
crashed kernel) leaves namespaces whose owner pid is dead: :func:`leftovers` finds them, and every
new :class:`Network` removes them first (``python -m helpers.netns clean`` does it by hand).
Every ``ip``/``tc`` call has a timeout. This module does not import ``mxnet``.
"""
import atexit
import json
import os
import re
import secrets
import shutil
import subprocess
import sys
import threading
import time

from helpers import checks, procs

__all__ = ['PREFIX', 'NetnsError', 'available', 'Network', 'Link', 'counters', 'links_down', 'cap', 'uncap',
           'exec_prefix', 'namespaces', 'leftovers', 'remove_leftovers']

PREFIX = 'mxdp'                      # every namespace this module creates: mxdp-<pid>-<token>-<label>
NETNS_DIR = '/run/netns'             # where `ip netns add` pins a namespace
CALL_TIMEOUT = 15.0                  # seconds for any one `ip` / `tc` call
DEFAULT_BURST = 32 * 1024            # bytes a cap's token bucket holds (see cap())
_NAME = re.compile(rf'^{PREFIX}-(\d+)-([0-9a-f]+)-([a-z0-9]+)$')
_LABEL = re.compile(r'^[a-z0-9]{1,12}$')


class NetnsError(RuntimeError):
    """An ``ip`` or ``tc`` command failed, or a namespace could not be cleaned up (notebooks 08, 09).
    The message holds the command and what it printed."""


def _call(args, timeout=CALL_TIMEOUT, check=True):
    """Run ``ip``/``tc`` with a timeout; return stdout. NetnsError (with stderr) if it fails."""
    try:
        out = subprocess.run(args, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise NetnsError(f'{" ".join(args)!r} did not finish within {timeout:g} s') from None
    except OSError as exc:
        raise NetnsError(f'cannot run {args[0]!r}: {exc}') from None
    if check and out.returncode != 0:
        raise NetnsError(f'{" ".join(args)!r} failed (exit {out.returncode}): {out.stderr.strip()}')
    return out.stdout


def exec_prefix(ns):
    """``['ip', 'netns', 'exec', ns]``: put it before a command to run that command inside the
    namespace ``ns`` (same pid: ``ip`` enters the namespace, then execs; notebooks 08, 09)."""
    return ['ip', 'netns', 'exec', checks.text(ns, 'ns')]


def counters(ns, dev):
    """Byte and packet counters of interface ``dev`` in namespace ``ns`` (``ns=None``: this
    process's own namespace), as the kernel keeps them: ``{'rx_bytes', 'tx_bytes', 'rx_packets',
    'tx_packets'}`` (notebooks 08, 09). Bytes are whole frames: Ethernet, IP and TCP headers
    included. Take the difference of two readings to measure what crossed in between."""
    checks.interface(ns, dev)
    args = ['ip'] + (['-n', ns] if ns else []) + ['-s', '-j', 'link', 'show', 'dev', dev]
    stats = json.loads(_call(args))[0]['stats64']
    return {f'{d}_{what}': int(stats[d][what]) for d in ('rx', 'tx') for what in ('bytes', 'packets')}


def links_down(ns, timeout=5.0):
    """The interfaces of namespace ``ns`` (``None``: this process's own) that carry no traffic now:
    ``{name: why}``, e.g. ``{'veth1': 'DOWN'}`` for an end set down (``ip link set ... down``) and ``{'veth0': 'up but
    without carrier (its other end is down)'}`` for the end whose peer is down; empty while every
    one is up (notebook 08: ``helpers.job.Job`` names a cut link with it). One ``ip`` call, bounded
    by ``timeout`` seconds (NetnsError past it, or if the namespace is gone)."""
    if ns is not None:
        checks.text(ns, 'ns (a namespace)')
    timeout = checks.seconds(timeout, 'timeout')
    found = {}
    for link in json.loads(_call(['ip'] + (['-n', ns] if ns else []) + ['-j', 'link', 'show'], timeout=timeout)):
        flags, state = link.get('flags', []), link.get('operstate', 'UNKNOWN')
        if 'UP' not in flags:
            found[link['ifname']] = 'DOWN'
        elif 'NO-CARRIER' in flags or state in ('DOWN', 'LOWERLAYERDOWN'):
            found[link['ifname']] = 'up but without carrier (its other end is down)'
    return found


def _tc(ns):
    return (exec_prefix(ns) if ns else []) + ['tc']


def cap(ns, dev, rate, kind='tbf', burst=None, latency=0.1):
    """Cap the egress of interface ``dev`` in namespace ``ns`` (``None``: this process's own) at
    ``rate`` bits per second (``100e6`` = 100 Mbit/s), replacing any earlier cap (notebooks 08,
    09). ``kind='tbf'`` (a token bucket) or ``'htb'`` (one hierarchical-token-bucket class for all
    traffic). ``burst``: bytes the bucket holds, which pass at once after a pause (default 32 KiB,
    about 22 full frames: small beside the messages measured, enough for rates up to about
    1 Gbit/s); ``latency``: seconds a packet may wait in the tbf queue before it is dropped. The
    rate counts whole frames (Ethernet, IP and TCP headers included). A veth pair has two
    egresses: cap both ends to cap both directions."""
    checks.interface(ns, dev)
    checks.positive(rate, 'rate (bits per second)')
    checks.choice(kind, 'kind', ('tbf', 'htb'))
    latency = checks.seconds(latency, 'latency')
    rate, burst = int(rate), DEFAULT_BURST if burst is None else checks.whole(burst, 'burst (bytes)', 1)
    _call(_tc(ns) + ['qdisc', 'del', 'dev', dev, 'root'], check=False)   # none yet: fine
    if kind == 'tbf':
        _call(_tc(ns) + ['qdisc', 'add', 'dev', dev, 'root', 'tbf', 'rate', f'{rate}bit',
                         'burst', str(burst), 'latency', f'{int(latency * 1000)}ms'])
    else:
        _call(_tc(ns) + ['qdisc', 'add', 'dev', dev, 'root', 'handle', '1:', 'htb', 'default', '10'])
        _call(_tc(ns) + ['class', 'add', 'dev', dev, 'parent', '1:', 'classid', '1:10', 'htb',
                         'rate', f'{rate}bit', 'ceil', f'{rate}bit', 'burst', str(burst)])


def uncap(ns, dev):
    """Remove the cap of interface ``dev`` in namespace ``ns`` (``None``: this process's own), back
    to the veth's full speed (notebooks 08, 09)."""
    checks.interface(ns, dev)
    _call(_tc(ns) + ['qdisc', 'del', 'dev', dev, 'root'], check=False)


def namespaces():
    """Names of every namespace pinned in ``/run/netns`` that this module's naming scheme made,
    whoever made them (notebooks 08, 09)."""
    try:
        return sorted(n for n in os.listdir(NETNS_DIR) if _NAME.match(n))
    except FileNotFoundError:
        return []


def _owner_alive(name):
    """Is the process that created namespace ``name`` still running (and not a later process that
    reused its pid)?"""
    import psutil
    pid = int(_NAME.match(name).group(1))
    try:
        created = os.stat(os.path.join(NETNS_DIR, name)).st_mtime
        return psutil.Process(pid).create_time() <= created + 1.0
    except (psutil.Error, FileNotFoundError):
        return False


def leftovers():
    """Namespaces made by this module whose owner process is gone: what a run killed outright left
    behind (notebooks 08, 09). Namespaces of runs still going are not listed."""
    return [n for n in namespaces() if not _owner_alive(n)]


def _pids_in(ns):
    out = _call(['ip', 'netns', 'pids', ns], check=False)
    return [int(p) for p in out.split() if p.isdigit()]


def _delete_namespace(ns, grace=2.0):
    """Kill every process inside ``ns``, then delete it. Raises NetnsError if something survives.
    A namespace that another run deletes meanwhile (two test sessions both cleaning the leftovers
    of a dead one) is gone either way: that is not an error."""
    path = os.path.join(NETNS_DIR, ns)
    if not os.path.exists(path):
        return
    left = procs.kill(_pids_in(ns), grace)
    if left:
        raise NetnsError(f'processes {left} in namespace {ns} survived SIGKILL')
    try:
        _call(['ip', 'netns', 'delete', ns])
    except NetnsError:
        if os.path.exists(path):          # still there: a real failure, not a race
            raise


def remove_leftovers():
    """Delete every namespace :func:`leftovers` lists, killing what still runs inside; return their
    names (notebooks 08, 09). Safe while other runs are going: their namespaces are not touched."""
    gone = []
    for ns in leftovers():
        _delete_namespace(ns)
        gone.append(ns)
    return gone


class Link:
    """One veth pair between two namespaces (notebooks 08, 09): ``ns_a``, ``dev_a``, ``addr_a`` on
    one side and ``ns_b``, ``dev_b``, ``addr_b`` on the other; addresses without the prefix length."""

    def __init__(self, ns_a, dev_a, addr_a, ns_b, dev_b, addr_b):
        self.ns_a, self.dev_a, self.addr_a = ns_a, dev_a, addr_a
        self.ns_b, self.dev_b, self.addr_b = ns_b, dev_b, addr_b

    def __repr__(self):
        return f'Link({self.ns_a}:{self.dev_a} {self.addr_a} <-> {self.ns_b}:{self.dev_b} {self.addr_b})'


_OPEN = set()            # Networks not closed yet: closed at interpreter exit
_OPEN_LOCK = threading.Lock()


@atexit.register
def _close_all():
    for net in list(_OPEN):
        try:
            net.close()
        except Exception as exc:  # at exit, say what could not be removed, and go on
            print(f'helpers.netns: {exc}', file=sys.stderr)


class Network:
    """Namespaces, links, caps and processes of one run; removed by :meth:`close` (notebooks 08,
    09). Use it as a context manager. Creating one first removes :func:`leftovers` of dead runs
    (``clean_leftovers=False`` to skip); ``self.removed_leftovers`` lists them."""

    def __init__(self, clean_leftovers=True):
        checks.flag(clean_leftovers, 'clean_leftovers')
        self.token = secrets.token_hex(3)
        self.namespaces, self.links, self.procs = [], [], []
        self.closed = False
        self.removed_leftovers = remove_leftovers() if clean_leftovers else []
        with _OPEN_LOCK:
            _OPEN.add(self)

    # ------------------------------------------------------------------ building
    def _check_open(self):
        if self.closed:
            raise NetnsError('this Network is closed: create a new one')

    def namespace(self, label):
        """Create a namespace (unique name ``mxdp-<pid>-<token>-<label>``) with its loopback up;
        return its name. ``label``: 1-12 lower-case letters or digits, unique in this Network."""
        self._check_open()
        if not isinstance(label, str):
            raise TypeError(f'label must be a string, got {label!r}')
        if not _LABEL.match(label):
            raise ValueError(f'label must be 1-12 lower-case letters or digits, got {label!r}')
        name = f'{PREFIX}-{os.getpid()}-{self.token}-{label}'
        if name in self.namespaces:
            raise ValueError(f'this Network already has a namespace labelled {label!r}')
        _call(['ip', 'netns', 'add', name])
        self.namespaces.append(name)          # recorded at once: close() removes it whatever follows
        _call(['ip', '-n', name, 'link', 'set', 'lo', 'up'])
        return name

    def veth(self, ns_a, ns_b, addr_a=None, addr_b=None, prefixlen=24):
        """A veth pair from ``ns_a`` to ``ns_b`` (namespaces of this Network), created with each end
        already inside its namespace, addressed and up; returns a :class:`Link`. Both ends are
        called ``veth<i>`` (the i-th link of this Network); default addresses ``10.77.<i>.1`` and
        ``10.77.<i>.2``."""
        self._check_open()
        for ns in (ns_a, ns_b):
            if ns not in self.namespaces:
                raise ValueError(f'{ns!r} is not a namespace of this Network (create it with namespace())')
        if ns_a == ns_b:
            raise ValueError('a veth pair joins two different namespaces')
        i = len(self.links)
        dev = f'veth{i}'
        addr_a, addr_b = addr_a or f'10.77.{i}.1', addr_b or f'10.77.{i}.2'
        _call(['ip', 'link', 'add', dev, 'netns', ns_a, 'type', 'veth', 'peer', 'name', dev, 'netns', ns_b])
        link = Link(ns_a, dev, addr_a, ns_b, dev, addr_b)
        self.links.append(link)
        for ns, addr in ((ns_a, addr_a), (ns_b, addr_b)):
            _call(['ip', '-n', ns, 'addr', 'add', f'{addr}/{prefixlen}', 'dev', dev])
            _call(['ip', '-n', ns, 'link', 'set', dev, 'up'])
        # The kernel reports the carrier up to a second after both ends are up (its link watch): wait
        # for it, so that the link is up when this returns (a job's watch, helpers.job_faults, reads it).
        deadline = time.monotonic() + CALL_TIMEOUT
        while any(dev in links_down(ns) for ns in (ns_a, ns_b)):
            if time.monotonic() > deadline:
                raise NetnsError(f'the veth pair {dev} between {ns_a} and {ns_b} has no carrier '
                                 f'{CALL_TIMEOUT:g} s after both ends were set up')
            time.sleep(0.05)
        return link

    def cap(self, ns, dev, rate, kind='tbf', burst=None, latency=0.1):
        """:func:`cap` interface ``dev`` of namespace ``ns`` (one of this Network's)."""
        self._check_open()
        cap(ns, dev, rate, kind, burst, latency)

    def uncap(self, ns, dev):
        """:func:`uncap` interface ``dev`` of namespace ``ns``."""
        self._check_open()
        uncap(ns, dev)

    # ------------------------------------------------------------------ processes
    def popen(self, ns, command, **kwargs):
        """Start ``command`` (a list of strings) inside namespace ``ns`` as a new process group
        (``subprocess.Popen`` keyword arguments pass through); :meth:`close` kills the group."""
        self._check_open()
        if ns not in self.namespaces:
            raise ValueError(f'{ns!r} is not a namespace of this Network')
        if isinstance(command, str) or not command or not all(isinstance(c, str) for c in command):
            raise TypeError(f'command must be a non-empty list of strings, got {command!r}')
        kwargs.setdefault('stdin', subprocess.DEVNULL)
        proc = subprocess.Popen(exec_prefix(ns) + list(command), start_new_session=True, **kwargs)
        self.procs.append(proc)
        return proc

    def run(self, ns, command, timeout, **kwargs):
        """Run ``command`` inside ``ns`` to the end and return a ``subprocess.CompletedProcess``
        (stdout and stderr captured as text unless told otherwise). Past ``timeout`` seconds its
        process group is killed and ``subprocess.TimeoutExpired`` is raised."""
        kwargs.setdefault('stdout', subprocess.PIPE)
        kwargs.setdefault('stderr', subprocess.PIPE)
        kwargs.setdefault('text', True)
        proc = self.popen(ns, command, **kwargs)
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            procs.kill_group(proc, grace=2.0)
            proc.communicate()
            raise
        return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)

    # ------------------------------------------------------------------ removal
    def close(self):
        """Kill every process group this Network started and every process still inside its
        namespaces, then delete the namespaces (with their links and caps). Safe to call twice.
        Raises NetnsError, after trying everything, if something could not be removed."""
        if self.closed:
            return
        self.closed = True
        errors = []
        for proc in self.procs:
            if proc.poll() is None:
                procs.kill_group(proc, grace=2.0)
        for ns in reversed(self.namespaces):
            try:
                _delete_namespace(ns)
            except NetnsError as exc:
                errors.append(str(exc))
        with _OPEN_LOCK:
            _OPEN.discard(self)
        if errors:
            raise NetnsError('; '.join(errors))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        state = 'closed' if self.closed else f'{len(self.namespaces)} namespace(s), {len(self.links)} link(s)'
        return f'Network({self.token}: {state})'


_AVAILABLE = None


def available():
    """``(True, '')`` if this process can create namespaces, veth pairs and tbf caps, else
    ``(False, reason)``: not Linux, not root, no ``ip`` or ``tc``, or the kernel refused (a
    container without the capability, a kernel without veth/tbf). The first call tries it for
    real (a namespace pair, a link, a cap, all removed at once); later calls reuse the answer
    (notebooks 08, 09)."""
    global _AVAILABLE
    if _AVAILABLE is None:
        _AVAILABLE = _probe()
    return _AVAILABLE


def _probe():
    if not sys.platform.startswith('linux'):
        return False, f'network namespaces are a Linux feature (this is {sys.platform})'
    if os.geteuid() != 0:
        return False, 'creating network namespaces needs root (this process runs as uid %d)' % os.geteuid()
    for tool in ('ip', 'tc'):
        if shutil.which(tool) is None:
            return False, f'`{tool}` is not installed (Debian package iproute2)'
    try:
        with Network() as net:
            a, b = net.namespace('probea'), net.namespace('probeb')
            link = net.veth(a, b)
            net.cap(a, link.dev_a, 100e6)
            counters(a, link.dev_a)
    except (NetnsError, OSError) as exc:
        return False, f'the kernel refused: {exc}'
    return True, ''


def _main(argv):
    if argv == ['list']:
        for ns in namespaces():
            print(ns, '(left over)' if ns in leftovers() else '(its run is going)')
    elif argv == ['clean']:
        for ns in remove_leftovers():
            print('removed', ns)
    elif argv == ['check']:
        ok, why = available()
        print('available' if ok else f'not available: {why}')
    else:
        sys.exit('usage: python -m helpers.netns list | clean | check')


if __name__ == '__main__':
    _main(sys.argv[1:])
