#!/usr/bin/env bash
# Refresh the test lock on purpose: resolve the test extras once, pin every package exactly.
# The README's test command installs with `-c requirements/test.lock`, so a fresh clone gets these
# versions on any day without resolving. Run this, then the tests, then commit the new lock.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v uv >/dev/null 2>&1 || python -m pip install --quiet uv
uv pip compile pyproject.toml --extra test --python-version 3.11 --no-header --quiet -o requirements/test.lock.new
{
  echo "# The test extras of pyproject.toml pinned for CPython 3.11 on Linux x86_64."
  echo "# Made by requirements/lock.sh (uv pip compile); refreshed on purpose, never by an install."
  cat requirements/test.lock.new
} > requirements/test.lock
rm requirements/test.lock.new

# The agent frameworks of tests/integration/test_python_clients.py, each in a virtual environment of its own
# (their pins conflict with the test lock's and with each other's); .ci/run installs them from these.
for extra in clients clients-crewai; do
  uv pip compile pyproject.toml --extra "$extra" --python-version 3.11 --no-header --quiet -o "requirements/$extra.lock.new"
  {
    echo "# The $extra extra of pyproject.toml pinned for CPython 3.11 on Linux x86_64 (requirements/lock.sh)."
    cat "requirements/$extra.lock.new"
  } > "requirements/$extra.lock"
  rm "requirements/$extra.lock.new"
done
