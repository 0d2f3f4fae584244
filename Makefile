# Developer shortcuts. `make check` is what CI runs besides the tests.
.PHONY: install check test lint typecheck demo

install:
	pip install -e '.[test]'

lint:
	ruff check tracekit tracekit_demo tests benchmarks
	lint-imports

typecheck:
	mypy

check: lint typecheck

test:
	python -m pytest

demo:
	tracekit analyze recordings --cases cases --json reports/results.json
