"""Serve a written view folder on localhost (``lang-pz view --serve``).

The page needs no server (it opens from disk); serving is for a remote machine reached through
an SSH tunnel, or a browser that blocks ``file://`` scripts. Only the view folder is served, on
``127.0.0.1`` unless another host is asked for, and only what is safe to serve from a folder that
may have come from someone else:

- a GET or HEAD of a **regular file inside the folder**; a link (at the file or at any folder on
  the way), a folder (no listings; ``/`` is ``index.html``), a named pipe or device, a name that
  starts with ``.`` (``..`` included) or a path that is not there is ``404``. Each path is opened
  one component at a time from the folder's descriptor with ``O_NOFOLLOW``, so no path resolves
  outside it, even one swapped while it is opened;
- a request whose ``Host`` names **this machine**: ``localhost``, an IP address, or a name given
  in ``allowed_hosts`` (and the bound host when it is a name). Anything else (a missing Host
  included) is ``400``: a web page of another site that makes its name resolve to 127.0.0.1 (DNS
  rebinding) cannot read the page. The port is not checked: an SSH tunnel
  (``ssh -L 9000:localhost:8000``) makes the browser send its own local port.
"""

from __future__ import annotations

import ipaddress
import mimetypes
import os
import shutil
import stat
import urllib.parse
from collections.abc import Iterable
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW


def host_name(header: str) -> str:
    """The host of a ``Host`` header, lower case, without port or trailing dot (``[::1]:80`` -> ``::1``)."""
    header = header.strip().lower()
    if header.startswith("["):
        name = header[1 : header.find("]")] if "]" in header else ""
    else:
        name = header.rsplit(":", 1)[0] if header.count(":") == 1 else header
    return name.rstrip(".")


def _is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


class ViewHandler(BaseHTTPRequestHandler):
    """Answers GET and HEAD with the regular files of ``folder`` (see the module docstring)."""

    folder: str = "."
    allowed_hosts: frozenset[str] = frozenset({"localhost"})
    server_version = "lang_pz-view"

    def log_message(self, format: str, *args: object) -> None:
        """Silent: the command prints the address once."""

    def do_GET(self) -> None:
        """Send the file, or 400 / 404."""
        self._answer(body=True)

    def do_HEAD(self) -> None:
        """Send the file's headers, or 400 / 404."""
        self._answer(body=False)

    def _answer(self, body: bool) -> None:
        name = host_name(self.headers.get("Host", ""))
        if not (name in self.allowed_hosts or _is_ip(name)):
            self.send_error(HTTPStatus.BAD_REQUEST, "this server answers only to localhost or an IP address as Host")
            return
        path = urllib.parse.unquote(urllib.parse.urlsplit(self.path).path)
        parts = [p for p in (path + "index.html" if path.endswith("/") else path).split("/") if p]
        fd = self._open(parts)
        if fd is None:
            self.send_error(HTTPStatus.NOT_FOUND)
            return
        with os.fdopen(fd, "rb") as f:
            self.send_response(HTTPStatus.OK)
            self.send_header("Content-Type", mimetypes.guess_type(parts[-1])[0] or "application/octet-stream")
            self.send_header("Content-Length", str(os.fstat(f.fileno()).st_size))
            self.send_header("X-Content-Type-Options", "nosniff")
            self.send_header("Cache-Control", "no-cache")
            self.end_headers()
            if body:
                shutil.copyfileobj(f, self.wfile)

    def _open(self, parts: list[str]) -> int | None:
        """A read descriptor of the regular file at ``parts`` under the folder, or ``None``."""
        if not parts or any(p.startswith(".") or "\\" in p or "\0" in p for p in parts):
            return None
        try:
            at = os.open(self.folder, os.O_RDONLY | os.O_DIRECTORY)
        except OSError:
            return None
        try:
            for part in parts[:-1]:
                inner = os.open(part, _DIR, dir_fd=at)
                os.close(at)
                at = inner
            if not stat.S_ISREG(os.stat(parts[-1], dir_fd=at, follow_symlinks=False).st_mode):
                return None  # looked at before opening: opening a named pipe or a device may wait or act
            fd = os.open(parts[-1], os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=at)
        except OSError:
            return None
        finally:
            os.close(at)
        if not stat.S_ISREG(os.fstat(fd).st_mode):  # swapped since it was looked at
            os.close(fd)
            return None
        return fd


def make_server(
    folder: str | Path, host: str = "127.0.0.1", port: int = 8000, allowed_hosts: Iterable[str] = ()
) -> ThreadingHTTPServer:
    """An HTTP server of ``folder``'s regular files (``port=0``: a free port; read it from
    ``server.server_address``). Call ``serve_forever()`` to run it. What it serves, and to which
    ``Host``, is in the module docstring; ``allowed_hosts`` adds names this machine is reached by
    (e.g. ``["myhost.lan"]`` with ``host="0.0.0.0"``).

    Raises:
        OSError: the port is taken or the host cannot be bound.
    """
    names = {"localhost", *(h.lower().rstrip(".") for h in allowed_hosts)}
    if host and not _is_ip(host):
        names.add(host.lower())
    handler = type(
        "BoundViewHandler", (ViewHandler,), {"folder": os.path.abspath(folder), "allowed_hosts": frozenset(names)}
    )
    return ThreadingHTTPServer((host, port), handler)
