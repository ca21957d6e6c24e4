"""Fixtures of the backend tests: a recording stub endpoint and the REAL llama.cpp server.

- ``stub`` / ``make_stub``: :class:`RecordingStub`, a local OpenAI-compatible STUB (stdlib
  ``http.server`` on 127.0.0.1) that records every request and answers with scripted replies; it
  can present itself as a given server (its ``GET /v1/models`` body, ``/props``) and count tokens
  (one token a word) on the routes llama.cpp's servers and vLLM count them on. It checks what
  is sent and how replies are read, not that a real server honours the fields.
- ``llama_server``: llama-cpp-python's own OpenAI-compatible server serving the embedded model
  (n_ctx 2048) on a free port, started once per test session (skipped without
  ``llama-cpp-python[server]``).
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from endpoint_stub import RecordingStub, free_port


@pytest.fixture
def make_stub() -> Iterator[Callable[..., RecordingStub]]:
    """Builds :class:`RecordingStub` endpoints (closed after the test)."""
    made: list[RecordingStub] = []

    def make(texts: list[Any], **kw: Any) -> RecordingStub:
        made.append(RecordingStub(texts, **kw))
        return made[-1]

    yield make
    for s in made:
        s.close()


@pytest.fixture
def stub(make_stub: Callable[..., RecordingStub]) -> RecordingStub:
    """A :class:`RecordingStub` that lists no models and answers ``"Answer: Paris"``."""
    return make_stub(["Answer: Paris"])


@pytest.fixture(scope="session")
def llama_server() -> Iterator[str]:
    """The base URL (``.../v1``) of llama-cpp-python's OpenAI-compatible server serving the
    embedded SmolLM2-135M with n_ctx 2048, started once per session."""
    if importlib.util.find_spec("uvicorn") is None or importlib.util.find_spec("llama_cpp") is None:
        pytest.skip("needs llama-cpp-python[server] (the dev extra): python -m llama_cpp.server")
    from lang_pz.backends.llama_cpp import default_model_path

    port = free_port()
    cmd = [sys.executable, "-m", "llama_cpp.server", "--model", str(default_model_path())]
    cmd += ["--host", "127.0.0.1", "--port", str(port), "--n_ctx", "2048"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"{url}/models", timeout=2) as r:
                    json.load(r)
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail("llama_cpp.server did not start within 60 s")
                time.sleep(0.5)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:  # a server busy on a loaded machine: it is ours, end it
            proc.kill()
            proc.wait(timeout=30)
