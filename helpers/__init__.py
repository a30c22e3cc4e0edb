"""Shared code of the notebook series "Data-parallel training from scratch with MXNet".

One module per concept; each public function's docstring names the notebook that derives it:

- ``devices``  which devices to use (GPUs or CPU stand-ins)            -- notebook 00
- ``data``     Fashion-MNIST, offline first, fast in-memory batches    -- notebook 00
- ``timing``   honest timings of MXNet's asynchronous engine           -- notebook 01
- ``split``    split_and_load by hand: even, uneven, weighted            -- notebook 03
- ``comm``     allreduce by hand (naive, ring), byte counts, α–β model   -- notebook 04
- ``models``   LeNet (from scratch and Gluon), ResNet-18 (d2l's)         -- notebooks 05, 06
- ``train``    training/evaluation loops on k devices, progress, curves  -- notebooks 05, 06
- ``kvstore``  KVStore measurements: push/pull time, memory, compression -- notebook 07
- ``dist``     launching a local parameter-server job, safely            -- notebook 08
- ``dist_train`` the distributed training script (python -m helpers.dist_train) -- notebook 08
- ``source``   show the one definition of a hand-written function          -- all notebooks
- ``plot``     d2l plotting with PNG figures (stable under nbval)         -- all notebooks

Import the modules you need, e.g. ``from helpers import devices, data``.
"""
