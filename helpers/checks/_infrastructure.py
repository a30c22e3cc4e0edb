"""The guards of the infrastructure's helpers (``helpers.LAYERS``; notebooks 00-10): data and labels,
processes and network namespaces, timings and traces, and the input of every figure.
"""
from helpers.checks._kinds import (
    MAX_DEVICES, _is_array, _is_mapping, _short, choice, mapping, number, ordered, positive, text, whole)

__all__ = ['labels', 'class_ids', 'pids', 'interface', 'timings', 'spans', 'figure', 'curves', 'spread_runs', 'lanes',
           'span_panels', 'seed_runs', 'grid', 'setting_groups', 'speedups', 'pushpull_rows', 'sweep_times']


# ----------------------------------------------------------------------- helpers.data (notebook 00)
def labels(X, y):
    """One label per example (notebook 03): ``len(X) == len(y)``, else ``ValueError``; ``TypeError``
    for something that has no length."""
    for value, name in ((X, 'X'), (y, 'y')):
        if not _is_array(value):
            raise TypeError(f'{name} must be an array (NumPy or NDArray) of examples, got {_short(value)} '
                            f'({type(value).__name__})')
    if len(X) != len(y):
        raise ValueError(f'X and y must have the same first dimension (one label per example), '
                         f'got {len(X)} examples and {len(y)} labels')


def class_ids(values, n_classes, name='labels'):
    """``values`` as a list of class numbers ``0 <= c < n_classes`` (notebook 00): whole numbers,
    or an array of them (an NDArray's float32 labels too, when they are whole). A negative number
    would silently count from the end of the class names."""
    if _is_array(values) and hasattr(values, 'asnumpy'):
        values = values.asnumpy()
    if _is_array(values) and values.dtype.kind == 'f' and (values == values.round()).all():
        values = values.astype('int64')
    return [whole(v, f'{name}[{i}]', 0, n_classes - 1) for i, v in enumerate(ordered(values, name))]


# -------------------------------------------------- helpers.procs, helpers.netns (notebooks 08, 09)
def pids(values, name='pids'):
    """``values`` as a list of process ids >= 1 (notebooks 08, 09). 0 and -1 are not processes:
    ``kill(0)`` signals the caller's whole process group, ``kill(-1)`` every process it may."""
    return [whole(p, f'{name}[{i}] (a pid)', 1) for i, p in enumerate(ordered(values, name))]


def interface(ns, dev):
    """A network namespace's name (None: this process's own) and an interface's name, both
    non-empty strings (notebooks 08, 09)."""
    if ns is not None:
        text(ns, 'ns (a namespace)')
    text(dev, 'dev (an interface)')


# -------------------------------------------- helpers.timing, helpers.tracing (notebooks 01, 04-10)
def timings(values, name, minimum=1):
    """``values`` as a list of at least ``minimum`` measured times: finite numbers > 0 (notebooks 01, 06, 09)."""
    values = [positive(v, f'{name}[{i}]') for i, v in enumerate(ordered(values, name))]
    if len(values) < minimum:
        raise ValueError(f'{name} must hold at least {minimum} timings to measure their spread, got {len(values)}')
    return values


def spans(values, name='spans'):
    """``values`` as a list of spans ``(device, name, start, end)`` with ``start <= end``
    (``helpers.tracing.Span``; notebooks 01, 04, 05)."""
    values = ordered(values, name)
    for i, s in enumerate(values):
        if not isinstance(s, tuple) or len(s) != 4:
            raise TypeError(f'{name}[{i}] must be a Span (device, name, start, end), got {_short(s)}')
        start, end = number(s[2], f'{name}[{i}].start'), number(s[3], f'{name}[{i}].end')
        if end < start:
            raise ValueError(f'{name}[{i}] ends ({end}) before it starts ({start})')
    return values


# -------------------------------------------------------------------- helpers.plot (every notebook)
def figure(alt, title=None, fig=None):
    """The text of a figure (notebooks 00-09: every figure): ``alt`` None (described from the axes) or a sentence,
    ``title`` None or a string, ``fig`` None (the current figure) or a matplotlib figure with
    something drawn on it."""
    if alt is not None:
        if not isinstance(alt, str):
            raise TypeError(f'alt must be a sentence saying what the figure shows, got {_short(alt)} '
                            f'({type(alt).__name__})')
        if not alt.strip():
            raise ValueError(f'alt must be a sentence saying what the figure shows, got {alt!r}')
    if title is not None and not isinstance(title, str):
        raise TypeError(f'title must be a string, got {_short(title)} ({type(title).__name__})')
    if fig is not None:
        from matplotlib.figure import Figure
        if not isinstance(fig, Figure):
            raise TypeError(f'fig must be a matplotlib figure, got {_short(fig)} ({type(fig).__name__})')
        if not fig.axes:
            raise ValueError('fig has nothing drawn on it (no axes): there is no figure to show')


def curves(histories):
    """``{label: history}`` for the training curves of ``helpers.plot.history`` (notebooks 05-09):
    each history a dict of equally long lists ``epoch``, ``loss``, ``test_acc``."""
    mapping(histories, 'histories')
    runs = {None: histories} if 'epoch' in histories else histories
    if not runs:
        raise ValueError('histories is empty: give one history, or {label: history}')
    for label, h in runs.items():
        if not _is_mapping(h):
            raise TypeError(f'histories[{label!r}] must be a history (a dict of epoch, loss, test_acc), '
                            f'got {_short(h)}')
        missing = [key for key in ('epoch', 'loss', 'test_acc') if key not in h]
        if missing:
            raise ValueError(f'history {label!r} has no {", ".join(missing)}')
        lengths = {key: len(ordered(h[key], f'history {label!r}: {key}')) for key in ('epoch', 'loss', 'test_acc')}
        if len(set(lengths.values())) != 1:
            raise ValueError(f'history {label!r}: epoch, loss and test_acc must be equally long, got {lengths}')
    return runs


def spread_runs(runs):
    """``{label: [history, ...]}`` of ``helpers.plot.history_spread`` (notebook 05): at least one
    label, each with at least one history (:func:`curves`), all of one label over the same epochs."""
    mapping(runs, 'runs')
    if not runs:
        raise ValueError('runs is empty: give {label: [history, ...]}')
    for label, hs in runs.items():
        if _is_mapping(hs):
            raise TypeError(f'runs[{label!r}] must be a list of histories (one per seed), got one history')
        hs = ordered(hs, f'runs[{label!r}]')
        if not hs:
            raise ValueError(f'runs[{label!r}] has no history')
        curves(dict(enumerate(hs)))
        if any(list(h['epoch']) != list(hs[0]['epoch']) for h in hs):
            raise ValueError(f'runs[{label!r}]: every history of a label must have the same epochs')
    return runs


def lanes(panels):
    """``{title: {name: [t0, t1, ...]}}`` of ``helpers.plot.step_timelines`` (notebook 08): at
    least one panel, each with at least one lane of at least one time."""
    mapping(panels, 'panels')
    if not panels:
        raise ValueError('panels is empty: give at least one {title: {name: times}}')
    for title, found in panels.items():
        mapping(found, f'panels[{title!r}]')
        if not found:
            raise ValueError(f'panels[{title!r}] has no lane')
        for name, stamps in found.items():
            where = f'panels[{title!r}][{name!r}]'
            stamps = [number(t, f'a time of {where}') for t in ordered(stamps, where)]
            if not stamps:
                raise ValueError(f'panels[{title!r}][{name!r}] has no time')
    return panels


def span_panels(panels):
    """``{title: spans}`` of ``helpers.plot.timelines`` (notebook 10): at least one panel, each
    with at least one span (:func:`spans`)."""
    mapping(panels, 'panels')
    if not panels:
        raise ValueError('panels is empty: give {title: spans}')
    for title, found in panels.items():
        if not spans(found, f'panels[{title!r}]'):
            raise ValueError(f'panels[{title!r}] has no span')
    return panels


def seed_runs(runs, stores=('dist_sync', 'dist_async')):
    """The stored runs of ``benchmarks/dist_sync_async.py`` (notebook 08): a list of dicts, each
    with ``kvstore`` one of ``stores`` and ``ranks`` (at least two, each with ``seconds`` and
    ``test_acc``), at least one run per store."""
    found = ordered(runs, 'runs')
    for i, r in enumerate(found):
        if not _is_mapping(r):
            raise TypeError(f'runs[{i}] must be a run (a dict with kvstore and ranks), got {_short(r)}')
        if 'kvstore' not in r or 'ranks' not in r:
            raise ValueError(f'runs[{i}] must have kvstore and ranks, got keys {sorted(map(str, r))}')
        choice(r['kvstore'], f'runs[{i}] kvstore', stores)
        ranks = ordered(r['ranks'], f'runs[{i}] ranks')
        if len(ranks) < 2:
            raise ValueError(f'runs[{i}] must have ranks 0 and 1, got {len(ranks)} rank(s)')
        for j, rank in enumerate(ranks[:2]):
            mapping(rank, f'runs[{i}] ranks[{j}]')
            for key in ('seconds', 'test_acc'):
                if key not in rank:
                    raise ValueError(f'runs[{i}] ranks[{j}] has no {key}')
                number(rank[key], f'runs[{i}] ranks[{j}] {key}')
    missing = [s for s in stores if not any(r['kvstore'] == s for r in found)]
    if missing:
        raise ValueError(f'runs has no run of {", ".join(missing)}')
    return found


def grid(values, batch):
    """The stored large-batch grid of notebook 09 (``runs`` and ``settings``) and one of its batch
    sizes; returns the sorted batch sizes."""
    mapping(values, 'grid')
    if 'runs' not in values or 'settings' not in values or not values['runs']:
        raise ValueError('grid must be the stored large-batch results (runs and settings): '
                         "helpers.scaling.stored_results('scaling_large_batch')")
    batches = sorted({r['batch'] for r in values['runs']})
    if whole(batch, 'batch', 1) not in batches:
        raise ValueError(f'batch must be one of the batch sizes of the grid, {batches}, got {batch}')
    return batches


def setting_groups(groups, epochs, base_lr, base_batch):
    """The input of ``helpers.plot.grid_seeds`` (notebook 09): ``groups`` a non-empty dict
    ``{(batch, recipe, lr): [run, ...]}`` (``helpers.scaling.grid_by_setting``), every run with a
    ``test_acc`` list; ``epochs`` a whole number >= 1; ``base_lr`` > 0 and ``base_batch`` >= 1 naming a
    fixed-rate setting of the grid, where the rules start. Returns ``(base_lr, base_batch)``."""
    mapping(groups, 'groups')
    if not groups:
        raise ValueError('groups is empty: there is no setting to plot')
    for key, runs in groups.items():
        if not (isinstance(key, tuple) and len(key) == 3):
            raise ValueError(f'groups must be keyed by (batch, recipe, lr), got the key {_short(key)}')
        for r in ordered(runs, f'groups[{key!r}]'):
            if not _is_mapping(r) or not ordered(r.get('test_acc', ()), f'the test_acc of a run of {key!r}'):
                raise ValueError(f'every run of groups[{key!r}] needs a non-empty test_acc, got {_short(r)}')
    whole(epochs, 'epochs', 1)
    base_lr, base_batch = positive(base_lr, 'base_lr'), whole(base_batch, 'base_batch', 1)
    if not any(key[0] == base_batch and key[1] == 'fixed' and key[2] == base_lr for key in groups):
        raise ValueError(f'the grid has no run of batch {base_batch} (base_batch) at the fixed rate {base_lr:g} '
                         f'(base_lr): the rules start there')
    return base_lr, base_batch


def speedups(values):
    """``{(model, link): [speed-up at k = 1, 2, ...]}`` (notebook 09)."""
    mapping(values, 'speedup')
    if not values:
        raise ValueError('speedup is empty: give {(model, link): [speed-ups]}')
    for key, curve in values.items():
        if not isinstance(key, tuple) or len(key) != 2:
            raise TypeError(f'speedup keys must be pairs (model, link), got {key!r}')
        curve = [number(v, f'speedup[{key!r}]', 0) for v in ordered(curve, f'speedup[{key!r}]')]
        if not curve:
            raise ValueError(f'speedup[{key!r}] is empty')


def pushpull_rows(rows, labels):
    """The rows of ``measure_pushpull`` and a label for every size they plot (notebook 09)."""
    rows = ordered(rows, 'rows')
    mapping(labels, 'labels')
    for i, r in enumerate(rows):
        if not _is_mapping(r):
            raise TypeError(f'rows[{i}] must be a row (a dict) of measure_pushpull, got {_short(r)}')
        if r.get('predicted') and r.get('size', 0) > 1 and r['size'] not in labels:
            raise ValueError(f'labels has no label for size {r["size"]} (rows[{i}])')


def sweep_times(table, name, sizes):
    """Seconds per ``(algorithm, k, nbytes)`` of an allreduce sweep (``helpers.plot.allreduce_sweep``,
    notebook 04): a non-empty dict, every key a (name, whole k >= 1, whole size) triple, every value a
    number >= 0, and every algorithm and k measured at every one of ``sizes``."""
    mapping(table, name)
    if not table:
        raise ValueError(f'{name} is empty: there is nothing to draw')
    for key, seconds in table.items():
        if not (isinstance(key, tuple) and len(key) == 3 and isinstance(key[0], str)):
            raise TypeError(f'{name} must map (algorithm, k, bytes) to seconds, got the key {_short(key)}')
        whole(key[1], f'{name} key {key!r}: k', 1, MAX_DEVICES)
        whole(key[2], f'{name} key {key!r}: bytes', 0)
        number(seconds, f'{name}[{key!r}]', 0)
    missing = [(a, k, n) for a, k in {(a, k) for a, k, _ in table} for n in sizes if (a, k, n) not in table]
    if missing:
        raise ValueError(f'{name} has no time for {missing[0]}: every algorithm and k needs every size')
    return table
