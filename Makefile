# Data-parallel training from scratch with MXNet. The two commands are `make lab` and `make test`;
# `make help` lists every target, from the `## ` comment on its line. Every target is self-sufficient
# from a fresh clone: it creates/updates the virtual environment (.venv, from requirements.txt) and
# fetches what it needs. Re-running is fast: the venv is updated only when requirements*.txt or
# pyproject.toml change, and rebuilt from scratch only when it has to be made with another Python.

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
# `make test` runs in this many pytest-xdist workers, each a whole notebook or test file at a time
# (tools/pytest_groups.py). Three on a 2-core CI machine: with two, cores sat idle while tests waited
# (on an emulated link, a job's timeout, a subprocess, a browser). A fresh clone's tests took 18 min 50 s
# with two, 15 min 43 s with three (that run also had `import mxnet` 0.46 s cheaper per process); the
# parameter-server group, kept in one worker, is then the longest. TEST_JOBS=1: one after the other.
TEST_JOBS ?= 3
NOTEBOOKS ?=
# The one place for nbval's flags: every notebook is re-executed in this environment and its
# outputs compared with the committed ones, after tests/sanitize.cfg masks what legitimately varies.
NBVAL := --nbval --nbval-current-env --sanitize-with tests/sanitize.cfg --nbval-cell-timeout=$(CELL_TIMEOUT)
# Jupyter refuses to run as root unless told to; CI and containers are often root.
ALLOW_ROOT := $(if $(filter 0,$(shell id -u)),--allow-root,)
# Maintainers: runs per notebook for `make repeat`; HOG=1 keeps one core busy meanwhile. `make
# every-k`: the device counts, and how many of them run at once.
N ?= 3
HOG ?=
K ?= 1 2 3 4 5 6 7 8
JOBS ?= 1

.PHONY: help setup data chromium lab test unit slides book assignments metadata lessons navigation \
        execute repeat every-k bench smoke smoke-pythons clean FORCE
.DEFAULT_GOAL := help

help: ## list the targets (this text)
	@awk 'BEGIN {FS = ":[^#]*## "} /^[a-z][a-z-]*:[^=]*## / {printf "  make %-14s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

# --- The two commands -----------------------------------------------------------------------------
# JupyterLab serves the repository root (the notebooks link ../img/*.svg) and opens the contents
# page. tools/lab/overrides.json goes into the venv's settings: no news pop-up, no update check, no
# extension manager (all of them want the internet). JUPYTER_PREFER_ENV_PATH: the venv's `python3`
# kernel wins over a user-level kernelspec of the same name.
LAB_START := $(firstword $(wildcard notebooks/contents.ipynb) $(sort $(wildcard notebooks/[0-9][0-9]-*.ipynb)))
LAB_OVERRIDES := $(VENV)/share/jupyter/lab/settings/overrides.d/mxnet-dp.json

lab: setup $(LAB_OVERRIDES) ## open the series in JupyterLab (the URL, with its token, is printed)
	JUPYTER_PREFER_ENV_PATH=1 $(VENV)/bin/jupyter lab --ServerApp.root_dir=. \
	  --LabApp.default_url=/lab/tree/$(LAB_START) --LabApp.news_url=None \
	  --ServerApp.ip=$(LAB_IP) --ServerApp.port=$(LAB_PORT) --no-browser $(ALLOW_ROOT) $(LAB_ARGS)

$(LAB_OVERRIDES): tools/lab/overrides.json $(STAMP)
	@mkdir -p $(@D) && cp $< $@

test: setup ## everything: unit tests, every notebook re-executed and compared (nbval), browser tests
	$(PY) -m pytest tests notebooks $(NBVAL) -n $(TEST_JOBS) --dist loadgroup --durations=15 $(PYTEST_ARGS)

unit: setup ## the unit tests only (tests/)
	$(PY) -m pytest tests $(PYTEST_ARGS)

# --- Set-up ---------------------------------------------------------------------------------------
# The venv and the two Debian packages do not depend on each other, so a sub-make builds them side
# by side: on a fresh machine, apt-get installs Chromium (18 s here) while pip installs (36 s). The
# two apt-get runs take dpkg's lock in turn (APT_WAIT, below).
setup: ## create .venv and install everything (lab and test do it)
	@$(MAKE) --no-print-directory -j 3 $(STAMP) data chromium

# The venv's Python. tools/find_python.sh chooses it -- PYTHON= if given (and supported), else the
# Python the venv was made with (while it runs and is supported), else python3 if supported, else the
# newest supported python3.X that runs -- or explains why there is none, before anything is
# installed. $(VENV_ID) holds the chosen version and is rewritten only when it changes (FORCE runs
# the check every time; an unchanged file does not remake $(STAMP)). When the venv's own Python
# (pyvenv.cfg) is another version, or no longer runs, the venv is emptied and made again: packages
# built for one Python are never reused by another.
VENV_ID     := $(VENV)/.made-with-python
FIND_PYTHON := sh tools/find_python.sh --venv $(VENV) $(PYTHON)

$(VENV_ID): FORCE
	@found=$$($(FIND_PYTHON)) || exit 1; mkdir -p $(VENV); \
	  [ "$$(cat $@ 2>/dev/null)" = "$${found%% *}" ] || echo "$${found%% *}" > $@

# Two makes started at once in one clone (`make test` beside `make every-k`) would both build the
# venv, the second emptying it (venv --clear) under the first. So the build runs under a lock,
# flock(1) on $(SETUP_LOCK) (util-linux: on every Debian), in a sub-make: the make that waited
# looks at the stamp again once it holds the lock, and installs nothing if the first built it.
# Where there is no flock (macOS), the sub-make runs unlocked, as the build did before.
SETUP_LOCK := $(VENV).lock
SETUP_DEPS := $(VENV_ID) requirements.txt requirements-nodeps.txt pyproject.toml helpers/_mxnet_compat.py \
              helpers/_mxnet_import.py

ifndef SETUP_LOCKED
$(STAMP): $(SETUP_DEPS)
	@$(if $(shell command -v flock),flock $(SETUP_LOCK)) $(MAKE) --no-print-directory SETUP_LOCKED=1 $(STAMP)
else
# d2l is installed with --no-deps (requirements-nodeps.txt says why); requirements.txt holds its
# dependencies, per Python version. pip would byte-compile each of the ~9,000 files it installs, one
# after the other; compileall does the same on every core (--no-compile, then compileall -j 0: a fresh
# venv's install took 61 s with pip compiling, 33 s + 18 s this way, on 2 cores). It compiles the
# project's helpers/ and tools/ too, which every kernel and every process of a job imports: where
# the environment sets PYTHONDONTWRITEBYTECODE (this machine does), each process would compile them
# anew (0.2 CPU s for what a training notebook imports; a module changed since is compiled again,
# in memory, as before). The last step installs the before-MXNet hook (helpers/_mxnet_compat.py) as
# a .pth file: it acts before any `import mxnet`, notebooks included.
$(STAMP): $(SETUP_DEPS)
	@found=$$($(FIND_PYTHON:--venv=-q --venv)) || exit 1; want=$${found%% *}; py=$${found#* }; \
	  made=$$(sed -n 's/^version *= *\([0-9]*\.[0-9]*\).*/\1/p' $(VENV)/pyvenv.cfg 2>/dev/null); \
	  if [ -n "$$made" ] && [ "$$made" = "$$want" ] && $(PY) -c '' 2>/dev/null; then :; else \
	    if [ -n "$$made" ]; then echo "$(VENV) was made with Python $$made: making it again with Python $$want ($$py)"; \
	    else echo "creating $(VENV) with Python $$want ($$py)"; fi; \
	    "$$py" -m venv --clear $(VENV) && echo "$$want" > $(VENV_ID); \
	  fi
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet --no-compile -r requirements.txt
	$(PY) -m pip install --quiet --no-compile --no-deps -r requirements-nodeps.txt -e .
	$(PY) -m compileall -q -j 0 $(VENV)/lib helpers tools >/dev/null
	@$(PY) -m helpers._mxnet_compat install >/dev/null
	@touch $@
endif

# A Debian package, installed when apt and root are available and `$(1)` is not there yet; else a
# note saying what happens without it ($(4)). Used for the data set and for the browser tests.
# APT_WAIT: apt-get waits up to 5 minutes for dpkg's lock rather than failing at once, as it did when
# two fresh clones' `make test` installed Chromium at the same moment (one said "could not install");
# the data set and Chromium of one set-up, installed side by side, wait for each other the same way.
APT_WAIT := -o DPkg::Lock::Timeout=300
define apt_install
	@if $(1); then :; \
	elif command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
	  echo "installing Debian package $(2) ($(strip $(3)))"; \
	  (DEBIAN_FRONTEND=noninteractive apt-get $(APT_WAIT) install -y -q $(2) >/dev/null 2>&1 || \
	   (apt-get $(APT_WAIT) update -q >/dev/null 2>&1 && \
	    DEBIAN_FRONTEND=noninteractive apt-get $(APT_WAIT) install -y -q $(2) >/dev/null)) || \
	  echo "note: could not install $(2): $(4)"; \
	else \
	  echo "note: no apt/root to install $(2): $(4)"; \
	fi
endef

data: ## Fashion-MNIST from Debian's dataset-fashion-mnist, where apt and root allow
	$(call apt_install,[ -f /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz ],dataset-fashion-mnist,\
	  the offline data set,helpers.data falls back on FASHION_MNIST_DIR then MXNet's cache then a download)

chromium: ## Chromium for the browser tests, where apt and root allow
	$(call apt_install,command -v chromium >/dev/null 2>&1 || [ -n "$$CHROMIUM" ],chromium,\
	  for the browser tests,tests/test_browser.py is skipped unless Chromium is installed or CHROMIUM=/path/to/chrome)

# --- Slides and book, from the committed executed notebooks (nothing is re-executed) --------------
# Every script, font and figure is copied next to them: they work offline, from file://. The
# browser assets are pinned in tools/web/package-lock.json and fetched once with npm into build/web/.
BUILD_INPUTS := $(wildcard notebooks/*.ipynb notebooks/solutions/*.ipynb img/*) $(wildcard tools/*.py) \
  tools/web/assets.py tools/web/package-lock.json

slides: setup build/slides/index.html ## one reveal.js deck per notebook, offline: build/slides/index.html
build/slides/index.html: $(BUILD_INPUTS) $(wildcard tools/web/templates/*/*)
	$(PY) -m tools.build_slides

book: setup build/book/_build/html/index.html ## the series as an HTML book, offline: build/book/_build/html/
build/book/_build/html/index.html: $(BUILD_INPUTS) $(wildcard tools/book/*)
	$(PY) -m tools.build_book

# --- Maintainers (docs/maintainers.md) ------------------------------------------------------------
execute: setup ## re-execute every notebook, then every solution, in place, in order (NOTEBOOKS="..." for some)
	$(PY) -m tools.execute_notebooks $(NOTEBOOKS)

lessons: setup ## rewrite lesson cells from helpers/ (refuses to overwrite a cell edited in a notebook)
	$(PY) -m tools.lessons

navigation: setup ## rewrite the contents page, previous/next cells and the README's notebook table
	$(PY) -m tools.navigation

metadata: setup ## rewrite slide types and collapsed asides from the notebooks' tags and headings
	$(PY) -m tools.cell_metadata

repeat: setup ## run every notebook N times (HOG=1: one core busy) and report cells that changed
	$(PY) -m tools.repeat_check -n $(N) $(if $(HOG),--hog,) $(NOTEBOOKS)

assignments: setup ## the student edition for nbgrader, in build/assignments/ (docs/assignments.md)
	$(PY) -m tools.assignments

every-k: setup ## every notebook at MXDP_DEVICES=cpu:k for k in K (default 1..8): a table of what passed
	$(PY) -m tools.every_k --k $(K) --jobs $(JOBS) --cell-timeout $(CELL_TIMEOUT) $(NOTEBOOKS)

bench: setup ## run every benchmark in benchmarks/ (about an hour; rewrites their stored results)
	@for b in benchmarks/*.py; do echo "== $$b"; $(PY) $$b || exit 1; done

# The smoke subset, in this venv: unit tests (not the browser tests) and notebooks 00 and 08 (the
# distributed one) under nbval. smoke-pythons runs it on each supported Python found here, each in
# a venv of its own (.venv-smoke/3.X, made by `make setup`), one after the other; FRESH=1 makes
# every smoke venv from scratch (tools/smoke_pythons.sh).
SMOKE_NOTEBOOKS ?= $(wildcard notebooks/00-*.ipynb notebooks/08-*.ipynb)
SMOKE_PYTHONS   ?= 3.9 3.10 3.11 3.12 3.13

smoke: setup ## unit tests and notebooks 00 and 08, in this venv
	$(PY) -m pytest tests $(SMOKE_NOTEBOOKS) --ignore=tests/test_browser.py $(NBVAL) -q $(PYTEST_ARGS)

smoke-pythons: ## the smoke subset on every supported Python found here (FRESH=1: fresh venvs)
	@sh tools/smoke_pythons.sh $(if $(FRESH),--fresh) $(SMOKE_PYTHONS)

clean: ## remove the virtual environment and build/
	rm -rf $(VENV) $(SETUP_LOCK) build

FORCE:
