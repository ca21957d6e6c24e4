"""Policies: Decision/Policy, RandomPolicy, LLMPolicy prompts, and measured adherence.

Unit tests use :class:`ScriptedBackend`, a scripted LLM stand-in (it measures nothing). The
``integration`` test runs the real embedded SmolLM2-135M and checks that it follows
unconditional piston policies at least 90% of the time in the completion prompt.
"""

from __future__ import annotations

import random
from dataclasses import FrozenInstanceError

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lang_pz.backends.base import Generation, GenerationRequest, LLMBackend
from lang_pz.error import BackendError, LangPZError
from lang_pz.evaluation.adherence import (
    PISTON_ACTIONS,
    PISTON_POLICIES,
    adherence_table,
    measure_adherence,
    pistonball_observations,
)
from lang_pz.policies.base import Decision, Policy
from lang_pz.policies.llm import NUMBER_EXAMPLES, LLMPolicy, choice_examples
from lang_pz.policies.random import RandomPolicy
from lang_pz.test import ScriptedBackend

OBS = (
    "You are piston_2 (of 5). Your height: 30 of 64 px. Left neighbour: 12 px lower than you. "
    "Right neighbour: 4 px higher than you. Ball: 40 px to your left, 18 px above your top, "
    "moving right and down.\nActions: down, stay, up"
)
DISCRETE = {"legal_actions": ["down", "stay", "up"]}
CONTINUOUS = {"action_range": [-1.0, 1.0]}
GLOBAL_STATE = "GLOBAL-STATE: ball x=311 y=402, pistons 427 431 455 470 491"


def _text(req: GenerationRequest) -> str:
    return req.prompt if req.prompt is not None else "\n".join(m.content for m in req.messages or ())


# -- Decision / Policy ---------------------------------------------------------------------


def test_decision_is_frozen_and_call_returns_the_action():
    class Fixed(Policy):
        def decide(self, observation, info=None):
            return Decision(action="up", raw_output=" up")

    d = Fixed().decide("x")
    with pytest.raises(FrozenInstanceError):
        d.action = "down"  # type: ignore[misc]
    assert Fixed()({"text": "x"}, {}) == "up"
    assert (d.prompt_tokens, d.completion_tokens, d.latency_s) == (0, 0, 0.0)


# -- RandomPolicy --------------------------------------------------------------------------


def test_random_policy_is_uniform_over_legal_actions_and_seeded():
    acts = [RandomPolicy(seed=3)(OBS, DISCRETE) for _ in range(3)]
    assert acts == [RandomPolicy(seed=3)(OBS, DISCRETE) for _ in range(3)]
    pol = RandomPolicy(seed=0)
    counts = dict.fromkeys(DISCRETE["legal_actions"], 0)
    for _ in range(3000):
        counts[pol(OBS, DISCRETE)] += 1
    assert all(900 < c < 1100 for c in counts.values()), counts


def test_random_policy_ignores_global_random_state():
    a = RandomPolicy(seed=1)
    random.seed(0)
    np.random.seed(0)
    first = [a(OBS, DISCRETE) for _ in range(20)]
    b = RandomPolicy(seed=1)
    random.seed(99)
    np.random.seed(99)
    assert [b(OBS, DISCRETE) for _ in range(20)] == first


@settings(max_examples=50, deadline=None)
@given(low=st.floats(-100, 100), width=st.floats(0, 100), seed=st.integers(0, 2**16))
def test_random_policy_continuous_stays_in_range(low, width, seed):
    high = low + width
    x = float(RandomPolicy(seed=seed)("obs", {"action_range": [low, high]}))
    assert low - 1e-3 <= x <= high + 1e-3


def test_random_policy_names_what_is_missing():
    with pytest.raises(LangPZError, match="legal_actions.*action_range.*keys \\['foo'\\]"):
        RandomPolicy(seed=0)(OBS, {"foo": 1})
    with pytest.raises(LangPZError, match="legal_actions"):
        RandomPolicy(seed=0)(OBS, None)
    with pytest.raises(LangPZError, match="empty"):
        RandomPolicy(seed=0)(OBS, {"legal_actions": []})


# -- LLMPolicy prompts ---------------------------------------------------------------------


def test_completion_prompt_holds_policy_and_own_observation_only():
    llm = ScriptedBackend(["up"])  # scripted stand-in
    pol = LLMPolicy("Always push up.", llm)
    info = {**DISCRETE, "global_state": GLOBAL_STATE, "other_agents": {"piston_3": "obs of 3"}}
    d = pol.decide({"text": OBS}, info)
    assert d.action == "up" and d.raw_output == "up"
    req = llm.requests[0]
    assert req.messages is None and req.prompt is not None
    assert req.prompt.endswith(f'Policy: Always push up.\nObservation: {OBS}\nPolicy: Always push up.\nAction = "')
    # decentralised execution: nothing but the policy, the worked examples and its own observation
    assert GLOBAL_STATE not in req.prompt and "obs of 3" not in req.prompt
    assert req.choices == ("down", "stay", "up")
    assert req.json_schema is None and req.temperature == 0.0 and req.seed == 0


def test_choices_carry_the_legal_actions_in_env_order():
    llm = ScriptedBackend(["8"])
    info = {"legal_actions": ["0", "3", "8"]}
    assert LLMPolicy("Take the corner.", llm)({"text": "Board...\nActions: 0, 3, 8"}, info) == "8"
    assert llm.requests[0].choices == ("0", "3", "8")


def test_actions_line_is_added_when_the_observation_lacks_one():
    llm = ScriptedBackend(["stay"])
    LLMPolicy("Stay.", llm)("Ball far left.", DISCRETE)
    assert "Observation: Ball far left.\nActions: down, stay, up\nPolicy: Stay." in llm.requests[0].prompt


def test_chat_format_uses_system_and_user_messages():
    llm = ScriptedBackend(["down"], prompt_format="chat")
    pol = LLMPolicy("Always go down.", llm)
    assert pol.prompt_format == "chat"
    pol(OBS, {**DISCRETE, "global_state": GLOBAL_STATE})
    req = llm.requests[0]
    assert req.prompt is None
    system, user = req.messages
    assert system.role == "system" and "Always go down." in system.content
    assert user.role == "user" and user.content == OBS
    assert GLOBAL_STATE not in _text(req)
    assert req.choices == ("down", "stay", "up")


def test_prompt_format_override_beats_the_backend():
    llm = ScriptedBackend(["up"], prompt_format="chat")
    LLMPolicy("Up.", llm, prompt_format="completion")(OBS, DISCRETE)
    assert llm.requests[0].prompt is not None
    with pytest.raises(ValueError, match="prompt_format"):
        LLMPolicy("Up.", llm, prompt_format="json")  # type: ignore[arg-type]


def test_continuous_asks_for_a_number_and_returns_the_text():
    llm = ScriptedBackend([" 0.5"])
    d = LLMPolicy("Always push up half way.", llm, max_tokens=8)(
        OBS.replace("down, stay, up", "a number from -1 to 1"), CONTINUOUS
    )
    assert d == "0.5"
    req = llm.requests[0]
    assert req.choices is None and req.json_schema is None
    assert req.max_tokens == 8 and '"' in req.stop and "\n" in req.stop
    assert "a number from -1 to 1" in req.prompt
    assert "Always set the dial to 7." in req.prompt  # the numeric worked examples


def test_free_text_without_action_info_is_bounded():
    llm = ScriptedBackend(["hello there"])
    d = LLMPolicy("Greet.", llm, max_tokens=5).decide("A visitor.", {})
    assert d.action == "hello there"
    assert llm.requests[0].max_tokens == 5 and llm.requests[0].choices is None


def test_policy_text_is_an_editable_parameter():
    llm = ScriptedBackend(["up", "down"])
    pol = LLMPolicy("Always push up.", llm)
    pol(OBS, DISCRETE)
    pol.policy = "Always go down."
    pol(OBS, DISCRETE)
    assert "Policy: Always go down." in llm.requests[1].prompt
    assert "Always push up." not in llm.requests[1].prompt


@pytest.mark.parametrize("actions", [["down", "stay", "up"], ["rock", "paper"], ["1", "2", "3", "4", "5", "6", "7"], ["go"]])
def test_worked_examples_use_the_real_action_words(actions):
    examples = choice_examples(actions)
    picks = [a for _, _, a in examples]
    k = min(3, len(actions))
    assert len(picks) == 2 * k and len(set(picks[:k])) == len(set(picks[k:])) == k  # each round k words
    assert picks[0] == actions[-1] and picks[k] == actions[0]  # two orders: the last word first, then the first
    assert len({p for p, _, _ in examples}) == len(examples)  # each in its own phrasing
    for policy, obs, action in examples:
        assert action in actions and action in policy  # obviously follows its own policy
        assert obs.endswith("Actions: " + ", ".join(actions))
    assert len({a for _, _, a in NUMBER_EXAMPLES}) == 2


def test_worked_examples_reject_an_empty_action_set():
    with pytest.raises(ValueError, match="at least one action"):
        choice_examples([])


def test_reply_outside_choices_is_an_error():
    class Liar(LLMBackend):
        prompt_format = "completion"

        def _generate(self, request):
            return Generation(text="sideways")

    with pytest.raises(BackendError, match="sideways"):
        LLMPolicy("Up.", Liar())(OBS, DISCRETE)


def test_decision_reports_tokens_and_latency():
    d = LLMPolicy("Always push up.", ScriptedBackend(["up"])).decide(OBS, DISCRETE)
    assert d.prompt_tokens > 0 and d.completion_tokens == 1 and d.latency_s >= 0


# -- adherence -----------------------------------------------------------------------------

OBSERVATIONS = pistonball_observations(2)


def test_pistonball_observations_are_real_and_deterministic():
    obs = pistonball_observations(8)
    assert len(obs) == 8 == len(set(obs))
    assert all(o.startswith("You are piston_") and o.endswith("Actions: down, stay, up") for o in obs)
    assert obs == pistonball_observations(8)


def test_measure_adherence_with_a_scripted_stand_in():
    def obedient(req):  # reads the last policy line and answers the action it names
        policy = req.prompt.rsplit("Policy: ", 1)[1]
        return next(a for a in req.choices if a in policy.lower())

    assert measure_adherence(ScriptedBackend(obedient), PISTON_POLICIES, OBSERVATIONS[:2], PISTON_ACTIONS) == 1.0
    table = adherence_table(ScriptedBackend(lambda req: "down"), PISTON_POLICIES, OBSERVATIONS[:2], PISTON_ACTIONS)
    assert table.rate == pytest.approx(1 / 3)
    assert table.per_policy["Always go down."] == 1.0 and table.per_policy["Always push up."] == 0.0
    with pytest.raises(ValueError, match="sideways"):
        measure_adherence(ScriptedBackend([]), {"Go sideways.": "sideways"}, ["x"], PISTON_ACTIONS)


@pytest.mark.integration
def test_embedded_model_follows_unconditional_piston_policies():
    """Four texts x two observations (the full table of 21 x 8 is benchmarks/actor_adherence.py):
    every decision plays the text's word. Before each action word was shown twice in the worked
    examples, "Always play up." (the optimiser's phrasing) was played as down at 7 of 8
    observations (benchmarks/results/actor_adherence.md). One llama.cpp thread: with the
    default threads these 8 decisions took 145 s on 2 cores under load ~9, with one 34 s."""
    from lang_pz.backends import make_backend

    names = [
        "Always play up.",
        "Play up at every step.",
        "Lower yourself all the time, going down.",  # free phrasings fixed action words failed
        "Hold your position: stay.",
    ]
    policies = {p: PISTON_POLICIES[p] for p in names}
    llm = make_backend("embedded", cache=False, n_threads=1)
    try:
        table = adherence_table(llm, policies, pistonball_observations(2), PISTON_ACTIONS)
    finally:
        llm.close()
    assert table.actions == {p: [w, w] for p, w in policies.items()}, table.actions


@pytest.mark.parametrize("policy, backend", [("", "ok"), (None, "ok"), ("Always push up.", "embedded")])
def test_llm_policy_rejects_bad_arguments_with_the_fix(policy, backend):
    from lang_pz.test import ScriptedBackend

    real = ScriptedBackend([]) if backend == "ok" else backend
    with pytest.raises((ValueError, TypeError), match="policy must be|make_backend"):
        LLMPolicy(policy, real)
