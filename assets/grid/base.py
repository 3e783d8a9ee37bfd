"""What a grid source module declares (:class:`GridSource`, :class:`SourceCheck`) and what the grid tables
are built of (:class:`Built`, :func:`concat`); the registry is :mod:`assets.grid`."""


from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from assets.dataset import Dataset
from assets.normalize.base import RawFile

#: rows of one core table a source adds and their rejects (``table_name`` is set by :func:`build_table`)
Rows = tuple[pl.DataFrame, pl.DataFrame]
#: a source's raw → core parsing: its registered files and the build options → rows per table it feeds
Normalize = Callable[[Sequence[RawFile], Mapping[str, Any]], dict[str, Rows]]

#: the tables grid sources feed, in the order their assets are made
GRID_TABLES = ("core_grid_carbon", "core_grid_fuel_mix", "core_power_price", "core_grid_marginal")


@dataclass(frozen=True)
class SourceCheck:
    """A check of a source's rows in a stored table: ``run(conn)`` → ``(passed, description, metadata)``.
    ``deps``: other tables it reads."""

    name: str
    table: str
    description: str
    run: Callable[[Any], tuple[bool, str, dict[str, float]]]
    deps: tuple[str, ...] = ()


@dataclass(frozen=True)
class GridSource:
    """One grid feed: its dataset, the grid tables it feeds (``tables``, each a name in
    :data:`GRID_TABLES`) and how (``normalize``), where its samples come from and its own checks."""

    dataset: Dataset
    tables: tuple[str, ...] = ()
    normalize: Normalize | None = None
    #: the maintainers' shared data folder's path → sample path stem (``pipelines/make_samples.py``)
    sample_origins: Mapping[str, str] = field(default_factory=dict)
    checks: tuple[SourceCheck, ...] = ()

    @property
    def key(self) -> str:
        return self.dataset.key


def concat(frames: Sequence[pl.DataFrame]) -> pl.DataFrame:
    """The non-empty ``frames`` stacked (columns relaxed to a common type), else the first frame (an
    empty frame for none)."""
    if not frames:
        return pl.DataFrame()
    return (
        pl.concat([f for f in frames if f.height], how="vertical_relaxed")
        if any(f.height for f in frames)
        else frames[0]
    )


def per_file(table: str, normalize_one: Callable[[RawFile], Rows]) -> Normalize:
    """A source's :data:`Normalize` for one ``table`` fed file by file: ``normalize_one`` on each file,
    rows and rejects stacked (:func:`concat`); the build options are not read."""

    def normalize(files: Sequence[RawFile], options: Mapping[str, Any]) -> dict[str, Rows]:
        out = [normalize_one(f) for f in files]
        return {table: (concat([o[0] for o in out]), concat([o[1] for o in out]))}

    return normalize


@dataclass(frozen=True)
class Built:
    """A grid table built from its sources' files: rows, rejects, and the rows the same files give the
    other tables those sources feed (``siblings``: table → (rows, datasets)), which must pass that
    table's checks too."""

    rows: pl.DataFrame
    rejects: pl.DataFrame
    siblings: dict[str, tuple[pl.DataFrame, tuple[str, ...]]]
    datasets: tuple[str, ...]
