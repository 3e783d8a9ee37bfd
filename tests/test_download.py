"""Download client against a local HTTP server: resume, retries, bad bodies, checksums, immutability."""

from __future__ import annotations

import gzip
import hashlib
import json
import os

import pytest

from assets.download import Downloader, DownloadError, redact
from tests.httpserver import FixtureServer, Route

CSV = b"a,b\n" + b"".join(f"{i},{i * i}\n".encode() for i in range(20000))


def client(tmp_path, **kw) -> Downloader:
    return Downloader(
        tmp_path / "cache", retries=3, backoff_s=0.01, progress=False, sleep=lambda s: None, **kw
    )


def test_success_records_sha_and_is_immutable(http_server: FixtureServer, tmp_path) -> None:
    url = http_server.add("/x.csv", Route(CSV, "text/csv"))
    res = client(tmp_path).fetch(url, "x.csv", expect="csv")
    assert res.path.read_bytes() == CSV
    assert res.sha256 == hashlib.sha256(CSV).hexdigest()
    assert not res.cached and res.bytes == len(CSV)
    assert not os.access(res.path, os.W_OK) or os.geteuid() == 0  # read-only (root can still write)
    assert oct(res.path.stat().st_mode & 0o777) == "0o444"
    meta = json.loads(res.path.with_name("x.csv.meta.json").read_text())
    assert meta["sha256"] == res.sha256
    # second fetch is a cache hit: the server is not asked again
    again = client(tmp_path).fetch(url, "x.csv", expect="csv")
    assert again.cached and http_server.routes["/x.csv"].hits == 1


def test_range_resume_after_cut_connection(http_server: FixtureServer, tmp_path) -> None:
    url = http_server.add("/big.csv", Route(CSV, "text/csv", cut_after=50_000, etag='"v1"'))
    res = client(tmp_path, chunk_bytes=4096).fetch(url, "big.csv", expect="csv")
    assert res.path.read_bytes() == CSV
    assert res.resumed
    ranges = http_server.routes["/big.csv"].ranges
    assert ranges[0] == "" and ranges[1].startswith("bytes=") and int(ranges[1][6:-1]) > 0


def test_leftover_part_without_validator_restarts_from_zero(http_server: FixtureServer, tmp_path) -> None:
    """A part with no stored validator cannot be told to be of the same upstream version: never resumed."""
    url = http_server.add("/p.csv", Route(CSV, "text/csv", etag='"v1"'))
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / "p.csv.part").write_bytes(CSV[:1000])
    res = client(tmp_path).fetch(url, "p.csv", expect="csv")
    assert not res.resumed and res.path.read_bytes() == CSV
    assert http_server.routes["/p.csv"].ranges == [""]


def test_server_ignoring_range_restarts_clean(http_server: FixtureServer, tmp_path) -> None:
    url = http_server.add("/n.csv", Route(CSV, "text/csv", honor_range=False))
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / "n.csv.part").write_bytes(b"garbage" * 100)
    res = client(tmp_path).fetch(url, "n.csv", expect="csv")
    assert res.path.read_bytes() == CSV and not res.resumed


def test_500_then_success(http_server: FixtureServer, tmp_path) -> None:
    url = http_server.add("/flaky.csv", Route(CSV, "text/csv", fail_first=[500, 503]))
    res = client(tmp_path).fetch(url, "flaky.csv", expect="csv")
    assert res.path.read_bytes() == CSV
    assert http_server.routes["/flaky.csv"].hits == 3


def test_persistent_500_names_url(http_server: FixtureServer, tmp_path) -> None:
    url = http_server.add("/down.csv", Route(CSV, "text/csv", fail_first=[500] * 10))
    with pytest.raises(DownloadError, match=r"/down.csv.*HTTP 500"):
        client(tmp_path).fetch(url, "down.csv", expect="csv")
    assert not (tmp_path / "cache" / "down.csv").exists()


def test_404_is_not_retried_and_names_url(http_server: FixtureServer, tmp_path) -> None:
    with pytest.raises(DownloadError, match=r"/missing.csv: HTTP 404"):
        client(tmp_path).fetch(http_server.base + "/missing.csv", "m.csv", expect="csv")


def test_html_body_rejected(http_server: FixtureServer, tmp_path) -> None:
    url = http_server.add(
        "/login.csv", Route(b"<!DOCTYPE html><html><body>sign in</body></html>", "text/html")
    )
    with pytest.raises(DownloadError, match=r"/login.csv: got an HTML page"):
        client(tmp_path).fetch(url, "login.csv", expect="csv")
    assert not list((tmp_path / "cache").glob("login.csv*"))


def test_truncated_gzip_rejected(http_server: FixtureServer, tmp_path) -> None:
    gz = gzip.compress(CSV)
    url = http_server.add("/t.csv.gz", Route(gz[: len(gz) // 2], "application/gzip"))
    with pytest.raises(DownloadError, match=r"/t.csv.gz: truncated or corrupt gzip"):
        client(tmp_path).fetch(url, "t.csv.gz", expect="gzip")
    assert not list((tmp_path / "cache").glob("t.csv.gz*"))


def test_good_gzip_accepted(http_server: FixtureServer, tmp_path) -> None:
    gz = gzip.compress(CSV)
    url = http_server.add("/g.csv.gz", Route(gz, "application/gzip"))
    res = client(tmp_path).fetch(url, "g.csv.gz", expect="gzip")
    assert gzip.decompress(res.path.read_bytes()) == CSV


def test_checksum_mismatch_rejected(http_server: FixtureServer, tmp_path) -> None:
    url = http_server.add("/c.csv", Route(CSV, "text/csv"))
    with pytest.raises(DownloadError, match=r"/c.csv: sha256 .* does not match"):
        client(tmp_path).fetch(url, "c.csv", sha256="0" * 64, expect="csv")
    assert not (tmp_path / "cache" / "c.csv").exists()
    ok = client(tmp_path).fetch(url, "c.csv", sha256=hashlib.sha256(CSV).hexdigest(), expect="csv")
    assert ok.path.exists()


def test_api_key_is_redacted_in_errors(http_server: FixtureServer, tmp_path) -> None:
    with pytest.raises(DownloadError) as e:
        client(tmp_path).fetch(http_server.base + "/nope?api_key=SECRET123&x=1", "k.json", expect="json")
    assert "SECRET123" not in str(e.value) and "api_key=***" in str(e.value)
    assert redact("https://h/p?token=abc&b=2") == "https://h/p?token=***&b=2"
