"""A forwarding HTTP proxy in front of a real OpenAI-compatible server that can *go away*: after
a given number of forwarded ``POST`` requests (generations) it stops listening, so every later
connection is refused, as when a server is stopped or crashes mid-run; :meth:`SwitchProxy.up`
brings it back on the same port (the run's ``config.json`` names that port, so ``--resume``
reaches it again).

Used by ``tests/backends/test_server_presets.py`` and ``benchmarks/server_faults.py`` to make one
role's endpoint fail at a deterministic point (give that role its own backend spec whose
``base_url`` is the proxy). Every connection is closed after one exchange (HTTP/1.0), so no pooled
keep-alive connection outlives the shutdown.
"""

from __future__ import annotations

import http.client
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

_HOP = {"connection", "keep-alive", "transfer-encoding", "host", "proxy-connection", "upgrade", "content-length"}


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class SwitchProxy:
    """Forwards every request to ``upstream`` (``http://host:port``, no path) until it goes down.

    Args:
        upstream: the real server's root URL, e.g. ``http://127.0.0.1:8000``.
        fail_after_posts: go down when a ``POST`` arrives after this many were forwarded (that
            ``POST``'s connection is dropped unanswered); ``None``: never by itself.
        port: the port to listen on (default: a free one).

    Attributes:
        posts: ``POST`` requests forwarded; ``gets``: ``GET`` requests forwarded.
        bodies: ``(path, body)`` of every forwarded ``POST``.
        went_down_at: ``time.monotonic()`` when it stopped listening, ``None`` while up.
    """

    def __init__(self, upstream: str, fail_after_posts: int | None = None, port: int | None = None) -> None:
        parts = urlsplit(upstream)
        self.upstream = (parts.hostname or "127.0.0.1", parts.port or 80)
        self.port = port or free_port()
        self.posts = self.gets = 0
        self.bodies: list[tuple[str, bytes]] = []
        self.went_down_at: float | None = None
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self.up(fail_after_posts)

    @property
    def url(self) -> str:
        """The proxy's ``.../v1`` base URL."""
        return f"http://127.0.0.1:{self.port}/v1"

    def up(self, fail_after_posts: int | None = None) -> None:
        """Listen (again) on :attr:`port`; ``fail_after_posts`` counts from now (``None``: never)."""
        if self._server is not None:
            return
        with self._lock:
            self.fail_after_posts = None if fail_after_posts is None else self.posts + fail_after_posts
            self.went_down_at = None
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"

            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                with proxy._lock:
                    proxy.gets += 1
                self._forward(b"")

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with proxy._lock:
                    if proxy.fail_after_posts is not None and proxy.posts >= proxy.fail_after_posts:
                        drop = True
                    else:
                        drop = False
                        proxy.posts += 1
                        proxy.bodies.append((self.path, body))
                if drop:  # the server goes away: this exchange unanswered, the port closed
                    self.close_connection = True
                    threading.Thread(target=proxy.down, daemon=True).start()
                    return
                self._forward(body)

            def _forward(self, body: bytes) -> None:
                conn = http.client.HTTPConnection(*proxy.upstream, timeout=3600)
                try:
                    headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP}
                    conn.request(self.command, self.path, body=body or None, headers=headers)
                    r = conn.getresponse()
                    data = r.read()
                except OSError:
                    self.close_connection = True
                    return
                finally:
                    conn.close()
                self.send_response(r.status, r.reason)
                for k, v in r.getheaders():
                    if k.lower() not in _HOP:
                        self.send_header(k, v)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        deadline = time.monotonic() + 10
        while True:  # the port may linger a moment after down()
            try:
                server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        server.daemon_threads = True
        self._server = server
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def down(self) -> None:
        """Stop listening: from now on connections to :attr:`port` are refused."""
        with self._lock:
            server, self._server = self._server, None
            if server is not None and self.went_down_at is None:
                self.went_down_at = time.monotonic()
        if server is not None:
            server.shutdown()
            server.server_close()

    def close(self) -> None:
        self.down()
