"""Gradient accumulation: several micro-batches per step, one allreduce (notebook 13).

A device that cannot hold a batch of ``B`` examples at once can still take the step of batch ``B``:
it runs ``m`` micro-batches of ``B / m`` one after the other, each forward and backward *adding* its
gradient to the one already in the buffer (``grad_req='add'``: ``NDArray.attach_grad(grad_req='add')``,
Gluon's ``Parameter.grad_req``), and only then sums across devices and updates. Backward computes
the gradient of the summed loss, so the accumulated gradient is the gradient of the whole batch's
summed loss, and the step equals one step of the batch of all ``k * m * b`` examples, up to the order
of the floating-point additions. The devices communicate once per ``m`` micro-batches, so the bytes
per example drop ``m``-fold.

:func:`train_batch_accumulated` is the text of notebook 13's lesson cell (``tools/lessons.py``).
"""
from helpers import checks
from helpers.comm import allreduce, copy_to
from helpers.models import replicate_params
from helpers.sharding import forward_backward
from helpers.train import sgd

__all__ = ['accumulating_replica', 'train_batch_accumulated']


def accumulating_replica(params, device):
    """:func:`helpers.models.replicate_params`, with gradient buffers that *add* what each backward
    pass computes (``grad_req='add'``) instead of overwriting it (notebook 13)."""
    replica = replicate_params(params, device)
    for p in replica:
        p.attach_grad(grad_req='add')
    return replica


def train_batch_accumulated(micro_batches, device_params, devices, lr, send=copy_to):
    """m micro-batches, each split over the devices, their gradients added up in place
    (grad_req='add'), then ONE allreduce per parameter and one SGD step (notebook 13)."""
    checks.accumulation(micro_batches, device_params, devices, lr)
    n, losses = 0, []
    for X, y in micro_batches:                 # no communication in this loop
        losses += forward_backward(X, y, device_params, devices)
        n += X.shape[0]
    for i in range(len(device_params[0])):     # one allreduce per parameter, for all m
        allreduce([ps[i].grad for ps in device_params], send)
    for ps in device_params:
        sgd(ps, lr, n)                         # divided by the whole batch, k * m * b
        for p in ps:
            p.grad[:] = 0                      # the next accumulation starts from zero
    return losses
