# Data-parallel training from scratch with MXNet: the two commands are `make lab` and `make test`.
# Every target is self-sufficient from a fresh clone: it creates/updates the virtual environment
# (.venv, from requirements.txt) and fetches the data package when it can. Re-running is fast:
# the venv is rebuilt only when requirements.txt or pyproject.toml change.

PYTHON   ?= python3
VENV     ?= .venv
PY       := $(VENV)/bin/python
STAMP    := $(VENV)/.installed
LAB_IP   ?= 127.0.0.1
LAB_PORT ?= 8888
LAB_ARGS ?=
# nbval: one cell may run this long before the test fails (no cell may hang a CI run).
CELL_TIMEOUT ?= 1200
PYTEST_ARGS ?=
DEB_DATA := /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz
# Jupyter refuses to run as root unless told to; CI and containers are often root.
ALLOW_ROOT := $(if $(filter 0,$(shell id -u)),--allow-root,)

.PHONY: setup data lab test unit execute bench clean help
help:
	@echo "make lab    - open the series in JupyterLab (http://$(LAB_IP):$(LAB_PORT))"
	@echo "make test   - unit tests + every notebook executed and compared (nbval)"
	@echo "make setup  - create .venv and install everything (done by lab/test too)"
	@echo "make execute - re-execute notebooks in place, in order (maintainers, before committing)"
	@echo "make bench  - run the benchmark scripts in benchmarks/"

setup: $(STAMP) data

$(STAMP): requirements.txt pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	$(PY) -m pip install --quiet --no-deps -e .
	@touch $@

# Fashion-MNIST from Debian's `dataset-fashion-mnist` when apt and root are available; otherwise
# helpers.data falls back to MXNet's cache and a download (see README, "Data").
data:
	@if [ -f $(DEB_DATA) ]; then :; \
	elif command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
	  echo "installing Debian package dataset-fashion-mnist"; \
	  (DEBIAN_FRONTEND=noninteractive apt-get install -y -q dataset-fashion-mnist >/dev/null 2>&1 || \
	   (apt-get update -q >/dev/null 2>&1 && \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -q dataset-fashion-mnist >/dev/null)) || \
	  echo "note: could not install dataset-fashion-mnist; helpers.data will try MXNet's cache, then download"; \
	else \
	  echo "note: no apt/root: helpers.data will use \$$FASHION_MNIST_DIR, MXNet's cache, or download"; \
	fi

lab: setup
	$(VENV)/bin/jupyter lab --ServerApp.root_dir=notebooks --ServerApp.ip=$(LAB_IP) \
	  --ServerApp.port=$(LAB_PORT) --no-browser $(ALLOW_ROOT) $(LAB_ARGS)

test: setup
	$(PY) -m pytest tests notebooks --nbval --nbval-current-env \
	  --sanitize-with tests/sanitize.cfg --nbval-cell-timeout=$(CELL_TIMEOUT) \
	  --durations=15 $(PYTEST_ARGS)

unit: setup
	$(PY) -m pytest tests $(PYTEST_ARGS)

execute: setup
	$(PY) tools/execute_notebooks.py $(NOTEBOOKS)

bench: setup
	@for b in benchmarks/*.py; do echo "== $$b"; $(PY) $$b || exit 1; done

clean:
	rm -rf $(VENV)

# Maintainers (tools/README.md): keep lesson cells equal to helpers/, rewrite the navigation, and
# run the notebooks N times (HOG=1: with one core kept busy) to find cells that do not hold every time.
N ?= 3
.PHONY: lessons navigation repeat
lessons: setup
	$(PY) tools/lessons.py
navigation: setup
	$(PY) tools/navigation.py
repeat: setup
	$(PY) tools/repeat_check.py -n $(N) $(if $(HOG),--hog,) $(NOTEBOOKS)
