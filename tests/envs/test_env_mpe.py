"""MPE2's particle worlds: the text carries the agent's own numbers in words, messages are words
the listener reads, continuous actions are named components, and the scripted team beats random."""

from __future__ import annotations

import re

import numpy as np
import pytest

import lang_pz
from lang_pz.error import ActionParseError
from lang_pz.policies import RandomPolicy
from lang_pz.text.components import Components

pytest.importorskip("mpe2")


def test_spread_text_has_each_landmark_and_teammate_from_the_agents_own_observation():
    env = lang_pz.make("mpe/simple_spread-v0")
    obs, _ = env.reset(seed=4)
    raw = env.env.unwrapped.observe("agent_0")
    text = obs["agent_0"]["text"]
    assert f"You are at ({raw[2]:+.2f}, {raw[3]:+.2f})" in text
    for i in range(3):
        dx, dy = raw[4 + 2 * i : 6 + 2 * i]
        want = f"landmark {i}: {abs(dx):.2f} {'right' if dx >= 0 else 'left'}, {abs(dy):.2f} {'up' if dy >= 0 else 'down'}"
        assert want in text, (want, text)
    for j, name in enumerate(["agent_1", "agent_2"]):
        dx, dy = raw[10 + 2 * j : 12 + 2 * j]
        assert f"{name}: {abs(dx):.2f} {'right' if dx >= 0 else 'left'}" in text
    free = re.findall(r"landmark (\d): .*; free", text)
    assert free  # at least the landmark nearest to me among those no one is closer to


def test_the_speakers_word_is_what_the_listener_reads():
    env = lang_pz.make("mpe/simple_speaker_listener-v0", strict=True)
    obs, infos = env.reset(seed=1)
    goal = re.search(r"must reach the (\w+) landmark", obs["speaker_0"]["text"]).group(1)
    assert "The speaker has said nothing yet." in obs["listener_0"]["text"]
    assert infos["speaker_0"]["legal_actions"] == ["red", "green", "blue"]
    assert goal not in obs["listener_0"]["text"].split("Landmarks")[0]  # the listener is not told directly
    obs, *_ = env.step({"speaker_0": f"I say {goal}", "listener_0": "stay"})
    assert f"The speaker says: {goal}." in obs["listener_0"]["text"]


def test_reference_moves_and_words_combine():
    env = lang_pz.make("mpe/simple_reference-v0", strict=True)
    _, infos = env.reset(seed=0)
    assert len(infos["agent_0"]["legal_actions"]) == 50 and "up and say green" in infos["agent_0"]["legal_actions"]
    obs, _, _, _, infos = env.step({"agent_0": "up and say green", "agent_1": "left and say red"})
    assert infos["agent_0"]["action"] == 4 + 5 * 1  # MPE: move + 5 * word
    assert "agent_0 says: green." in obs["agent_1"]["text"]


def test_continuous_actions_are_named_components_with_reasons():
    env = lang_pz.make("mpe/simple_spread-v0", continuous_actions=True, strict=True)
    obs, infos = env.reset(seed=0)
    assert [c[0] for c in infos["agent_0"]["action_components"]] == ["none", "left", "right", "down", "up"]
    assert "e.g. right=0.8 up=0.3. Components left out are 0." in obs["agent_0"]["text"]
    _, _, _, _, infos = env.step({"agent_0": "right=0.8 up=0.3", "agent_1": "0 0 1 0 0", "agent_2": "left: 1"})
    assert infos["agent_0"]["action"] == pytest.approx([0, 0, 0.8, 0, 0.3])
    assert infos["agent_2"]["action"] == pytest.approx([0, 1, 0, 0, 0])
    for reply, reason in [
        ("jump=1", "unknown component(s) ['jump']"),
        ("right=1.5", "right=1.5 is outside"),
        ("right=1 right=0", "given twice"),
        ("go right", "found 0 number(s)"),
    ]:
        with pytest.raises(ActionParseError) as exc:
            env.step({"agent_0": reply, "agent_1": "up=1", "agent_2": "up=1"})
        assert reason in exc.value.reason, exc.value.reason


def test_generic_wrapper_names_the_numbers_of_any_box_action():
    from mpe2 import simple_spread_v3

    from lang_pz.text.adapter import LanguageAdapter
    from lang_pz.wrappers import LanguageParallelWrapper

    # without an adapter an MPE2 env gets its family's (MPE's component names, left-out ones 0)
    family = LanguageParallelWrapper(simple_spread_v3.parallel_env(continuous_actions=True))
    assert "Write name=value for each of none (0 to 1), left (0 to 1)" in family.reset(seed=0)[0]["agent_0"]["text"]
    # the generic adapter names the numbers of any Box action a0, a1 ...
    env = LanguageParallelWrapper(simple_spread_v3.parallel_env(continuous_actions=True), LanguageAdapter(), strict=True)
    obs, infos = env.reset(seed=0)
    assert "Write name=value for each of a0 (0 to 1), a1 (0 to 1)" in obs["agent_0"]["text"]
    with pytest.raises(ActionParseError, match="missing component"):
        env.step(dict.fromkeys(env.agents, "a0=1"))
    _, _, _, _, infos = env.step(dict.fromkeys(env.agents, "a0=0 a1=0 a2=1 a3=0 a4=0"))
    assert infos["agent_1"]["action"] == pytest.approx([0, 0, 1, 0, 0])


@pytest.mark.parametrize("seed", range(5))
def test_random_policy_writes_components_the_env_accepts(seed):
    info = {"action_components": [["left", 0.0, 1.0], ["right", -2.0, 2.0], ["spin", -np.inf, np.inf]]}
    text = RandomPolicy(seed=seed)("obs", info)
    comps = Components(("left", "right", "spin"), (0.0, -2.0, -np.inf), (1.0, 2.0, np.inf))
    values = comps.parse(text)
    assert 0 <= values[0] <= 1 and -2 <= values[1] <= 2 and np.isfinite(values[2])


def test_scripted_team_beats_random_on_every_scenario():
    from lang_pz.policies.mpe import MPEScriptedPolicy
    from lang_pz.rollout import rollout

    for env_id, kwargs in [
        ("mpe/simple_spread-v0", {}),
        ("mpe/simple_spread-v0", {"continuous_actions": True}),
        ("mpe/simple_speaker_listener-v0", {}),
        ("mpe/simple_reference-v0", {}),
    ]:
        env = lang_pz.make(env_id, max_cycles=25, **kwargs)
        totals = {}
        for name, make in (("scripted", MPEScriptedPolicy), ("random", lambda: RandomPolicy(seed=0))):
            returns = []
            for seed in range(3):
                traj = rollout(env, {a: make() for a in env.possible_agents}, seed=seed)
                returns.append(sum(traj.returns.values()))
            totals[name] = float(np.mean(returns))
        assert totals["scripted"] > totals["random"], (env_id, kwargs, totals)
