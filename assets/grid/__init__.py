"""Grid data sources, one module each (PUDL style: a source's every stage in its module), found on disk.

A grid source module ``assets/grid/<source>.py`` defines ``SOURCE = GridSource(...)``: its raw dataset
(sample files, remote listing with its URL, size cap, description with upstream and licence), where its
samples come from (``sample_origins``, read by ``pipelines/make_samples.py``), its raw → core parsing
(``normalize``: the rows it adds to each grid table it feeds) and its own checks on those tables
(``checks``: pure SQL checks; :mod:`assets.core` makes them asset checks). Nothing else names it:
:data:`assets.sources.DATASETS` gives its ``raw_<dataset>`` asset, :mod:`assets.core` adds its rows to the
grid tables it feeds (``core_grid_carbon``, ``core_grid_fuel_mix``, ``core_power_price``,
``core_grid_marginal``) and makes those depend on its raw asset. A source with tables of its own and a
bespoke core asset (SGIP: :mod:`assets.sgip`) feeds no grid table here (``tables = ()``) and declares only
its dataset.

Adding a grid feed: one module here (plus its sample files and its test); a grid month studies read is
one entry of :data:`studies.signals.GRIDS`. Pure: polars and DuckDB connections, no Dagster.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl

from assets.grid.base import GRID_TABLES, Built, GridSource, SourceCheck, concat
from assets.normalize.base import BadFileError, RawFile

__all__ = ["GRID_SOURCES", "GRID_TABLES", "Built", "GridSource", "SourceCheck", "build_table", "concat", "sources_of"]


def _discover() -> dict[str, GridSource]:
    """Every module of this package's ``SOURCE``, by dataset key, in module-name order. ValueError naming
    the module for one without a ``SOURCE``, a duplicate dataset, an unknown table or tables without a
    normalizer."""
    out: dict[str, GridSource] = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name == "base":
            continue
        mod = importlib.import_module(f"{__name__}.{info.name}")
        src = getattr(mod, "SOURCE", None)
        if not isinstance(src, GridSource):
            raise ValueError(f"{mod.__name__}: a grid source module defines SOURCE = GridSource(...)")
        if src.key in out:
            raise ValueError(f"{mod.__name__}: dataset {src.key!r} is already declared by another module")
        unknown = [t for t in src.tables if t not in GRID_TABLES]
        if unknown:
            raise ValueError(f"{mod.__name__}: unknown grid table {unknown[0]!r}; known: {', '.join(GRID_TABLES)}")
        if src.tables and src.normalize is None:
            raise ValueError(f"{mod.__name__}: feeds {list(src.tables)} but has no normalize")
        out[src.key] = src
    return out


#: the one registry of grid sources, by dataset key
GRID_SOURCES: dict[str, GridSource] = _discover()


def sources_of(table: str) -> list[GridSource]:
    """The sources that feed grid table ``table``, in registry order."""
    return [s for s in GRID_SOURCES.values() if table in s.tables]


def build_table(
    table: str, files: Mapping[str, Sequence[RawFile]], options: Mapping[str, Any] | None = None
) -> Built:
    """``table`` from every source that feeds it (``files``: dataset key → its registered raw files).
    Raises :class:`BadFileError` (from a normalizer) naming a wholly bad file or a bad option; KeyError
    naming a source's dataset missing from ``files``."""
    srcs = sources_of(table)
    if not srcs:
        raise BadFileError(f"no grid source feeds {table}; grid tables: {', '.join(GRID_TABLES)}")
    opts = dict(options or {})
    rows, rejects = [], []
    siblings: dict[str, tuple[list[pl.DataFrame], list[str]]] = {}
    for s in srcs:
        if s.key not in files:
            raise KeyError(f"{table}: no files given for its source {s.key!r}")
        out = s.normalize(files[s.key], opts)  # type: ignore[misc]
        good, rej = out[table]
        rows.append(good)
        rejects.append(rej.with_columns(pl.lit(table).alias("table_name")) if rej.height else rej)
        for other, (o_rows, _) in out.items():
            if other != table:
                fr, ds = siblings.setdefault(other, ([], []))
                fr.append(o_rows)
                ds.append(s.key)
    return Built(
        concat(rows),
        concat(rejects),
        {t: (concat(fr), tuple(ds)) for t, (fr, ds) in siblings.items()},
        tuple(s.key for s in srcs),
    )
