"""ReplayPolicy: re-runs answer from the factual trajectory where an LLM agent would ask the same.

Real Pistonball; the "model" is :class:`ScriptedBackend` with a reply that is a function of the
request (a deterministic stand-in, unit tests only), so a replayed reply must equal the one the
backend would have given, and the re-run results must not change.
"""

from __future__ import annotations

import lang_pz
from lang_pz.backends.base import GenerationRequest
from lang_pz.critics.counterfactual import counterfactuals, plan_probes, probe_team, run_probe
from lang_pz.policies.llm import LLMPolicy
from lang_pz.policies.replay import ReplayPolicy, replaying
from lang_pz.policies.scripted import ConstantPolicy
from lang_pz.rollout import rollout
from lang_pz.test import ScriptedBackend

KW = {"n_pistons": 8, "hold": 10, "max_cycles": 60}


def by_request(req: GenerationRequest) -> str:
    """A reply that depends on the request only: down when the ball is in view, else up."""
    text = req.prompt or ""
    return "down" if "Ball: out of view" not in text.rsplit("Observation:", 1)[-1] else "up"


def team(env, backend, text: str = "Go up unless the ball is above you.") -> dict:
    return {a: LLMPolicy(text, backend) for a in env.possible_agents}


def test_rerun_results_equal_asking_the_model_and_cost_fewer_calls():
    env = lang_pz.make("butterfly/pistonball-v0", **KW)
    backend = ScriptedBackend(by_request)
    pols = team(env, backend)
    traj = rollout(env, pols, seed=3)
    probes = plan_probes(traj, [[a] for a in env.possible_agents], ["alternatives"])
    n0 = len(backend.requests)
    asked = [run_probe(env, probe_team(pols, p), p, traj) for p in probes]
    n1 = len(backend.requests)
    replayed = [run_probe(env, probe_team(pols, p, factual=traj), p, traj) for p in probes]
    n2 = len(backend.requests)
    assert replayed == asked  # same values, deltas and steps
    assert 0 < n2 - n1 < (n1 - n0) / 2, (n1 - n0, n2 - n1)  # most decisions answered from the record
    assert counterfactuals(env, pols, traj, [[a] for a in env.possible_agents]) == asked  # replays too


def test_a_changed_policy_text_is_always_asked():
    env = lang_pz.make("butterfly/pistonball-v0", **KW)
    backend = ScriptedBackend(by_request)
    current = team(env, backend)
    traj = rollout(env, current, seed=3)
    other = replaying(team(env, backend, "Always push up."), traj, played=current)
    assert all(isinstance(p, ReplayPolicy) for p in other.values())
    n = len(backend.requests)
    again = rollout(env, other, seed=3)
    assert len(backend.requests) - n == len(again.steps)  # no request matched: every decision asked
    assert sum(p.replayed for p in other.values()) == 0


def test_only_plain_llm_policies_are_wrapped_and_reset_counts_again():
    env = lang_pz.make("butterfly/pistonball-v0", **KW)
    backend = ScriptedBackend(by_request)
    pols = {**team(env, backend), "piston_0": ConstantPolicy("stay")}
    traj = rollout(env, pols, seed=1)
    wrapped = replaying(pols, traj)
    assert wrapped["piston_0"] is pols["piston_0"]
    n = len(backend.requests)
    same = rollout(env, wrapped, seed=1)
    assert len(backend.requests) == n  # the same episode: every decision from the record
    assert [s.raw_output for s in same.steps] == [s.raw_output for s in traj.steps]
    assert same.returns == traj.returns
    p = wrapped["piston_1"]
    assert isinstance(p, ReplayPolicy) and p.replayed == len(traj.agent_steps("piston_1")) and p.asked == 0
    p.reset(0)
    assert p.replayed == p.asked == 0
    assert replaying(pols, None) == pols


def test_a_replaying_team_keeps_the_backends_concurrency_bound():
    from lang_pz.rollout import decision_threads

    env = lang_pz.make("butterfly/pistonball-v0", **KW)
    backend = ScriptedBackend(by_request)
    backend.max_concurrency = 1  # like one embedded model instance
    pols = team(env, backend)
    assert decision_threads(replaying(pols, rollout(env, pols, seed=0))) == 1


def test_a_policy_on_another_backend_is_not_replayed():
    env = lang_pz.make("butterfly/pistonball-v0", **KW)
    pols = team(env, ScriptedBackend(by_request))
    traj = rollout(env, pols, seed=2)
    other = team(env, ScriptedBackend(by_request))  # the same texts on another model
    assert not any(isinstance(p, ReplayPolicy) for p in replaying(other, traj, played=pols).values())
