import os

# `make test` runs the suite in three pytest-xdist workers; tools/pytest_groups.py keeps a notebook,
# a test file, the browser tests and the network jobs each in one worker, and says why.
from tools.pytest_groups import pytest_collection_modifyitems, pytest_xdist_make_scheduler  # noqa: F401  (hooks)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NOTEBOOKS = os.path.join(ROOT, 'notebooks')
