"""Show the one definition of a function the reader learns "by hand" (used from notebook 00 on).

The series keeps each hand-written function once, in ``helpers``. A notebook that teaches it shows
its source with :func:`show` and then runs that very function, so the code the reader reads is the
code that runs (and that the unit tests check).
"""
import inspect

from IPython.display import Code

__all__ = ['show']


def show(*objs):
    """Display the source of functions/classes, syntax-highlighted (notebook 08: code shown for
    reading, not for editing; lessons are editable cells instead)."""
    if not objs:
        raise ValueError('show() needs at least one function or class')
    for obj in objs:
        if not (inspect.isfunction(obj) or inspect.isclass(obj) or inspect.ismethod(obj)):
            raise TypeError(f'show() takes functions, methods or classes, got {type(obj).__name__}')
    return Code('\n\n'.join(inspect.getsource(o) for o in objs), language='python')
