"""The OpenAI backend's first contact with an endpoint: the start-up check (reachable at once or a
fast error, the model name against the server's list, its context window and structured-output
form), prompts fitted to or refused before the context, choice replies cut at max_tokens, and
requests the server calls invalid (not retried).

Unit tests use the ``make_stub`` endpoint of conftest.py presenting itself as each server; the
``integration`` tests at the end use the REAL llama.cpp server (``llama_server``, one per session).
"""

from __future__ import annotations

import socket
import time

import pytest
from endpoint_stub import LLAMA_CPP_PYTHON_MODELS, LLAMA_SERVER_MODELS, VLLM_MODELS, Reply, free_port

from lang_pz.backends import GenerationRequest, Message, OpenAIBackend
from lang_pz.backends.openai_endpoint import match_model
from lang_pz.backends.openai_requests import JSON_CHOICE_TOKENS
from lang_pz.error import BackendError, BackendUnavailableError, InvalidReplyError, PromptTooLongError
from lang_pz.policies import LLMPolicy

CHAT = "/v1/chat/completions"
NONE_CHOICE = GenerationRequest(messages=(Message("user", "Which skill?"),), choices=("none",), max_tokens=6)
INVALID_SCHEMA = (  # llama-cpp-python 0.3.36's answer to response_format json_schema, as measured
    500,
    {
        "error": {
            "message": "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), "
            "'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema'}\n\n  File "
            '"/x/llama_cpp/server/app.py", line 376, in create_chat_completion\n    POST /v1/chat/completions',
            "type": "internal_server_error",
        }
    },
)


def backend(url: str, model: str = "smollm2", **kw) -> OpenAIBackend:
    kw = {"cache": False, "backoff_s": 0.001, "max_backoff_s": 0.001, "jitter": 0.0, **kw}
    return OpenAIBackend(model, base_url=url, **kw)


def test_the_check_finds_llama_cpp_pythons_server_and_its_json_object_form(make_stub):
    stub = make_stub(['{"choice": "none"}'], models=LLAMA_CPP_PYTHON_MODELS)
    b = backend(stub.url)
    info = b.check()
    assert (info.server, info.structured_output, info.context_window) == ("llama-cpp-python", "json_object", None)
    assert info.tokenizer == stub.url.removesuffix("/v1") + "/extras/tokenize/count"
    assert "serving 'SmolLM2-135M-Instruct.Q4_1'" in info.summary()
    assert b.generate(NONE_CHOICE).text == "none"
    sent = stub.bodies[0][1]
    assert sent["response_format"]["type"] == "json_object" and sent["max_tokens"] == 6 + JSON_CHOICE_TOKENS
    assert stub.seen.count(("GET", "/v1/models")) == 1  # checked once, before the first request
    b.generate(NONE_CHOICE)
    assert stub.seen.count(("GET", "/v1/models")) == 1


def test_vllm_reports_its_context_and_takes_json_schema(make_stub):
    stub = make_stub(["ok"], models=VLLM_MODELS)
    info = backend(stub.url, "Qwen/Qwen2.5-7B-Instruct").check()
    assert (info.server, info.structured_output, info.context_window) == ("vllm", "json_schema", 96)
    assert "max_model_len" in info.context_source and info.tokenizer.endswith("/tokenize")


def test_llama_server_reports_its_context_in_props(make_stub):
    props = {"default_generation_settings": {"n_ctx": 4096}, "total_slots": 1}
    stub = make_stub(["ok"], models=LLAMA_SERVER_MODELS, routes={"/props": props})
    info = backend(stub.url, "qwen2.5-7b-instruct-q4_k_m").check()
    assert (info.server, info.context_window, info.context_source) == ("llama.cpp", 4096, "GET /props")
    assert info.structured_output == "json_schema"


def test_a_model_the_server_does_not_list_is_an_error_naming_what_it_serves(make_stub):
    stub = make_stub(["ok"], models=VLLM_MODELS)
    with pytest.raises(
        BackendError, match=r"no model named 'qwen2.5-7b' \(did you mean 'Qwen/Qwen2.5-7B-Instruct'\?\); it serves"
    ):
        backend(stub.url, "qwen2.5-7b").generate(NONE_CHOICE)
    assert stub.bodies == []  # nothing was sent under the wrong name


def test_a_wrong_name_on_a_server_that_answers_any_name_is_refused_with_the_fix(make_stub):
    """llama.cpp's servers answer under any name: 'gpt-4o-mini' would run SmolLM2 and be recorded as gpt-4o-mini."""
    stub = make_stub(["ok"], models=LLAMA_CPP_PYTHON_MODELS)
    with pytest.raises(BackendError) as info:
        backend(stub.url, "gpt-4o-mini").check()
    msg = str(info.value)
    assert "answers under any name" in msg and "--backend openai:SmolLM2-135M-Instruct.Q4_1" in msg
    assert "--model_alias gpt-4o-mini" in msg
    assert backend(stub.url, "SmolLM2-135M-Instruct.Q4_1").check().served_model == LLAMA_CPP_PYTHON_MODELS["data"][0]["id"]


@pytest.mark.parametrize(
    "name, ids, server, matched",
    [
        ("m", ["m", "n"], "vllm", "m"),
        ("Qwen/qwen2.5-7b-instruct", ["Qwen/Qwen2.5-7B-Instruct"], "vllm", "Qwen/Qwen2.5-7B-Instruct"),
        ("llama3.2", ["llama3.2:latest"], "unknown", "llama3.2:latest"),
        ("smollm2", ["/m/SmolLM2-135M-Instruct.Q4_1.gguf"], "llama-cpp-python", "/m/SmolLM2-135M-Instruct.Q4_1.gguf"),
        ("smollm2", ["smollm2-135m"], "vllm", None),  # a part of a name is not the name where names are exact
        ("sm", ["/m/SmolLM2.gguf"], "llama.cpp", None),  # too short to name anything
        ("gpt-4o-mini", ["/m/SmolLM2.gguf"], "llama-cpp-python", None),
    ],
)
def test_model_names_match_as_a_user_means_them(name, ids, server, matched):
    assert match_model(name, ids, server) == matched


def test_a_server_that_lists_no_models_is_used_unchecked_with_a_note(stub):
    info = backend(stub.url, "anything").check()
    assert info.models is None and info.served_model is None and "was not checked" in info.notes[0]
    assert info.structured_output == "json_schema" and info.tokenizer is None


def test_a_wrong_port_fails_at_once_not_after_a_minute_of_retries():
    b = backend(f"http://127.0.0.1:{free_port()}/v1", max_attempts=8, backoff_s=0.5, max_backoff_s=30)
    t0 = time.perf_counter()
    with pytest.raises(BackendUnavailableError, match="not reachable.*Connection refused.*start the server"):
        b.generate(NONE_CHOICE)
    assert time.perf_counter() - t0 < 15 and b.retries.total() == 0


def test_a_server_that_accepts_but_does_not_answer_is_busy_not_unreachable():
    with socket.socket() as listening:  # the kernel accepts the connection; nobody answers
        listening.bind(("127.0.0.1", 0))
        listening.listen(1)
        b = backend(f"http://127.0.0.1:{listening.getsockname()[1]}/v1", timeout_s=0.3)
        with pytest.raises(BackendUnavailableError, match="accepted the connection but did not answer .*raise timeout_s"):
            b.check()


def test_a_structured_output_the_server_does_not_take_is_a_start_up_warning(make_stub):
    stub = make_stub(["ok"], models=LLAMA_CPP_PYTHON_MODELS)
    info = backend(stub.url, structured_output="json_schema").check()
    assert "structured_output='json_schema' is set, but llama-cpp-python's server takes 'json_object'" in info.notes[0]


def test_a_loading_server_is_waited_for_and_a_bad_key_is_said(make_stub):
    loading = (503, {"error": {"message": "Loading model"}})  # llama-server's answer while it loads
    stub = make_stub(["ok"], models=[loading, loading, LLAMA_CPP_PYTHON_MODELS])
    b = backend(stub.url)
    waits: list[float] = []
    b._sleep = waits.append
    assert b.check().server == "llama-cpp-python" and waits == [1.0, 1.0]
    refusing = make_stub(["ok"], models=(401, {"error": {"message": "Incorrect API key provided"}}))
    with pytest.raises(BackendError, match="Incorrect API key provided.*check the API key"):
        backend(refusing.url).check()


def test_a_server_refusing_json_schema_is_not_retried_and_auto_switches_to_json_object(make_stub):
    """The HTTP 500 "Input should be 'text' or 'json_object'" was retried 8 times (116 s) and then
    blamed on reachability. Forced json_schema: one request, the server's own words and the fix.
    On a server the check cannot name, auto sends json_schema once, then json_object."""
    answer = lambda body: INVALID_SCHEMA if body["response_format"]["type"] == "json_schema" else '{"choice": "none"}'  # noqa: E731
    stub = make_stub([answer], models={"object": "list", "data": [{"id": "smollm2", "object": "model"}]})
    forced = backend(stub.url, structured_output="json_schema", backoff_s=0.5)
    t0 = time.perf_counter()
    with pytest.raises(BackendError) as info:
        forced.generate(NONE_CHOICE)
    msg = str(info.value)
    assert time.perf_counter() - t0 < 15 and stub.posts(CHAT) == 1 and not isinstance(info.value, BackendUnavailableError)
    assert "Input should be 'text' or 'json_object'" in msg and "structured_output='json_object'" in msg
    assert "app.py" not in msg and "Error code" not in msg  # the server's words, not its traceback
    auto = backend(stub.url)
    assert auto.generate(NONE_CHOICE).text == "none" and auto.structured == "json_object"
    assert [b["response_format"]["type"] for _, b in stub.bodies[1:]] == ["json_schema", "json_object"]


def test_a_choice_cut_at_max_tokens_is_sent_again_with_a_larger_budget(make_stub):
    """An empty skill library's choice got max_tokens 6, the server stopped at '{ "choice"', and the
    same request was retried 8 times."""
    stub = make_stub([Reply('{ "choice"', "length", 20), '{"choice": "none"}'], models=LLAMA_CPP_PYTHON_MODELS)
    b = backend(stub.url, backoff_s=5.0)
    waits: list[float] = []
    b._sleep = waits.append
    assert b.generate(NONE_CHOICE).text == "none"
    budgets = [body["max_tokens"] for _, body in stub.bodies]
    assert budgets == [6 + JSON_CHOICE_TOKENS, 2 * (6 + JSON_CHOICE_TOKENS)] and waits == [0.0]
    assert b.retries == {"cut at max_tokens": 1}


def test_a_cut_reply_whose_budget_cannot_grow_is_refused_at_once(make_stub):
    stub = make_stub([Reply('{ "choice"', "length", 60)], models=LLAMA_CPP_PYTHON_MODELS)
    b = backend(stub.url, context_window=80, max_attempts=8)
    with pytest.raises(InvalidReplyError, match=r"cut at max_tokens=22 .*cannot grow"):
        b.generate(NONE_CHOICE)
    assert stub.posts(CHAT) == 1


def test_a_prompt_over_the_context_is_refused_before_the_call_and_the_policy_fits_it(make_stub):
    """vLLM-like stub: context 96 tokens, one token a word."""
    stub = make_stub(['{"choice": "up"}'], models=VLLM_MODELS)
    b = backend(stub.url, "Qwen/Qwen2.5-7B-Instruct")
    long = GenerationRequest(messages=(Message("user", "word " * 100),), choices=("up", "down"), max_tokens=4)
    with pytest.raises(PromptTooLongError) as info:
        b.generate(long)
    err = info.value
    assert (err.prompt_tokens, err.context_window) == (100, 96) and stub.posts(CHAT) == 0
    assert "100 tokens" in str(err) and "it was not sent" in str(err) and "--max-model-len" in str(err)
    obs = "The ball is left. " + " ".join(f"w{i}" for i in range(200)) + "\nActions: up, down"
    decision = LLMPolicy("Always push up.", b).decide(obs, {"legal_actions": ["up", "down"]})
    assert decision.action == "up" and decision.meta["observation_chars_left_out"] > 0 and stub.posts(CHAT) == 1


def test_the_context_a_server_states_in_its_error_fits_the_next_requests_first(make_stub):
    """llama-cpp-python's server does not report its context: its first refusal teaches it."""
    too_long = (
        400,
        {
            "error": {
                "message": "This model's maximum context length is 64 tokens. However, you requested 104 tokens "
                "(100 in the messages, 4 in the completion).",
                "type": "invalid_request_error",
                "code": "context_length_exceeded",
            }
        },
    )
    stub = make_stub([too_long], models=LLAMA_CPP_PYTHON_MODELS)
    b = backend(stub.url)
    long = GenerationRequest(messages=(Message("user", "word " * 100),), max_tokens=4)
    for _ in range(2):
        with pytest.raises(PromptTooLongError):
            b.generate(long)
    assert stub.posts(CHAT) == 1 and b.context_window == 64


def test_tokens_are_counted_by_the_server_else_estimated(make_stub):
    request = GenerationRequest(messages=(Message("user", "one two three"),))
    stub = make_stub(["ok"], models=LLAMA_CPP_PYTHON_MODELS)
    assert backend(stub.url).count_tokens(request) == 3 + 8 + 32  # the text, and the chat template's allowance
    listed_only = make_stub(["ok"], models={"object": "list", "data": [{"id": "smollm2"}]})
    assert backend(listed_only.url).count_tokens(request) == 7 + 8 + 32  # 13 bytes / 2, rounded up


def test_an_option_out_of_range_is_refused_at_construction():
    with pytest.raises(ValueError, match="context_window is in tokens"):
        OpenAIBackend("m", base_url="http://127.0.0.1:9/v1", context_window=0, cache=False)
    with pytest.raises(ValueError, match="check_endpoint must be true or false"):
        OpenAIBackend("m", base_url="http://127.0.0.1:9/v1", check_endpoint="no", cache=False)


# ------------------------------------------------------------------ the REAL llama.cpp server


@pytest.mark.integration
def test_a_real_llama_cpp_server_first_contact(llama_server):
    """Against llama-cpp-python's server: json_object chosen by the check, a one-choice chat request
    (an empty skill library) answered, a wrong name refused naming the served model, a wrong port
    refused in seconds, an over-long prompt refused before the call once the context is known."""
    b = backend(llama_server, max_attempts=3)
    info = b.check()
    assert (info.server, info.structured_output, b.structured) == ("llama-cpp-python", "json_object", "json_object")
    assert b.generate(NONE_CHOICE).text == "none"
    t0 = time.perf_counter()
    with pytest.raises(BackendError, match="serves one model, 'SmolLM2-135M-Instruct.Q4_1'"):
        backend(llama_server, "gpt-4o-mini").generate(NONE_CHOICE)
    with pytest.raises(BackendUnavailableError, match="not reachable"):
        backend(f"http://127.0.0.1:{free_port()}/v1").generate(NONE_CHOICE)
    assert time.perf_counter() - t0 < 15
    long = GenerationRequest(messages=(Message("user", "pebble " * 3000),), max_tokens=4)
    with pytest.raises(PromptTooLongError, match="it was not sent") as too_long:
        backend(llama_server, context_window=2048).generate(long)
    assert too_long.value.prompt_tokens > 2048  # counted by the server's own tokenizer
