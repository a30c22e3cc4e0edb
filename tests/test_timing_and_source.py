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
