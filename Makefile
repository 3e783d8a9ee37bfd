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

# Bytecode: Python writes it on first import, only for the modules a process imports, and pip skips it
# (--no-compile; 39 of pip's 118 CPU s, measured 2026-12-02). An environment that sets PYTHONDONTWRITEBYTECODE
# (this project's development machine does) made every process compile every module it imports from source
# (importing pipelines.definitions: 10.6 CPU s, against 5.6 with bytecode; measured 2026-12-02), so until
# 2026-12-03 the installed packages were compiled here, all of them, in one process: 42 CPU s of a fresh
# clone's `make run` (measured 2026-12-03), most of it for modules no process of varcap imports (jupyterlab,
# bokeh, debugpy, pip, …). The commands make runs write it lazily instead, into .venv and the project only.
export PYTHONDONTWRITEBYTECODE :=

# The packages: uv (pinned in constraints.txt) installs them from the registry, and pip only when uv cannot be
# had. Into an empty venv, the same pins, 2026-12-04 on this project's 2-core machine, one after the other:
# pip 40–56 CPU s (user + sys, the pip upgrade before it 1.8 more), uv 3.6 for itself and 12.4 with an empty
# cache (5.4 with a warm one; 21.6 when its cache is on another file system and it copies instead of linking).
# Neither compiles bytecode (above).
$(STAMP): $(PY) pyproject.toml constraints.txt
	@if $(PY) -m pip install --quiet --no-compile -c constraints.txt uv && \
	    $(VENV)/bin/uv pip install --quiet --python $(PY) -c constraints.txt -e ".[dev,notebooks,dask]"; \
	then :; else \
	    echo "uv could not install the packages: pip does instead"; \
	    $(PY) -m pip install --quiet --no-compile --upgrade pip && \
	    $(PY) -m pip install --quiet --no-compile -c constraints.txt -e ".[dev,notebooks,dask]"; \
	fi
	$(VENV)/bin/varcap warm
	@touch $(STAMP)

## install, and compile the simulator once for this environment (numba cache; no-op when warm)
install: $(STAMP)
	$(VENV)/bin/varcap warm

## materialize every asset on the embedded samples
run: $(STAMP)
	$(VENV)/bin/varcap run

## run the test suite (offline) on two processes, the `slow` end-to-end tests left out (`make test-slow`)
test: $(STAMP)
	$(PY) -m pytest -q -m "not slow" -n 2 --dist loadfile

## only the tests marked `slow`: reports, kill -9 and fresh-compile end to end (CI runs both targets)
test-slow: $(STAMP)
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
