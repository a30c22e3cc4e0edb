"""A pytest plugin (imported by ``tests/conftest.py``): which tests must run in one process, one
after the other, when ``make test`` spreads the suite over several with pytest-xdist
(``-n 3 --dist loadgroup``).

* A notebook is one group: nbval runs its cells in order, in one kernel.
* A test file is one group: its module fixtures (a built book, a student edition) are made once.
* The browser tests are one group: ``test_browser.py`` and ``test_accessibility.py`` both run
  ``make slides`` and ``make book`` into ``build/``, which two processes must not write at once.
* The parameter-server jobs and network namespaces are one group (notebooks 08 and 09 and their
  solutions, ``test_dist.py``, ``test_netns.py``, ``test_scaling.py``): they are safe side by side
  (every job on a loopback address of its own, namespaces named by their owner), but the capped
  links time what crosses them, and two of them at once would share the cores that move the bytes.

WHY a scheduler of our own and not ``xdist_group`` marks: pytest-xdist 3.8 implements
``--dist loadgroup`` by renaming each marked item (``item._nodeid``), which pytest 9 no longer
reads, so under pytest 9 every test ran as a group of its own and a notebook's cells were spread
over workers (each failing on the names the others defined). Grouping by node id in the
scheduler (xdist's ``LoadScopeScheduling``, whose ``_split_scope`` we override) works with every
pytest. Without ``-n`` nothing here runs.

WHY the longest groups first: the scheduler hands out groups in collection order, and a worker
that takes a group of several minutes near the end leaves the other idle (`tests/` collects before
`notebooks/`, so the notebooks, the longest groups after the network jobs and the browser tests,
came last). Longest first, then the notebooks, then the unit test files, so that many short groups
fill in at the end: the usual greedy rule for balancing jobs over machines.
"""
import os

import pytest

SHARED_BUILD = {'tests/test_browser.py', 'tests/test_accessibility.py'}
NETWORK = {'tests/test_dist.py', 'tests/test_netns.py', 'tests/test_scaling.py'}
NETWORK_NOTEBOOKS = ('08-', '09-')


def group(nodeid):
    """The group of the test ``nodeid`` ('tests/test_x.py::name', 'notebooks/NN-x.ipynb::Cell 3')."""
    path = nodeid.split('::', 1)[0]
    if path in SHARED_BUILD:
        return 'browser'
    if path in NETWORK or (path.endswith('.ipynb') and os.path.basename(path).startswith(NETWORK_NOTEBOOKS)):
        return 'network'
    return path


# The groups that take minutes, longest first (measured by make test's --durations).
FIRST = ('network', 'browser')


def rank(nodeid):
    """Where the group of ``nodeid`` goes in the queue: :data:`FIRST`, then notebooks, then the rest."""
    name = group(nodeid)
    if name in FIRST:
        return FIRST.index(name)
    return len(FIRST) + (0 if name.endswith('.ipynb') else 1)


def pytest_collection_modifyitems(session, config, items):
    """With ``--dist loadgroup``: the items sorted by :func:`rank`, each group's own order kept."""
    if getattr(config.option, 'dist', 'no') == 'loadgroup':
        items.sort(key=lambda item: rank(item.nodeid))


@pytest.hookimpl(optionalhook=True)     # a hook of pytest-xdist: unknown to pytest without it
def pytest_xdist_make_scheduler(config, log):
    """With ``--dist loadgroup``: whole groups (:func:`group`) to a worker, in collection order."""
    if config.getoption('dist') != 'loadgroup':
        return None
    from xdist.scheduler import LoadScopeScheduling

    class GroupScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid):
            return group(nodeid)

    return GroupScheduling(config, log)
