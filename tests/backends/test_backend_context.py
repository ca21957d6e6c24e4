"""Prompts over the model's context window: fitted by LLMPolicy, else PromptTooLongError.

Unit tests use the scripted stand-in with a simulated window (words as tokens); the
``integration`` tests use the real SmolLM2-135M (llama.cpp) and a real HotpotQA item whose
finder prompt is longer than the context window.
"""

from __future__ import annotations

import pytest
from support import DATA

from lang_pz.backends import Generation, GenerationRequest, LLMBackend
from lang_pz.error import PromptTooLongError
from lang_pz.policies.llm import FIT_MARGIN_TOKENS, LLMPolicy, shorten_middle
from lang_pz.test import ScriptedBackend

INFO = {"legal_actions": ["up", "down", "stay"]}
LONG = "The question: where is the ball? " + " ".join(f"w{i}" for i in range(3000)) + " The end.\nActions: up, down, stay"


def test_shorten_middle_keeps_both_ends_and_says_so():
    text = "".join(chr(65 + i % 26) for i in range(1000))
    short = shorten_middle(text, 100)
    assert short.startswith(text[:50]) and short.endswith(text[-50:])
    assert "900 characters of the observation left out" in short
    assert shorten_middle(text, 5000) == text
    assert "1000 characters" in shorten_middle(text, 0)


def test_llm_policy_fits_an_observation_longer_than_the_context():
    backend = ScriptedBackend(lambda r: "up", n_ctx=400)
    policy = LLMPolicy("Always push up.", backend)
    whole = policy.build_request(LONG, INFO)
    assert backend.count_tokens(whole) > 400  # would not fit
    decision = policy.decide(LONG, INFO)
    assert decision.action == "up"
    (sent,) = backend.requests
    n = backend.count_tokens(sent)
    assert n <= 400 - sent.max_tokens - FIT_MARGIN_TOKENS
    assert n >= 400 - sent.max_tokens - FIT_MARGIN_TOKENS - 5  # kept as much as fits
    assert "The question: where is the ball?" in sent.prompt and "Actions: up, down, stay" in sent.prompt
    assert "characters of the observation left out to fit the model's context" in sent.prompt
    assert decision.meta["observation_chars_left_out"] > 10000


def test_llm_policy_fits_through_a_role_meter():
    """Training hands policies a RoleMeter over the model, not the model itself."""
    from lang_pz.backends.meter import RoleMeter

    inner = ScriptedBackend(lambda r: "up", n_ctx=400)
    decision = LLMPolicy("Always push up.", RoleMeter(inner, "actor")).decide(LONG, INFO)
    assert decision.action == "up" and decision.meta["observation_chars_left_out"] > 0


def test_llm_policy_fits_through_the_runs_request_limit():
    """Training wraps each model in a RequestLimit under the RoleMeter: it forwarded neither the
    context window nor the token count, so a run's policies sent over-long prompts unfitted."""
    import threading

    from lang_pz.backends.limit import RequestLimit
    from lang_pz.backends.meter import RoleMeter

    inner = ScriptedBackend(lambda r: "up", n_ctx=400)
    wrapped = RoleMeter(RequestLimit(inner, threading.BoundedSemaphore(2)), "actor")
    assert wrapped.context_window == 400 and wrapped.check() is None
    decision = LLMPolicy("Always push up.", wrapped).decide(LONG, INFO)
    assert decision.action == "up" and decision.meta["observation_chars_left_out"] > 0


def test_llm_policy_leaves_a_fitting_observation_whole():
    backend = ScriptedBackend(lambda r: "up", n_ctx=400)
    decision = LLMPolicy("Always push up.", backend).decide("The ball is left.\nActions: up, down, stay", INFO)
    assert decision.meta == {} and "left out" not in backend.requests[0].prompt


def test_llm_policy_whose_policy_text_cannot_fit_raises_prompt_too_long():
    backend = ScriptedBackend(lambda r: "up", n_ctx=400)
    policy = LLMPolicy("Push up " * 300, backend)
    with pytest.raises(PromptTooLongError, match="policy text") as info:
        policy.decide("The ball is left.", INFO)
    assert info.value.context_window == 400 and info.value.prompt_tokens > 400
    assert backend.requests == []  # nothing was sent


class ServerCounts(LLMBackend):
    """A backend that cannot count tokens itself; its 'server' rejects prompts over 300 words
    and says by how much (as llama.cpp's and vLLM's servers do)."""

    prompt_format = "completion"

    def __init__(self) -> None:
        super().__init__()
        self.sent: list[int] = []

    def _generate(self, request: GenerationRequest) -> Generation:
        n = len((request.prompt or "").split())
        self.sent.append(n)
        if n >= 300:
            raise PromptTooLongError("too long", prompt_tokens=n, context_window=300)
        return Generation(text="down")


def test_llm_policy_shortens_from_the_servers_figures():
    backend = ServerCounts()
    decision = LLMPolicy("Always push down.", backend).decide(LONG, INFO)
    assert decision.action == "down" and decision.meta["observation_chars_left_out"] > 0
    assert backend.sent[0] > 3000 and backend.sent[-1] < 300 and len(backend.sent) <= 4


# ------------------------------------------------------------------ the real embedded model


@pytest.fixture(scope="module")
def small_ctx():
    pytest.importorskip("llama_cpp")
    from lang_pz.backends import LlamaCppBackend

    backend = LlamaCppBackend(n_ctx=1024, n_threads=1, cache=False)
    yield backend
    backend.close()


@pytest.mark.integration
def test_embedded_counts_tokens_as_llama_cpp_does(small_ctx):
    from lang_pz.backends import Message

    for req in (
        GenerationRequest(prompt="The ball is far left. Action:", max_tokens=1),
        GenerationRequest(messages=(Message("system", "Be brief."), Message("user", "Hi there")), max_tokens=1),
    ):
        assert small_ctx.generate(req).prompt_tokens == small_ctx.count_tokens(req)


@pytest.mark.integration
def test_embedded_prompt_over_the_context_is_prompt_too_long(small_ctx):
    req = GenerationRequest(prompt="word " * 1500, max_tokens=4)
    with pytest.raises(PromptTooLongError) as info:
        small_ctx.generate(req)
    assert info.value.context_window == 1024 and info.value.prompt_tokens > 1024
    near = GenerationRequest(prompt="word " * 1000, max_tokens=100)  # fits alone, not with max_tokens
    with pytest.raises(PromptTooLongError, match="max_tokens=100"):
        small_ctx.generate(near)


@pytest.mark.integration
@pytest.mark.skipif(not DATA.is_dir(), reason="benchmark data folder not available")
def test_embedded_llm_policy_plays_a_hotpotqa_item_longer_than_the_context(small_ctx):
    import lang_pz
    from lang_pz.rollout import rollout

    env = lang_pz.make("tasks/hotpotqa-v0", data_dir=str(DATA), index=125)  # 11,977-character finder prompt
    env.reset(seed=0)
    whole = LLMPolicy("Name the evidence.", small_ctx).build_request(env.observe("finder"), env.infos["finder"])
    assert small_ctx.count_tokens(whole) > 1024
    traj = rollout(env, {a: LLMPolicy("Name the evidence, then answer.", small_ctx) for a in env.possible_agents}, seed=0)
    finder = [s for s in traj.steps if s.agent == "finder"]
    assert finder and finder[0].meta["observation_chars_left_out"] > 5000
    assert len(traj.steps) == len(env.possible_agents)  # the episode was played to its end
