"""The coalition critic (lang_pz.critics.coalition): exact Shapley values (a hand computation, two
cooks who tie), and Shapley credit over agents' decisive windows on a real two-fault Pistonball case (5 pistons, ``hold=1``, 20 cycles, heuristic team, two
pistons made faulty with ``misplay`` in overlapping windows)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import lang_pz
from lang_pz.critics.coalition import CoalitionCritic, CoalitionProbe, exact_shapley, sampled_shapley, windows_of
from lang_pz.critics.counterfactual import Counterfactual, Probe
from lang_pz.critics.decisive import local_runner
from lang_pz.error import InvalidKwargError
from lang_pz.evaluation.bases import base_factory, repertoire
from lang_pz.evaluation.cases import hurts
from lang_pz.policies.faulty import FaultyPolicy
from lang_pz.rollout import rollout
from lang_pz.trajectory import AgentStep, Trajectory

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


# -- exact Shapley values ------------------------------------------------------------------------


def test_three_player_enumeration_equals_the_hand_computation():
    """v({})=0, a 10, b 20, c 30, ab 40, ac 50, bc 60, abc 90. By hand, with weights 1/3 for the
    empty and the two-player coalitions and 1/6 for each one-player one:
    phi_a = 10/3 + (40-20)/6 + (50-30)/6 + (90-60)/3 = 20; phi_b = 30; phi_c = 40 (sum 90)."""
    v = {"": 0, "a": 10, "b": 20, "c": 30, "ab": 40, "ac": 50, "bc": 60, "abc": 90}
    values = {frozenset(k): float(x) for k, x in v.items()}
    assert exact_shapley(["a", "b", "c"], values) == {"a": 20.0, "b": 30.0, "c": 40.0}
    with pytest.raises(InvalidKwargError, match="missing"):
        exact_shapley(["a", "b", "c"], {k: x for k, x in values.items() if len(k) < 3})


def two_cooks():
    """A two-cook episode (no environment needed: the runner below answers every re-run): each
    cook made 3 decisions, each offered two skills."""
    traj = Trajectory(episode=0, seed=7)
    for t in range(3):
        for a in ("player_0", "player_1"):
            traj.steps.append(
                AgentStep(
                    episode=0,
                    step=t,
                    agent=a,
                    observation="kitchen",
                    raw_output="wait 1",
                    action="wait 1",
                    parse_error=None,
                    reward=0.0,
                    legal_actions=["wait 1", "pick up onion"],
                )
            )
    return traj


def soup_runner(plans):
    """Either cook's change (alone or both) recovers the soup: +40, as on the replayed Overcooked
    episode of the issue; the re-run that changes nothing, 0."""
    out = []
    for plan in plans:
        p = plan.probe
        delta = 40.0 if p.agents else 0.0
        out.append(
            (
                Counterfactual(
                    agents=p.agents, replacement=p.replacement, value=delta, delta=delta, steps=3, at_steps=p.at_steps
                ),
                0,
            )
        )
    return out


def test_two_cooks_who_recover_the_same_tie_every_time():
    traj = two_cooks()
    verdicts = []
    for seed in range(5):  # five repeats, five permutation seeds: exact values do not depend on them
        critic = CoalitionCritic(seed=seed)
        found = critic.search(traj, soup_runner)
        assert sum(len(p.agents) == 2 for p in found.probes) == 1  # 4 coalitions: {}, {0}, {1}, {0, 1}
        phi, se, _, how = critic.shapley(traj, found.probes)
        assert how == "exact" and phi == {"player_0": 20.0, "player_1": 20.0} and set(se.values()) == {0.0}
        report = critic.assess(traj, None, found.probes)
        assert report.credits["player_0"].credit == report.credits["player_1"].credit
        verdicts.append(report.verdict)
    assert verdicts == [[]] * 5  # a tie is "no one", never a coin flip


def test_beyond_the_budget_the_value_is_sampled_with_its_error():
    traj = two_cooks()
    critic = CoalitionCritic(coalition_reruns=0, permutations=8)  # the pair does not fit: singles only
    found = critic.search(traj, soup_runner)
    _, _, _, how = critic.shapley(traj, found.probes)
    assert how == "singles"
    orders = [["a", "b"], ["b", "a"], ["a", "b"]]
    values = {frozenset(): 0.0, frozenset("a"): 10.0, frozenset("b"): 0.0, frozenset("ab"): 10.0}
    phi, se, used = sampled_shapley(orders, values)
    assert used == 3 and phi == {"a": 10.0, "b": 0.0} and se == {"a": 0.0, "b": 0.0}
    phi, se, used = sampled_shapley([["a", "b"]], {**values, frozenset("ab"): 30.0})
    assert se["a"] == float("inf")  # one permutation: no error estimate, so no verdict on it
