"""One download client for every upstream file varcap fetches.

Behaviour, in order, for :meth:`Downloader.fetch`:

1. If the destination already exists in the immutable cache it is returned as is (``cached=True``);
   a given ``sha256`` is verified first.
2. The body streams into ``<dest>.part``. A leftover ``.part`` from an interrupted run is resumed with an
   HTTP ``Range`` request; a server that ignores ``Range`` (status 200) restarts the file from zero.
3. Connection errors and 429/5xx answers are retried with exponential backoff (urllib3 ``Retry`` for
   the request, an outer loop with resume for a body cut short).
4. The finished file is validated: an HTML body where data was expected, a truncated or corrupt gzip, a
   size that differs from ``Content-Length`` or a sha256 mismatch each raise :class:`DownloadError`
   naming the URL (API keys redacted), and the partial file is removed so no bad bytes survive.
5. The file is atomically renamed into place, made read-only, and a ``.meta.json`` sidecar records
   url, size, sha256 and time.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import re
import time
import zlib
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

import requests
from requests.adapters import HTTPAdapter
from tqdm.auto import tqdm
from urllib3.exceptions import HTTPError as Urllib3HTTPError
from urllib3.util.retry import Retry

Expect = Literal["any", "csv", "gzip", "json", "parquet"]

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


class Downloader:
    """Streaming, resumable, retrying HTTP downloader into an immutable cache directory."""

    def __init__(
        self,
        cache_dir: str | Path,
        *,
        retries: int = 5,
        backoff_s: float = 0.5,
        timeout_s: float = 60.0,
        chunk_bytes: int = 1 << 20,
        progress: bool | None = None,
        session: requests.Session | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.cache_dir = Path(cache_dir)
        self.retries = retries
        self.backoff_s = backoff_s
        self.timeout_s = timeout_s
        self.chunk_bytes = chunk_bytes
        self.progress = progress
        self._sleep = sleep
        self.session = session or self._make_session()

    def _make_session(self) -> requests.Session:
        retry = Retry(
            total=self.retries,
            connect=self.retries,
            read=self.retries,
            status=self.retries,
            backoff_factor=self.backoff_s,
            status_forcelist=(429, 500, 502, 503, 504),
            allowed_methods=frozenset({"GET", "HEAD"}),
            raise_on_status=False,
            respect_retry_after_header=True,
        )
        s = requests.Session()
        adapter = HTTPAdapter(max_retries=retry)
        s.mount("http://", adapter)
        s.mount("https://", adapter)
        s.headers["User-Agent"] = "varcap/0.1 (+https://github.com/varcap)"
        return s

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
            digest = sha256_file(path)
            if sha256 and digest != sha256:
                raise DownloadError(
                    f"{redact(url)}: cached file {path} has sha256 {digest}, expected {sha256}; "
                    "the cache is immutable, delete the file by hand if the upstream changed"
                )
            return DownloadResult(url, path, path.stat().st_size, digest, True, False, 0)

        part = path.with_name(path.name + ".part")
        resumed = False
        last_err: Exception | None = None
        for attempt in range(1, self.retries + 2):
            try:
                resumed |= self._stream(url, part, headers or {})
                break
            except DownloadError:
                raise
            except (
                requests.ConnectionError,
                requests.Timeout,
                requests.exceptions.ChunkedEncodingError,
                Urllib3HTTPError,  # raw streaming raises urllib3's ProtocolError / ReadTimeoutError
            ) as e:
                last_err = e
                if attempt > self.retries:
                    raise DownloadError(f"{redact(url)}: gave up after {attempt} attempts: {e}") from e
                self._sleep(self.backoff_s * 2 ** (attempt - 1))
        else:  # pragma: no cover - loop always breaks or raises
            raise DownloadError(f"{redact(url)}: failed: {last_err}")

        try:
            _validate_body(part, url, expect)
            digest = sha256_file(part)
            if sha256 and digest != sha256:
                raise DownloadError(f"{redact(url)}: sha256 {digest} does not match expected {sha256}")
        except DownloadError:
            part.unlink(missing_ok=True)
            raise
        os.replace(part, path)
        path.chmod(0o444)
        size = path.stat().st_size
        meta = {
            "url": redact(url),
            "bytes": size,
            "sha256": digest,
            "fetched_at": datetime.now(UTC).isoformat(),
            "resumed": resumed,
            "attempts": attempt,
        }
        path.with_name(path.name + ".meta.json").write_text(json.dumps(meta, indent=2))
        return DownloadResult(url, path, size, digest, False, resumed, attempt)

    def _stream(self, url: str, part: Path, headers: dict[str, str]) -> bool:
        """Stream one attempt into ``part``; returns True when it resumed. Raises on a short body."""
        have = part.stat().st_size if part.exists() else 0
        req_headers = dict(headers)
        if have:
            req_headers["Range"] = f"bytes={have}-"
        with self.session.get(url, stream=True, timeout=self.timeout_s, headers=req_headers) as r:
            if r.status_code == 416 and have:
                # Range not satisfiable: the part may already be complete, or stale. Restart clean.
                part.unlink()
                raise requests.ConnectionError("range not satisfiable; restarting from zero")
            if r.status_code >= 400:
                body = r.text[:200].strip().replace("\n", " ")
                raise DownloadError(f"{redact(url)}: HTTP {r.status_code} {r.reason}: {body}")
            resuming = have > 0 and r.status_code == 206
            mode = "ab" if resuming else "wb"
            expected_len = r.headers.get("Content-Length")
            total = int(expected_len) + (have if resuming else 0) if expected_len else None
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
                for block in r.raw.stream(self.chunk_bytes, decode_content=False):
                    f.write(block)
                    got += len(block)
                    bar.update(len(block))
            if expected_len is not None and got < int(expected_len):
                raise requests.ConnectionError(f"short body: {got} of {expected_len} bytes")
            return resuming
