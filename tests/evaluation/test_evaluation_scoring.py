"""Scoring (who and when, ties), intervals, the random critic, trivial rules and summaries."""

from __future__ import annotations

import pytest
from scipy.stats import binomtest

from lang_pz.critics import Credit, CriticReport
from lang_pz.error import LangPZError
from lang_pz.evaluation.baselines import TRIVIAL_RULES, RandomCritic, action_leakage
from lang_pz.evaluation.scoring import blame, chance_step_hit, score_report
from lang_pz.evaluation.summary import proportion_ci, rules_table, summarise, table
from lang_pz.trajectory import AgentStep, Trajectory


def report(credits: dict[str, float], steps: dict[str, list[int]] | None = None, shown=()) -> CriticReport:
    steps = steps or {}
    return CriticReport(
        episode=0,
        team_return=0.0,
        shown_steps=list(shown),
        credits={a: Credit(agent=a, credit=c, explanation="x", steps=steps.get(a, [])) for a, c in credits.items()},
    )


def traj_of(actions: dict[str, str], rewards: dict[str, float] | None = None) -> Trajectory:
    """One character per step and agent (parallel: every agent acts at every step)."""
    t = Trajectory(episode=0, seed=0)
    n = len(next(iter(actions.values())))
    for k in range(n):
        for a, seq in actions.items():
            t.steps.append(AgentStep(0, k, a, "o", seq[k], seq[k], None, (rewards or {}).get(a, 0.0)))
    t.returns = {a: (rewards or {}).get(a, 0.0) * n for a in actions}
    return t


def test_blame_is_the_lowest_credit_and_a_tie_blames_no_one():
    b = blame(report({"a": 0.5, "b": -0.5, "c": 0.0}, {"b": [4, 7]}))
    assert (b.agent, b.steps, b.tied) == ("b", (4, 7), ("b",))
    tie = blame(report({"a": -1.0, "b": -1.0, "c": 0.0}, {"a": [1], "b": [2]}))
    assert tie.agent is None and tie.steps == () and tie.tied == ("a", "b")
    with pytest.raises(LangPZError, match="credits no agent"):
        blame(report({}))


def test_ties_score_strict_misses_and_their_expected_value():
    r = report({"a": -1.0, "b": -1.0, "c": 0.0}, {"a": [3], "b": [9]})
    s = score_report(r, "a", [3, 4])
    assert (s["agent_hit"], s["step_hit"]) == (False, False)
    assert s["agent_expected"] == 0.5 and s["step_expected"] == 0.5 and s["joint_expected"] == 0.5
    assert score_report(r, "c", [3])["agent_expected"] == 0.0
    one = score_report(report({"a": 0.5, "b": -1.0}, {"b": [6]}), "b", [3, 4])
    assert one["agent_hit"] and not one["step_hit"] and one["agent_expected"] == 1.0
    assert score_report(report({"a": 0.5, "b": -1.0}, {"b": [6]}), "b", [3, 4], tolerance=2)["joint_hit"]


def test_visible_says_whether_a_labelled_step_was_shown():
    assert score_report(report({"a": 0.0, "b": -1.0}, shown=[1, 2, 3]), "b", [3])["visible"] is True
    assert score_report(report({"a": 0.0, "b": -1.0}, shown=[1, 2]), "b", [3])["visible"] is False
    assert score_report(report({"a": 0.0, "b": -1.0}), "b", [3])["visible"] is None


def test_chance_step_hit_is_the_window_fraction():
    steps = list(range(10))
    assert chance_step_hit(steps, [3, 4]) == pytest.approx(2 / 10)
    assert chance_step_hit(steps, [3, 4], tolerance=1) == pytest.approx(4 / 10)
    assert chance_step_hit(steps, [0], tolerance=2) == pytest.approx(3 / 10)
    with pytest.raises(LangPZError, match="no faulty step"):
        chance_step_hit(steps, [])


def test_wilson_interval_is_scipys_for_whole_counts():
    for k, n in ((0, 10), (3, 10), (10, 10), (30, 100), (7, 12)):
        ci = binomtest(k, n).proportion_ci(0.95, method="wilson")
        assert proportion_ci(k, n) == pytest.approx((ci.low, ci.high), abs=1e-9)
    lo, hi = proportion_ci(2.5, 10)  # fractional (expected) counts: same formula
    assert lo < 0.25 < hi
    assert proportion_ci(0, 0) == (0.0, 1.0)


def test_random_critic_scores_near_chance():
    traj = traj_of({f"p{i}": "u" * 10 for i in range(5)})
    critic, n = RandomCritic(seed=1), 1000
    scores = [score_report(critic.assess(traj), "p2", [3, 4]) for _ in range(n)]
    agent = sum(s["agent_hit"] for s in scores)
    step = sum(s["step_hit"] for s in scores)
    lo, hi = proportion_ci(agent, n)
    assert lo <= 1 / 5 <= hi
    lo, hi = proportion_ci(step, n)
    assert lo <= chance_step_hit(range(10), [3, 4]) <= hi
    assert all(len(s["tied"]) == 1 for s in scores)


def test_trivial_rules_blame_what_they_say():
    traj = traj_of({"a": "uddddd", "b": "ddsddd", "c": "uuuddd"}, {"a": 1.0, "b": 1.0, "c": 0.5})
    blamed = {name: blame(rule.assess(traj)) for name, rule in TRIVIAL_RULES.items()}
    assert blamed["unusual_actions"].agent == "b" and blamed["unusual_actions"].steps == (2,)  # 's' is rare
    assert blamed["action_switches"].agent == "b" and blamed["action_switches"].steps == (2,)
    assert blamed["histogram_outlier"].agent == "c"
    assert blamed["first_speaker"].agent == "a" and blamed["last_speaker"].agent == "c"
    assert blamed["lowest_return"].agent == "c"
    shared = traj_of({"a": "du", "b": "ud"}, {"a": 1.0, "b": 1.0})
    assert blame(TRIVIAL_RULES["lowest_return"].assess(shared)).tied == ("a", "b")


def test_action_leakage_flags_a_statistic_that_finds_the_faulty_agent():
    leaky = [(traj_of({"a": "dddd", "b": "dsdd", "c": "uudd"}), "b") for _ in range(10)]
    out = action_leakage(leaky)
    assert out["worst_rule"] in ("unusual_actions", "action_switches") and out["p_value"] < 1e-3
    fair = [(traj_of({"a": "dddd", "b": "dudd", "c": "uudd"}), f) for f in "abcabcabca"]
    assert action_leakage(fair)["rules"]["unusual_actions"]["p_value"] > 0.05
    assert action_leakage([])["p_value"] is None


def test_summarise_counts_labels_drops_and_baselines():
    def rec(hit: bool, truth: str, err=None):
        score = {
            "agent_hit": hit,
            "step_hit": False,
            "joint_hit": False,
            "agent_expected": float(hit),
            "step_expected": 0.0,
            "tied": ["a"],
            "error": err,
            "visible": True,
        }
        return {
            "chance_agent": 0.5,
            "chance_step": 0.25,
            "truth_agent": truth,
            "critic": score,
            "baselines": {"random": {**score, "agent_expected": 0.5}},
        }

    s = summarise("x", "c", [rec(True, "a"), rec(False, "a", "E"), rec(False, "b")], drawn=5)
    assert (s.cases, s.drawn, s.dropped, s.critic_failures) == (3, 5, 2, 1)
    assert s.agent.value == pytest.approx(1 / 3) and s.labels == {"a": 2, "b": 1}
    assert s.majority_label == pytest.approx(2 / 3) and s.baselines["random"]["agent"].value == 0.5
    assert s.visible == 1.0
    assert "| x | c | 3 (5/2) |" in table([s]) and "| x | 0.50 / 0.00 |" in rules_table([s])
