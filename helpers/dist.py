"""Launch a local MXNet parameter-server job (scheduler + servers + workers) -- notebook 08.

:func:`run_local_job` starts a job with MXNet's own launcher, ``mxnet/tools/launch.py --launcher
local``, on this machine's loopback interface, and babysits it:

- every process's output is streamed, each line prefixed with the process's role and index
  (``[worker 1] ...``, ``[server 0] ...``, ``[scheduler] ...``; ``[launcher] ...`` for the launcher);
- a process that dies (non-zero exit, a signal) ends the job at once with :class:`DistJobError`
  naming it: without this, the survivors of a parameter-server job wait for the dead one forever;
- the job has a wall-clock ``timeout``: past it, :class:`DistJobTimeout` names what was still running;
- however the call ends (success, error, timeout, ``KeyboardInterrupt``), every process it started
  is stopped: the launcher runs in a process group of its own and the whole group is killed.

How it works. The launcher starts the same command once per process, with ``DMLC_ROLE`` (scheduler,
server, worker) and ``DMLC_TASK_ID`` in its environment. Here that command is a tiny *node shim*
(``python helpers/dist.py node``, standard library only: it must not import ``mxnet``, which would
turn it into a server). The shim runs the real command (read from the job directory), prefixes
its output lines, and records its pid and exit status in the job directory, which is what
:func:`run_local_job` watches.

The one compatibility fix for MXNet 1.9.1 on Python >= 3.9 lives in :func:`_launcher_main`.
This module deliberately does not import ``mxnet``.
"""
import os
import sys

if __name__ == '__main__' and sys.path and os.path.abspath(sys.path[0]) == os.path.dirname(
        os.path.abspath(__file__)):
    sys.path.pop(0)  # run as a script: helpers/ itself must not shadow standard modules

import json
import queue
import shlex
import signal
import subprocess
import tempfile
import threading
import time
import shutil

__all__ = ['run_local_job', 'JobResult', 'DistJobError', 'DistJobTimeout', 'job_processes',
           'launcher_path', 'LOOPBACK']

LOOPBACK = '127.0.0.1'
JOBDIR_ENV = 'MXDP_DIST_JOBDIR'
DEADLINE_ENV = 'MXDP_DIST_DEADLINE'
_HERE = os.path.abspath(__file__)
_ROOT = os.path.dirname(os.path.dirname(_HERE))


class DistJobError(RuntimeError):
    """A distributed job failed. ``nodes`` maps each process name to its status dict (``pid``,
    ``exit``), ``lines`` holds the output seen so far, ``still_running`` the processes that were
    alive when it was stopped."""

    def __init__(self, message, nodes=None, lines=None, still_running=(), jobdir=None):
        super().__init__(message)
        self.nodes = nodes or {}
        self.lines = lines or []
        self.still_running = list(still_running)
        self.jobdir = jobdir


class DistJobTimeout(DistJobError, TimeoutError):
    """A distributed job ran past its timeout (every process was stopped)."""


class JobResult:
    """What :func:`run_local_job` returns for a job whose processes all exited with status 0."""

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
    """Path of MXNet's launcher, ``mxnet/tools/launch.py``, found without importing ``mxnet``."""
    import importlib.util
    spec = importlib.util.find_spec('mxnet')
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError('mxnet is not installed in this environment (see README, set-up)')
    return os.path.join(list(spec.submodule_search_locations)[0], 'tools', 'launch.py')


# --------------------------------------------------------------------------- the launcher, fixed
def _launcher_main(argv):
    """Run MXNet's ``tools/launch.py`` with ``argv``, after the one compatibility fix it needs.

    WHY: MXNet 1.9.1 bundles a dmlc_tracker that calls ``threading.Thread.isAlive()``, which
    Python 3.9 removed (it is ``is_alive()`` since Python 2.6), so ``python -m mxnet.tools.launch``
    crashes on Python >= 3.9 as soon as the job starts. We restore the old name here, in this
    process only, instead of patching site-packages.

    Also, in ``--launcher local`` mode the tracker announces the machine's first non-loopback
    address to the processes; a local job has no reason to leave the machine, so the scheduler's
    address is pinned to ``127.0.0.1`` (``LOOPBACK``).
    """
    if not hasattr(threading.Thread, 'isAlive'):
        threading.Thread.isAlive = threading.Thread.is_alive
    if 'local' in argv:
        from dmlc_tracker import tracker
        tracker.get_host_ip = lambda host_ip=None: LOOPBACK
    import runpy
    path = launcher_path()
    sys.argv = [path] + list(argv)
    runpy.run_path(path, run_name='__main__')


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
    """One process of the job: run the real command, prefix its output, record pid and exit."""
    jobdir = os.environ[JOBDIR_ENV]
    name = _node_name(os.environ)
    with open(os.path.join(jobdir, 'command.json')) as f:
        command = json.load(f)
    try:
        child, error = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                        stdin=subprocess.DEVNULL), None
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


# --------------------------------------------------------------------------- the job
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
    """Live processes (zombies excluded) started for the job whose directory is ``jobdir``:
    the launcher and every scheduler, server and worker carry it in their environment. After
    :func:`run_local_job` returns or raises, this is empty (notebook 08 and the tests check it)."""
    import psutil
    found = []
    for p in psutil.process_iter():
        try:
            if p.environ().get(JOBDIR_ENV) == jobdir and p.status() != psutil.STATUS_ZOMBIE:
                found.append(p)
        except psutil.Error:
            pass
    return found


def _expected_names(num_workers, num_servers):
    return (['scheduler'] + [f'server {i}' for i in range(num_servers)]
            + [f'worker {i}' for i in range(num_workers)])


def _stop_all(proc, nodes, grace):
    """Stop the launcher, its process group and every recorded process; wait until all are gone."""
    import psutil
    procs = []
    try:
        launcher = psutil.Process(proc.pid)
        procs += [launcher] + launcher.children(recursive=True)
    except psutil.Error:
        pass
    for info in nodes.values():
        for key in ('pid', 'shim_pid'):
            try:
                procs.append(psutil.Process(info[key]))
            except (psutil.Error, KeyError, TypeError):
                pass
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)  # the launcher leads its own group (start_new_session)
        except (ProcessLookupError, PermissionError):
            pass
        for p in procs:
            try:
                p.send_signal(sig)
            except psutil.Error:
                pass
        _, procs = psutil.wait_procs(procs, timeout=grace)
        procs = [p for p in procs if _alive(p.pid)]
        if not procs:
            break
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        pass
    return [p.pid for p in procs if _alive(p.pid)]


def _running(nodes):
    return [f'{n} (pid {i["pid"]})' for n, i in sorted(nodes.items())
            if i['exit'] is None and _alive(i['pid'])]


def run_local_job(command, num_workers=2, num_servers=1, timeout=120, env=None, echo=True,
                  cwd=None, grace=3.0, poll=0.1):
    """Run ``command`` as a local parameter-server job with MXNet's launcher; return a :class:`JobResult`.

    ``command`` (a list of strings) is what every process runs, e.g.
    ``[sys.executable, '-m', 'helpers.dist_train', '--kvstore', 'dist_sync']``; the launcher adds
    ``DMLC_ROLE`` and friends to its environment. ``num_workers`` workers and ``num_servers``
    servers are started, plus one scheduler, all on ``127.0.0.1``. ``env`` adds environment
    variables for every process. ``echo`` is True (print each prefixed line), False, or a
    function called with each line.

    Raises :class:`DistJobError` as soon as any process fails (naming it), :class:`DistJobTimeout`
    after ``timeout`` seconds (naming those still running). Whatever happens, every process it
    started is stopped before it returns or raises. Derived in notebook 08.
    """
    if isinstance(command, str) or not command or not all(isinstance(c, str) for c in command):
        raise TypeError(f'command must be a non-empty list of strings, got {command!r}')
    for value, what, low in ((num_workers, 'num_workers', 1), (num_servers, 'num_servers', 1)):
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise ValueError(f'{what} must be a whole number >= {low}, got {value!r}')
    if not isinstance(timeout, (int, float)) or isinstance(timeout, bool) or timeout <= 0:
        raise ValueError(f'timeout must be a positive number of seconds, got {timeout!r}')
    say = (print if echo is True else (lambda line: None) if not echo else echo)

    jobdir = tempfile.mkdtemp(prefix='mxdp-dist-')
    _write_json(os.path.join(jobdir, 'command.json'), list(command))
    start = time.monotonic()
    job_env = dict(os.environ)
    job_env.update({
        JOBDIR_ENV: jobdir,
        DEADLINE_ENV: str(time.time() + timeout),
        'PYTHONUNBUFFERED': '1',
        'PYTHONPATH': os.pathsep.join(p for p in (_ROOT, os.environ.get('PYTHONPATH')) if p),
        'DMLC_NODE_HOST': LOOPBACK,     # every ps-lite node binds and announces loopback
        'OMP_NUM_THREADS': job_env.get('OMP_NUM_THREADS', '1'),  # several processes share the cores
    })
    for key in ('DMLC_ROLE', 'DMLC_PS_ROOT_URI', 'DMLC_PS_ROOT_PORT'):
        job_env.pop(key, None)  # set by the launcher, per process
    job_env.update({str(k): str(v) for k, v in (env or {}).items()})
    node_cmd = [sys.executable, _HERE, 'node']  # no '-' options: the launcher re-parses its command
    launcher_cmd = ([sys.executable, _HERE, 'launch', '--launcher', 'local',
                     '-n', str(num_workers), '-s', str(num_servers)]
                    + [shlex.quote(c) for c in node_cmd])
    lines, nodes, out = [], {}, queue.Queue()
    try:
        proc = subprocess.Popen(launcher_cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, env=job_env, cwd=cwd or _ROOT,
                                start_new_session=True)  # its own process group: killed as one
    except BaseException:
        shutil.rmtree(jobdir, ignore_errors=True)
        raise

    def read():
        for raw in proc.stdout:
            out.put(raw.decode(errors='replace').rstrip('\n'))
        out.put(None)

    def drain():
        while True:
            try:
                line = out.get_nowait()
            except queue.Empty:
                return
            if line is None:
                continue
            if line.startswith('[') and '] ' in line:
                who, text = line[1:].split('] ', 1)
            else:
                who, text = 'launcher', line
                line = f'[launcher] {line}'
            lines.append((who, text))
            say(line)

    expected = _expected_names(num_workers, num_servers)

    def fail(cls, message):
        still = _running(nodes)
        raise cls(message + ('; still running: ' + ', '.join(still) if still else ''),
                  nodes=nodes, lines=lines, still_running=still, jobdir=jobdir)

    launcher_done_at = None
    reader = threading.Thread(target=read, daemon=True)
    try:
        reader.start()
        while True:
            drain()
            nodes = _read_nodes(jobdir)
            failed = [n for n in expected if n in nodes and nodes[n]['exit'] not in (None, 0)]
            if failed:
                time.sleep(poll)  # let the dead process's last lines arrive
                drain()
                n = failed[0]
                fail(DistJobError, f'{n} (pid {nodes[n]["pid"]}) died: '
                                   f'{_describe_exit(nodes[n]["exit"])}; the job was stopped')
            vanished = [n for n, i in nodes.items() if i['exit'] is None and not _alive(i['shim_pid'])]
            if vanished:
                nodes = _read_nodes(jobdir)  # it may have written its exit status just now
                vanished = [n for n in vanished if nodes[n]['exit'] is None]
                if vanished:
                    n = vanished[0]
                    fail(DistJobError, f'{n} (pid {nodes[n]["pid"]}) vanished without an exit '
                                       'status; the job was stopped')
                continue
            if all(n in nodes and nodes[n]['exit'] == 0 for n in expected):
                break
            code = proc.poll()
            if code is not None:
                if code != 0:
                    time.sleep(poll)
                    drain()
                    fail(DistJobError, f'the launcher exited with status {code} '
                                       f'(last output: {lines[-1][1] if lines else "none"!r})')
                launcher_done_at = launcher_done_at or time.monotonic()
                if time.monotonic() - launcher_done_at > 10:
                    missing = [n for n in expected if n not in nodes]
                    fail(DistJobError, 'the launcher finished but ' + (
                        f'{", ".join(missing)} never started' if missing else 'processes did not exit'))
            if time.monotonic() - start > timeout:
                not_started = [n for n in expected if n not in nodes]
                fail(DistJobTimeout, f'the job exceeded its timeout of {timeout:g} s and was stopped'
                     + (f'; never started: {", ".join(not_started)}' if not_started else ''))
            time.sleep(poll)
        wall = time.monotonic() - start
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
    finally:
        left = _stop_all(proc, nodes, grace)
        if reader.is_alive():
            reader.join(timeout=grace)
        drain()
        shutil.rmtree(jobdir, ignore_errors=True)
        if left:
            raise DistJobError(f'could not stop processes {left}', nodes=nodes, lines=lines)
    port = next((i.get('port') for i in nodes.values() if i.get('port')), None)
    return JobResult(lines, nodes, wall, int(port) if port else None, launcher_cmd, proc.pid,
                     jobdir)


if __name__ == '__main__':
    if len(sys.argv) >= 2 and sys.argv[1] == 'launch':
        _launcher_main(sys.argv[2:])
    elif len(sys.argv) == 2 and sys.argv[1] == 'node':
        _node_main()
    else:
        sys.exit(f'usage: python {sys.argv[0]} launch LAUNCHER-ARGS...  |  node')
