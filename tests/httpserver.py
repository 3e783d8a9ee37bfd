"""A tiny HTTP server on 127.0.0.1 for download tests: per-path bodies and scripted misbehaviour."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Route:
    body: bytes
    content_type: str = "application/octet-stream"
    fail_first: list[int] = field(default_factory=list)  # status codes answered before success
    cut_after: int | None = None  # first successful answer closes the connection after N bytes
    honor_range: bool = True
    no_length: bool = False  # close-delimited body: no Content-Length, the connection close ends it
    range_from_zero: bool = False  # answer a Range request with 206 but the body from byte 0
    stall_s: float = 0.0  # wait this long before answering (a stalled server)
    etag: str | None = None  # sent as ETag; If-Range is honoured against it unless ignore_if_range
    ignore_if_range: bool = False
    drip_s: float = 0.0  # send the body 16 bytes at a time, sleeping this long between pieces
    endless: bool = False  # a chunked body that never ends (the body is repeated forever)
    length_delta: int = 0  # announce len(body) + delta as Content-Length (negative: a short length)
    echo_query: bool = False  # error answers (fail_first) quote the request's query string
    redirect: str | None = None  # answer 302 with this Location (successful answers)
    hits: int = 0
    ranges: list[str] = field(default_factory=list)


class FixtureServer:
    def __init__(self) -> None:
        self.routes: dict[str, Route] = {}
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:  # quiet
                pass

            def do_GET(self) -> None:  # noqa: N802
                path = self.path.split("?")[0]
                route = server.routes.get(path)
                if route is None:
                    self._send(404, b"not found", "text/plain")
                    return
                route.hits += 1
                rng = self.headers.get("Range")
                route.ranges.append(rng or "")
                if route.stall_s:
                    time.sleep(route.stall_s)
                if route.fail_first:
                    query = self.path.partition("?")[2].encode() if route.echo_query else b""
                    self._send(route.fail_first.pop(0), b"server error for " + query, "text/plain")
                    return
                if route.redirect:
                    self._send(302, b"", "text/plain", {"Location": route.redirect})
                    return
                body, status, extra = route.body, 200, {}
                if route.etag:
                    extra["ETag"] = route.etag
                if route.endless or route.drip_s:
                    self._stream(route)
                    return
                if_range = self.headers.get("If-Range")
                changed = if_range is not None and if_range != route.etag and not route.ignore_if_range
                if rng and route.honor_range and not changed:
                    start = int(rng.split("=")[1].split("-")[0])
                    if start >= len(route.body):
                        self._send(416, b"", "text/plain", {"Content-Range": f"bytes */{len(route.body)}"})
                        return
                    start = 0 if route.range_from_zero else start
                    body = route.body[start:]
                    status = 206
                    extra["Content-Range"] = f"bytes {start}-{len(route.body) - 1}/{len(route.body)}"
                if route.cut_after is not None or route.no_length:
                    cut, route.cut_after = route.cut_after, None
                    cut = len(body) if cut is None else cut
                    self.send_response(status)
                    self.send_header("Content-Type", route.content_type)
                    if not route.no_length:
                        self.send_header("Content-Length", str(len(body)))
                    else:
                        self.send_header("Connection", "close")
                    for k, v in extra.items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(body[:cut])
                    self.wfile.flush()
                    self.close_connection = True
                    return
                if route.length_delta:
                    self.send_response(status)
                    self.send_header("Content-Type", route.content_type)
                    self.send_header("Content-Length", str(len(body) + route.length_delta))
                    self.send_header("Connection", "close")
                    for k, v in extra.items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(body)
                    self.close_connection = True
                    return
                self._send(status, body, route.content_type, extra)

            def _stream(self, route: Route) -> None:
                self.send_response(200)
                self.send_header("Content-Type", route.content_type)
                if route.endless:
                    self.send_header("Transfer-Encoding", "chunked")
                else:
                    self.send_header("Content-Length", str(len(route.body)))
                self.end_headers()
                self.close_connection = True
                try:
                    if route.endless:
                        while True:
                            self.wfile.write(b"%x\r\n%s\r\n" % (len(route.body), route.body))
                    for i in range(0, len(route.body), 16):
                        self.wfile.write(route.body[i : i + 16])
                        self.wfile.flush()
                        time.sleep(route.drip_s)
                except OSError:  # the client hung up
                    pass

            def _send(
                self, status: int, body: bytes, ctype: str, extra: dict[str, str] | None = None
            ) -> None:
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                for k, v in (extra or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def add(self, path: str, route: Route) -> str:
        self.routes[path] = route
        return self.base + path

    def __enter__(self) -> FixtureServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
