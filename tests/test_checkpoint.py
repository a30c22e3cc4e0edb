"""Checkpoints (helpers.checkpoint, notebook 13): saved once from one device, a run resumed from them
takes the same steps bit for bit as the run that never stopped, on 1, 2 and 3 devices; the Trainer's
parameter order; the worker's store set up before its first step; its command line. (The distributed
job itself runs in notebook 13.)"""
import os

import mxnet as mx
import numpy as np
import pytest

from helpers import lessoncheck
from helpers.checkpoint import adam_trainer, command, init_store, load_checkpoint, save_checkpoint
from helpers.data import load_data_fashion_mnist
from helpers.models import lenet
from helpers.train import train_batch

CTX = [mx.cpu(i) for i in range(8)]


def weights(net, device):
    return [p.data(device).asnumpy() for p in net.collect_params().values()]


@pytest.mark.parametrize('k', [1, 2, 3])
def test_a_resumed_run_takes_the_same_steps_bit_for_bit(k, tmp_path):
    devices = CTX[:k]
    batches = list(load_data_fashion_mnist(32, n_train=32 * 6, seed=0)[0])
    net = lenet(devices, seed=0)
    trainer = adam_trainer(net, 1e-3)
    prefix, after = str(tmp_path / 'ckpt'), []
    for step, (X, y) in enumerate(batches):
        if step == 3:
            save_checkpoint(prefix, net, trainer, devices[0])
        train_batch(net, X, y, trainer, devices)
        after.append(weights(net, devices[-1]))
    assert sorted(os.listdir(tmp_path)) == ['ckpt.params', 'ckpt.states']
    lenet(devices, seed=1)                               # more layers: the global names move on
    resumed = lenet(devices, seed=2)                     # other initial weights, replaced by the checkpoint
    trainer2 = adam_trainer(resumed, 1e-3)
    load_checkpoint(prefix, resumed, trainer2)
    for step, (X, y) in enumerate(batches[3:], 3):
        train_batch(resumed, X, y, trainer2, devices)
        for a, b in zip(after[step], weights(resumed, devices[-1])):
            np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize('k', [1, 2, 3])
def test_the_readers_laws_hold_for_the_lessons(k):
    """helpers.lessoncheck's law (the readers' check_save_checkpoint and check_load_checkpoint): a run resumed
    from a checkpoint takes the same steps bit for bit, with either half of the lesson's pair."""
    lessoncheck.law_resumed_run_takes_the_same_steps(save_checkpoint, k, 'save')
    lessoncheck.law_resumed_run_takes_the_same_steps(load_checkpoint, k, 'load')


def test_the_trainer_keeps_the_networks_order():
    """Given a ParameterDict, the Trainer sorts by name, and names come from a process-wide counter:
    a network whose dense layers are numbered 9, 10, 11 (or 99, 100, 101) sorts 'dense10' first.
    adam_trainer keeps the network's own order."""
    while str(int(mx.gluon.nn.Dense(1).name[len('dense'):]) + 1).strip('9'):
        pass                                             # until the next Dense is dense9, dense99, ...
    net = lenet([CTX[0]])
    order = [p.shape for p in net.collect_params().values()]
    assert [p.shape for p in mx.gluon.Trainer(net.collect_params(), 'sgd')._params] != order
    assert [p.shape for p in adam_trainer(net, 0.1)._params] == order


def test_init_store_puts_the_weights_on_the_store_before_any_step():
    """The worker of notebook 13's job sets up its store before the first forward (init_store's docstring:
    set up inside the first step, a late pull of a weight can get the first gradients' sum). Here on a
    local store over two devices: after init_store, and before any step, the store holds every weight."""
    devices = CTX[:2]
    net = lenet(devices, seed=0)
    trainer = adam_trainer(net, 1e-3, kvstore=mx.kv.create('local'), update_on_kvstore=False)
    assert init_store(trainer) is trainer and trainer._params_to_init == []
    kv = trainer._kvstore
    for i, p in enumerate(net.collect_params().values()):
        out = mx.nd.zeros(p.shape, ctx=devices[0])
        kv.pull(i, out=out)
        np.testing.assert_array_equal(out.asnumpy(), p.data(devices[0]).asnumpy())
    assert init_store(trainer) is trainer and trainer._kvstore is kv        # a second call does nothing


def test_command_line():
    cmd = command(steps=4, save_at=2, resume=True, ckpt='c', out='o')
    assert cmd[1:] == ['-m', 'helpers.checkpoint', '--steps', '4', '--save-at', '2', '--resume', '--ckpt', 'c',
                       '--out', 'o']
    assert '--resume' not in command(resume=False, ckpt='c', out='o')
    with pytest.raises(TypeError, match='unknown option'):
        command(stepz=3)
    with pytest.raises(ValueError):
        adam_trainer(lenet([CTX[0]]), 0)


def test_a_job_gets_an_address_of_its_own_on_loopback():
    import ipaddress
    from helpers.job import loopback_address
    addresses = {loopback_address() for _ in range(20)}
    assert len(addresses) > 1
    for a in addresses:
        assert ipaddress.ip_address(a).is_loopback and a != '127.0.0.1'


# --- A load is all or nothing (issue 35): every file and array is read and checked before any weight or state
# changes, and the error names the file and what did not match.
def _trained(net, devices, steps=2, seed=0):
    trainer = adam_trainer(net, 1e-3)
    for X, y in list(load_data_fashion_mnist(16, n_train=16 * steps, seed=seed)[0]):
        train_batch(net, X, y, trainer, devices)
    return trainer


def _small(devices):
    """Another model: two dense layers, four parameters."""
    net = mx.gluon.nn.Sequential()
    net.add(mx.gluon.nn.Flatten(), mx.gluon.nn.Dense(8), mx.gluon.nn.Dense(10))
    net.initialize(mx.init.Xavier(), ctx=devices)
    return net


def _everything(net, trainer, devices):
    """The network's weights on every device, and the trainer's state, as NumPy."""
    state = {i: [a.asnumpy() for a in (s if isinstance(s, (tuple, list)) else [s]) if a is not None]
             for i, s in trainer._updaters[0].states.items()}
    return [weights(net, d) for d in devices], state, type(trainer._optimizer).__name__


def _assert_unchanged(before, after):
    (w0, s0, o0), (w1, s1, o1) = before, after
    assert o0 == o1 and sorted(s0) == sorted(s1)
    for a, b in zip(sum(w0, []) + sum(s0.values(), []), sum(w1, []) + sum(s1.values(), [])):
        np.testing.assert_array_equal(a, b)


def _corrupt_states(prefix, tmp_path):
    with open(f'{prefix}.states', 'rb') as f:
        raw = f.read()
    with open(f'{prefix}.states', 'wb') as f:
        f.write(raw[:len(raw) // 2])


def _one_shape_changed(prefix, tmp_path):
    saved = mx.nd.load(f'{prefix}.params')
    saved[3] = mx.nd.zeros((saved[3].size + 1,))
    mx.nd.save(f'{prefix}.params', saved)


def _another_model(prefix, tmp_path):
    other = _small(CTX[:1])
    save_checkpoint(prefix, other, _trained(other, CTX[:1]), CTX[0])


def _another_models_states(prefix, tmp_path):
    other = _small(CTX[:1])
    save_checkpoint(str(tmp_path / 'other'), other, _trained(other, CTX[:1]), CTX[0])
    os.replace(tmp_path / 'other.states', f'{prefix}.states')


def _truncated_params(prefix, tmp_path):
    with open(f'{prefix}.params', 'rb') as f:
        raw = f.read()
    with open(f'{prefix}.params', 'wb') as f:
        f.write(raw[:len(raw) - 100])


def _sgd_states(prefix, tmp_path):
    net = lenet(CTX[:1], seed=0)
    trainer = mx.gluon.Trainer(list(net.collect_params().values()), 'sgd', {'learning_rate': 0.1})
    for X, y in list(load_data_fashion_mnist(16, n_train=16, seed=0)[0]):
        train_batch(net, X, y, trainer, CTX[:1])
    trainer.save_states(f'{prefix}.states')


@pytest.mark.parametrize('corrupt, file, says', [
    (_another_model, '.params', 'holds 4 arrays, but the network has 10 parameters'),
    (_another_models_states, '.states', 'the state of parameter 0 holds an array of shape (8, 784)'),
    (_truncated_params, '.params', 'not a file of arrays MXNet can read'),
    (_corrupt_states, '.states', "not a Trainer's saved state (truncated?"),
    (_one_shape_changed, '.params', 'array 3 has shape (17,) float32, but the network\'s parameter 3 is 2.bias'),
    (_sgd_states, '.states', 'holds the state of SGD, but trainer runs Adam'),
])
def test_a_load_that_does_not_fit_changes_nothing_and_names_the_file(tmp_path, corrupt, file, says):
    """Another model's checkpoint (its weights or its optimizer state), a truncated file, one array of another
    shape, another optimizer: each refused before any weight or state has changed, naming the file."""
    devices = CTX[:2]
    net = lenet(devices, seed=0)
    prefix = str(tmp_path / 'ckpt')
    save_checkpoint(prefix, net, _trained(net, devices), devices[0])
    corrupt(prefix, tmp_path)
    resumed = lenet(devices, seed=1)
    trainer = _trained(resumed, devices, steps=1, seed=1)          # a state of its own, which must survive
    before = _everything(resumed, trainer, devices)
    with pytest.raises(ValueError) as info:
        load_checkpoint(prefix, resumed, trainer)
    assert f'{prefix}{file}' in str(info.value) and says in str(info.value), str(info.value)
    _assert_unchanged(before, _everything(resumed, trainer, devices))


def test_a_trainer_in_another_order_is_refused():
    """The saved state is keyed by position: a Trainer given the ParameterDict (sorted by name) would take a
    checkpoint's states onto other parameters wherever the names sort differently."""
    net = lenet(CTX[:1], seed=0)
    with pytest.raises(ValueError, match='another order.*adam_trainer'):
        save_checkpoint('/tmp/never-written', net,
                        mx.gluon.Trainer(list(net.collect_params().values())[::-1], 'adam'), CTX[0])
    with pytest.raises(ValueError, match="does not train net's parameters"):
        save_checkpoint('/tmp/never-written', net, adam_trainer(lenet(CTX[:1]), 1e-3), CTX[0])
