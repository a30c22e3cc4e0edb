"""Every public callable of helpers/ says, in its docstring, which notebook derives or uses it."""
import importlib
import inspect
import pkgutil
import re

import pytest

import helpers

MODULES = sorted(m.name for m in pkgutil.iter_modules(helpers.__path__) if not m.name.startswith('_'))
PUBLIC = [(m, name) for m in MODULES for name in getattr(importlib.import_module(f'helpers.{m}'), '__all__', [])]


def test_every_module_declares_its_public_names():
    for m in MODULES:
        module = importlib.import_module(f'helpers.{m}')
        assert hasattr(module, '__all__'), f'helpers.{m} has no __all__'
        assert re.search(r'notebooks? \d\d', module.__doc__ or ''), f'helpers.{m}: docstring names no notebook'


@pytest.mark.parametrize('module, name', PUBLIC, ids=[f'{m}.{n}' for m, n in PUBLIC])
def test_public_callable_names_its_notebook(module, name):
    obj = getattr(importlib.import_module(f'helpers.{module}'), name)
    if not (inspect.isfunction(obj) or inspect.isclass(obj)):
        return                                  # constants and objects such as `loss` or `plt`
    if inspect.isclass(obj) and issubclass(obj, BaseException):
        doc = obj.__doc__ or ''
    else:
        doc = inspect.getdoc(obj) or ''
    assert re.search(r'notebooks? \d\d', doc), f'helpers.{module}.{name}: no "notebook NN" in its docstring'
