"""Fault handling of the OpenAI-compatible backend against a local fake endpoint.

Every fault kind of :class:`lang_pz.test.fake_server.FakeOpenAIServer` (timeouts, 429,
500, 503, resets, truncated bodies, empty choices, malformed JSON, replies outside the
choices) is retried and, when it never stops, ends as a BackendError naming the endpoint and
never the key. Waits are recorded through the backend's sleep hook, never timed.
"""

from __future__ import annotations

import email.utils
import pickle
import time
from typing import Any

import pytest

from lang_pz.backends import GenerationRequest, Message, OpenAIBackend, make_backend
from lang_pz.backends.retry import Backoff, RetrySchedule, retry_after_s
from lang_pz.error import BackendError, BackendUnavailableError, InvalidReplyError, LangPZError
from lang_pz.test.fake_server import FAULT_KINDS, FakeOpenAIServer, minimal_instance

SECRET = "sk-fault-test-SECRET-0123456789abcdef"
CHOICE = GenerationRequest(messages=(Message("user", "pick one"),), choices=("up", "down", "stay"))
SCHEMA = GenerationRequest(
    messages=(Message("user", "json please"),),
    json_schema={"type": "object", "properties": {"n": {"type": "integer", "minimum": 2}}, "required": ["n"]},
)
COMPLETION = GenerationRequest(prompt='Action = "', choices=("up", "down"))
TRANSPORT = {"timeout", "http_429", "http_500", "http_503", "reset", "truncated"}


def fast(url: str, **kw: Any) -> OpenAIBackend:
    """A backend with tiny timeouts and waits (the faults are injected, not waited out)."""
    opts: dict[str, Any] = dict(
        api_key=SECRET, cache=False, timeout_s=0.3, connect_timeout_s=0.3, backoff_s=0.001, max_backoff_s=0.001, jitter=0.0
    )
    return OpenAIBackend("fake", base_url=url, **{**opts, **kw})


def chain(exc: BaseException | None) -> str:
    parts = []
    while exc is not None:
        parts.append(f"{exc!s} {exc!r}")
        exc = exc.__cause__ or exc.__context__
    return "\n".join(parts)


@pytest.fixture
def servers():
    made: list[FakeOpenAIServer] = []

    def make(*args: Any, **kw: Any) -> FakeOpenAIServer:
        kw.setdefault("stall_s", 5.0)
        made.append(FakeOpenAIServer(*args, **kw))
        return made[-1]

    yield make
    for s in made:
        s.close()


# ----------------------------------------------------------------- item 1: malformed bodies


def test_malformed_json_body_is_retried(servers):
    server = servers(script=["malformed_json"])
    backend = fast(server.url)
    gen = backend.generate(CHOICE)
    assert gen.text == "up" and gen.retries == 1 and server.requests == 2
    assert backend.retries == {"malformed JSON": 1} and backend.usage.retries == 1


def test_malformed_json_every_time_is_a_backend_error_naming_the_endpoint(servers):
    server = servers(1.0, ["malformed_json"])
    backend = fast(server.url, max_attempts=3)
    with pytest.raises(InvalidReplyError) as info:
        backend.generate(CHOICE)
    err = info.value
    assert isinstance(err, BackendError) and isinstance(err, LangPZError)
    assert server.url in str(err) and "'fake'" in str(err) and "3 malformed JSON" in str(err)
    assert server.requests == 3
    assert SECRET not in chain(err)


# ------------------------------------------- items 1, 2 and 4: every fault kind, every request form


@pytest.mark.parametrize("kind", FAULT_KINDS)
@pytest.mark.parametrize("form", ["chat-choices", "chat-schema", "completion-choices"])
def test_every_fault_kind_is_retried_then_answered(servers, kind, form):
    if kind == "invalid_reply" and form == "chat-schema":
        pytest.skip("a schema reply is validated by lang_pz.structured, which retries with the errors shown")
    server = servers(script=[kind, kind])
    backend = fast(server.url, structured_output="json_object")
    request = {"chat-choices": CHOICE, "chat-schema": SCHEMA, "completion-choices": COMPLETION}[form]
    gen = backend.generate(request)
    assert gen.text == ('{"n": 2}' if form == "chat-schema" else "up")
    assert gen.retries == 2 and sum(backend.retries.values()) == 2 and server.requests == 3
    assert server.faults == {kind: 2}


@pytest.mark.parametrize("kind", FAULT_KINDS)
def test_every_fault_kind_through_all_attempts_is_a_backend_error(servers, kind):
    server = servers(1.0, [kind])
    backend = fast(server.url, max_attempts=2)
    with pytest.raises(BackendError) as info:
        backend.generate(CHOICE)
    err = info.value
    assert isinstance(err, BackendUnavailableError if kind in TRANSPORT else InvalidReplyError)
    assert server.url in str(err) and "'fake'" in str(err) and "2 attempt(s)" in str(err)
    assert server.requests == 2
    assert SECRET not in chain(err) and SECRET not in repr(backend)


def test_reply_outside_the_choices_is_retried_not_fatal(servers):
    """Item 2: one bad reply must not end a training run."""
    server = servers(script=["invalid_reply", "empty_choices"])
    gen = fast(server.url).generate(CHOICE)
    assert gen.text == "up" and gen.retries == 2


# ----------------------------------------------------------- item 3: Retry-After, jitter, options


def waits_of(backend: OpenAIBackend) -> list[float]:
    waits: list[float] = []
    backend._sleep = waits.append
    return waits


def test_retry_after_seconds_is_honoured(servers):
    server = servers(script=["http_429"], retry_after="3")
    backend = fast(server.url, jitter=0.5)
    waits = waits_of(backend)
    assert backend.generate(CHOICE).text == "up"
    assert len(waits) == 1 and 3.0 <= waits[0] <= 4.5


def test_retry_after_http_date_is_honoured(servers):
    server = servers(script=["http_429"], retry_after=email.utils.formatdate(time.time() + 6, usegmt=True))
    backend = fast(server.url)
    waits = waits_of(backend)
    backend.generate(CHOICE)
    assert len(waits) == 1 and 3.0 <= waits[0] <= 6.0  # the date has whole seconds


def test_retry_after_is_capped(servers):
    server = servers(script=["http_429"], retry_after="3600")
    backend = fast(server.url, max_retry_after_s=2.0, jitter=0.5)
    waits = waits_of(backend)
    backend.generate(CHOICE)
    assert 2.0 <= waits[0] <= 3.0


def test_retry_after_forms():
    assert retry_after_s({"retry-after-ms": "1500"}) == 1.5
    assert retry_after_s({"retry-after": "2"}) == 2.0
    assert retry_after_s({"Retry-After": "2.5"}) == 2.5
    now = 1_700_000_000.0
    assert retry_after_s({"retry-after": email.utils.formatdate(now + 30, usegmt=True)}, now=now) == 30.0
    assert retry_after_s({"retry-after": email.utils.formatdate(now - 30, usegmt=True)}, now=now) == 0.0
    assert retry_after_s({"retry-after": "soon"}) is None
    assert retry_after_s({"retry-after": "inf"}) is None
    assert retry_after_s({}) is None and retry_after_s(None) is None


def test_backoff_doubles_is_capped_and_its_jitter_is_seeded():
    plain = Backoff(RetrySchedule(backoff_s=1.0, max_backoff_s=4.0, jitter=0.0), lambda e: None)
    assert [plain.delay(n) for n in (1, 2, 3, 4, 5)] == [1.0, 2.0, 4.0, 4.0, 4.0]
    a, b, c = (Backoff(RetrySchedule(jitter=0.5, seed=s), lambda e: None) for s in (7, 7, 8))
    seq_a, seq_b, seq_c = ([x.delay(n) for n in range(1, 6)] for x in (a, b, c))
    assert seq_a == seq_b and seq_a != seq_c
    assert all(0.5 * 0.5 * 2 ** (n - 1) <= w <= 1.5 * 0.5 * 2 ** (n - 1) for n, w in enumerate(seq_a, 1))
    assert len({round(w / 2**n, 9) for n, w in enumerate(seq_a)}) > 1  # jittered, not plain doubling


def test_same_retry_seed_same_waits_against_a_server(servers):
    runs = []
    for _ in range(2):
        server = servers(script=["http_500", "http_503", "reset"])
        backend = fast(server.url, backoff_s=0.5, max_backoff_s=30, jitter=0.5, retry_seed=3)
        waits = waits_of(backend)
        backend.generate(CHOICE)
        runs.append(waits)
    assert runs[0] == runs[1] and len(runs[0]) == 3


LOCAL = "http://127.0.0.1:9/v1"  # a local endpoint (needs no key); never reached by these tests


def test_timeouts_and_retries_are_options_of_make_backend(monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", LOCAL)
    b = make_backend(
        "openai:m",
        timeout_s=2.5,
        connect_timeout_s=1.0,
        max_attempts=3,
        backoff_s=0.1,
        max_backoff_s=2.0,
        jitter=0.1,
        max_retry_after_s=5.0,
        retry_seed=4,
        cache=False,
    )
    assert (b._client.timeout.read, b._client.timeout.connect) == (2.5, 1.0)
    assert b.schedule == RetrySchedule(3, 0.1, 2.0, 0.1, 5.0, 4)
    with pytest.raises(ValueError, match="did you mean 'max_attempts'"):
        make_backend("openai:m", max_retries=3, cache=False)
    with pytest.raises(ValueError, match="did you mean 'timeout_s'"):
        make_backend("openai:m", timeout_ss=3, cache=False)
    for bad in ({"timeout_s": 0}, {"max_attempts": 0}, {"jitter": 2}, {"backoff_s": -1}, {"timeout_s": float("nan")}):
        with pytest.raises(ValueError, match=next(iter(bad))):
            make_backend("openai:m", cache=False, **bad)


@pytest.mark.parametrize("url", ["localhost:8000/v1", "ftp://host/v1", "http://", "127.0.0.1:8000"])
def test_a_base_url_that_cannot_work_is_refused_at_once(url, monkeypatch):
    """Not retried for a minute as if the server were down."""
    with pytest.raises(ValueError, match="base_url .* is not an http"):
        OpenAIBackend("m", base_url=url, cache=False)
    monkeypatch.setenv("OPENAI_BASE_URL", url)
    with pytest.raises(ValueError, match=r"\$OPENAI_BASE_URL"):
        OpenAIBackend("m", cache=False)


def test_defaults_a_timeout_no_longer_costs_a_minute_to_connect(monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", LOCAL)
    b = OpenAIBackend("m", cache=False)
    assert (b.timeout_s, b.connect_timeout_s, b.max_attempts) == (60.0, 5.0, 8)
    assert b._client.timeout.connect == 5.0


def test_backend_options_from_the_environment(monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", LOCAL)
    monkeypatch.setenv("LANG_PZ_BACKEND_OPTIONS", '{"openai": {"timeout_s": 7, "max_attempts": 2}}')
    assert make_backend("openai:m", cache=False).timeout_s == 7.0
    assert make_backend("openai:m", cache=False, max_attempts=5).max_attempts == 5  # kwargs win
    monkeypatch.setenv("LANG_PZ_BACKEND_OPTIONS", "{not json")
    with pytest.raises(ValueError, match="LANG_PZ_BACKEND_OPTIONS"):
        make_backend("openai:m", cache=False)
    monkeypatch.setenv("LANG_PZ_BACKEND_OPTIONS", '{"opneai": {}}')
    with pytest.raises(ValueError, match="unknown backend kind"):
        make_backend("openai:m", cache=False)


@pytest.mark.parametrize("gai", [(-2, "Name or service not known"), (-3, "Temporary failure in name resolution")])
def test_a_host_that_does_not_resolve_is_tried_twice_not_eight_times(monkeypatch, gai):
    """A DNS failure was retried through all 8 attempts (2+ minutes) with a message that did not
    say the name does not resolve. The resolver is replaced, so no lookup leaves the machine."""
    import socket

    lookups = []

    def no_dns(host, *args, **kwargs):
        lookups.append(host)
        raise socket.gaierror(*gai)

    monkeypatch.setattr(socket, "getaddrinfo", no_dns)
    backend = fast("http://llm.example.invalid/v1", max_attempts=8, check_endpoint=False)  # a request mid-run
    resolve = r"2 attempt.*'llm\.example\.invalid' does not resolve.*OPENAI_BASE_URL"
    with pytest.raises(BackendUnavailableError, match=resolve):
        backend.generate(CHOICE)
    assert lookups == ["llm.example.invalid"] * 2 and backend.retries == {"connection error": 1}
    lookups.clear()  # the first request's start-up check: one lookup, then the error
    with pytest.raises(BackendUnavailableError, match=r"'llm\.example\.invalid' does not resolve \(DNS\).*OPENAI_BASE_URL"):
        fast("http://llm.example.invalid/v1", max_attempts=8).generate(CHOICE)
    assert lookups == ["llm.example.invalid"]


# ------------------------------------------------------------------------- item 7: keys


def test_backend_with_a_key_is_not_pickled():
    b = OpenAIBackend("m", api_key=SECRET, cache=False)
    with pytest.raises(TypeError) as info:
        pickle.dumps(b)
    assert SECRET not in str(info.value) and SECRET not in repr(b) and SECRET not in str(vars(b).get("schedule"))


def test_fake_server_minimal_instances_validate():
    from lang_pz.critics.base import Credit  # a real pydantic schema with bounds

    schema = Credit.model_json_schema()
    Credit.model_validate(minimal_instance(schema))
    assert minimal_instance({"type": "array", "items": {"type": "string", "minLength": 3}, "minItems": 2}) == ["okk", "okk"]
    assert minimal_instance({"anyOf": [{"type": "null"}, {"type": "integer"}]}) is None
