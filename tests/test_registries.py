"""Registries are the one edit point: a workload, a capacity kind and a metric are each one entry; the
scenario cache key covers the sources a result depends on and nothing else."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from sim.capacity.kinds import KINDS, BuildArgs, CapacityKind, Param, capacity_help
from sim.capacity.kinds import register as register_kind
from sim.capacity.trace import DAY, CapacitySpec, CapacityTrace
from sim.metrics import METRIC_NAMES, METRICS
from sim.workloads.registry import WORKLOADS, WorkloadArgs, WorkloadSpec, templates, workload_help
from sim.workloads.registry import register as register_workload
from studies import sweep
from studies.scenarios import Scenario, build_jobs, platform_size

ROOT = Path(__file__).resolve().parents[1]


# ------------------------------------------------------------------ a toy workload and capacity kind
def _toy_jobs(a: WorkloadArgs) -> pl.DataFrame:
    """``n`` one-core jobs of ``length_s``, one every 10 minutes."""
    n = a.params["n"]
    return pl.DataFrame(
        {
            "job_id": np.arange(n),
            "submit_s": np.arange(n) * 600.0,
            "duration_s": np.full(n, a.params["length_s"]),
            "cores": np.ones(n),
        }
    )


def _square(spec: CapacitySpec, a: BuildArgs) -> CapacityTrace:
    """Every machine, then ``low`` of them, alternating every ``period_s``."""
    t = np.arange(0.0, a.horizon_s, spec.get("period_s"))
    alive = np.where(np.arange(len(t)) % 2 == 0, a.machines, spec.get("low"))
    return CapacityTrace(
        t, alive, a.machines, a.horizon_s, spec.get("period_s"), "toy_square", spec.to_dict()
    )


@pytest.fixture
def toys():
    register_workload(
        WorkloadSpec(
            "toy-<n>-<length_s>", "n one-core jobs, one every 10 min", _toy_jobs, {"n": int}, size_free=True
        )
    )
    register_kind(
        CapacityKind(
            "toy_square",
            "all machines, then `low`, alternating",
            {
                "period_s": Param(float, 7200.0, "half period"),
                "low": Param(int, 2, "machines in the low half"),
            },
            _square,
        )
    )
    yield
    WORKLOADS.unregister("toy-<n>-<length_s>")
    KINDS.unregister("toy_square")


def test_a_registered_workload_and_capacity_kind_simulate_through_the_normal_path(toys, tmp_path) -> None:
    sc = Scenario(
        "toy-30-3000", {"kind": "toy_square", "period_s": 7200.0}, machines=4, cores=2, horizon_days=1.0
    )
    assert sweep.input_files(sc) == []
    row = sweep.run_scenario(sc, tmp_path / "in", tmp_path / "runs")
    m = row["metrics"]
    assert not row["cache_hit"] and m["jobs"] == 30 and m["completed"] == 30
    # 12 two-hour halves alternating 4 and 2 machines of 2 cores: (6 × 4 + 6 × 2) × 7200 s × 2 cores
    assert m["available_core_seconds"] == pytest.approx(36 * 7200.0 * 2)
    assert m["goodput"] == pytest.approx(30 * 3000.0 / (36 * 7200.0 * 2))
    assert sweep.run_scenario(sc, tmp_path / "in", tmp_path / "runs")["cache_hit"]
    # sized to the load when no platform is given (size-free: built once, at 1 machine)
    free = Scenario("toy-30-3000", {"kind": "toy_square"}, horizon_days=1.0)
    assert platform_size(free, tmp_path) == max(1, round(30 * 3000.0 / DAY / (0.8 * 0.7 * 24)))
    # the CLI text and its help know the kind; the error of an unknown name lists both
    assert CapacitySpec.parse("toy-square:low=1").get("period_s") == 7200.0
    assert "toy-square[:period_s=7200,low=2]" in capacity_help()
    assert "toy-<n>-<length_s>: n one-core jobs" in workload_help()
    with pytest.raises(ValueError, match=r"unknown workload 'toy'; workloads: .*toy-<n>-<length_s>"):
        build_jobs(Scenario("toy", {"kind": "constant"}), tmp_path, 1)
    with pytest.raises(ValueError, match=r"unknown capacity kind 'sine'; capacity kinds: .*toy_square"):
        CapacitySpec.from_dict({"kind": "sine"})
    with pytest.raises(ValueError, match=r"toy-x-1': n='x' is not a int"):
        build_jobs(Scenario("toy-x-1", {"kind": "constant"}), tmp_path, 1)


def test_registries_name_every_builtin_and_refuse_duplicates() -> None:
    assert {"zipf-<s>", "pareto-<alpha>-<xm_s>", "azure", "borg2011", "harvest-tasks"} <= set(
        WORKLOADS.names()
    )
    assert {"constant", "random_walk", "carbon_budget", "harvest", "pool"} <= set(KINDS.names())
    assert templates() == ("azure", "swf", "borg2011")  # what out_sim_inputs exports
    with pytest.raises(ValueError, match="registered twice"):
        register_kind(KINDS.get("constant"))
    with pytest.raises(ValueError, match="registered twice"):
        register_workload(WORKLOADS.get("azure"))
    # a kind with non-scalar parameters is not written on the command line
    with pytest.raises(ValueError, match="given as a catalogue dict"):
        CapacitySpec.parse("pool")


def test_help_comes_from_the_registry_without_heavy_imports() -> None:
    code = (
        "import sys; from sim.capacity.kinds import capacity_help; from sim.workloads.registry import "
        "workload_help; h = capacity_help(); w = workload_help(); "
        "print(h); print(w); print(sorted(m for m in ('numpy', 'polars', 'numba') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert out[-1] == "[]"
    text, kinds = "\n".join(out[:-1]), out[0]
    listed, _, by_assets = kinds.partition("Built from grid signals by the capacity assets: ")
    for name, kind in KINDS.items():
        shown = name.replace("_", "-")
        assert (f" {shown}[:" in listed) == (kind.cli and kind.signal is None), name
        assert (shown in by_assets.split(", ")) == (kind.signal is not None), name
    assert "random-walk[:changes_per_hour=1,step=0.15,dynamic_range=0.6,mean=0.7,seed=0]" in text
    assert "risk-aware-walk[:m_avg=REQUIRED" in text
    assert all(f"{n}: " in text for n in WORKLOADS.names())


# --------------------------------------------------------------------------------------------- metrics
def test_metric_columns_come_from_the_metric_list() -> None:
    from assets.schema import OUT_SIM_RESULTS

    cols = {c.name: c for c in OUT_SIM_RESULTS.columns}
    assert tuple(m.name for m in METRICS) == METRIC_NAMES
    for m in METRICS:
        c = cols[m.name]
        assert (c.sql_type, c.unit, c.doc) == ("BIGINT" if m.kind is int else "DOUBLE", m.unit, m.description)
    names = [c.name for c in OUT_SIM_RESULTS.columns]
    first = names.index(METRICS[0].name)
    assert names[first : first + len(METRICS)] == list(METRIC_NAMES)


# ------------------------------------------------------------------------------------------ cache key
@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A copy of the sources the key is computed from, and of the papers' packages."""
    ignore = shutil.ignore_patterns("__pycache__")
    shutil.copytree(ROOT / "sim", tmp_path / "sim", ignore=ignore)
    shutil.copytree(ROOT / "studies", tmp_path / "studies", ignore=ignore)
    return tmp_path


def _edit(path: Path) -> None:
    """A change of code (a new module-level name)."""
    path.write_text(path.read_text() + "\n_EDITED = 1\n")


def _comment(path: Path) -> None:
    """A change of comments and docstrings only."""
    text = path.read_text().replace('"""', '"""Edited. ', 1)
    path.write_text("# edited\n" + text + "\n# edited too\n")


def test_cache_key_covers_what_a_result_depends_on(tree: Path) -> None:
    assert sweep.code_version() == sweep.source_version(ROOT)
    key = sweep.source_version(tree)
    for untouched in ("sim/bench/scale.py", "sim/harmony/run.py", "sim/bench/harmony.py"):
        _edit(tree / untouched)
        assert sweep.source_version(tree) == key, untouched
    for f in (
        "sim/engine/kernel.py",
        "sim/policies/ias.py",
        "sim/policies/target.py",
        "sim/engine/loop.py",
        "sim/metrics.py",
        "sim/workloads/generators.py",
        "sim/workloads/registry.py",
        "sim/capacity/generators.py",
        "sim/capacity/kinds.py",
        "studies/scenarios.py",
        "studies/signals.py",
        "studies/sweep.py",
    ):
        _edit(tree / f)
        changed = sweep.source_version(tree)
        assert changed != key, f
        key = changed
    files = {str(f.relative_to(tree)) for f in sweep.result_sources(tree)}
    assert {"sim/engine/trees.py", "sim/engine/admission.py", "sim/harvest/passes.py", "sim/__init__.py"} <= files
    assert not {f for f in files if f.startswith(("sim/harmony", "sim/bench"))}
    assert not {f for f in files if f.startswith("studies/") and f.count("/") > 1}  # no paper's module


def test_cache_key_ignores_papers_study_lists_and_comments(tree: Path) -> None:
    """A paper's chapter module, its study lists, the registry and the catalogue, and comments or docstrings
    anywhere, leave the key (``varcap --version``'s code version) unchanged; the simulator changes it."""
    key = sweep.source_version(tree)
    for f in (
        "studies/beyond_carbon/scenarios.py",  # a chapter's module
        "studies/thesis/sweeps.py",  # a paper's sweep lists
        "studies/thesis/scenarios.py",  # its reproduction studies
        "studies/zhang_chien/claims.py",
        "studies/papers.py",
        "studies/catalogue.py",
        "studies/reproduction.py",
    ):
        _edit(tree / f)
        _comment(tree / f)
        assert sweep.source_version(tree) == key, f
    for f in ("sim/engine/kernel.py", "sim/policies/ias.py", "studies/sweep.py", "studies/scenarios.py"):
        _comment(tree / f)
        assert sweep.source_version(tree) == key, f
    _edit(tree / "sim/engine/kernel.py")
    assert sweep.source_version(tree) != key


def test_cache_key_memo_parses_each_source_once_and_survives_a_bad_memo(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The key's per-file facts are kept by content hash: a second computation parses no file, an edited
    file is parsed again (and changes the key), and a memo that cannot be read is rebuilt."""
    import ast

    from sim.paths import data_dir
    from studies import code_version as cv

    memo = data_dir() / "cache" / "code_version.json"
    memo.unlink(missing_ok=True)
    key = sweep.source_version(tree)
    assert memo.is_file()
    parsed: list[str] = []
    real_parse = ast.parse
    def parse(src, filename="", **kw):  # noqa: ANN001, ANN202
        parsed.append(filename)
        return real_parse(src, filename, **kw)

    monkeypatch.setattr(cv.ast, "parse", parse)
    assert sweep.source_version(tree) == key and parsed == []
    _edit(tree / "sim/metrics.py")
    edited = sweep.source_version(tree)
    assert edited != key and parsed == [str(tree / "sim/metrics.py")]
    memo.write_text("{not json")
    _comment(tree / "sim/metrics.py")  # comments only: the edit's key, from a rebuilt memo
    assert sweep.source_version(tree) == edited
    memo.write_text("[1, 2]")
    assert sweep.source_version(tree) == edited and json.loads(memo.read_text()) != [1, 2]


def test_version_prints_package_and_code_version(capsys: pytest.CaptureFixture[str]) -> None:
    from pipelines.cli import main, package_version

    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0
    out = capsys.readouterr().out.strip()
    assert out == f"varcap {package_version()} (code version {sweep.code_version()})"
    assert package_version().count(".") == 2
