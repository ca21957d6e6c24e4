"""The own-policy critic (lang_pz.critics.own) and its text reader (lang_pz.critics.intent).

The constructed case, a relay of two agents (``Relay``): ``a``'s text says "Always push." and it
waits at step 1 (a deviation; pushing there earns 1); ``b``'s text says "Always wait." and it
waits, as told, though pushing at step 2 would have earned 3 (a missed rescue). Re-runs of other
choices credit the rescuer; the own-policy critic blames the agent that deviated, and nobody
when nobody deviated.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from pettingzoo import ParallelEnv

import lang_pz
from lang_pz.critics.counterfactual import NO_CHANGE, OWN_POLICY, Counterfactual
from lang_pz.critics.difference import DifferenceCritic
from lang_pz.critics.intent import intent, read_policy
from lang_pz.critics.own import OwnPolicyCritic, deviations, make_own_policy_critic
from lang_pz.critics.search import local_runner
from lang_pz.critics.windows import window_probes
from lang_pz.error import InvalidKwargError, LangPZError
from lang_pz.evaluation.bases import BASE_TEXTS, base_factory
from lang_pz.evaluation.cases import draw_case
from lang_pz.policies.faulty import FaultyPolicy
from lang_pz.policies.scripted import ConstantPolicy
from lang_pz.rollout import rollout

WORDS = ["push", "wait"]


class Relay(ParallelEnv):
    """Two agents, three steps: ``a`` pushing at step 1 earns 1, ``b`` pushing at step 2 earns 3
    (paid to ``a`` at the end: a team reward), nothing else counts."""

    metadata = {"name": "relay_v0"}
    possible_agents = ["a", "b"]

    def reset(self, seed=None, options=None):
        self.agents, self.t, self.value = list(self.possible_agents), 0, 0.0
        return self._obs(), {x: {"legal_actions": list(WORDS)} for x in self.agents}

    def _obs(self):
        return {x: {"text": f"Step {self.t}. Actions: push, wait"} for x in self.agents}

    def step(self, actions):
        if self.t == 1 and actions["a"] == "push":
            self.value = max(self.value, 1.0)
        if self.t == 2 and actions["b"] == "push":
            self.value = max(self.value, 3.0)
        self.t += 1
        done = self.t == 3
        rewards = {"a": self.value if done else 0.0, "b": 0.0}
        obs, infos = self._obs(), {x: {"legal_actions": list(WORDS), "action": actions[x]} for x in self.agents}
        flags = dict.fromkeys(self.agents, done)
        if done:
            self.agents = []
        return obs, rewards, flags, dict(flags), infos


TEXTS = {"a": "Always push.", "b": "Always wait."}


def relay(deviates: bool):
    env = Relay()
    a = ConstantPolicy("push")
    team = {"a": FaultyPolicy(a, "harmful", [1], action="wait") if deviates else a, "b": ConstantPolicy("wait")}
    return env, team, rollout(env, team, seed=0)


def test_a_deviation_is_blamed_and_a_missed_rescue_is_not():
    env, team, traj = relay(deviates=True)
    assert traj.team_return == 0.0 and deviations(traj, TEXTS) == {"a": {1: "push"}, "b": {}}
    critic = OwnPolicyCritic(texts=TEXTS)
    found = critic.search(traj, local_runner(env, team, traj))
    assert [(p.agents, p.replacement, p.at_steps, p.delta) for p in found.probes] == [
        ((), NO_CHANGE, None, 0.0),
        (("a",), OWN_POLICY, (1,), 1.0),
    ]
    report = critic.assess(traj, None, found.probes)
    assert report.verdict == ["a"] and report.mode == "own_policy"
    assert report.credits["a"].credit == -1.0 and report.credits["a"].steps == [1]  # its own step 1
    assert report.credits["b"].credit == 0.0 and "played what its text says" in report.credits["b"].explanation
    # re-runs of other choices name the rescuer: b pushing at step 2 gains 3, a pushing at step 1 gains 1
    other = window_probes(env, team, traj, window=1)
    assert DifferenceCritic().assess(traj, None, other).verdict == ["b"]


def test_a_rule_following_team_is_never_blamed():
    env, team, traj = relay(deviates=False)
    critic = make_own_policy_critic(texts=TEXTS)
    found = critic.search(traj, local_runner(env, team, traj))
    assert found.reruns == 1  # the no-change re-run only: nobody deviated
    report = critic.assess(traj, None, found.probes)
    assert report.verdict == [] and {c.credit for c in report.credits.values()} == {0.0}
    # b could have earned 2 more: without the rule, the re-runs of other choices blame it
    other = window_probes(env, team, traj, window=1)
    ungated = DifferenceCritic(significance=None).assess(traj, None, other)
    assert ungated.credits["b"].credit == -1.0 and ungated.verdict is None


def test_two_deviations_share_the_loss_by_exact_shapley():
    """v(S) built by hand: a's fix alone 0 (masked), b's alone 0, both 10: each is owed 5."""
    env, _, traj = relay(deviates=True)
    row = {(): 0.0, ("a",): 0.0, ("b",): 0.0, ("a", "b"): 10.0}
    probes = [Counterfactual(agents=(), replacement=NO_CHANGE, value=0.0, delta=0.0, steps=3)]
    probes += [
        Counterfactual(agents=k, replacement=OWN_POLICY, value=v, delta=v, steps=3, at_steps=(1,))
        for k, v in row.items()
        if k
    ]
    report = OwnPolicyCritic(texts=TEXTS).assess(traj, None, probes)
    assert sorted(report.verdict) == ["a", "b"] and report.credits["a"].credit == report.credits["b"].credit == -1.0
    assert "Shapley +5.0 (exact)" in report.credits["a"].explanation


def test_without_texts_the_search_says_what_it_needs():
    env, team, traj = relay(deviates=True)
    with pytest.raises(LangPZError, match="policies="):
        OwnPolicyCritic().search(traj, local_runner(env, team, traj))
    with pytest.raises(InvalidKwargError, match="max_reruns"):
        OwnPolicyCritic(max_reruns=0)


def test_the_reader_reads_two_forms_and_nothing_else():
    offered = ["down", "stay", "up"]
    assert read_policy("Always play up.", offered)("anything") == "up"
    assert read_policy("Stay put. Stay calm.", offered)("x") == "stay"
    rules = read_policy("If you see 'ball left', play up. Otherwise, play down.", offered)
    assert rules("the ball left of you") == "up" and rules("nothing here") == "down"
    for text in (
        "Never play up.",  # a negation
        "Push up when the ball is to your left.",  # a condition in plain words
        "Play up or down.",  # two words
        "Always play up. Always play down.",  # two unconditional words
        "Do your best.",  # no action word
    ):
        assert read_policy(text, offered) is None, text
    overcooked = ["pick up onion", "pick up dish", "wait 1"]
    assert read_policy("Always pick up onion.", overcooked)("x") == "pick up onion"  # 'up' inside it is not another


def test_the_heuristic_text_is_the_heuristic_and_the_others_are_unread():
    env = lang_pz.make("butterfly/pistonball-v0", n_pistons=5, hold=1, max_cycles=20)
    make = base_factory("heuristic", "butterfly/pistonball-v0")
    steps = [
        s for seed in range(3) for s in rollout(env, {a: make(env, a, 0) for a in env.possible_agents}, seed=seed).steps
    ]
    assert len(steps) > 100 and all(intent(BASE_TEXTS["heuristic"], s) == s.raw_output for s in steps)
    for name in ("greedy", "oracle", "random"):
        assert all(intent(BASE_TEXTS[name], s) is None for s in steps[:20]), name


def test_a_pistonball_fault_is_found_in_two_reruns():
    env = lang_pz.make("butterfly/pistonball-v0", n_pistons=5, hold=1, max_cycles=20)
    make = base_factory("heuristic", "butterfly/pistonball-v0")

    def team():
        return {a: make(env, a, j) for j, a in enumerate(env.possible_agents)}

    case, _ = draw_case(env, team, seed=1, rng=np.random.default_rng(1), fault="misplay", window=2)
    assert case is not None
    texts = dict.fromkeys(env.possible_agents, BASE_TEXTS["heuristic"])
    critic = OwnPolicyCritic(texts=texts)
    found = critic.search(case.trajectory, local_runner(env, case.team, case.trajectory))
    report = critic.assess(case.trajectory, None, found.probes)
    assert found.reruns == 2 and report.verdict == [case.agent]
    assert set(report.credits[case.agent].steps) == set(case.faulty_steps)


def test_search_is_deterministic_and_within_budget():
    env, team, traj = relay(deviates=True)
    runs = [OwnPolicyCritic(texts=TEXTS, seed=s).search(traj, local_runner(env, team, traj)).probes for s in range(3)]
    assert all(r == runs[0] for r in runs)
    texts = {"a": "Always wait.", "b": "Always push."}  # both deviate everywhere: 3 coalitions
    found = OwnPolicyCritic(texts=texts, max_reruns=2).search(traj, local_runner(env, team, traj))
    assert found.reruns == 2 and found.exhausted
    assert list(itertools.chain.from_iterable(p.agents for p in found.probes)) == ["a"]
