"""Studies as files: a TOML file a researcher writes (no package code) that expands to scenarios.

A study file::

    name = "my-study"                    # the study's catalogue name (lower case, digits, '-')
    description = "..."                  # optional, shown in the UI
    profile = ["full", "quick"]          # optional (default "full"): a study per profile; quick is
                                         # named <name>-quick and takes the [quick] overrides
    [base]                               # every scenario's fields (Scenario: machines, cores,
    machines = 4                         # horizon_days, load, seed, warmup_days, sizing, settings)
    [grid]                               # the cross product of these lists (each optional)
    policies = ["ff", {name = "ias", aggressiveness = 0.6}]
    workloads = ["swf-resampled"]
    capacity = ["random_walk:changes_per_hour=1,step=0.15", {kind = "constant", fraction = 0.7}]
    seeds = [0, 1]
    loads = [0.6, 0.8]
    [[scenarios]]                        # more scenarios, one table each (policy, workload, capacity
    policy = "ff"                        # and any [base] field)
    workload = "swf"
    capacity = {kind = "constant", fraction = 0.7}
    [quick]                              # the quick profile's overrides: [base] fields, seeds, loads
    horizon_days = 1.0
    seeds = [0]

Files are found in ``studies/files/`` (the shipped examples) and the user folder :func:`user_dir`
(``$VARCAP_STUDY_DIR``, else ``<home>/studies/files``); :mod:`studies.catalogue` adds their studies beside
the built-in ones. A file that does not load is left out and reported (:data:`PROBLEMS`), never breaking the
catalogue. :func:`load` raises :class:`StudyFileError`: one line naming the file, the line (TOML syntax
errors as tomllib gives it; for a field, the first line that sets it) and the field, with the valid
choices.
"""

from __future__ import annotations

import itertools
import os
import re
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from sim.paths import home
from studies.scenarios import Scenario

PACKAGE_DIR = Path(__file__).resolve().parent / "files"
_NAME = re.compile(r"[a-z0-9][a-z0-9-]{0,62}")
TOP_KEYS = ("name", "description", "profile", "base", "grid", "scenarios", "quick")
GRID_KEYS = ("policies", "workloads", "capacity", "seeds", "loads")
PROFILE_NAMES = ("full", "quick")
#: Scenario fields a [base] table, a [[scenarios]] entry or [quick] may set
BASE_KEYS = tuple(f.name for f in fields(Scenario) if f.name not in ("workload", "capacity", "policy"))
SCENARIO_KEYS = ("policy", "workload", "capacity", *BASE_KEYS)
QUICK_KEYS = (*BASE_KEYS, "seeds", "loads")


class StudyFileError(ValueError):
    """A study file that cannot be used; the message is one line (file, line, field, valid choices)."""


@dataclass(frozen=True)
class StudyFile:
    """A loaded study file: its studies (catalogue name → scenarios), in profile order."""

    path: Path
    name: str
    description: str
    studies: dict[str, list[Scenario]] = field(default_factory=dict)


def user_dir() -> Path:
    """Where a user's study files live: ``$VARCAP_STUDY_DIR``, else ``<home>/studies/files``."""
    env = os.environ.get("VARCAP_STUDY_DIR")
    return Path(env).expanduser().resolve() if env else home() / "studies" / "files"


def folders() -> list[Path]:
    """The folders searched for study files: the shipped examples, then the user folder."""
    return list(dict.fromkeys([PACKAGE_DIR, user_dir()]))


class _Where:
    """Points at a field in the file's text: the first line that sets ``key`` (after ``[table]``)."""

    def __init__(self, path: Path, text: str) -> None:
        self.path, self.lines = path, text.splitlines()

    def line_of(self, key: str, table: str | None = None, value: object = None) -> int | None:
        start = 0
        if table:
            hdr = re.compile(rf"^\s*\[\[?\s*{re.escape(table)}\s*\]\]?\s*(#.*)?$")
            start = next((i for i, s in enumerate(self.lines) if hdr.match(s)), 0)
        pat = re.compile(rf"^\s*{re.escape(key)}\s*=")
        for i in range(start, len(self.lines)):
            if pat.match(self.lines[i]):
                if value is not None and isinstance(value, str | int | float):
                    # a list may run over several lines: the first line at or after the key naming the value
                    for j in range(i, min(i + 40, len(self.lines))):
                        if str(value) in self.lines[j]:
                            return j + 1
                return i + 1
        return None

    def error(self, fld: str, msg: str, key: str | None = None, table: str | None = None,
              value: object = None) -> StudyFileError:  # fmt: skip
        ln = self.line_of(key or fld.split(".")[-1].split("[")[0], table, value)
        at = f"line {ln}: " if ln else ""
        return StudyFileError(f"{self.path}: {at}{fld}: {msg}")


def _choices(vals: Any) -> str:
    return ", ".join(vals)


def _policy(where: _Where, fld: str, item: Any) -> tuple[str, dict[str, str]]:
    """A grid/scenario policy entry: ``"name"`` or ``{name = "...", setting = value, ...}``."""
    from sim.policies import available, listed

    if isinstance(item, dict):
        item = dict(item)
        name = item.pop("name", None)
        settings = {k: str(v).lower() if isinstance(v, bool) else str(v) for k, v in item.items()}
    else:
        name, settings = item, {}
    if not isinstance(name, str):
        raise where.error(fld, f"{item!r} is not a policy name or a table with `name`", key="policies")
    if not listed(name):
        raise where.error(fld, f"unknown policy {name!r}; policies: {_choices(available())}", value=name)
    return name, settings


def _capacity(where: _Where, fld: str, item: Any) -> dict[str, Any]:
    """A capacity entry: the CLI's ``KIND:key=value,…`` text or a table ``{kind = "...", ...}``, as a
    catalogue dict (float parameters as floats, so ``1`` and ``1.0`` are one scenario)."""
    from sim.capacity.kinds import KINDS, get_kind
    from sim.capacity.trace import CapacitySpec

    try:
        if isinstance(item, str):
            spec = CapacitySpec.parse(item)
            if spec.kind == "file":
                raise ValueError(f"unknown capacity kind {item.partition(':')[0]!r}; kinds: {_choices(KINDS.names())}")
        elif isinstance(item, dict):
            d = dict(item)
            if "kind" not in d:
                raise ValueError(f"a capacity table needs `kind` (one of {_choices(KINDS.names())})")
            params = get_kind(str(d["kind"]).replace("-", "_")).params
            for k, v in d.items():
                if k in params and params[k].type is float and isinstance(v, int) and not isinstance(v, bool):
                    d[k] = float(v)
            spec = CapacitySpec.from_dict(d)
        else:
            raise ValueError(f"{item!r} is neither a KIND:key=value text nor a table with `kind`")
    except ValueError as e:
        kind = item.partition(":")[0] if isinstance(item, str) else (item or {}).get("kind")
        raise where.error(fld, str(e).splitlines()[0], key="capacity", value=kind) from None
    return spec.to_dict()


def _workload(where: _Where, fld: str, item: Any) -> str:
    from sim.workloads.registry import resolve_workload

    if not isinstance(item, str):
        raise where.error(fld, f"{item!r} is not a workload name", key="workloads")
    try:
        resolve_workload(item)
    except ValueError as e:
        raise where.error(fld, str(e).splitlines()[0], value=item) from None
    return item


def _table(where: _Where, doc: dict, key: str, allowed: tuple[str, ...]) -> dict[str, Any]:
    t = doc.get(key, {})
    if not isinstance(t, dict):
        raise where.error(key, f"must be a table ([{key}])")
    for k in t:
        if k not in allowed:
            raise where.error(f"{key}.{k}", f"unknown field; fields: {_choices(allowed)}", key=k, table=key)
    return t


def _list(where: _Where, t: dict, key: str, table: str) -> list[Any] | None:
    v = t.get(key)
    if v is None:
        return None
    if not isinstance(v, list) or not v:
        raise where.error(f"{table}.{key}", "must be a non-empty list", key=key, table=table)
    return v


def _scenario(where: _Where, fld: str, kw: dict[str, Any]) -> Scenario:
    try:
        sc = Scenario(**kw)
        if sc.workload_spec.needs_machines and not sc.machines:
            raise ValueError(f"workload {sc.workload!r} needs the platform size: set machines in [base]")
        return sc
    except (ValueError, KeyError, TypeError) as e:
        msg = str(e.args[0]) if isinstance(e, KeyError) and e.args else str(e)
        raise where.error(fld, msg.splitlines()[0], key=fld.split(".")[-1]) from None


def _expand(where: _Where, doc: dict, base: dict[str, Any], grid: dict[str, Any]) -> list[Scenario]:
    out: list[Scenario] = []
    if grid:
        pols = [_policy(where, f"grid.policies[{i}]", p) for i, p in enumerate(_list(where, grid, "policies", "grid") or ["ff"])]
        wls = [_workload(where, f"grid.workloads[{i}]", w) for i, w in enumerate(_list(where, grid, "workloads", "grid") or [])]
        caps = [_capacity(where, f"grid.capacity[{i}]", c) for i, c in enumerate(_list(where, grid, "capacity", "grid") or [])]
        if not wls or not caps:
            missing = "grid.workloads" if not wls else "grid.capacity"
            raise where.error(missing, "a grid needs at least one workload and one capacity", key="grid")
        seeds = _list(where, grid, "seeds", "grid") or [base.get("seed", 0)]
        loads = _list(where, grid, "loads", "grid") or [base.get("load", 0.8)]
        for (pol, st), wl, cap, seed, load in itertools.product(pols, wls, caps, seeds, loads):
            kw = {**base, "policy": pol, "workload": wl, "capacity": cap, "seed": seed, "load": float(load)}
            kw["settings"] = {**base.get("settings", {}), **st}
            out.append(_scenario(where, "grid", kw))
    extra = doc.get("scenarios", [])
    if not isinstance(extra, list):
        raise where.error("scenarios", "must be an array of tables ([[scenarios]])")
    for i, s in enumerate(extra):
        fld = f"scenarios[{i}]"
        if not isinstance(s, dict):
            raise where.error(fld, "must be a table", key="scenarios")
        for k in s:
            if k not in SCENARIO_KEYS:
                raise where.error(f"{fld}.{k}", f"unknown field; fields: {_choices(SCENARIO_KEYS)}", key=k)
        for k in ("workload", "capacity"):
            if k not in s:
                raise where.error(f"{fld}.{k}", "missing", key="scenarios")
        kw = {**base, **s}
        if isinstance(s.get("policy"), dict) or "policy" in s:
            kw["policy"], st = _policy(where, f"{fld}.policy", s.get("policy", "ff"))
            kw["settings"] = {**base.get("settings", {}), **s.get("settings", {}), **st}
        kw["workload"] = _workload(where, f"{fld}.workload", s["workload"])
        kw["capacity"] = _capacity(where, f"{fld}.capacity", s["capacity"])
        out.append(_scenario(where, fld, kw))
    if not out:
        raise where.error("grid", "the file defines no scenario: give a [grid] or [[scenarios]]", key="name")
    return list({s.id: s for s in out}.values())


def _base(where: _Where, t: dict[str, Any], table: str) -> dict[str, Any]:
    out = dict(t)
    if "settings" in out:
        if not isinstance(out["settings"], dict):
            raise where.error(f"{table}.settings", "must be a table of policy settings", key="settings")
        out["settings"] = {k: str(v) for k, v in out["settings"].items()}
    for k in ("horizon_days", "load", "warmup_days"):
        if k in out and isinstance(out[k], int) and not isinstance(out[k], bool):
            out[k] = float(out[k])
    return out


def load(path: str | Path) -> StudyFile:
    """Read and check the study file at ``path``; every scenario is built (so every setting is checked).
    Raises :class:`StudyFileError` (one line) for an unreadable or invalid file."""
    p = Path(path)
    try:
        text = p.read_text()
    except (OSError, UnicodeDecodeError) as e:
        raise StudyFileError(f"{p}: cannot read the study file ({type(e).__name__}: {e})") from None
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:  # its message ends "(at line L, column C)"
        m = re.search(r"\(at line (\d+), column (\d+)\)", str(e))
        at = f"line {m.group(1)}: " if m else ""
        why = re.sub(r"\s*\(at line \d+, column \d+\)", "", str(e))
        raise StudyFileError(f"{p}: {at}not valid TOML ({why})") from None
    where = _Where(p, text)
    for k in doc:
        if k not in TOP_KEYS:
            raise where.error(k, f"unknown field; fields: {_choices(TOP_KEYS)}")
    name = doc.get("name")
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise where.error("name", f"{name!r} must be lower-case letters, digits and '-' (e.g. my-study)")
    desc = doc.get("description", "")
    if not isinstance(desc, str):
        raise where.error("description", "must be a string")
    prof = doc.get("profile", "full")
    profiles = [prof] if isinstance(prof, str) else prof
    if not isinstance(profiles, list) or not profiles or any(x not in PROFILE_NAMES for x in profiles):
        raise where.error("profile", f"{prof!r}: profiles: {_choices(PROFILE_NAMES)} (or a list of them)")
    base = _base(where, _table(where, doc, "base", BASE_KEYS), "base")
    grid = _table(where, doc, "grid", GRID_KEYS)
    quick = _table(where, doc, "quick", QUICK_KEYS)
    if quick and "quick" not in profiles:
        raise where.error("quick", "overrides a profile the file does not list; add profile = [\"full\", \"quick\"]")
    studies: dict[str, list[Scenario]] = {}
    for pr in dict.fromkeys(profiles):
        if pr == "full":
            studies[name] = _expand(where, doc, base, grid)
        else:
            qb = _base(where, {k: v for k, v in quick.items() if k in BASE_KEYS}, "quick")
            qg = {**grid, **{k: v for k, v in quick.items() if k in ("seeds", "loads")}}
            studies[f"{name}-quick"] = _expand(where, doc, {**base, **qb}, qg)
    return StudyFile(p, name, desc, studies)


@dataclass
class _Found:
    files: dict[str, StudyFile] = field(default_factory=dict)  # study name → its file
    problems: list[str] = field(default_factory=list)


def discover(taken: set[str] | frozenset[str] = frozenset()) -> _Found:
    """Every study file of :func:`folders` (sorted by name) that loads and whose studies' names are not in
    ``taken`` (the built-in studies) nor another file's; the others as one-line problems."""
    out = _Found()
    seen: set[Path] = set()
    for d in folders():
        for f in sorted(d.glob("*.toml")) if d.is_dir() else []:
            if f.resolve() in seen:
                continue
            seen.add(f.resolve())
            try:
                sf = load(f)
            except StudyFileError as e:
                out.problems.append(str(e))
                continue
            clash = [n for n in sf.studies if n in taken or n in out.files]
            if clash:
                other = "a built-in study" if clash[0] in taken else str(out.files[clash[0]].path)
                out.problems.append(f"{f}: line 1: name: study {clash[0]!r} is already {other}; rename it")
                continue
            out.files.update(dict.fromkeys(sf.studies, sf))
    return out


def builders(found: _Found) -> dict[str, Callable[[], list[Scenario]]]:
    """Catalogue entries (study name → scenario list builder) of the discovered files."""
    return {n: (lambda sf=sf, n=n: list(sf.studies[n])) for n, sf in found.files.items()}
