"""``varcap sql``, ``varcap ui`` and ``varcap warm``: query the warehouse, serve the Dagster UI, compile the
simulator once for this environment."""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

from pipelines.cli.common import prepare_dagster_home
from sim import paths


def cmd_ui(args: argparse.Namespace) -> int:
    prepare_dagster_home()
    exe = (
        shutil.which("dagster", path=os.path.dirname(sys.executable)) or shutil.which("dagster") or "dagster"
    )
    home = Path(os.environ["DAGSTER_HOME"])
    # the code location is named `varcap` (as [tool.dagster] says); run from DAGSTER_HOME so Dagster does not
    # warn about the repository's dagster.yaml (the template copied there) being unused
    workspace = home / "workspace.yaml"
    repo = Path(__file__).resolve().parents[2]
    workspace.write_text(
        "load_from:\n  - python_module:\n      module_name: pipelines.definitions\n"
        f"      location_name: varcap\n      working_directory: {repo}\n"
    )
    cmd = [exe, "dev", "-w", str(workspace), "-h", args.host, "-p", str(args.port)]
    print(f"DAGSTER_HOME={home}\n{' '.join(cmd)}\nopen http://{args.host}:{args.port}")
    # `dagster dev` is superseded by `dg dev`, which needs a dg project layout that varcap does not use
    env = {**os.environ, "PYTHONWARNINGS": "ignore:Function `dev_command` is superseded"}
    return subprocess.call(cmd, cwd=home, env=env)


def cmd_warm(args: argparse.Namespace) -> int:
    """Compile and cache the simulator's numba kernel for this environment (``make install`` runs it)."""
    from pipelines.cli.common import doing
    from pipelines.cli.sweeps import WARM_PHASE
    from sim.warmup import cold_hooks, ensure_warm, warm

    with doing(WARM_PHASE):
        if ensure_warm():
            return 0
    # Target*/SlackSched's own numba functions and Harmony's engine (a warm kernel says nothing of them)
    with doing("looking for numba hooks not cached"):
        cold = cold_hooks()
    if cold and not args.force:
        print(f"compiling the numba hooks of {', '.join(cold)} once for this environment …")
        with doing(f"compiling the numba hooks of {', '.join(cold)}"):
            print(f"compiled and cached in {warm(cold):.0f} s")
        return 0
    if args.force:
        with doing("re-running the warm-up simulations"):
            print(f"simulator cache was warm; warm-up re-run in {warm():.1f} s")
    else:
        print("simulator cache is warm: nothing to compile")
    return 0


def cmd_sql(args: argparse.Namespace) -> int:
    """Run one read-only SQL query against the warehouse and print the result. The query is sandboxed: no
    file outside the warehouse can be read or written (``--csv`` is written by varcap, not by the query)."""
    import duckdb

    path = paths.warehouse_path()
    if not path.exists():
        raise SystemExit(f"{path} not found: run `make run` first")
    from pipelines.guard import connect_readonly

    with connect_readonly(path) as con:
        # sandboxed: the query reads the warehouse and nothing else (no read_csv('/etc/passwd'), no
        # COPY … TO, no ATTACH, no extension install), and cannot switch that back on
        con.execute("SET enable_external_access = false")
        con.execute("SET lock_configuration = true")
        try:
            rel = con.sql(args.query)
        except duckdb.Error as e:
            raise SystemExit(f"query failed: {e}") from e
        if rel is None:
            return 0
        df = rel.pl()
    if args.csv:
        df.write_csv(args.csv)
        print(f"{df.height} rows → {args.csv}")
    else:
        import polars as pl

        with pl.Config(tbl_rows=args.rows, tbl_cols=-1, fmt_str_lengths=60):
            print(df)
    return 0
