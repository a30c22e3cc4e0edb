import time

import mxnet as mx
import pytest

from helpers import source, timing


def test_time_it_waits_for_the_engine():
    m = mx.nd.random.uniform(shape=(600, 600))
    work = lambda: [mx.nd.dot(m, m) for _ in range(8)]
    assert timing.time_it(work, repeat=3) > 3 * timing.time_it(work, repeat=3, sync=False)


def test_time_it_is_the_median():
    delays = iter([0.0, 0.05, 0.0, 0.0])  # one warm-up, then a slow run among fast ones
    assert timing.time_it(lambda: time.sleep(next(delays)), repeat=3) < 0.04


@pytest.mark.parametrize('kwargs, error', [(dict(repeat=0), ValueError), (dict(repeat=1.5), TypeError),
                                           (dict(warmup=-1), ValueError)])
def test_time_it_bad_arguments(kwargs, error):
    with pytest.raises(error):
        timing.time_it(lambda: None, **kwargs)
    with pytest.raises(TypeError):
        timing.time_it(42)


def test_copy_times_and_alpha_beta_fit_recovers_a_known_line():
    sizes = [4096, 65536, 1 << 20]
    secs = timing.copy_times(mx.cpu(0), mx.cpu(1), sizes, repeat=2)
    assert len(secs) == 3 and all(t > 0 for t in secs)
    with pytest.raises(ValueError, match='multiple'):
        timing.copy_times(mx.cpu(0), mx.cpu(1), [6])
    alpha, beta = timing.fit_alpha_beta([1e3, 1e5, 1e7], [10e-6 + n / 5e9 for n in (1e3, 1e5, 1e7)])
    assert alpha == pytest.approx(10e-6, rel=1e-6) and 1 / beta == pytest.approx(5e9, rel=1e-6)
    with pytest.raises(ValueError):
        timing.fit_alpha_beta([1], [1])


def test_copy_times_times_small_copies_more_often(monkeypatch):
    runs = []
    monkeypatch.setattr(timing, 'time_it', lambda fn, repeat: runs.append(repeat) or 1.0)
    timing.copy_times(mx.cpu(0), mx.cpu(1), [4096, 1 << 16, 1 << 20, 1 << 24], repeat=5)
    assert runs == [100, 64, 5, 5]


def test_show_displays_the_real_source():
    code = source.show(timing.time_it)
    assert code.data.startswith('def time_it(') and 'mx.nd.waitall()' in code.data
    with pytest.raises(TypeError):
        source.show(42)
    with pytest.raises(ValueError):
        source.show()


@pytest.mark.parametrize('a, b, verdict', [
    ([2.0, 2.0, 2.1, 2.0, 1.9], [1.0, 1.0, 1.0, 1.05, 0.95], 'shown'),        # quiet: 2x, claim 1.3
    ([1.1, 1.1, 1.1, 1.1, 1.1], [1.0, 1.0, 1.0, 1.0, 1.0], 'refuted'),        # quiet: 1.1x is not > 1.3
    ([2.0, 0.8, 2.5, 1.2, 3.0], [1.0, 2.0, 0.7, 1.5, 1.1], 'too busy'),       # noise straddles 1.3
])
def test_a_timing_relation_is_asserted_only_where_the_run_can_show_it(a, b, verdict, capsys):
    from helpers.timing import Relation
    rel = Relation(a, b, 1.3, 'slow / fast')
    assert rel.verdict == verdict
    if verdict == 'refuted':
        with pytest.raises(AssertionError, match='NOT shown'):
            rel.check()
    else:
        rel.check()
        assert ('too busy' in capsys.readouterr().out) == (verdict == 'too busy')


def test_relation_measures_both_sides_and_refuses_bad_input():
    import time
    from helpers.timing import relation
    rel = relation(lambda: time.sleep(0.02), lambda: time.sleep(0.001), 3, repeat=5, what='sleep 20 / 1 ms')
    assert rel.ratio > 3 and rel.verdict in ('shown', 'too busy')
    with pytest.raises(TypeError, match='callables'):
        relation(1, 2, 1.5)
    with pytest.raises(ValueError, match='repeat'):
        relation(lambda: 0, lambda: 0, 1.5, repeat=2)
    with pytest.raises(ValueError, match='at_least'):
        relation(lambda: 0, lambda: 0, 0)
