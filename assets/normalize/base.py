"""Shared reading and reject-splitting for the normalizers (pure polars; no Dagster, no DuckDB).

See :mod:`assets.normalize` for the ``(good, rejects)`` contract every normalizer follows.
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from assets.gzcap import GzipBomb, inflate

REJECT_COLUMNS = {
    "table_name": pl.Utf8,
    "source_file": pl.Utf8,
    "line": pl.Int64,
    "reason": pl.Utf8,
    "raw_row": pl.Utf8,
}


class BadFileError(ValueError):
    """A whole input file is unusable. The message names the file and why."""


@dataclass(frozen=True)
class RawFile:
    """A raw input: the readable path, the name reported in rejects and errors, and its CSV layout."""

    path: Path
    name: str
    has_header: bool = True
    columns: tuple[str, ...] | None = None

    @property
    def first_line(self) -> int:
        """Line number (1-based) of the first data row in the upstream CSV."""
        return 2 if self.has_header else 1


def read_text_table(f: RawFile) -> pl.DataFrame:
    """Read a CSV (optionally gzipped) or parquet file with every column as text, plus ``line``."""
    try:
        if f.path.suffix == ".parquet":
            df = pl.read_parquet(f.path)
            df = df.with_columns(pl.all().cast(pl.Utf8))
        else:
            with contextlib.ExitStack() as stack:
                source: Path = f.path
                if f.path.suffix == ".gz":
                    # inflated in bounded chunks into a temporary file, a gzip bomb refused on the way
                    # (polars would tolerate a truncated stream; Python's gzip raises on it, EOFError)
                    tmp = stack.enter_context(tempfile.NamedTemporaryFile(suffix=".csv"))
                    inflate(f.path, tmp)
                    tmp.flush()
                    source = Path(tmp.name)
                df = pl.read_csv(
                    source,
                    has_header=f.has_header,
                    new_columns=list(f.columns) if (f.columns and not f.has_header) else None,
                    infer_schema=False,
                    encoding="utf8-lossy",
                    truncate_ragged_lines=False,
                )
    except GzipBomb as e:
        raise BadFileError(f"{f.name}: {e}") from None
    except Exception as e:  # polars raises several error types for unreadable input
        raise BadFileError(f"{f.name}: cannot read file ({type(e).__name__}: {e})") from e
    return df.with_row_index("line", offset=f.first_line).with_columns(pl.col("line").cast(pl.Int64))


def require_columns(df: pl.DataFrame, f: RawFile, cols: Iterable[str]) -> None:
    missing = [c for c in cols if c not in df.columns]
    if missing:
        raise BadFileError(f"{f.name}: missing columns {missing}; found {df.columns[:12]}")


def _raw_row(cols: Sequence[str]) -> pl.Expr:
    return pl.concat_str([pl.col(c).fill_null("") for c in cols], separator=",")


def split_rejects(
    df: pl.DataFrame,
    f: RawFile,
    table: str,
    checks: Sequence[tuple[pl.Expr, pl.Expr | str]],
    raw_cols: Sequence[str],
    max_bad_fraction: float = 0.5,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Split ``df`` by ``checks`` (``(is_bad, reason)``, first failing reason wins).

    Raises :class:`BadFileError` if more than ``max_bad_fraction`` of a non-empty file is bad, or if
    the file has no rows.
    """
    if df.height == 0:
        raise BadFileError(f"{f.name}: no data rows")
    reason: pl.Expr = pl.lit(None, dtype=pl.Utf8)
    for is_bad, why in reversed(checks):
        why_e = pl.lit(why) if isinstance(why, str) else why
        reason = pl.when(is_bad.fill_null(True)).then(why_e).otherwise(reason)
    df = df.with_columns(_reason=reason)
    bad = df.filter(pl.col("_reason").is_not_null())
    if bad.height > max_bad_fraction * df.height:
        sample = bad.head(3).select("line", "_reason").rows()
        raise BadFileError(
            f"{f.name}: {bad.height} of {df.height} rows are malformed (e.g. line/reason {sample}); "
            "refusing the whole file"
        )
    rejects = bad.select(
        pl.lit(table).alias("table_name"),
        pl.lit(f.name).alias("source_file"),
        pl.col("line"),
        pl.col("_reason").alias("reason"),
        _raw_row(raw_cols).alias("raw_row"),
    )
    return df.filter(pl.col("_reason").is_null()).drop("_reason"), rejects


def empty_rejects() -> pl.DataFrame:
    return pl.DataFrame(schema=REJECT_COLUMNS)


def _num(col: str) -> pl.Expr:
    return pl.col(col).str.strip_chars().cast(pl.Float64, strict=False)


def _unparseable(col: str, parsed: pl.Expr) -> tuple[pl.Expr, pl.Expr]:
    return parsed.is_null(), pl.format("unparseable {}: '{}'", pl.lit(col), pl.col(col).fill_null("<empty>"))


def _ts_utc(col: str) -> pl.Expr:
    """Parse ISO-like timestamps with or without an offset into UTC ``Datetime(us, UTC)``."""
    # ISO 'Z' (Zulu) is the +00:00 offset
    s = pl.col(col).str.strip_chars().str.replace("T", " ").str.replace(r"Z$", "+00:00")
    # EIA API periods are 'YYYY-MM-DDTHH': complete them to whole timestamps
    s = pl.when(s.str.len_chars() == 13).then(s + ":00:00").otherwise(s)
    with_off = s.str.to_datetime("%Y-%m-%d %H:%M:%S%:z", strict=False, time_zone="UTC")
    naive = s.str.to_datetime("%Y-%m-%d %H:%M:%S", strict=False).dt.replace_time_zone("UTC")
    return pl.coalesce(with_off, naive).dt.cast_time_unit("us")
