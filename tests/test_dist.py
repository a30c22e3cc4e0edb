"""helpers.dist: a real parameter-server job on localhost, and what happens when things go wrong.

Each test starts scheduler + server + 2 workers with MXNet's launcher (local mode) on 127.0.0.1,
keeps the job tiny, and checks that afterwards no process of the job is left (psutil).
"""
import os
import signal
import socket
import sys
import threading
import time

import psutil
import pytest

from helpers import dist

TRAIN = [sys.executable, '-m', 'helpers.dist_train']
SMALL = TRAIN + ['--kvstore', 'dist_sync', '--epochs', '1', '--n-train', '800', '--n-test', '500',
                 '--batch-size', '50']
# A job that would run for minutes: every step sleeps.
LONG = TRAIN + ['--kvstore', 'dist_sync', '--epochs', '100', '--n-train', '1000', '--n-test', '500',
                '--batch-size', '50', '--step-delay', '0.2']


def assert_all_gone(jobdir, pids=()):
    assert dist.job_processes(jobdir) == []
    for pid in pids:
        assert not dist._alive(pid), f'pid {pid} is still running'


def node_pids(nodes):
    return [i[k] for i in nodes.values() for k in ('pid', 'shim_pid')]


def test_bad_arguments_are_refused_before_anything_starts():
    with pytest.raises(TypeError):
        dist.run_local_job('python train.py')
    with pytest.raises(ValueError):
        dist.run_local_job(TRAIN, num_workers=0)
    with pytest.raises(ValueError):
        dist.run_local_job(TRAIN, timeout=0)


def test_each_worker_reads_its_own_part_of_the_data():
    import numpy as np
    from helpers.dist_train import my_shard
    X, y = np.arange(10), np.arange(10) * 10
    parts = [my_shard(X, y, rank, 3) for rank in range(3)]
    assert [b for _, _, b in parts] == [(0, 4), (4, 7), (7, 10)]
    assert np.array_equal(np.concatenate([p[0] for p in parts]), X)
    assert all(np.array_equal(p[1], p[0] * 10) for p in parts)


def test_launcher_is_mxnets_own():
    path = dist.launcher_path()
    assert path.endswith(os.path.join('mxnet', 'tools', 'launch.py')) and os.path.isfile(path)


def test_small_dist_sync_job_runs_and_leaves_nothing_behind(tmp_path):
    lines = []
    result = dist.run_local_job(SMALL + ['--out', str(tmp_path)], num_workers=2, num_servers=1,
                                timeout=120, echo=lines.append)
    assert sorted(result.nodes) == ['scheduler', 'server 0', 'worker 0', 'worker 1']
    assert all(info['exit'] == 0 for info in result.nodes.values())
    ranks = sorted(int(l.split()[1]) for w in ('worker 0', 'worker 1')
                   for l in result.output(w) if l.startswith('rank') and ' of 2 ' in l)
    assert ranks == [0, 1]
    assert all(l.startswith('[') for l in lines)  # every line names its process
    import mxnet as mx
    p0, p1 = (mx.nd.load(str(tmp_path / f'params-rank{r}.params')) for r in (0, 1))
    assert all((p0[k] == p1[k]).min().asscalar() == 1 for k in p0)  # dist_sync: identical weights
    assert not dist._alive(result.launcher_pid)
    assert_all_gone(result.jobdir, node_pids(result.nodes))


def test_busy_port_is_skipped():
    busy = socket.socket()
    for port in range(9091, 9999):  # the launcher's first choice is the first free port from 9091
        try:
            busy.bind((dist.LOOPBACK, port))
            break
        except OSError:
            continue
    busy.listen()
    try:
        result = dist.run_local_job(SMALL + ['--max-steps', '2'], timeout=120, echo=False)
    finally:
        busy.close()
    assert result.port is not None and result.port != port
    assert_all_gone(result.jobdir, node_pids(result.nodes))


def test_killed_worker_ends_the_job_with_a_clear_error():
    started = threading.Event()
    killed = {}

    def echo(line):
        if line.startswith('[worker 1] rank'):  # it is past start-up and about to train
            started.set()

    def killer():
        if not started.wait(90):
            return
        time.sleep(1.0)  # mid-training
        for p in psutil.process_iter():
            try:
                env = p.environ()
                if (env.get('DMLC_ROLE') == 'worker' and env.get('DMLC_TASK_ID') == '1'
                        and 'helpers.dist_train' in ' '.join(p.cmdline())):
                    p.send_signal(signal.SIGKILL)
                    killed['pid'], killed['at'] = p.pid, time.monotonic()
                    return
            except psutil.Error:
                pass

    thread = threading.Thread(target=killer, daemon=True)
    thread.start()
    with pytest.raises(dist.DistJobError) as info:
        dist.run_local_job(LONG, timeout=150, echo=echo)
    ended = time.monotonic()
    thread.join(5)
    assert 'pid' in killed, 'the worker was never killed'
    message = str(info.value)
    assert 'worker 1' in message and 'died' in message and 'SIGKILL' in message, message
    assert str(killed['pid']) in message
    assert ended - killed['at'] < 60
    assert not isinstance(info.value, dist.DistJobTimeout)
    assert_all_gone(info.value.jobdir, node_pids(info.value.nodes))


def test_timeout_stops_every_process_and_names_those_still_running():
    start = time.monotonic()
    with pytest.raises(dist.DistJobTimeout) as info:
        dist.run_local_job(LONG, timeout=20, echo=False)
    assert time.monotonic() - start < 20 + 20
    message = str(info.value)
    assert 'timeout of 20 s' in message
    for name in ('scheduler', 'server 0', 'worker 0', 'worker 1'):
        assert name in message, message
    assert isinstance(info.value, TimeoutError)
    assert_all_gone(info.value.jobdir, node_pids(info.value.nodes))
