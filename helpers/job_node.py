"""One process of a local parameter-server job: the *node shim* (notebook 08; started by MXNet's
launcher for ``helpers.job.Job``, as ``python -m helpers.job_node``).

MXNet's launcher starts the same command once per process, with ``DMLC_ROLE`` (scheduler, server,
worker) and ``DMLC_TASK_ID`` in its environment. That command is this shim. It reads the real
command from the job directory (``$MXDP_DIST_JOBDIR``), runs it (in its network namespace, at its
address, if the job has a placement), prefixes every line it prints with the process's name
(``[worker 1] ...``), and records its pid and its exit status in the job directory, which is what
``helpers.job.Job.poll`` reads. A watchdog kills the command 30 s past the job's deadline, even if
whoever started the job is gone. A worker's training loop reports each finished step with
:func:`progress`, so that the runner can tell a job that stopped moving (a cut link, a frozen
server) from a slow one. Standard library only: importing ``mxnet`` here would turn the
shim itself into a server.
"""
import json
import os
import subprocess
import sys
import threading
import time

from helpers import checks      # standard library only, like this module

__all__ = ['progress', 'run_script']

JOBDIR_ENV = 'MXDP_DIST_JOBDIR'
DEADLINE_ENV = 'MXDP_DIST_DEADLINE'


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


def progress(step, final=False, rank=None):
    """Tell the job runner that this worker finished training step ``step`` (``final=True`` after its
    last one): ``helpers.job.Job`` stops a job in which no worker makes progress for much longer than
    its steps take (notebook 08; ``helpers.dist_train`` calls it after every step). ``step=0``: it
    joined the job and has no step yet; ``rank``: its rank in the job (``kv.rank``, which the
    scheduler hands out, in no fixed relation to the launcher's ``worker 1``), so that an error can
    name it. Outside a job of ``helpers.job`` it does nothing."""
    step, final = checks.whole(step, 'step'), checks.flag(final, 'final')
    rank = None if rank is None else checks.whole(rank, 'rank', 0, checks.MAX_PROCESSES)
    jobdir = os.environ.get(JOBDIR_ENV)
    if jobdir and os.path.isdir(jobdir):
        _write_json(_status_file(jobdir, _node_name(os.environ), 'progress'),
                    {'step': int(step), 'time': time.time(), 'final': bool(final),
                     'rank': None if rank is None else int(rank)})


def run_script(main):
    """Run ``main()``, a worker script's entry point, and exit: status 0 if it returned a true value,
    1 if not; on an exception, print its traceback and exit at once with status 1 (notebooks 08, 12:
    ``python -m helpers.dist_train`` and ``python -m helpers.checkpoint`` end this way).

    WHY at once (``os._exit``): a worker of a parameter-server job that lets Python exit normally
    runs MXNet's clean-up, in which the dist store waits for every other worker at a barrier
    (``ps::Finalize``, called by ``KVStoreDist``'s destructor, src/kvstore/kvstore_dist.h); the others
    wait for the one that failed, and the job hangs with the traceback on screen. A worker that
    succeeded exits normally, so that the job ends as ps-lite expects."""
    import traceback
    main = checks.function(main, 'main')
    try:
        code = 0 if main() else 1
    except SystemExit as e:                 # argparse's error, or the script's own SystemExit(message)
        if e.code is None or isinstance(e.code, int):
            code = e.code or 0
        else:
            print(e.code, file=sys.stderr)
            code = 1
    except BaseException:                   # KeyboardInterrupt too: the same hang otherwise
        traceback.print_exc()
        code = 1
    if code == 0:
        sys.exit(0)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


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


if __name__ == '__main__':
    _node_main()
