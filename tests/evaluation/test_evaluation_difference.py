"""The counterfactual critic (COMA's difference reward by simulation): credits from re-runs only,
words from the LLM that cannot change them; which evidence identifies the faulty agent."""

from __future__ import annotations

import json

import numpy as np
import pytest

import lang_pz
from lang_pz.backends.base import GenerationRequest
from lang_pz.critics.counterfactual import Counterfactual
from lang_pz.critics.difference import DifferenceCritic, differences, window_probes
from lang_pz.error import LangPZError
from lang_pz.evaluation.bases import base_factory
from lang_pz.evaluation.cases import draw_case
from lang_pz.evaluation.faults import CriticSpec, run_fault_benchmark
from lang_pz.test import ScriptedBackend
from lang_pz.trajectory import AgentStep, Trajectory

PISTONBALL = "butterfly/pistonball-v0"
PB_KW = {"n_pistons": 5, "hold": 1, "max_cycles": 30}


def traj_aec() -> Trajectory:
    t = Trajectory(episode=3, seed=0)
    for k in range(6):  # a at steps 0, 2, 4; b at 1, 3, 5
        t.steps.append(AgentStep(3, k, "a" if k % 2 == 0 else "b", "o", "x", "x", None, 0.0))
    return t


def cf(agent: str, delta: float, at=None, word="up") -> Counterfactual:
    return Counterfactual(agents=(agent,), replacement=word, value=10 + delta, delta=delta, steps=6, at_steps=at)


def test_credit_is_the_negated_best_gain_and_cites_its_window():
    probes = [
        cf("a", 2.0, (0,)),
        cf("a", -1.0, (1,)),
        cf("b", 8.0, (1, 2)),
        cf("b", 0.0, (0,)),
        Counterfactual(agents=("a", "b"), replacement="down", value=0.0, delta=-10.0, steps=6),
    ]  # a group probe: not attributed
    d = differences(traj_aec(), probes)
    assert (d["a"].gain, d["b"].gain) == (2.0, 8.0) and d["b"].steps == (3, 5)  # decisions 1, 2 of b
    report = DifferenceCritic(significance=None).assess(traj_aec(), None, probes)  # the credits before a verdict
    assert report.mode == "counterfactual" and report.credits["b"].credit == -1.0
    assert report.credits["a"].credit == pytest.approx(-0.25) and report.credits["b"].steps == [3, 5]
    named = DifferenceCritic().assess(traj_aec(), None, probes)  # b's 8 beats a's 2 by more than half: b alone
    assert named.verdict == ["b"] and named.credits["a"].credit == 0.0 and named.credits["b"].credit == -1.0
    assert report.credits["b"].explanation == "up at steps 3,5: team +8.0"
    assert report.shown_steps == [0, 1, 2, 3, 4, 5]  # the group probe replaced every step
    mean = differences(traj_aec(), probes, "mean")
    assert mean["a"].gain == pytest.approx(0.5) and mean["b"].gain == pytest.approx(4.0)
    # no probe helped: the most negative one is decisive (where its play mattered most)
    worse = differences(traj_aec(), [cf("a", -3.0, (2,)), cf("a", -1.0, (0,)), cf("b", 0.0, (0,))])
    assert worse["a"].steps == (4,) and worse["a"].gain == -1.0


def test_no_change_anywhere_is_a_tie_and_a_missing_agent_is_an_error():
    flat = DifferenceCritic().assess(traj_aec(), None, [cf("a", 0.0, (0,)), cf("b", 0.0, (0,))])
    assert {c.credit for c in flat.credits.values()} == {0.0}
    with pytest.raises(LangPZError, match=r"none for \['b'\]"):
        DifferenceCritic().assess(traj_aec(), None, [cf("a", 1.0, (0,))])
    with pytest.raises(ValueError, match="aggregate"):
        DifferenceCritic(aggregate="median")  # type: ignore[arg-type]


def test_the_llms_words_cannot_change_the_numbers():
    probes = [cf("a", 2.0, (0,)), cf("b", 8.0, (1,))]
    plain = DifferenceCritic().assess(traj_aec(), None, probes)
    asked: list[str] = []

    def contrarian(req: GenerationRequest) -> str:
        asked.append(req.prompt or "")
        return json.dumps({"a": {"explanation": "a ruined everything"}, "b": {"explanation": "b was perfect"}})

    worded = DifferenceCritic(ScriptedBackend(contrarian)).assess(traj_aec(), None, probes)
    assert {a: c.credit for a, c in worded.credits.items()} == {a: c.credit for a, c in plain.credits.items()}
    assert worded.credits["b"].explanation.startswith("b was perfect (") and "team +8.0" in worded.credits["b"].explanation
    assert "credit -1.0 (blamed)" in asked[0] and worded.attempts == 1
    # digits are refused (the numbers are computed): after the retries, only the computed fact
    digits = DifferenceCritic(
        ScriptedBackend(lambda r: json.dumps({"a": {"explanation": "gained 2"}, "b": {"explanation": "gained 8"}}))
    )
    r = digits.assess(traj_aec(), None, probes)
    assert r.credits["b"].explanation == plain.credits["b"].explanation and len(r.errors) == 2
    assert {a: c.credit for a, c in r.credits.items()} == {a: c.credit for a, c in plain.credits.items()}


@pytest.fixture(scope="module")
def pistonball_case():
    env = lang_pz.make(PISTONBALL, **PB_KW)
    make = base_factory("heuristic", PISTONBALL)

    def team():
        return {a: make(env, a, 0) for a in env.possible_agents}

    case, _ = draw_case(env, team, seed=2, rng=np.random.default_rng(0), fault="misplay", window=2)
    assert case is not None
    return env, team, case


def test_reference_windows_find_the_faulty_agent_and_its_steps(pistonball_case):
    env, team, case = pistonball_case
    probes = window_probes(env, case.team, case.trajectory, replacements=["reference"], window=2, reference=team())
    n = len(case.trajectory.agent_steps(case.agent))
    assert len(probes) == 5 * (n - 1) and {p.replacement for p in probes} == {"reference policy"}
    others = [p for p in probes if p.agents[0] != case.agent]
    assert all(p.delta == 0.0 for p in others)  # a teammate playing its own reference changes nothing
    report = DifferenceCritic().assess(case.trajectory, None, probes)
    blamed = min(report.credits, key=lambda a: report.credits[a].credit)
    assert blamed == case.agent and report.credits[blamed].credit == -1.0
    lo, hi = min(case.faulty_steps), max(case.faulty_steps)
    assert any(lo <= t <= hi for t in report.credits[blamed].steps)
    best = max(p.delta for p in probes)
    assert best == pytest.approx(case.effect, abs=1e-2)  # restoring the window restores the return


def test_alternatives_skip_the_held_word_and_refine_narrows_the_search(pistonball_case):
    env, team, case = pistonball_case
    traj = case.trajectory
    probes = window_probes(env, case.team, traj, window=1, agents=["piston_0"])
    played = [s.raw_output for s in traj.agent_steps("piston_0")]
    assert len(probes) == 2 * len(played)  # down, stay, up minus the word it played
    assert all(p.replacement != played[p.at_steps[0]] for p in probes)
    coarse = window_probes(env, case.team, traj, replacements=["reference"], window=2, reference=team(), refine=1)
    assert sum(p.at_steps is None for p in coarse) == 5  # one whole-episode probe per agent
    assert {p.agents[0] for p in coarse if p.at_steps is not None} == {case.agent}
    report = DifferenceCritic().assess(traj, None, coarse)
    assert min(report.credits, key=lambda a: report.credits[a].credit) == case.agent
    assert report.credits[case.agent].steps  # steps come from the windowed probes
    with pytest.raises(LangPZError, match="reference= policies"):
        window_probes(env, case.team, traj, replacements=["reference"])


def test_benchmark_counterfactual_critic_with_reference_and_with_default_on_gsm8k():
    spec = [CriticSpec("cf", DifferenceCritic(), ("reference",))]
    [pb] = run_fault_benchmark(PISTONBALL, spec, cases=3, env_kwargs=PB_KW)
    assert pb.agent.value == 1.0 and pb.step.value == 1.0 and pb.visible == 1.0
    kw = {"source": "demo", "index": 0}
    specs = [
        CriticSpec("reference", DifferenceCritic(), ("reference",)),
        CriticSpec("default", DifferenceCritic(), ("default",)),
    ]
    ref, dflt = run_fault_benchmark("tasks/gsm8k-v0", specs, cases=6, env_kwargs=kw, out=None)
    assert ref.agent.value == 1.0
    # "default" (an empty reply) finds a verifier that overwrote a right answer, never a wrong
    # solver: a silent solver scores 0 as a wrong one does, so both roles tie
    assert dflt.ties == ref.labels.get("solver", 0) and dflt.agent.value == pytest.approx(ref.labels.get("verifier", 0) / 6)


def test_window_probes_offer_each_agent_only_words_it_was_offered():
    """The re-run planner is plan_probes: an Overcooked macro-action a teammate played but this
    agent was never offered is not tried for it (it would play the env's fallback under that name)."""
    from lang_pz.policies.random import RandomPolicy
    from lang_pz.rollout import rollout

    env = lang_pz.make("overcooked/cramped_room-v0", actions="macro", horizon=12)
    team = {a: RandomPolicy(seed=i) for i, a in enumerate(env.possible_agents)}
    traj = rollout(env, team, seed=4, episode=0)
    offered = {a: {w for s in traj.agent_steps(a) for w in s.legal_actions or ()} for a in traj.agents}
    played = {str(s.raw_output).strip() for s in traj.steps}
    assert any(played - offered[a] for a in traj.agents)  # some agent was never offered a word its teammate played
    probes = window_probes(env, team, traj, window=None)
    for a in traj.agents:
        held = {str(s.raw_output).strip() for s in traj.agent_steps(a)}
        tried = {p.replacement for p in probes if p.agents == (a,)}
        assert tried == offered[a] - (held if len(held) == 1 else set())  # every offered word, and only those
