"""helpers.train (notebooks 05, 06): SGD is the formula, k devices take the step one device takes
(to the last bit between replicas, to rounding between 1 and k devices), runs repeat bit for bit,
the loops keep their history, and bad input is refused before any work."""
import json
import math
import subprocess
import sys

import numpy as np
import mxnet as mx
import pytest
from hypothesis import given, settings, strategies as st
from mxnet import gluon, nd

from conftest import ROOT
from helpers import lessoncheck
from helpers.lessoncheck import tiny_data   # the toy problem the checks train on too
from helpers.data import ArrayLoader
from helpers.models import init_lenet_params, lenet, replicate_params
from helpers.train import (evaluate_accuracy, max_gap, scratch_net, sgd, train, train_batch,
                           train_batch_scratch, train_scratch)

DEVICES = [mx.cpu(0), mx.cpu(1)]
FOUR = [mx.cpu(i) for i in range(4)]


def loaders(batch_size=32, seed=0):
    X, y = tiny_data()
    Xt, yt = tiny_data(64, seed=1)
    return (ArrayLoader(X, y, batch_size, shuffle=True, seed=seed),
            ArrayLoader(Xt, yt, batch_size))


def scratch_steps(devices, dtype, n_steps, batch=33, seed=0):
    """``n_steps`` of train_batch_scratch on the same batches; returns the replicas."""
    params = [p.astype(dtype) for p in init_lenet_params(seed)]
    reps = [replicate_params(params, d) for d in devices]
    X, y = tiny_data(batch * n_steps)
    for i in range(n_steps):
        Xb = nd.array(X[i * batch:(i + 1) * batch], dtype=dtype)
        train_batch_scratch(Xb, nd.array(y[i * batch:(i + 1) * batch], dtype='int32'), reps, devices, 0.1)
    return reps


# ------------------------------------------------------------------ SGD

@settings(max_examples=25, deadline=None)
@given(lr=st.floats(1e-4, 10), batch_size=st.integers(1, 512), seed=st.integers(0, 2 ** 16))
def test_sgd_is_w_minus_lr_times_grad_over_batch_size(lr, batch_size, seed):
    lessoncheck.law_sgd_formula(sgd, lr, batch_size, seed)        # the law the readers' check_sgd sweeps


def test_sgd_updates_in_place_on_the_parameters_device():
    p = nd.ones((2,), ctx=mx.cpu(1))
    p.attach_grad()
    p.grad[:] = 4
    before = p
    sgd([p], 0.5, 2)
    assert p is before and p.context == mx.cpu(1)
    np.testing.assert_array_equal(p.asnumpy(), [0.0, 0.0])


# ------------------------------------------------------------------ the step by hand (notebook 05)

@pytest.mark.parametrize('devices', [DEVICES, FOUR], ids=['k=2', 'k=4'])
def test_k_devices_equal_one_device_in_float64_after_several_steps(devices):
    one = scratch_steps(devices[:1], 'float64', 5)
    many = scratch_steps(devices, 'float64', 5)          # 33 examples: an uneven split
    assert max_gap(one[0], many[0]) < 1e-12
    for replica in many[1:]:
        assert max_gap(replica, many[0]) == 0             # replicas: identical to the last bit


@pytest.mark.parametrize('k, n', [(2, 9), (3, 10), (4, 33)])
def test_one_step_on_k_devices_is_one_sgd_step_on_the_whole_batch(k, n):
    """helpers.lessoncheck's law (the readers' check_train_batch_scratch): against autograd on one device."""
    lessoncheck.law_step_is_sgd_on_the_batch(train_batch_scratch, k, n)


def test_k_devices_equal_one_device_to_rounding_in_float32_after_one_step():
    one, many = scratch_steps(DEVICES[:1], 'float32', 1), scratch_steps(DEVICES, 'float32', 1)
    assert 0 <= max_gap(one[0], many[0]) < 1e-6
    assert max_gap(many[0], many[1]) == 0


def test_step_leaves_the_allreduced_gradient_on_every_device_and_returns_loss_sums():
    params = init_lenet_params(0)
    one, many = [replicate_params(params, DEVICES[0])], [replicate_params(params, d) for d in DEVICES]
    X, y = tiny_data(32)
    X, y = nd.array(X), nd.array(y, dtype='int32')
    s1 = train_batch_scratch(X, y, one, DEVICES[:1], 0.1)
    s2 = train_batch_scratch(X, y, many, DEVICES, 0.1)
    assert [s.context for s in s2] == DEVICES            # per-device sums, on their devices
    np.testing.assert_allclose(sum(s.asscalar() for s in s2), s1[0].asscalar(), rtol=1e-5)
    for a, b, c in zip(one[0], *many):
        np.testing.assert_array_equal(b.grad.asnumpy(), c.grad.asnumpy())
        np.testing.assert_allclose(a.grad.asnumpy(), b.grad.asnumpy(), rtol=1e-4, atol=1e-5)


def test_same_devices_same_seed_same_bits():
    """Two separate processes, same k, seed and data: identical weights (notebook 05's claim)."""
    code = ('import hashlib, mxnet as mx, sys; sys.path.insert(0, "tests"); '
            'from test_train import scratch_steps; '
            'reps = scratch_steps([mx.cpu(0), mx.cpu(1)], "float32", 4); '
            'print(hashlib.sha256(b"".join(p.asnumpy().tobytes() for r in reps for p in r)).hexdigest())')
    digests = [subprocess.run([sys.executable, '-c', code], cwd=ROOT, capture_output=True, text=True,
                              timeout=120, check=True).stdout.strip() for _ in range(2)]
    assert len(digests[0]) == 64 and digests[0] == digests[1]


# ------------------------------------------------------------------ the step with Gluon (notebook 06)

def test_gluon_k_devices_equal_one_device_and_replicas_are_identical():
    X, y = tiny_data(33)
    X, y = nd.array(X), nd.array(y, dtype='int32')
    nets = {}
    for k in (1, 2):
        net = lenet(DEVICES[:k], seed=0)
        trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.1})
        for _ in range(2):
            train_batch(net, X, y, trainer, DEVICES[:k])
        nets[k] = net
    for p1, p2 in zip(nets[1].collect_params().values(), nets[2].collect_params().values()):
        w0, w1 = (p2.data(d).asnumpy() for d in DEVICES)
        np.testing.assert_array_equal(w0, w1)
        np.testing.assert_allclose(p1.data(DEVICES[0]).asnumpy(), w0, rtol=0, atol=1e-5)


def test_gluon_step_divides_by_the_whole_batch():
    X, y = tiny_data(32)
    X, y = nd.array(X), nd.array(y, dtype='int32')
    net = lenet(DEVICES, seed=0)
    trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.1})
    train_batch(net, X, y, trainer, DEVICES)
    assert trainer._optimizer.rescale_grad == pytest.approx(1 / 32)


def test_weighted_split_takes_the_same_step():
    X, y = tiny_data(32)
    X, y = nd.array(X), nd.array(y, dtype='int32')
    nets = [lenet(DEVICES, seed=0) for _ in range(2)]
    for net, weights in zip(nets, (None, [3, 1])):
        trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.1})
        sums = train_batch(net, X, y, trainer, DEVICES, weights)
        assert len(sums) == 2
    for p, q in zip(*(n.collect_params().values() for n in nets)):
        np.testing.assert_allclose(p.data(DEVICES[0]).asnumpy(), q.data(DEVICES[0]).asnumpy(), atol=1e-5)


# ------------------------------------------------------------------ evaluation, loops, history

def test_evaluate_accuracy_is_the_same_on_1_and_k_devices_for_a_block_and_for_scratch_params():
    params = init_lenet_params(0)
    net = lenet(DEVICES, seed=0)
    for p, q in zip(net.collect_params().values(), params):
        p.set_data(q)
    X, y = tiny_data(70)
    data = ArrayLoader(X, y, 32)                      # last batch: 6 examples
    reps = [replicate_params(params, d) for d in FOUR]
    accs = {evaluate_accuracy(net, data, DEVICES), evaluate_accuracy(net, data, DEVICES[:1]),
            evaluate_accuracy(scratch_net(reps, FOUR), data, FOUR),
            evaluate_accuracy(scratch_net(reps[:1], FOUR[:1]), data, FOUR[:1])}
    assert len(accs) == 1 and 0 <= accs.pop() <= 1


def test_scratch_loop_learns_keeps_history_and_identical_replicas():
    train_iter, test_iter = loaders()
    device_params, h = train_scratch(init_lenet_params(0), train_iter, test_iter, DEVICES, [0.3, 0.3, 0.1],
                                     3, progress=False)
    assert set(h) == {'epoch', 'loss', 'test_acc', 'seconds'} and h['epoch'] == [1, 2, 3]
    assert all(len(v) == 3 for v in h.values()) and all(s > 0 for s in h['seconds'])
    assert h['loss'][-1] < h['loss'][0]
    assert max_gap(*device_params) == 0 and device_params[1][0].context == DEVICES[1]


def test_loops_run_the_step_and_evaluation_they_are_given():
    calls = []

    def step(X, y, device_params, devices, lr):
        calls.append(len(y))
        return train_batch_scratch(X, y, device_params, devices, lr)

    train_iter, test_iter = loaders()
    _, h = train_scratch(init_lenet_params(0), train_iter, test_iter, DEVICES, 0.1, 1, progress=False,
                         step=step, evaluate=lambda net, data, devices: 0.5)
    assert sum(calls) == 128 and h['test_acc'] == [0.5]
    always_0 = lambda X, params: nd.one_hot(nd.zeros(len(X), ctx=X.context), 10)   # predicts class 0
    _, h = train_scratch(init_lenet_params(0), train_iter, test_iter, DEVICES, 0.1, 1, progress=False,
                         forward=always_0)
    labels = np.concatenate([y.asnumpy() for _, y in test_iter])
    assert h['test_acc'] == [pytest.approx((labels == 0).mean())]     # evaluated with forward
    net = lenet(DEVICES)
    trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.1})
    seen = []
    train(net, train_iter, test_iter, DEVICES, trainer, 1, progress=False,
          step=lambda *args: seen.append(1) or train_batch(*args))
    assert len(seen) == len(train_iter)


def test_gluon_loop_learns_and_prints_one_line_per_epoch(capsys):
    train_iter, test_iter = loaders()
    net = lenet(DEVICES, seed=0)
    trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.3})
    h = train(net, train_iter, test_iter, DEVICES, trainer, 3)
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 3 and lines[0].startswith('epoch 1/3: loss ') and lines[2].endswith(' s')
    assert h['loss'][-1] < h['loss'][0] and 0 <= h['test_acc'][-1] <= 1
    json.dumps(h)                                     # plain numbers: a history can be saved


# ------------------------------------------------------------------ bad input

def test_bad_input_is_refused_before_any_work():
    params = init_lenet_params(0)
    X, y = nd.zeros((4, 1, 28, 28)), nd.zeros((4,), dtype='int32')
    on_cpu0 = [replicate_params(params, mx.cpu(0)) for _ in DEVICES]
    with pytest.raises(ValueError, match=r'replica 1 lives on cpu\(0\)'):
        train_batch_scratch(X, y, on_cpu0, DEVICES, 0.1)
    assert max_gap(on_cpu0[0], params) == 0           # nothing was updated
    with pytest.raises(ValueError, match='one replica per device'):
        train_batch_scratch(X, y, on_cpu0[:1], DEVICES, 0.1)
    with pytest.raises(TypeError, match='not an NDArray'):
        train_batch_scratch(X, y, [[p.asnumpy() for p in params]], DEVICES[:1], 0.1)
    with pytest.raises(TypeError, match='list of contexts'):
        train_batch_scratch(X, y, on_cpu0[:1], mx.cpu(0), 0.1)
    reps = [replicate_params(params, d) for d in DEVICES]
    with pytest.raises(ValueError, match='would get no example'):
        train_batch_scratch(X[:1], y[:1], reps, DEVICES, 0.1)
    with pytest.raises(ValueError, match='same first dimension'):
        train_batch_scratch(X, y[:3], reps, DEVICES, 0.1)


def test_gluon_step_with_a_batch_smaller_than_the_devices_is_refused():
    net = lenet(DEVICES)
    trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.1})
    with pytest.raises(ValueError, match='would get no example'):
        train_batch(net, nd.zeros((1, 1, 28, 28)), nd.zeros((1,), dtype='int32'), trainer, DEVICES)


@pytest.mark.parametrize('lr,error', [(0, ValueError), (-0.1, ValueError), (math.nan, ValueError),
                                      (math.inf, ValueError), ('0.1', TypeError), (True, TypeError),
                                      (None, TypeError), ([0.3, 0], ValueError), ([0.3], ValueError)])
def test_scratch_learning_rates_must_be_positive_numbers_one_per_epoch(lr, error):
    train_iter, test_iter = loaders()
    with pytest.raises(error, match='lr|learning rates'):
        train_scratch(init_lenet_params(0), train_iter, test_iter, DEVICES, lr, 2, progress=False)


def test_gluon_loop_refuses_bad_arguments():
    train_iter, test_iter = loaders()
    net = lenet(DEVICES)
    trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.1})
    with pytest.raises(TypeError, match='gluon.Trainer'):
        train(net, train_iter, test_iter, DEVICES, 'sgd', 1)
    with pytest.raises(ValueError, match='num_epochs'):
        train(net, train_iter, test_iter, DEVICES, trainer, 0)
    with pytest.raises(ValueError, match=r'not on \[cpu\(2\)\]'):
        train(net, train_iter, test_iter, DEVICES + [mx.cpu(2)], trainer, 1)
    with pytest.raises(ValueError, match='distinct'):
        train(net, train_iter, test_iter, [mx.cpu(0), mx.cpu(0)], trainer, 1)

