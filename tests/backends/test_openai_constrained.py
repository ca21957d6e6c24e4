"""OpenAIBackend's constrained_decoding modes: the request bodies sent for an env's reply format
(and for choices), seen by a local HTTP STUB that records each body and answers with scripted
text (the ``stub`` of conftest.py, not vLLM or OpenAI: it checks the shape of what is sent and how
replies are read back and validated, not that a real server honours the fields); and the JSON-schema pattern
derived from a reply format says the same language as the format's regex."""

from __future__ import annotations

import functools
import json
import re
import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import has_bwrap

import lang_pz
from lang_pz.backends import GenerationRequest, Message, OpenAIBackend, make_backend
from lang_pz.backends.openai_requests import reply_schema, request_body, schema_pattern
from lang_pz.error import InvalidReplyError
from lang_pz.policies import LLMPolicy
from lang_pz.text.replies import ReplyFormat


def _format() -> ReplyFormat:
    env = lang_pz.make("tasks/hotpotqa-v0", source="demo")
    env.reset(seed=0)
    env.step(ReplyFormat.from_info(env.infos["finder"]).example)  # the answerer's turn
    fmt = ReplyFormat.from_info(env.infos["answerer"])
    assert fmt is not None
    return fmt


def _backend(stub, mode: str, **kw) -> OpenAIBackend:
    return OpenAIBackend(
        "m", base_url=stub.url, constrained_decoding=mode, cache=False, max_attempts=2, backoff_s=0.01, **kw
    )


def test_vllm_modes_send_the_regex_and_choices_in_vllms_fields(stub):
    fmt = _format()
    chat = GenerationRequest(messages=(Message("user", "Q"),), grammar=fmt.gbnf, pattern=fmt.regex)
    completion = GenerationRequest(prompt="Q", grammar=fmt.gbnf, pattern=fmt.regex, stop=('"',))
    choices = GenerationRequest(prompt="Pick", choices=("up", "down"))
    new, old = _backend(stub, "vllm"), _backend(stub, "vllm_guided")
    assert new.generate(chat).text == "Answer: Paris" and new.generate(completion).text == "Answer: Paris"
    assert old.generate(chat).text == "Answer: Paris"
    stub.texts = ["down"]
    assert new.generate(choices).text == "down" and old.generate(choices).text == "down"
    (p1, b1), (p2, b2), (_, b3), (p4, b4), (_, b5) = stub.bodies
    assert p1 == "/v1/chat/completions" and b1["structured_outputs"] == {"regex": fmt.regex}
    assert p2 == "/v1/completions" and b2["structured_outputs"] == {"regex": fmt.regex} and "grammar" not in b2
    assert b3["guided_regex"] == fmt.regex and "structured_outputs" not in b3
    assert p4 == "/v1/completions" and b4["structured_outputs"] == {"choice": ["up", "down"]}
    assert b5["guided_choice"] == ["up", "down"] and "response_format" not in b5
    assert all("response_format" not in b for _, b in stub.bodies)


def test_json_schema_mode_asks_for_a_reply_string_and_unwraps_it(stub):
    fmt = _format()
    stub.texts = [json.dumps({"reply": "Answer: Paris"})]
    backend = _backend(stub, "json_schema")
    chat = GenerationRequest(messages=(Message("user", "Q"),), grammar=fmt.gbnf, pattern=fmt.regex)
    assert backend.generate(chat).text == "Answer: Paris"
    sent = stub.bodies[-1][1]["response_format"]
    assert sent["type"] == "json_schema" and sent["json_schema"]["schema"] == reply_schema(fmt.regex)
    assert sent["json_schema"]["schema"]["properties"]["reply"]["pattern"].startswith("^")
    # a completion-format request has no standard schema field: free text, unchecked
    stub.texts = ["whatever the model says"]
    completion = GenerationRequest(prompt="Q", grammar=fmt.gbnf, pattern=fmt.regex)
    assert backend.generate(completion).text == "whatever the model says"
    assert "response_format" not in stub.bodies[-1][1] and "grammar" not in stub.bodies[-1][1]


def test_a_reply_outside_the_format_is_retried_then_refused(stub):
    fmt = _format()
    stub.texts = ["Paris, I think", "Answer: Paris"]  # the server ignored the constraint once
    backend = _backend(stub, "vllm")
    gen = backend.generate(GenerationRequest(messages=(Message("user", "Q"),), grammar=fmt.gbnf, pattern=fmt.regex))
    assert gen.text == "Answer: Paris" and gen.retries == 1 and backend.retries["reply outside the format"] == 1
    stub.texts = ["Paris, I think"]
    with pytest.raises(InvalidReplyError, match="does not match the reply format"):
        backend.generate(GenerationRequest(messages=(Message("user", "Q2"),), grammar=fmt.gbnf, pattern=fmt.regex))
    stub.texts = [json.dumps({"reply": 3})]
    with pytest.raises(InvalidReplyError, match="not a string"):
        _backend(stub, "json_schema").generate(
            GenerationRequest(messages=(Message("user", "Q3"),), grammar=fmt.gbnf, pattern=fmt.regex)
        )


def test_off_and_auto_send_free_text_to_a_schema_server(stub):
    fmt = _format()
    stub.texts = ["Paris, I think"]
    request = GenerationRequest(messages=(Message("user", "Q"),), grammar=fmt.gbnf, pattern=fmt.regex)
    for mode in ("off", "auto"):
        assert _backend(stub, mode).generate(request).text == "Paris, I think"  # unchecked: the env falls back
    assert all(set(b) == {"model", "max_tokens", "temperature", "seed", "messages"} for _, b in stub.bodies)
    # auto on a llama.cpp server (structured_output="json_object") is the GBNF grammar field
    assert request_body(request, "m", "json_object", "e")[1]["grammar"] == fmt.gbnf
    # llama_cpp named explicitly: choices of a completion request go as a grammar too
    body = request_body(GenerationRequest(prompt="P", choices=("a", "b")), "m", "json_schema", "e", "llama_cpp")[1]
    assert body["grammar"] == 'root ::= "a" | "b"' and "response_format" not in body


def test_the_policy_over_vllm_mode_gets_a_parsing_reply_in_a_task_env(stub):
    env = lang_pz.make("tasks/gsm8k-v0", source="demo")
    env.reset(seed=0)
    obs, _, _, _, info = env.last()
    stub.texts = ["#### 7"]
    decision = LLMPolicy("Solve it.", _backend(stub, "vllm", prompt_format="completion")).decide(obs, info)
    env.step(decision.action)
    assert env.infos["solver"]["parse_error"] is None
    assert stub.bodies[-1][1]["structured_outputs"]["regex"] == ReplyFormat.from_info(info).regex


def test_an_unknown_mode_is_refused_with_the_valid_ones():
    with pytest.raises(ValueError, match="'vllm_guided'"):
        OpenAIBackend("m", base_url="http://127.0.0.1:9/v1", constrained_decoding="guided", cache=False)
    with pytest.raises(ValueError, match="did you mean 'constrained_decoding'"):
        make_backend("openai:m", base_url="http://127.0.0.1:9/v1", constrained_decodng="vllm")
    backend = make_backend("openai:m", base_url="http://127.0.0.1:9/v1", constrained_decoding="vllm", cache=False)
    assert backend.cache_identity()["constrained_decoding"] == "vllm" and "constrained_decoding='vllm'" in repr(backend)


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_the_schema_pattern_says_the_same_language_as_the_format(data):
    fmt = data.draw(st.sampled_from(_all_formats()))
    pattern = schema_pattern(fmt.regex)
    outside_classes = re.sub(r"\[(?:\\.|[^\]\\])*\]", "", pattern)
    assert "(?:" not in pattern and "\\x" not in outside_classes and pattern.startswith("^") and pattern.endswith("$")
    reply = data.draw(st.from_regex(fmt.regex, fullmatch=True))
    assert re.fullmatch(pattern, reply) is not None
    other = data.draw(st.text(max_size=30))
    assert (re.fullmatch(pattern, other) is None) == (re.fullmatch(fmt.regex, other) is None)


@functools.cache
def _all_formats() -> list[ReplyFormat]:
    """Every task env's reply formats (built on first use, not at import: MBPP's constructor probes
    its sandbox; a reply format does not depend on it, so the rlimits mode serves where bubblewrap
    is missing)."""
    out = []
    for env_id in ("tasks/hotpotqa-v0", "tasks/gsm8k-v0", "tasks/math500-v0", "tasks/mbpp-v0"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            kw = {"sandbox": "rlimits"} if env_id == "tasks/mbpp-v0" and not has_bwrap() else {}
            env = lang_pz.make(env_id, source="demo", **kw)
        env.reset(seed=0)
        out += [ReplyFormat.from_info(env.infos[a]) for a in env.possible_agents if a in env.infos]
    from lang_pz.envs.textarena.adapter import BRACKETED_FORMAT, MOVE_FORMATS

    return [f for f in out if f is not None] + [BRACKETED_FORMAT, *MOVE_FORMATS.values()]
