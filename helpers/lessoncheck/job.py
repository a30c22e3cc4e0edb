"""The laws and checks of :mod:`helpers.job` (notebook 08): ``run_local_job`` stops its job however it
ends, checked against a scripted stand-in for ``Job`` (no process starts). ``tests/test_dist.py``
calls the same law.
"""
from helpers.lessoncheck.machinery import Broken, Law, lesson

__all__ = ['check_run_local_job', 'law_job_always_stopped']


def _scripted_job(script, log):
    """A stand-in for helpers.job.Job that starts no process and follows ``script``: ``'done'`` (the job
    ends at the third poll), ``'dies'`` (the second poll raises DistJobError), ``'timeout'`` (the job
    expires at the second check), ``'interrupt'`` (the second poll raises KeyboardInterrupt)."""
    import inspect as _inspect
    from helpers.job import DistJobError, Job

    class ScriptedJob:
        def __init__(self, *args, **kwargs):
            bound = _inspect.signature(Job).bind(*args, **kwargs)
            bound.apply_defaults()
            log.append(('start', dict(bound.arguments)))
            self.polls = self.checks = 0

        def poll(self):
            self.polls += 1
            log.append(('poll',))
            if self.polls == 2 and script == 'dies':
                raise DistJobError('worker 1 died (SIGKILL)')
            if self.polls == 2 and script == 'interrupt':
                raise KeyboardInterrupt
            return script == 'done' and self.polls == 3

        def expired(self):
            self.checks += 1
            log.append(('expired',))
            return script == 'timeout' and self.checks >= 2

        def fail(self, error, message):
            log.append(('fail', error, message))
            raise error(message)

        def stop(self):
            log.append(('stop',))

        def result(self):
            log.append(('result',))
            return RESULT

    RESULT = object()
    ScriptedJob.RESULT = RESULT
    return ScriptedJob


def law_job_always_stopped(run_local_job, script):
    """Notebook 08: ``run_local_job`` starts one Job with its arguments, polls it until it is done,
    fails it with DistJobTimeout once it has expired, and -- however it ends: done, a dead process, the
    timeout or Ctrl-C -- stops it before returning its result or raising. Checked against a scripted
    stand-in for ``Job`` (no process starts: helpers.job.Job itself is tested in tests/test_dist.py)."""
    from helpers import dist, job as job_module
    from helpers.job import DistJobError, DistJobTimeout
    log = []
    fake = _scripted_job(script, log)
    names = getattr(run_local_job, '__globals__', {})
    patched = [(job_module, 'Job'), (dist, 'Job')] + ([(names, 'Job')] if isinstance(names, dict) else [])
    saved = [(where, name, where.get(name, _MISSING) if isinstance(where, dict) else getattr(where, name))
             for where, name in patched]
    args = dict(command=['python', '-c', 'pass'], num_workers=3, num_servers=2, timeout=30, env={'MXDP_X': '1'},
                echo=False, place=None)
    outcome = None
    try:
        for where, name, _ in saved:
            if isinstance(where, dict):
                where[name] = fake
            else:
                setattr(where, name, fake)
        try:
            outcome = ('returned', run_local_job(**args))
        except NotImplementedError:      # a stub: "not written yet"
            raise
        except BaseException as e:       # KeyboardInterrupt too: it is one of the ways a job ends
            outcome = ('raised', e)
    finally:
        for where, name, value in saved:
            if isinstance(where, dict):
                if value is _MISSING:
                    where.pop(name, None)
                else:
                    where[name] = value
            else:
                setattr(where, name, value)
    events = [e[0] for e in log]
    story = ', '.join(events) or 'nothing'
    if events.count('start') != 1:
        raise Broken('run_local_job starts the job once: Job(command, num_workers, num_servers, timeout, env, '
                     'echo, place=place)', got=f'{events.count("start")} jobs started', why='this case: ' + script)
    given = log[0][1]
    wrong = [k for k, v in args.items() if given.get(k) != v]
    if wrong:
        raise Broken(f'the job must get run_local_job\'s own {", ".join(wrong)}',
                     expected=', '.join(f'{k}={args[k]!r}' for k in wrong),
                     got=', '.join(f'{k}={given.get(k)!r}' for k in wrong))
    stops = [i for i, e in enumerate(events) if e == 'stop']
    ending = {'done': 'the job finished', 'dies': 'a process died (poll raised DistJobError)',
              'timeout': 'the job ran past its timeout', 'interrupt': 'Ctrl-C came (KeyboardInterrupt)'}[script]
    if not stops:
        raise Broken(f'{ending}, and the job was never stopped: its processes would run on',
                     expected='job.stop() before run_local_job returns or raises', got=story,
                     why='call job.stop() in a `finally:` block around the polling loop')
    if any(e == 'poll' for e in events[stops[0]:]):
        raise Broken(f'{ending}: the job was polled after it was stopped', got=story)
    if script == 'done':
        if outcome[0] != 'returned' or outcome[1] is not fake.RESULT:
            raise Broken('a job that finished returns job.result()', expected='job.result()',
                         got=f'{outcome[0]} {outcome[1]!r}'[:120], why='poll until it returns True, then return '
                                                                        'job.result()')
        if events.count('poll') != 3:
            raise Broken('poll until the job is done (poll() returns True)', expected='3 polls',
                         got=f'{events.count("poll")} polls')
        return
    if script == 'timeout':
        fails = [e for e in log if e[0] == 'fail']
        if not fails or fails[0][1] is not DistJobTimeout:
            raise Broken('a job past its timeout must be failed with DistJobTimeout', got=story,
                         why='in the loop: if job.expired(): job.fail(DistJobTimeout, "... timeout ...")')
        if '30' not in str(fails[0][2]):
            raise Broken('the timeout message names the timeout', expected='a message with "30"',
                         got=repr(fails[0][2]))
    want = {'dies': DistJobError, 'timeout': DistJobTimeout, 'interrupt': KeyboardInterrupt}[script]
    if outcome[0] != 'raised' or not isinstance(outcome[1], want):
        raise Broken(f'{ending}: run_local_job must raise {want.__name__}', expected=want.__name__,
                     got=f'{outcome[0]} {type(outcome[1]).__name__}', why='let the error through: catch nothing, '
                                                                           'stop in `finally:`')


_MISSING = object()


@lesson('helpers.job.run_local_job',
        hint='job = Job(...); poll until done (fail it once expired) in try; job.stop() in finally')
def check_run_local_job():
    """Check your ``run_local_job(command, ...)`` (notebook 08): the loop around a job, against a scripted
    stand-in for ``Job`` -- no process starts (``helpers.job.Job`` itself is tested in tests/test_dist.py)."""
    return [Law('starts one Job with its arguments, polls it until done, fails it with DistJobTimeout once '
                'expired, and stops it however it ends', law_job_always_stopped,
                [dict(script=s) for s in ('done', 'dies', 'timeout', 'interrupt')],
                lambda script: {'done': 'a job that finishes at the third poll',
                                'dies': 'a job whose worker dies (the second poll raises DistJobError)',
                                'timeout': 'a job that runs past its timeout',
                                'interrupt': 'Ctrl-C while the job runs (KeyboardInterrupt)'}[script])]
