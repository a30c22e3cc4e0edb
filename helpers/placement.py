"""Where the processes of a job run: two "machines" made of network namespaces, and several jobs
side by side with their traffic measured (notebooks 08, 09).

- :func:`two_hosts` -- the scheduler and servers in one namespace, the workers in another, joined
  by one veth pair: a placement for ``helpers.job.Job(place=...)``;
- :func:`two_machines` -- the same, for the length of a ``with`` block, or ``None`` where this
  machine cannot make namespaces;
- :func:`run_side_by_side` -- several jobs at once, each on two hosts of its own, with the bytes
  its workers sent and received.
"""
import contextlib
import time

from helpers import checks, netns
from helpers.job import DistJobError, DistJobTimeout, Job

__all__ = ['two_hosts', 'two_machines', 'run_side_by_side']


def two_hosts(net, num_workers, num_servers=1):
    """Two "machines" for a job, in the network namespaces of ``net`` (a ``helpers.netns.Network``;
    notebook 08): the scheduler and the servers in one namespace, every worker in another, joined
    by one veth pair. Returns ``(place, link)``: ``place`` for :class:`Job`, and the
    ``helpers.netns.Link`` whose end ``link.dev_b`` in ``link.ns_b`` is the workers' side: its
    ``tx_bytes`` count what the workers sent, its ``rx_bytes`` what they received."""
    if not isinstance(net, netns.Network):
        raise TypeError(f'net must be a helpers.netns.Network, got {type(net).__name__}')
    num_workers, num_servers = checks.processes(num_workers, num_servers)
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
    checks.processes(num_workers, num_servers)
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
    checks.choice(failures, 'failures', ('raise', 'return'))
    timeout, isolate = checks.seconds(timeout, 'timeout'), checks.flag(isolate, 'isolate')
    checks.mapping(jobs, 'jobs')
    if not jobs:
        raise ValueError('jobs is empty: give {name: (command, num_workers)}')
    for name, job in jobs.items():
        if not isinstance(job, (tuple, list)) or len(job) != 2:
            raise TypeError(f'jobs[{name!r}] must be a pair (command, num_workers), got {job!r}')
        checks.strings(job[0], f'the command of jobs[{name!r}]')
        checks.processes(job[1], 1, f'the num_workers of jobs[{name!r}]')
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
        after = netns.counters(link.ns_b, link.dev_b)
        sent, received = after['tx_bytes'] - before['tx_bytes'], after['rx_bytes'] - before['rx_bytes']
    job.stop()
    return {'result': job.result(), 'sent': sent, 'received': received}
