"""Options of the embedded backend reach llama.cpp: ``n_threads`` (and ``n_ctx``) from the
constructor, :func:`make_backend` and ``LANG_PZ_BACKEND_OPTIONS``, with bad values refused."""

from __future__ import annotations

import pytest

from lang_pz.backends import make_backend


@pytest.mark.parametrize("bad", [0, -1, 1.5, "2", True])
def test_n_threads_out_of_range_is_refused_before_loading(bad):
    pytest.importorskip("llama_cpp")
    with pytest.raises(ValueError, match="n_threads must be an int >= 1"):
        make_backend("embedded", n_threads=bad, cache=False)


def test_n_ctx_out_of_range_is_refused():
    pytest.importorskip("llama_cpp")
    with pytest.raises(ValueError, match="n_ctx"):
        make_backend("embedded", n_ctx=0, cache=False)


def test_misspelt_embedded_option_gets_a_did_you_mean():
    pytest.importorskip("llama_cpp")
    with pytest.raises(ValueError, match="did you mean 'n_threads'"):
        make_backend("embedded", n_thread=1, cache=False)


@pytest.mark.integration
def test_n_threads_reaches_llama_cpp(monkeypatch):
    pytest.importorskip("llama_cpp")
    backend = make_backend("embedded", n_threads=1, cache=False)
    try:
        assert backend.n_threads == 1
        assert (backend._llm.n_threads, backend._llm.n_threads_batch) == (1, 1)
        assert "n_threads=1" in repr(backend)
    finally:
        backend.close()
    monkeypatch.setenv("LANG_PZ_BACKEND_OPTIONS", '{"embedded": {"n_threads": 2, "n_ctx": 512}}')
    backend = make_backend("embedded", cache=False)
    try:
        assert (backend._llm.n_threads, backend.n_ctx, backend.context_window) == (2, 512, 512)
    finally:
        backend.close()
