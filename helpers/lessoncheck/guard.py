"""What keeps a check honest (notebooks 03-13): the function checked must be the reader's own, and it
must leave the check alone.

* **Not the series' own.** While lesson ``helpers.module.name`` is checked, the installed lesson (the
  function, or every method of the class) answers a call that comes from the reader's code -- directly,
  through an alias such as ``from helpers.comm import allreduce_ring as ring``, or through another
  helper the reader calls -- with an error (the check's ``Broken``); the laws themselves still use it.
  The function given must not be the lesson itself, a copy of its code, or a subclass of it
  (:func:`refused_reference`, :func:`not_the_lesson`).
* **The check unchanged.** :func:`snapshot` records what every module of ``helpers`` -- the checks
  among them -- and NumPy, MXNet's arrays and Python's builtins hold; :func:`changed` names what
  differs afterwards and puts it back, so that a function that rewrites the check or the functions it
  compares with fails instead of passing.

Which code is the reader's is told by where it lives (:func:`kind_of`): not in ``helpers/``, not in
Python's or the environment's libraries, not code MXNet generated.
"""
import contextlib
import os
import sys
import sysconfig
import types

HELPERS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CHECKS = os.path.join(HELPERS, 'lessoncheck')
_LIBRARIES = tuple(sorted({os.path.realpath(p) for k, p in sysconfig.get_paths().items()
                           if k in ('stdlib', 'platstdlib', 'purelib', 'platlib')}
                          | {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
                          - {os.path.realpath(os.path.dirname(HELPERS))}, key=len, reverse=True))
_LIBRARY_MODULES = ('mxnet', 'numpy', 'scipy', 'IPython', 'ipykernel', 'traitlets', 'importlib', 'd2l', 'gluon')


def kind_of(frame_or_code, module=None):
    """``'check'`` (helpers/lessoncheck/), ``'helpers'`` (the rest of helpers/), ``'library'``
    (Python's, the environment's, code MXNet generates) or ``'reader'`` (everything else: a notebook
    cell, a test's stand-in for one) for a frame or a code object."""
    code = getattr(frame_or_code, 'f_code', frame_or_code)
    if module is None and hasattr(frame_or_code, 'f_globals'):
        module = frame_or_code.f_globals.get('__name__')
    filename = code.co_filename
    if filename.startswith('<'):
        if filename.startswith('<frozen') or (module or '').split('.')[0] in _LIBRARY_MODULES:
            return 'library'
        return 'reader'
    path = os.path.realpath(filename)
    if path.startswith(CHECKS + os.sep):
        return 'check'
    if path.startswith(HELPERS + os.sep):
        return 'helpers'
    if any(path.startswith(lib + os.sep) for lib in _LIBRARIES) or 'site-packages' in path:
        return 'library'
    return 'reader'


def _resolve(qualname):
    import importlib
    module, _, name = qualname.rpartition('.')
    try:
        return getattr(importlib.import_module(module), name, None)
    except (ImportError, ValueError):
        return None


def _functions(reference):
    """``[(function, label)]``: the lesson's function, or each method a lesson class defines itself."""
    if isinstance(reference, types.FunctionType):
        return [(reference, reference.__name__)]
    if isinstance(reference, type):
        return [(v, f'{reference.__name__}.{k}') for k, v in vars(reference).items()
                if isinstance(v, types.FunctionType)]
    return []


def not_the_lesson(fn, qualname):
    """Why ``fn`` is the series' own lesson ``qualname`` rather than the reader's (None if it is the
    reader's): the same object, the same code, or a subclass of the lesson class."""
    reference = _resolve(qualname)
    if reference is None:
        return None
    where = qualname.rpartition('.')[0]
    if fn is reference:
        return f'this is the series\' own {reference.__name__}, imported from {where}'
    codes = {id(f.__code__) for f, _ in _functions(reference)}
    if isinstance(reference, type) and isinstance(fn, type) and issubclass(fn, reference):
        return f'it is a subclass of the series\' own {reference.__name__} ({where}), which does the work'
    if isinstance(reference, type) and isinstance(fn, type) and any(
            id(v.__code__) in codes for klass in fn.__mro__ for v in vars(klass).values()
            if isinstance(v, types.FunctionType)):
        return f'its methods are those of the series\' own {reference.__name__} ({where})'
    if id(getattr(fn, '__code__', None)) in codes:
        return f'its code is that of the series\' own {reference.__name__} ({where})'
    return None


_TRAMPOLINE = '''def _outer():
    {cells} = None
    def _refused(*args, **kwargs):
        {cells}
        return {key}(args, kwargs)
    return _refused
'''
_PLAIN = '''def _outer():
    def _refused(*args, **kwargs):
        return {key}(args, kwargs)
    return _refused
'''


@contextlib.contextmanager
def refused_reference(qualname, calls, refuse):
    """While it lasts, a call of the installed lesson ``qualname`` (each method, for a class) whose
    nearest caller outside helpers' other modules and the libraries is the reader's code raises
    ``refuse(the lesson's name, its module)``, which it also appends to ``calls`` (so that catching it
    does not help); a call from the checks runs the lesson."""
    reference = _resolve(qualname)
    swapped = []
    try:
        for n, (f, label) in enumerate(_functions(reference)):
            key = f'__lessoncheck_refused_{n}__'
            original = types.FunctionType(f.__code__, f.__globals__, f.__name__, f.__defaults__, f.__closure__)
            original.__kwdefaults__, original.__qualname__ = f.__kwdefaults__, f.__qualname__
            cells, names = ', '.join(f.__code__.co_freevars), {}
            exec(compile((_TRAMPOLINE if cells else _PLAIN).format(cells=cells, key=key), f.__code__.co_filename,
                         'exec'), names)
            trampoline = names['_outer']().__code__
            if len(trampoline.co_freevars) != len(f.__code__.co_freevars):
                continue                          # cannot stand in for it: leave it as it is

            def guard(args, kwargs, original=original, label=label):
                frame = sys._getframe(2)          # guard <- the stand-in <- its caller
                while frame is not None:
                    kind = kind_of(frame)
                    if kind == 'check':
                        return original(*args, **kwargs)
                    if kind == 'reader':
                        calls.append(refuse(label, qualname.rpartition('.')[0]))
                        raise calls[-1]
                    frame = frame.f_back
                return original(*args, **kwargs)

            swapped.append((f, f.__code__, f.__defaults__, f.__kwdefaults__, key))
            f.__globals__[key] = guard
            f.__defaults__ = f.__kwdefaults__ = None
            f.__code__ = trampoline
        yield
    finally:
        for f, code, defaults, kwdefaults, key in swapped:
            f.__code__, f.__defaults__, f.__kwdefaults__ = code, defaults, kwdefaults
            f.__globals__.pop(key, None)


_WATCHED = ('numpy', 'numpy.linalg', 'numpy.testing', 'mxnet.ndarray', 'mxnet.ndarray.ndarray', 'mxnet.autograd',
            'mxnet.gluon.trainer', 'mxnet.optimizer.optimizer', 'builtins', 'math', 'traceback', 'linecache')


def snapshot():
    """What the check relies on (notebooks 03-13): every function and class of every module of ``helpers``
    (the checks' too) and of NumPy, MXNet's arrays and autograd, the Trainer, Python's builtins, and
    what the classes those modules define hold, as ``{where: (owner, name, object, its code)}``."""
    held = {}
    for name, module in list(sys.modules.items()):
        if module is None or not (name == 'helpers' or name.startswith('helpers.') or name in _WATCHED):
            continue
        for attr, value in list(vars(module).items()):
            if attr.startswith('__lessoncheck_') or not callable(value):    # functions and classes
                continue
            held[f'{name}.{attr}'] = (module, attr, value, getattr(value, '__code__', None))
            if isinstance(value, type) and getattr(value, '__module__', None) == name:
                for key, member in list(vars(value).items()):
                    if not callable(member) and not isinstance(member, (staticmethod, classmethod, property)):
                        continue
                    held[f'{name}.{attr}.{key}'] = (value, key, member, getattr(member, '__code__', None))
    return held


def _same(a, b):
    return a[2] is b[2] and a[3] is b[3]


def changed(before):
    """The names whose object or code differs from ``before`` (a :func:`snapshot`), at most five; each is
    put back as it was, so that one function's rewrite does not pass the checks that follow."""
    now = snapshot()
    names = [name for name, held in before.items() if name in now and not _same(now[name], held)]
    for name in names:
        owner, attr, value, code = before[name]
        try:
            if code is not None and getattr(value, '__code__', None) is not code:
                value.__code__ = code
            setattr(owner, attr, value)
        except (AttributeError, TypeError, ValueError):      # a builtin type's attribute: leave it
            pass
    return names[:5]
