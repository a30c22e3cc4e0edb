"""The guards of the stores' and jobs' helpers (``helpers.LAYERS``; notebooks 07, 08): the cases of a
KVStore measurement and the processes of a job on two machines.
"""
from helpers.checks._kinds import MAX_PROCESSES, choice, ordered, whole

__all__ = ['store_cases', 'processes']


# -------------------------------------------------------------------- helpers.kvstore (notebook 07)
def store_cases(cases, store_types, extras):
    """``[(kv_type, extra), ...]`` of ``helpers.kvstore.store_memory`` (notebook 07): at least one."""
    cases = ordered(cases, 'cases')
    if not cases:
        raise ValueError('cases is empty: give at least one (kv_type, extra)')
    for i, case in enumerate(cases):
        if not isinstance(case, (tuple, list)) or len(case) != 2:
            raise TypeError(f'cases[{i}] must be a pair (kv_type, extra), got {case!r}')
        choice(case[0], f'cases[{i}]: kv_type', store_types)
        choice(case[1], f'cases[{i}]: extra', extras)
    return [tuple(case) for case in cases]


# ------------------------------------------------------------------ helpers.placement (notebook 08)
def processes(num_workers, num_servers, name='num_workers'):
    """``(num_workers, num_servers)`` of a local job (notebook 08): from 1 to :data:`MAX_PROCESSES`
    each (every one is a process with MXNet in it)."""
    return (whole(num_workers, name, 1, MAX_PROCESSES),
            whole(num_servers, name.replace('num_workers', 'num_servers'), 1, MAX_PROCESSES))
