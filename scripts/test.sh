#!/usr/bin/env bash
# The whole test suite: Go unit/golden/bad-input tests, short fuzz runs of
# every parser of user input, the Python package's tests and the end-to-end
# tests that run real PyTorch CPU workloads under `inferscope run`.
# Installs what it needs into ./.venv (PyPI) on first use.
set -euo pipefail
cd "$(dirname "$0")/.."
FUZZTIME=${FUZZTIME:-10s}

echo "== go vet"
go vet ./...
echo "== go build"
CGO_ENABLED=0 go build -o dist/inferscope ./cmd/inferscope
echo "== go test"
go test -count=1 ./...
echo "== go fuzz ($FUZZTIME per target)"
for pkg in $(go list ./...); do
  dir=$(go list -f '{{.Dir}}' "$pkg")
  for target in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //'); do
    echo "-- $pkg $target"
    go test "$pkg" -run '^$' -fuzz "^${target}\$" -fuzztime "$FUZZTIME" >/tmp/inferscope-fuzz.log 2>&1 || { cat /tmp/inferscope-fuzz.log; exit 1; }
  done
done

if [ -d python/tests ] || [ -d tests/e2e ]; then
  echo "== python venv"
  if [ ! -x .venv/bin/python ]; then python3 -m venv .venv; fi
  .venv/bin/python -m pip install -q --disable-pip-version-check -r requirements-test.txt
  .venv/bin/python -m pip install -q --disable-pip-version-check --no-deps -e ./python
  # One pytest session per suite: each has its own conftest module, and
  # their helpers are imported by name.
  for d in python/tests tests/e2e; do
    [ -d "$d" ] || continue
    echo "== pytest $d"
    INFERSCOPE_BIN="$PWD/dist/inferscope" .venv/bin/python -m pytest -q "$d"
  done
fi
