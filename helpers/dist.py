"""Run a local MXNet parameter-server job (scheduler + servers + workers) and babysit it -- notebook 08.

A job is started, polled and stopped (:class:`Job`); :func:`run_local_job` is that loop:

    job = Job(command, num_workers, num_servers, timeout)   # start: MXNet's launcher, every process
    while not job.poll(): ...                               # a dead process raises, naming it
    job.stop()                                              # always: success, error, timeout, Ctrl-C

What it guarantees:

- every process's output is streamed, each line prefixed with the process's role and index
  (``[worker 1] ...``, ``[server 0] ...``, ``[scheduler] ...``; ``[launcher] ...`` for the launcher);
- a process that dies (non-zero exit, a signal) ends the job at once with :class:`DistJobError`
  naming it: without this, the survivors of a parameter-server job wait for the dead one forever;
- the job has a wall-clock ``timeout``: past it, :class:`DistJobTimeout` names what was still running;
- however the call ends (success, error, timeout, ``KeyboardInterrupt``), every process it started
  is stopped: the launcher runs in a process group of its own, the whole group is killed, and so is
  every process recorded in the job directory.

How it works. MXNet's launcher (``mxnet/tools/launch.py --launcher local``) starts the same command
once per process, with ``DMLC_ROLE`` (scheduler, server, worker) and ``DMLC_TASK_ID`` in its
environment. Here that command is a tiny *node shim* (``python helpers/dist.py node``, standard
library only: importing ``mxnet`` would turn it into a server). The shim runs the real command (read
from the job directory), prefixes its output lines, and records its pid and exit status in the job
directory, which is what :meth:`Job.poll` reads. A *placement* (``place=``) can run each process in a
network namespace of its own, at an address of its own (notebook 08 measures traffic that way).

The one compatibility fix MXNet 1.9.1's launcher needs on Python >= 3.9 lives in
:func:`_patch_launcher`, nowhere else. This module deliberately does not import ``mxnet``.
"""
import os
import sys

if __name__ == '__main__' and sys.path and os.path.abspath(sys.path[0]) == os.path.dirname(
        os.path.abspath(__file__)):
    sys.path.pop(0)  # run as a script: helpers/ itself must not shadow standard modules

import contextlib
import json
import numbers
import queue
import shlex
import shutil
import signal
import subprocess
import tempfile
import threading
import time

__all__ = ['run_local_job', 'Job', 'JobResult', 'DistJobError', 'DistJobTimeout', 'job_processes',
           'launcher_path', 'try_launcher', 'two_hosts', 'two_machines', 'run_side_by_side',
           'ssh_commands', 'LOOPBACK']

LOOPBACK = '127.0.0.1'
JOBDIR_ENV = 'MXDP_DIST_JOBDIR'
DEADLINE_ENV = 'MXDP_DIST_DEADLINE'
ROOT_URI_ENV = 'MXDP_DIST_ROOT_URI'
_HERE = os.path.abspath(__file__)
_ROOT = os.path.dirname(os.path.dirname(_HERE))


class DistJobError(RuntimeError):
    """A distributed job failed (notebook 08). ``nodes`` maps each process name to its status dict
    (``pid``, ``exit``), ``lines`` holds the output seen so far, ``still_running`` the processes
    that were alive when it was stopped, ``jobdir`` the job's directory (deleted by then)."""

    def __init__(self, message, nodes=None, lines=None, still_running=(), jobdir=None):
        super().__init__(message)
        self.nodes = nodes or {}
        self.lines = lines or []
        self.still_running = list(still_running)
        self.jobdir = jobdir


class DistJobTimeout(DistJobError, TimeoutError):
    """A distributed job ran past its timeout; every process was stopped (notebook 08)."""


class JobResult:
    """What :func:`run_local_job` returns for a job whose processes all exited with status 0
    (notebook 08)."""

    def __init__(self, lines, nodes, wall_time, port, launcher_cmd, launcher_pid, jobdir):
        self.lines = lines                # [(name, text)], in arrival order
        self.nodes = nodes                # name -> {'pid', 'shim_pid', 'role', 'port', 'exit'}
        self.wall_time = wall_time        # seconds, launch to last exit
        self.port = port                  # the scheduler's port (DMLC_PS_ROOT_PORT)
        self.launcher_cmd = launcher_cmd  # the command line that started the launcher
        self.launcher_pid = launcher_pid
        self.jobdir = jobdir

    def output(self, name):
        """Lines printed by one process, e.g. ``result.output('worker 0')``."""
        return [text for who, text in self.lines if who == name]

    def __repr__(self):
        return (f'JobResult({len(self.nodes)} processes, port {self.port}, '
                f'wall time {self.wall_time:.1f} s)')


def launcher_path():
    """Path of MXNet's launcher, ``mxnet/tools/launch.py``, found without importing ``mxnet``
    (notebook 08)."""
    import importlib.util
    spec = importlib.util.find_spec('mxnet')
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError('mxnet is not installed in this environment (see README, set-up)')
    return os.path.join(list(spec.submodule_search_locations)[0], 'tools', 'launch.py')


# --------------------------------------------------------------------------- the launcher, fixed
# WHY the launcher needs a patch. MXNet 1.9.1 bundles a dmlc_tracker whose ``PSTracker.join`` and
# ``alive`` call ``threading.Thread.isAlive()`` (dmlc_tracker/tracker.py), which Python 3.9 removed
# (it has been ``is_alive()`` since Python 2.6). So ``python -m mxnet.tools.launch`` crashes on every
# Python this series supports (3.9-3.12) as soon as the job starts. We restore the old name in the
# launcher's process only, instead of patching site-packages. Also, in ``--launcher local`` mode the
# tracker announces as the scheduler's address the one the host name resolves to, or, if that is a
# loopback address, the address of the interface holding the default route (``get_host_ip``,
# dmlc_tracker/tracker.py); a local job has no reason to leave the machine, so that address is
# pinned to ``127.0.0.1`` (or to ``$MXDP_DIST_ROOT_URI``, the scheduler's address in a placement).
def _patch_launcher(argv):
    """The fix MXNet 1.9.1's launcher needs, applied in the launcher's process (notebook 08)."""
    if not hasattr(threading.Thread, 'isAlive'):       # gone in Python 3.9; dmlc_tracker calls it
        threading.Thread.isAlive = threading.Thread.is_alive
    if _launcher_kind(argv) == 'local':                # a local job: the scheduler at 127.0.0.1
        from dmlc_tracker import tracker
        root = os.environ.get(ROOT_URI_ENV, LOOPBACK)
        tracker.get_host_ip = lambda host_ip=None: root


def _launcher_kind(argv):
    """The ``--launcher`` that MXNet's launch.py reads from ``argv``, as it reads it (argparse's
    ``parse_known_args``; default ``ssh``): not a script's own argument that happens to be 'local'
    (notebook 08)."""
    import argparse
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument('--launcher', default='ssh')
    return parser.parse_known_args(list(argv))[0].launcher


def _launcher_main(argv):
    """Run MXNet's ``tools/launch.py`` with ``argv``, unchanged, after :func:`_patch_launcher`."""
    _patch_launcher(argv)
    import runpy
    path = launcher_path()
    sys.argv = [path] + list(argv)
    runpy.run_path(path, run_name='__main__')


def try_launcher(args, patched=True, timeout=60):
    """Run MXNet's launcher with ``args`` (``launch.py``'s arguments) in a process of its own, as
    shipped (``patched=False``) or after :func:`_patch_launcher`, and wait for it (notebook 08).
    Returns ``(exit status, last line of its error output)``. Whatever happens, the launcher and
    everything it started are killed before this returns or raises (``TimeoutExpired``)."""
    command = ([sys.executable, _HERE, 'launch'] if patched else [sys.executable, launcher_path()])
    proc = subprocess.Popen(command + list(args), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL, text=True, start_new_session=True)
    try:
        _, err = proc.communicate(timeout=timeout)
    finally:
        _kill_all(proc, {}, grace=2.0)              # the launcher and everything it started
    lines = err.strip().splitlines()
    return proc.returncode, lines[-1] if lines else ''


# --------------------------------------------------------------------------- the node shim
def _node_name(env):
    role = env.get('DMLC_ROLE', '?')
    if role == 'scheduler':
        return 'scheduler'
    task = int(env.get('DMLC_TASK_ID', '0'))
    if role == 'server':
        return f'server {task - int(env.get("DMLC_NUM_WORKER", "0"))}'
    return f'{role} {task}'


def _write_json(path, obj):
    tmp = path + '.tmp'
    with open(tmp, 'w') as f:
        json.dump(obj, f)
    os.replace(tmp, path)


def _status_file(jobdir, name, kind):
    return os.path.join(jobdir, f'{name.replace(" ", "-")}.{kind}.json')


def _node_main():
    """One process of the job: run the real command (in its network namespace, if the job has a
    placement), prefix its output, record its pid and exit status."""
    jobdir = os.environ[JOBDIR_ENV]
    name = _node_name(os.environ)
    with open(os.path.join(jobdir, 'command.json')) as f:
        command = json.load(f)
    env = dict(os.environ)
    place = {}
    if os.path.exists(os.path.join(jobdir, 'place.json')):
        with open(os.path.join(jobdir, 'place.json')) as f:
            place = json.load(f).get(name, {})
    if place.get('host'):
        env['DMLC_NODE_HOST'] = place['host']         # the address this process binds and announces
    if place.get('netns'):
        command = ['ip', 'netns', 'exec', place['netns']] + command   # setns, then exec: same pid
    try:
        child, error = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                        stdin=subprocess.DEVNULL, env=env), None
    except OSError as exc:  # e.g. no such program: report it as this process's failure
        child, error = None, exc
    _write_json(_status_file(jobdir, name, 'start'),
                {'name': name, 'role': os.environ.get('DMLC_ROLE'),
                 'pid': child.pid if child else os.getpid(),
                 'shim_pid': os.getpid(), 'port': os.environ.get('DMLC_PS_ROOT_PORT')})
    if child is None:
        sys.stdout.write(f'[{name}] cannot start {command[0]!r}: {error}\n')
        sys.stdout.flush()
        _write_json(_status_file(jobdir, name, 'exit'), {'exit': 127})
        sys.exit(127)
    # Backstop: even if whoever started the job is gone, nothing outlives its deadline by long.
    left = float(os.environ.get(DEADLINE_ENV, time.time() + 3600)) + 30 - time.time()
    watchdog = threading.Timer(max(left, 0), child.kill)
    watchdog.daemon = True
    watchdog.start()
    for raw in child.stdout:
        sys.stdout.write(f'[{name}] {raw.decode(errors="replace").rstrip()}\n')
        sys.stdout.flush()
    code = child.wait()
    watchdog.cancel()
    _write_json(_status_file(jobdir, name, 'exit'), {'exit': code})
    sys.exit(code if code >= 0 else 128 - code)


# --------------------------------------------------------------------------- process bookkeeping
def _describe_exit(code):
    if code < 0:
        try:
            return f'killed by {signal.Signals(-code).name}'
        except ValueError:
            return f'killed by signal {-code}'
    return f'exit status {code}'


def _read_nodes(jobdir):
    nodes = {}
    for entry in sorted(os.listdir(jobdir)):
        if entry.endswith('.start.json'):
            with open(os.path.join(jobdir, entry)) as f:
                info = json.load(f)
            info['exit'] = None
            nodes[info['name']] = info
    for name, info in nodes.items():
        path = _status_file(jobdir, name, 'exit')
        if os.path.exists(path):
            with open(path) as f:
                info['exit'] = json.load(f)['exit']
    return nodes


def _alive(pid):
    import psutil
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def job_processes(jobdir):
    """Live processes (zombies excluded) started for the job whose directory is ``jobdir``: the
    launcher and every scheduler, server and worker carry it in their environment (notebook 08).
    After :func:`run_local_job` returns or raises, this is empty (notebook 08 and the tests check it)."""
    import psutil
    found = []
    for p in psutil.process_iter():
        try:
            if p.environ().get(JOBDIR_ENV) == jobdir and p.status() != psutil.STATUS_ZOMBIE:
                found.append(p)
        except psutil.Error:
            pass
    return found


def _kill_all(launcher, nodes, grace):
    """SIGTERM, then SIGKILL, the launcher, everything it started and every recorded process (the
    same escalation as for the processes of a network namespace: ``helpers.netns``); then SIGKILL
    to the launcher's process group, for anything started meanwhile. Return the pids still alive."""
    import psutil
    from helpers.netns import _kill_pids
    pids = [launcher.pid]
    try:
        pids += [p.pid for p in psutil.Process(launcher.pid).children(recursive=True)]
    except psutil.Error:
        pass
    pids += [info[key] for info in nodes.values() for key in ('pid', 'shim_pid') if info.get(key)]
    left = _kill_pids(sorted(set(pids)), grace)
    try:
        os.killpg(launcher.pid, signal.SIGKILL)   # the launcher leads its own group (start_new_session)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        launcher.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        pass
    return [pid for pid in left if _alive(pid)]


# --------------------------------------------------------------------------- the job
class Job:
    """A local parameter-server job: the constructor starts it, :meth:`poll` follows it, :meth:`stop`
    ends it (notebook 08; :func:`run_local_job` is the loop).

    ``command`` (a list of strings) is what every process runs; ``num_workers`` workers and
    ``num_servers`` servers are started, plus one scheduler, by MXNet's launcher in local mode, all on
    ``127.0.0.1`` unless ``place`` says otherwise. ``timeout`` (seconds) is the job's deadline: the
    processes' own watchdog kills them 30 s past it even if this object is gone. ``env`` adds
    environment variables for every process; ``echo`` is True (print each prefixed line), False, or
    a function called with each line. ``place`` maps a process name (``'scheduler'``, ``'server 0'``,
    ``'worker 1'``) to ``{'netns': name, 'host': address}``: that process runs in that network
    namespace and binds that address; ``place['scheduler']['host']`` is announced as the scheduler's.
    """

    def __init__(self, command, num_workers=2, num_servers=1, timeout=120, env=None, echo=True,
                 cwd=None, place=None):
        if isinstance(command, str) or not command or not all(isinstance(c, str) for c in command):
            raise TypeError(f'command must be a non-empty list of strings, got {command!r}')
        for value, what in ((num_workers, 'num_workers'), (num_servers, 'num_servers')):
            if isinstance(value, bool) or not isinstance(value, numbers.Integral):
                raise TypeError(f'{what} must be a whole number, got {value!r}')
            if value < 1:
                raise ValueError(f'{what} must be at least 1, got {value}')
        if isinstance(timeout, bool) or not isinstance(timeout, numbers.Real):
            raise TypeError(f'timeout must be a number of seconds, got {timeout!r}')
        if not timeout > 0:
            raise ValueError(f'timeout must be a positive number of seconds, got {timeout!r}')
        self.expected = (['scheduler'] + [f'server {i}' for i in range(num_servers)]
                         + [f'worker {i}' for i in range(num_workers)])
        self.timeout, self.lines, self.nodes = float(timeout), [], {}
        self._say = print if echo is True else (lambda line: None) if not echo else echo
        self._out, self._launcher_done_at, self._stopped = queue.Queue(), None, False
        self.jobdir = tempfile.mkdtemp(prefix='mxdp-dist-')
        try:
            _write_json(os.path.join(self.jobdir, 'command.json'), list(command))
            if place:
                _write_json(os.path.join(self.jobdir, 'place.json'), dict(place))
            self.launcher_cmd = ([sys.executable, _HERE, 'launch', '--launcher', 'local',
                                  '-n', str(num_workers), '-s', str(num_servers)]
                                 + [shlex.quote(c) for c in (sys.executable, _HERE, 'node')])
            self.start = time.monotonic()
            self.proc = subprocess.Popen(self.launcher_cmd, stdout=subprocess.PIPE,
                                         stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                         env=self._environment(env, place), cwd=cwd or _ROOT,
                                         start_new_session=True)  # its own process group
        except BaseException:
            shutil.rmtree(self.jobdir, ignore_errors=True)
            raise
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _environment(self, extra, place):
        env = dict(os.environ)
        env.update({
            JOBDIR_ENV: self.jobdir,
            DEADLINE_ENV: str(time.time() + self.timeout),
            'PYTHONUNBUFFERED': '1',
            'PYTHONPATH': os.pathsep.join(p for p in (_ROOT, os.environ.get('PYTHONPATH')) if p),
            'DMLC_NODE_HOST': LOOPBACK,     # every ps-lite node binds and announces loopback
            'OMP_NUM_THREADS': env.get('OMP_NUM_THREADS', '1'),  # the processes share the cores
        })
        for key in ('DMLC_ROLE', 'DMLC_PS_ROOT_URI', 'DMLC_PS_ROOT_PORT', ROOT_URI_ENV):
            env.pop(key, None)  # set by the launcher, per process
        root = ((place or {}).get('scheduler') or {}).get('host')
        if root:
            env[ROOT_URI_ENV] = root
        env.update({str(k): str(v) for k, v in (extra or {}).items()})
        return env

    def _read(self):
        for raw in self.proc.stdout:
            self._out.put(raw.decode(errors='replace').rstrip('\n'))

    def _drain(self):
        while True:
            try:
                line = self._out.get_nowait()
            except queue.Empty:
                return
            if line.startswith('[') and '] ' in line:
                who, text = line[1:].split('] ', 1)
            else:
                who, text, line = 'launcher', line, f'[launcher] {line}'
            self.lines.append((who, text))
            self._say(line)

    def seconds(self):
        """Seconds since the job started."""
        return time.monotonic() - self.start

    def expired(self):
        """True once the job has run past its timeout."""
        return self.seconds() > self.timeout

    def running(self):
        """``'name (pid N)'`` of every process of the job that is still alive."""
        return [f'{n} (pid {i["pid"]})' for n, i in sorted(self.nodes.items())
                if i['exit'] is None and _alive(i['pid'])]

    def fail(self, cls, message):
        """Raise ``cls`` (a :class:`DistJobError`) with ``message`` and what is still running."""
        time.sleep(0.2)      # let the last lines of a dying process arrive
        self._drain()
        still = self.running()
        if cls is DistJobTimeout:
            missing = [n for n in self.expected if n not in self.nodes]
            message += f'; never started: {", ".join(missing)}' if missing else ''
        raise cls(message + ('; still running: ' + ', '.join(still) if still else ''),
                  nodes=self.nodes, lines=self.lines, still_running=still, jobdir=self.jobdir)

    def poll(self):
        """Read new output and statuses. True when every process has exited with status 0; raises
        :class:`DistJobError` naming the first process that died (or vanished), or the launcher."""
        self._drain()
        self.nodes = _read_nodes(self.jobdir)
        for n in self.expected:
            info = self.nodes.get(n)
            if info and info['exit'] not in (None, 0):
                self.fail(DistJobError, f'{n} (pid {info["pid"]}) died: '
                                        f'{_describe_exit(info["exit"])}; the job was stopped'
                                        + self._bind_hint(n, info))
        for n, info in self.nodes.items():
            if info['exit'] is None and not _alive(info['shim_pid']):
                self.nodes = _read_nodes(self.jobdir)       # it may have written its status just now
                if self.nodes[n]['exit'] is None:
                    self.fail(DistJobError, f'{n} (pid {info["pid"]}) vanished without an exit '
                                            'status; the job was stopped')
                return False
        if all(n in self.nodes and self.nodes[n]['exit'] == 0 for n in self.expected):
            self.wall_time = self.seconds()
            return True
        self._check_launcher()
        return False

    def _bind_hint(self, name, info):
        """ps-lite's 'bind failed' (3rdparty/ps-lite/src/van.cc) explained: the port was taken."""
        self._drain()
        if not any(n == name and 'bind failed' in text for n, text in self.lines):
            return ''
        return (f' (it could not bind port {info.get("port")}: another process took the port after '
                "the launcher found it free; dmlc_tracker's PSTracker tests a port, closes it, and "
                'the scheduler binds it later. Start the job again)')

    def _check_launcher(self):
        code = self.proc.poll()
        if code is None:
            return
        if code != 0:
            last = self.lines[-1][1] if self.lines else 'none'
            self.fail(DistJobError, f'the launcher exited with status {code} (last output: {last!r})')
        self._launcher_done_at = self._launcher_done_at or time.monotonic()
        if time.monotonic() - self._launcher_done_at > 10:
            missing = [n for n in self.expected if n not in self.nodes]
            self.fail(DistJobError, 'the launcher finished but ' + (
                f'{", ".join(missing)} never started' if missing else 'processes did not exit'))

    def stop(self, grace=3.0):
        """Stop every process of the job (whatever state it is in) and delete the job directory.
        Safe to call twice. Raises :class:`DistJobError` if a process survives SIGKILL."""
        if self._stopped:
            return
        self._stopped = True
        try:
            self.proc.wait(timeout=grace if all(
                i['exit'] == 0 for i in self.nodes.values()) and self.nodes else 0.01)
        except subprocess.TimeoutExpired:
            pass
        try:
            left = _kill_all(self.proc, self.nodes, grace)
            self._reader.join(timeout=grace)
            self._drain()                               # the last lines of every process
        finally:
            shutil.rmtree(self.jobdir, ignore_errors=True)
        if left:
            raise DistJobError(f'could not stop processes {left}', nodes=self.nodes, lines=self.lines)

    def result(self):
        """The :class:`JobResult` of a job that finished."""
        port = next((i.get('port') for i in self.nodes.values() if i.get('port')), None)
        return JobResult(self.lines, self.nodes, self.wall_time, int(port) if port else None,
                         self.launcher_cmd, self.proc.pid, self.jobdir)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


def run_local_job(command, num_workers=2, num_servers=1, timeout=120, env=None, echo=True, place=None):
    """Run ``command`` as a local parameter-server job; return its :class:`JobResult` (notebook 08).
    A dead process ends the job with DistJobError naming it; past ``timeout``, DistJobTimeout.
    Whatever happens, every process it started is stopped before it returns or raises."""
    job = Job(command, num_workers, num_servers, timeout, env, echo, place=place)   # start
    try:
        while not job.poll():                       # raises as soon as a process dies
            if job.expired():
                job.fail(DistJobTimeout, f'the job exceeded its timeout of {timeout:g} s and was stopped')
            time.sleep(0.1)
    finally:
        job.stop()                                  # success, error, timeout or Ctrl-C
    return job.result()


def two_hosts(net, num_workers, num_servers=1):
    """Two "machines" for a job, in the network namespaces of ``net`` (a ``helpers.netns.Network``;
    notebook 08): the scheduler and the servers in one namespace, every worker in another, joined
    by one veth pair. Returns ``(place, link)``: ``place`` for :class:`Job`, and the
    ``helpers.netns.Link`` whose end ``link.dev_b`` in ``link.ns_b`` is the workers' side: its
    ``tx_bytes`` count what the workers sent, its ``rx_bytes`` what they received."""
    servers, workers = net.namespace('servers'), net.namespace('workers')
    link = net.veth(servers, workers)
    place = {name: {'netns': servers, 'host': link.addr_a}
             for name in ['scheduler'] + [f'server {i}' for i in range(num_servers)]}
    place.update({f'worker {i}': {'netns': workers, 'host': link.addr_b} for i in range(num_workers)})
    return place, link


@contextlib.contextmanager
def two_machines(num_workers, num_servers=1):
    """``with two_machines(2) as place: run_local_job(..., place=place)`` (notebook 08): the
    placement of :func:`two_hosts` on network namespaces that exist for the ``with`` block only, or
    ``None`` where this machine cannot make them (``helpers.netns.available``): the job then runs
    on the loopback interface, and its traffic is not measured."""
    from helpers import netns
    if not netns.available()[0]:
        yield None
        return
    with netns.Network() as net:
        yield two_hosts(net, num_workers, num_servers)[0]


def run_side_by_side(jobs, timeout=300, failures='raise', isolate=True):
    """Run several jobs at once, each on :func:`two_hosts` of its own, and measure the traffic
    between its workers and its servers (notebook 08). ``jobs`` maps a name to ``(command,
    num_workers)``. Returns ``{name: {'result': JobResult, 'sent': bytes, 'received': bytes}}``:
    what the workers' interface sent and received over the whole job (start-up and shutdown
    included). ``isolate=False`` (no network namespaces on this machine, ``helpers.netns.available``)
    runs every job on the loopback interface instead, and ``sent`` and ``received`` are None.

    The same start, poll, stop as :func:`run_local_job`, for all jobs in one loop: past ``timeout``
    a job still running is stopped with :class:`DistJobTimeout`. A job that fails raises its
    :class:`DistJobError` after every job was stopped (``failures='raise'``), or is recorded as
    ``{'error': DistJobError}`` while the others go on (``failures='return'``). Every process and
    namespace is removed however the call ends."""
    from helpers import netns
    if failures not in ('raise', 'return'):
        raise ValueError(f"failures must be 'raise' or 'return', got {failures!r}")
    found = {}
    with contextlib.ExitStack() as stack:          # leaves in reverse: jobs stop, then networks go
        started = {}
        for name, (command, num_workers) in jobs.items():
            place, link, before = None, None, None
            if isolate:
                place, link = two_hosts(stack.enter_context(netns.Network()), num_workers)
                before = netns.counters(link.ns_b, link.dev_b)
            job = stack.enter_context(Job(command, num_workers, 1, timeout, echo=False, place=place))
            started[name] = (job, link, before)
        while len(found) < len(started):
            for name, (job, link, before) in started.items():
                if name not in found:
                    done = _poll_measured(job, link, before, name, failures)
                    if done is not None:
                        found[name] = done
            time.sleep(0.1)
    return {name: found[name] for name in jobs}


def _poll_measured(job, link, before, name, failures):
    """One poll of one job of :func:`run_side_by_side`: None while it runs, else what it found."""
    try:
        if not job.poll():
            if job.expired():
                job.fail(DistJobTimeout, f'{name}: the job exceeded its timeout of {job.timeout:g} s')
            return None
    except DistJobError as error:
        job.stop()
        if failures == 'raise':
            raise
        return {'error': error}
    sent = received = None
    if link is not None:
        from helpers import netns
        after = netns.counters(link.ns_b, link.dev_b)
        sent, received = after['tx_bytes'] - before['tx_bytes'], after['rx_bytes'] - before['rx_bytes']
    job.stop()
    return {'result': job.result(), 'sent': sent, 'received': received}


def _host_and_port(entry):
    """A host-file entry read as dmlc_tracker/ssh.py reads it: ``host[:ssh port][ slots=N]``."""
    host, _, port = entry.split('slots=')[0].strip().partition(':')
    return host, port


def ssh_commands(hosts, script_args, num_servers=None, hostfile='hosts', repo=_ROOT, python=None,
                 interface=None, env=None):
    """Shell commands that run ``python -m helpers.dist_train SCRIPT_ARGS`` on ``hosts`` with MXNet's
    ssh launcher (notebook 08): ``{'hosts': the host file's text, 'check': one command per host,
    'launch': the launcher's command}``. One worker per host; ``num_servers`` servers (default: one
    per host). ``hosts`` are IPv4 addresses, or, with ``interface`` (e.g. ``'eth0'``), any names ssh
    reaches: a host name without ``interface`` raises ValueError.

    WHY: dmlc_tracker/ssh.py sets ``DMLC_NODE_HOST`` to the host's entry in the host file, and ps-lite
    binds a server's or worker's socket to exactly that address; it reads ``DMLC_INTERFACE`` only when
    ``DMLC_NODE_HOST`` is empty (``Van::Start``, ps-lite's src/van.cc). The libzmq MXNet 1.9.1 bundles
    (4.2.2, tools/dependencies/zmq.sh) binds a numeric address or an interface name, never a host name
    (``tcp_address_t::resolve_interface``, src/tcp_address.cpp), so with a name every server and
    worker dies ("bind failed"). With ``interface`` the command unsets ``DMLC_NODE_HOST`` and sets
    ``DMLC_INTERFACE`` itself (``env -u DMLC_NODE_HOST DMLC_INTERFACE=eth0 ...``): ps-lite then binds
    that interface's address on every host (``GetIP``, src/network_utils.h).

    The commands also follow what ssh.py does otherwise: it forwards only ``OMP_NUM_THREADS``,
    ``KMP_AFFINITY``, ``LD_LIBRARY_PATH``, ``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY`` and
    ``DMLC_INTERFACE`` (plus the ``DMLC_*`` roles and addresses it sets), so any other variable
    (``env``, e.g. ``PS_VERBOSE``) is set in the command itself; it runs the command over
    non-interactive ssh, whose ``python`` is not this venv's, so the command names the interpreter by
    its path (``python``, default: this one); it copies nothing but, with ``--sync-dst-dir``, the
    current directory, so the repository, its venv and the data must already be on every host at the
    same path: ``check`` verifies that, host by host. The scheduler runs where the launcher runs, at
    the address of that host's name (or of its default route's interface: ``get_host_ip``,
    dmlc_tracker/tracker.py).
    """
    import ipaddress
    hosts = [str(h).strip() for h in hosts]
    python = python or sys.executable
    for what, value in [('repo', repo), ('python', python)] + [('interface', interface)] * bool(interface) + [
            (f'env[{k!r}]', f'{k}={v}') for k, v in dict(env or {}).items()]:
        if shlex.quote(str(value)) != str(value):       # ssh.py would pass its quotes on, broken
            raise ValueError(f'{what} = {value!r} needs shell quoting, which MXNet\'s ssh launcher cannot '
                             "pass on: dmlc_tracker/ssh.py puts the command between single quotes as it "
                             'is, and runs `cd` into the working directory unquoted. Use paths and values '
                             'without spaces or shell characters')
    if interface is None:
        for h in hosts:
            try:
                ipaddress.IPv4Address(_host_and_port(h)[0])
            except ValueError:
                raise ValueError(
                    f'{h!r} is not an IPv4 address: ps-lite would bind it as given (DMLC_NODE_HOST, set '
                    "by dmlc_tracker's ssh launcher), which MXNet's libzmq 4.2.2 refuses for a host "
                    "name. Write IP addresses, or pass interface= (e.g. 'eth0')") from None
    env = {**({'DMLC_INTERFACE': interface} if interface else {}), **dict(env or {})}
    prefix = ((['env'] + (['-u', 'DMLC_NODE_HOST'] if interface else [])
               + [f'{k}={shlex.quote(str(v))}' for k, v in env.items()]) if env else [])
    data_check = ('from helpers.data import find_data_dir; '
                  'print(\\"data:\\", find_data_dir(download=False))')
    check = []
    for h in hosts:
        host, port = _host_and_port(h)
        check.append(f"ssh {'-p ' + port + ' ' if port else ''}{host} 'cd {shlex.quote(repo)} && "
                     + ' '.join(prefix + [shlex.quote(python)]) + f' -c "{data_check}"\'')
    command = prefix + [shlex.quote(python), '-m', 'helpers.dist_train']
    launch = (f'cd {shlex.quote(repo)} && {shlex.quote(python)} helpers/dist.py launch --launcher ssh '
              f'-H {hostfile} -n {len(hosts)} -s {num_servers or len(hosts)} '
              + ' '.join(command + [shlex.quote(a) for a in script_args]))
    return {'hosts': '\n'.join(hosts), 'check': check, 'launch': launch}


if __name__ == '__main__':
    if len(sys.argv) >= 2 and sys.argv[1] == 'launch':
        _launcher_main(sys.argv[2:])
    elif len(sys.argv) == 2 and sys.argv[1] == 'node':
        _node_main()
    else:
        sys.exit(f'usage: python {sys.argv[0]} launch LAUNCHER-ARGS...  |  node')
