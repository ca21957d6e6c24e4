"""The embedded model behind a real OpenAI-compatible HTTP server, for testing clients.

:func:`embedded_model_server` starts llama-cpp-python's own server (``python -m
llama_cpp.server``, the ``server`` extra) serving the embedded SmolLM2-135M on a free local port
and stops it afterwards: the stand-in for a user's endpoint (vLLM, llama.cpp, a hosted API) in
lang_pz's tests and benchmarks, with nothing scripted about its replies::

    from lang_pz.test.llama_server import embedded_model_server

    with embedded_model_server() as url:      # "http://127.0.0.1:<port>/v1"
        backend = lang_pz.backends.make_backend("openai:SmolLM2-135M", base_url=url)
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator

from lang_pz.error import DependencyNotInstalled


def free_port() -> int:
    """A TCP port nothing listens on now (127.0.0.1)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def embedded_model_server(n_ctx: int = 2048, start_timeout_s: float = 120.0) -> Iterator[str]:
    """Serve the embedded model over HTTP while the block runs; yields the ``.../v1`` base URL.

    Args:
        n_ctx: the server's context window, in tokens (2,048: what a small served model offers).
        start_timeout_s: seconds to wait for the server to answer ``GET /v1/models``.

    Raises:
        DependencyNotInstalled: llama-cpp-python's ``server`` extra (uvicorn) is missing.
        RuntimeError: the server exited or did not answer within ``start_timeout_s``.
    """
    if importlib.util.find_spec("uvicorn") is None or importlib.util.find_spec("llama_cpp") is None:
        raise DependencyNotInstalled("needs llama-cpp-python[server] (the dev extra): python -m llama_cpp.server")
    from lang_pz.backends.llama_cpp import default_model_path

    port = free_port()
    cmd = [sys.executable, "-m", "llama_cpp.server", "--model", str(default_model_path())]
    cmd += ["--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(n_ctx)]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + start_timeout_s
        while True:
            try:
                with urllib.request.urlopen(f"{url}/models", timeout=2) as r:
                    json.load(r)
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"llama_cpp.server did not start within {start_timeout_s:.0f} s") from None
                time.sleep(0.5)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:  # a server busy on a loaded machine: it is ours, end it
            proc.kill()
            proc.wait(timeout=30)
