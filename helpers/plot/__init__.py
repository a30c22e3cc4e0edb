"""Every figure of the series: d2l's plotting, stored as PNG, readable when projected. The generic
figures (curves, training histories, timelines) are in ``_core.py``, the figures of particular
measurements (notebook 04's allreduce sweep, notebooks 08 and 09's stored results) in
``_results.py``; every name is ``plot.<name>``. Only ``helpers.replay`` draws its own figure (the
animation of a reader's ring).

d2l switches the inline backend to SVG. SVG outputs carry per-run ids, which nbval would compare
(and report as differences); PNG outputs it skips. So every figure goes through this package, which
renders PNG, uses fonts large enough for a projector, and otherwise keeps d2l's look.

Every function draws one figure and returns None, so a cell that ends with it shows only the
figure (nbval does not honour IPython's trailing ``;``).

Every figure is shown by :func:`show` with a text alternative, ``alt``: one or two sentences that say
what is drawn and what it shows (the finding, from the numbers of the cell that drew it), never a
file name. It is stored in the notebook three ways at once: as a PNG (``image/png``, for any
notebook viewer), as an HTML ``<img alt="...">`` followed by a collapsed table of the plotted numbers
(``text/html``: what JupyterLab, the book and the decks render, and what a screen reader reads), and
as plain text (``text/plain``: the alt text, which nbval compares).
"""
from helpers.plot._core import *                 # noqa: F401,F403  show, plot, history, timelines, PALETTE, ...
from helpers.plot._core import (BOOK_COLUMN_PX, MIN_SHOWN_TEXT_PX, RUN_FMTS, SIZE_KEY, _SLIDE_FONTS,  # noqa: F401
                               text_size)                # used by tests and tools
from helpers.plot._results import *              # noqa: F401,F403  allreduce_sweep, speedups, pushpull, ...
from helpers.plot import _core, _results

__all__ = _core.__all__ + _results.__all__

for _name in __all__:              # each says it is this package's (the bad-input sweep knows them by that name)
    _obj = globals()[_name]
    if callable(_obj) and getattr(_obj, '__module__', '').startswith('helpers.plot.'):
        _obj.__module__ = __name__
del _name, _obj
