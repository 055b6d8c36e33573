# ClusterPlan: `make run` starts the product on SQLite with a real Celery worker on a
# server-less (filesystem) broker; `make test` runs every test. Both build .venv first.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp

.PHONY: venv test run lint bench clean

venv: $(STAMP)

$(STAMP): requirements.txt requirements-dev.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q -U pip
	$(PY) -m pip install -q -r requirements-dev.txt
	touch $(STAMP)

test: $(STAMP)
	$(PY) -m ruff check .
	$(PY) manage.py makemigrations --check --dry-run
	$(PY) -m pytest

lint: $(STAMP)
	$(PY) -m ruff check .

run: $(STAMP)
	$(PY) scripts/run_embedded.py

bench: $(STAMP)
	$(PY) bench/layout_search.py
	$(PY) bench/sweep.py
	$(PY) bench/api_estimate.py
	$(PY) bench/core_vectorized.py

clean:
	rm -rf $(VENV) var .pytest_cache
