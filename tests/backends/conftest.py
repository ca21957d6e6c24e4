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

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from endpoint_stub import RecordingStub

from lang_pz.error import DependencyNotInstalled
from lang_pz.test.llama_server import embedded_model_server


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
    try:
        server = embedded_model_server(n_ctx=2048, start_timeout_s=60)
        url = server.__enter__()
    except DependencyNotInstalled as exc:
        pytest.skip(str(exc))
    except RuntimeError as exc:
        pytest.fail(str(exc))
    try:
        yield url
    finally:
        server.__exit__(None, None, None)
