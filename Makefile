# Developer shortcuts. `make check` is what CI runs besides the tests.
.PHONY: install check test test-latest lock lint typecheck demo

install:
	pip install -c requirements/test.lock -e '.[test]' -e ./demo

lint:
	ruff check tracekit demo tests benchmarks
	lint-imports

typecheck:
	mypy

check: lint typecheck

test:
	python -m pytest

demo:
	tracekit analyze recordings --cases cases --json reports/results.json

# The newest versions the declared ranges allow, in a throw-away environment (no lock).
test-latest:
	rm -rf .venv-latest && python3 -m venv .venv-latest && .venv-latest/bin/pip install --quiet --upgrade pip
	.venv-latest/bin/pip install --quiet --upgrade -e '.[test]' -e ./demo && .venv-latest/bin/python -m pytest

# Re-resolve requirements/test.lock on purpose (then run the tests and commit it).
lock:
	bash requirements/lock.sh
