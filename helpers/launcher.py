"""MXNet's own launcher (``mxnet/tools/launch.py``), with the one fix it needs on Python >= 3.9
(notebook 08): the compatibility fix lives in :func:`_patch_launcher`, nowhere else.

    python -m helpers.launcher --launcher local -n 2 -s 1 COMMAND...   # launch.py's own arguments

runs ``launch.py`` unchanged, in this process, after the fix. :func:`try_launcher` runs it (fixed
or as shipped) in a process of its own and waits, bounded; ``helpers.job`` starts every local job
with it, and ``helpers.cluster`` writes the command line for a cluster. This module does not import
``mxnet`` (it would turn the process into a server).
"""
import os
import subprocess
import sys
import threading

from helpers import checks, procs

__all__ = ['launcher_path', 'try_launcher', 'LOOPBACK', 'ROOT_URI_ENV']

LOOPBACK = '127.0.0.1'
ROOT_URI_ENV = 'MXDP_DIST_ROOT_URI'     # the scheduler's address in a placement (helpers.placement)


def launcher_path():
    """Path of MXNet's launcher, ``mxnet/tools/launch.py``, found without importing ``mxnet``
    (notebook 08)."""
    import importlib.util
    spec = importlib.util.find_spec('mxnet')
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError('mxnet is not installed in this environment (see README, set-up)')
    return os.path.join(list(spec.submodule_search_locations)[0], 'tools', 'launch.py')


# WHY the launcher needs a patch. MXNet 1.9.1 bundles a dmlc_tracker whose ``PSTracker.join`` and
# ``alive`` call ``threading.Thread.isAlive()`` (dmlc_tracker/tracker.py), which Python 3.9 removed
# (it has been ``is_alive()`` since Python 2.6). So ``python -m mxnet.tools.launch`` crashes on every
# Python this series supports (3.9-3.12) as soon as the job starts. We restore the old name in the
# launcher's process only, instead of patching site-packages. Also, in ``--launcher local`` mode the
# tracker announces as the scheduler's address the one the host name resolves to, or, if that is a
# loopback address, the address of the interface holding the default route (``get_host_ip``,
# dmlc_tracker/tracker.py); a local job has no reason to leave the machine, so that address is
# pinned to ``127.0.0.1`` (or to ``$MXDP_DIST_ROOT_URI``, the scheduler's address in a placement or
# the job's own loopback address). With ``$MXDP_DIST_ROOT_URI`` set, any launcher (ssh too) pins the
# scheduler there: dmlc_tracker's ``--host-ip``, which MXNet's launch.py does not pass on.
# Last, the tracker starts every process from a thread of its own, which raises when its process
# fails (``subprocess.check_call`` in tracker.py and ssh.py, a RuntimeError that holds the whole
# environment in local.py): Python printed each as a traceback into the job's output, beside the
# error of whoever watches the job. It is one line now (:func:`_one_line`).
def _patch_launcher(argv):
    """The fixes MXNet 1.9.1's launcher needs, applied in the launcher's process (notebook 08)."""
    if not hasattr(threading.Thread, 'isAlive'):       # gone in Python 3.9; dmlc_tracker calls it
        threading.Thread.isAlive = threading.Thread.is_alive
    threading.excepthook = _one_line
    root = os.environ.get(ROOT_URI_ENV) or (LOOPBACK if _launcher_kind(argv) == 'local' else None)
    if root:                                           # a local job: the scheduler at 127.0.0.1
        from dmlc_tracker import tracker
        tracker.get_host_ip = lambda host_ip=None: root


def _one_line(args):
    """``threading.excepthook`` of the launcher: a thread of the tracker whose process failed says so in
    one line, with the exit status, instead of a traceback (notebook 08)."""
    import re
    import subprocess
    error = args.exc_value
    if isinstance(error, subprocess.CalledProcessError):
        what = f'exited with status {error.returncode}'
    else:
        code = re.search(r'return code=(-?\d+)', str(error))
        what = f'exited with status {code.group(1)}' if code else f'failed: {type(error).__name__}: {str(error)[:200]}'
    print(f'launcher: a process it started {what}', file=sys.stderr, flush=True)


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
    args, timeout = checks.strings(args, 'args', empty=True), checks.seconds(timeout, 'timeout')
    patched = checks.flag(patched, 'patched')
    command = ([sys.executable, '-m', 'helpers.launcher'] if patched else [sys.executable, launcher_path()])
    proc = subprocess.Popen(command + list(args), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL, text=True, start_new_session=True)
    try:
        _, err = proc.communicate(timeout=timeout)
    finally:
        procs.kill_group(proc, grace=2.0)           # the launcher and everything it started
    lines = err.strip().splitlines()
    return proc.returncode, lines[-1] if lines else ''


if __name__ == '__main__':
    _launcher_main(sys.argv[1:])
