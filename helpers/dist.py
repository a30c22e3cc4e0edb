"""Distributed jobs, the API notebooks 08 and 09 import: one name for what four modules do, each
with one job (``from helpers.dist import run_local_job, Job, ...`` keeps working).

- ``helpers.job``       -- a local parameter-server job, started, followed and stopped for sure:
  :func:`run_local_job`, :class:`Job`, :class:`JobResult`, :class:`DistJobError`,
  :class:`DistJobTimeout`, :class:`DistJobStalled`, :func:`job_processes` (the node shim each
  process runs: ``helpers.job_node``);
- ``helpers.launcher``  -- MXNet's ``launch.py`` with its one fix on Python >= 3.9:
  :func:`launcher_path`, :func:`try_launcher`;
- ``helpers.placement`` -- jobs across network namespaces: :func:`two_hosts`, :func:`two_machines`,
  :func:`run_side_by_side`;
- ``helpers.cluster``   -- command lines for real machines: :func:`ssh_commands`.

Notebook 08 derives them; none of them imports ``mxnet``.
"""
from helpers.cluster import ssh_commands
from helpers.job import (DistJobError, DistJobStalled, DistJobTimeout, Job, JobResult, job_processes,
                         run_local_job)
from helpers.launcher import LOOPBACK, launcher_path, try_launcher
from helpers.placement import run_side_by_side, two_hosts, two_machines

__all__ = ['run_local_job', 'Job', 'JobResult', 'DistJobError', 'DistJobTimeout', 'DistJobStalled',
           'job_processes', 'launcher_path', 'try_launcher', 'two_hosts', 'two_machines', 'run_side_by_side',
           'ssh_commands', 'LOOPBACK']
