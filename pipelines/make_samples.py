"""Rebuild ``data/samples/`` from the project's shared data folder (maintainers only).

Every CSV is read with all columns as text (nothing parsed, nothing dropped) and written as zstd parquet
when that is smaller than a gzip of the original; otherwise the original gzip bytes are kept. Headerless
Google task_events shards get their documented column names. A ``MANIFEST.json`` records, per stored
file, the original name, rows, columns and sha256.

Usage: ``python -m pipelines.make_samples --shared ../shared/data``
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import shutil
from pathlib import Path

import polars as pl

from assets.download import sha256_file
from assets.grid import GRID_SOURCES
from assets.sources import GOOGLE_2011_TASK_EVENTS_COLUMNS
from sim.paths import samples_dir

#: shared/data relative path -> sample path stem (without extension)
MAPPING: dict[str, str] = {
    "workload/gaia/azure-100k.csv.gz": "gaia/azure-100k",
    "workload/gaia/pai-100k.csv.gz": "gaia/pai-100k",
    "workload/gaia/mustang-trace-2015-100k.csv.gz": "gaia/mustang-trace-2015-100k",
    "workload/azure_v2/vmtable_sample_500_fullmonth_vms.csv": "azure_v2/vmtable_sample_500_fullmonth_vms",
    "workload/google2019/borg_traces_data_kaggle_slice.csv": "google2019/borg_traces_data_kaggle_slice",
}
for _s in (0, 1, 2, 3, 10):
    MAPPING[f"workload/google2011/task_events_part-{_s:05d}-of-00500.csv.gz"] = (
        f"google2011/task_events_part-{_s:05d}-of-00500"
    )
for _src in GRID_SOURCES.values():  # each grid feed names its own samples' origins (assets/grid/)
    MAPPING.update(_src.sample_origins)


def build(shared: Path, out: Path) -> list[dict[str, object]]:
    """Write every mapped file under ``out``; return the manifest rows."""
    manifest = []
    for src_rel, stem in sorted(MAPPING.items()):
        src = shared / src_rel
        headerless = "task_events" in src_rel
        df = pl.read_csv(
            src,
            has_header=not headerless,
            new_columns=list(GOOGLE_2011_TASK_EVENTS_COLUMNS) if headerless else None,
            infer_schema=False,
            encoding="utf8",
        )
        buf = io.BytesIO()
        df.write_parquet(buf, compression="zstd", compression_level=19, statistics=False)
        raw = src.read_bytes()
        gz = raw if src_rel.endswith(".gz") else gzip.compress(raw, 9, mtime=0)
        dest_dir = (out / stem).parent
        dest_dir.mkdir(parents=True, exist_ok=True)
        if len(buf.getvalue()) < len(gz):
            dest = out / f"{stem}.parquet"
            dest.write_bytes(buf.getvalue())
        else:
            dest = out / f"{stem}.csv.gz"
            if src_rel.endswith(".gz"):
                shutil.copyfile(src, dest)
            else:
                dest.write_bytes(gz)
        manifest.append(
            {
                "file": str(dest.relative_to(out)),
                "original": src_rel.split("/")[-1],
                "rows": df.height,
                "columns": df.width,
                "bytes": dest.stat().st_size,
                "sha256": sha256_file(dest),
                "original_has_header": not headerless,
            }
        )
        print(f"{dest.relative_to(out)}: {df.height} rows, {dest.stat().st_size / 1e3:.0f} kB")
    (out / "MANIFEST.json").write_text(json.dumps(manifest, indent=2) + "\n")
    return manifest


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shared", type=Path, default=Path("../shared/data"))
    ap.add_argument("--out", type=Path, default=samples_dir())
    a = ap.parse_args()
    build(a.shared.resolve(), a.out)


if __name__ == "__main__":
    main()
