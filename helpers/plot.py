"""Plotting for the notebooks: d2l's plot helpers, with figures stored as PNG.

d2l switches the inline backend to SVG. SVG outputs carry per-run ids, which nbval would compare
(and report as differences); PNG outputs it skips. So every figure in the series goes through
this module, which renders PNG and otherwise leaves d2l's look unchanged.
"""
import matplotlib.pyplot as plt
from d2l import mxnet as d2l
from matplotlib_inline import backend_inline

__all__ = ['use_png', 'set_figsize', 'plot', 'plt']


def _inline_in_kernel():
    """Inside a Jupyter kernel, draw figures inline. ipykernel 7 no longer selects the inline backend
    by itself, so without this a notebook executed by nbclient/nbval shows no figures at all."""
    try:
        from IPython import get_ipython
    except ImportError:  # plain Python: leave matplotlib's backend alone
        return
    shell = get_ipython()
    if shell is not None and 'IPKernelApp' in shell.config:
        shell.run_line_magic('matplotlib', 'inline')


def use_png():
    """Render inline figures as PNG (call after anything from d2l that switched to SVG)."""
    backend_inline.set_matplotlib_formats('png')


_inline_in_kernel()
use_png()


def set_figsize(figsize=(3.5, 2.5)):
    """``d2l.set_figsize`` with PNG output."""
    d2l.set_figsize(figsize)
    use_png()


def plot(*args, **kwargs):
    """``d2l.plot`` (same arguments: X, Y, xlabel, ylabel, legend, xlim, ylim, xscale, yscale,
    fmts, figsize, axes) with PNG output.

    Returns None, like ``d2l.plot``, so a cell ending in ``plot(...)`` shows only the figure (nbval
    does not honour IPython's trailing ``;``). Pass ``axes=`` to draw into axes of your own."""
    d2l.plot(*args, **kwargs)
    use_png()
