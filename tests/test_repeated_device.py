"""A device listed twice, `[cpu(0), cpu(0)]` (the classic Gluon multi-GPU tutorial's fallback for one GPU or
none), as notebook 06's exercise 6 shows it: what MXNet 1.9.1 and Gluon do with it, and why the series'
helpers refuse it."""
import numpy as np
import mxnet as mx
import pytest
from mxnet import autograd, gluon, nd

from helpers import checks
from helpers.models import lenet
from helpers.split import split_and_load
from helpers.train import loss

TWICE = [mx.cpu(0), mx.cpu(0)]
X = nd.array(np.random.default_rng(0).normal(size=(8, 4)))
Y = nd.array([0, 1, 2, 0, 1, 2, 0, 1])


def _dense(ctx, seed=0):
    mx.random.seed(seed)
    net = gluon.nn.Dense(3, in_units=4)
    net.initialize(mx.init.Xavier(), ctx=ctx)
    return net


def _grad(net, X, y):
    with autograd.record():
        loss(net(X), y).backward()
    return net.weight.grad().asnumpy()


def test_initialize_makes_one_copy_per_entry_but_finds_copies_by_device():
    net = _dense(TWICE)
    copies = net.weight.list_data()
    assert len(copies) == 2 and copies[0] is not copies[1]
    assert net.weight.data(mx.cpu(0)) is copies[1]                 # the last entry wins
    np.testing.assert_array_equal(copies[0].asnumpy(), copies[1].asnumpy())


def test_split_and_load_accepts_a_repeated_device():
    shards = gluon.utils.split_and_load(X, TWICE)
    assert [s.shape[0] for s in shards] == [4, 4] and all(s.context == mx.cpu(0) for s in shards)
    np.testing.assert_array_equal(nd.concat(*shards, dim=0).asnumpy(), X.asnumpy())


def test_both_shards_use_the_last_copy_and_its_gradient_keeps_the_last_shard():
    net = _dense(TWICE)
    X_shards, y_shards = gluon.utils.split_and_load(X, TWICE), gluon.utils.split_and_load(Y, TWICE)
    with autograd.record():
        ls = [loss(net(Xs), ys) for Xs, ys in zip(X_shards, y_shards)]
    for l in ls:
        l.backward()                                   # grad_req='write': the second overwrites the first
    grads = [g.asnumpy() for g in net.weight.list_grad()]
    assert not grads[0].any()                          # copy 0 is never used
    np.testing.assert_array_equal(grads[1], _grad(_dense([mx.cpu(0)]), X_shards[1], y_shards[1]))
    assert np.abs(grads[1] - _grad(_dense([mx.cpu(0)]), X, Y)).max() > 1e-3   # not the whole batch's


@pytest.mark.parametrize('update_on_kvstore', [False, True])
def test_trainer_step_stops_at_the_stale_gradient(update_on_kvstore):
    net = _dense(TWICE)
    before = net.weight.data().asnumpy()
    X_shards, y_shards = gluon.utils.split_and_load(X, TWICE), gluon.utils.split_and_load(Y, TWICE)
    with autograd.record():
        ls = [loss(net(Xs), ys) for Xs, ys in zip(X_shards, y_shards)]
    for l in ls:
        l.backward()
    trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.1},
                            update_on_kvstore=update_on_kvstore)
    with pytest.raises(UserWarning, match='has not been updated by backward'):
        trainer.step(8)
    # with the update on the store, the store's pushpull ran before the check raised
    changed = np.abs(net.weight.data().asnumpy() - before).max() > 0
    assert changed == update_on_kvstore


@pytest.mark.parametrize('kv_type', ['local', 'device'])
def test_a_store_sums_pushes_from_a_repeated_device(kv_type):
    kv = mx.kv.create(kv_type)
    kv.init(0, nd.zeros(3))
    arrays = [nd.ones(3, ctx=c) * (i + 1) for i, c in enumerate(TWICE)]
    kv.pushpull(0, arrays, out=arrays)
    assert all((a.asnumpy() == 3).all() for a in arrays)


def test_the_series_refuses_a_repeated_device_and_names_the_fix():
    for call in (lambda: checks.devices(TWICE), lambda: lenet(TWICE),
                 lambda: split_and_load(X, [mx.cpu(1), mx.cpu(1)])):
        with pytest.raises(ValueError, match='distinct') as error:
            call()
        assert 'MXDP_DEVICES=cpu:' in str(error.value) and 'notebook 06' in str(error.value)
    assert checks.devices([mx.cpu(0), mx.cpu(1)]) == [mx.cpu(0), mx.cpu(1)]   # distinct stand-ins are fine
