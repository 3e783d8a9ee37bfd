"""Streaming gzip decompression with a ratio cap: a gzip bomb is refused after reading a bounded amount,
never inflated whole into memory. Used by the download client (to validate a body) and the normalizers
(to read a ``.gz`` file)."""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import BinaryIO

#: a body may inflate to at most this many times its compressed size (CSV/JSON traces inflate ~3-20×)…
MAX_RATIO = 100.0
#: …unless the result stays below this many bytes (tiny, very regular files)
RATIO_FLOOR = 64 << 20


class GzipBomb(ValueError):
    """The gzip stream inflates beyond the ratio cap. The message names the file and the sizes."""


def inflate(
    path: Path, out: BinaryIO | None = None, *, max_ratio: float = MAX_RATIO, chunk: int = 1 << 20
) -> int:
    """Decompress ``path`` in ``chunk``-sized pieces (into ``out`` when given, else discarding them) and
    return the inflated size. Raises :class:`GzipBomb` once the output passes ``max_ratio`` × the file's
    size (and :data:`RATIO_FLOOR`); ``EOFError``/``OSError``/``zlib.error`` for a truncated or corrupt
    stream."""
    limit = max(max_ratio * path.stat().st_size, RATIO_FLOOR)
    total = 0
    with gzip.open(path, "rb") as g:
        while block := g.read(chunk):
            total += len(block)
            if total > limit:
                raise GzipBomb(
                    f"{path.name}: inflates to more than {limit / 2**20:.0f} MiB from "
                    f"{path.stat().st_size} bytes (over {max_ratio:g}× its size): refusing a probable gzip bomb"
                )
            if out is not None:
                out.write(block)
    return total
