# The README's two commands are `make demo` and `make test`; both create the virtual environment.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
export HF_HUB_OFFLINE := 1
export DBT_SEND_ANONYMOUS_USAGE_STATS := False
export DAGSTER_HOME ?= $(CURDIR)/.dagster_home

.PHONY: demo test test-fast lint format bench dev clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/qct2i demo

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/sqlfluff lint models tests/dbt

format: $(STAMP)
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .
	$(BIN)/sqlfluff fix models tests/dbt

test: lint
	$(BIN)/pytest

test-fast: $(STAMP)
	$(BIN)/pytest -m "not slow"

bench: $(STAMP)
	$(BIN)/python bench/run_bench.py

dev: $(STAMP)
	mkdir -p $(DAGSTER_HOME)
	$(BIN)/dagster dev

clean:
	rm -rf target logs warehouse bench/work .dagster_home
