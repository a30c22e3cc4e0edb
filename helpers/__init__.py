"""Shared code of the notebook series "Data-parallel training from scratch with MXNet".

One module per concept; each public function's docstring names the notebook that derives it. The
functions a notebook teaches by hand are the text of its lesson cells (``tools.lessons``).

- ``devices``    which devices to use: every GPU, or CPU stand-ins              -- notebook 00
- ``gpu_code``   which GPUs the installed MXNet has machine code for            -- notebook 00
- ``checks``     input checks with one policy (TypeError / ValueError)          -- notebook 00 on
- ``data``       Fashion-MNIST, offline first, fast in-memory batches           -- notebook 00
- ``timing``     honest timings of MXNet's asynchronous engine                  -- notebook 01
- ``tracing``    what the engine ran, on which device, when                     -- notebooks 01, 05
- ``split``      split_and_load by hand: even, uneven, weighted                  -- notebook 03
- ``comm``       allreduce by hand: naive and ring; byte counting               -- notebook 04
- ``costmodel``  the alpha-beta-gamma cost model, published link bandwidths     -- notebooks 04, 09
- ``link``       an emulated link between the stand-ins; the Trainer's store on it -- notebooks 04-13
- ``replay``     a collective replayed step by step from its send hook          -- notebook 04
- ``models``     LeNet (by hand and in Gluon), d2l's ResNet-18                   -- notebooks 05, 06
- ``train``      the training step by hand and with Gluon, evaluation, the loop -- notebooks 05, 06
- ``kvstore``    KVStore measurements: push/pull time, memory, compression      -- notebook 07
- ``dist``       launching a local parameter-server job, safely                 -- notebook 08
- ``dist_train`` the distributed training script (python -m helpers.dist_train) -- notebook 08
- ``netns``      network namespaces: two "machines" on one host                 -- notebooks 08, 09
- ``scaling``    large batches and the speed-up model                           -- notebook 09
- ``buckets``    sending gradients during backward; fusing them into buckets    -- notebook 10
- ``memory``     bytes per device, from MXNet's own storage counters             -- notebooks 11-13
- ``sharding``   the sharded optimizer: the update between the ring's halves    -- notebook 11
- ``zero``       sharding everything: ZeRO-2 and ZeRO-3 by hand, layer by layer  -- notebook 12
- ``precision``  16-bit gradients on the wire, loss scaling, MXNet's AMP         -- notebook 13
- ``accumulation`` gradient accumulation: micro-batches, one allreduce          -- notebook 13
- ``checkpoint`` save once, resume exactly; the distributed job's worker        -- notebook 13
- ``plot``       every figure, as PNG, readable when projected                  -- all notebooks
- ``lessoncheck`` a reader's lesson functions checked against the tests' laws   -- notebooks 03-13

``checks`` and ``lessoncheck`` are packages, each one namespace over a module per concern: the
guards by layer, the laws and checks by lesson module (docs/maintainers.md, "Architecture"). Import
the modules you need, e.g. ``from helpers import devices, data``.
"""

# The layers of helpers/, bottom up (docs/maintainers.md, "Architecture"). A module may import
# modules of its own layer and of the layers below it, never above; a package (checks, lessoncheck)
# sits in one layer, its modules with it. tests/test_architecture.py enforces it, and fails for a
# module that is in no layer. tools/, tests/, benchmarks/ and the notebooks sit above all of them;
# nothing in helpers/ imports them.
LAYERS = {
    'infrastructure': ['_mxnet_compat', '_mxnet_import', 'checks', 'procs', 'gpu_code', 'devices', 'data', 'timing',
                       'tracing', 'memory', 'plot', 'source', 'netns'],
    'lessons': ['split', 'comm', 'costmodel', 'link', 'replay', 'models', '_residual', 'buckets'],
    'stores and jobs': ['kvstore', 'launcher', 'job_node', 'job_faults', 'job', 'placement', 'cluster', 'dist',
                        'pushpull'],
    'training': ['train', 'sharding', 'zero', 'precision', 'accumulation', 'dist_train', 'scaling', 'checkpoint',
                 'lessoncheck'],
}
