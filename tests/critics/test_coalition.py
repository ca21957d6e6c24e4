"""The coalition critic (lang_pz.critics.coalition): Shapley credit over agents' decisive windows,
on a real two-fault Pistonball case (5 pistons, ``hold=1``, 20 cycles, heuristic team, two
pistons made faulty with ``misplay`` in overlapping windows)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import lang_pz
from lang_pz.critics.coalition import CoalitionCritic, CoalitionProbe, windows_of
from lang_pz.critics.counterfactual import Probe
from lang_pz.critics.decisive import local_runner
from lang_pz.error import InvalidKwargError
from lang_pz.evaluation.bases import base_factory, repertoire
from lang_pz.evaluation.cases import hurts
from lang_pz.policies.faulty import FaultyPolicy
from lang_pz.rollout import rollout

ENV_ID = "butterfly/pistonball-v0"
KW = {"n_pistons": 5, "hold": 1, "max_cycles": 20}


@pytest.fixture(scope="module")
def env():
    return lang_pz.make(ENV_ID, **KW)


def two_fault_case(env, seed: int):
    """The first seeded draw of two pistons faulty over overlapping 3-decision windows that
    lowered the team return by 2 % or more, both with a faulty decision."""
    make = base_factory("heuristic", ENV_ID)
    agents = list(env.possible_agents)

    def team():
        return {a: make(env, a, j) for j, a in enumerate(agents)}

    clean = rollout(env, team(), seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(30):
        i, j = rng.choice(len(agents), 2, replace=False)
        start = int(rng.integers(0, 8))
        t = team()
        faulty = [agents[i], agents[j]]
        for k, a in enumerate(faulty):
            t[a] = FaultyPolicy(t[a], "misplay", range(start + k, start + k + 3), action=repertoire(clean), seed=seed)
        traj = rollout(env, t, seed=seed)
        if hurts(clean.team_return, traj.team_return, 0.02) and all(any(r.faulty for r in t[a].log) for a in faulty):
            return traj, t, faulty
    pytest.fail(f"no two-fault draw of seed {seed} hurt the team")


@pytest.fixture(scope="module")
def searched(env):
    out = []
    for seed in range(3):
        traj, team, faulty = two_fault_case(env, seed)
        critic = CoalitionCritic(permutations=20, coalition_reruns=40)
        found = critic.search(traj, local_runner(env, team, traj))
        out.append((critic, traj, team, faulty, found))
    return out


def test_shapley_values_are_efficient_and_blame_the_most_helpful_replacement(searched):
    both = 0
    for critic, traj, _, faulty, found in searched:
        phi, se, wins, how = critic.shapley(traj, found.probes)
        assert how == "exact" and set(se.values()) == {0.0}  # 5 players: 26 coalitions, within the 40 re-runs
        grand = next(p for p in found.probes if set(p.agents) == set(wins))
        assert sum(phi.values()) == pytest.approx(grand.delta, abs=1e-5)  # efficiency: v(N) - v({})
        report = CoalitionCritic(significance=None).assess(traj, None, found.probes)  # the credit order, no verdict
        order = sorted(report.credits, key=lambda a: report.credits[a].credit)
        assert phi[order[0]] == max(phi.values())  # lowest credit = the largest Shapley value
        both += set(order[:2]) == set(faulty)
    print(f"coalition, two-fault Pistonball: both faulty agents at the bottom in {both} of {len(searched)}")


def test_each_coalition_is_re_run_once_and_within_budget(env, searched):
    critic, traj, team, _, found = searched[0]
    groups = [p.agents for p in found.probes if len(p.agents) > 1]
    assert len(groups) == len(set(groups))
    for budget in (0, 3):
        small = CoalitionCritic(max_reruns=20, coalition_reruns=budget).search(traj, local_runner(env, team, traj))
        assert small.reruns <= 20 + budget
        assert sum(len(p.agents) > 1 for p in small.probes) <= budget


def test_a_coalition_of_one_window_replays_that_window(env, searched):
    critic, traj, team, _, found = searched[0]
    wins = windows_of(traj, found.probes, critic.share, critic.min_gain)
    a, w = next(iter(wins.items()))
    cf, _ = CoalitionProbe((Probe((a,), w.replacement, w.at_steps),)).rerun(env, team, traj)
    assert cf.value == w.value


def test_same_seed_same_result(env):
    results = []
    for _ in range(2):
        traj, team, _ = two_fault_case(env, 1)
        critic = CoalitionCritic(max_reruns=40, coalition_reruns=10, permutations=5)
        found = critic.search(traj, local_runner(env, team, traj))
        results.append((found.probes, critic.assess(traj, None, found.probes).credits))
    assert results[0] == results[1]


def test_permutations_are_seeded(searched):
    critic, traj, *_ = searched[0]
    players = list(traj.agents)
    assert critic.orders(traj, players) == CoalitionCritic(permutations=20).orders(traj, players)
    assert all(sorted(o) == sorted(players) for o in critic.orders(traj, players))
    assert len({tuple(o) for o in critic.orders(traj, players)}) > 1
    assert list(itertools.islice(critic.orders(traj, players), 1)) != CoalitionCritic(seed=1).orders(traj, players)[:1]


def test_bad_settings_are_refused():
    with pytest.raises(InvalidKwargError, match="permutations must be >= 1"):
        CoalitionCritic(permutations=0)
    with pytest.raises(InvalidKwargError, match="coalition_reruns must be >= 0"):
        CoalitionCritic(coalition_reruns=-1)
