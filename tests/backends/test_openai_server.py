"""The OpenAI-compatible backend against a REAL local server: llama-cpp-python's own
OpenAI-compatible HTTP server serving the embedded model on 127.0.0.1 (no network)."""

from __future__ import annotations

import json

import pytest
from support import any_sandbox

import lang_pz
from lang_pz.backends import GenerationRequest, Message, OpenAIBackend
from lang_pz.policies import LLMPolicy
from lang_pz.rollout import rollout

pytestmark = pytest.mark.integration
pytest.importorskip("uvicorn", reason="needs llama-cpp-python[server] (the dev extra)")


@pytest.fixture
def server_url(llama_server):
    """The session's real llama.cpp server (tests/backends/conftest.py)."""
    return llama_server


@pytest.fixture
def backend(server_url):
    return OpenAIBackend(
        "smollm2",
        base_url=server_url,
        api_key="sk-local-test-KEY",
        structured_output="json_object",
        cache=False,
        max_attempts=2,
        backoff_s=0.1,
        timeout_s=300,  # a fitted prompt fills the 2,048-token context: minutes of prompt processing on a busy 2-core machine
    )


def test_choices_and_json_schema_through_a_real_server(backend):
    g = backend.generate(
        GenerationRequest(
            messages=(Message("user", "Pick one: up or down?"),), choices=("up", "down", "stay"), max_tokens=16
        )
    )
    assert g.text in ("up", "down", "stay") and g.prompt_tokens > 0
    schema = {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}
    g = backend.generate(
        GenerationRequest(messages=(Message("user", "Give x=3 as JSON"),), json_schema=schema, max_tokens=24)
    )
    assert isinstance(json.loads(g.text)["x"], int)
    assert "KEY" not in repr(backend)


def test_a_pistonball_episode_with_llm_agents_over_http(backend):
    env = lang_pz.make("butterfly/pistonball-v0", n_pistons=5, hold=25)
    traj = rollout(env, {a: LLMPolicy("Always push up.", backend) for a in env.possible_agents}, seed=0)
    assert len(traj.steps) == 25 and all(s.parse_error is None for s in traj.steps)
    assert backend.usage.calls == 25 and backend.usage.prompt_tokens > 0


def test_a_prompt_over_the_servers_context_is_fitted_from_its_reply(backend):
    """llama-cpp-python's server (n_ctx 2048) rejects a 3,000-word observation with its counts;
    LLMPolicy shortens the observation from them and the decision is made."""
    from lang_pz.error import PromptTooLongError

    long_obs = "The ball is far left. " + " ".join(f"pebble{i}" for i in range(3000)) + "\nActions: up, down, stay"
    with pytest.raises(PromptTooLongError) as info:
        backend.generate(GenerationRequest(messages=(Message("user", long_obs),), max_tokens=4))
    assert info.value.context_window == 2048 and info.value.prompt_tokens > 2048
    decision = LLMPolicy("Always push up.", backend).decide(long_obs, {"legal_actions": ["up", "down", "stay"]})
    assert decision.action in ("up", "down", "stay") and decision.meta["observation_chars_left_out"] > 0


def _task_turn(env_id: str):
    """(env, agent, observation, info) at the first turn of a demo episode of ``env_id``."""
    env = lang_pz.make(env_id, source="demo", **any_sandbox(env_id))
    env.reset(seed=0)
    agent = env.agent_selection
    obs, _, _, _, info = env.last()
    return env, agent, obs, info


@pytest.mark.parametrize(
    ("mode", "prompt_format"), [("llama_cpp", "completion"), ("llama_cpp", "chat"), ("json_schema", "chat")]
)
@pytest.mark.parametrize("env_id", ["tasks/gsm8k-v0", "tasks/hotpotqa-v0", "tasks/mbpp-v0"])
def test_an_envs_reply_format_constrains_a_real_llama_cpp_server(server_url, env_id, mode, prompt_format):
    """The env's reply format through the server: the GBNF ``grammar`` field (completion and
    chat), or a ``{"reply": ...}`` JSON schema with the format's pattern, which the server turns
    into a grammar itself (response_format json_object); every reply is in the format and the
    env parses it (free text, the same prompts, parsed 0 of 9 times: benchmarks/results/parse_rate.md)."""
    from lang_pz.text.replies import ReplyFormat

    backend = OpenAIBackend(
        "smollm2",
        base_url=server_url,
        structured_output="json_object",
        constrained_decoding=mode,
        prompt_format=prompt_format,
        cache=False,
        max_attempts=2,
        backoff_s=0.1,
    )
    env, agent, obs, info = _task_turn(env_id)
    fmt = ReplyFormat.from_info(info)
    reply = LLMPolicy("Choose the action that helps your team most.", backend).decide(obs, info).action
    assert fmt.matches(reply), reply
    env.step(reply)
    assert env.infos[agent]["parse_error"] is None
    assert backend.usage.calls == 1 and backend.retries.total() == 0
