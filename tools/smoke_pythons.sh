#!/bin/sh
# `make smoke-pythons`: the smoke subset on every supported Python found on this machine.
#
#   sh tools/smoke_pythons.sh [--fresh] [3.9 3.10 3.11 3.12 3.13]
#
# For each version: the interpreter tools/find_python.sh finds for `python3.X` (pyenv's copy when
# the shim does not run), a venv of its own, .venv-smoke/3.X, made by `make setup` itself (so the
# set-up path is what is tested), then `make smoke` in it: the unit tests, and notebooks 00 and 08
# (the distributed one) under nbval. One version at a time (they would compete for the cores).
# --fresh (make smoke-pythons FRESH=1) deletes each smoke venv first, so that the set-up time is
# that of a fresh clone (pip's cache still helps). Logs: .venv-smoke/3.X-setup.log and -test.log. Prints set-up and test time per version; exits
# non-zero when a version found here fails. A version not found is reported, not a failure.
cd "$(dirname "$0")/.." || exit 1
fresh=
[ "$1" = --fresh ] && { fresh=1; shift; }
versions=${*:-3.9 3.10 3.11 3.12 3.13}
mkdir -p .venv-smoke
summary=
failed=0

for v in $versions; do
  if ! found=$(sh tools/find_python.sh -q "python$v" 2>/dev/null); then
    summary="$summary
  Python $v     not found on this machine: skipped"
    continue
  fi
  py=${found#* }
  venv=.venv-smoke/$v
  if [ -n "$fresh" ]; then rm -rf "$venv"; kind=fresh; elif [ -d "$venv" ]; then kind=reused; else kind=fresh; fi
  echo "== Python $v ($py): make setup VENV=$venv, $kind (log: $venv-setup.log)"
  t0=$(date +%s)
  make --no-print-directory setup VENV="$venv" PYTHON="$py" > "$venv-setup.log" 2>&1
  rc=$?
  t1=$(date +%s)
  if [ $rc -ne 0 ]; then
    tail -n 20 "$venv-setup.log"
    summary="$summary
  Python $v     set-up FAILED after $((t1 - t0)) s (see $venv-setup.log)"
    failed=1
    continue
  fi
  echo "== Python $v: make smoke VENV=$venv (log: $venv-test.log)"
  make --no-print-directory smoke VENV="$venv" PYTHON="$py" > "$venv-test.log" 2>&1
  rc=$?
  t2=$(date +%s)
  result=$(grep -E '^(=+ )?[0-9]+ (passed|failed)|(passed|failed|error)[a-z]* in [0-9.]+s' "$venv-test.log" | tail -n 1 | tr -d '=')
  if [ $rc -ne 0 ]; then
    tail -n 30 "$venv-test.log"
    status=FAILED
    failed=1
  else
    status=ok
  fi
  full=$("$venv/bin/python" -c 'import platform; print(platform.python_version())')
  summary="$summary
  Python $full  $status   set-up $((t1 - t0)) s ($kind), tests $((t2 - t1)) s  ($result)"
done

echo
echo "smoke-pythons (set-up: make setup in a new venv; tests: unit tests + notebooks 00 and 08):$summary"
exit $failed
