"""The guards of the stores' and jobs' helpers (``helpers.LAYERS``; notebooks 07, 08): the cases of a
KVStore measurement and the processes of a job on two machines.
"""
from helpers.checks._kinds import MAX_PROCESSES, _is_mapping, choice, mapping, ordered, text, whole

__all__ = ['store_cases', 'processes', 'placement', 'program']


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


def placement(place, name='place'):
    """A job's placement (notebook 08; ``helpers.placement.two_hosts`` makes one): a dict from a process
    name (``'scheduler'``, ``'server 0'``, ``'worker 1'``) to a dict whose ``'netns'`` (the network
    namespace it runs in) and ``'host'`` (the address it binds), where given, are non-empty strings.
    Returns ``place``."""
    mapping(place, name)
    for who, where in place.items():
        if not _is_mapping(where):
            raise TypeError(f'{name}[{who!r}] must be a dict such as {{"netns": ..., "host": ...}}, '
                            f'got {type(where).__name__}')
        for key in ('netns', 'host'):
            if where.get(key) is not None:
                text(where[key], f'{name}[{who!r}][{key!r}]')
    return place


def program(command, env=None, cwd=None, name='command'):
    """``command`` (a list of strings, checked already) if its program, ``command[0]``, can run: an
    executable file at that path (relative to ``cwd``), or a name found on ``PATH`` (``env``'s if it
    sets one) (notebook 08). ValueError naming it otherwise: without this, every process of a job
    would fail alone, each saying only "exit status 127"."""
    import os
    import shutil
    prog = command[0]
    if os.sep in prog:
        full = prog if os.path.isabs(prog) else os.path.join(cwd or os.getcwd(), prog)
        if not os.path.isfile(full):
            raise ValueError(f'{name}[0] = {prog!r}: no such program (no file at {full})')
        if not os.access(full, os.X_OK):
            raise ValueError(f'{name}[0] = {prog!r}: the file is not executable (chmod +x, or run it with '
                             'sys.executable)')
        return command
    path = (env or {}).get('PATH', os.environ.get('PATH', os.defpath))
    if shutil.which(prog, path=path) is None:
        raise ValueError(f'{name}[0] = {prog!r}: no such program on PATH ({path})')
    return command
