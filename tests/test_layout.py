"""Import direction: pipelines → assets → studies → (sim, analysis); nothing imports a package above it,
and no package's modules import each other in a circle."""

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


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(f): f for p in sorted(ALLOWED) for f in sorted((ROOT / p).rglob("*.py"))}


def _project_imports(module: str, path: Path) -> list[tuple[str, int, bool]]:
    """``(imported module, line, lazy)`` for every import of a project module in ``path``.

    ``from a.b import c`` is an import of the module ``a.b.c`` if that is a module, else of ``a.b``; the
    parent packages Python initializes on the way are not counted (a package's ``__init__`` importing
    its own submodules is how packages work, not a circle). Imports inside a function or lambda body are
    *lazy* (run on first call); so are imports under ``if TYPE_CHECKING:``, which never run but are a
    dependency all the same (a type named from a module above is a layering error like any other)."""
    is_pkg = path.name == "__init__.py"
    out: list[tuple[str, int, bool]] = []

    def visit(node: ast.AST, lazy: bool) -> None:
        for ch in ast.iter_child_nodes(node):
            typing_only = isinstance(ch, ast.If) and "TYPE_CHECKING" in ast.unparse(ch.test)
            inner = lazy or typing_only or isinstance(ch, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
            if isinstance(ch, ast.Import):
                out.extend((a.name, ch.lineno, lazy) for a in ch.names if a.name in MODULES)
            elif isinstance(ch, ast.ImportFrom):
                base = ch.module or ""
                if ch.level:  # relative: from the module's own package up
                    pkg = module if is_pkg else module.rpartition(".")[0]
                    for _ in range(ch.level - 1):
                        pkg = pkg.rpartition(".")[0]
                    base = f"{pkg}.{base}" if base else pkg
                for a in ch.names:
                    target = f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base
                    if target in MODULES:
                        out.append((target, ch.lineno, lazy))
            visit(ch, inner)

    visit(ast.parse(path.read_text(), filename=str(path)), False)
    return out


def import_circles(lazy: bool) -> list[list[str]]:
    """Import circles between the project's modules (strongly connected components of more than one
    module, each sorted), from module-level imports only or (``lazy``) counting function-level ones too."""
    graph = {
        m: sorted({t for t, _, is_lazy in _project_imports(m, f) if t != m and (lazy or not is_lazy)})
        for m, f in MODULES.items()
    }
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles: list[list[str]] = []

    def strongconnect(v: str) -> None:  # Tarjan
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                strongconnect(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while (w := stack.pop()) != v:
                comp.append(w)
            if comp:
                circles.append(sorted([v, *comp]))

    for v in graph:
        if v not in index:
            strongconnect(v)
    return sorted(circles)


#: Circles that close only through a lazy (in-function) import, kept on purpose — each import says why
#: where it is made. A new one fails :func:`test_no_lazy_import_circle_but_the_known_ones`.
KNOWN_LAZY_CIRCLES = [
    ["sim.api", "sim.policies"],  # Dispatched.run imports the dispatcher the policies are run by
    ["pipelines.cli", "pipelines.cli.docs"],  # `varcap docs` documents the parser it is a command of
    # CapacitySpec parses through the kind registry, whose builders call the generators, which return traces
    ["sim.capacity.generators", "sim.capacity.kinds", "sim.capacity.trace"],
]


def test_no_import_circle_inside_a_package() -> None:
    """Module-level imports never form a circle (a module would see a half-initialized one)."""
    circles = import_circles(lazy=False)
    assert circles == [], f"import circles (module-level imports): {circles}"


def test_no_lazy_import_circle_but_the_known_ones() -> None:
    """Counting in-function imports too, the only circles are the known, documented ones: a lazy import
    that closes a circle hides a dependency that runs both ways (``assets.checks`` ↔ ``assets.core`` was
    one), so a new one is a layout error rather than a work-around."""
    new = [c for c in import_circles(lazy=True) if c not in KNOWN_LAZY_CIRCLES]
    assert new == [], f"import circles closed by an in-function import: {new}"


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
    """Which of ``watch`` a fresh interpreter has loaded after running ``code`` (a None entry in
    ``sys.modules``, a module kept out, is not loaded)."""
    probe = f"{code}\nimport sys\nprint(' '.join(m for m in {watch!r} if sys.modules.get(m)))"
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
    code = "import numpy as np\nfrom sim.capacity.intervals import IntervalModel\nIntervalModel.fit(np.array([1.0, 2.0]), np.array([1, 1]))"
    assert "statsmodels" in _loaded_after(code, ("statsmodels",))


def test_drawing_a_chart_skips_the_iri_grammar() -> None:
    """A process that imports ``analysis`` and altair and validates a chart never builds rfc3987_syntax's
    lark grammar (2.5 CPU s of each such process): jsonschema leaves the ``iri`` formats unchecked."""
    code = (
        "import analysis, altair as alt, polars as pl\n"
        "alt.Chart(pl.DataFrame({'x': [1, 2]})).mark_point().encode(x='x').to_dict()"
    )
    assert _loaded_after(code, ("rfc3987_syntax", "lark", "altair")) == {"altair"}


def test_definitions_load_no_model_or_chart_library() -> None:
    """Every Dagster process (``varcap run``, the UI, sweep and dask workers) imports the Definitions:
    scikit-learn, statsmodels, scipy's solvers and statistics, pandas and altair load only in the asset or
    function that uses them."""
    watch = ("sklearn", "statsmodels", "scipy.optimize", "scipy.stats", "pandas", "altair")
    assert _loaded_after("import pipelines.definitions", watch) == set()


def test_every_paper_package_is_listed_and_the_table_holds_exactly_their_headlines() -> None:
    """``studies.papers.PAPERS`` names every package under ``studies/`` once; each supplies its scenario
    sets, headlines, explanations and chart numbers, and the reproduction table is exactly the papers'
    headlines, each id once (a headline defined anywhere else, or dropped from the table, fails here)."""
    import importlib

    from assets.reports import CHAPTERS
    from studies import reproduction
    from studies.papers import PAPERS

    packages = [p.package for p in PAPERS]
    assert len(set(packages)) == len(packages)
    assert {p.parent.name for p in (ROOT / "studies").glob("*/__init__.py")} == set(packages)
    heads, builders, explanations, figures = [], {}, {}, {}
    for name in packages:
        paper = importlib.import_module(f"studies.{name}")
        heads += paper.HEADLINES
        builders.update(paper.STUDY_BUILDERS)
        explanations.update(paper.EXPLANATIONS)
        figures.update(paper.FIGURES)
    ids = [h.id for h in reproduction.HEADLINES]
    assert len(set(ids)) == len(ids) and sorted(ids) == sorted(h.id for h in heads)
    assert builders == reproduction.study_builders()
    assert explanations == reproduction.EXPLANATIONS and set(explanations) <= set(ids)
    assert figures == reproduction.FIGURES and set(figures) <= {ch.name for ch in CHAPTERS}
    chapters = [ch.name for ch in CHAPTERS]
    assert len(set(chapters)) == len(chapters)
    assert set(chapters) <= {f.stem for f in (ROOT / "notebooks").glob("*.ipynb")}


def test_no_generic_studies_module_names_a_paper_study() -> None:
    """Outside the paper packages, no module under ``studies/`` names a paper's or chapter's study: the
    generic runner, scenario building and catalogue are built from the registry."""
    from studies.catalogue import STUDIES

    names = [n for n in STUDIES if n != "smoke"] + ["repro-", "carbon-", "spot-real"]
    for f in sorted((ROOT / "studies").glob("*.py")):
        if f.name == "papers.py":  # the registry: chapters name the studies they read
            continue
        text = f.read_text()
        hits = [n for n in names if f'"{n}' in text or f"'{n}" in text]
        assert not hits, f"{f.relative_to(ROOT)} names {hits}"


def test_typing_only_and_lazy_imports_are_seen(tmp_path: Path) -> None:
    """An import under ``if TYPE_CHECKING:`` or inside a function counts (as lazy) for the circle check."""
    f = tmp_path / "probe.py"
    f.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from studies import sweep\n"
        "def f():\n    from studies.claims import Profile\n"
        "from studies import scenarios\n"
    )
    assert sorted(_project_imports("studies.probe", f)) == [
        ("studies.claims", 5, True),
        ("studies.scenarios", 6, False),
        ("studies.sweep", 3, True),
    ]


def test_generic_studies_modules_import_no_paper_package() -> None:
    """The generic modules of ``studies/`` (runner, scenario building, signals, claims, catalogue, the
    reproduction table) import no paper's or chapter's package, lazily or not: they reach the papers through
    the registry (``studies.papers``) only."""
    from studies.papers import PAPERS

    packages = {f"studies.{p.package}" for p in PAPERS}
    bad = []
    for f in sorted((ROOT / "studies").glob("*.py")):
        module = _module_name(f)
        for target, line, _ in _project_imports(module, f):
            if target in packages or target.rpartition(".")[0] in packages:
                bad.append(f"{f.relative_to(ROOT)}:{line} imports {target}")
    assert not bad, "generic studies modules importing a paper:\n" + "\n".join(bad)
