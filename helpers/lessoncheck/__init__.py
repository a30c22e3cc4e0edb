"""Checks a reader can trust: every function a notebook teaches by hand, tried against the laws the
series' own tests sweep (notebooks 03-13; the student edition of ``tools/assignments.py``).

Run ``check_<name>(fn)`` on your own version of a lesson function, e.g. ``check_allreduce_ring(allreduce_ring)``
after writing notebook 04's ring. It tries the function on every case of every law -- odd and even
numbers of devices up to 8, sizes below, equal to and not divisible by the number of devices, two
dtypes, identical bits on every device where the lesson promises them -- smallest case first, and
then either prints what was tried and passed, or stops at the smallest failing case and says, in
words, what went in, what was expected, what came back and, where it can tell, why. A function
that still raises ``NotImplementedError`` is "not written yet". A failing check raises
:class:`CheckFailed`, which Jupyter shows as that report, not as a traceback (nbgrader counts the
cell as failed); an allreduce that goes wrong also shows its replay (:mod:`helpers.replay`): what
each device held after every step.

**One definition per law.** A law is a function ``law(fn, **case)`` that returns quietly or raises
:class:`Broken`; the tests of each lesson's module (``tests/test_split.py``, ``test_comm.py``, ...)
call the same functions on ``helpers``' own lessons (with Hypothesis drawing more cases where it
helps), and the checks sweep them over the fixed case lists. Collectives and stores are checked
through the hooks the lessons already take (``send=``, ``allreduce=``, a stand-in KVStore or
``Job``), never by starting processes.

**One room per lesson module.** ``machinery.py`` holds what every check is made of (:class:`Law`,
:class:`Broken`, :func:`run`, :func:`lesson`, ...); the laws and checks of the lessons of
``helpers/<module>.py`` live together in ``helpers/lessoncheck/<module>.py``, and this package is
their one public namespace: ``from helpers.lessoncheck import check_allreduce_ring``, whichever room
defines it (every public name says it is ``helpers.lessoncheck``'s, as NumPy's say they are
``numpy``'s: the student edition imports its checks from here).

**Adding a check** for a new lesson: in its module's room (a new module: a new room, imported
below), write its laws, then a function named ``check_<name>`` that returns ``[Law(...), ...]``,
decorated with ``@lesson('helpers.module.name', hint='one line for the stub')``, and list both in
the room's ``__all__``. ``tools/assignments.py`` finds it through :func:`find` and turns that
notebook's lesson cell into an exercise with this check under it (a class's methods become stubs);
a lesson without a check stays in the student edition as written.

**Honest grades.** A check passes only the reader's own function: the installed lesson, a copy or a
subclass of it, or a call into it fails, and so does a function that rewrites the check while it
runs (``guard.py``). The student edition's check cells also run :func:`graded`, the same check in a
fresh Python on the function as the notebook's cells define it, where no cell can change the check
(``fresh.py``).
"""
from helpers.lessoncheck import machinery
from helpers.lessoncheck.machinery import *                  # noqa: F401,F403  Law, Broken, run, lesson, ...
from helpers.lessoncheck.machinery import tiny_data          # noqa: F401  the toy problem the tests train on too
from helpers.lessoncheck.fresh import graded                 # noqa: F401  a check again, in a fresh Python
# The rooms, in the order of the notebooks: each registers its checks as it is imported.
from helpers.lessoncheck.split import *                      # noqa: F401,F403  notebook 03
from helpers.lessoncheck.comm import *                       # noqa: F401,F403  notebook 04
from helpers.lessoncheck.costmodel import *                  # noqa: F401,F403  notebook 04
from helpers.lessoncheck.models import *                     # noqa: F401,F403  notebook 05
from helpers.lessoncheck.train import *                      # noqa: F401,F403  notebooks 05, 06
from helpers.lessoncheck.kvstore import *                    # noqa: F401,F403  notebook 07
from helpers.lessoncheck.dist_train import *                 # noqa: F401,F403  notebook 08
from helpers.lessoncheck.job import *                        # noqa: F401,F403  notebook 08
from helpers.lessoncheck.scaling import *                    # noqa: F401,F403  notebook 09
from helpers.lessoncheck.buckets import *                    # noqa: F401,F403  notebook 10
from helpers.lessoncheck.buckets import _small_losses, _small_net  # noqa: F401  tests/test_buckets.py's net
from helpers.lessoncheck.sharding import *                   # noqa: F401,F403  notebook 11
from helpers.lessoncheck.zero import *                       # noqa: F401,F403  notebook 12
from helpers.lessoncheck.precision import *                  # noqa: F401,F403  notebook 13
from helpers.lessoncheck.accumulation import *               # noqa: F401,F403  notebook 13
from helpers.lessoncheck.checkpoint import *                 # noqa: F401,F403  notebook 13

# The public names: the machinery and every check; the laws and case lists are here too, for the tests
# of each lesson's module, without being public.
__all__ = machinery.__all__ + ['graded'] + [check.__name__ for check in machinery.CHECKS.values()]

for _name in __all__:                 # each says it is this package's: tools/assignments.py writes
    _obj = globals()[_name]           # `from {check.__module__} import ...` into the student edition
    if callable(_obj):
        _obj.__module__ = __name__
del _name, _obj
