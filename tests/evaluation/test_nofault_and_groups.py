"""The credit benchmark's new case families: no fault (false blame), three faults (all at the
bottom) and late-effect faults, on 5-piston Pistonball (``hold=1``, 20 cycles, heuristic team)."""

from __future__ import annotations

import numpy as np
import pytest

import lang_pz
from lang_pz.critics.own import OwnPolicyCritic
from lang_pz.evaluation.baselines import RandomCritic
from lang_pz.evaluation.bases import base_factory
from lang_pz.evaluation.cases import draw_case, late_effect, step_rewards
from lang_pz.evaluation.faults import CriticSpec
from lang_pz.evaluation.nofault import NoFaultCase, lowest_return_seeds, nofault_table, pool_nofault, run_nofault_benchmark
from lang_pz.evaluation.pairs import run_pair_benchmark
from lang_pz.evaluation.scoring import bottom_expected, bottom_strict
from lang_pz.rollout import rollout

ENV_ID = "butterfly/pistonball-v0"
KW = {"n_pistons": 5, "hold": 1, "max_cycles": 20}
OWN = CriticSpec("own_policy", build=lambda ctx: OwnPolicyCritic(texts=ctx.texts))


def test_no_fault_cases_score_false_blame():
    cases = lowest_return_seeds(ENV_ID, KW, range(12), 2)
    env = lang_pz.make(ENV_ID, **KW)
    make = base_factory("heuristic", ENV_ID)
    returns = {s: rollout(env, {a: make(env, a, 0) for a in env.possible_agents}, seed=s).team_return for s in range(12)}
    assert [c.seed for c in cases] == sorted(returns, key=lambda s: (returns[s], s))[:2]
    out = run_nofault_benchmark(ENV_ID, [OWN, CriticSpec("random", RandomCritic(0))], cases, label="pb")
    own, rnd = out
    assert own.source == "pb" and own.cases == 2 and own.blames.value == 0.0 and own.reruns == 1.0
    assert rnd.singles_out.value == 1.0  # distinct random credits always single one out
    assert rnd.blames.value == 1.0  # without a verdict, a negative credit is blame
    pooled = pool_nofault([own, own])
    assert pooled.cases == 4 and pooled.blames.value == 0.0
    assert "| pb | own_policy | 2 |" in nofault_table(out)


def test_three_faults_all_at_the_bottom():
    assert bottom_strict({"a": -1, "b": -1, "c": -0.5, "d": 0}, ("a", "b", "c"))
    assert bottom_expected({"a": -1, "b": 0, "c": 0, "d": 0}, ("a", "b", "c")) == pytest.approx(1 / 3)
    [s] = run_pair_benchmark(ENV_ID, [OWN], cases=1, faults=3, env_kwargs=KW)
    assert s.faults == 3 and s.cases == 1 and s.chance == pytest.approx(0.1)
    assert len(next(iter(s.labels)).split("+")) == 3


def test_a_late_effect_case_shows_its_cost_late():
    env = lang_pz.make(ENV_ID, **KW)
    make = base_factory("heuristic", ENV_ID)

    def team():
        return {a: make(env, a, j) for j, a in enumerate(env.possible_agents)}

    found = None
    for seed in range(20):
        found, _ = draw_case(env, team, seed=seed, rng=np.random.default_rng(seed), fault="misplay", keep=late_effect(3))
        if found is not None:
            break
    assert found is not None
    clean, faulty = step_rewards(found.clean), step_rewards(found.trajectory)
    first = min(k for k in faulty if abs(faulty[k] - clean.get(k, 0.0)) > 1e-9)
    assert first >= max(found.faulty_steps) + 3
    with pytest.raises(Exception, match="delay"):
        late_effect(0)


def test_a_case_of_each_kwargs_runs_in_its_own_env():
    cases = [NoFaultCase(0, {"n_pistons": 5, "hold": 1, "max_cycles": 10}), NoFaultCase(0, KW)]
    [s] = run_nofault_benchmark(ENV_ID, [OWN], cases)
    assert s.cases == 2 and s.blames.value == 0.0
