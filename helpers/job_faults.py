"""What went wrong in a running parameter-server job, seen from outside it (notebook 08; used by
``helpers.job.Job``, which ends the job on the first fault found and names it).

ps-lite has no failure detection: a process that stops answering leaves every other one waiting,
for ever. A process that *exits* is easy to see (the node shim records its exit status); three
faults kill nothing, and each is found here by what it leaves behind:

- :class:`Tracebacks` -- a process that raised: Python printed ``Traceback (most recent call
  last):`` and the exception's last line. It often does not exit: at exit, MXNet's dist store
  waits for the other workers (``KVStoreDist``'s destructor calls ``ps::Finalize`` with a barrier,
  src/kvstore/kvstore_dist.h), who wait for it. Its output says what happened; a process that then
  prints nothing and reports no step for :data:`RAISE_GRACE` seconds has stopped for good;
- :func:`stopped` -- a frozen process (SIGSTOP, a debugger): the kernel says so (state ``T`` or
  ``t`` in ``/proc/PID/stat``) at once, before the first step too;
- :func:`links_down` -- a cut link between the namespaces of a placement (``helpers.placement``):
  an interface that is down, or whose peer is (no carrier), read with ``ip link`` every
  :data:`LINK_EVERY` seconds.

What none of these explains (a process stuck inside, a network that drops packets) the job's stall
detector still catches once its workers have reported steps (``helpers.job.STALL_*``), or its
timeout. This module does not import ``mxnet``.
"""
from helpers import checks, netns

__all__ = ['Tracebacks', 'stopped', 'links_down', 'RAISE_GRACE', 'FROZEN_GRACE', 'LINK_EVERY', 'TRACEBACK']

TRACEBACK = 'Traceback (most recent call last):'
RAISE_GRACE = 3.0    # seconds a process that printed an uncaught exception has to exit or go on
FROZEN_GRACE = 1.0   # seconds a process may be seen stopped before the job ends (a debugger's step)
LINK_EVERY = 1.0     # seconds between two looks at a placement's links
# Lines that belong to a traceback although they are not indented: chained exceptions.
_CHAINED = ('During handling of the above exception', 'The above exception was the direct cause')


class Tracebacks:
    """The last uncaught exception of each process, read from its output line by line (notebook 08).

    :meth:`feed` takes every line a process prints; :meth:`raised` says whether a process's last
    words were a traceback, and :meth:`hung` whether it then stayed silent for :data:`RAISE_GRACE`
    seconds without exiting. The exception's *last line* is the first unindented line after the
    ``Traceback (most recent call last):`` header (``ValueError: ...``), or the last one of an
    MXNet error, whose message holds a traceback of its own (``mxnet.base.MXNetError: Traceback
    ...``, then C++ frames, then the message). A process that prints anything else afterwards, or
    reports a step (:meth:`went_on`), caught or logged the exception and goes on: not a fault."""

    def __init__(self):
        self._inside = {}        # name -> True while lines of a traceback arrive
        self._last = {}          # name -> {'line': the exception's last line, 'at': when, or None if it went on}

    def feed(self, name, text, now):
        """One line ``text`` printed by process ``name``, seen at ``now`` (``time.time()``)."""
        if text.startswith(TRACEBACK):
            self._inside[name], self._last[name] = True, {'line': None, 'at': None}
        elif self._inside.get(name):
            if text and not text[0].isspace() and not text.startswith(_CHAINED):
                self._last[name]['line'] = text
                if not text.endswith(TRACEBACK):        # an MXNet error's own traceback goes on
                    self._inside[name], self._last[name]['at'] = False, now
        elif text.strip() and not text.startswith(_CHAINED):
            self.went_on(name)

    def went_on(self, name, at=None):
        """Process ``name`` printed something else, or finished a step at ``at`` (``time.time()``) after
        its exception was seen: whatever it raised, it goes on. A step finished before is no news."""
        found = self._last.get(name)
        if found and not self._inside.get(name) and (at is None or found['at'] is None or at > found['at']):
            found['at'] = None

    def raised(self, name):
        """The last line of the exception that process ``name`` printed last, or None."""
        found = self._last.get(name)
        return found['line'] if found and found['at'] is not None else None

    def hung(self, name, now, grace=RAISE_GRACE):
        """Seconds since process ``name`` printed its exception, if that was ``grace`` seconds or more
        ago and nothing came after it; else None."""
        found = self._last.get(name)
        if found and found['at'] is not None and now - found['at'] >= grace:
            return now - found['at']
        return None


def stopped(pids):
    """The pids of ``pids`` whose process is stopped (SIGSTOP, SIGTSTP, or held by a debugger),
    alive but running no instruction (notebook 08). Pids already gone are left out."""
    import psutil
    found = []
    for pid in checks.pids(pids, 'pids'):
        try:
            if psutil.Process(pid).status() in (psutil.STATUS_STOPPED, psutil.STATUS_TRACING_STOP):
                found.append(pid)
        except psutil.Error:
            pass
    return found


def links_down(place, timeout=5.0):
    """The interfaces that are down in the network namespaces of a placement ``place``
    (``helpers.placement.two_hosts``: process name -> ``{'netns', 'host'}``), as
    ``[(namespace, interface, why, [the processes in that namespace])]`` (notebook 08); empty
    while every link is up. A namespace that is gone counts as ``(namespace, None, 'gone', ...)``;
    one whose ``ip`` call did not answer within ``timeout`` seconds is skipped (a busy machine)."""
    place, timeout = checks.placement(place), checks.seconds(timeout, 'timeout')
    behind = {}
    for name, where in sorted(place.items()):
        if where.get('netns'):
            behind.setdefault(where['netns'], []).append(name)
    found = []
    for ns, names in behind.items():
        if ns not in netns.namespaces():
            found.append((ns, None, 'gone', names))
            continue
        try:
            down = netns.links_down(ns, timeout)
        except netns.NetnsError:
            continue
        found += [(ns, dev, why, names) for dev, why in sorted(down.items())]
    return found
