"""helpers.train on tiny data: loss goes down, k devices take the same step as one, bad input is
refused clearly (notebooks 05, 06)."""
import math

import numpy as np
import mxnet as mx
import pytest
from mxnet import gluon, init, nd

from helpers.data import ArrayLoader
from helpers.models import init_lenet_params, lenet, lenet_scratch, replicate_params
from helpers.train import (check_lr, evaluate_accuracy, plot_history, train, train_batch,
                           train_batch_scratch, train_scratch)

DEVICES = [mx.cpu(0), mx.cpu(1)]


def tiny_data(n=128, seed=0):
    """A learnable toy problem with Fashion-MNIST's shapes: the class is where a bright patch sits."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 10, n).astype(np.int32)
    X = rng.uniform(0, 0.2, (n, 1, 28, 28)).astype(np.float32)
    for i, c in enumerate(y):
        r, col = divmod(int(c), 5)
        X[i, 0, 4 + 10 * r: 12 + 10 * r, 1 + 5 * col: 6 + 5 * col] += 0.8
    return X, y


def loaders(batch_size=32, seed=0):
    X, y = tiny_data()
    Xt, yt = tiny_data(64, seed=1)
    return (ArrayLoader(X, y, batch_size, shuffle=True, seed=seed),
            ArrayLoader(Xt, yt, batch_size))


def gluon_lenet(devices, seed=0):
    mx.random.seed(seed)
    net = lenet()
    net.initialize(init.Xavier(), ctx=devices)
    net(nd.zeros((1, 1, 28, 28), ctx=devices[0]))
    return net


# ------------------------------------------------------------------ scratch (notebook 05)

def test_scratch_loss_decreases_and_replicas_stay_identical():
    train_iter, test_iter = loaders()
    device_params, h = train_scratch(init_lenet_params(0), train_iter, test_iter, DEVICES, 0.3, 4,
                                     progress=False, plot=False)
    assert set(h) == {'epoch', 'loss', 'train_acc', 'test_acc', 'seconds'}
    assert h['epoch'] == [1, 2, 3, 4] and all(len(v) == 4 for v in h.values())
    assert h['loss'][-1] < h['loss'][0]
    for a, b in zip(*device_params):
        assert a.context == DEVICES[0] and b.context == DEVICES[1]
        np.testing.assert_array_equal(a.asnumpy(), b.asnumpy())


@pytest.mark.parametrize('dtype,tol', [('float64', 1e-12), ('float32', 1e-5)])
def test_scratch_k_device_step_equals_1_device_step(dtype, tol):
    params = [p.astype(dtype) for p in init_lenet_params(0)]
    one = [replicate_params(params, DEVICES[0])]
    two = [replicate_params(params, d) for d in DEVICES]
    X, y = tiny_data(33)                       # odd size: an uneven split
    X, y = nd.array(X, dtype=dtype), nd.array(y, dtype='int32')
    for _ in range(2):
        m1 = train_batch_scratch(X, y, one, DEVICES[:1], 0.1)
        m2 = train_batch_scratch(X, y, two, DEVICES, 0.1)
    for a, b, c in zip(one[0], *two):
        np.testing.assert_allclose(a.asnumpy(), b.asnumpy(), rtol=0, atol=tol)
        np.testing.assert_array_equal(b.asnumpy(), c.asnumpy())
    # the metrics of the step: loss sum and correct predictions over the whole batch
    s1 = sum(m.asnumpy() for m in m1)
    s2 = sum(m.asnumpy() for m in m2)
    np.testing.assert_allclose(s1, s2, rtol=1e-5)


# ------------------------------------------------------------------ Gluon (notebook 06)

def test_gluon_k_device_step_equals_1_device_step():
    X, y = tiny_data(32)
    X, y = nd.array(X), nd.array(y, dtype='int32')
    loss = gluon.loss.SoftmaxCrossEntropyLoss()
    nets = {}
    for k in (1, 2):
        net = gluon_lenet(DEVICES[:k], seed=0)
        trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.1})
        for _ in range(2):
            train_batch(net, X, y, loss, trainer, DEVICES[:k])
        nets[k] = net
    for p1, p2 in zip(nets[1].collect_params().values(), nets[2].collect_params().values()):
        w0, w1 = (p2.data(d).asnumpy() for d in DEVICES)
        np.testing.assert_array_equal(w0, w1)
        np.testing.assert_allclose(p1.data(DEVICES[0]).asnumpy(), w0, rtol=0, atol=1e-5)


def test_gluon_train_loss_decreases():
    train_iter, test_iter = loaders()
    net = gluon_lenet(DEVICES)
    trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.3})
    h = train(net, train_iter, test_iter, DEVICES, trainer, 4, progress=False, plot=False)
    assert h['loss'][-1] < h['loss'][0]
    assert 0 <= h['test_acc'][-1] <= 1 and all(s > 0 for s in h['seconds'])


def test_train_prints_one_line_per_epoch(capsys):
    train_iter, test_iter = loaders()
    net = gluon_lenet(DEVICES)
    trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.1})
    train(net, train_iter, test_iter, DEVICES, trainer, 2, plot=False)
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 3 and lines[0].startswith('epoch 1/2: loss ') and 's/epoch on 2 device(s)' in lines[2]


def test_evaluate_accuracy_block_and_callables_agree_and_small_batches_work():
    params = init_lenet_params(0)
    net = gluon_lenet(DEVICES)
    for p, q in zip(net.collect_params().values(), params):
        p.set_data(q)
    X, y = tiny_data(65)
    data = ArrayLoader(X, y, 32)               # last batch has 1 example, fewer than 2 devices
    reps = [replicate_params(params, d) for d in DEVICES]
    a = evaluate_accuracy(net, data, DEVICES)
    b = evaluate_accuracy([lambda X, p=p: lenet_scratch(X, p) for p in reps], data, DEVICES)
    c = evaluate_accuracy(net, data, DEVICES[:1])
    assert a == b == c
    assert 0 <= a <= 1


def test_plot_history_draws_three_curves():
    ax = plot_history({'epoch': [1, 2], 'loss': [1.0, 0.5], 'train_acc': [0.5, 0.7],
                       'test_acc': [0.4, 0.6], 'seconds': [1.0, 1.0]}, title='t')
    assert len(ax.get_lines()) == 3
    import matplotlib.pyplot as plt
    plt.close('all')


# ------------------------------------------------------------------ bad input

def test_batch_smaller_than_number_of_devices_is_refused():
    X, y = nd.zeros((1, 1, 28, 28)), nd.zeros((1,), dtype='int32')
    reps = [replicate_params(init_lenet_params(0), d) for d in DEVICES]
    with pytest.raises(ValueError, match='cannot be split across 2 devices'):
        train_batch_scratch(X, y, reps, DEVICES, 0.1)
    net = gluon_lenet(DEVICES)
    trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.1})
    with pytest.raises(ValueError, match='cannot be split across 2 devices'):
        train_batch(net, X, y, gluon.loss.SoftmaxCrossEntropyLoss(), trainer, DEVICES)


@pytest.mark.parametrize('lr,error', [(0, ValueError), (-0.1, ValueError), (math.nan, ValueError),
                                      (math.inf, ValueError), ('0.1', TypeError), (True, TypeError),
                                      (None, TypeError)])
def test_learning_rate_must_be_a_positive_number(lr, error):
    with pytest.raises(error, match='learning rate'):
        check_lr(lr)
    train_iter, test_iter = loaders()
    with pytest.raises(error, match='learning rate'):
        train_scratch(init_lenet_params(0), train_iter, test_iter, DEVICES, lr, 1, progress=False, plot=False)


def test_gluon_trainer_with_bad_learning_rate_is_refused():
    net = gluon_lenet(DEVICES)
    trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': -1.0})
    train_iter, test_iter = loaders()
    with pytest.raises(ValueError, match='learning rate'):
        train(net, train_iter, test_iter, DEVICES, trainer, 1, progress=False, plot=False)


def test_parameters_on_other_devices_than_the_data_are_refused():
    net = gluon_lenet(DEVICES[:1])             # only on cpu(0)
    trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.1})
    train_iter, test_iter = loaders()
    with pytest.raises(ValueError, match=r'lives on \[cpu\(0\)\].*nothing on \[cpu\(1\)\]'):
        train(net, train_iter, test_iter, DEVICES, trainer, 1, progress=False, plot=False)
    with pytest.raises(ValueError, match='nothing on'):
        evaluate_accuracy(net, test_iter, DEVICES)
    X, y = nd.zeros((4, 1, 28, 28)), nd.zeros((4,), dtype='int32')
    reps = [replicate_params(init_lenet_params(0), mx.cpu(0)) for _ in DEVICES]
    with pytest.raises(ValueError, match=r'replica 1 lives on cpu\(0\)'):
        train_batch_scratch(X, y, reps, DEVICES, 0.1)
    with pytest.raises(ValueError, match='one replica per device'):
        train_batch_scratch(X, y, reps[:1], DEVICES, 0.1)


def test_other_bad_arguments():
    train_iter, test_iter = loaders()
    net = gluon_lenet(DEVICES)
    trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.1})
    with pytest.raises(TypeError, match='gluon.Trainer'):
        train(net, train_iter, test_iter, DEVICES, 'sgd', 1, plot=False)
    with pytest.raises(ValueError, match='num_epochs'):
        train(net, train_iter, test_iter, DEVICES, trainer, 0, plot=False)
    with pytest.raises(ValueError, match='empty'):
        evaluate_accuracy(net, test_iter, [])
    with pytest.raises(TypeError, match='list of contexts'):
        evaluate_accuracy(net, test_iter, mx.cpu(0))
    with pytest.raises(ValueError, match='distinct'):
        evaluate_accuracy(net, test_iter, [mx.cpu(0), mx.cpu(0)])
    with pytest.raises(ValueError, match='not initialised'):
        evaluate_accuracy(lenet(), test_iter, DEVICES)


def test_scratch_learning_rate_schedule_one_per_epoch():
    train_iter, test_iter = loaders()
    _, h = train_scratch(init_lenet_params(0), train_iter, test_iter, DEVICES, [0.3, 0.03], 2,
                         progress=False, plot=False)
    assert len(h['loss']) == 2
    with pytest.raises(ValueError, match='one per epoch'):
        train_scratch(init_lenet_params(0), train_iter, test_iter, DEVICES, [0.3], 2, plot=False)
    with pytest.raises(ValueError, match='learning rate'):
        train_scratch(init_lenet_params(0), train_iter, test_iter, DEVICES, [0.3, 0], 2, plot=False)
