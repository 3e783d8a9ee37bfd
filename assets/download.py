"""One download client for every upstream file varcap fetches.

Behaviour, in order, for :meth:`Downloader.fetch`:

1. If the destination already exists in the immutable cache, its sha256 is re-computed and compared with
   its ``.meta.json`` sidecar (and with a given ``sha256``). A match is returned as is (``cached=True``);
   a mismatch or a missing sidecar moves the file to ``<cache>/.quarantine/`` (nothing is deleted) and
   downloads it again.
2. The body streams into ``<dest>.part``. A leftover ``.part`` from an interrupted run is resumed with an
   HTTP ``Range`` request; a ``206`` must start exactly at the requested offset (``Content-Range``),
   otherwise the part is discarded and the file restarts; a server that ignores ``Range`` (status 200)
   restarts the file from zero.
3. The expected length comes from ``Content-Length`` (200) or the total of ``Content-Range`` (206). A
   close-delimited body (no length, not chunked) is confirmed by asking for the bytes after its end: a
   ``416`` confirms it, a ``206`` shows it was cut short (the download resumes). A body that cannot be
   confirmed and ends mid-line where CSV/JSON was expected is refused.
4. One retry layer (a urllib3 ``Retry`` driving this loop; the HTTP adapter itself never retries):
   connection errors, timeouts, short bodies and 429/5xx answers are retried with exponential backoff
   (``Retry-After`` honoured) until ``retries`` is spent or the total ``deadline_s`` has passed. A host
   that cannot be reached (DNS failure, refused, connect timeout) is retried only ``connect_retries``
   times and is then reported as unreachable (offline?) within seconds; later files on that host fail
   at once.
5. The finished file is validated: an HTML body where data was expected, a truncated or corrupt gzip, a
   size that differs from the expected length or a sha256 mismatch each raise :class:`DownloadError`
   naming the URL (API keys redacted), and the partial file is removed so no bad bytes survive.
6. The ``.meta.json`` sidecar (url, size, sha256, time, whether the length was verified) is written,
   then the file is atomically renamed into place and made read-only.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import logging
import os
import re
import time
import zlib
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

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

Expect = Literal["any", "csv", "gzip", "json", "parquet"]

log = logging.getLogger(__name__)

_SECRET_PARAMS = re.compile(r"(api_key|apikey|token|key|sig|signature)=([^&]+)", re.IGNORECASE)


def redact(url: str) -> str:
    """Return ``url`` with secret query parameters (api_key, token, sig…) replaced by ``***``."""
    return _SECRET_PARAMS.sub(lambda m: f"{m.group(1)}=***", url)


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


def _looks_like_html(head: bytes) -> bool:
    s = head.lstrip()[:256].lower()
    return s.startswith(b"<!doctype html") or s.startswith(b"<html") or b"<html" in s[:64]


def _validate_body(path: Path, url: str, expect: Expect) -> None:
    with open(path, "rb") as f:
        head = f.read(512)
    if expect in ("csv", "json", "gzip", "parquet") and _looks_like_html(head):
        raise DownloadError(f"{redact(url)}: got an HTML page where {expect} data was expected")
    if expect == "gzip" or (expect in ("csv", "json") and head[:2] == b"\x1f\x8b"):
        if head[:2] != b"\x1f\x8b":
            raise DownloadError(f"{redact(url)}: not a gzip file (first bytes {head[:8]!r})")
        try:
            with gzip.open(path, "rb") as g:
                while g.read(1 << 20):
                    pass
        except (EOFError, OSError, zlib.error) as e:
            raise DownloadError(f"{redact(url)}: truncated or corrupt gzip ({e})") from e
    if expect == "parquet" and head[:4] != b"PAR1":
        raise DownloadError(f"{redact(url)}: not a parquet file (first bytes {head[:8]!r})")
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
        self.progress = progress
        self._sleep = sleep
        self.session = session or self._make_session()
        self._unreachable: dict[str, str] = {}  # host -> why, so later files fail at once
        self.requests = 0  # HTTP requests sent (for tests and metadata)

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

    def _quarantine(self, path: Path, why: str) -> Path:
        q = self.cache_dir / ".quarantine" / f"{path.relative_to(self.cache_dir)}.{int(time.time())}"
        q.parent.mkdir(parents=True, exist_ok=True)
        os.replace(path, q)
        meta = path.with_name(path.name + ".meta.json")
        if meta.exists():
            os.replace(meta, q.with_name(q.name + ".meta.json"))
        q.with_name(q.name + ".why.txt").write_text(why + "\n")
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
    ) -> DownloadResult:
        """Download ``url`` to ``cache_dir/dest`` (see module docstring). Raises :class:`DownloadError`."""
        path = self.cache_dir / dest
        path.parent.mkdir(parents=True, exist_ok=True)
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
        attempt = 0
        verified = True
        while True:
            attempt += 1
            try:
                r_resumed, verified = self._stream(url, part, headers or {}, expect)
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
            _validate_body(part, url, expect)
            digest = sha256_file(part)
            if sha256 and digest != sha256:
                raise DownloadError(f"{redact(url)}: sha256 {digest} does not match expected {sha256}")
        except DownloadError:
            part.unlink(missing_ok=True)
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
        side = path.with_name(path.name + ".meta.json")
        tmp = side.with_name(side.name + ".tmp")
        tmp.write_text(json.dumps(meta, indent=2))
        os.replace(tmp, side)
        os.replace(part, path)
        path.chmod(0o444)
        return DownloadResult(url, path, size, digest, False, resumed, attempt)

    def _get(self, url: str, headers: dict[str, str]) -> requests.Response:
        self.requests += 1
        try:
            r = self.session.get(
                url, stream=True, timeout=(self.connect_timeout_s, self.timeout_s), headers=headers
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
        if r.status_code in (429, 500, 502, 503, 504):
            body = r.text[:200].strip().replace("\n", " ")
            err = _Retryable(f"HTTP {r.status_code} {r.reason}: {body}", response=r.raw)
            ra = r.headers.get("Retry-After")
            err.retry_after = float(ra) if ra and ra.strip().isdigit() else None
            r.close()
            raise err
        return r

    def _stream(self, url: str, part: Path, headers: dict[str, str], expect: Expect) -> tuple[bool, bool]:
        """Stream one attempt into ``part``. Returns ``(resumed, length_verified)``; raises
        :class:`_Retryable` on a failure worth retrying (incl. a short body) and :class:`DownloadError`
        on one that is not."""
        have = part.stat().st_size if part.exists() else 0
        req_headers = dict(headers)
        if have:
            req_headers["Range"] = f"bytes={have}-"
        with self._get(url, req_headers) as r:
            if r.status_code == 416 and have:
                # Range not satisfiable: the part is complete if the server's total says so, else stale
                total = (r.headers.get("Content-Range") or "").rpartition("/")[2]
                if total.isdigit() and int(total) == have:
                    return False, True
                part.unlink()
                raise _Retryable("range not satisfiable; restarting from zero", error=ProtocolError("416"))
            if r.status_code >= 400:
                body = r.text[:200].strip().replace("\n", " ")
                raise DownloadError(f"{redact(url)}: HTTP {r.status_code} {r.reason}: {body}")
            resuming = False
            total: int | None = None
            if r.status_code == 206:
                cr = _content_range(r.headers.get("Content-Range"))
                if cr is None:
                    part.unlink(missing_ok=True)
                    raise _Retryable(
                        "206 without a valid Content-Range; restarting", error=ProtocolError("206")
                    )
                start, _, total = cr
                if start != have:
                    # the server sent another slice than asked for: never splice it onto the part
                    part.unlink(missing_ok=True)
                    raise _Retryable(
                        f"206 starts at byte {start}, not at the requested {have}; restarting from zero",
                        error=ProtocolError("bad 206 offset"),
                    )
                resuming = have > 0
            elif r.headers.get("Content-Length") is not None:
                total = int(r.headers["Content-Length"])
            chunked = "chunked" in r.headers.get("Transfer-Encoding", "").lower()
            mode = "ab" if resuming else "wb"
            got = 0
            with (
                open(part, mode) as f,
                tqdm(
                    total=total,
                    initial=have if resuming else 0,
                    unit="B",
                    unit_scale=True,
                    desc=part.name.removesuffix(".part"),
                    disable=not self.progress if self.progress is not None else None,
                    leave=False,
                ) as bar,
            ):
                # raw bytes as sent (no transparent Content-Encoding decoding): the cache keeps upstream bytes
                try:
                    for block in r.raw.stream(self.chunk_bytes, decode_content=False):
                        f.write(block)
                        got += len(block)
                        bar.update(len(block))
                except (Urllib3HTTPError, requests.exceptions.ChunkedEncodingError) as e:
                    err = (
                        ReadTimeoutError(None, url, str(e))
                        if "timed out" in str(e)
                        else ProtocolError(str(e))
                    )
                    raise _Retryable(f"body cut short after {have + got} bytes ({e})", error=err) from e
        size = part.stat().st_size
        if total is not None:
            if size < total:
                raise _Retryable(f"short body: {size} of {total} bytes", error=ProtocolError("short body"))
            if size > total:
                part.unlink(missing_ok=True)
                raise DownloadError(f"{redact(url)}: got {size} bytes, more than the announced {total}")
            return resuming, True
        if chunked:
            return resuming, True  # chunked framing has its own end marker (urllib3 raises if cut)
        return resuming, self._confirm_close_delimited(url, part, headers, expect)

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
        if length is not None and int(length) != size:
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
                part.unlink(missing_ok=True)
                raise DownloadError(
                    f"{redact(url)}: the server sent no length and the body ends mid-line after {size} "
                    "bytes: refusing a probably truncated file"
                )
        return False
