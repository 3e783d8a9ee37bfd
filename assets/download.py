"""One download client for every upstream file varcap fetches.

Behaviour, in order, for :meth:`Downloader.fetch`:

1. If the destination already exists in the immutable cache, its sha256 is re-computed and compared with
   its ``.meta.json`` sidecar (and with a given ``sha256``). A match is returned as is (``cached=True``);
   a mismatch or a missing sidecar moves the file to ``<cache>/.quarantine/`` (nothing is deleted) and
   downloads it again.
   ``dest`` must be a plain relative path: no ``..``, not absolute, and no symbolic link on the way
   (the file, its directories, ``.part``, ``.quarantine``) — everything stays inside the cache.
2. The body streams into ``<dest>.part``; the validator of the answer that started it (a strong
   ``ETag``, else ``Last-Modified``) is kept in ``<dest>.part.json``. A leftover ``.part`` from an
   interrupted run is resumed with an HTTP ``Range`` request carrying ``If-Range``; a ``206`` must start
   exactly at the requested offset (``Content-Range``) and carry the same validator, otherwise the part is
   discarded and the file restarts from zero (two upstream versions are never spliced); a server that
   ignores ``Range`` or says the file changed (status 200) restarts the file from zero. A part without a
   stored validator (the server sent none, or the part came from elsewhere) is never resumed: the file
   restarts from zero, since nothing could tell two upstream versions apart.
3. The expected length comes from ``Content-Length`` (200) or the total of ``Content-Range`` (206). A
   close-delimited body (no length, not chunked) is confirmed by asking for the bytes after its end: a
   ``416`` confirms it, a ``206`` shows it was cut short (the download resumes). A body that cannot be
   confirmed and ends mid-line where CSV/JSON was expected is refused.
   Every transfer has a hard wall-clock deadline (``deadline_s`` for the whole fetch, retries included;
   each socket read waits at most the time left), so a server dripping bytes is stopped; a body larger
   than ``max_bytes`` (the dataset's size cap) is refused as soon as it is announced or received.
4. One retry layer (a urllib3 ``Retry`` driving this loop; the HTTP adapter itself never retries):
   connection errors, timeouts, short bodies and 429/5xx answers are retried with exponential backoff
   (``Retry-After`` honoured) until ``retries`` is spent or the total ``deadline_s`` has passed. A host
   that cannot be reached (DNS failure, refused, connect timeout) is retried only ``connect_retries``
   times and is then reported as unreachable (offline?) within seconds; later files on that host fail
   at once.
5. The finished file is validated: an HTML body where data was expected (sniffed on the whole first
   line after any leading whitespace), a truncated or corrupt gzip, a gzip that inflates past
   :data:`assets.gzcap.MAX_RATIO` × its size (inflated in bounded chunks, never whole), a size that
   differs from the expected length, an empty body where CSV/JSON/gzip/parquet was expected, a
   ``Content-Length`` that is not a number, a CSV that ends mid-line although the server's length says it
   is complete unless a Range request past its end is refused with ``416`` (a ``Content-Length`` shorter
   than the file, also from a server that ignores ``Range``), or a sha256 mismatch each raise :class:`DownloadError` naming the URL, and the partial file is removed so
   no bad bytes survive. Every error message is scrubbed of secrets (``api_key=…`` and the literal
   values of secret query parameters, also where a server echoes them in its body).
6. The ``.meta.json`` sidecar (url, size, sha256, time, whether the length was verified) is written,
   then the file is atomically renamed into place and made read-only.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import time
import zlib
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal
from urllib.parse import parse_qsl, urlsplit

import requests
from requests.adapters import HTTPAdapter
from tqdm.auto import tqdm
from urllib3.exceptions import (
    ConnectTimeoutError,
    MaxRetryError,
    NewConnectionError,
    ProtocolError,
    ReadTimeoutError,
)
from urllib3.exceptions import HTTPError as Urllib3HTTPError
from urllib3.util.retry import Retry

from assets.gzcap import MAX_RATIO, GzipBomb, inflate

Expect = Literal["any", "csv", "gzip", "json", "parquet"]

log = logging.getLogger(__name__)

# a value ends at '&', whitespace or a quote; trailing punctuation (the ': ' after a URL in a message) is
# kept. It used to run to the end of the text: every error of a URL ending in its key lost its message.
_SECRET_PARAMS = re.compile(
    r"(api_key|apikey|token|key|sig|signature)=([^&\s\"'<>]+?)(?=[&\s\"'<>]|[:;,.)\]]*(?:\s|$))",
    re.IGNORECASE,
)


def redact(url: str) -> str:
    """Return ``url`` (or a message quoting it) with secret query parameters (api_key, token, sig…)
    replaced by ``***``."""
    return _SECRET_PARAMS.sub(lambda m: f"{m.group(1)}=***", url)


_SECRET_NAMES = re.compile(r"^(api_key|apikey|token|key|sig|signature|access_token|secret)$", re.IGNORECASE)


def scrub(text: str, url: str) -> str:
    """``text`` (an error message, perhaps quoting a server's body) with secrets removed: ``api_key=…``
    style pairs and every literal value of a secret query parameter of ``url``."""
    out = redact(text)
    for name, value in parse_qsl(urlsplit(url).query, keep_blank_values=False):
        if _SECRET_NAMES.match(name) and len(value) >= 4:
            out = out.replace(value, "***")
    return out


class DownloadError(RuntimeError):
    """A download failed or produced bytes that are not what was expected. The message names the URL."""


@dataclass(frozen=True)
class DownloadResult:
    """Where a fetched file lives and what it is."""

    url: str
    path: Path
    bytes: int
    sha256: str
    cached: bool
    resumed: bool
    attempts: int

    def metadata(self) -> dict[str, object]:
        d = asdict(self)
        d["path"] = str(self.path)
        d["url"] = redact(self.url)
        return d


def sha256_file(path: Path, chunk: int = 1 << 20) -> str:
    """Hex sha256 of a file, streamed."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(chunk):
            h.update(block)
    return h.hexdigest()


SNIFF_BYTES = 1 << 20  # how far the first line is read when sniffing a body
_HTML_MARKS = (b"<!doctype", b"<html", b"<head", b"<body", b"<script", b"<?xml")


def first_line(path: Path, limit: int = SNIFF_BYTES) -> bytes:
    """The first line of ``path`` after any leading whitespace (at most ``limit`` bytes are read)."""
    with open(path, "rb") as f:
        data = f.read(limit)
    return data.lstrip().split(b"\n", 1)[0]


def _looks_like_html(line: bytes) -> bool:
    s = line.strip().lower()
    return s.startswith(b"<") or any(m in s for m in _HTML_MARKS)


def _validate_body(path: Path, url: str, expect: Expect, max_ratio: float = MAX_RATIO) -> None:
    with open(path, "rb") as f:
        head = f.read(8)
    binary = head[:2] == b"\x1f\x8b" or head[:4] == b"PAR1"
    if expect in ("csv", "json", "gzip", "parquet") and path.stat().st_size == 0:
        raise DownloadError(f"{redact(url)}: the server sent an empty body where {expect} data was expected")
    if expect in ("csv", "json", "gzip", "parquet") and not binary:
        line = first_line(path)
        if not line.strip() and path.stat().st_size:
            raise DownloadError(
                f"{redact(url)}: the first {SNIFF_BYTES} bytes are blank where {expect} data was expected"
            )
        if _looks_like_html(line):
            raise DownloadError(f"{redact(url)}: got an HTML page where {expect} data was expected")
    if expect == "gzip" or (expect in ("csv", "json") and head[:2] == b"\x1f\x8b"):
        if head[:2] != b"\x1f\x8b":
            raise DownloadError(f"{redact(url)}: not a gzip file (first bytes {head[:8]!r})")
        try:
            inflate(path, max_ratio=max_ratio)
        except GzipBomb as e:
            raise DownloadError(f"{redact(url)}: {e}") from None
        except (EOFError, OSError, zlib.error) as e:
            raise DownloadError(f"{redact(url)}: truncated or corrupt gzip ({e})") from e
    if expect == "parquet":
        with open(path, "rb") as f:
            f.seek(max(0, path.stat().st_size - 4))
            tail = f.read(4)
        if head[:4] != b"PAR1" or tail != b"PAR1":
            raise DownloadError(
                f"{redact(url)}: not a complete parquet file (first bytes {head[:8]!r}, last {tail!r})"
            )
    if expect == "json" and head[:2] != b"\x1f\x8b":
        try:
            json.loads(path.read_bytes())
        except ValueError as e:
            raise DownloadError(f"{redact(url)}: body is not valid JSON ({e})") from e


class _Retryable(Exception):
    """An attempt failed in a way worth retrying; ``error``/``response`` feed urllib3's ``Retry``."""

    def __init__(self, msg: str, *, error: Exception | None = None, response: object | None = None) -> None:
        super().__init__(msg)
        self.error = error
        self.response = response
        self.retry_after: float | None = None


_CONTENT_RANGE = re.compile(r"bytes (\d+)-(\d+)/(\d+|\*)")


def _content_range(value: str | None) -> tuple[int, int, int | None] | None:
    m = _CONTENT_RANGE.match(value or "")
    if not m:
        return None
    return int(m.group(1)), int(m.group(2)), None if m.group(3) == "*" else int(m.group(3))


def _length(value: str, url: str) -> int:
    """A ``Content-Length`` header as an int; :class:`DownloadError` naming the URL if it is not one."""
    v = value.strip()
    if not v.isdigit():
        raise DownloadError(f"{redact(url)}: the server sent an unreadable Content-Length {value[:40]!r}")
    return int(v)


def _validator(headers: object) -> str | None:
    """What identifies the upstream version of an answer: a strong ``ETag``, else ``Last-Modified``."""
    etag = headers.get("ETag")  # type: ignore[attr-defined]
    if etag and not etag.startswith("W/"):
        return str(etag)
    lm = headers.get("Last-Modified")  # type: ignore[attr-defined]
    return str(lm) if lm else None


def _part_meta(part: Path) -> Path:
    return part.with_name(part.name + ".json")


def _read_part_validator(part: Path) -> str | None:
    try:
        v = json.loads(_part_meta(part).read_text()).get("validator")
    except (OSError, ValueError, AttributeError):
        return None
    return v if isinstance(v, str) else None


def _drop_part(part: Path) -> None:
    part.unlink(missing_ok=True)
    _part_meta(part).unlink(missing_ok=True)


def _write_small(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a fresh temporary file (never through a planted symlink)."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.unlink(missing_ok=True)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def _ends_with_newline(path: Path) -> bool:
    with open(path, "rb") as f:
        f.seek(max(0, path.stat().st_size - 1))
        return f.read(1) == b"\n"


def _excerpt(r: requests.Response, limit: int = 512) -> str:
    """The first ``limit`` bytes of an error body, on one line (never the whole body: it may be endless)."""
    try:
        raw = r.raw.read(limit, decode_content=True) or b""
    except Exception:  # a broken error body must not hide the status
        raw = b""
    return raw.decode("utf-8", "replace")[:200].strip().replace("\n", " ")


def _read_meta(path: Path) -> dict[str, object] | None:
    try:
        return json.loads(path.with_name(path.name + ".meta.json").read_text())
    except (OSError, ValueError):
        return None


class Downloader:
    """Streaming, resumable, verifying HTTP downloader into an immutable cache directory."""

    def __init__(
        self,
        cache_dir: str | Path,
        *,
        retries: int = 5,
        backoff_s: float = 0.5,
        timeout_s: float = 60.0,
        connect_timeout_s: float = 5.0,
        connect_retries: int = 2,
        deadline_s: float = 600.0,
        chunk_bytes: int = 1 << 20,
        max_ratio: float = MAX_RATIO,
        progress: bool | None = None,
        session: requests.Session | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.cache_dir = Path(cache_dir)
        self.retries = retries
        self.backoff_s = backoff_s
        self.timeout_s = timeout_s
        self.connect_timeout_s = connect_timeout_s
        self.connect_retries = connect_retries
        self.deadline_s = deadline_s
        self.chunk_bytes = chunk_bytes
        self.max_ratio = max_ratio
        self.progress = progress
        self._sleep = sleep
        self.session = session or self._make_session()
        self._unreachable: dict[str, str] = {}  # host -> why, so later files fail at once
        self.requests = 0  # HTTP requests sent (for tests and metadata)
        self._deadline: float | None = None  # monotonic hard deadline of the fetch under way

    def _make_session(self) -> requests.Session:
        s = requests.Session()
        adapter = HTTPAdapter(max_retries=Retry(total=0, read=False, redirect=5, raise_on_status=False))
        s.mount("http://", adapter)
        s.mount("https://", adapter)
        s.headers["User-Agent"] = "varcap/0.1 (+https://github.com/varcap)"
        return s

    def _retry_policy(self) -> Retry:
        return Retry(
            total=self.retries,
            connect=self.connect_retries,
            read=self.retries,
            status=self.retries,
            other=self.retries,
            backoff_factor=self.backoff_s,
            backoff_max=60.0,
            status_forcelist=(429, 500, 502, 503, 504),
            allowed_methods=frozenset({"GET"}),
            raise_on_status=False,
            respect_retry_after_header=True,
        )

    def resolve_dest(self, dest: str | Path) -> Path:
        """``cache_dir/dest`` after checking that it stays inside the cache: ``dest`` is relative, has no
        ``..``/``.`` component, does not start with ``.quarantine``, and no existing component (nor the
        file's ``.part``/``.meta.json``) is a symbolic link. Raises :class:`DownloadError` otherwise."""
        rel = Path(dest)
        parts = rel.parts
        if (
            not parts
            or rel.is_absolute()
            or any(p in ("..", ".", "") or "\\" in p for p in parts)
            or parts[0] == ".quarantine"
            or rel.name.endswith((".part", ".meta.json", ".part.json", ".tmp"))
        ):
            raise DownloadError(
                f"{dest}: not a plain relative path inside the raw cache {self.cache_dir} (no '..', no "
                "absolute path, no cache bookkeeping name); refusing to write there"
            )
        path = self.cache_dir.joinpath(*parts)
        self._no_links(path, [path.with_name(path.name + s) for s in (".part", ".part.json", ".meta.json")])
        return path

    def _no_links(self, path: Path, extra: Sequence[Path] = ()) -> None:
        """Raise :class:`DownloadError` if a component of ``path`` below the cache, or one of ``extra``,
        is a symbolic link (writing through it would leave the cache)."""
        cur = self.cache_dir
        for p in path.relative_to(self.cache_dir).parts:
            cur = cur / p
            if cur.is_symlink():
                raise DownloadError(
                    f"{cur}: is a symbolic link inside the raw cache; refusing to read or write through it "
                    "(remove the link)"
                )
        for e in extra:
            if e.is_symlink():
                raise DownloadError(
                    f"{e}: is a symbolic link inside the raw cache; refusing (remove the link)"
                )

    def _quarantine(self, path: Path, why: str) -> Path:
        q = self.cache_dir / ".quarantine" / f"{path.relative_to(self.cache_dir)}.{int(time.time())}"
        self._no_links(q.parent)
        q.parent.mkdir(parents=True, exist_ok=True)
        self._no_links(q, [q.with_name(q.name + s) for s in (".meta.json", ".why.txt")])
        os.replace(path, q)
        meta = path.with_name(path.name + ".meta.json")
        if meta.exists():
            os.replace(meta, q.with_name(q.name + ".meta.json"))
        _write_small(q.with_name(q.name + ".why.txt"), why + "\n")
        return q

    def verify_cached(self, path: Path, url: str, sha256: str | None = None) -> tuple[bool, str]:
        """Does the cached ``path`` still match its sidecar (and ``sha256``)? Returns ``(ok, digest or why)``."""
        meta = _read_meta(path)
        digest = sha256_file(path)
        if meta is None:
            return False, f"{path} has no readable .meta.json sidecar (interrupted or foreign file)"
        if meta.get("sha256") != digest:
            return False, f"{path} has sha256 {digest} but its .meta.json records {meta.get('sha256')}"
        if sha256 and digest != sha256:
            return False, f"{path} has sha256 {digest}, expected {sha256}"
        return True, digest

    def fetch(
        self,
        url: str,
        dest: str | Path,
        *,
        sha256: str | None = None,
        expect: Expect = "any",
        headers: dict[str, str] | None = None,
        max_bytes: int | None = None,
    ) -> DownloadResult:
        """Download ``url`` to ``cache_dir/dest`` (see module docstring), refusing a body larger than
        ``max_bytes``. Raises :class:`DownloadError`, its message scrubbed of secrets."""
        try:
            return self._fetch(url, dest, sha256, expect, headers, max_bytes)
        except DownloadError as e:
            raise DownloadError(scrub(str(e), url)) from None

    def _fetch(
        self,
        url: str,
        dest: str | Path,
        sha256: str | None,
        expect: Expect,
        headers: dict[str, str] | None,
        max_bytes: int | None,
    ) -> DownloadResult:
        path = self.resolve_dest(dest)
        path.parent.mkdir(parents=True, exist_ok=True)
        self._no_links(path)
        if path.exists():
            ok, digest_or_why = self.verify_cached(path, url, sha256)
            if ok:
                return DownloadResult(url, path, path.stat().st_size, digest_or_why, True, False, 0)
            q = self._quarantine(path, digest_or_why)
            log.warning("%s; moved to %s, downloading again", digest_or_why, q)

        host = urlsplit(url).netloc
        if host in self._unreachable:
            raise DownloadError(f"{redact(url)}: {self._unreachable[host]}")
        part = path.with_name(path.name + ".part")
        resumed = False
        retry = self._retry_policy()
        t0 = time.monotonic()
        self._deadline = t0 + self.deadline_s
        attempt = 0
        verified = True
        while True:
            attempt += 1
            try:
                r_resumed, verified = self._stream(url, part, headers or {}, expect, max_bytes)
                resumed |= r_resumed
                break
            except DownloadError:
                raise
            except _Retryable as e:
                try:
                    retry = retry.increment("GET", url, response=e.response, error=e.error)  # type: ignore[arg-type]
                except MaxRetryError:
                    if isinstance(e.error, ConnectTimeoutError):
                        why = (
                            f"cannot reach {host} after {attempt} attempts in {time.monotonic() - t0:.1f} s "
                            f"({e}); are you offline? `--source sample` works without network"
                        )
                        self._unreachable[host] = why
                        raise DownloadError(f"{redact(url)}: {why}") from None
                    raise DownloadError(f"{redact(url)}: gave up after {attempt} attempts: {e}") from None
                wait = e.retry_after if e.retry_after is not None else retry.get_backoff_time()
                if time.monotonic() - t0 + wait > self.deadline_s:
                    raise DownloadError(
                        f"{redact(url)}: gave up after {attempt} attempts: the total deadline of "
                        f"{self.deadline_s:g} s would pass before the next one ({e})"
                    ) from None
                self._sleep(wait)

        try:
            _validate_body(part, url, expect, self.max_ratio)
            digest = sha256_file(part)
            if sha256 and digest != sha256:
                raise DownloadError(f"{redact(url)}: sha256 {digest} does not match expected {sha256}")
        except DownloadError:
            _drop_part(part)
            raise
        size = part.stat().st_size
        meta = {
            "url": redact(url),
            "bytes": size,
            "sha256": digest,
            "fetched_at": datetime.now(UTC).isoformat(),
            "resumed": resumed,
            "attempts": attempt,
            "length_verified": verified,
        }
        # sidecar first: a file in place always has the sidecar that vouches for it
        _write_small(path.with_name(path.name + ".meta.json"), json.dumps(meta, indent=2))
        os.replace(part, path)
        _part_meta(part).unlink(missing_ok=True)
        path.chmod(0o444)
        return DownloadResult(url, path, size, digest, False, resumed, attempt)

    def _left(self, url: str, have: int = 0) -> float:
        """Seconds left before this fetch's hard deadline; :class:`DownloadError` when none are."""
        deadline = self._deadline if self._deadline is not None else time.monotonic() + self.deadline_s
        left = deadline - time.monotonic()
        if left <= 0:
            raise DownloadError(
                f"{redact(url)}: stopped at the hard deadline of {self.deadline_s:g} s for one file "
                f"({have} bytes received; a server sending too slowly?)"
            )
        return left

    def _get(self, url: str, headers: dict[str, str]) -> requests.Response:
        self.requests += 1
        read_s = max(0.05, min(self.timeout_s, self._left(url)))
        try:
            r = self.session.get(
                url, stream=True, timeout=(min(self.connect_timeout_s, read_s), read_s), headers=headers
            )
        except requests.exceptions.ConnectTimeout as e:
            raise _Retryable(f"connect timeout ({e})", error=ConnectTimeoutError(str(e))) from e
        except requests.ConnectionError as e:
            reason = getattr(e.args[0], "reason", None) if e.args else None
            if isinstance(reason, (ConnectTimeoutError, NewConnectionError)) or isinstance(
                e, requests.exceptions.ProxyError
            ):
                raise _Retryable(
                    f"connection failed ({reason or e})", error=ConnectTimeoutError(str(e))
                ) from e
            raise _Retryable(f"connection error ({e})", error=ProtocolError(str(e))) from e
        except requests.Timeout as e:
            raise _Retryable(f"read timeout ({e})", error=ReadTimeoutError(None, url, str(e))) from e
        except requests.RequestException as e:  # a redirect loop, a redirect to file:// or a bad URL
            raise DownloadError(f"{redact(url)}: {type(e).__name__}: {redact(str(e))}") from None
        if r.status_code in (429, 500, 502, 503, 504):
            body = _excerpt(r)
            err = _Retryable(f"HTTP {r.status_code} {r.reason}: {body}", response=r.raw)
            ra = r.headers.get("Retry-After")
            err.retry_after = float(ra) if ra and ra.strip().isdigit() else None
            r.close()
            raise err
        return r

    def _stream(
        self, url: str, part: Path, headers: dict[str, str], expect: Expect, max_bytes: int | None = None
    ) -> tuple[bool, bool]:
        """Stream one attempt into ``part``. Returns ``(resumed, length_verified)``; raises
        :class:`_Retryable` on a failure worth retrying (incl. a short body or a part of another upstream
        version) and :class:`DownloadError` on one that is not (over the size cap or the deadline)."""
        have = part.stat().st_size if part.exists() else 0
        stored = _read_part_validator(part) if have else None
        if have and stored is None:  # no validator: nothing could tell a changed upstream apart
            _drop_part(part)
            have = 0
        req_headers = dict(headers)
        if have:
            req_headers["Range"] = f"bytes={have}-"
            if stored:
                req_headers["If-Range"] = stored  # a changed file comes back whole (200), not spliced
        with self._get(url, req_headers) as r:
            got_validator = _validator(r.headers)
            if r.status_code == 416 and have:
                # Range not satisfiable: the part is complete if the server's total says so, else stale
                total = (r.headers.get("Content-Range") or "").rpartition("/")[2]
                same = got_validator is None or stored is None or got_validator == stored
                if total.isdigit() and int(total) == have and same:
                    return False, True
                _drop_part(part)
                raise _Retryable("range not satisfiable; restarting from zero", error=ProtocolError("416"))
            if r.status_code >= 400:
                body = _excerpt(r)
                raise DownloadError(f"{redact(url)}: HTTP {r.status_code} {r.reason}: {body}")
            resuming = False
            total: int | None = None
            if r.status_code == 206:
                cr = _content_range(r.headers.get("Content-Range"))
                if cr is None:
                    _drop_part(part)
                    raise _Retryable(
                        "206 without a valid Content-Range; restarting", error=ProtocolError("206")
                    )
                start, _, total = cr
                if start != have:
                    # the server sent another slice than asked for: never splice it onto the part
                    _drop_part(part)
                    raise _Retryable(
                        f"206 starts at byte {start}, not at the requested {have}; restarting from zero",
                        error=ProtocolError("bad 206 offset"),
                    )
                if got_validator != stored:
                    # another upstream version than the part holds (or one that cannot be told apart)
                    _drop_part(part)
                    raise _Retryable(
                        f"the upstream file changed since the part was started (validator {stored!r}, now "
                        f"{got_validator!r}); restarting from zero",
                        error=ProtocolError("upstream changed"),
                    )
                resuming = have > 0
            elif r.headers.get("Content-Length") is not None:
                total = _length(r.headers["Content-Length"], url)
            if max_bytes is not None and total is not None and total > max_bytes:
                _drop_part(part)
                raise DownloadError(
                    f"{redact(url)}: the file has {total} bytes, over the size cap of {max_bytes} bytes "
                    "left for its dataset (raise it with the max_bytes parameter)"
                )
            chunked = "chunked" in r.headers.get("Transfer-Encoding", "").lower()
            if not resuming:
                _drop_part(part)
                _write_small(_part_meta(part), json.dumps({"url": redact(url), "validator": got_validator}))
            mode = "ab" if resuming else "wb"
            got = 0
            start_size = have if resuming else 0
            with (
                open(part, mode) as f,
                tqdm(
                    total=total,
                    initial=start_size,
                    unit="B",
                    unit_scale=True,
                    desc=part.name.removesuffix(".part"),
                    disable=not self.progress if self.progress is not None else None,
                    leave=False,
                ) as bar,
            ):
                # raw bytes as sent (no transparent Content-Encoding decoding): the cache keeps upstream
                # bytes. read1 returns what has arrived, so the deadline is checked however slow the server
                try:
                    while True:
                        self._left(url, start_size + got)
                        block = r.raw.read1(self.chunk_bytes, decode_content=False)
                        if not block:
                            break
                        f.write(block)
                        got += len(block)
                        bar.update(len(block))
                        if max_bytes is not None and start_size + got > max_bytes:
                            raise DownloadError(
                                f"{redact(url)}: more than {max_bytes} bytes received, over the size cap "
                                "left for its dataset (raise it with the max_bytes parameter)"
                            )
                except DownloadError:
                    f.close()
                    _drop_part(part)
                    raise
                except (Urllib3HTTPError, requests.exceptions.ChunkedEncodingError) as e:
                    err = (
                        ReadTimeoutError(None, url, str(e))
                        if "timed out" in str(e)
                        else ProtocolError(str(e))
                    )
                    raise _Retryable(f"body cut short after {start_size + got} bytes ({e})", error=err) from e
        size = part.stat().st_size
        if total is not None:
            if size < total:
                raise _Retryable(f"short body: {size} of {total} bytes", error=ProtocolError("short body"))
            if size > total:
                _drop_part(part)
                raise DownloadError(f"{redact(url)}: got {size} bytes, more than the announced {total}")
            if expect == "csv" and size and not _ends_with_newline(part):
                self._confirm_announced_length(url, part, headers, size)
            return resuming, True
        if chunked:
            return resuming, True  # chunked framing has its own end marker (urllib3 raises if cut)
        return resuming, self._confirm_close_delimited(url, part, headers, expect)

    def _confirm_announced_length(self, url: str, part: Path, headers: dict[str, str], size: int) -> None:
        """A CSV of the announced length ends mid-line: ask for the bytes after it. Only a ``416`` confirms
        the length; anything else — a ``206`` with more bytes, or a ``200`` from a server that ignores
        ``Range`` (whose body is read up to one byte past ``size``: a lying length repeated) — leaves a
        last line that cannot be shown complete, and the file is refused (:class:`DownloadError`, nothing
        cached)."""
        with self._get(url, {**headers, "Range": f"bytes={size}-"}) as r:
            status = r.status_code
            cr = _content_range(r.headers.get("Content-Range")) if status == 206 else None
            body = b""
            if status == 200:
                try:
                    body = r.raw.read(size + 1, decode_content=False) or b""
                except (Urllib3HTTPError, requests.exceptions.RequestException):
                    body = b""
        if status == 416:
            return
        _drop_part(part)
        if cr:
            more = f"the file has {cr[2] if cr[2] else 'more'} bytes"
        elif len(body) > size:
            more = "the body goes on past it"
        else:
            more = "the server ignores Range, so the last line cannot be shown complete"
        raise DownloadError(
            f"{redact(url)}: the server announced {size} bytes but {more} and the body ends mid-line: "
            "refusing a file cut short by a wrong Content-Length"
        )

    def _confirm_close_delimited(self, url: str, part: Path, headers: dict[str, str], expect: Expect) -> bool:
        """A body without a length ended when the server closed: ask for the bytes after it. True when
        the length was confirmed; raises when the body was cut short (:class:`_Retryable`, to resume) or
        cannot be confirmed and ends mid-line (:class:`DownloadError`)."""
        size = part.stat().st_size
        with self._get(url, {**headers, "Range": f"bytes={size}-"}) as r:
            if r.status_code == 416:
                return True
            cr = _content_range(r.headers.get("Content-Range")) if r.status_code == 206 else None
            length = r.headers.get("Content-Length") if r.status_code == 200 else None
        if cr is not None:
            raise _Retryable(
                f"close-delimited body cut short at {size} bytes (the server has more: "
                f"{r.headers.get('Content-Range')})",
                error=ProtocolError("short close-delimited body"),
            )
        if length is not None and _length(length, url) != size:
            raise _Retryable(
                f"close-delimited body of {size} bytes, the file has {length}",
                error=ProtocolError("short close-delimited body"),
            )
        if length is not None:
            return True
        if expect in ("csv", "json"):
            with open(part, "rb") as f:
                f.seek(max(0, size - 1))
                last = f.read(1)
            if expect == "csv" and last != b"\n":
                _drop_part(part)
                raise DownloadError(
                    f"{redact(url)}: the server sent no length and the body ends mid-line after {size} "
                    "bytes: refusing a probably truncated file"
                )
        return False
