"""Input checks for every public helper, in one place and with one policy (introduced in notebook 00,
used by all notebooks).

The functions a notebook writes "by hand" (split_and_load, allreduce, the training step, ...) are
kept short: the algorithm only, with at most one line that calls into this package. Everything that
can go wrong with their input is checked here, before any work is done, with one policy:

* ``TypeError`` when a value has the wrong *type* (a string where a number belongs, a single
  context where a list of contexts belongs, a NumPy array where an NDArray belongs);
* ``ValueError`` when the type is right but the *value* is not (0 devices, a negative weight,
  arrays of different shapes, more devices than examples);
* whole numbers may be Python ``int`` or NumPy integers (``np.int64(2)`` is accepted wherever
  ``2`` is); ``bool`` is refused, because ``True`` as a count is almost always a mistake.

Every message names the argument, what was given and, where there is one, the fix. Numbers that
size something before any work is done have upper bounds (``MAX_DEVICES``, ``MAX_SECONDS``,
``MAX_PROCESSES``, and :func:`fits`: no array larger than the machine's memory), so that a typo is
refused at once instead of filling the memory or running for ever. ``tests/test_bad_input.py``
feeds every public helper wrong types and values to hold all of this.

**Where a check lives.** Every name is ``checks.<name>``, whichever module defines it:
``_kinds.py`` holds the policy's kinds of value (``whole``, ``positive``, ``devices``, ``arrays``,
...), which every helper uses; the guards of one helper's arguments live in the module of that
helper's layer (``helpers.LAYERS``): ``_infrastructure.py``, ``_lessons.py``, ``_stores_and_jobs.py``,
``_training.py`` (a guard several layers use: the lowest one's); a layer's module too long to hold
is split by concern, ``_<layer>_<concern>.py`` (``_training_zero.py``: notebook 12's guards).
A guard may use the kinds and the guards of its own layer and the layers below, as the helpers do.

Importing this package imports neither MXNet nor NumPy, nor any other module of helpers/: the checks
of numbers (:func:`whole`, :func:`positive`) serve processes that must not start MXNet (the node shim
of a distributed job, helpers/job.py); the checks of arrays and devices import MXNet when they are
called.
"""
from helpers.checks._kinds import *                          # noqa: F401,F403  whole, positive, devices, ...
from helpers.checks._kinds import count_gpus_with            # noqa: F401  helpers.devices hands its GPU count down
from helpers.checks._infrastructure import *                 # noqa: F401,F403  data, processes, timings, figures
from helpers.checks._lessons import *                        # noqa: F401,F403  split, comm, costmodel, models, buckets
from helpers.checks._stores_and_jobs import *                # noqa: F401,F403  kvstore, placement
from helpers.checks._training import *                       # noqa: F401,F403  train, dist_train, scaling, sharding, ...
from helpers.checks._training_zero import *                  # noqa: F401,F403  zero
from helpers.checks import _infrastructure, _kinds, _lessons, _stores_and_jobs, _training, _training_zero

__all__ = (_kinds.__all__ + _infrastructure.__all__ + _lessons.__all__ + _stores_and_jobs.__all__ + _training.__all__
           + _training_zero.__all__)

for _name in __all__:                 # each says it is this package's, as numpy.testing's names say numpy.testing:
    _obj = globals()[_name]           # the bad-input sweep (tests/test_bad_input.py) knows them by that name
    if callable(_obj):
        _obj.__module__ = __name__
del _name, _obj
