"""Stopping processes for sure, in one place (notebooks 08, 09: the processes of distributed jobs and
of network namespaces; used by ``helpers.job``, ``helpers.launcher``, ``helpers.netns`` and the tests).

- :func:`alive` -- is a pid a running process (a zombie is not)?
- :func:`kill` -- SIGTERM, a grace period, then SIGKILL, for a list of pids; returns the survivors;
- :func:`kill_group` -- a process started in a session of its own (``start_new_session=True``),
  everything it started and any other pids given: :func:`kill` them all, then SIGKILL to its whole
  process group for anything started meanwhile, then reap it.

Standard library and psutil only: the node shim of a distributed job, which must not import MXNet,
uses it too.
"""
import os
import signal
import subprocess

from helpers import checks

__all__ = ['alive', 'kill', 'kill_group']


def alive(pid):
    """True while process ``pid`` runs; False once it exited, even if not reaped yet (notebook 08)."""
    import psutil
    pid = checks.whole(pid, 'pid', 1)      # psutil.Process(None) is this process
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def kill(pids, grace):
    """SIGTERM (and SIGCONT, for a stopped one) every process of ``pids``, wait up to ``grace`` seconds,
    then SIGKILL those left and wait again; return the pids still alive (notebooks 08, 09). Pids
    already gone are skipped."""
    import psutil
    pids, grace = checks.pids(pids, 'pids'), checks.number(grace, 'grace (seconds)', 0, checks.MAX_SECONDS)
    procs = []
    for pid in pids:
        try:
            procs.append(psutil.Process(pid))
        except psutil.Error:
            pass
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for p in procs:
            try:
                p.send_signal(sig)
                if sig == signal.SIGTERM:
                    p.send_signal(signal.SIGCONT)   # a stopped (frozen) process acts on SIGTERM only once continued
            except psutil.Error:
                pass
        _, procs = psutil.wait_procs(procs, timeout=grace)
        procs = [p for p in procs if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
        if not procs:
            break
    return [p.pid for p in procs]


def kill_group(proc, grace, also=()):
    """Stop ``proc`` (a ``subprocess.Popen`` that leads a session of its own), every process it
    started, and the pids in ``also``: :func:`kill` them, then SIGKILL its process group (anything
    started meanwhile), then reap ``proc``. Return the pids still alive (notebooks 08, 09)."""
    import psutil
    if not isinstance(proc, subprocess.Popen):
        raise TypeError(f'proc must be a subprocess.Popen, got {type(proc).__name__}')
    grace, also = checks.number(grace, 'grace (seconds)', 0, checks.MAX_SECONDS), checks.pids(also, 'also')
    pids = [proc.pid]
    try:
        pids += [p.pid for p in psutil.Process(proc.pid).children(recursive=True)]
    except psutil.Error:
        pass
    left = kill(sorted(set(pids) | set(also)), grace)
    group = _group(proc.pid)              # anything started meanwhile, orphans included
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        pass
    psutil.wait_procs(group, timeout=grace)    # SIGKILL is delivered, not done: wait until they are gone
    return [pid for pid in left + [p.pid for p in group] if alive(pid)]


def _group(pgid):
    """The live processes of process group ``pgid``."""
    import psutil
    found = []
    for p in psutil.process_iter():
        try:
            if os.getpgid(p.pid) == pgid and p.status() != psutil.STATUS_ZOMBIE:
                found.append(p)
        except (psutil.Error, ProcessLookupError, PermissionError):
            pass
    return found
