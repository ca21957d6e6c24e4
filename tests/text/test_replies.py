"""Reply formats (lang_pz.text.replies): every sentence of an env's stated format parses in that
env; the GBNF grammars compile in llama.cpp; policies and backends carry them (and nothing
changes for requests without one); the embedded model decodes under them."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import any_sandbox

import lang_pz
from lang_pz.backends import GenerationRequest
from lang_pz.backends.cache import request_fields
from lang_pz.backends.openai_requests import request_body
from lang_pz.policies import LLMPolicy
from lang_pz.test import ScriptedBackend
from lang_pz.text import replies
from lang_pz.text.replies import INFO_KEY, ReplyFormat

ROOT = Path(__file__).resolve().parents[2]
TASKS = ["tasks/hotpotqa-v0", "tasks/gsm8k-v0", "tasks/math500-v0", "tasks/mbpp-v0", "tasks/humaneval-v0"]
TWO_TURN_TASKS = TASKS[:3]  # a finder/answerer or solver/verifier pair per episode


def _turns(env_id: str):
    """(env, agent, its info) at each turn of a demo episode played with the format's example."""
    env = lang_pz.make(env_id, source="demo", **any_sandbox(env_id))
    for seed in (0, 1):
        env.reset(seed=seed)
        for agent in env.agent_iter():
            _, _, te, tr, info = env.last()
            if te or tr:
                env.step(None)
                continue
            yield env, agent, info
            env.step(ReplyFormat.from_info(info).example)


def _formats() -> list[tuple[str, str, ReplyFormat]]:
    return [(env_id, agent, ReplyFormat.from_info(info)) for env_id in TASKS for _, agent, info in _turns(env_id)]


def test_parts_render_the_same_language_in_both_forms():
    fmt = ReplyFormat.of(
        replies.sequence(
            replies.literal('Say "hi": '), replies.one_of(["a.b", "c"]), replies.repeat(replies.literal("!"), 0, 2)
        ),
        'Say "hi": c!',
    )
    assert fmt.matches('Say "hi": a.b') and fmt.matches('Say "hi": c!!')
    assert not fmt.matches('Say "hi": aXb') and not fmt.matches('Say "hi": c!!!')  # "." is no wildcard
    assert fmt.max_chars == 10 + 3 + 2
    assert ReplyFormat.from_info({INFO_KEY: fmt.as_info()}) == fmt
    assert ReplyFormat.from_info({}) is None and ReplyFormat.from_info({INFO_KEY: "x"}) is None
    with pytest.raises(ValueError, match="not a reply"):
        ReplyFormat.of(replies.literal("yes"), "no")


@pytest.mark.parametrize("env_id", TASKS)
def test_every_task_turn_states_its_reply_format(env_id):
    seen = {agent for _, agent, info in _turns(env_id) if ReplyFormat.from_info(info) is not None}
    env = lang_pz.make(env_id, source="demo", **any_sandbox(env_id))
    assert seen == set(env.possible_agents)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_every_reply_of_a_stated_format_parses_in_its_env(data):
    env_id = data.draw(st.sampled_from(TASKS))
    env = lang_pz.make(env_id, source="demo", **any_sandbox(env_id))
    env.reset(seed=data.draw(st.integers(0, 1)))
    for agent in env.agent_iter():
        _, _, te, tr, info = env.last()
        if te or tr:
            env.step(None)
            continue
        fmt = ReplyFormat.from_info(info)
        reply = data.draw(st.from_regex(fmt.regex, fullmatch=True), label=agent)
        env.step(reply)
        assert env.infos[agent]["parse_error"] is None, (env_id, agent, reply, env.infos[agent]["parse_error"])


def test_every_stated_grammar_compiles_in_llama_cpp():
    """Each format's grammar (as the embedded model and llama.cpp's server get it, and as
    llama.cpp's server builds it from the ``json_schema`` mode's schema) is parsed by llama.cpp
    when a reply is sampled under it (``LlamaGrammar.from_string`` parses nothing: llama.cpp
    refuses a bad grammar only then, ending the process)."""
    pytest.importorskip("llama_cpp")
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    from lang_pz.backends.openai_requests import reply_schema
    from lang_pz.envs.textarena.adapter import BRACKETED_FORMAT, MOVE_FORMATS

    formats = {fmt for _, _, fmt in _formats()} | {BRACKETED_FORMAT, *MOVE_FORMATS.values()}
    grammars = sorted(
        {fmt.gbnf for fmt in formats}
        | {fmt.closed_by('"') for fmt in formats}
        | {json_schema_to_gbnf(json.dumps(reply_schema(fmt.regex))) for fmt in formats}
    )
    # in a subprocess: llama.cpp ends the process on a grammar it cannot parse
    code = textwrap.dedent("""
        import json, sys, llama_cpp
        from lang_pz.backends.llama_cpp import default_model_path
        llm = llama_cpp.Llama(model_path=str(default_model_path()), n_ctx=256, n_threads=1, verbose=False)
        grammars = json.load(sys.stdin)
        for g in grammars:
            llm.create_completion("Reply:", grammar=llama_cpp.LlamaGrammar.from_string(g, verbose=False), max_tokens=2)
        print("ok", len(grammars))
    """)
    out = subprocess.run(
        [sys.executable, "-c", code], input=json.dumps(grammars), capture_output=True, text=True, cwd=ROOT, timeout=600
    )
    assert out.returncode == 0 and out.stdout.startswith("ok"), out.stderr[-1500:]


def test_code_replies_of_the_format_are_python():
    """Every tester reply of the format compiles (a measured reply with ``01``, a syntax error in
    Python 3, did not parse before the numbers lost their leading zeros)."""
    env = lang_pz.make("tasks/mbpp-v0", source="demo", **any_sandbox("tasks/mbpp-v0"))
    env.reset(seed=0)
    fmt = env.reply_format("tester")
    assert not fmt.matches("assert f(15, 01, 2012) == True".replace("f", env.function_name(env.item)))

    @settings(max_examples=200, deadline=None)
    @given(st.from_regex(fmt.regex, fullmatch=True))
    def compiles(reply):
        compile(reply, "<reply>", "exec")

    compiles()


def test_textarena_games_that_list_no_moves_state_their_move_format():
    pytest.importorskip("textarena")
    from lang_pz.envs.textarena.adapter import MOVE_FORMATS

    env = lang_pz.make("textarena/nim-v0", max_turns=30)
    env.reset(seed=0)
    seen = 0
    for agent in env.agent_iter(12):
        _, _, te, tr, info = env.last()
        if te or tr:
            env.step(None)
            continue
        fmt = ReplyFormat.from_info(info)
        assert fmt == MOVE_FORMATS["Nim-v0"] and "legal_actions" not in info
        env.step(["[0 1]", "[2 1]", "[1 1]", "[12 3]"][seen % 4])  # legal or not, each parses
        assert env.infos[agent]["parse_error"] is None
        seen += 1
    assert seen >= 4
    listed = lang_pz.make("textarena/tictactoe-v0", max_turns=30)
    listed.reset(seed=0)
    assert INFO_KEY not in listed.infos[listed.agent_selection] and listed.infos[listed.agent_selection]["legal_actions"]


def test_policy_sends_the_format_and_nothing_new_without_one():
    backend = ScriptedBackend(lambda r: "Answer: Paris")
    policy = LLMPolicy("Answer briefly.", backend)
    env_id, agent, fmt = next((e, a, f) for e, a, f in _formats() if a == "answerer")
    info = {INFO_KEY: fmt.as_info()}
    assert policy.decide({"text": "Question: capital of France?"}, info).action == "Answer: Paris"
    sent = backend.requests[-1]
    assert sent.grammar == fmt.closed_by('"') and sent.pattern == fmt.regex
    assert sent.max_tokens >= fmt.max_chars
    plain = policy.build_request({"text": "Question: capital of France?"}, {})
    assert plain.grammar is None and plain.pattern is None
    assert "grammar" not in request_fields(plain) and "pattern" not in request_fields(plain)  # cache keys as before
    chat = LLMPolicy("Answer briefly.", backend, prompt_format="chat").build_request({"text": "Q"}, info)
    assert chat.grammar == fmt.gbnf
    game = policy.build_request({"text": "Board"}, {"legal_actions": ["1", "2"], INFO_KEY: fmt.as_info()})
    assert game.choices == ("1", "2") and game.grammar is None  # finite action sets stay choices


def test_openai_compatible_requests_carry_the_grammar_where_the_server_takes_one():
    fmt = _formats()[0][2]
    completion = GenerationRequest(prompt="P", grammar=fmt.gbnf, pattern=fmt.regex)
    chat = GenerationRequest(messages=(lang_pz.backends.Message("user", "Q"),), grammar=fmt.gbnf, pattern=fmt.regex)
    assert request_body(completion, "m", "json_object", "e")[1]["grammar"] == fmt.gbnf  # llama.cpp's server
    assert request_body(chat, "m", "json_object", "e")[1]["grammar"] == fmt.gbnf
    for request in (completion, chat):  # OpenAI / vLLM schema mode: free text, no error
        body = request_body(request, "m", "json_schema", "e")[1]
        assert "grammar" not in body and "response_format" not in body
    with pytest.raises(ValueError, match="not both"):
        GenerationRequest(prompt="P", grammar=fmt.gbnf, choices=("a",))


@pytest.mark.integration
@pytest.mark.parametrize("env_id", TWO_TURN_TASKS)
def test_embedded_model_replies_under_the_format_parse(env_id):
    from lang_pz.backends import LlamaCppBackend

    backend = LlamaCppBackend(cache=False, n_threads=1)
    policy = LLMPolicy("Choose the action that helps your team most.", backend)
    env = lang_pz.make(env_id, source="demo", **any_sandbox(env_id))
    env.reset(seed=0)
    replies_seen = 0
    for agent in env.agent_iter():
        obs, _, te, tr, info = env.last()
        if te or tr:
            env.step(None)
            continue
        reply = policy.decide(obs, info).action
        assert ReplyFormat.from_info(info).matches(reply), reply
        env.step(reply)
        assert env.infos[agent]["parse_error"] is None
        replies_seen += 1
    assert replies_seen == 2
    backend.close()
