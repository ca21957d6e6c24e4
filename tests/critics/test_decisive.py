"""The decisive-error critic (lang_pz.critics.decisive) on real Pistonball fault cases.

Cases: 5 pistons, ``hold=1``, 20 cycles, the scripted heuristic team, one piston made faulty
(``misplay``) over two decisions, drawn by :func:`lang_pz.evaluation.cases.draw_case`. The
accuracy is measured and printed, not asserted: without a reference, an early change of any
piston can recover the loss (the heuristic team is not optimal), see
``benchmarks/results/credit_modes_new.md``.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from pydantic import ValidationError

import lang_pz
from lang_pz.critics.decisive import DecisiveCritic, decisive_probes, local_runner, own_steps, recovery_target
from lang_pz.error import InvalidKwargError
from lang_pz.evaluation.bases import base_factory
from lang_pz.evaluation.cases import draw_case
from lang_pz.test import ScriptedBackend
from lang_pz.training import TrainConfig, train

ENV_ID = "butterfly/pistonball-v0"
KW = {"n_pistons": 5, "hold": 1, "max_cycles": 20}


@pytest.fixture(scope="module")
def env():
    return lang_pz.make(ENV_ID, **KW)


def fault_case(env, seed: int):
    make = base_factory("heuristic", ENV_ID)
    case, _ = draw_case(
        env,
        lambda: {a: make(env, a, j) for j, a in enumerate(env.possible_agents)},
        seed=seed,
        rng=np.random.default_rng(seed),
        fault="misplay",
        window=2,
    )
    assert case is not None
    return case


@pytest.fixture(scope="module")
def cases(env):
    return [fault_case(env, s) for s in range(4)]


def blamed(report) -> str:
    return min(report.credits, key=lambda a: report.credits[a].credit)


def test_the_blamed_agent_made_the_earliest_recovering_decision(env, cases):
    critic = DecisiveCritic(significance=None)  # the ranking itself; the verdict: tests/critics/test_significance.py
    agent_hits = step_hits = 0
    for case in cases:
        traj = case.trajectory
        found = critic.search(traj, local_runner(env, case.team, traj))
        report = critic.assess(traj, None, found.probes)
        assert set(report.credits) == set(traj.agents) and report.mode == "decisive"
        target = recovery_target(found.probes, critic.share, critic.min_gain)
        assert target is not None  # a fault that hurt leaves something to recover
        decisive = decisive_probes(traj, found.probes, critic.share, critic.min_gain)
        who = blamed(report)
        assert who in decisive and decisive[who].delta >= target
        first = {a: min(own_steps(traj, a, p.at_steps)) for a, p in decisive.items()}
        assert first[who] == min(first.values())  # nobody's decisive step comes earlier
        cited = report.credits[who].steps
        assert cited and set(cited) <= {s.step for s in traj.agent_steps(who)}  # its own steps
        assert all(report.credits[a].credit == 0.0 for a in traj.agents if a not in decisive)
        agent_hits += who == case.agent
        step_hits += who == case.agent and bool(set(cited) & set(case.faulty_steps))
    print(f"decisive on {len(cases)} Pistonball cases: agent {agent_hits}, step {step_hits}")


def test_a_refined_decisive_probe_is_minimal(env, cases):
    """No recovering re-run of the blamed agent replaces a strict subset of its decisive decisions."""
    critic = DecisiveCritic()
    case = cases[0]
    found = critic.search(case.trajectory, local_runner(env, case.team, case.trajectory))
    target = recovery_target(found.probes, critic.share, critic.min_gain)
    for a, p in decisive_probes(case.trajectory, found.probes, critic.share, critic.min_gain).items():
        smaller = [q for q in found.probes if q.agents == (a,) and set(q.at_steps or ()) < set(p.at_steps or ())]
        assert all(q.delta < target for q in smaller)


def test_the_search_never_exceeds_its_budget(env, cases):
    case = cases[1]
    for budget in (1, 7, 30):
        found = DecisiveCritic(max_reruns=budget).search(case.trajectory, local_runner(env, case.team, case.trajectory))
        assert found.reruns == len(found.probes) <= budget and found.calls == 0  # scripted team: no LLM
    assert found.exhausted or found.reruns < 30


def test_the_same_seed_gives_the_same_result(env):
    a, b = fault_case(env, 2), fault_case(env, 2)
    reports = []
    for case in (a, b):
        critic = DecisiveCritic(max_reruns=60)
        found = critic.search(case.trajectory, local_runner(env, case.team, case.trajectory))
        reports.append((found.probes, critic.assess(case.trajectory, None, found.probes).credits))
    assert reports[0] == reports[1]


def test_nothing_to_recover_is_a_tie(env, cases):
    """When no re-run beat the factual episode (here: the real re-runs with every gain made a
    loss), nothing recovers and every agent gets credit 0."""
    case = cases[0]
    found = DecisiveCritic(max_reruns=40).search(case.trajectory, local_runner(env, case.team, case.trajectory))
    worse = [p.model_copy(update={"delta": -abs(p.delta) - 1.0}) for p in found.probes]
    report = DecisiveCritic().assess(case.trajectory, None, worse)
    assert {c.credit for c in report.credits.values()} == {0.0}


def test_the_same_decisive_step_and_gain_is_a_tie(cases):
    """Two agents whose decisive change comes at the same step with the same gain share the
    lowest credit (no agent order decides), an earlier one alone gets -1."""
    from lang_pz.critics.counterfactual import Counterfactual

    traj = cases[0].trajectory
    a, b, c = traj.agents[:3]

    def probe(agent, k, delta):
        return Counterfactual(agents=(agent,), replacement="up", value=delta, delta=delta, steps=1, at_steps=(k,))

    ranking = DecisiveCritic(significance=None)  # the ranking itself, before any verdict
    report = ranking.assess(traj, None, [probe(a, 1, 10.0), probe(b, 1, 10.0), probe(c, 2, 9.0)])
    credits = {x: report.credits[x].credit for x in (a, b, c)}
    assert credits[a] == credits[b] == -1.0 < credits[c] < 0.0
    report = ranking.assess(traj, None, [probe(a, 0, 10.0), probe(b, 1, 10.0)])
    assert report.credits[a].credit == -1.0 < report.credits[b].credit
    # with the verdict: a tie at the top, or a teammate recovering as much, names no one
    for probes in ([probe(a, 1, 10.0), probe(b, 1, 10.0)], [probe(a, 0, 10.0), probe(b, 1, 10.0)]):
        report = DecisiveCritic().assess(traj, None, probes)
        assert report.verdict == [] and {c.credit for c in report.credits.values()} == {0.0}


def test_a_whole_episode_probe_shows_every_decision_to_the_difference_critic_only(cases):
    """``shown_steps`` of a probe with ``at_steps=None``: all its agent's steps for the
    difference critic, none for the decisive critic (it counts the decisions a probe names)."""
    from lang_pz.critics.counterfactual import Counterfactual
    from lang_pz.critics.difference import DifferenceCritic

    traj = cases[0].trajectory
    a, *rest = traj.agents

    def probe(agent, at, delta):
        return Counterfactual(agents=(agent,), replacement="up", value=delta, delta=delta, steps=1, at_steps=at)

    probes = [probe(a, None, 5.0)] + [probe(b, (1,), 1.0) for b in rest]
    second = {sorted(s.step for s in traj.agent_steps(b))[1] for b in rest}
    whole = {s.step for s in traj.agent_steps(a)}
    assert len(whole) > 2 and not whole <= second
    difference = DifferenceCritic().assess(traj, None, probes)
    decisive = DecisiveCritic().assess(traj, None, probes)
    assert difference.shown_steps == sorted(whole | second)
    assert decisive.shown_steps == sorted(second)
    assert difference.credits[a].credit == -1.0 and difference.credits[a].steps == []  # who, not when


def test_bad_settings_are_refused():
    for kw, msg in (
        ({"window": 0}, "window must be >= 1"),
        ({"share": 0}, r"share must be in \(0, 1\]"),
        ({"max_reruns": 0}, "max_reruns must be >= 1"),
        ({"replacements": ["previous"]}, "replaces decisions by choices the agent had"),
        ({"replacements": "alternatives"}, "must be a non-empty list"),
    ):
        with pytest.raises(InvalidKwargError, match=msg):
            DecisiveCritic(**kw)
    with pytest.raises(ValidationError, match="'decisive' searches re-runs"):
        TrainConfig(langmarl={"critic_mode": "decisive"})
    with pytest.raises(ValidationError, match="chooses the decisions it replaces itself"):
        TrainConfig(langmarl={"critic_mode": "coalition", "counterfactual": ["alternatives"], "counterfactual_steps": [0]})
    with pytest.raises(ValidationError, match="replaces whole policies"):
        TrainConfig(langmarl={"critic_mode": "decisive", "counterfactual": ["previous"]})


def test_eval_critic_offers_the_new_modes():
    from lang_pz.critics import critic_modes

    assert {"decisive", "coalition"} <= set(critic_modes("search"))


# -- train() with each new mode, a scripted stand-in for every role --------------------------


def _reply(req) -> str:
    p = req.prompt if req.prompt is not None else "\n".join(m.content for m in req.messages or ())
    if req.role == "actor":
        return "down" if "down" in re.findall(r"^Policy: (.*)$", p, re.MULTILINE)[-1] else "up"
    if req.role == "critic.explain":
        return json.dumps({k: {"explanation": "scripted words"} for k in req.json_schema["properties"]})
    if req.role.startswith("optimiser.gradient") or req.role == "optimiser.aggregate":
        change = req.json_schema["properties"]["change"].get("enum", ["push the other way"])[0]
        return json.dumps({"keep": "", "change": change, "drop": "", "evidence_steps": []})
    current = re.findall(r"^Current policy: (.*)$", p.rsplit("Now your task:", 1)[-1], re.MULTILINE)[-1]
    return json.dumps({"policy": current})


@pytest.mark.parametrize("mode", ["decisive", "coalition"])
def test_train_runs_with_the_new_critic_mode(tmp_path, mode):
    backend = ScriptedBackend(_reply)
    cfg = TrainConfig(
        env_kwargs={"n_pistons": 5, "hold": 5, "max_cycles": 50},
        iterations=1,
        episodes_per_iteration=1,
        validation_seeds=[1001],
        initial_policy="Always push up.",
        run_dir=str(tmp_path / "run"),
        langmarl={
            "critic_mode": mode,
            "counterfactual": ["alternatives"],
            "decisive_max_reruns": 12,
            "coalition_max_reruns": 4,
        },
        on_stage_failure="continue",  # the stand-in's updates keep the old text, which the evidence refuses
    )
    train(cfg, backends=backend)
    d = tmp_path / "run" / "iter_000"
    (report,) = [json.loads(x) for x in (d / "credits.jsonl").read_text().splitlines()]
    assert report["mode"] == mode and set(report["credits"]) == {f"piston_{i}" for i in range(5)}
    (search,) = [json.loads(x) for x in (d / "credit_search.jsonl").read_text().splitlines()]
    probes = (d / "counterfactuals.jsonl").read_text().splitlines()
    assert search["reruns"] == len(probes) <= 12 + (4 if mode == "coalition" else 0)
    assert search["calls"] > 0  # the LLM actors were asked where a replacement reached them


def test_eval_critic_runs_the_new_modes(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    import lang_pz.backends
    from lang_pz.cli import app

    monkeypatch.setattr(lang_pz.backends, "make_backend", lambda spec, **kw: ScriptedBackend(_reply))
    args = ["eval-critic", "--env", ENV_ID, "--kw", "n_pistons=5", "--kw", "hold=1", "--kw", "max_cycles=20"]
    modes = ["--critic-mode", "decisive", "--critic-mode", "coalition", "--cases", "1"]
    res = CliRunner().invoke(app, [*args, *modes, "--out", str(tmp_path / "res")])
    assert res.exit_code == 0, res.output
    summary = json.loads((tmp_path / "res" / "summary.json").read_text())
    assert [s["critic"] for s in summary["summaries"]] == ["decisive", "coalition"]
    (record,) = [json.loads(x) for x in next((tmp_path / "res").glob("*pistonball*.jsonl")).read_text().splitlines()]
    assert 0 < record["critics"]["decisive"]["reruns"] <= 200 and record["critics"]["decisive"]["calls"] == 0
    assert record["critics"]["coalition"]["reruns"] <= 200 + 32
    bad = CliRunner().invoke(app, [*args, *modes, "--evidence", "reference", "--out", str(tmp_path / "n")])
    assert bad.exit_code != 0 and "'previous'/'reference'" in bad.output
