# Developer entry points. `make test` is what CI runs (after .ci/run installs everything).
PYTHON ?= .venv/bin/python
VENV_BIN := $(dir $(PYTHON))

.PHONY: setup demo lint test test-python test-vscode bench

setup:
	python3 -m venv .venv
	$(PYTHON) -m pip install -e '.[dev]'

demo:
	$(VENV_BIN)plansight demo

LINTED := server tests $(wildcard bench)

lint:
	$(VENV_BIN)ruff check $(LINTED)
	$(VENV_BIN)ruff format --check $(LINTED)
	$(VENV_BIN)mypy

test-python:
	$(PYTHON) -m pytest -q

test-vscode:
	cd vscode-client && npm run typecheck && npm run test:unit && npm run test:e2e

test: lint test-python test-vscode

bench:
	$(PYTHON) -m bench
