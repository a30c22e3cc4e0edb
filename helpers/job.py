"""A local MXNet parameter-server job (scheduler + servers + workers), started, followed and stopped
for sure -- notebook 08. :func:`run_local_job` is the loop:

    job = Job(command, num_workers, num_servers, timeout)   # start: MXNet's launcher, every process
    while not job.poll(): ...                               # a dead process raises, naming it
    job.stop()                                              # always: success, error, timeout, Ctrl-C

What it guarantees:

- every process's output is streamed, each line prefixed with the process's role and index
  (``[worker 1] ...``, ``[server 0] ...``, ``[scheduler] ...``; ``[launcher] ...`` for the launcher);
- a process that dies (non-zero exit, a signal) ends the job at once with :class:`DistJobError`
  naming it and its last words (the exception's last line): without this, the survivors of a
  parameter-server job wait for the dead one forever;
- so does a fault that kills nothing (``helpers.job_faults``), at any point of the job, before the
  first step too: a process that raised but does not exit (within seconds), a frozen process (at
  once), a cut link between the namespaces of a placement (within a second or two); and, once the
  workers report steps, a job that stopped moving for no reason seen (:class:`DistJobStalled`);
- the job has a wall-clock ``timeout``: past it, :class:`DistJobTimeout` names what was still running;
- however the call ends (success, error, timeout, ``KeyboardInterrupt``), every process it started
  is stopped (``helpers.procs.kill_group``): the launcher runs in a process group of its own, the
  whole group is killed, and so is every process recorded in the job directory.

How it works. MXNet's launcher (``python -m helpers.launcher``, i.e. ``mxnet/tools/launch.py`` with
its one fix) starts the node shim ``python -m helpers.job_node`` once per process; the shim runs the
real command, prefixes its output and records its pid and exit status in the job directory, which
:meth:`Job.poll` reads. A *placement* (``place=``, ``helpers.placement``) runs each process in a
network namespace of its own, at an address of its own. This module does not import ``mxnet``.
"""
import json
import os
import queue
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

from helpers import checks, job_faults, procs
from helpers.job_node import DEADLINE_ENV, JOBDIR_ENV, _status_file, _write_json
from helpers.launcher import ROOT_URI_ENV

__all__ = ['run_local_job', 'Job', 'JobResult', 'DistJobError', 'DistJobTimeout', 'DistJobStalled',
           'job_processes', 'loopback_address', 'STALL_FACTOR', 'STALL_FLOOR', 'STALL_CEILING']

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def loopback_address(rng=None):
    """A random address of the loopback network 127.0.0.0/8 other than 127.0.0.1 (notebooks 08, 12):
    every such address reaches this machine through the loopback interface, with no set-up.

    WHY every job gets one of its own: ps-lite's nodes do not authenticate each other, and MXNet's
    launcher picks the first free port from 9091 on. Two jobs on 127.0.0.1 at once (two test suites,
    a benchmark beside a notebook) can end up with one scheduler: a job whose scheduler lost the race
    for a port sends its workers and servers to the scheduler that won it, another job's. On an
    address of its own, only the job's processes connect, and a port is only ever contested within
    the job."""
    import random
    if rng is not None and not callable(getattr(rng, 'randint', None)):
        raise TypeError(f'rng must be None or a random.Random (with randint), got {type(rng).__name__}')
    rng = rng or random.SystemRandom()
    return f'127.{rng.randint(16, 254)}.{rng.randint(1, 254)}.{rng.randint(1, 254)}'


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


class DistJobStalled(DistJobError):
    """No worker of a distributed job finished a step for much longer than its steps take, and no
    process is frozen and no link is down (``helpers.job_faults`` looks first): a process stuck inside,
    a network that drops packets (ps-lite has no failure detection); every process was stopped
    (notebook 08)."""


# A job stalls when no worker reports a finished step for STALL_FACTOR times the slowest worker's
# median step time (its own measured steps, helpers.job_node.progress), but never less than
# STALL_FLOOR seconds (a step that waits for the machine) nor more than STALL_CEILING (so that a stall
# is reported within a minute). Jobs whose workers report no steps are bounded by their timeout only.
STALL_FACTOR, STALL_FLOOR, STALL_CEILING = 20, 5.0, 45.0


class JobResult:
    """What :func:`run_local_job` returns for a job whose processes all exited with status 0
    (notebook 08)."""

    def __init__(self, lines, nodes, wall_time, port, launcher_cmd, launcher_pid, jobdir, host=None):
        self.host = host                  # the loopback address the job's processes bound (no placement)
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


def job_processes(jobdir):
    """Live processes (zombies excluded) started for the job whose directory is ``jobdir``: the
    launcher and every scheduler, server and worker carry it in their environment (notebook 08).
    After :func:`run_local_job` returns or raises, this is empty (notebook 08 and the tests check it)."""
    import psutil
    jobdir = checks.path(jobdir, 'jobdir')
    found = []
    for p in psutil.process_iter():
        try:
            if p.environ().get(JOBDIR_ENV) == jobdir and p.status() != psutil.STATUS_ZOMBIE:
                found.append(p)
        except psutil.Error:
            pass
    return found


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
        command = checks.strings(command, 'command')
        num_workers = checks.whole(num_workers, 'num_workers', 1, checks.MAX_PROCESSES)
        num_servers = checks.whole(num_servers, 'num_servers', 1, checks.MAX_PROCESSES)
        timeout = checks.seconds(timeout, 'timeout (seconds)')
        env = None if env is None else checks.mapping(env, 'env')
        place = None if place is None else checks.placement(place)
        cwd = None if cwd is None else checks.path(cwd, 'cwd')
        checks.program(command, {str(k): str(v) for k, v in (env or {}).items()}, cwd or _ROOT)
        self.expected = (['scheduler'] + [f'server {i}' for i in range(num_servers)]
                         + [f'worker {i}' for i in range(num_workers)])
        self.timeout, self.lines, self.nodes = float(timeout), [], {}
        self.heard, self.steps = {}, {}     # last line of each process; each worker's (step, time) reports
        self.finished_training = set()      # workers past their last step (evaluating, writing results)
        self.ranks = {}                     # worker name -> its rank in the job, once it said (job_node.progress)
        self.tracebacks = job_faults.Tracebacks()    # what each process raised (its output, read as it comes)
        self.place, self._stopped_since, self._links_seen = place, {}, 0.0
        self._say = print if echo is True else (lambda line: None) if not echo else echo
        self._out, self._launcher_done_at, self._stopped = queue.Queue(), None, False
        self.host = loopback_address()      # the job's own loopback address (where no placement says)
        self.jobdir = tempfile.mkdtemp(prefix='mxdp-dist-')
        try:
            _write_json(os.path.join(self.jobdir, 'command.json'), list(command))
            if place:
                _write_json(os.path.join(self.jobdir, 'place.json'), dict(place))
            self.launcher_cmd = ([sys.executable, '-m', 'helpers.launcher', '--launcher', 'local',
                                  '-n', str(num_workers), '-s', str(num_servers)]
                                 + [shlex.quote(c) for c in (sys.executable, '-m', 'helpers.job_node')])
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
            'DMLC_NODE_HOST': self.host,    # every ps-lite node binds and announces the job's address
            'OMP_NUM_THREADS': env.get('OMP_NUM_THREADS', '1'),  # the processes share the cores
        })
        for key in ('DMLC_ROLE', 'DMLC_PS_ROOT_URI', 'DMLC_PS_ROOT_PORT', ROOT_URI_ENV):
            env.pop(key, None)  # set by the launcher, per process
        env[ROOT_URI_ENV] = ((place or {}).get('scheduler') or {}).get('host') or self.host
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
            self.heard[who] = (time.monotonic(), text)
            self.tracebacks.feed(who, text, time.time())
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
                if i['exit'] is None and procs.alive(i['pid'])]

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
                time.sleep(0.2)                             # its last lines
                self._drain()
                self.fail(DistJobError, f'{self.who(n)} died ({_describe_exit(info["exit"])})'
                                        + self._last_words(n) + '; the job was stopped' + self._bind_hint(n, info))
        for n, info in self.nodes.items():
            if info['exit'] is None and not procs.alive(info['shim_pid']):
                self.nodes = _read_nodes(self.jobdir)       # it may have written its status just now
                if self.nodes[n]['exit'] is None:
                    self.fail(DistJobError, f'{self.who(n)} is gone: it vanished without an exit status '
                                            '(its node shim was killed); the job was stopped')
                return False
        if all(n in self.nodes and self.nodes[n]['exit'] == 0 for n in self.expected):
            self.wall_time = self.seconds()
            return True
        self._check_launcher()
        self._check_progress()      # reads the workers' steps first: a step after an exception is going on
        self._check_faults()
        self._check_stall()
        return False

    def who(self, name):
        """``'worker 1 (rank 0, pid 123)'``: a process of the job by its role and index (the launcher's),
        its rank in the job where it reported one, and its pid."""
        info = self.nodes.get(name) or {}
        rank = f'rank {self.ranks[name]}, ' if name in self.ranks else ''
        return f'{name} ({rank}pid {info["pid"]})' if info.get('pid') else name

    def _last_words(self, name):
        """``': ValueError: ...'``: the last line of the exception ``name`` raised, or what it printed last."""
        line = self.tracebacks.raised(name)
        if line is None:
            line = next((text for who, text in reversed(self.lines) if who == name and text.strip()), None)
        return f': {line.strip()[:300]}' if line else ''

    def _check_faults(self):
        """End the job on a fault that killed nothing (``helpers.job_faults``): a process that raised
        and did not exit, a frozen process, a cut link."""
        now = time.monotonic()
        for n, info in sorted(self.nodes.items()):
            if info['exit'] is None and self.tracebacks.hung(n, time.time()) is not None:
                self.fail(DistJobError, f'{self.who(n)} raised {self.tracebacks.raised(n)!r} and did not exit '
                          f'within {job_faults.RAISE_GRACE:g} s (at exit, MXNet\'s dist store waits for the other '
                          'processes, which wait for it); the job was stopped')
        pids = {pid: n for n, info in self.nodes.items() if info['exit'] is None
                for pid in (info.get('pid'), info.get('shim_pid')) if pid}
        frozen = {pids[pid] for pid in job_faults.stopped(sorted(pids))}
        self._stopped_since = {n: self._stopped_since.get(n, now) for n in frozen}
        for n, since in sorted(self._stopped_since.items()):
            if now - since >= job_faults.FROZEN_GRACE:
                self.fail(DistJobError, f'{self.who(n)} is frozen: stopped (SIGSTOP or a debugger), still '
                          f'alive, for {now - since:.0f} s or more; every other process waits for it (ps-lite '
                          'never notices); the job was stopped')
        if self.place and now - self._links_seen >= job_faults.LINK_EVERY:
            self._links_seen = now
            down = job_faults.links_down(self.place)
            if down:
                self.fail(DistJobError, 'a link of the job is down: ' + '; '.join(
                    f'{dev} in namespace {ns} is {why} (the side of {", ".join(names)})' if dev else
                    f'namespace {ns} (of {", ".join(names)}) is gone' for ns, dev, why, names in down)
                    + '; the job was stopped')

    def stall_limit(self):
        """Seconds without a finished step after which the job counts as stalled (``STALL_*``
        above), or None while no worker has reported two steps (nothing measured yet)."""
        medians = []
        for reports in self.steps.values():
            times = [t for _, t in reports[-21:]]
            gaps = sorted(b - a for a, b in zip(times, times[1:]))
            if gaps:
                medians.append(gaps[len(gaps) // 2])
        if not medians:
            return None
        return min(max(STALL_FACTOR * max(medians), STALL_FLOOR), STALL_CEILING)

    def _check_progress(self):
        for name in self.expected:
            if not name.startswith('worker'):
                continue
            try:
                with open(_status_file(self.jobdir, name, 'progress')) as f:
                    report = json.load(f)
            except (OSError, ValueError):        # none yet, or being replaced right now
                continue
            if report.get('rank') is not None:
                self.ranks[name] = report['rank']
            if report['final']:
                self.finished_training.add(name)
            if report['step'] == 0:                 # joined, no step yet
                continue
            reports = self.steps.setdefault(name, [])
            if not reports or report['step'] != reports[-1][0]:
                reports.append((report['step'], report['time']))
                self.tracebacks.went_on(name, report['time'])    # a step after an exception: it was caught

    def _check_stall(self):
        active = [n for n in self.steps if self.nodes.get(n, {}).get('exit') is None
                  and n not in self.finished_training]
        limit = self.stall_limit()
        if not active or limit is None or any(self.tracebacks.raised(n) for n in self.nodes):
            return                                  # an exception printed: _check_faults names it shortly
        now = time.time()
        quiet = now - max(self.steps[n][-1][1] for n in active)
        if quiet > limit:
            self.fail(DistJobStalled, self.stall_report(active, quiet, limit, now))

    def stall_report(self, active, quiet, limit, now):
        """What the error of a stalled job says: who stopped, and what was last heard from each."""
        steps = '; '.join(f'{n} finished step {self.steps[n][-1][0]} {now - self.steps[n][-1][1]:.0f} s ago'
                          for n in active)
        clock = time.monotonic()
        heard = '; '.join(f'{n}: {self.heard[n][1][:120]!r} ({clock - self.heard[n][0]:.0f} s ago)'
                          if n in self.heard else f'{n}: nothing printed' for n in self.expected)
        return (f'the job made no progress for {quiet:.0f} s (limit {limit:.1f} s: {STALL_FACTOR} times the '
                f'slowest worker\'s median step, at least {STALL_FLOOR:g} s) and was stopped: {steps}. '
                f'Last heard: {heard}. No process is frozen, none raised, '
                + ('every link is up' if self.place else 'the job runs on loopback')
                + ': a process stuck inside, or a network that drops packets (ps-lite itself never notices)')

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
            left = procs.kill_group(self.proc, grace, also=[
                info[key] for info in self.nodes.values() for key in ('pid', 'shim_pid') if info.get(key)])
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
                         self.launcher_cmd, self.proc.pid, self.jobdir, self.host)

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
