"""A hostile or broken server on 127.0.0.1 cannot put bad bytes in the raw cache, hang a download, fill the
disk, leak a secret or write outside ``data/raw`` (items 1 and 5)."""

from __future__ import annotations

import gzip
import hashlib
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from assets.download import Downloader, DownloadError
from assets.raw import collect_files
from assets.sources import DATASETS
from tests.httpserver import FixtureServer, Route

CSV = b"Datetime,Price (USD/MWh)\n" + b"".join(
    f"2024-01-01 {i % 24:02d}:00:00,{i}.5\n".encode() for i in range(4000)
)
CSV2 = CSV.replace(b".5\n", b".7\n")  # the upstream's next version: same length, other bytes


def client(tmp_path: Path, sleep: Callable[[float], None] = lambda s: None, **kw: Any) -> Downloader:
    kw.setdefault("backoff_s", 0.01)
    return Downloader(tmp_path / "cache", progress=False, sleep=sleep, **kw)


def within(seconds: float, fn: Callable[[], Any]) -> Any:
    """Run ``fn`` under a wall-clock guard: fail the test (not hang the suite) if it takes longer."""
    out: dict[str, Any] = {}

    def _run() -> None:
        try:
            out["value"] = fn()
        except BaseException as e:  # handed back to the test
            out["error"] = e

    t = threading.Thread(target=_run, daemon=True)
    t.start()
    t.join(seconds)
    assert not t.is_alive(), f"still running after {seconds} s"
    if "error" in out:
        raise out["error"]
    return out.get("value")


def cached_files(tmp_path: Path) -> list[str]:
    root = tmp_path / "cache"
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()) if root.exists() else []


# ------------------------------------------------------------------------------------ resume / If-Range
@pytest.mark.parametrize("ignore_if_range", [False, True])
def test_resume_across_an_upstream_change_restarts_from_zero(
    http_server: FixtureServer, tmp_path: Path, ignore_if_range: bool
) -> None:
    """The connection breaks, the upstream publishes a new version, the client resumes: it used to splice
    the old first half onto the new second half and cache the hybrid under its own sha256."""
    route = Route(CSV, "text/csv", etag='"v1"', cut_after=len(CSV) // 2, ignore_if_range=ignore_if_range)
    url = http_server.add("/v.csv", route)

    def publish_v2(_: float) -> None:
        route.body, route.etag = CSV2, '"v2"'

    res = client(tmp_path, sleep=publish_v2).fetch(url, "v.csv", expect="csv")
    assert res.path.read_bytes() == CSV2
    assert res.sha256 == hashlib.sha256(CSV2).hexdigest()


def test_leftover_part_of_an_older_version_is_not_resumed(http_server: FixtureServer, tmp_path: Path) -> None:
    route = Route(CSV, "text/csv", etag='"v1"', cut_after=len(CSV) // 3)
    url = http_server.add("/w.csv", route)
    with pytest.raises(DownloadError):
        client(tmp_path, retries=0).fetch(url, "w.csv", expect="csv")  # the run dies half-way
    assert (tmp_path / "cache" / "w.csv.part").stat().st_size == len(CSV) // 3
    route.body, route.etag = CSV2, '"v2"'
    res = client(tmp_path).fetch(url, "w.csv", expect="csv")
    assert res.path.read_bytes() == CSV2
    assert route.ranges[-1] == f"bytes={len(CSV) // 3}-"  # it asked to resume, with If-Range
    # an unchanged upstream still resumes
    route2 = Route(CSV, "text/csv", etag='"same"', cut_after=len(CSV) // 3)
    url2 = http_server.add("/u.csv", route2)
    res2 = client(tmp_path, sleep=lambda s: None).fetch(url2, "u.csv", expect="csv")
    assert res2.resumed and res2.path.read_bytes() == CSV


# ------------------------------------------------------------------------------ deadline and size cap
def test_dripping_server_is_stopped_at_the_deadline(http_server: FixtureServer, tmp_path: Path) -> None:
    """16 bytes every 50 ms (never a read timeout): the transfer used to run as long as the server liked."""
    url = http_server.add("/drip.csv", Route(CSV, "text/csv", drip_s=0.05))
    t0 = time.monotonic()
    with pytest.raises(DownloadError, match=r"/drip.csv: stopped at the hard deadline of 1 s"):
        within(20, lambda: client(tmp_path, deadline_s=1.0, timeout_s=5.0).fetch(url, "d.csv", expect="csv"))
    assert time.monotonic() - t0 < 3.0
    assert cached_files(tmp_path) == []


def test_endless_body_is_cut_at_the_size_cap(http_server: FixtureServer, tmp_path: Path) -> None:
    url = http_server.add("/endless.csv", Route(CSV, "text/csv", endless=True))
    with pytest.raises(DownloadError, match=r"more than 1000000 bytes received, over the size cap"):
        within(20, lambda: client(tmp_path).fetch(url, "e.csv", expect="csv", max_bytes=1_000_000))
    assert cached_files(tmp_path) == []


def test_dataset_size_cap_applies_across_its_files(http_server: FixtureServer, tmp_path: Path) -> None:
    """``max_bytes`` bounds a dataset's files together; an announced length over it is refused unread."""
    http_server.add("/t/a.csv", Route(CSV, "text/csv"))
    http_server.add("/t/b.csv", Route(CSV, "text/csv"))
    params = {"base_url": http_server.base + "/t", "traces": ["a", "b"], "max_bytes": len(CSV) + 10}
    with pytest.raises(
        DownloadError, match=r"/t/b.csv: the file has \d+ bytes, over the size cap of 10 bytes"
    ):
        collect_files(DATASETS["gaia_traces"], "remote", params, client(tmp_path))
    assert cached_files(tmp_path) == ["gaia/a.csv", "gaia/a.csv.meta.json"]


# ------------------------------------------------------------------------------------------ gzip bomb
@pytest.fixture(scope="module")
def bomb(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    d = tmp_path_factory.mktemp("bomb") / "bomb.gz"
    with gzip.open(d, "wb", compresslevel=9) as g:
        g.write(b"a,b\n")
        zeros = b"0" * (1 << 20)
        for _ in range(300):  # 300 MiB of text in ~300 kB
            g.write(zeros)
    return d.read_bytes()


def test_gzip_bomb_is_refused_by_the_client(http_server: FixtureServer, tmp_path: Path, bomb: bytes) -> None:
    url = http_server.add("/bomb.csv.gz", Route(bomb, "application/gzip"))
    with pytest.raises(DownloadError, match=r"probable gzip bomb"):
        client(tmp_path).fetch(url, "bomb.csv.gz", expect="gzip")
    assert cached_files(tmp_path) == []


def test_gzip_bomb_is_refused_by_the_normalizer(tmp_path: Path, bomb: bytes) -> None:
    """A bomb already on disk (a sample, an older cache) is inflated in bounded chunks and refused."""
    from assets.normalize.base import BadFileError, RawFile, read_text_table

    p = tmp_path / "bomb.csv.gz"
    p.write_bytes(bomb)
    with pytest.raises(BadFileError, match=r"bomb.csv.gz: .*probable gzip bomb"):
        read_text_table(RawFile(p, "gaia/bomb.csv.gz"))


# --------------------------------------------------------------------------------------- body checks
def test_short_content_length_is_not_cached(http_server: FixtureServer, tmp_path: Path) -> None:
    """The server announces fewer bytes than the file has: the CSV used to be cached cut mid-line."""
    url = http_server.add("/short.csv", Route(CSV, "text/csv", length_delta=-37))
    with pytest.raises(DownloadError, match=r"wrong Content-Length"):
        client(tmp_path).fetch(url, "short.csv", expect="csv")
    assert cached_files(tmp_path) == []


def test_html_after_600_spaces_is_not_a_csv(http_server: FixtureServer, tmp_path: Path) -> None:
    page = b" " * 600 + b"<html><head><title>Sign in</title></head><body>log in</body></html>\n"
    url = http_server.add("/login.csv", Route(page, "text/csv"))
    with pytest.raises(DownloadError, match=r"got an HTML page where csv data was expected"):
        client(tmp_path).fetch(url, "login.csv", expect="csv")
    url2 = http_server.add("/login2.csv", Route(b"   \n\n <!DOCTYPE html><p>x</p>\n", "text/csv"))
    with pytest.raises(DownloadError, match=r"HTML page"):
        client(tmp_path).fetch(url2, "login2.csv", expect="csv")
    assert cached_files(tmp_path) == []


@pytest.mark.parametrize("status", [500, 403])
def test_errors_never_carry_the_api_key(http_server: FixtureServer, tmp_path: Path, status: int) -> None:
    """The server echoes the query (with the key) in its error body: the key used to reach the error
    message and from there Dagster's event log."""
    url = http_server.add("/api", Route(b"{}", "application/json", fail_first=[status] * 5, echo_query=True))
    with pytest.raises(DownloadError) as e:
        client(tmp_path, retries=1).fetch(
            url + "?api_key=SEKRET123&token=TOK456&x=1", "a.json", expect="json"
        )
    msg = str(e.value)
    assert "server error for" in msg and "SEKRET123" not in msg and "TOK456" not in msg, msg


def test_an_error_keeps_its_message_after_a_key_at_the_end_of_the_url(
    http_server: FixtureServer, tmp_path: Path
) -> None:
    """Found with the soak: redaction ran from ``api_key=`` to the end of the text, so an error of a URL
    whose last parameter is the key said only ``http://…?api_key=***`` — the reason was cut off."""
    url = http_server.add("/k", Route(b"{}", "application/json", fail_first=[500] * 5))
    with pytest.raises(DownloadError) as e:
        client(tmp_path, retries=1).fetch(url + "?x=1&api_key=SEKRET123", "k.json", expect="json")
    msg = str(e.value)
    assert msg.startswith(f"{url}?x=1&api_key=***: gave up after 2 attempts: HTTP 500"), msg
    assert "SEKRET123" not in msg


def test_scrub_removes_literal_secret_values() -> None:
    from assets.download import scrub

    url = "http://h/p?api_key=SEKRET123&x=1"
    assert (
        scrub('HTTP 401: {"error": "key SEKRET123 is invalid"}', url)
        == 'HTTP 401: {"error": "key *** is invalid"}'
    )


# ------------------------------------------------------------------------------------------ max_pages
def test_max_pages_does_not_build_every_url_first(http_server: FixtureServer, tmp_path: Path) -> None:
    """``max_pages`` of 10**9 used to build a billion URLs (1.25 GB at 10**7) before the first request."""
    ds = DATASETS["eia930_fuelmix"]
    listing = ds.remote({"api_key": "k", "max_pages": 50_000})  # type: ignore[misc]
    assert iter(listing) is listing  # lazy: listed as fetched
    page = b'{"response": {"data": [{"period": "2024-01-01T00", "respondent": "CISO", "fueltype": "NG", "value": 1}]}}'
    empty = b'{"response": {"data": []}}'
    route = Route(page, "application/json")
    http_server.add("/eia/", route)
    pages = iter([page, page, empty])

    class Counting(Downloader):
        def fetch(self, url: str, dest: str | Path, **kw: Any):  # type: ignore[override]
            route.body = next(pages)
            return super().fetch(url, dest, **kw)

    dl = Counting(tmp_path / "cache", progress=False, sleep=lambda s: None)
    params = {"api_key": "k", "url": http_server.base + "/eia/", "max_pages": 10**9}
    rows = within(10, lambda: collect_files(ds, "remote", params, dl))
    assert len(rows) == 2 and route.hits == 3


# ------------------------------------------------------------------------------------------ path escape
ESCAPES = [
    ("gaia_traces", {"traces": ["../../../victim"]}, r"traces\[0\] = '../../../victim'"),
    ("gaia_traces", {"traces": ["/etc/passwd"]}, r"traces\[0\]"),
    ("gaia_traces", {"traces": "azure-100k"}, r"traces must be a non-empty list"),
    ("electricitymaps_hourly", {"release": "../../.."}, r"release = '../../..'"),
    ("electricitymaps_hourly", {"zones": ["US/../../x"]}, r"zones\[0\]"),
    ("electricitymaps_hourly", {"years": ["../x"]}, r"years = '../x' must be an integer"),
    ("borg2019_events", {"cell": "/tmp"}, r"cell = '/tmp'"),
    ("borg2019_events", {"tables": [".."]}, r"tables\[0\] = '..'"),
    ("borg2011_task_events", {"shards": [True]}, r"shards = True must be an integer"),
    ("eia930_fuelmix", {"api_key": "k", "respondents": ["CISO/../../x"]}, r"respondents\[0\]"),
    ("eia930_fuelmix", {"api_key": "k", "start": "../../../x"}, r"start = '../../../x'"),
    ("eia930_fuelmix", {"api_key": "k", "end": ".hidden"}, r"end = '.hidden'"),
]


@pytest.mark.parametrize(("dataset", "params", "match"), ESCAPES)
def test_listing_params_cannot_leave_the_cache(
    http_server: FixtureServer, tmp_path: Path, dataset: str, params: dict, match: str
) -> None:
    """`{'traces': ['../../../victim']}` replaced a file outside data/raw with the server's content."""
    victim = tmp_path / "victim.csv"
    victim.write_text("precious\n")
    http_server.add("/victim.csv", Route(CSV, "text/csv"))
    p = {"base_url": http_server.base, "url": http_server.base + "/victim.csv", **params}
    dl = Downloader(tmp_path / "a" / "b" / "cache", progress=False, sleep=lambda s: None)
    with pytest.raises(ValueError, match=match):
        list(collect_files(DATASETS[dataset], "remote", p, dl))
    assert victim.read_text() == "precious\n" and dl.requests == 0


@pytest.mark.parametrize(
    "dest", ["../victim.csv", "gaia/../../victim.csv", "ABS/victim.csv", ".quarantine/x"]
)
def test_client_refuses_a_destination_outside_the_cache(
    http_server: FixtureServer, tmp_path: Path, dest: str
) -> None:
    dest = dest.replace("ABS", str(tmp_path / "abs"))  # absolute, inside tmp_path should it escape
    url = http_server.add("/x.csv", Route(CSV, "text/csv"))
    with pytest.raises(DownloadError, match=r"not a plain relative path inside the raw cache"):
        client(tmp_path).fetch(url, dest, expect="csv")
    assert http_server.routes["/x.csv"].hits == 0


def test_symlinks_in_the_cache_are_not_followed(http_server: FixtureServer, tmp_path: Path) -> None:
    url = http_server.add("/x.csv", Route(CSV, "text/csv"))
    outside = tmp_path / "outside"
    outside.mkdir()
    victim = outside / "victim.csv"
    victim.write_text("precious\n")
    cache = tmp_path / "cache"
    cache.mkdir()
    # a linked directory
    (cache / "gaia").symlink_to(outside, target_is_directory=True)
    with pytest.raises(DownloadError, match=r"gaia: is a symbolic link inside the raw cache"):
        client(tmp_path).fetch(url, "gaia/new.csv", expect="csv")
    assert sorted(p.name for p in outside.iterdir()) == ["victim.csv"]
    # a planted .part link: resuming used to append to the victim and make it read-only
    (cache / "p.csv.part").symlink_to(victim)
    with pytest.raises(DownloadError, match=r"p.csv.part: is a symbolic link"):
        client(tmp_path).fetch(url, "p.csv", expect="csv")
    assert victim.read_text() == "precious\n" and os.access(victim, os.W_OK)
    # a linked destination file
    (cache / "d.csv").symlink_to(victim)
    with pytest.raises(DownloadError, match=r"d.csv: is a symbolic link"):
        client(tmp_path).fetch(url, "d.csv", expect="csv")
    assert victim.read_text() == "precious\n"


def test_quarantine_stays_inside_the_cache(http_server: FixtureServer, tmp_path: Path) -> None:
    url = http_server.add("/q.csv", Route(CSV, "text/csv"))
    first = client(tmp_path).fetch(url, "q.csv", expect="csv")
    os.chmod(first.path, 0o644)
    first.path.write_bytes(b"edited\n")
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (tmp_path / "cache" / ".quarantine").symlink_to(outside, target_is_directory=True)
    with pytest.raises(DownloadError, match=r".quarantine: is a symbolic link"):
        client(tmp_path).fetch(url, "q.csv", expect="csv")
    assert list(outside.iterdir()) == [] and first.path.read_bytes() == b"edited\n"


# ---------------------------------------------------------------------------------------------- redirects
@pytest.mark.parametrize(
    ("target", "why"),
    [("/loop.csv", "TooManyRedirects"), ("file:///etc/passwd", "InvalidSchema")],
    ids=["loop", "file-scheme"],
)
def test_a_hostile_redirect_is_one_download_error(
    http_server: FixtureServer, tmp_path: Path, target: str, why: str
) -> None:
    """Found by the soak (`python -m tests.faults.soak`): a redirect loop raised requests' own
    TooManyRedirects, and a redirect to file:// its InvalidSchema, past every handler (a traceback in
    `varcap run`) instead of a DownloadError naming the URL."""
    loc = http_server.base + target if target.startswith("/") else target
    url = http_server.add("/loop.csv", Route(CSV, "text/csv", redirect=loc)) + "?api_key=SECRET1"
    with pytest.raises(DownloadError) as e:
        within(30, lambda: client(tmp_path).fetch(url, "r.csv", expect="csv"))
    msg = str(e.value)
    assert why in msg and "/loop.csv" in msg and "SECRET1" not in msg and "\n" not in msg, msg
    assert cached_files(tmp_path) == []


# ------------------------------------------------------------- validators, empty bodies, lying lengths
def test_no_validator_means_no_resume(http_server: FixtureServer, tmp_path: Path) -> None:
    """A server that sends neither ETag nor Last-Modified: a resumed download used to splice two upstream
    versions (1,016 rows of one, 984 of the other). The part is dropped and the file restarts from zero."""
    route = Route(CSV, "text/csv", cut_after=len(CSV) // 2)  # no etag

    def publish_v2(_: float) -> None:
        route.body = CSV2

    url = http_server.add("/nv.csv", route)
    res = client(tmp_path, sleep=publish_v2).fetch(url, "nv.csv", expect="csv")
    assert res.path.read_bytes() == CSV2 and not res.resumed
    assert all(r == "" for r in route.ranges)  # never a Range request


def test_empty_200_body_is_not_cached(http_server: FixtureServer, tmp_path: Path) -> None:
    url = http_server.add("/empty.csv", Route(b"", "text/csv"))
    with pytest.raises(DownloadError, match=r"/empty.csv: the server sent an empty body where csv data"):
        client(tmp_path).fetch(url, "empty.csv", expect="csv")
    assert cached_files(tmp_path) == []


def test_unreadable_content_length_names_the_url(http_server: FixtureServer, tmp_path: Path) -> None:
    import requests

    class Odd(requests.adapters.HTTPAdapter):
        def build_response(self, req: Any, resp: Any) -> requests.Response:
            r = super().build_response(req, resp)
            r.headers["Content-Length"] = "12abc"
            return r

    url = http_server.add("/odd.csv", Route(CSV, "text/csv"))
    c = client(tmp_path)
    c.session.mount("http://", Odd())
    with pytest.raises(
        DownloadError, match=r"/odd.csv: the server sent an unreadable Content-Length '12abc'"
    ):
        c.fetch(url, "odd.csv", expect="csv")
    assert cached_files(tmp_path) == []


def test_short_content_length_with_range_ignored_is_not_cached(
    http_server: FixtureServer, tmp_path: Path
) -> None:
    """The server repeats a short Content-Length and ignores Range: the CSV used to be cached cut mid-line."""
    url = http_server.add("/lie.csv", Route(CSV, "text/csv", length_delta=-37, honor_range=False))
    with pytest.raises(
        DownloadError, match=r"/lie.csv: the server announced \d+ bytes but .* wrong Content-Length"
    ):
        client(tmp_path).fetch(url, "lie.csv", expect="csv")
    assert cached_files(tmp_path) == []


def test_base_url_placeholders_are_filled_without_format(tmp_path: Path) -> None:
    """A ``{x}`` in the spot lister's base_url used to end as a bare KeyError (str.format)."""
    from assets.sources import fill

    with pytest.raises(
        ValueError, match=r"^params_json: base_url: unknown placeholder \{x\} in .*; it takes \{commit\}$"
    ):
        DATASETS["spot_availability"].remote({"base_url": "http://127.0.0.1/{x}"})  # type: ignore[misc]
    with pytest.raises(ValueError, match=r"unknown placeholder \{0.__class__\}"):
        fill("http://h/{0.__class__}", "base_url", commit="c")
    assert fill("http://h/{commit}/x", "base_url", commit="c") == "http://h/c/x"


def test_empty_eia_page_leaves_no_sidecar(http_server: FixtureServer, tmp_path: Path) -> None:
    import json

    http_server.add("/eia", Route(json.dumps({"response": {"data": []}}).encode(), "application/json"))
    params = {"url": http_server.base + "/eia", "api_key": "k", "max_pages": 3}
    ds = next(d for d in DATASETS.values() if "EIA_API_KEY" in d.needs_env)
    assert collect_files(ds, "remote", params, client(tmp_path)) == []
    assert cached_files(tmp_path) == []
