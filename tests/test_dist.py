"""helpers.dist and helpers.dist_train: a real parameter-server job on localhost, and what happens
when things go wrong (notebook 08).

Each job test starts scheduler + server + 2 workers with MXNet's launcher (local mode) on 127.0.0.1,
keeps the job tiny, and checks that afterwards no process of the job is left (psutil). Timeouts are
generous: the machine may be busy; a failure names the process that failed.
"""
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time

import numpy as np
import psutil
import pytest

from helpers import dist, dist_train, job_faults, launcher, lessoncheck, procs
from helpers import job as job_module
from helpers.dist_train import my_shard, steps_per_epoch

TRAIN = [sys.executable, '-m', 'helpers.dist_train']
SMALL = TRAIN + ['--kvstore', 'dist_sync', '--epochs', '1', '--n-train', '800', '--n-test', '500',
                 '--batch-size', '50']
# A job that would run for minutes: every step sleeps.
LONG = TRAIN + ['--kvstore', 'dist_sync', '--epochs', '100', '--n-train', '1000', '--n-test', '500',
                '--batch-size', '50', '--step-delay', '0.2']


def assert_all_gone(jobdir, nodes=None):
    assert dist.job_processes(jobdir) == [], 'processes of the job are still running'
    for info in (nodes or {}).values():
        for key in ('pid', 'shim_pid'):
            assert not procs.alive(info[key]), f'pid {info[key]} is still running'


def test_bad_arguments_are_refused_before_anything_starts():
    with pytest.raises(TypeError):
        dist.run_local_job('python train.py')
    with pytest.raises(TypeError):
        dist.run_local_job(TRAIN, num_workers=1.5)
    with pytest.raises(ValueError):
        dist.run_local_job(TRAIN, num_workers=0)
    with pytest.raises(ValueError):
        dist.run_local_job(TRAIN, timeout=0)
    with pytest.raises(TypeError):
        dist.run_local_job(TRAIN, timeout='60')
    for never in (float('inf'), float('nan')):     # a deadline that never comes: refused, not a crash
        with pytest.raises(ValueError, match='timeout'):
            dist.run_local_job(TRAIN, timeout=never)


def test_each_worker_reads_its_own_part_of_the_data():
    for case in lessoncheck.SHARD_CASES:           # helpers.lessoncheck's laws (check_my_shard, check_steps_per_epoch)
        lessoncheck.law_my_shard(my_shard, **case)
    for case in lessoncheck.STEPS_CASES:
        lessoncheck.law_steps_per_epoch(steps_per_epoch, **case)
    X, y = np.arange(10), np.arange(10) * 10
    parts = [my_shard(X, y, rank, 3) for rank in range(3)]
    assert [b for _, _, b in parts] == [(0, 4), (4, 7), (7, 10)]
    assert np.array_equal(np.concatenate([p[0] for p in parts]), X)
    assert all(np.array_equal(p[1], p[0] * 10) for p in parts)
    # every worker takes the steps of the smallest shard: 3 examples, batches of 2 -> 1 step
    assert steps_per_epoch(10, 3, 2) == 1 and steps_per_epoch(12000, 2, 64) == 93


@pytest.mark.parametrize('script', ['done', 'dies', 'timeout', 'interrupt'])
def test_run_local_job_stops_the_job_however_it_ends(script):
    """helpers.lessoncheck's law (the readers' check_run_local_job), against a scripted stand-in for Job: no
    process starts. The real jobs below end the same four ways."""
    lessoncheck.law_job_always_stopped(dist.run_local_job, script)


def test_push_then_pull_is_a_push_and_a_pull():
    """helpers.lessoncheck's laws (the readers' check_push_then_pull), on a recording stand-in and on MXNet's
    local store."""
    for k, out, priority in ((1, True, 0), (2, True, -3), (3, False, 0)):
        lessoncheck.law_push_then_pull(dist_train.push_then_pull, k, out, priority)
    for k in (1, 2, 3):
        lessoncheck.law_push_then_pull_on_a_store(dist_train.push_then_pull, k)


@pytest.mark.parametrize('case', lessoncheck.WORKER_CASES)
def test_a_worker_takes_the_step_of_the_global_batch(case):
    """helpers.lessoncheck's law (the readers' check_train_worker), in this process: a stand-in dist_sync
    store of workers that all push the same gradients."""
    lessoncheck.law_worker_takes_the_global_step(dist_train.train_worker, **case)


def test_launcher_is_mxnets_own():
    path = dist.launcher_path()
    assert path.endswith(os.path.join('mxnet', 'tools', 'launch.py')) and os.path.isfile(path)


def test_mxnets_launcher_crashes_as_shipped_and_runs_patched():
    """notebook 08: MXNet 1.9.1's launch.py calls Thread.isAlive, which Python 3.9 removed; the patch
    in helpers/dist.py (shown by the notebook) restores it. A job whose every process runs `true`."""
    args = ['-n', '1', '-s', '1', '--launcher', 'local', 'true']
    status, last = dist.try_launcher(args, patched=False)
    assert status != 0 and "no attribute 'isAlive'" in last, (status, last)
    status, last = dist.try_launcher(args)
    assert status == 0, last


def test_try_launcher_kills_everything_on_timeout():
    # A sleep no other process runs: its length holds this process's pid. A fixed one (31.4159) matched the
    # sleeps of the same test in another suite running beside this one (two clones' make test at once).
    marker = f'31.{os.getpid()}'
    with pytest.raises(subprocess.TimeoutExpired):
        dist.try_launcher(['-n', '1', '-s', '1', '--launcher', 'local', 'sleep', marker], timeout=3)
    time.sleep(0.5)
    left = []
    for p in psutil.process_iter():
        try:
            if marker in p.cmdline() and p.status() != psutil.STATUS_ZOMBIE:
                left.append(p.pid)
        except psutil.Error:
            pass
    assert left == []


def test_command_is_the_scripts_command_line_and_results_come_back_in_rank_order(tmp_path):
    """notebook 08 builds every run's command from options, and reads the workers' result files."""
    cmd = dist_train.command(kvstore='dist_async', lr=0.3, out=str(tmp_path), trainer_pushpull=True,
                             max_steps=30)
    assert cmd[:3] == [sys.executable, '-m', 'helpers.dist_train']
    args = dist_train.parse_args(cmd[3:])
    assert (args.kvstore, args.lr, args.out, args.trainer_pushpull, args.max_steps) == (
        'dist_async', 0.3, str(tmp_path), True, 30)
    assert '--trainer-pushpull' not in dist_train.command(trainer_pushpull=False)
    assert dist_train.command('my_copy', epochs=2)[1:] == ['-m', 'my_copy', '--epochs', '2']
    with pytest.raises(TypeError, match='unknown option'):
        dist_train.command(learning_rate=0.1)
    for file_number, rank in ((0, 1), (1, 0)):     # the launcher's order need not be the ranks'
        (tmp_path / f'result-rank{file_number}.json').write_text(json.dumps({'rank': rank}))
    assert [r['rank'] for r in dist_train.read_results(str(tmp_path))] == [0, 1]


def test_two_machines_places_a_job_in_namespaces_that_last_the_block(monkeypatch):
    """notebook 08: ``with dist.two_machines(2) as place`` -- None where namespaces cannot be made."""
    from helpers import netns
    with monkeypatch.context() as m:
        m.setattr(netns, 'available', lambda: (False, 'no root'))
        with dist.two_machines(2) as place:
            assert place is None
    ok, why = netns.available()
    if not ok:
        pytest.skip(f'no network namespaces here: {why}')
    with dist.two_machines(2) as place:
        assert sorted(place) == ['scheduler', 'server 0', 'worker 0', 'worker 1']
        spaces = {p['netns'] for p in place.values()}
        assert len(spaces) == 2 and spaces <= set(netns.namespaces())
        assert place['worker 0']['host'] == place['worker 1']['host'] != place['scheduler']['host']
    assert not spaces & set(netns.namespaces())


def test_small_dist_sync_job_runs_skips_a_busy_port_and_leaves_nothing_behind(tmp_path, monkeypatch):
    host = job_module.loopback_address()               # the address the job will use (its own)
    monkeypatch.setattr(job_module, 'loopback_address', lambda: host)
    busy = socket.socket()
    for port in range(9091, 9999):  # the launcher's first choice is the first free port from 9091
        try:
            busy.bind((host, port))
            break
        except OSError:
            continue
    busy.listen()
    lines = []
    try:
        result = dist.run_local_job(SMALL + ['--out', str(tmp_path)], num_workers=2, num_servers=1,
                                    timeout=180, echo=lines.append)
    finally:
        busy.close()
    assert result.port is not None and result.port != port and result.host == host
    assert sorted(result.nodes) == ['scheduler', 'server 0', 'worker 0', 'worker 1']
    assert all(info['exit'] == 0 for info in result.nodes.values())
    ranks = sorted(int(line.split()[1]) for w in ('worker 0', 'worker 1')
                   for line in result.output(w) if line.startswith('rank') and ' of 2 ' in line)
    assert ranks == [0, 1]
    assert all(line.startswith('[') for line in lines)  # every line names its process
    import mxnet as mx
    p0, p1 = (mx.nd.load(str(tmp_path / f'params-rank{r}.params')) for r in (0, 1))
    assert all((p0[k] == p1[k]).min().asscalar() == 1 for k in p0)  # dist_sync: identical weights
    assert not procs.alive(result.launcher_pid)
    assert_all_gone(result.jobdir, result.nodes)


def _kill_worker_1(mark):
    """SIGKILL worker 1 of this test's job only (its environment carries `mark`): another
    test run on the same machine has its own worker 1, which must be left alone."""
    for p in psutil.process_iter():
        try:
            env = p.environ()
            if (env.get('MXDP_TEST_MARK') == mark and env.get('DMLC_ROLE') == 'worker'
                    and env.get('DMLC_TASK_ID') == '1'
                    and 'helpers.dist_train' in ' '.join(p.cmdline())):
                p.send_signal(signal.SIGKILL)
                return p.pid, time.monotonic()
        except psutil.Error:
            pass
    return None


def test_killed_worker_ends_the_job_with_a_clear_error():
    mark = f'kill-{os.getpid()}-{time.time()}'
    started, killed = threading.Event(), {}

    def echo(line):
        if line.startswith('[worker 1] rank'):  # it is past start-up and about to train
            started.set()

    def killer():
        if started.wait(150):
            time.sleep(1.0)  # mid-training
            found = _kill_worker_1(mark)
            if found:
                killed['pid'], killed['at'] = found

    thread = threading.Thread(target=killer, daemon=True)
    thread.start()
    with pytest.raises(dist.DistJobError) as info:
        dist.run_local_job(LONG, timeout=200, echo=echo, env={'MXDP_TEST_MARK': mark})
    ended = time.monotonic()
    thread.join(5)
    assert 'pid' in killed, f'the worker was never killed; the job ended with: {info.value}'
    message = str(info.value)
    assert 'worker 1' in message and 'died' in message and 'SIGKILL' in message, message
    assert str(killed['pid']) in message
    assert ended - killed['at'] < 60
    assert not isinstance(info.value, dist.DistJobTimeout)
    assert_all_gone(info.value.jobdir, info.value.nodes)


def test_timeout_stops_every_process_and_names_those_still_running():
    start = time.monotonic()
    with pytest.raises(dist.DistJobTimeout) as info:
        dist.run_local_job(LONG, timeout=12, echo=False)
    assert time.monotonic() - start < 12 + 30
    message = str(info.value)
    assert 'timeout of 12 s' in message
    for name in ('scheduler', 'server 0', 'worker 0', 'worker 1'):
        assert name in message, message
    assert isinstance(info.value, TimeoutError)
    assert_all_gone(info.value.jobdir, info.value.nodes)


def _processes_marked(mark):
    found = []
    for p in psutil.process_iter():
        try:
            if p.environ().get('MXDP_TEST_MARK') == mark and p.status() != psutil.STATUS_ZOMBIE:
                found.append(p)
        except psutil.Error:
            pass
    return found


def test_ctrl_c_stops_every_process():
    mark = f'ctrl-c-{os.getpid()}-{time.time()}'

    pressed = []

    def echo(line):                      # Ctrl-C, once, as soon as a worker trains
        if line.startswith('[worker') and ' of 2 (' in line and not pressed:
            pressed.append(len(_processes_marked(mark)))
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        dist.run_local_job(LONG, timeout=200, echo=echo, env={'MXDP_TEST_MARK': mark})
    assert pressed and pressed[0] >= 4, f'the job was not running when Ctrl-C came: {pressed}'
    assert _processes_marked(mark) == []


STAND_IN_SSH = '''#!/bin/bash
# A stand-in for ssh: run the remote command (the last argument) here, in a fresh, minimal
# environment, as a non-interactive ssh session would: no venv on PATH, nothing exported.
# With SSH_LOG_DIR set, each session writes to a file of its own: the servers and workers log
# concurrently, and their lines interleave mid-line on a shared pipe.
if [ -n "$SSH_LOG_DIR" ]; then exec > "$SSH_LOG_DIR/session-$$.log" 2>&1; fi
exec env -i HOME="$HOME" PATH=/usr/bin:/bin bash -c "${@: -1}"
'''


def _session_processes(sid):
    found = []
    for p in psutil.process_iter():
        try:
            if os.getsid(p.pid) == sid and p.status() != psutil.STATUS_ZOMBIE:
                found.append(p)
        except (psutil.Error, ProcessLookupError, PermissionError):
            pass
    return found


def test_ssh_commands_refuse_host_names_without_an_interface():
    """ps-lite binds DMLC_NODE_HOST, which the ssh launcher sets to the host-file entry; MXNet's
    libzmq 4.2.2 cannot bind a host name. Addresses, or names with an interface, are accepted."""
    with pytest.raises(ValueError, match='not an IPv4 address'):
        dist.ssh_commands(['10.0.0.1', 'node2'], ['--epochs', '1'])
    plain = dist.ssh_commands(['10.0.0.1', '10.0.0.2:2222 slots=2'], ['--epochs', '1'])
    assert 'DMLC_NODE_HOST' not in plain['launch'] and plain['check'][1].startswith('ssh -p 2222 10.0.0.2 ')
    named = dist.ssh_commands(['node1', 'node2'], ['--epochs', '1'], interface='eth0')
    assert ' env -u DMLC_NODE_HOST DMLC_INTERFACE=eth0 ' in named['launch']


def test_ssh_commands_refuse_values_the_ssh_launcher_cannot_quote():
    """dmlc_tracker/ssh.py puts the command between single quotes as it is and cds unquoted: a path
    or value that needs shell quoting would arrive broken, so it is refused, naming it."""
    for kwargs in (dict(repo='/home/me/my repo'), dict(python='/opt/py 3/bin/python'),
                   dict(env={'FASHION_MNIST_DIR': '/data/fashion mnist'}), dict(env={'X': "it's"})):
        with pytest.raises(ValueError, match='needs shell quoting'):
            dist.ssh_commands(['10.0.0.1'], ['--epochs', '1'], **kwargs)
    assert 'PS_VERBOSE=1' in dist.ssh_commands(['10.0.0.1'], ['--epochs', '1'], env={'PS_VERBOSE': 1})['launch']


def test_the_launcher_patch_reads_launchers_own_option():
    """Only --launcher local pins the scheduler to loopback; a script's own argument 'local' (e.g.
    --kv-store local) does not, and --launcher=local does."""
    kind = launcher._launcher_kind
    assert kind(['--launcher', 'local', '-n', '2', 'python', 'x.py']) == 'local'
    assert kind(['--launcher=local', '-n', '2', 'python', 'x.py']) == 'local'
    assert kind(['-n', '2', '-H', 'hosts', 'python', 'train.py', '--kv-store', 'local']) == 'ssh'
    assert kind(['--launcher', 'ssh', '-n', '2', 'python', 'train.py', 'local']) == 'ssh'


@pytest.mark.parametrize('names', [False, True], ids=['addresses', 'host names'])
def test_printed_ssh_commands_work_with_a_stand_in_ssh(tmp_path, names):
    """notebook 08's cluster commands, run with ssh replaced by a local, empty-environment shell:
    the venv's python is named, PS_VERBOSE reaches the workers, the data is found, both ranks train.
    With host names (``localhost``) the servers and workers bind the interface's address: the
    launcher's DMLC_NODE_HOST=localhost would make every bind fail (libzmq 4.2.2).

    Every process stays on loopback, the scheduler on an address of its own (``scheduler=``): left to
    itself, the launcher would bind the default route's address (dmlc_tracker's get_host_ip), leaving
    loopback, and two runs of this test at once (two test suites) would both take port 9091 there --
    one scheduler then dies on "bind failed", and the other job's processes join the wrong one."""
    own = job_module.loopback_address()
    hosts, interface, node_ip = (['localhost', 'localhost'], 'lo', '127.0.0.1') if names else ([own, own], None, own)
    bindir, out = tmp_path / 'bin', tmp_path / 'out'
    bindir.mkdir()
    out.mkdir()
    (bindir / 'ssh').write_text(STAND_IN_SSH)
    (bindir / 'ssh').chmod(0o755)
    args = ['--kvstore', 'dist_sync', '--epochs', '1', '--n-train', '400', '--n-test', '100',
            '--batch-size', '50', '--out', str(out)]
    cmds = dist.ssh_commands(hosts, args, num_servers=1, hostfile=str(tmp_path / 'hosts'),
                             interface=interface, env={'PS_VERBOSE': 1}, scheduler=own)
    (tmp_path / 'hosts').write_text(cmds['hosts'] + '\n')
    env = dict(os.environ, PATH=f'{bindir}:{os.environ["PATH"]}', OMP_NUM_THREADS='1')
    for key in ('PYTHONPATH', 'DMLC_NODE_HOST', 'DMLC_INTERFACE', 'PS_VERBOSE', 'MXDP_DEVICES'):
        env.pop(key, None)
    for check in cmds['check']:
        done = subprocess.run(check, shell=True, env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0 and 'data:' in done.stdout, done.stderr
    logs = tmp_path / 'sessions'
    logs.mkdir()
    proc = subprocess.Popen(['bash', '-c', cmds['launch']], env=dict(env, SSH_LOG_DIR=str(logs)),
                            stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        output, _ = proc.communicate(timeout=240)
    finally:
        procs.kill_group(proc, grace=1.0)
    sessions = [f.read_text() for f in sorted(logs.glob('session-*.log'))]    # 1 server, 2 workers
    assert proc.returncode == 0, output[-2000:] + ''.join(sessions)[-2000:]
    assert sorted(p.name for p in out.glob('result-rank*.json')) == ['result-rank0.json', 'result-rank1.json']
    workers = [log for log in sessions if 'role=worker' in log]
    assert len(workers) == 2 and all('W[' in log for log in workers), 'PS_VERBOSE did not reach the workers'
    binds = [line for log in sessions for line in log.splitlines() if 'Bind to' in line]
    assert len(sessions) == 3 and len(binds) == 3 and all(f'ip={node_ip},' in line for line in binds), binds
    scheduler = [line for line in output.splitlines() if 'Bind to' in line and 'role=scheduler' in line]
    assert len(scheduler) == 1 and f'ip={own},' in scheduler[0], scheduler or output[-2000:]
    assert _session_processes(proc.pid) == []


def test_side_by_side_jobs_on_two_hosts_measure_the_push_and_pull(tmp_path):
    """Each job on two network namespaces of its own: a worker with two devices pushes and pulls
    LeNet's bytes once per step; 2-bit compression shrinks the push, not the pull; a failed job is
    reported, the others go on; nothing is left running, no namespace is left."""
    from helpers import netns
    from helpers.dist_train import traffic_per_step
    from helpers.models import LENET_SHAPES
    ok, why = netns.available()
    if not ok:
        pytest.skip(f'no network namespaces here: {why}')
    lenet_bytes = 4 * sum(int(np.prod(shape)) for _, shape in LENET_SHAPES)
    out = {name: tmp_path / name for name in ('device', 'compressed')}
    for d in out.values():
        d.mkdir()
    short = ['--n-train', '800', '--n-test', '100', '--batch-size', '50', '--max-steps', '6']
    runs = dist.run_side_by_side({
        'device': (TRAIN + ['--kvstore', 'dist_device_sync', '--devices-per-worker', '2', '--out',
                            str(out['device'])] + short, 1),
        'compressed': (TRAIN + ['--kvstore', 'dist_sync', '--compression', '0.5', '--out',
                                str(out['compressed'])] + short, 1),
        'broken': (['false'], 1)}, timeout=240, failures='return')
    import json
    device = json.loads((out['device'] / 'result-rank0.json').read_text())
    compressed = json.loads((out['compressed'] / 'result-rank0.json').read_text())
    sent, received = traffic_per_step(device)
    assert 1.0 < sent / lenet_bytes < 1.1 and 1.0 < received / lenet_bytes < 1.1, (sent, received)
    sent, received = traffic_per_step(compressed)        # a worker alone in its namespace: exact
    assert sent / lenet_bytes < 0.1 and 1.0 < received / lenet_bytes < 1.1, (sent, received)
    assert runs['device']['sent'] > 5 * lenet_bytes       # the whole job, seen from the host
    assert 'died' in str(runs['broken']['error'])
    for run in (runs['device'], runs['compressed']):
        assert_all_gone(run['result'].jobdir, run['result'].nodes)
    assert [n for n in netns.namespaces() if n.startswith(f'{netns.PREFIX}-{os.getpid()}-')] == []


def test_a_scheduler_that_could_not_bind_its_port_is_explained():
    """dmlc_tracker tests a port, closes it, and the scheduler binds it later: another process on the
    job's address can take it meanwhile (two jobs no longer can: each has an address of its own).
    ps-lite then says only 'bind failed'."""
    import queue
    job = dist.Job.__new__(dist.Job)
    job._out, job.lines, job.heard, job._say = queue.Queue(), [], {}, lambda line: None
    job.tracebacks = job_faults.Tracebacks()
    job._out.put('[scheduler] MXNetError: Check failed: my_node_.port != -1 (-1 vs. -1) : bind failed')
    hint = job._bind_hint('scheduler', {'port': '9091'})
    assert 'could not bind port 9091' in hint and 'Start the job again' in hint
    assert job._bind_hint('worker 0', {'port': '9091'}) == ''


# --- Faults (issues 22, 35). ps-lite has no failure detection: a process that raised and hangs at exit, a frozen
# process, a cut link would leave every other process waiting until the job's own timeout. The runner finds each
# at any point of the job, the first step included, and names it (helpers.job_faults); a stall it cannot explain
# ends the job once the workers report steps (helpers.job_node.progress). Every fault must end the job within
# 30 s of happening (FAULT_BOUND), the machine busy or not.
FAULTY = TRAIN + ['--kvstore', 'dist_sync', '--epochs', '1', '--n-train', '60000', '--n-test', '500',
                  '--batch-size', '32']
FAULT_BOUND = 30


def _worker_with_progress(body):
    """:data:`FAULTY`'s job, each worker through a script that calls dist_train.main itself (as a reader's script
    would) with its own ``progress`` (the call after each step, and at joining with step 0), whose body is ``body``
    (lines indented by 4; ``report`` is the original)."""
    return [sys.executable, '-c', 'import os, sys, time\nfrom helpers import dist_train\nreport = dist_train.progress\n'
            'def progress(step, final=False, rank=None):\n' + body
            + 'dist_train.progress = progress\ndist_train.main(sys.argv[1:])\n'] + FAULTY[3:]


# A worker whose step 1 raises: without helpers.job_node.run_script, Python's exit runs MXNet's clean-up, which
# waits for the other workers.
RAISES = _worker_with_progress("""\
    if step == 1 and os.environ['DMLC_TASK_ID'] == '1':
        raise ValueError(f'broken on purpose at step {step}')
""")

# The moment 'joined' (both workers have their rank, neither has finished a step) lasted as long as a worker takes
# from joining to its first step; a fast machine once took less than the test's 0.1 s between two looks, so the fault
# was never injected and the job trained to its end (a fresh clone, alone: "DID NOT RAISE"). These workers wait 10 s
# once they have joined, so that the moment is there to be found.
JOINS_THEN_WAITS = _worker_with_progress("""\
    report(step, final=final, rank=rank)
    if step == 0:
        time.sleep(10)
""")


def _moment(job, when):
    """Has the job reached ``when``: 'joined' (both workers have their rank, no step finished yet), 'training'
    (both workers have finished 15 steps) or 'raised' (worker 1 has printed the exception of :data:`RAISES`)?"""
    if when == 'raised':
        return any(who == 'worker 1' and 'broken on purpose' in text for who, text in job.lines)
    if when == 'joined':
        return len(job.ranks) == 2 and not job.steps
    return len(job.steps) == 2 and min(r[-1][0] for r in job.steps.values()) >= 15


def _run_with_fault(fault, when, place=None, command=None, timeout=240):
    """Run ``command`` (:data:`JOINS_THEN_WAITS` for 'joined', else :data:`FAULTY`), call ``fault(job)`` once at
    ``when`` (:func:`_moment`; None: never), and return ``(error, seconds from the fault to the error, job)``."""
    if command is None:
        command = JOINS_THEN_WAITS if when == 'joined' else FAULTY
    job = dist.Job(command, 2, 1, timeout=timeout, echo=False, place=place)
    at = None
    try:
        with pytest.raises(dist.DistJobError) as info:
            while not job.poll():
                if at is None and when and _moment(job, when):
                    fault(job)
                    at = time.monotonic()
                if job.expired():
                    job.fail(dist.DistJobTimeout, 'timeout')
                time.sleep(0.1)
        seconds = time.monotonic() - at if at else None     # to the error
    finally:
        job.stop()
    stopped = time.monotonic() - at if at else None
    print(f'{when}: the error {seconds if seconds is None else round(seconds, 1)} s after the fault, every process '
          f'stopped {stopped if stopped is None else round(stopped, 1)} s after it: {info.value}')
    assert not isinstance(info.value, dist.DistJobTimeout), str(info.value)
    assert when is None or at is not None, f'the fault was never injected: {info.value}'
    assert stopped is None or stopped < FAULT_BOUND, f'stopped {stopped:.0f} s after the fault: {info.value}'
    assert_all_gone(info.value.jobdir, info.value.nodes)
    assert not os.path.exists(info.value.jobdir)
    assert not any(who == 'launcher' and 'Traceback' in text for who, text in info.value.lines), \
        'the launcher printed a traceback into the job\'s output'
    return info.value, seconds, job


@pytest.mark.parametrize('who, when', [('worker 1', 'joined'), ('server 0', 'training')])
def test_a_frozen_process_ends_the_job_naming_it(who, when):
    """SIGSTOP: alive, running nothing. Before the first step (no step time measured yet) as in the middle."""
    error, _, job = _run_with_fault(lambda job: os.kill(job.nodes[who]['pid'], signal.SIGSTOP), when)
    message = str(error).split('; still running')[0]
    assert f'{job.who(who)} is frozen' in message and 'still alive' in message, message
    assert str(job.nodes[who]['pid']) in message and (who != 'worker 1' or 'rank ' in message), message


@pytest.mark.skipif(not __import__('helpers.netns').netns.available()[0], reason='no network namespaces here')
def test_a_cut_link_ends_the_job_naming_it():
    """The workers' end of the veth pair set down before the first step: that end named, with its processes; its peer
    too, once the kernel has marked it without carrier. It does that asynchronously (the operstate of a veth's peer is
    updated by linkwatch, a kernel work queue: net/core/link_watch.c), so on a busy machine the job's check can come
    first (seen once, two suites at once): the peer is then not named, never named wrongly."""
    from helpers import netns, placement
    with netns.Network() as net:
        place, link = placement.two_hosts(net, 2)

        def cut(job):
            subprocess.run(['ip', '-n', link.ns_b, 'link', 'set', link.dev_b, 'down'], check=True, timeout=30)
        error, _, _ = _run_with_fault(cut, 'joined', place=place)
        namespaces = [link.ns_a, link.ns_b]
    message = str(error)
    assert message.startswith('a link of the job is down'), message
    assert f'{link.dev_b} in namespace {link.ns_b} is DOWN (the side of worker 0, worker 1)' in message, message
    assert link.ns_a not in message or f'in namespace {link.ns_a} is up but without carrier' in message, message
    assert not set(namespaces) & set(netns.namespaces())


def test_a_worker_that_raises_ends_the_job_naming_the_exception():
    """Its traceback is printed, then the process hangs in MXNet's clean-up: named with the exception's last line,
    within the bound counted from the moment its traceback reached the job's output."""
    error, _, job = _run_with_fault(lambda job: None, 'raised', command=RAISES)
    message = str(error).split('; still running')[0]
    assert message.startswith(f"{job.who('worker 1')} raised 'ValueError: broken on purpose at step 1' and did not "
                              'exit'), message


def test_a_worker_script_exits_at_once_on_an_exception(tmp_path):
    """helpers.job_node.run_script, the end of python -m helpers.dist_train: the traceback, then status 1 at once
    (os._exit: no clean-up that could wait for other workers); a true result exits 0, a SystemExit keeps its
    status and prints its message."""
    for body, status, printed in (('1 / 0', 1, 'ZeroDivisionError: division by zero'), ('True', 0, ''),
                                  ("(_ for _ in ()).throw(SystemExit('too few examples'))", 1, 'too few examples'),
                                  ('None', 1, '')):
        done = subprocess.run([sys.executable, '-c', f'from helpers.job_node import run_script\n'
                               f'run_script(lambda: {body})'], capture_output=True, text=True, timeout=60)
        assert done.returncode == status and printed in done.stderr, (body, done.returncode, done.stderr)


@pytest.mark.skipif(not __import__('helpers.netns').netns.available()[0], reason='no network namespaces here')
def test_a_stall_no_fault_explains_ends_the_job():
    """The link capped to a crawl (1 kbit/s, a queue that drops what waits over 10 ms): up, every process alive and
    running, no exception -- but no step ends. The stall detector stops the job, saying what it ruled out."""
    from helpers import netns, placement
    with netns.Network() as net:
        place, link = placement.two_hosts(net, 2)

        def crawl(job):
            for ns, dev in ((link.ns_a, link.dev_a), (link.ns_b, link.dev_b)):
                netns.cap(ns, dev, 1000, latency=0.01)
        error, _, job = _run_with_fault(crawl, 'training', place=place)
    message = str(error)
    assert isinstance(error, dist.DistJobStalled), message
    assert 'no progress' in message and 'worker 0 finished step' in message and 'worker 1 finished step' in message
    assert 'Last heard' in message and 'No process is frozen, none raised, every link is up' in message
    assert job_module.STALL_FLOOR <= job.stall_limit() <= job_module.STALL_CEILING


def test_a_killed_scheduler_ends_the_job_naming_it():
    error, _, job = _run_with_fault(lambda job: os.kill(job.nodes['scheduler']['pid'], signal.SIGKILL), 'joined')
    assert str(error).startswith(f"{job.who('scheduler')} died (killed by SIGKILL)"), str(error)
    assert 'launcher: a process it started exited with status 137' in [t for who, t in error.lines if who == 'launcher']


def test_a_program_that_does_not_exist_is_named_before_anything_starts():
    for command, says in ((['/nonexistent/prog'], "'/nonexistent/prog': no such program"),
                          (['no-such-program-mxdp'], "'no-such-program-mxdp': no such program on PATH"),
                          ([__file__], '.*: the file is not executable')):
        with pytest.raises(ValueError, match=f'command.0. = {says}'):
            dist.run_local_job(command, timeout=30, echo=False)


def test_the_stall_limit_follows_the_measured_step_time():
    job = dist.Job.__new__(dist.Job)
    job.steps = {}
    assert job.stall_limit() is None                                  # nothing measured yet
    job.steps = {'worker 0': [(i, 100 + 0.1 * i) for i in range(30)],
                 'worker 1': [(i, 100 + 0.5 * i) for i in range(30)]}
    assert job.stall_limit() == pytest.approx(job_module.STALL_FACTOR * 0.5)   # the slowest worker's median
    job.steps = {'worker 0': [(0, 0.0), (1, 0.01)]}
    assert job.stall_limit() == job_module.STALL_FLOOR
    job.steps = {'worker 0': [(0, 0.0), (1, 60.0)]}
    assert job.stall_limit() == job_module.STALL_CEILING


@pytest.mark.parametrize('env, gpus, worker, count, expected', [
    ('', 4, 1, 2, ['gpu(2)', 'gpu(3)']),               # every GPU: worker 1 takes the next two
    ('gpu:1,3', 4, 0, 1, ['gpu(1)']),                   # MXDP_DEVICES=gpu:... is the pool
    ('gpu:1,3', 4, 1, 1, ['gpu(3)']),
    ('gpu:2', 4, 0, 2, ['cpu(0)', 'cpu(1)']),           # one GPU listed: two devices are stand-ins
    ('cpu:2', 4, 0, 1, ['cpu(0)']),                     # stand-ins forced
    ('', 0, 0, 2, ['cpu(0)', 'cpu(1)']),
])
def test_worker_devices_come_from_the_gpus_the_series_may_use(monkeypatch, env, gpus, worker, count, expected):
    from helpers import devices
    monkeypatch.setattr(devices, 'num_gpus', lambda: gpus)
    monkeypatch.setenv('MXDP_DEVICES', env)
    assert [str(d) for d in dist_train.worker_devices(worker, count)] == expected


def test_two_jobs_at_once_stay_apart(tmp_path):
    """Two jobs started together (two test suites on one machine, issue 22) each keep their own
    scheduler: each binds an address of its own in 127.0.0.0/8, so neither can join the other."""
    outs = {name: tmp_path / name for name in ('a', 'b')}
    for out in outs.values():
        out.mkdir()
    found = dist.run_side_by_side({name: (SMALL + ['--out', str(out)], 2) for name, out in outs.items()},
                                  timeout=240, isolate=False)
    hosts = {found[name]['result'].host for name in outs}
    assert len(hosts) == 2 and all(h.startswith('127.') and h != '127.0.0.1' for h in hosts)
    import mxnet as mx
    for out in outs.values():                     # within each job, dist_sync gave identical weights
        p0, p1 = (mx.nd.load(str(out / f'params-rank{r}.params')) for r in (0, 1))
        assert all((p0[k] == p1[k]).min().asscalar() == 1 for k in p0)
