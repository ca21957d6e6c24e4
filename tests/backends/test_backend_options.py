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


def test_a_bad_option_from_the_environment_variable_names_it(monkeypatch):
    pytest.importorskip("llama_cpp")
    monkeypatch.setenv("LANG_PZ_BACKEND_OPTIONS", '{"embedded": {"n_thread": 1}}')
    with pytest.raises(
        ValueError,
        match=r"^\$LANG_PZ_BACKEND_OPTIONS \('embedded'\): LlamaCppBackend has no option "
        r"'n_thread'; did you mean 'n_threads'",
    ):
        make_backend("embedded", cache=False)
    monkeypatch.setenv("LANG_PZ_BACKEND_OPTIONS", "{}")
    with pytest.raises(ValueError, match="^LlamaCppBackend has no option 'n_thread'"):  # an argument: no source
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


@pytest.mark.parametrize(
    "bad",
    [
        {"temperature": float("nan")},
        {"temperature": -0.1},
        {"temperature": float("inf")},
        {"max_tokens": 2.5},
        {"max_tokens": True},
        {"temperature": "0"},
    ],
)
def test_requests_with_unusable_sampling_values_are_refused(bad):
    """A NaN temperature used to reach llama.cpp and sample garbage."""
    from lang_pz.backends import GenerationRequest

    with pytest.raises(ValueError, match=next(iter(bad))):
        GenerationRequest(prompt="x", **bad)


@pytest.mark.integration
def test_embedded_failures_inside_llama_cpp_are_backend_errors():
    """An empty prompt made llama-cpp-python raise a bare AssertionError."""
    pytest.importorskip("llama_cpp")
    from lang_pz.backends import GenerationRequest
    from lang_pz.error import BackendError

    backend = make_backend("embedded", n_ctx=256, n_threads=1, cache=False)
    try:
        with pytest.raises(BackendError, match="AssertionError"):
            backend.generate(GenerationRequest(prompt="", max_tokens=2))
        assert backend.generate(GenerationRequest(prompt="The sky is", max_tokens=2)).completion_tokens > 0
    finally:
        backend.close()


@pytest.mark.parametrize("bad", [0, -2, 1.5, "2", True])
def test_instances_out_of_range_is_refused_before_loading(bad):
    pytest.importorskip("llama_cpp")
    with pytest.raises(ValueError, match="instances must be an int >= 1"):
        make_backend("embedded", instances=bad, cache=False)


@pytest.mark.integration
def test_two_instances_serve_two_requests_at_once_with_the_same_replies():
    import threading

    from lang_pz.backends.base import GenerationRequest
    from lang_pz.error import BackendError

    pytest.importorskip("llama_cpp")
    reqs = [
        GenerationRequest(prompt=f"Question: what comes after {n}?\nAnswer:", max_tokens=6, choices=None) for n in range(6)
    ]
    one = make_backend("embedded", n_threads=1, cache=False)
    try:
        expected = [one.generate(r).text for r in reqs]
    finally:
        one.close()
    two = make_backend("embedded", n_threads=1, instances=2, cache=False)
    try:
        assert two.max_concurrency == 2 and "instances=2" in repr(two)
        with two._instance() as a, two._instance() as b:  # both held at once: neither waits for the other
            assert a is not b
        got: dict[int, str] = {}
        threads = [threading.Thread(target=lambda i=i: got.__setitem__(i, two.generate(reqs[i]).text)) for i in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert [got[i] for i in range(6)] == expected  # greedy: the same reply whichever instance served
    finally:
        two.close()
    with pytest.raises(BackendError, match="closed"):
        two.generate(reqs[0])
