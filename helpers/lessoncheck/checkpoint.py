"""The laws and checks of :mod:`helpers.checkpoint` (notebook 13): a run resumed from a checkpoint
takes, bit for bit, the steps of the run that never stopped. ``tests/test_checkpoint.py`` calls the
same law.
"""
import numpy as np
from mxnet import nd

from helpers.lessoncheck.machinery import Broken, CPU, Law, _message, lesson, tiny_data

__all__ = ['check_save_checkpoint', 'check_load_checkpoint', 'CHECKPOINT_CASES', 'law_resumed_run_takes_the_same_steps']


CHECKPOINT_CASES = [dict(k=k) for k in (1, 2, 3)]


def _resumed(save, load, k, steps=4, at=2, n=8, role=None):
    """Train LeNet with Adam on k devices for ``steps`` steps, saving a checkpoint (``save``) before
    step ``at``; then build another LeNet (other initial weights), ``load`` the checkpoint and take the
    same steps. Returns ``(uninterrupted weights per step, resumed weights per step, files, loaded)``;
    ``role`` 'save': ``save`` is the reader's, and the lesson's ``load`` failing on its files is a broken law."""
    import os
    import tempfile
    from helpers.checkpoint import adam_trainer
    from helpers.models import lenet
    from helpers.train import train_batch
    devices = CPU[:k]
    Xn, yn = tiny_data(steps * n, 13)
    batches = [(nd.array(Xn[s * n:(s + 1) * n]), nd.array(yn[s * n:(s + 1) * n], dtype='int32'))
               for s in range(steps)]
    weights = lambda net: [p.data(devices[-1]).asnumpy() for p in net.collect_params().values()]
    net = lenet(devices, seed=0)
    trainer = adam_trainer(net, 1e-3)
    with tempfile.TemporaryDirectory() as folder:
        prefix, after = os.path.join(folder, 'ckpt'), []
        for s, (X, y) in enumerate(batches):
            if s == at:
                save(prefix, net, trainer, devices[0])
                saved = weights(net)
            train_batch(net, X, y, trainer, devices)
            after.append(weights(net))
        files = sorted(os.listdir(folder))
        resumed = lenet(devices, seed=2)
        trainer2 = adam_trainer(resumed, 1e-3)
        if files != ['ckpt.params', 'ckpt.states']:
            raise Broken('the checkpoint is two files: prefix + ".params" and prefix + ".states"',
                         expected="['ckpt.params', 'ckpt.states']", got=str(files),
                         why='nd.save(prefix + ".params", [p.data(device) for p in ...]) and '
                             'trainer.save_states(prefix + ".states")')
        try:
            load(prefix, resumed, trainer2)
        except Exception as e:
            if role != 'save':                      # the reader's load_checkpoint: its own error, its own line
                raise
            raise Broken('the lesson\'s load_checkpoint could not read your checkpoint',
                         got=f'{type(e).__name__}: {_message(e)}',
                         why='save what load_checkpoint reads: nd.save(prefix + ".params", [p.data(device) for p in '
                             'net.collect_params().values()]), a list in the order of the parameters, and '
                             'trainer.save_states(prefix + ".states")') from None
        loaded = all(np.array_equal(a, b) for d in devices
                     for a, b in zip(saved, [p.data(d).asnumpy() for p in resumed.collect_params().values()]))
        again = []
        for X, y in batches[at:]:
            train_batch(resumed, X, y, trainer2, devices)
            again.append(weights(resumed))
    return after[at:], again, files, loaded


def _resume_why(after, again, files, loaded, role):
    if not loaded:
        return ('the resumed network does not hold the saved weights on every device: ' +
                ('save [p.data(device) for p in net.collect_params().values()]' if role == 'save' else
                 'p.set_data(value) for every parameter, which copies to every device'))
    return ('the weights came back, the optimizer\'s state did not: Adam\'s moments and step count are in ' +
            (f'trainer.{role}_states(prefix + ".states")'))


def law_resumed_run_takes_the_same_steps(fn, k, role):
    """Notebook 13: a run resumed from a checkpoint takes, bit for bit, the steps of the run that never
    stopped (LeNet with Adam on k devices); ``role`` says which half ``fn`` is, the other is the lesson's."""
    from helpers import checkpoint
    save, load = (fn, checkpoint.load_checkpoint) if role == 'save' else (checkpoint.save_checkpoint, fn)
    after, again, files, loaded = _resumed(save, load, k, role=role)
    for s, (a, b) in enumerate(zip(after, again)):
        if any(not np.array_equal(x, y) for x, y in zip(a, b)):
            gap = max(float(np.abs(x - y).max()) for x, y in zip(a, b))
            raise Broken(f'step {s + 1} after resuming differs from the run that never stopped by {gap:.3g}',
                         expected='the same weights, bit for bit', why=_resume_why(after, again, files, loaded, role))


@lesson('helpers.checkpoint.save_checkpoint', hint="nd.save the weights as device holds them; trainer.save_states")
def check_save_checkpoint():
    """Check your ``save_checkpoint(prefix, net, trainer, device)`` (notebook 13), resumed by the lesson's
    ``load_checkpoint``."""
    return [Law('a run resumed from your checkpoint takes the steps of the run that never stopped, bit for bit',
                lambda fn, k: law_resumed_run_takes_the_same_steps(fn, k, 'save'), CHECKPOINT_CASES,
                lambda k: f'LeNet with Adam on {k} device{"s" * (k > 1)}')]


@lesson('helpers.checkpoint.load_checkpoint', hint='p.set_data(value) for each saved weight; trainer.load_states')
def check_load_checkpoint():
    """Check your ``load_checkpoint(prefix, net, trainer)`` (notebook 13), on the lesson's checkpoint."""
    return [Law('a run resumed with your load_checkpoint takes the steps of the run that never stopped, bit for bit',
                lambda fn, k: law_resumed_run_takes_the_same_steps(fn, k, 'load'), CHECKPOINT_CASES,
                lambda k: f'LeNet with Adam on {k} device{"s" * (k > 1)}')]
