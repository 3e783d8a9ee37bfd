# varcap — two commands: `make run` and `make test`.
PY_BOOT ?= python3.11
VENV    := .venv
PY      := $(VENV)/bin/python
STAMP   := $(VENV)/.installed
export DAGSTER_HOME := $(CURDIR)/.dagster_home

.PHONY: run test test-slow ui lint bench install clean-warehouse samples notebooks lab figures

$(PY):
	@command -v $(PY_BOOT) >/dev/null 2>&1 || { echo "need $(PY_BOOT) on PATH (or set PY_BOOT=python3)"; exit 1; }
	$(PY_BOOT) -m venv $(VENV)

# Bytecode: with PYTHONDONTWRITEBYTECODE unset, pip skips it (--no-compile; 39 of pip's 118 CPU s, measured
# 2026-12-02) and Python writes it on first import, only for the modules a process imports. With it set,
# Python never writes any and every process compiled every module it imports from source (importing
# pipelines.definitions: 10.6 CPU s, against 5.6 with bytecode; measured 2026-12-02): the installed packages
# are compiled once here, in one process, all but their own test suites (a quarter of their source, which no
# process of varcap imports): pip then this took 79 and 87 CPU s, against 88 and 100 for pip compiling
# everything (two pairs, pip's cache warm; measured 2026-12-02), and `make install/run/test` compile the
# project's own where it changed (0.3 CPU s when nothing did)
PURELIB = $$($(PY) -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
SITE_BYTECODE = $(if $(PYTHONDONTWRITEBYTECODE),$(PY) -m compileall -q -x 'site-packages[/\\].*[/\\]tests?[/\\]' $(PURELIB) >/dev/null)
OWN_BYTECODE = $(if $(PYTHONDONTWRITEBYTECODE),$(PY) -m compileall -q -j 0 pipelines assets sim studies analysis >/dev/null)
$(STAMP): $(PY) pyproject.toml constraints.txt
	$(PY) -m pip install --quiet --no-compile --upgrade pip
	$(PY) -m pip install --quiet --no-compile -c constraints.txt -e ".[dev,notebooks,dask]"
	$(SITE_BYTECODE)
	$(OWN_BYTECODE)
	$(VENV)/bin/varcap warm
	@touch $(STAMP)

## install, and compile the simulator once for this environment (numba cache; no-op when warm)
install: $(STAMP)
	$(OWN_BYTECODE)
	$(VENV)/bin/varcap warm

## materialize every asset on the embedded samples
run: $(STAMP)
	$(OWN_BYTECODE)
	$(VENV)/bin/varcap run

## run the test suite (offline) on two processes, the `slow` end-to-end tests left out (`make test-slow`)
test: $(STAMP)
	$(OWN_BYTECODE)
	$(PY) -m pytest -q -m "not slow" -n 2 --dist loadfile

## only the tests marked `slow`: reports, kill -9 and fresh-compile end to end (CI runs both targets)
test-slow: $(STAMP)
	$(OWN_BYTECODE)
	$(PY) -m pytest -q -m slow

## Dagster UI on http://127.0.0.1:3000
ui: $(STAMP)
	$(VENV)/bin/varcap ui

## JupyterLab on notebooks/ with the project's kernel (the venv's python3: varcap's packages and warehouse)
lab: $(STAMP)
	$(VENV)/bin/jupyter lab --notebook-dir=notebooks

## docs/figures/*.png from the rendered reports (run `make run` first)
figures: $(STAMP)
	$(VENV)/bin/varcap figures

lint: $(STAMP)
	$(VENV)/bin/ruff check .

bench: $(STAMP)
	$(PY) -m pipelines.bench

## regenerate data/samples from ../shared/data (maintainers only)
samples: $(STAMP)
	$(PY) -m pipelines.make_samples --shared ../shared/data

clean-warehouse:
	rm -f data/warehouse.duckdb data/warehouse.duckdb.wal
