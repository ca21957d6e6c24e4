"""The credit benchmark's scores mean something (issue 21): stratified faulty agents, own-step
hits, "every trivial rule fails", two-fault "both at the bottom", and EVERY configuration of
``benchmarks/credit_benchmark.py`` run on one case, so a configuration that breaks fails here.

The LLM critics' model is :class:`ScriptedBackend`, a scripted stand-in (it gives every agent
the same credit); the counterfactual critics and the environments are real.
"""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path

import pytest
from support import DATA

from lang_pz.critics import Credit, CriticReport
from lang_pz.evaluation.baselines import RandomCritic
from lang_pz.evaluation.faults import CriticSpec, run_fault_benchmark
from lang_pz.evaluation.scoring import assess_and_score, bottom_expected, bottom_strict
from lang_pz.evaluation.summary import summarise
from lang_pz.evaluation.whowhen import WhoWhenCase, to_trajectory
from lang_pz.test import ScriptedBackend

ROOT = Path(__file__).resolve().parents[2]


def load_benchmark():
    spec = importlib.util.spec_from_file_location("credit_benchmark", ROOT / "benchmarks" / "credit_benchmark.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules["credit_benchmark"] = mod
    spec.loader.exec_module(mod)
    return mod


def flat_reply(req) -> str:
    """Scripted stand-in for the LLM critic: every agent named in the prompt gets credit 0."""
    text = req.prompt if req.prompt is not None else "\n".join(m.content for m in req.messages or ())
    agents = sorted(set(re.findall(r"\b(piston_\d+|player_\d+|solver|verifier)\b", text)))
    return json.dumps({a: {"credit": 0.0, "steps": [], "explanation": "scripted"} for a in agents})


class Fixed:
    """A critic with fixed credits and cited steps."""

    def __init__(self, credits, steps):
        self.credits, self.steps = credits, steps

    def assess(self, trajectory, policies=None, counterfactuals=()):
        return CriticReport(
            episode=trajectory.episode,
            credits={
                a: Credit(agent=a, credit=c, explanation="fixed", steps=self.steps.get(a, []))
                for a, c in self.credits.items()
            },
            team_return=trajectory.team_return,
            mode="fixed",
        )


def test_a_step_hit_counts_only_the_blamed_agents_own_steps():
    log = WhoWhenCase(
        name="built",
        messages=(("Orchestrator", "plan"), ("WebSurfer", "search"), ("Orchestrator", "wrong plan"), ("WebSurfer", "ok")),
        mistake_agent="Orchestrator",
        mistake_step=2,
    )
    traj = to_trajectory(log)
    # WebSurfer blamed, citing the Orchestrator's step 2 (the labelled step): not a step hit
    other = assess_and_score(Fixed({"Orchestrator": 0.0, "WebSurfer": -1.0}, {"WebSurfer": [2]}), traj, "Orchestrator", [2])
    assert (other["agent_hit"], other["step_hit"]) == (False, False)
    # with one step of slack, its own step 3 is in the window: a step hit (of its own step)
    assert assess_and_score(
        Fixed({"Orchestrator": 0.0, "WebSurfer": -1.0}, {"WebSurfer": [3]}), traj, "Orchestrator", [2], tolerance=1
    )["step_hit"]
    own = assess_and_score(Fixed({"Orchestrator": -1.0, "WebSurfer": 0.0}, {"Orchestrator": [2]}), traj, "Orchestrator", [2])
    assert (own["agent_hit"], own["step_hit"], own["joint_hit"]) == (True, True, True)
    # a tie of both, each citing step 2: only the Orchestrator's citation can hit
    tie = assess_and_score(
        Fixed({"Orchestrator": -1.0, "WebSurfer": -1.0}, {"Orchestrator": [2], "WebSurfer": [2]}), traj, "Orchestrator", [2]
    )
    assert tie["step_expected"] == 0.5


def test_both_at_the_bottom_strict_and_with_ties_at_random():
    truth = ("a", "b")
    assert bottom_strict({"a": -1, "b": -0.5, "c": 0, "d": 0}, truth)
    assert not bottom_strict({"a": -1, "b": 0, "c": 0, "d": 1}, truth)  # b tied with c
    assert bottom_expected({"a": -1, "b": 0, "c": 0, "d": 1}, truth) == 0.5
    assert bottom_expected({"a": 0, "b": 0, "c": 0, "d": 0}, truth) == pytest.approx(1 / 6)  # 1 / C(4, 2)
    assert bottom_expected({"a": -1, "c": -0.5, "b": 0, "d": 1}, truth) == 0.0


def test_faulty_agents_are_stratified():
    [s] = run_fault_benchmark("butterfly/pistonball-v0", RandomCritic(0), cases=5, env_kwargs={"n_pistons": 5, "hold": 1})
    assert s.labels == {f"piston_{i}": 1 for i in range(5)} and s.settings["stratified"] is True


def test_accuracy_where_every_trivial_rule_fails():
    def rec(hit, rule_hits):
        return {
            "truth_agent": "a",
            "chance_agent": 0.5,
            "chance_step": 0.5,
            "critic": {
                "agent_hit": hit,
                "step_hit": hit,
                "joint_hit": hit,
                "agent_expected": float(hit),
                "step_expected": 0.0,
                "tied": ["a"],
                "error": None,
                "visible": None,
            },
            "baselines": {
                "random": {"agent_expected": 1.0, "step_expected": 0.0},
                **{f"r{i}": {"agent_expected": h, "step_expected": 0.0} for i, h in enumerate(rule_hits)},
            },
        }

    # a rule no better than a blind guess (0, or a tie of both agents: 0.5 = chance) fails
    cases = [(True, [0.0, 0.0]), (False, [0.0, 1.0]), (False, [0.0, 0.0]), (True, [1.0, 0.0]), (True, [0.5, 0.5])]
    s = summarise("x", "c", [rec(hit, rules) for hit, rules in cases])
    assert s.hard_cases == 3 and s.agent_hard.value == pytest.approx(2 / 3)


def test_every_benchmark_configuration_runs(tmp_path):
    bench = load_benchmark()
    llm = ScriptedBackend(flat_reply)
    fams = bench.families(DATA if (DATA / "gsm8k").is_dir() and (DATA / "math500").is_dir() else None)
    assert {"butterfly/pistonball-v0", "overcooked/cramped_room-v0", "overcooked/asymmetric_advantages-v0"} <= {
        f.env for f in fams
    }
    names = set()
    for f in fams:
        singles, pairs = bench.run_family(f, llm, cases=1, llm_cases=1, pair_cases=1, seed=0, out=tmp_path / "b")
        want = {c.name.replace(bench.BLIND, f.blind) for c in bench.CRITICS}
        assert {s.critic for s in singles} == want, f.env
        for s in singles:
            assert s.cases == 1 and s.critic_failures == 0, (f.env, s.critic)
            names.add(s.critic)
        if f.pairs:
            assert {p.critic for p in pairs} == want and all(p.cases == 1 and p.failures == 0 for p in pairs)
    # a new critic mode is one line of CRITICS; a per-case critic gets the case's env and team
    seen = []

    def per_case(llm, ctx):
        seen.append(sorted(ctx.team))
        return RandomCritic(0)

    extra = bench.Critic("per-case random", build=per_case)
    [s] = bench.run_family(fams[0], llm, cases=1, llm_cases=0, pair_cases=0, seed=0, out=None, critics=[extra])[0]
    assert s.critic == "per-case random" and seen == [[f"piston_{i}" for i in range(5)]]
    with pytest.raises(Exception, match="exactly one"):
        CriticSpec("neither")
