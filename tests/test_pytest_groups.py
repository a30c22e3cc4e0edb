"""tools.pytest_groups: what `make test` keeps in one pytest-xdist worker."""
from tools.pytest_groups import group


def test_a_notebook_and_a_test_file_are_each_one_group():
    assert group('notebooks/03-split-and-load-by-hand.ipynb::Cell 0') == \
        group('notebooks/03-split-and-load-by-hand.ipynb::Cell 12') == 'notebooks/03-split-and-load-by-hand.ipynb'
    assert group('tests/test_split.py::test_a') == group('tests/test_split.py::test_b[1-2]') == 'tests/test_split.py'
    assert group('tests/test_split.py::test_a') != group('tests/test_comm.py::test_a')


def test_the_browser_tests_share_a_group_since_both_build_into_build():
    assert group('tests/test_browser.py::test_x') == group('tests/test_accessibility.py::test_y') == 'browser'


def test_the_network_jobs_share_a_group():
    names = ['tests/test_dist.py::t', 'tests/test_netns.py::t', 'tests/test_scaling.py::t',
             'notebooks/08-across-machines.ipynb::Cell 3', 'notebooks/solutions/09-scaling-solutions.ipynb::Cell 1']
    assert {group(n) for n in names} == {'network'}
    assert group('notebooks/10-overlap-and-buckets.ipynb::Cell 1') != 'network'


def test_the_longest_groups_are_queued_first_and_the_unit_tests_last():
    from tools.pytest_groups import rank
    order = ['tests/test_split.py::t', 'notebooks/05-lenet-from-scratch-on-k-devices.ipynb::Cell 3',
             'tests/test_browser.py::t', 'notebooks/08-across-machines.ipynb::Cell 1', 'tests/test_dist.py::t']
    assert sorted(order, key=rank) == ['notebooks/08-across-machines.ipynb::Cell 1', 'tests/test_dist.py::t',
                                       'tests/test_browser.py::t',
                                       'notebooks/05-lenet-from-scratch-on-k-devices.ipynb::Cell 3',
                                       'tests/test_split.py::t']
