"""No blame without significance (lang_pz.critics.significance): the rule on hand-made gains, and
on real Pistonball episodes of the scripted heuristic team (5 pistons, ``hold=1``, 20 cycles):
its lowest-return seed of 0-99 (seed 44, no fault) and a single misplay that costs 466 points."""

from __future__ import annotations

import numpy as np
import pytest

import lang_pz
from lang_pz.critics.counterfactual import NO_CHANGE, Counterfactual
from lang_pz.critics.decisive import DecisiveCritic
from lang_pz.critics.difference import DifferenceCritic
from lang_pz.critics.search import local_runner
from lang_pz.critics.significance import Significance, gate, noise_of
from lang_pz.critics.windows import window_probes
from lang_pz.error import InvalidKwargError
from lang_pz.evaluation.bases import base_factory
from lang_pz.evaluation.cases import draw_case
from lang_pz.rollout import rollout

ENV_ID = "butterfly/pistonball-v0"
RULE = Significance()


def test_one_agent_that_stands_out_is_named_and_several_helpers_are_not():
    assert RULE.blamed({"a": 100.0, "b": 10.0, "c": 0.0}, factual=400.0) == ["a"]
    assert RULE.blamed({"a": 100.0, "b": 60.0, "c": 0.0}, factual=400.0) == []  # b recovers more than half as much
    assert RULE.blamed({"a": 100.0, "b": 100.0}, factual=400.0) == []  # a tie: several could have helped
    assert RULE.blamed({"a": 3.0, "b": 0.0}, factual=400.0) == []  # 3 < 1 % of 403: no change
    assert RULE.blamed({"a": -5.0, "b": -1.0}, factual=400.0) == []  # nothing helped
    assert RULE.blamed({"a": 100.0, "b": -50.0}, factual=400.0) == ["a"]  # a worse teammate is not a rival
    assert RULE.blamed({"a": 100.0, "b": 90.0, "c": 5.0}, factual=0.0, most=2) == ["a", "b"]  # a group
    assert RULE.blamed({"a": 100.0, "b": 90.0, "c": 5.0}, factual=0.0, most=1) == []


def test_noise_raises_the_bar():
    assert RULE.blamed({"a": 100.0, "b": 10.0}, factual=400.0, noise=50.0) == []
    assert RULE.blamed({"a": 100.0, "b": 10.0}, factual=400.0, noise={"a": 1.0, "b": 1.0}) == ["a"]
    unchanged = Counterfactual(agents=(), replacement=NO_CHANGE, value=3.0, delta=-2.5, steps=5)
    assert noise_of([unchanged]) == 2.5 and noise_of([]) == 0.0


def test_no_one_means_every_credit_zero():
    assert gate({"a": -1.0, "b": 0.5, "c": -0.2}, []) == {"a": 0.0, "b": 0.0, "c": 0.0}
    assert gate({"a": -1.0, "b": 0.5, "c": -0.2}, ["a"]) == {"a": -1.0, "b": 0.5, "c": 0.0}
    with pytest.raises(InvalidKwargError, match="separation"):
        Significance(separation=1.0)
    with pytest.raises(InvalidKwargError, match="floor"):
        Significance(floor=-0.1)
    with pytest.raises(InvalidKwargError, match="most"):
        RULE.blamed({"a": 1.0}, factual=0.0, most=0)


@pytest.fixture(scope="module")
def env():
    return lang_pz.make(ENV_ID, n_pistons=5, hold=1, max_cycles=20)


def team(env):
    make = base_factory("heuristic", ENV_ID)
    return {a: make(env, a, j) for j, a in enumerate(env.possible_agents)}


def test_a_good_team_that_loses_is_blamed_on_no_one(env):
    """Seed 44: the heuristic team's lowest return of seeds 0-99 (-225.4); nobody misplays.
    Three pistons' other moves would have saved the ball, so the gate has something to refuse."""
    traj = rollout(env, team(env), seed=44)
    assert traj.team_return < -200
    probes = window_probes(env, team(env), traj, window=2)
    ungated = DifferenceCritic(significance=None).assess(traj, None, probes)
    assert sum(c.credit < 0 for c in ungated.credits.values()) >= 2  # "could have helped": several
    report = DifferenceCritic().assess(traj, None, probes)
    assert report.verdict == [] and {c.credit for c in report.credits.values()} == {0.0}
    assert any("not significant" in c.explanation for c in report.credits.values())
    reference = window_probes(env, team(env), traj, replacements=["reference"], reference=team(env), window=2)
    assert DifferenceCritic().assess(traj, None, reference).verdict == []  # every reference re-run changes nothing
    critic = DecisiveCritic(max_reruns=120)
    found = critic.search(traj, local_runner(env, team(env), traj))
    assert found.probes[0].replacement == NO_CHANGE and found.probes[0].delta == 0.0  # deterministic: no noise
    assert critic.assess(traj, None, found.probes).verdict == []


def test_a_clear_single_fault_is_still_blamed(env):
    case, _ = draw_case(env, lambda: team(env), seed=1, rng=np.random.default_rng(1), fault="misplay", window=2)
    assert case is not None and case.effect > 400
    probes = window_probes(env, case.team, case.trajectory, replacements=["reference"], reference=team(env), window=2)
    report = DifferenceCritic().assess(case.trajectory, None, probes)
    assert report.verdict == [case.agent] and report.credits[case.agent].credit == -1.0
    assert sorted(c.credit for c in report.credits.values())[1:] == [0.0] * 4
