"""Functions compiled for their compiled callers only (``cached_njit`` without ``entry``): no Python wrappers,
cache files of their own, and a Python call still answers (through a twin with the wrappers)."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

_MODULE = """
from sim.engine._jit import cached_njit, uncounted


@uncounted
def bump(x):
    return x + 1


@cached_njit
def twice(x):
    return bump(x) * 2


@cached_njit(entry=True)
def outer(x):
    return twice(x) + 1
"""

_PROBE = """
import toy
print(toy.outer(1), toy.outer(2.5))
print(type(toy.twice).__name__, "_twin" in vars(toy.twice))
print(toy.twice(1), toy.bump(2.5), toy.twice(3))
print(len(toy.outer.stats.cache_hits), len(toy.twice._twin.stats.cache_hits), len(toy.twice.stats.cache_hits))
"""


def _probe(tmp_path: Path, script: str = _PROBE) -> list[str]:
    """``script``'s output lines, run in a fresh process importing the modules in ``tmp_path`` (numba's cache
    there too)."""
    env = dict(os.environ, PYTHONPATH=f"{tmp_path}{os.pathsep}{REPO}", NUMBA_CACHE_DIR=str(tmp_path / "nc"))
    out = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout.split("\n")


def test_a_linked_function_answers_compiled_and_python_callers_and_caches_apart(tmp_path) -> None:
    (tmp_path / "toy.py").write_text(_MODULE)
    first = _probe(tmp_path)
    assert first[0] == "5 8.0"  # compiled callers link the functions without wrappers in
    assert first[1].startswith("Linked") and first[1].endswith("False")  # no twin until Python calls it
    assert first[2] == "4 3.5 8"  # Python calls go to the twins with the wrappers (a new type compiles)
    files = sorted(p.name for p in (tmp_path / "nc").rglob("*.nbi"))
    assert any("twice@linked-" in f for f in files) and any("bump@linked-" in f for f in files)
    assert any(f.startswith("toy.twice-") for f in files)  # the twin's own files
    second = _probe(tmp_path)
    assert second[:3] == first[:3]
    # from the caches: the entry's two types, the twin's one; the linked function none (linked into outer)
    assert second[3] == "2 1 0"


_STUB_PROBE = """
import toy
import toyr

print(toy.outer(1), toyr.parity(10), toyr.parity(7))
for disp in (toy.twice, toy.bump, toyr.is_even):
    lib = next(iter(disp.overloads.values())).library
    stub = vars(lib).get("_stub")
    if stub is None:
        print(type(lib).__name__, "numba's own")
        continue
    defined = [f.name for f in stub.functions if not f.is_declaration]
    envs = [g.name for g in stub.global_variables if g.name.startswith("_ZN08NumbaEnv")]
    print(type(lib).__name__, len(defined), len(envs) > 0)
"""

_RECURSIVE = """
from sim.engine._jit import cached_njit


@cached_njit
def is_even(n):
    if n == 0:
        return True
    return is_odd(n - 1)


@cached_njit
def is_odd(n):
    if n == 0:
        return False
    return is_even(n - 1)


@cached_njit(entry=True)
def parity(n):
    return is_even(n)
"""


def test_a_linked_function_is_turned_into_machine_code_only_in_its_callers(tmp_path) -> None:
    """A linked function's own library emits no machine code of its functions (its callers link its IR
    in): only a stub of its environment globals, which numba fills in. One resolved through a mutually
    recursive call (numba links it through the library's own machine code) is finalized as numba does.
    Compiling process only: numba's cache cannot reload mutual recursion (plain ``njit(cache=True)``
    crashes on it as well)."""
    (tmp_path / "toy.py").write_text(_MODULE)
    (tmp_path / "toyr.py").write_text(_RECURSIVE)
    lines = _probe(tmp_path, _STUB_PROBE)
    assert lines[0] == "5 True False"
    assert lines[1] == lines[2] == "LinkedLibrary 0 True"  # twice, bump: no function, their env globals
    assert lines[3] == "LinkedLibrary numba's own"  # is_even: a mutually recursive call


_WARM_PROBE = """
import sys

from sim.engine import _jit
from sim.warmup import warm

warm()
# the engine's dispatchers, and every compiled function a simulator module the warm-up imported defines
found = list(_jit.compiled().items())
for m, mod in list(sys.modules.items()):
    if m.startswith("sim."):
        found += [(m + "." + k, v) for k, v in vars(mod).items()]
linked = [(k, v) for k, v in found if hasattr(v, "_twin_opts")]
print(len(linked), " ".join(sorted(k for k, v in linked if "_twin" in vars(v))))
"""


def test_warm_calls_no_linked_function_from_python() -> None:
    """Every function a warm-up simulation calls from Python is an entry: had it been linked, its twin would
    be compiled beside it (twice the work) — mark it ``entry=True``. In a fresh process: tests call linked
    helpers from Python themselves."""
    out = subprocess.run(
        [sys.executable, "-c", _WARM_PROBE], cwd=REPO, capture_output=True, text=True, timeout=900
    )
    assert out.returncode == 0, out.stderr[-2000:]
    n, *twins = out.stdout.split("\n")[-2].split(" ")
    assert int(n) > 50
    assert twins == [""] or twins == [], twins


_COMPILED_SOURCES = [
    *(REPO / "sim" / "engine").glob("*.py"),
    *(REPO / "sim" / "harvest").glob("*.py"),
    *(REPO / "sim" / "harmony").glob("*.py"),
    REPO / "sim" / "policies" / "target.py",
]


def _slice_copies(path: Path) -> list[str]:
    """Assignments of a non-constant value to a slice of an array in ``path``'s compiled functions (those
    marked ``kernel_fn``, ``cached_njit`` or ``uncounted``)."""
    import ast

    found = []
    for fn in ast.walk(ast.parse(path.read_text())):
        if not isinstance(fn, ast.FunctionDef):
            continue
        marks = {n.id for d in fn.decorator_list for n in ast.walk(d) if isinstance(n, ast.Name)}
        if not marks & {"kernel_fn", "cached_njit", "uncounted"}:
            continue
        for st in ast.walk(fn):
            if not isinstance(st, ast.Assign):
                continue
            for target in st.targets:
                for t in target.elts if isinstance(target, ast.Tuple) else [target]:
                    sliced = isinstance(t, ast.Subscript) and any(
                        isinstance(x, ast.Slice) for x in ast.walk(t.slice)
                    )
                    v = st.value.operand if isinstance(st.value, ast.UnaryOp) else st.value
                    if sliced and not isinstance(v, ast.Constant):
                        found.append(f"{path.name}:{st.lineno} {fn.name}: {ast.unparse(st)}")
    return found


def test_compiled_functions_copy_arrays_element_by_element() -> None:
    """numba compiles ``dst[:n] = src[:n]`` with a shape check whose message is formatted from the shapes
    (string code: 8.6 CPU s of a cold ``varcap warm``, linked into every loop): compiled functions copy
    with ``sim.engine.kit.copy_head``/``copy_rows``/``copy_cols`` or a loop. A scalar assigned to a slice
    compiles no such check."""
    found = [x for p in _COMPILED_SOURCES for x in _slice_copies(p)]
    assert found == [], found


_OVERLOADS = """
import numpy as np

from sim.engine._jit import cached_njit


@cached_njit
def middle(x):
    s = np.sort(x)
    out = np.empty(1)
    out[0] = s[s.size // 2]
    return out


@cached_njit(entry=True)
def median_of(x):
    return middle(x)[0] + np.unique(x).size
"""

_OVERLOAD_PROBE = """
import gc

import numpy as np
from numba.core.dispatcher import Dispatcher

import toyo

print(toyo.median_of(np.array([5.0, 1.0, 4.0, 1.0, 3.0])))
kinds = {}
for d in gc.get_objects():
    if isinstance(d, Dispatcher) and d.py_func.__module__.startswith("numba."):
        for cres in d.overloads.values():
            lib = type(cres.library).__name__
            kinds[lib] = kinds.get(lib, 0) + 1
print(sorted(kinds.items()))
"""


def test_numbas_overloads_are_linked_into_their_callers_only(tmp_path) -> None:
    """numba's own ``@overload`` implementations (np.sort, np.empty, np.unique) compiled for a simulator
    function get a linked library (no whole-module passes, no machine code of their own); the caller's
    answer is unchanged, compiled and loaded from the cache."""
    (tmp_path / "toyo.py").write_text(_OVERLOADS)
    first = _probe(tmp_path, _OVERLOAD_PROBE)
    assert first[0] == "7.0"  # the median 3.0 plus 4 distinct values
    kinds = dict(ast.literal_eval(first[1]))
    assert kinds.get("LinkedLibrary", 0) >= 3, kinds
    assert set(kinds) == {"LinkedLibrary"}, kinds
    assert _probe(tmp_path, _OVERLOAD_PROBE)[0] == "7.0"  # from the cache: nothing compiled
