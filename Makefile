# Data-parallel training from scratch with MXNet: the two commands are `make lab` and `make test`.
# Every target is self-sufficient from a fresh clone: it creates/updates the virtual environment
# (.venv, from requirements.txt) and fetches the data package when it can. Re-running is fast:
# the venv is updated only when requirements*.txt or pyproject.toml change, and rebuilt from scratch
# only when it has to be made with another Python (3.9-3.12; see "The venv's Python" below).

# PYTHON=python3.12 (or a path) picks the interpreter; empty: tools/find_python.sh picks one.
PYTHON   ?=
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

.PHONY: setup data chromium lab slides book slide-metadata test unit execute bench clean help
help:
	@echo "make lab    - open the series in JupyterLab (http://$(LAB_IP):$(LAB_PORT))"
	@echo "make test   - unit tests + every notebook executed and compared (nbval) + browser tests"
	@echo "make slides - one reveal.js deck per notebook, offline: build/slides/index.html"
	@echo "make book   - the series as a static HTML book, offline: build/book/_build/html/index.html"
	@echo "make setup  - create .venv and install everything (done by lab/test too)"
	@echo "make execute - re-execute notebooks in place, in order (maintainers, before committing)"
	@echo "make bench  - run the benchmark scripts in benchmarks/"
	@echo "make smoke-pythons - set-up, unit tests, notebooks 00 and 08 on each Python 3.9-3.12 found here"

setup: $(STAMP) data chromium

# The venv's Python. tools/find_python.sh chooses it -- PYTHON= if given (and supported), else the
# Python the venv was made with (while it runs and is supported), else python3 if supported, else the
# newest python3.X (3.9-3.12) that runs -- or explains why there is none, before anything is
# installed. $(VENV_ID) holds the chosen version and is rewritten only when it changes (FORCE runs
# the check every time; an unchanged file does not remake $(STAMP)). When the venv's own Python
# (pyvenv.cfg) is another version, or no longer runs, the venv is emptied and made again: packages
# built for one Python are never reused by another.
VENV_ID     := $(VENV)/.made-with-python
FIND_PYTHON := sh tools/find_python.sh --venv $(VENV) $(PYTHON)

$(VENV_ID): FORCE
	@found=$$($(FIND_PYTHON)) || exit 1; mkdir -p $(VENV); \
	  [ "$$(cat $@ 2>/dev/null)" = "$${found%% *}" ] || echo "$${found%% *}" > $@

# d2l is installed with --no-deps (requirements-nodeps.txt says why); requirements.txt holds its
# dependencies, per Python version. The last step installs the MXNet/NumPy compatibility shim
# (helpers/_mxnet_compat.py) as a .pth file: it acts before any `import mxnet`, notebooks included.
$(STAMP): $(VENV_ID) requirements.txt requirements-nodeps.txt pyproject.toml helpers/_mxnet_compat.py
	@found=$$($(FIND_PYTHON:--venv=-q --venv)) || exit 1; want=$${found%% *}; py=$${found#* }; \
	  made=$$(sed -n 's/^version *= *\([0-9]*\.[0-9]*\).*/\1/p' $(VENV)/pyvenv.cfg 2>/dev/null); \
	  if [ -n "$$made" ] && [ "$$made" = "$$want" ] && $(PY) -c '' 2>/dev/null; then :; else \
	    if [ -n "$$made" ]; then echo "$(VENV) was made with Python $$made: making it again with Python $$want ($$py)"; \
	    else echo "creating $(VENV) with Python $$want ($$py)"; fi; \
	    "$$py" -m venv --clear $(VENV) && echo "$$want" > $(VENV_ID); \
	  fi
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	$(PY) -m pip install --quiet --no-deps -r requirements-nodeps.txt -e .
	@$(PY) -m helpers._mxnet_compat install >/dev/null
	@touch $@

.PHONY: FORCE
FORCE:

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

# JupyterLab serves the repository root (the notebooks link ../img/*.svg) and opens the contents
# (or the first notebook). tools/lab/overrides.json goes into the venv's settings: no news pop-up,
# no update check, no extension manager (all of them want the internet). JUPYTER_PREFER_ENV_PATH:
# the venv's `python3` kernel wins over a user-level kernelspec of the same name.
LAB_START := $(firstword $(wildcard notebooks/contents.ipynb) $(sort $(wildcard notebooks/[0-9][0-9]-*.ipynb)))
LAB_OVERRIDES := $(VENV)/share/jupyter/lab/settings/overrides.d/mxnet-dp.json
$(LAB_OVERRIDES): tools/lab/overrides.json $(STAMP)
	@mkdir -p $(@D) && cp $< $@

lab: setup $(LAB_OVERRIDES)
	JUPYTER_PREFER_ENV_PATH=1 $(VENV)/bin/jupyter lab --ServerApp.root_dir=. \
	  --LabApp.default_url=/lab/tree/$(LAB_START) --LabApp.news_url=None \
	  --ServerApp.ip=$(LAB_IP) --ServerApp.port=$(LAB_PORT) --no-browser $(ALLOW_ROOT) $(LAB_ARGS)

# Chromium for tests/test_browser.py (JupyterLab, the slides and the book in a real browser), from
# Debian's packages when apt and root are available; without it those tests are skipped, saying why.
chromium:
	@if command -v chromium >/dev/null 2>&1 || [ -n "$$CHROMIUM" ]; then :; \
	elif command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
	  echo "installing Debian package chromium (for the browser tests)"; \
	  (DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null 2>&1 || \
	   (apt-get update -q >/dev/null 2>&1 && \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null)) || \
	  echo "note: could not install chromium; tests/test_browser.py will be skipped"; \
	else \
	  echo "note: no apt/root: tests/test_browser.py is skipped unless Chromium is installed (or CHROMIUM=/path/to/chrome)"; \
	fi

# Lecture slides and the HTML book, from the committed executed notebooks (nothing is re-executed),
# with every script, font and figure copied next to them: they work offline, from file://. The
# browser assets are pinned in tools/web/package-lock.json and fetched once with npm into build/web/.
BUILD_INPUTS := $(wildcard notebooks/*.ipynb notebooks/solutions/*.ipynb img/*) tools/web/assets.py \
  tools/web/package-lock.json
slides: setup build/slides/index.html
build/slides/index.html: $(BUILD_INPUTS) tools/build_slides.py tools/slides.py $(wildcard tools/web/templates/*/*)
	$(PY) tools/build_slides.py
book: setup build/book/_build/html/index.html
build/book/_build/html/index.html: $(BUILD_INPUTS) tools/build_book.py tools/book/_config.yml
	$(PY) tools/build_book.py
# Maintainers: rewrite the notebooks' slide metadata (metadata.slideshow only) after editing them.
slide-metadata: setup
	$(PY) tools/slides.py

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

# --- Every supported Python (issue 13). `make smoke`: the smoke subset in this venv -- unit tests
# (not the browser tests) and notebooks 00 and 08 (the distributed one) under nbval. `make
# smoke-pythons`: that, on each of Python 3.9-3.12 found on this machine, each in a venv of its own
# (.venv-smoke/3.X, made by `make setup`), one after the other; prints set-up and test time per
# version (tools/smoke_pythons.sh). FRESH=1 makes every smoke venv from scratch.
SMOKE_NOTEBOOKS ?= $(wildcard notebooks/00-*.ipynb notebooks/08-*.ipynb)
SMOKE_PYTHONS   ?= 3.9 3.10 3.11 3.12 3.13
.PHONY: smoke smoke-pythons
smoke: setup
	$(PY) -m pytest tests $(SMOKE_NOTEBOOKS) --ignore=tests/test_browser.py --nbval --nbval-current-env \
	  --sanitize-with tests/sanitize.cfg --nbval-cell-timeout=$(CELL_TIMEOUT) -q $(PYTEST_ARGS)
smoke-pythons:
	@sh tools/smoke_pythons.sh $(if $(FRESH),--fresh) $(SMOKE_PYTHONS)
