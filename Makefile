# ClusterPlan: `make run` starts the product on SQLite with a real Celery worker on a
# server-less (filesystem) broker; `make test` runs every test. Both build .venv first.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp

.PHONY: venv test test-core test-web run lint typecheck golden bench clean

venv: $(STAMP)

$(STAMP): requirements.txt requirements-dev.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q -U pip
	$(PY) -m pip install -q -r requirements-dev.txt
	touch $(STAMP)

test: lint typecheck
	$(PY) manage.py makemigrations --check --dry-run
	$(PY) -m pytest

# The fast loop: lint, types and the core's tests, without Django or a database.
test-core: lint typecheck
	$(PY) -m pytest -p no:django -W ignore::pytest.PytestConfigWarning -q \
		tests/estimator tests/test_import_cycles.py tests/test_golden.py tests/test_docs.py

# The web layer's quick loop: lint, types, migrations and the Django tests (api, pages, apps,
# settings, layers), without the fuzzing, the real-worker (integration) and the browser tests,
# which only `make test` runs. tests/fuzz is not even collected: schemathesis builds its cases then.
WEB_TESTS := -m "not fuzz and not integration and not browser" -p no:schemathesis \
	--ignore=tests/estimator --ignore=tests/fuzz --ignore=tests/test_golden.py
test-web: lint typecheck
	$(PY) manage.py makemigrations --check --dry-run
	$(PY) -m pytest -q $(WEB_TESTS)

lint: $(STAMP)
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .

typecheck: $(STAMP)
	$(PY) -m mypy

# After an intended change of results (bump ENGINE_VERSION and add a CHANGELOG.md entry first).
golden: $(STAMP)
	$(PY) -m tests.golden --update

run: $(STAMP)
	$(PY) scripts/run_embedded.py

bench: $(STAMP)
	$(PY) bench/layout_search.py
	$(PY) bench/sweep.py
	$(PY) bench/api_estimate.py
	$(PY) bench/core_vectorized.py
	$(PY) bench/plan_speed.py
	$(PY) bench/report_page.py
	$(PY) bench/cli_plan.py
	$(PY) bench/supernode_compare.py
	$(PY) bench/hostile_load.py --seconds 30

clean:
	rm -rf $(VENV) var .pytest_cache
