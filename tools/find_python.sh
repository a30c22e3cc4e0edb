#!/bin/sh
# Which Python interpreter `make setup` builds the virtual environment with.
#
#   sh tools/find_python.sh [-q] [--venv DIR] [PYTHON]
#
# prints one line, "X.Y /absolute/path/to/python", or explains on stderr why there is none and
# exits with status 1 (before anything is installed); -q drops notes, not errors. The rule:
#
#   1. PYTHON given (`make setup PYTHON=...`): that interpreter, if it runs and is supported;
#      anything else is an error, never a silent fallback to another version.
#   2. otherwise, with --venv DIR: the Python the existing venv was made with, while that venv's
#      interpreter runs and is supported (switching the venv to another Python is a rebuild: it
#      happens when PYTHON= names one, not behind the user's back);
#   3. otherwise `python3` when its version is supported;
#   4. otherwise the newest supported `python3.X` that actually runs.
#
# Every candidate is *run*, not just found: a pyenv shim exists on PATH for every installed version
# but fails ("pyenv: python3.12: command not found") unless that version is selected, so for
# `python3.X` we also try pyenv's own copy, $PYENV_ROOT/versions/3.X.*/bin/python3.X. A candidate
# must also be able to create a venv (Debian/Ubuntu ship that part as python3.X-venv).
#
# Supported: 3.9 to 3.13, the versions the series is tested on (README, "The two commands").
# Plain POSIX sh on purpose: this has to work when the machine's python3 is the unsupported one.

SUPPORTED="3.13 3.12 3.11 3.10 3.9"   # newest first: the order of rule 4
SUPPORTED_TEXT="3.9, 3.10, 3.11, 3.12 or 3.13"

quiet=
venv=
[ "$1" = -q ] && { quiet=1; shift; }
[ "$1" = --venv ] && { venv=$2; shift 2; }
requested=$1

say() { printf '%s\n' "$*" >&2; }
note() { [ -n "$quiet" ] || say "note: $*"; }

# probe CMD: prints "X.Y EXECUTABLE VENV_OK" when CMD runs (VENV_OK is yes or no), else fails.
# The Python code is valid Python 2 as well, so that PYTHON=python2 gets a clear refusal too.
probe() {
  "$1" -c '
import sys
try:
    import ensurepip, venv
    ok = "yes"
except Exception:
    ok = "no"
print("%d.%d %s %s" % (sys.version_info[0], sys.version_info[1], sys.executable or "-", ok))
' 2>/dev/null
}

is_supported() {
  for v in $SUPPORTED; do [ "$v" = "$1" ] && return 0; done
  return 1
}

why_not() {  # why_not X.Y: one line on why that version is refused
  case "$1" in
    3.8) echo "Python 3.8 is not supported: it is past its end of life, and notebook 08 shows MXNet's launcher failing on Python 3.9 and later (Thread.isAlive was removed), which 3.8 does not reproduce." ;;
    3.1[4-9]|3.[2-9][0-9]) echo "Python $1 is not supported yet: the series is tested on Python $SUPPORTED_TEXT. Its pins for 3.13 (NumPy 2.2, SciPy 1.14, pandas 2.2) have no wheels for $1, and no other set has been tested with MXNet 1.9.1 there; Python 3.13 is the newest that works." ;;
    *) echo "Python $1 is not supported: the series is tested on Python $SUPPORTED_TEXT." ;;
  esac
}

how_to_get_one() {
  say "Install a supported Python, then run make again (it finds python3 or python3.9 ... python3.13 on"
  say "PATH, and pyenv's versions), or name it: make setup PYTHON=/path/to/python3.X"
  say "  Debian 12: python3 is 3.11; Ubuntu 22.04: 3.10; Ubuntu 24.04 and Fedora 39/40: 3.12;"
  say "             Debian 13, Ubuntu 25.04/25.10 and Fedora 41/42: 3.13"
  say "             (sudo apt install python3 python3-venv / sudo dnf install python3)"
  say "  pyenv:     pyenv install 3.13      (then: make setup PYTHON=python3.13)"
  say "  uv:        uv python install 3.13  (then: make setup PYTHON=\$(uv python find 3.13))"
  say "  conda:     conda create -n py313 python=3.13  (then: make setup PYTHON=<that env>/bin/python3.13)"
}

pyenv_copies() {  # pyenv_copies X.Y: pyenv's installs of X.Y, newest patch release first
  root=${PYENV_ROOT:-$HOME/.pyenv}
  [ -d "$root/versions" ] || return 0
  for d in "$root/versions/$1".*; do
    [ -x "$d/bin/python$1" ] && echo "${d##*/}"
  done | sort -t . -k 3,3nr | while read -r name; do echo "$root/versions/$name/bin/python$1"; done
}

# try CMD: succeeds (and prints the result line) when CMD runs a supported Python that can make venvs.
# Remembers why the others were refused, for the final message.
refused=
try() {
  if ! out=$(probe "$1"); then
    if command -v "$1" >/dev/null 2>&1; then refused="$refused
  $1: found, but does not run"; else refused="$refused
  $1: not found"; fi
    return 1
  fi
  set -- "$1" $out
  if ! is_supported "$2"; then
    refused="$refused
  $1: Python $2 -- $(why_not "$2")"; return 1
  fi
  if [ "$4" != yes ]; then
    refused="$refused
  $1: Python $2 cannot create virtual environments (Debian/Ubuntu: sudo apt install python$2-venv)"
    return 1
  fi
  exe=$3; [ "$exe" = - ] && exe=$(command -v "$1")
  echo "$2 $exe"
}

# 1. PYTHON given: that one, or an error.
if [ -n "$requested" ]; then
  run=$requested
  shown=$requested
  out=$(probe "$requested")
  if [ -z "$out" ]; then
    # A pyenv shim for a version that is installed but not selected: use pyenv's own copy.
    name=${requested##*/}
    case "$name" in
      python3.[0-9]|python3.[0-9][0-9])
        for p in $(pyenv_copies "${name#python}"); do
          if out=$(probe "$p"); then
            run=$p; shown="$requested (pyenv's $p: the shim does not run, its version is not selected)"; break
          fi
        done ;;
    esac
  fi
  if [ -z "$out" ]; then
    say "error: PYTHON=$requested does not run a Python interpreter."
    how_to_get_one
    exit 1
  fi
  set -- $out
  if ! is_supported "$1"; then
    say "error: PYTHON=$shown is Python $1. $(why_not "$1")"
    how_to_get_one
    exit 1
  fi
  if [ "$3" != yes ]; then
    say "error: PYTHON=$shown (Python $1) cannot create virtual environments: the venv/ensurepip modules are missing (Debian/Ubuntu: sudo apt install python$1-venv)."
    exit 1
  fi
  exe=$2; [ "$exe" = - ] && exe=$(command -v "$run")
  [ "$run" = "$requested" ] || note "$requested does not run here (a pyenv shim for a version that is not selected?); using $run"
  echo "$1 $exe"
  exit 0
fi

# 2. The existing venv's own Python, while it runs and is supported.
if [ -n "$venv" ] && [ -f "$venv/pyvenv.cfg" ] && out=$(probe "$venv/bin/python"); then
  set -- $out
  if is_supported "$1"; then
    home=$(sed -n 's/^home *= *//p' "$venv/pyvenv.cfg")
    if [ -x "$home/python$1" ]; then echo "$1 $home/python$1"; else echo "$1 $2"; fi
    exit 0
  fi
fi

# 3. python3, 4. the newest supported python3.X that runs (on PATH, then pyenv's copies).
try python3 && exit 0
for ver in $SUPPORTED; do
  for p in "python$ver" $(pyenv_copies "$ver"); do
    try "$p" && exit 0
  done
done

say "error: no supported Python found. This series needs Python $SUPPORTED_TEXT. Tried:$refused"
how_to_get_one
exit 1
