"""The accept step as unit tests: no rollouts, no model (validation is a table lookup here)."""

from __future__ import annotations

import json

import pytest

from lang_pz.critics import Counterfactual, Evidence
from lang_pz.methods.langmarl.steps import commit_momentum, evidence_gate
from lang_pz.optimisers import Gradient, Momentum
from lang_pz.runs import RunFolder
from lang_pz.training import Context
from lang_pz.training.accept import accept, acceptance_groups, accepts, policy_candidates


def _ev(episode, *probes):
    return Evidence(
        episode=episode,
        counterfactuals=[
            Counterfactual(agents=tuple(agents), replacement=word, value=0.0, delta=delta, steps=1)
            for agents, word, delta in probes
        ],
    )


@pytest.mark.parametrize(
    ("current", "candidate", "tolerance", "ok"),
    [
        (10.0, 10.0, 0.0, True),  # not worse: kept
        (10.0, 9.9, 0.0, False),  # any drop is a regression at tolerance 0
        (10.0, 8.0, 2.0, True),  # a drop within the tolerance
        (10.0, 7.9, 2.0, False),
        (10.0, 10.5, -1.0, False),  # a negative tolerance requires a gain of at least 1
        (10.0, 11.0, -1.0, True),
        (None, 3.0, 0.0, True),  # no validation seeds: unchecked
        (3.0, None, 0.0, True),
    ],
)
def test_accepts(current, candidate, tolerance, ok):
    assert accepts(current, candidate, tolerance) is ok


def test_evidence_gate_keeps_only_agents_some_rerun_improved():
    evidence = [
        _ev(0, (["a"], "down", 4.0), (["a"], "stay", -1.0), (["b"], "down", -2.0)),
        _ev(1, (["a"], "down", -2.0), (["b"], "down", 0.0)),
    ]
    # a: down has mean +1 -> not gated; b: best mean -1 -> gated; c: never replaced -> gated (None)
    assert evidence_gate(Context(), ["a", "b", "c"], evidence) == {"b": -1.0, "c": None}
    assert evidence_gate(Context(), ["a"], [_ev(0, (["a"], "up", 0.0))]) == {"a": 0.0}  # no gain is no evidence


def test_acceptance_groups():
    assert acceptance_groups(["a", "b", "c"], "joint") == [["a", "b", "c"]]
    assert acceptance_groups([], "joint") == [] and acceptance_groups([], "per_agent") == []
    assert acceptance_groups(["a", "b", "c"], "per_agent", {"a": 1.0, "b": 5.0, "c": None}) == [["b"], ["a"], ["c"]]
    assert acceptance_groups(["a", "b"], "per_agent") == [["a"], ["b"]]  # no evidence: the given order
    with pytest.raises(ValueError, match="joint"):
        acceptance_groups(["a"], "both")  # type: ignore[arg-type]


def _table(values):
    """A validation stand-in: the value of a team is looked up by what each agent plays."""
    calls = []

    def validate(policies, label):
        calls.append(label)
        return values[tuple(sorted(policies.items()))]

    return validate, calls


def test_per_agent_acceptance_stacks_accepted_agents():
    cur = {"a": "up", "b": "up"}
    values = {(("a", "up"), ("b", "up")): 5.0, (("a", "down"), ("b", "up")): 7.0, (("a", "down"), ("b", "down")): 6.0}
    validate, calls = _table(values)
    res = accept(cur, policy_candidates({"a": "down", "b": "down"}), 5.0, validate, groups=[["a"], ["b"]])
    assert calls == ["candidate a", "candidate b"]
    assert res.parameter == {"a": "down", "b": "up"} and res.value == 7.0  # b's change, on top of a's, lost 1
    assert res.accepted_labels == ["a"] and res.accepted is True and res.candidate_value == 7.0
    assert [d["accepted"] for d in res.decisions] == [True, False]
    assert res.decisions[1] == {"agents": ["b"], "val_return": 7.0, "candidate_val_return": 6.0, "accepted": False}
    with_tolerance = accept(
        cur, policy_candidates({"a": "down", "b": "down"}), 5.0, _table(values)[0], groups=[["a"], ["b"]], tolerance=1
    )
    assert with_tolerance.accepted_labels == ["a", "b"] and with_tolerance.value == 6.0


def test_joint_acceptance_is_all_or_nothing():
    cur = {"a": "up", "b": "up"}
    values = {(("a", "up"), ("b", "up")): 5.0, (("a", "down"), ("b", "down")): 4.0}
    res = accept(cur, policy_candidates({"a": "down", "b": "down"}), 5.0, _table(values)[0], groups=[["a", "b"]])
    assert res.parameter == cur and res.value == 5.0 and res.accepted is False
    assert res.candidate_value == 4.0  # the rejected candidate's value is reported
    none = accept(cur, policy_candidates({}), 5.0, _table(values)[0], groups=[])
    assert none.accepted is None and none.candidate_value is None and none.parameter == cur


def test_accept_logs_each_decision(tmp_path):
    run = RunFolder(tmp_path / "run")
    run.create("{}")
    log = run.begin(0)
    values = {(("a", "up"),): 1.0, (("a", "down"),): 2.0}
    accept({"a": "up"}, policy_candidates({"a": "down"}), 1.0, _table(values)[0], groups=[["a"]], log=log)
    lines = [json.loads(x) for x in log.files.log("acceptance").read_text().splitlines()]
    assert lines == [{"agents": ["a"], "val_return": 1.0, "candidate_val_return": 2.0, "accepted": True}]


def test_momentum_is_committed_only_for_accepted_agents():
    m = Momentum(beta=0.5)
    m.push("b", Gradient(agent="b", change="earlier"))
    updates = {"a": Gradient(agent="a", change="go left"), "b": Gradient(agent="b", change="go right")}
    commit_momentum(m, updates, accepted=["a"])
    assert [g.change for _, g in m.get("a")] == ["go left"]
    assert [(w, g.change) for w, g in m.get("b")] == [(1.0, "earlier")]  # rejected: no push, no decay
    commit_momentum(None, updates, accepted=["a"])  # no momentum configured: nothing to do


def test_accept_refuses_a_group_without_a_candidate():
    from lang_pz.error import LangPZError
    from lang_pz.training.accept import accept

    with pytest.raises(LangPZError, match=r"name \['piston_9'\], which have no candidate"):
        accept({"piston_0": "a"}, policy_candidates({"piston_0": "b"}), 1.0, lambda p, label: 1.0, groups=[["piston_9"]])


def test_the_same_returns_summed_in_another_order_are_not_a_regression():
    # measured: a demo candidate's validation mean against the current one's, same episodes
    assert accepts(-26.598532494758942, -26.598532494758956)
    assert sum([0.1, 0.2, 0.3]) != sum([0.3, 0.2, 0.1]) and accepts(sum([0.1, 0.2, 0.3]), sum([0.3, 0.2, 0.1]))


def test_a_real_drop_is_still_refused_and_a_required_gain_still_required():
    assert not accepts(-26.5985, -26.6)
    assert not accepts(1000.0, 999.99)
    assert not accepts(10.0, 10.0, tolerance=-0.5)
    assert accepts(10.0, 10.5, tolerance=-0.5)
    assert accepts(None, 1.0) and accepts(1.0, None)
