"""Import direction: pipelines → assets → studies → (sim, analysis); nothing imports a package above it."""

from __future__ import annotations

import ast
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
