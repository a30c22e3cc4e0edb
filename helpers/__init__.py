"""Shared code of the notebook series "Data-parallel training from scratch with MXNet".

One module per concept; each public function's docstring names the notebook that derives it:

- ``devices``  which devices to use (GPUs or CPU stand-ins)            -- notebook 00
- ``data``     Fashion-MNIST, offline first, fast in-memory batches    -- notebook 00
- ``timing``   honest timings of MXNet's asynchronous engine           -- notebook 01
- ``source``   show the one definition of a hand-written function          -- all notebooks
- ``plot``     d2l plotting with PNG figures (stable under nbval)         -- all notebooks

Import the modules you need, e.g. ``from helpers import devices, data``.
"""
