"""helpers.scaling: the large-batch recipes, the epoch-time model, the push/pull prediction, and the
parameter server across two network namespaces -- which leaves nothing behind, also when it fails
(notebook 09).

The namespace tests are skipped, saying why, where namespaces cannot be made. They keep the job
small (one job here; the notebook runs the full grid) and assert bytes, which the kernel counts
exactly, and only lower bounds on time (a cap cannot be beaten; a busy machine only slows).
"""
import math
import os

import mxnet as mx
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from helpers import costmodel, dist, lessoncheck, netns, scaling

OK, WHY = netns.available()
needs_netns = pytest.mark.skipif(not OK, reason=f'network namespaces not available: {WHY}')


def ours():
    return [n for n in netns.namespaces() if n.startswith(f'{netns.PREFIX}-{os.getpid()}-')]


# --------------------------------------------------------------------------- recipes
@pytest.mark.parametrize('case', lessoncheck.RECIPE_CASES)
def test_each_recipe_gives_its_rate_and_ramp(case):
    """helpers.lessoncheck's law (the readers' check_lr_recipe): fixed keeps base_lr, linear scales it by
    batch_size / base_batch, warmup adds a ramp from base_lr to it where there is one to take."""
    lessoncheck.law_lr_recipe(scaling.lr_recipe, **case)


@given(st.sampled_from([64, 128, 256, 512, 1024, 2048, 4096]))
def test_the_linear_rule_keeps_rate_per_example_constant(batch):
    lr = scaling.lr_recipe('linear', batch, 0)['learning_rate']
    assert lr / batch == pytest.approx(0.1 / 64)


def test_warmup_ramps_from_the_base_rate_to_the_scaled_rate_then_stays():
    settings_ = scaling.lr_recipe('warmup', 1024, 20)
    ramp = settings_['lr_scheduler']
    assert settings_['learning_rate'] == pytest.approx(1.6)
    assert ramp(0) == pytest.approx(0.1)                      # MXNet counts updates from 1
    assert ramp(10) == pytest.approx(0.1 + 1.5 * 10 / 20)
    assert ramp(20) == ramp(10_000) == pytest.approx(1.6)


@pytest.mark.parametrize('case', lessoncheck.WARMUP_CASES)
def test_warmup_is_mxnets_ramp_then_a_constant_rate(case):
    """notebook 09's WarmUp gives, update by update, the rates of MXNet's FactorScheduler with the same
    warm-up and a step it never reaches (what the stored grid was trained with): helpers.lessoncheck's law."""
    lessoncheck.law_warmup_like_mxnet(scaling.WarmUp, **case)


def test_unknown_recipe_is_refused():
    for recipe in ('sqrt', 'Linear'):
        lessoncheck.law_lr_recipe_refuses_an_unknown_recipe(scaling.lr_recipe, recipe)


def test_warmup_schedule_reaches_the_optimizer():
    """The Trainer applies the scheduled rate: after one step the update used the ramp's value."""
    opts = scaling.lr_recipe('warmup', 256, 4)
    net = mx.gluon.nn.Dense(1, in_units=1, use_bias=False)
    net.initialize(mx.init.Zero())
    trainer = mx.gluon.Trainer(net.collect_params(), 'sgd', opts)
    with mx.autograd.record():
        loss = net(mx.nd.ones((1, 1))).sum() - 0      # gradient of w is 1
    loss.backward()
    trainer.step(1)
    w = net.weight.data().asscalar()
    assert w == pytest.approx(-opts['lr_scheduler'](1), rel=1e-6)
    assert -w < opts['learning_rate']                 # still warming up


def test_train_recipe_history_and_divergence():
    devices = [mx.cpu(0)]
    h = scaling.train_recipe('linear', 128, devices, 1, n_train=512, n_test=256)
    assert h['batch'] == 128 and h['steps'] == 4 and h['lr'] == pytest.approx(0.2)
    assert h['epoch'] == [1] and 0 <= h['test_acc'][0] <= 1 and not h['diverged']
    bad = scaling.train_recipe('fixed', 64, devices, 3, n_train=256, n_test=128, base_lr=1e4)
    assert bad['diverged'] and len(bad['epoch']) < 3 and not math.isfinite(bad['loss'][-1])


# --------------------------------------------------------------------------- epoch-time model
@pytest.mark.parametrize('case', lessoncheck.EPOCH_CASES)
def test_epoch_time_is_the_formula(case):
    """helpers.lessoncheck's law (the readers' check_epoch_time), on its cases: one device, several, arrays."""
    lessoncheck.law_epoch_time(scaling.epoch_time, **case)


@settings(max_examples=50, deadline=None)
@given(st.integers(2, 64), st.floats(0, 1e-2), st.floats(1e-7, 1e-3), st.floats(1e3, 1e9))
def test_epoch_time_is_compute_share_plus_ring_allreduce(k, overhead, per_example, nbytes):
    n, batch, alpha, bw = 60000, 64 * k, 1e-5, 1e10
    lessoncheck.law_epoch_time(scaling.epoch_time, k, n, batch, overhead, per_example, nbytes, alpha, bw)
    t = scaling.epoch_time(k, n, batch, overhead, per_example, nbytes, alpha, bw)
    assert t >= math.ceil(n / batch) * 64 * per_example             # never faster than the compute
    assert t == pytest.approx(math.ceil(n / batch) * (overhead + 64 * per_example
                                                      + costmodel.cost_ring(k, nbytes, alpha, bw)))


def test_epoch_time_takes_arrays_of_k():
    ks = np.array([1, 2, 4, 8])
    t = scaling.epoch_time(ks, 60000, 256 * ks, 0.0, 1e-4, 44e6, 1e-5, 15e9)
    assert t.shape == (4,) and np.all(np.diff(t) < 0)


# --------------------------------------------------------------------------- push/pull prediction
@pytest.mark.parametrize('case', lessoncheck.PUSHPULL_CASES)
def test_pushpull_prediction_is_the_formula(case):
    """helpers.lessoncheck's law (the readers' check_pushpull_step)."""
    lessoncheck.law_pushpull_step(scaling.pushpull_step, **case)


def test_compression_shrinks_a_large_step_almost_twofold():
    n, rate, alpha = 10 * 2**20, 100e6, 1e-3
    plain = scaling.pushpull_step(n, rate, alpha)
    packed = scaling.pushpull_step(n, rate, alpha, compression=True)
    assert 1.8 < plain / packed < 1.9                          # 2 / (1 + 1/16) = 1.88 for large n


def test_reached_link_is_the_prediction_solved_for_the_rate():
    n, rate, alpha = 4 * 2_621_440, 1e9, 2e-4
    step = {'nbytes': n, 'median': scaling.pushpull_step(n, rate, alpha)}   # push and pull, n bytes each
    link = scaling.reached_link(step, alpha)
    assert link['alpha'] == alpha and link['bandwidth'] == pytest.approx(rate / 8 * scaling.FRAME_PAYLOAD)


# --------------------------------------------------------------------------- the real network
@needs_netns
def test_pushpull_across_namespaces_counts_bytes_and_leaves_nothing():
    """With 2-bit compression, worker 1 sends 1/16 of the bytes and receives all of them; under a
    20 Mbit/s cap the pull of LeNet's 247 KB alone takes at least 80 ms."""
    size = 61706
    result = scaling.measure_pushpull([1, size], [20e6], compression=True, steps=2, timeout=240)
    row = next(r for r in result.rows if r['size'] == size)
    assert row['received'] >= 4 * size and row['sent'] < 4 * size / 8
    assert row['median'] > 0.08, row
    tiny = next(r for r in result.rows if r['size'] == 1)
    assert len(tiny['seconds']) == 20 and tiny['median'] < 1.0
    assert ours() == []


@needs_netns
def test_a_failing_job_still_removes_namespaces_and_processes():
    """A job stopped by its timeout (before its workers even start measuring) leaves no namespace
    and no process: the job's own stop, then the namespaces' sweep."""
    with pytest.raises(dist.DistJobTimeout) as info:
        scaling.measure_pushpull([2**20], [1e6], steps=100, timeout=3)
    assert dist.job_processes(info.value.jobdir) == []
    assert ours() == []
