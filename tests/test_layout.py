"""Import direction: pipelines → assets → studies → (sim, analysis); nothing imports a package above it."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# a package may import only the packages listed for it (besides itself and third-party libraries)
ALLOWED = {
    "pipelines": {"assets", "studies", "sim", "analysis"},
    "assets": {"studies", "sim", "analysis"},
    "studies": {"sim", "analysis"},
    "analysis": {"sim"},
    "sim": set(),
}
PROJECT = set(ALLOWED)


def _imports(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(), filename=str(path))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name.split(".")[0]) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.append((node.lineno, node.module.split(".")[0]))
    return out


@pytest.mark.parametrize("package", sorted(ALLOWED))
def test_imports_run_one_way(package: str) -> None:
    bad = []
    for f in sorted((ROOT / package).rglob("*.py")):
        for line, top in _imports(f):
            if top in PROJECT and top != package and top not in ALLOWED[package]:
                bad.append(f"{f.relative_to(ROOT)}:{line} imports {top}")
    assert not bad, "imports running back up:\n" + "\n".join(bad)


def test_analysis_only_uses_sim_paths() -> None:
    for f in sorted((ROOT / "analysis").rglob("*.py")):
        for line, mod in [
            (n.lineno, n.module)
            for n in ast.walk(ast.parse(f.read_text()))
            if isinstance(n, ast.ImportFrom) and n.module and n.module.startswith("sim")
        ]:
            assert mod == "sim.paths", f"{f.relative_to(ROOT)}:{line} imports {mod}"


def test_sim_never_imports_dagster() -> None:
    for pkg in ("sim", "studies", "analysis"):
        for f in sorted((ROOT / pkg).rglob("*.py")):
            tops = {t for _, t in _imports(f)}
            assert "dagster" not in tops, f"{f.relative_to(ROOT)} imports dagster"


def _loaded_after(code: str, watch: tuple[str, ...]) -> set[str]:
    """Which of ``watch`` a fresh interpreter has in ``sys.modules`` after running ``code``."""
    probe = f"{code}\nimport sys\nprint(' '.join(m for m in {watch!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=ROOT)
    return set(out.stdout.split())


HEAVY = ("polars", "numba", "dagster", "duckdb", "statsmodels", "scipy", "pandas", "rich", "altair")


def test_cli_parser_imports_no_heavy_library() -> None:
    """``varcap --help`` builds the parser only: every heavy library waits for the command that needs it."""
    assert _loaded_after("from pipelines.cli import build_parser; build_parser()", HEAVY) == set()


def test_simulating_without_survival_model_skips_statsmodels() -> None:
    """First-Fit needs no survival model: statsmodels, scipy.stats and pandas stay unloaded."""
    code = (
        "import polars as pl\n"
        "from sim import random_walk, simulate\n"
        "jobs = pl.DataFrame({'job_id': [0, 1], 'submit_s': [0.0, 10.0], 'duration_s': [50.0, 60.0],"
        " 'cores': [1.0, 2.0]})\n"
        "simulate(jobs, random_walk(2, 600.0, seed=0), 2, 4.0, 600.0, 'ff')"
    )
    assert _loaded_after(code, ("statsmodels", "scipy.stats", "pandas")) == set()


def test_fitting_a_survival_model_loads_statsmodels() -> None:
    """The counterpart: the lazy import really happens where the model is fitted."""
    code = "import numpy as np\nfrom sim.intervals import IntervalModel\nIntervalModel.fit(np.array([1.0, 2.0]), np.array([1, 1]))"
    assert "statsmodels" in _loaded_after(code, ("statsmodels",))


def test_definitions_load_no_model_or_chart_library() -> None:
    """Every Dagster process (``varcap run``, the UI, sweep and dask workers) imports the Definitions:
    scikit-learn, statsmodels, scipy's solvers and statistics, pandas and altair load only in the asset or
    function that uses them."""
    watch = ("sklearn", "statsmodels", "scipy.optimize", "scipy.stats", "pandas", "altair")
    assert _loaded_after("import pipelines.definitions", watch) == set()
