"""The raw cache never keeps a bad file and retries stay bounded (items 4 and 5). Every test
runs against a local HTTP server on 127.0.0.1."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import socket
from pathlib import Path

import pytest

from assets.download import Downloader, DownloadError
from assets.raw import collect_files
from assets.sources import DATASETS
from tests.httpserver import FixtureServer, Route

ROWS = 8784
CSV = b"Datetime,Price (USD/MWh)\n" + b"".join(
    f"2024-01-01 {i % 24:02d}:00:00,{i}.5\n".encode() for i in range(ROWS)
)


def client(tmp_path: Path, waits: list[float] | None = None, **kw) -> Downloader:
    sleeps = waits if waits is not None else []
    return Downloader(tmp_path / "cache", backoff_s=0.01, progress=False, sleep=sleeps.append, **kw)


def test_close_delimited_body_cut_short_is_completed(http_server: FixtureServer, tmp_path: Path) -> None:
    """No Content-Length and the connection closed half-way: it used to be cached as complete."""
    url = http_server.add(
        "/p.csv", Route(CSV, "text/csv", no_length=True, cut_after=len(CSV) // 2, etag='"v1"')
    )
    res = client(tmp_path).fetch(url, "p.csv", expect="csv")
    assert res.path.read_bytes() == CSV and res.resumed
    assert json.loads(Path(str(res.path) + ".meta.json").read_text())["length_verified"] is True


def test_close_delimited_body_that_cannot_be_confirmed_is_refused(
    http_server: FixtureServer, tmp_path: Path
) -> None:
    url = http_server.add(
        "/q.csv", Route(CSV, "text/csv", no_length=True, honor_range=False, cut_after=len(CSV) // 2 + 3)
    )
    with pytest.raises(DownloadError, match=r"/q.csv: the server sent no length and the body ends mid-line"):
        client(tmp_path).fetch(url, "q.csv", expect="csv")
    assert not list((tmp_path / "cache").glob("q.csv*"))


def test_206_from_the_wrong_offset_restarts_clean(http_server: FixtureServer, tmp_path: Path) -> None:
    """A 206 that restarts from byte 0 used to be appended to the part: a corrupt file."""
    url = http_server.add("/r.csv", Route(CSV, "text/csv", range_from_zero=True, etag='"v1"'))
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / "r.csv.part").write_bytes(CSV[:1000])
    (tmp_path / "cache" / "r.csv.part.json").write_text(
        '{"validator": "\\"v1\\""}'
    )  # resumable: its validator
    res = client(tmp_path).fetch(url, "r.csv", expect="csv")
    assert res.path.read_bytes() == CSV
    assert http_server.routes["/r.csv"].ranges == ["bytes=1000-", ""]


def test_cached_file_edited_later_is_quarantined_and_fetched_again(
    http_server: FixtureServer, tmp_path: Path
) -> None:
    url = http_server.add("/e.csv", Route(CSV, "text/csv"))
    first = client(tmp_path).fetch(url, "e.csv", expect="csv")
    os.chmod(first.path, 0o644)
    first.path.write_bytes(CSV[: len(CSV) // 2])  # someone edits the immutable cache
    again = client(tmp_path).fetch(url, "e.csv", expect="csv")
    assert not again.cached and again.path.read_bytes() == CSV
    assert again.sha256 == hashlib.sha256(CSV).hexdigest()
    (q,) = [p for p in (tmp_path / "cache" / ".quarantine").iterdir() if p.name.endswith(tuple("0123456789"))]
    assert q.read_bytes() == CSV[: len(CSV) // 2]  # nothing lost: the edited bytes are kept aside
    assert http_server.routes["/e.csv"].hits == 2
    # an intact cache is still a hit
    assert client(tmp_path).fetch(url, "e.csv", expect="csv").cached


def test_stalled_server_is_asked_once_per_retry(http_server: FixtureServer, tmp_path: Path) -> None:
    """One retry layer: 1 + retries requests (it used to be 6 × 6 = 36 per file)."""
    url = http_server.add("/s.csv", Route(CSV, "text/csv", stall_s=0.6))
    with pytest.raises(DownloadError, match=r"/s.csv: gave up after 3 attempts"):
        client(tmp_path, retries=2, timeout_s=0.2).fetch(url, "s.csv", expect="csv")
    assert http_server.routes["/s.csv"].hits == 3


def test_total_deadline_stops_retrying(http_server: FixtureServer, tmp_path: Path) -> None:
    url = http_server.add("/d.csv", Route(CSV, "text/csv", fail_first=[503] * 10))
    waits: list[float] = []
    dl = Downloader(
        tmp_path / "c", retries=10, backoff_s=1.0, deadline_s=2.5, progress=False, sleep=waits.append
    )
    with pytest.raises(DownloadError, match=r"total deadline of 2.5 s"):
        dl.fetch(url, "d.csv", expect="csv")
    assert sum(waits) <= 2.5 and http_server.routes["/d.csv"].hits < 10


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_offline_is_reported_in_seconds(tmp_path: Path) -> None:
    """An unreachable host: a few quick attempts, a message that says so, and later files fail at once."""
    base = f"http://127.0.0.1:{_closed_port()}"
    waits: list[float] = []
    dl = client(tmp_path, waits)
    with pytest.raises(DownloadError, match=r"cannot reach 127.0.0.1:\d+ after 3 attempts.*offline"):
        dl.fetch(base + "/a.csv", "a.csv", expect="csv")
    assert dl.requests == 3 and sum(waits) < 5
    with pytest.raises(DownloadError, match="cannot reach"):
        dl.fetch(base + "/b.csv", "b.csv", expect="csv")
    assert dl.requests == 3  # not asked again


def test_modified_embedded_sample_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from sim import paths

    ds = DATASETS["watttime_moer"]
    (rel,) = ds.sample_files
    home = tmp_path / "home"
    (home / "data" / "samples" / rel).parent.mkdir(parents=True)
    shutil.copyfile(paths.samples_dir() / "MANIFEST.json", home / "data" / "samples" / "MANIFEST.json")
    shutil.copyfile(paths.samples_dir() / rel, home / "data" / "samples" / rel)
    monkeypatch.setenv("VARCAP_HOME", str(home))
    assert collect_files(ds, "sample", {}, None)[0]["name"] == rel  # type: ignore[arg-type]
    with open(home / "data" / "samples" / rel, "ab") as f:
        f.write(b"tampered")
    with pytest.raises(ValueError, match=r"MANIFEST.json records .* the file was modified"):
        collect_files(ds, "sample", {}, None)  # type: ignore[arg-type]


def test_complete_leftover_part_is_kept(http_server: FixtureServer, tmp_path: Path) -> None:
    """A part that already holds the whole file (the run died before the rename) is confirmed by the
    server's 416 and kept, not downloaded again."""
    url = http_server.add("/whole.csv", Route(CSV, "text/csv", etag='"v1"'))
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / "whole.csv.part").write_bytes(CSV)
    (tmp_path / "cache" / "whole.csv.part.json").write_text('{"validator": "\\"v1\\""}')
    res = client(tmp_path).fetch(url, "whole.csv", expect="csv")
    assert res.path.read_bytes() == CSV
    assert http_server.routes["/whole.csv"].ranges == [f"bytes={len(CSV)}-"]
