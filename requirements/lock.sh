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
