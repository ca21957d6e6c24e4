"""Serve a written view folder on localhost (``lang-pz view --serve``).

The page needs no server (it opens from disk); serving is for a remote machine reached through
an SSH tunnel, or a browser that blocks ``file://`` scripts. Only the view folder is served, on
``127.0.0.1`` unless another host is asked for.
"""

from __future__ import annotations

import functools
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        """Silent: the command prints the address once."""


def make_server(folder: str | Path, host: str = "127.0.0.1", port: int = 8000) -> ThreadingHTTPServer:
    """An HTTP server of ``folder``'s files (``port=0``: a free port; read it from
    ``server.server_address``). Call ``serve_forever()`` to run it.

    Raises:
        OSError: the port is taken or the host cannot be bound.
    """
    handler = functools.partial(_QuietHandler, directory=str(folder))
    return ThreadingHTTPServer((host, port), handler)
