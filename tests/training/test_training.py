"""The training loop (lang_pz.training) and its run folder (lang_pz.runs).

Unit tests run the real ``butterfly/pistonball-v0`` env (5 pistons, ``hold=5``, 50 cycles:
10 decisions per piston) with :class:`ScriptedBackend`, a scripted LLM stand-in that answers
per role: actors play what their policy text says ("down" if it says down, else "up"), the
critic returns valid credits, the optimiser flips chosen agents' policies between
"Always push up." and "Always push down.". Expected returns are computed in the tests from
:class:`ConstantPolicy` rollouts, never hard-coded.

The one integration test kills a real ``lang-pz train`` (embedded model) with SIGKILL and
resumes it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import fields
from pathlib import Path

import pytest
from pydantic import ValidationError
from standins import (
    AGENTS,
    DOWN,
    ENV,
    ENV_ID,
    SLOPE,
    UP,
    VAL_SEED,
    StandIn,
    config,
    critic_credit,
    episode_lines,
    flip,
    jsonl,
    prompt_of,
    role_of,
    team_return,
    train_with,
)
from typer.testing import CliRunner

import lang_pz
from lang_pz.critics import Counterfactual, Credit, Evidence
from lang_pz.critics.counterfactual import best_gain
from lang_pz.error import InvalidKwargError, RunDirError
from lang_pz.policies.scripted import ConstantPolicy
from lang_pz.rollout import rollout
from lang_pz.test import ScriptedBackend
from lang_pz.training import IterationMetrics, TrainConfig, train

# -- a two-iteration run shared by several tests -------------------------------------------


@pytest.fixture(scope="module")
def flip_run(tmp_path_factory):
    """Two iterations x two episodes from all "up": iteration 0 flips pistons 0-2 to "down"
    (a slope: accepted), iteration 1 flips them back to "up" (all up again: rejected).
    One shared critique (``central_global``), so the three edits are validated as one update."""
    run = tmp_path_factory.mktemp("flip") / "run"
    stand_in = StandIn(flipping=AGENTS[:3])
    messages: list[str] = []
    result = train_with(
        stand_in, config(run, iterations=2, episodes_per_iteration=2, critic_mode="central_global"), progress=messages.append
    )
    return result, stand_in, run, messages


def test_run_folder_holds_every_artefact_of_every_iteration(flip_run):
    result, _, run, messages = flip_run
    cfg = json.loads((run / "config.json").read_text())
    assert cfg["iterations"] == 2 and cfg["run_dir"] == str(run) and cfg["env_kwargs"] == ENV
    assert sorted(p.name for p in run.iterdir()) == [
        "config.json",
        "final",
        "iter_000",
        "iter_001",
        "metrics.jsonl",
        "phases.json",
    ]
    before = {0: dict.fromkeys(AGENTS, UP), 1: SLOPE}  # the policies each iteration's episodes used
    for it in (0, 1):
        d = run / f"iter_{it:03d}"
        assert {p.name for p in d.iterdir()} - {"acceptance.jsonl"} == {
            "policies",
            "trajectories.jsonl",
            "credits.jsonl",
            "gradients.jsonl",
            "candidates",
            "validation.jsonl",
            "validation_trajectories.jsonl",
            "usage.json",
            "done.json",
        }
        assert lang_pz.runs.read_policies(d / "policies") == before[it]
        trajs = lang_pz.trajectory.read_trajectories(d / "trajectories.jsonl")
        assert [t.episode for t in trajs] == [2 * it, 2 * it + 1] and all(t.finished for t in trajs)
        assert [t.seed for t in trajs] == [2 * it, 2 * it + 1]  # seed + episode index
        for t in trajs:  # the actors played what their policy says
            assert all(s.raw_output == ("down" if "down" in before[it][s.agent] else "up") for s in t.steps)
            assert 0 < len(t.steps) <= 5 * 10 and set(t.agents) == set(AGENTS)  # <= 10 decisions per piston
        credits = jsonl(d / "credits.jsonl")
        assert [c["episode"] for c in credits] == [2 * it, 2 * it + 1]
        assert all(c["credits"][a]["credit"] == critic_credit("team") for c in credits for a in AGENTS)
        grads = jsonl(d / "gradients.jsonl")
        assert [g["agent"] for g in grads] == AGENTS  # every trainable agent got an optimiser step
        assert all(len(g["gradients"]) == 2 for g in grads)  # one gradient per episode
        assert lang_pz.runs.read_policies(d / "candidates") == {a: flip(before[it][a]) for a in AGENTS[:3]}
        val = jsonl(d / "validation.jsonl")
        assert [(v["policies"].split()[0], v["seed"]) for v in val] == ([("current", VAL_SEED)] if it == 0 else []) + [
            ("candidate", VAL_SEED)
        ]
        done = json.loads((d / "done.json").read_text())
        assert done["metrics"] == json.loads((run / "metrics.jsonl").read_text().splitlines()[it])
        assert done["calls_total"] == sum(m.llm_calls for m in result.metrics[: it + 1])
    metrics = jsonl(run / "metrics.jsonl")
    assert [m["iteration"] for m in metrics] == [0, 1]
    assert all(set(m) == {f.name for f in fields(IterationMetrics)} for m in metrics)
    assert [IterationMetrics(**m) for m in metrics] == result.metrics
    for m, it in zip(result.metrics, (0, 1)):
        trajs = lang_pz.trajectory.read_trajectories(run / f"iter_{it:03d}" / "trajectories.jsonl")
        assert m.train_returns == [round(t.team_return, 3) for t in trajs]
        assert m.train_return == pytest.approx(sum(m.train_returns) / 2, abs=1e-3)
        assert m.changed_agents == AGENTS[:3]
        assert m.parse_error_rate == 0 and m.critic_failures == 0 and m.optimiser_failures == 0
        assert m.seconds >= 0
    assert lang_pz.runs.read_policies(run / "final" / "policies") == result.final_policies
    assert result.initial_policies == dict.fromkeys(AGENTS, UP)
    assert any(msg.startswith("iteration 0:") and "accepted" in msg for msg in messages)
    # one shared critique: every agent holds the same credit, no one is singled out
    assert any(msg.startswith("iteration 0:") and "every agent blamed alike" in msg for msg in messages)


def test_validation_accepts_a_better_candidate_and_rejects_a_worse_one(flip_run):
    result, _, run, _ = flip_run
    all_up = team_return(dict.fromkeys(AGENTS, UP), VAL_SEED)
    slope = team_return(SLOPE, VAL_SEED)
    assert slope > all_up  # the premise of this test (ConstantPolicy rollouts, not the trainer)
    m0, m1 = result.metrics
    # iteration 0: all up -> slope raises the validation return: accepted
    assert (m0.val_return, m0.candidate_val_return, m0.accepted) == (
        pytest.approx(all_up, abs=1e-3),
        pytest.approx(slope, abs=1e-3),
        True,
    )
    # iteration 1: slope -> all up lowers it: rejected, the slope is kept
    assert (m1.val_return, m1.candidate_val_return, m1.accepted) == (
        pytest.approx(slope, abs=1e-3),
        pytest.approx(all_up, abs=1e-3),
        False,
    )
    assert result.final_policies == SLOPE
    assert lang_pz.runs.read_policies(run / "final" / "policies") == SLOPE
    done1 = json.loads((run / "iter_001" / "done.json").read_text())
    assert done1["policies"] == SLOPE and done1["val_return_next"] == pytest.approx(slope)
    val = jsonl(run / "iter_001" / "validation.jsonl")
    assert [(v["policies"].split()[0], v["seed"], v["team_return"]) for v in val] == [
        ("candidate", VAL_SEED, round(all_up, 3))
    ]


def test_per_role_usage_adds_up_to_llm_calls(flip_run):
    result, stand_in, _, _ = flip_run
    for m in result.metrics:
        assert set(m.usage) == {"actor", "critic", "optimiser"}
        assert sum(u["calls"] for u in m.usage.values()) == m.llm_calls
        assert m.cached_calls == 0 and all(u["cost_usd"] == 0 for u in m.usage.values())
    total = {r: sum(m.usage[r]["calls"] for m in result.metrics) for r in ("actor", "critic", "optimiser")}
    assert total == {r: len(stand_in.requests(r)) for r in total}
    assert sum(m.llm_calls for m in result.metrics) == len(stand_in.backend.requests)
    # actor calls: 2 training episodes + validation of current (iteration 0 only) and candidate; in
    # iteration 0 the candidate's unchanged agents are answered from the current team's validation
    # episode where they see what they saw there (lang_pz.policies.replay), in iteration 1 (no current
    # validation: its value is carried) every decision is asked
    steps = [
        [len(t.steps) for t in lang_pz.trajectory.read_trajectories(p)[:2]]
        for p in sorted(result.run_dir.glob("iter_*/trajectories.jsonl"))
    ]
    val_steps = [
        [len(t.steps) for t in lang_pz.trajectory.read_trajectories(p)]
        for p in sorted(result.run_dir.glob("iter_*/validation_trajectories.jsonl"))
    ]
    actor = [m.usage["actor"]["calls"] for m in result.metrics]
    assert actor[1] == sum(steps[1]) + sum(val_steps[1])
    assert sum(steps[0]) + val_steps[0][0] < actor[0] < sum(steps[0]) + sum(val_steps[0])
    assert total["critic"] == 4  # one call per episode, all valid
    # per agent and iteration: 2 gradients (one per episode), their aggregate, the apply stage
    assert [m.usage["optimiser"]["calls"] for m in result.metrics] == [5 * 4, 5 * 4]


def test_tolerance_accepts_a_small_validation_drop(tmp_path):
    all_down = dict.fromkeys(AGENTS, DOWN)
    drop = team_return(SLOPE, VAL_SEED) - team_return(all_down, VAL_SEED)
    assert drop > 1  # premise: flipping pistons 3-4 to down lowers the validation return a little
    for tol, accepted in ((0.0, False), (drop - 1, False), (drop + 1, True)):
        stand_in = StandIn(flipping=AGENTS[3:])
        res = train_with(
            stand_in, config(tmp_path / f"tol{tol}", initial_policies=SLOPE, tolerance=tol, critic_mode="central_global")
        )  # the two edits validated as one update
        (m,) = res.metrics
        assert m.accepted is accepted, tol
        assert m.val_return - m.candidate_val_return == pytest.approx(drop, abs=2e-3)
        assert res.final_policies == (all_down if accepted else SLOPE)


def test_no_validation_seeds_accepts_unchecked(tmp_path):
    stand_in = StandIn(flipping=AGENTS)
    res = train_with(stand_in, config(tmp_path / "run", validation_seeds=[]))
    (m,) = res.metrics
    assert (m.val_return, m.candidate_val_return, m.accepted) == (None, None, True)
    assert res.final_policies == dict.fromkeys(AGENTS, DOWN)
    assert not (tmp_path / "run" / "iter_000" / "validation.jsonl").exists()


def test_validation_seeds_must_not_be_training_seeds():
    with pytest.raises(ValidationError, match=r"validation_seeds \[3\] are also training seeds.*held out"):
        TrainConfig(seed=0, iterations=2, episodes_per_iteration=2, validation_seeds=[3, 1000])
    with pytest.raises(ValidationError, match=r"\[10, 11\]"):
        TrainConfig(seed=10, iterations=1, episodes_per_iteration=2, validation_seeds=[11, 10, 12])
    TrainConfig(seed=0, iterations=2, episodes_per_iteration=2, validation_seeds=[4])  # the next seed is free


@pytest.mark.parametrize(
    "fields",
    [
        {"tolerance": float("nan")},
        {"momentum": float("nan")},
        {"critic_temperature": float("inf")},
        {"langmarl": {"critic_credit_levels": [0.0, float("nan")]}},
        {"prices": {"openai:m": (float("inf"), 1.0)}},
        {"env_kwargs": {"options": {"scale": [1.0, float("nan")]}}},
        {"backend_options": {"openai:m": {"timeout_s": float("inf")}}},
    ],
)
def test_config_refuses_non_finite_numbers(fields):
    """NaN/inf would be written to config.json as null, so --resume of that run always failed."""
    (name,) = fields
    with pytest.raises(ValidationError, match=rf"{name}[\s\S]*(finite|nan|inf)"):
        TrainConfig(**fields)


def test_config_json_round_trips():
    cfg = TrainConfig(tolerance=-0.5, prices={"openai:m": (2.5, 10.0)}, env_kwargs={"n_pistons": 5})
    assert TrainConfig.model_validate_json(cfg.model_dump_json()) == cfg


@pytest.mark.parametrize("field", ["validation_seeds", "test_seeds"])
def test_config_refuses_negative_seeds(field):
    """A negative seed failed after the first episode with a message naming neither field nor value."""
    with pytest.raises(ValidationError, match=rf"{field} \[-1\] are negative.*seeds >= 0"):
        TrainConfig(**{field: [-1, 2000]})
    with pytest.raises(ValidationError, match=r"seed[\s\S]*greater than or equal to 0[\s\S]*input_value=-1"):
        TrainConfig(seed=-1)


# -- evidence gate and critic modes --------------------------------------------------------


def test_evidence_gate_skips_agents_no_rerun_improved(tmp_path):
    stand_in = StandIn(flipping=AGENTS)
    seed = 0
    base = team_return(dict.fromkeys(AGENTS, UP), seed)
    gains = {a: max(team_return({**dict.fromkeys(AGENTS, UP), a: DOWN}, seed), _stay_return(a, seed)) - base for a in AGENTS}
    helped = sorted(a for a in AGENTS if gains[a] > 0)
    gated = sorted(a for a in AGENTS if gains[a] <= 0)
    assert helped and gated  # premise: seed 0 from all up has both kinds
    res = train_with(stand_in, config(tmp_path / "run", seed=seed, counterfactual=["alternatives"]))
    d = tmp_path / "run" / "iter_000"
    probes = jsonl(d / "counterfactuals.jsonl")
    assert sorted((p["agents"][0], p["replacement"]) for p in probes) == sorted(
        (a, w) for a in AGENTS for w in ("down", "stay")
    )  # "up" was played: skipped
    lines = jsonl(d / "gated.jsonl")
    assert [g["agent"] for g in lines] == gated
    for g in lines:
        assert g["best_gain"] == pytest.approx(gains[g["agent"]], abs=2e-3)
        assert "no counterfactual re-run beat" in g["reason"]
    assert [g["agent"] for g in jsonl(d / "gradients.jsonl")] == helped
    for a in gated:
        assert stand_in.requests("optimiser", a) == []  # no optimiser call at all
    for a in helped:
        grad_prompt = prompt_of(stand_in.requests("gradient", a)[0])
        assert "Computed re-runs of" in grad_prompt  # the evidence reaches the optimiser
    assert res.metrics[0].changed_agents == helped


def _stay_return(agent: str, seed: int) -> float:
    env = lang_pz.make(ENV_ID, **ENV)
    try:
        pol = {a: ConstantPolicy("stay" if a == agent else "up") for a in AGENTS}
        return rollout(env, pol, seed=seed).team_return
    finally:
        env.close()


@pytest.mark.parametrize(
    ("entry", "env_id", "suggestion"),
    [
        ("alternativs", "butterfly/pistonball-v0", "'alternatives'"),
        ("dwn", "butterfly/pistonball-v0", "'down'"),
        ("previous", "butterfly/pistonball-v0", "previous policies"),
        ("rocks", "classic/rps-v0", "'rock'"),
    ],
)
def test_counterfactual_typo_is_refused_before_anything_is_written(tmp_path, entry, env_id, suggestion):
    """A typo was re-run as an action word and the optimiser wrote "Play alternativs" into a policy."""
    stand_in = StandIn(flipping=AGENTS)
    cfg = TrainConfig(
        env_id=env_id,
        env_kwargs=ENV if "piston" in env_id else {},
        langmarl={"counterfactual": [entry]},
        objective="win:player_0" if "rps" in env_id else None,
        validation_seeds=[VAL_SEED],
        run_dir=str(tmp_path / "run"),
    )
    with pytest.raises(InvalidKwargError, match=rf"counterfactual entry '{entry}'.*alternatives, default, random") as e:
        train_with(stand_in, cfg)
    assert suggestion in str(e.value)
    assert not (tmp_path / "run").exists()


def test_counterfactual_accepts_keywords_and_action_words():
    for entry in (["alternatives", "default", "random"], ["stay"]):
        lang_pz.training.build(config(Path("unused"), counterfactual=entry), backends=StandIn(flipping=[]).backend)
    lang_pz.training.build(
        TrainConfig(env_id="classic/tictactoe-v0", objective="win:player_1", langmarl={"counterfactual": ["5"]}),
        backends=StandIn(flipping=[]).backend,
    )  # player_1's first move


@pytest.mark.parametrize(
    ("backends", "where"),
    [
        ("foo", "backends"),
        ("openai:gpt-4o", "backends"),
        ({"critic": "embedded"}, "backends['critic']"),
    ],
)
def test_build_refuses_backend_specs_as_backends(backends, where):
    """``build(cfg, backends="foo")`` raised AttributeError: 'str' object has no attribute 'model'."""
    with pytest.raises(InvalidKwargError, match=re.escape(where) + r" must be an LLMBackend.*actor_backend="):
        lang_pz.training.build(config(Path("unused")), backends=backends)


def test_evidence_gate_off_updates_every_agent(tmp_path):
    stand_in = StandIn(flipping=AGENTS)
    train_with(stand_in, config(tmp_path / "run", counterfactual=["down"], evidence_gate=False))
    d = tmp_path / "run" / "iter_000"
    assert not (d / "gated.jsonl").exists()
    assert [g["agent"] for g in jsonl(d / "gradients.jsonl")] == AGENTS


def test_best_gain_is_the_best_mean_replacement():
    def ev(ep, cfs):
        return Evidence(
            episode=ep,
            counterfactuals=[
                Counterfactual(agents=tuple(ag), replacement=w, value=0.0, delta=dl, steps=1) for ag, w, dl in cfs
            ],
        )

    evidence = [
        ev(0, [(["a"], "down", 4.0), (["a"], "stay", -1.0), (["b"], "down", 9.0)]),
        ev(1, [(["a"], "down", -2.0), (["a"], "stay", 5.0)]),
    ]
    assert best_gain("a", evidence) == pytest.approx(2.0)  # stay: mean(-1, 5) = 2 beats down: mean(4, -2) = 1
    assert best_gain("b", evidence) == pytest.approx(9.0)
    assert best_gain("c", evidence) is None
    assert best_gain("a", [ev(0, [(["a", "b"], "up", -0.5)])]) == pytest.approx(-0.5)


def test_best_gain_keeps_a_words_windows_apart():
    """The decisive search plays one word over many windows (as on Pistonball seed 200 of
    benchmarks/credit_learning.py: up gained +172 at decision 4 and lost elsewhere): one window's
    gain is that replacement's gain, not averaged with the other windows'."""

    def cf(steps, delta):
        return Counterfactual(agents=("a",), replacement="up", value=0.0, delta=delta, steps=5, at_steps=steps)

    windows = Evidence(episode=0, counterfactuals=[cf([0, 1, 2, 3], -200.0), cf([1, 2, 3, 4], 0.0), cf([4], 172.0)])
    assert best_gain("a", [windows]) == pytest.approx(172.0)
    later = Evidence(episode=1, counterfactuals=[cf([4], -72.0)])  # the same window in another episode: averaged
    assert best_gain("a", [windows, later]) == pytest.approx(50.0)


@pytest.mark.parametrize("mode", ["central_global", "central_credit", "independent"])
def test_critic_modes(tmp_path, mode):
    stand_in = StandIn()
    train_with(stand_in, config(tmp_path / "run", critic_mode=mode, validation_seeds=[]))
    (report,) = jsonl(tmp_path / "run" / "iter_000" / "credits.jsonl")
    assert report["mode"] == mode and set(report["credits"]) == set(AGENTS)
    keys = [set(r.json_schema["properties"]) for r in stand_in.requests("critic")]
    if mode == "central_global":  # one shared critique, given to every agent
        assert keys == [{"team"}]
        assert all(
            c["credit"] == critic_credit("team") and c["explanation"] == "scripted credit of team"
            for c in report["credits"].values()
        )
    elif mode == "central_credit":  # one call, a credit per agent
        assert keys == [set(AGENTS)]
        assert [report["credits"][a]["credit"] for a in AGENTS] == [critic_credit(a) for a in AGENTS]
    else:  # one call per agent
        assert keys == [{a} for a in AGENTS]
        assert [report["credits"][a]["credit"] for a in AGENTS] == [critic_credit(a) for a in AGENTS]


def test_the_progress_line_says_who_was_blamed_and_where_as_the_report_does(tmp_path):
    """The per-iteration line names the lowest-credit agent and where its credit points (from
    the iteration's ``credits.jsonl``), the same phrase as the report's decision line. The
    demo's critic: counterfactual, whole-episode re-runs of the other actions ("every step")."""
    from lang_pz.report import decisions, load_run

    messages: list[str] = []
    cfg = config(tmp_path / "run", critic_mode="counterfactual", counterfactual=["alternatives"])
    train_with(StandIn(flipping=AGENTS), cfg, progress=messages.append)
    [line] = [m for m in messages if m.startswith("iteration 0:")]
    gain: dict[str, float] = {}
    for p in jsonl(tmp_path / "run" / "iter_000" / "counterfactuals.jsonl"):
        gain[p["agents"][0]] = max(gain.get(p["agents"][0], -1e9), p["delta"])
    top = sorted(a for a in AGENTS if gain[a] == max(gain.values()))
    assert len(top) == 1 and gain[top[0]] > 0  # premise: one piston's re-run helped most
    phrase = f"blamed {top[0]} (credit -1.00) at every step"
    assert phrase in line and line.index(phrase) < line.index("validation")
    assert dict(decisions(load_run(tmp_path / "run")))[0].startswith(phrase)


# -- budget --------------------------------------------------------------------------------


def test_llm_call_budget_stops_before_the_next_iteration(tmp_path):
    stand_in = StandIn(flipping=AGENTS)
    messages: list[str] = []
    res = train_with(stand_in, config(tmp_path / "run", iterations=3, max_llm_calls=1), progress=messages.append)
    assert len(res.metrics) == 1  # iteration 0 ran to its end, then the budget stopped the run
    calls = res.metrics[0].llm_calls
    assert calls > 1
    assert res.stopped == f"LLM-call budget reached ({calls} uncached calls >= 1)"
    assert any(m.startswith("stopping before iteration 1") for m in messages)
    assert not (tmp_path / "run" / "iter_001").exists()
    assert lang_pz.runs.read_policies(tmp_path / "run" / "final" / "policies") == res.final_policies
    assert len(stand_in.backend.requests) == calls


def test_budget_not_reached_runs_every_iteration(tmp_path):
    si = StandIn()
    res = train_with(si, config(tmp_path / "run", iterations=2, max_llm_calls=10_000, validation_seeds=[]))
    assert len(res.metrics) == 2 and res.stopped == ""


# -- resume --------------------------------------------------------------------------------


def test_resume_redoes_the_interrupted_iteration_only(flip_run, tmp_path):
    original, _, src, _ = flip_run
    run = tmp_path / "run"
    shutil.copytree(src, run)
    shutil.rmtree(run / "final")
    iter0 = {p.relative_to(run): p.read_bytes() for p in (run / "iter_000").rglob("*") if p.is_file()}
    traj_path = run / "iter_001" / "trajectories.jsonl"
    full = traj_path.read_text()
    # a crash inside iteration 1: no done.json, metrics line not written, episode 3 cut mid-way
    (run / "iter_001" / "done.json").unlink()
    metrics_lines = (run / "metrics.jsonl").read_text().splitlines(keepends=True)
    (run / "metrics.jsonl").write_text("".join(metrics_lines[:-1]))
    lines = full.splitlines(keepends=True)
    first_of_3 = next(i for i, line in enumerate(lines) if json.loads(line)["episode"] == 3)
    cut = lines[: first_of_3 + 7]
    traj_path.write_text("".join(cut) + lines[first_of_3 + 7][:25])  # and a half-written line
    ep2_before = [line for line in full.splitlines() if json.loads(line)["episode"] == 2]
    assert ep2_before and json.loads(ep2_before[-1])["type"] == "episode_end"

    stand_in = StandIn(flipping=AGENTS[:3])
    messages: list[str] = []
    res = train_with(stand_in, resume=run, progress=messages.append)

    assert {p.relative_to(run): p.read_bytes() for p in (run / "iter_000").rglob("*") if p.is_file()} == iter0
    assert [m.iteration for m in res.metrics] == [0, 1]
    assert [json.loads(line)["iteration"] for line in (run / "metrics.jsonl").read_text().splitlines()] == [0, 1]
    assert (run / "iter_001" / "done.json").exists()
    assert any("resuming" in m and "1 completed iteration" in m for m in messages)
    assert any("kept 1 finished episode" in m for m in messages)
    assert sum(m.startswith("iteration 1: train return") for m in messages) == 1
    assert sum(m.startswith("iteration 0: train return") for m in messages) == 0
    # the finished episode 2 was kept, not replayed: its lines are unchanged ...
    assert episode_lines(traj_path, 2) == ep2_before

    # ... and episode 3 was played again from its start (deterministic: the same records as the
    # first time, but for measured latencies), after episode 2
    def records(text: str) -> list[dict]:
        return [{k: v for k, v in json.loads(line).items() if k != "latency_s"} for line in text.splitlines()]

    assert records(traj_path.read_text()) == records(full)
    ep2_steps = sum(json.loads(line)["type"] == "agent_step" for line in ep2_before)
    redo, first = res.metrics[1], original.metrics[1]
    assert redo.usage["actor"]["calls"] == first.usage["actor"]["calls"] - ep2_steps
    assert len(stand_in.requests("actor")) == redo.usage["actor"]["calls"]
    for key in ("train_returns", "val_return", "candidate_val_return", "accepted", "changed_agents"):
        assert getattr(redo, key) == getattr(first, key), key
    assert res.final_policies == original.final_policies
    assert lang_pz.runs.read_policies(run / "final" / "policies") == original.final_policies
    assert res.metrics[0] == original.metrics[0]


def test_resume_of_a_finished_run_changes_nothing(flip_run, tmp_path):
    original, _, src, _ = flip_run
    run = tmp_path / "run"
    shutil.copytree(src, run)
    before = {p.relative_to(run): p.read_bytes() for p in run.rglob("*") if p.is_file()}
    stand_in = StandIn(flipping=AGENTS)
    res = train_with(stand_in, resume=run)
    assert stand_in.backend.requests == []  # no new iteration
    assert res.metrics == original.metrics and res.final_policies == original.final_policies
    assert {p.relative_to(run): p.read_bytes() for p in run.rglob("*") if p.is_file()} == before


def test_resume_refuses_a_folder_that_is_not_a_run(tmp_path):
    si = StandIn()
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(RunDirError, match="not a run folder.*config.json is missing"):
        train_with(si, resume=tmp_path)
    (tmp_path / "config.json").write_text('{"iterations": 0}')
    with pytest.raises(RunDirError, match="not a valid TrainConfig"):
        train_with(si, resume=tmp_path)


def test_a_new_run_never_overwrites_a_folder(tmp_path):
    si = StandIn()
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "x").write_text("x")
    with pytest.raises(RunDirError, match="already holds a run.*--resume"):
        train_with(si, config(tmp_path / "run"))


def test_train_needs_exactly_one_of_config_and_resume(tmp_path):
    with pytest.raises(ValueError, match="exactly one"):
        train()
    with pytest.raises(ValueError, match="exactly one"):
        train(config(tmp_path / "run"), resume=tmp_path)


# -- the command line ----------------------------------------------------------------------

runner = CliRunner()


def _cli_output(res) -> str:
    return res.output + (getattr(res, "stderr", "") or "")


def test_cli_resume_refuses_other_options(tmp_path):
    from lang_pz.cli import app

    res = runner.invoke(app, ["train", "--resume", str(tmp_path), "--iterations", "3"])
    assert res.exit_code == 2
    assert "--resume continues a run with its own config.json; drop --iterations" in " ".join(_cli_output(res).split())


def test_cli_set_suggests_the_close_field(tmp_path):
    from lang_pz.cli import app

    res = runner.invoke(app, ["train", "--set", "tolerence=1", "--run-dir", str(tmp_path / "r")])
    assert res.exit_code == 2
    out = " ".join(_cli_output(res).split())
    assert "'tolerence=1'" in out and "did you mean 'tolerance'" in out
    assert not (tmp_path / "r").exists()


def test_cli_help_lists_every_config_field_with_its_default():
    from lang_pz.cli import app

    res = runner.invoke(app, ["train", "--help"], terminal_width=400, env={"COLUMNS": "400"})
    assert res.exit_code == 0
    out = " ".join(res.output.split())
    from lang_pz.training.registry import sections

    for prefix, model in [("", TrainConfig), *((f"{m}.", section) for m, section in sections().items())]:
        for name, f in model.model_fields.items():
            default = f.default_factory() if f.default_factory is not None else f.default
            assert f"{prefix}{name} [default: {default!r}]" in out, name
    assert "Only with --method maskills" in out and "maskills.skill_credit [default: 'invocation']" in out


# -- kill -9 and resume with the real model ------------------------------------------------


@pytest.mark.integration
def test_kill_9_then_resume_with_the_embedded_model(tmp_path):
    exe = Path(sys.executable).parent / "lang-pz"
    if not exe.exists():
        pytest.skip(f"console script {exe} not installed")
    run = tmp_path / "run"
    env = {**os.environ, "LANG_PZ_CACHE_DIR": str(tmp_path / "cache")}
    # tiny: 2 decisions per piston, one trainable agent, one shared critique (about 3 minutes under load)
    cmd = [
        str(exe),
        "train",
        "--kw",
        "n_pistons=4",
        "--kw",
        "hold=25",
        "--kw",
        "max_cycles=50",
        "--iterations",
        "2",
        "--episodes",
        "2",
        "--critic-mode",
        "central_global",
        "--set",
        "validation_seeds=[1000]",
        "--set",
        "trainable_agents=[piston_0]",
        "--set",
        "max_policy_chars=80",
        "--set",
        "on_stage_failure=continue",  # about kill and resume: a failed 135M step is not stopped on
        "--run-dir",
        str(run),
    ]
    traj = run / "iter_000" / "trajectories.jsonl"
    log = (tmp_path / "first.log").open("w")
    proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        hung = time.monotonic() + 1800  # a guard against a hang, not a speed check (a busy machine is slow)
        while '"episode_end"' not in (traj.read_text() if traj.exists() else ""):
            assert proc.poll() is None, f"train exited early ({proc.returncode}): {(tmp_path / 'first.log').read_text()}"
            assert time.monotonic() < hung, "no finished episode after 30 min"
            time.sleep(0.2)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
        log.close()
    assert proc.returncode == -signal.SIGKILL
    assert not (run / "iter_000" / "done.json").exists()
    ep0 = episode_lines_safe(traj, 0)
    assert json.loads(ep0[-1])["type"] == "episode_end"

    done = subprocess.run(
        [str(exe), "train", "--resume", str(run)], env=env, capture_output=True, text=True, timeout=600, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert re.search(r"iteration 0: kept [12] finished episode\(s\)", done.stderr), done.stderr[-3000:]
    metrics = jsonl(run / "metrics.jsonl")
    assert [m["iteration"] for m in metrics] == [0, 1]
    assert episode_lines(traj, 0) == ep0  # the episode finished before the kill was kept as it was
    assert [(t.episode, t.finished) for t in lang_pz.trajectory.read_trajectories(traj)] == [(0, True), (1, True)]
    assert (run / "iter_001" / "done.json").exists()
    assert sorted(p.name for p in (run / "final" / "policies").iterdir()) == [f"piston_{i}.txt" for i in range(4)]


def episode_lines_safe(path: Path, episode: int) -> list[str]:
    """Lines of ``episode`` in a file a kill may have cut (a partial last line is skipped)."""
    out = []
    for line in path.read_text().splitlines():
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            continue
        if rec["episode"] == episode:
            out.append(line)
    return out


# -- per-agent acceptance and fixed partners ----------------------------------------------


def test_per_agent_acceptance_keeps_each_agent_whose_change_helps(tmp_path):
    # Every piston flips to "down"; each flip is validated in turn on top of those kept.
    # Expected decisions are replayed here with ConstantPolicy rollouts.
    expected, current = [], dict.fromkeys(AGENTS, UP)
    value = team_return(current, VAL_SEED)
    for a in AGENTS:
        trial = {**current, a: DOWN}
        v = team_return(trial, VAL_SEED)
        expected.append(v >= value)
        if v >= value:
            current, value = trial, v
    assert True in expected and False in expected  # premise: some flips help, some hurt
    si = StandIn(flipping=AGENTS)
    result = train_with(si, config(tmp_path / "run", acceptance="per_agent"))
    m = result.metrics[0]
    decisions = jsonl(tmp_path / "run" / "iter_000" / "acceptance.jsonl")
    assert [d["agents"] for d in decisions] == [[a] for a in AGENTS]  # one validation per agent
    assert [d["accepted"] for d in decisions] == expected
    assert all(d["candidate_val_return"] < d["val_return"] for d in decisions if not d["accepted"])
    assert result.final_policies == current
    assert m.accepted_agents == [a for a, ok in zip(AGENTS, expected) if ok] and m.accepted is True
    assert m.candidate_val_return == pytest.approx(value, abs=1e-3)


def test_central_global_validates_the_team_update_as_one(tmp_path):
    si = StandIn(flipping=AGENTS)
    train_with(si, config(tmp_path / "run", critic_mode="central_global"))
    decisions = jsonl(tmp_path / "run" / "iter_000" / "acceptance.jsonl")
    assert [d["agents"] for d in decisions] == [AGENTS]


def test_a_fixed_partner_plays_but_is_never_trained(tmp_path):
    stand_in = StandIn(flipping=AGENTS)
    result = train_with(stand_in, config(tmp_path / "run", partners={"piston_4": "heuristic"}, validation_seeds=[]))
    assert set(result.final_policies) == set(AGENTS[:4])  # no text policy for the partner
    assert not stand_in.requests("optimiser", "piston_4")
    traj = lang_pz.trajectory.read_trajectories(tmp_path / "run" / "iter_000" / "trajectories.jsonl")[0]
    assert {s.raw_output for s in traj.agent_steps("piston_4")} <= {"up", "down"}
    actor_prompts = [prompt_of(r) for r in stand_in.requests("actor")]
    assert not any("You are piston_4" in p for p in actor_prompts)  # the heuristic, not the LLM, acted
    with pytest.raises(lang_pz.error.InvalidKwargError, match="both trainable and fixed"):
        train_with(stand_in, config(tmp_path / "r2", partners={"piston_4": "random"}, trainable_agents=["piston_4"]))


# -- correctness fixes of the composable loop ----------------------------------------------


def test_a_rejected_direction_never_steers_the_next_iteration(tmp_path):
    """Momentum holds only accepted updates: iteration 0's rejected flip is not in iteration 1's prompt."""
    stand_in = StandIn(flipping=AGENTS[3:])  # from the slope, pistons 3-4 down lowers validation: rejected
    res = train_with(
        stand_in,
        config(
            tmp_path / "run", iterations=2, episodes_per_iteration=2, initial_policies=SLOPE, critic_mode="central_global"
        ),
    )
    assert [m.accepted for m in res.metrics] == [False, False]
    aggregate_prompts = [prompt_of(r) for r in stand_in.backend.requests if r.role == "optimiser.aggregate"]
    assert len(aggregate_prompts) == 2 * 5  # per iteration and agent (two gradients each)
    tasks = [p.rsplit("Now your task:", 1)[-1] for p in aggregate_prompts]  # after the worked example
    assert not any("Earlier directions" in p for p in tasks)


def test_an_accepted_direction_is_remembered(flip_run):
    """Iteration 0 of the flip run was accepted: iteration 1's aggregation shows its direction."""
    _, stand_in, _, _ = flip_run
    it1 = [prompt_of(r) for r in stand_in.backend.requests if r.role == "optimiser.aggregate"][5:8]  # pistons 0-2
    assert len(it1) == 3 and all("Earlier directions (momentum" in p.rsplit("Now your task:", 1)[-1] for p in it1)


def test_zero_sum_games_need_a_named_objective_and_write_nothing_without_one(tmp_path):
    bad = TrainConfig(env_id="classic/rps-v0", run_dir=str(tmp_path / "bad"), validation_seeds=[1000])
    with pytest.raises(lang_pz.error.InvalidKwargError, match="zero-sum.*win:player_0"):
        train_with(StandIn(), bad)
    assert not (tmp_path / "bad").exists()


def test_zero_sum_training_optimises_one_seat_against_a_fixed_opponent(tmp_path):
    stand_in = StandIn()
    cfg = TrainConfig(
        env_id="classic/rps-v0",
        env_kwargs={"max_cycles": 5},
        objective="win:player_0",
        partners={"player_1": "random"},
        validation_seeds=[1000, 1001],
        langmarl={"counterfactual": ["alternatives"]},
        initial_policy="Always play rock.",
        run_dir=str(tmp_path / "run"),
    )
    train(cfg, backends=lambda_backend(lambda req: req.choices[0] if req.choices else None, stand_in))
    d = tmp_path / "run" / "iter_000"
    values = [v["objective"] for v in jsonl(d / "validation.jsonl")]
    assert values and all(v in (0.0, 0.5, 1.0) for v in values)
    assert {p["objective"] for p in jsonl(d / "counterfactuals.jsonl")} == {"win:player_0"}


def lambda_backend(actor_reply, stand_in: StandIn) -> ScriptedBackend:
    """The stand-in, with actors answered by ``actor_reply`` (for envs whose actions are not up/down)."""
    return ScriptedBackend(lambda req: actor_reply(req) if req.role == "actor" else stand_in.reply(req))


def test_a_bad_initial_policy_writes_nothing(tmp_path):
    for bad in ({"piston_0": "   "}, {"piston_0": "x" * 400}):
        with pytest.raises(lang_pz.error.InvalidKwargError, match="initial_policies\\['piston_0'\\]"):
            train_with(StandIn(), config(tmp_path / "run", initial_policies=bad))
        assert not (tmp_path / "run").exists()


def test_validation_replays_a_seed_exactly_with_a_random_partner(tmp_path):
    """Policies are reset from the episode seed: two validation episodes of one seed are identical
    (the step itself, given a seed twice; a config refuses repeated validation seeds)."""
    from lang_pz.training import build
    from lang_pz.training.validation import validate
    from lang_pz.trajectory import Trajectory

    parts = build(config(tmp_path / "run", partners={"piston_4": "random"}), backends=StandIn().backend)
    trajs: list[Trajectory] = []
    validate(
        parts.envs["validation"],
        parts.actors(dict.fromkeys(parts.llm_agents, UP)),
        [VAL_SEED, 1002, VAL_SEED],
        on_episode=trajs.append,
    )
    parts.close()
    first, _, again = trajs
    assert [s.raw_output for s in first.steps] == [s.raw_output for s in again.steps]
    assert first.returns == again.returns
    assert len({s.raw_output for s in first.agent_steps("piston_4")}) > 1  # the partner really is random


def test_resume_with_a_random_partner_replays_the_uninterrupted_run(tmp_path):
    cfg = dict(
        iterations=2,
        episodes_per_iteration=2,
        partners={"piston_4": "random"},
        langmarl={"counterfactual": ["down"], "evidence_gate": False},
        on_stage_failure="continue",  # the stand-in answers unflipped agents' updates with their old text, refused
    )
    whole = tmp_path / "whole"
    train_with(StandIn(flipping=AGENTS[:2]), config(whole, **cfg))
    cut = tmp_path / "cut"
    shutil.copytree(whole, cut)
    shutil.rmtree(cut / "final")
    for name in ("done.json", "counterfactuals.jsonl", "credits.jsonl"):
        (cut / "iter_001" / name).unlink()
    traj = cut / "iter_001" / "trajectories.jsonl"
    lines = traj.read_text().splitlines(keepends=True)
    traj.write_text("".join(lines[: len(lines) * 3 // 4]))  # killed during episode 3
    train_with(StandIn(flipping=AGENTS[:2]), resume=cut)

    def records(path):
        return [{k: v for k, v in json.loads(x).items() if k != "latency_s"} for x in path.read_text().splitlines()]

    for name in ("trajectories.jsonl", "validation_trajectories.jsonl", "counterfactuals.jsonl", "acceptance.jsonl"):
        assert records(cut / "iter_001" / name) == records(whole / "iter_001" / name), name


def test_objects_replace_specs_and_callbacks_are_called(tmp_path):
    from lang_pz.critics import CriticReport as Report
    from lang_pz.training import Callback

    class TeamCritic:
        """A critic object of the user's own: every agent gets the team return's sign."""

        mode = "user"

        def __init__(self):
            self.seen = []

        def assess(self, trajectory, policies=None, counterfactuals=()):
            self.seen.append(trajectory.episode)
            sign = 1.0 if trajectory.team_return > 0 else -1.0
            return Report(
                episode=trajectory.episode,
                team_return=trajectory.team_return,
                mode=self.mode,
                credits={a: Credit(agent=a, credit=sign, explanation="team sign") for a in trajectory.agents},
            )

    class Recorder(Callback):
        def __init__(self):
            self.episodes, self.iterations = [], []

        def on_episode(self, iteration, trajectory):
            self.episodes.append((iteration, trajectory.episode))

        def on_iteration(self, metrics, state):
            self.iterations.append((metrics.iteration, dict(state.policies)))

    critic, rec, stand_in = TeamCritic(), Recorder(), StandIn()
    res = train(
        config(tmp_path / "run", iterations=2, episodes_per_iteration=2, validation_seeds=[]),
        backends={"actor": stand_in.backend, "critic": stand_in.backend, "optimiser": stand_in.backend},
        critic=critic,
        callbacks=[rec],
    )
    assert critic.seen == [0, 1, 2, 3] and not stand_in.requests("critic")
    assert rec.episodes == [(0, 0), (0, 1), (1, 2), (1, 3)]
    assert [it for it, _ in rec.iterations] == [0, 1] and rec.iterations[-1][1] == res.final_policies
    with pytest.raises(lang_pz.error.InvalidKwargError, match="unknown role"):
        train(config(tmp_path / "r2"), backends={"judge": stand_in.backend})


def test_one_backend_instance_per_distinct_spec(tmp_path, monkeypatch):
    from lang_pz.training import parts as loop

    made = []

    def fake(spec, **options):
        made.append((spec, options))
        return StandIn().backend

    monkeypatch.setattr(loop, "make_backend", fake)
    loop.build(config(tmp_path / "run", critic_backend="openai:big", backend_options={"openai:big": {"timeout": 9}}))
    # the critic's own spec; the embedded optimiser gets its own instance apart from the actors'
    assert made == [("embedded", {}), ("openai:big", {"timeout": 9}), ("embedded", {})]
    made.clear()
    loop.build(config(tmp_path / "run2", actor_backend="openai:m", optimiser_backend="openai:m"))
    assert made == [("openai:m", {})]  # ... one instance per spec
    made.clear()
    loop.build(config(tmp_path / "run3"))  # embedded everywhere: the actors keep their own (prompt-cache) instance
    assert made == [("embedded", {}), ("embedded", {})]


def test_test_seeds_measure_every_iteration_and_the_final_policies(tmp_path):
    """The learning curve's values: held-out test seeds, the same every iteration, deciding nothing."""
    from lang_pz.report import decisions, load_run, summary_text

    test = [2000, 2001]
    res = train_with(
        StandIn(flipping=AGENTS[:3]), config(tmp_path / "run", iterations=2, test_seeds=test, critic_mode="central_global")
    )
    expect = [sum(team_return(p, s) for s in test) / 2 for p in (dict.fromkeys(AGENTS, UP), SLOPE)]
    assert [m.test_return for m in res.metrics] == pytest.approx(expect, abs=1e-3)
    final = sum(team_return(res.final_policies, s) for s in test) / 2
    assert res.final_test_return == pytest.approx(final, abs=1e-3)
    run = load_run(tmp_path / "run")
    assert run.final_test_return == pytest.approx(final, abs=1e-3)
    (it0, text0), _ = decisions(run)
    assert it0 == 0 and "piston_0+piston_1+piston_2 changed" in text0 and "accepted" in text0
    assert "held-out test of the final policies" in summary_text(run)
    with pytest.raises(ValidationError, match="test_seeds \\[1001\\]"):
        config(tmp_path / "x", test_seeds=[1001])  # a validation seed


def test_backend_options_never_hold_credentials():
    with pytest.raises(ValidationError, match="credentials must come from the environment"):
        TrainConfig(backend_options={"openai:m": {"api_key": "sk-x"}})
    TrainConfig(actor_backend="openai:m", backend_options={"openai:m": {"timeout_s": 5, "max_attempts": 3}})


def test_backend_options_of_a_spec_no_role_uses_are_refused():
    with pytest.raises(ValidationError, match="'embeded', which no role uses: did you mean 'embedded'"):
        TrainConfig(backend_options={"embeded": {"instances": 2}})
    with pytest.raises(ValidationError, match="'openai:m', which no role uses"):
        TrainConfig(backend_options={"openai:m": {"timeout_s": 5}})
    TrainConfig(critic_backend="openai:m", backend_options={"openai:m": {"timeout_s": 5}, "embedded": {}})


@pytest.mark.parametrize(
    "fields, message",
    [
        ({"validation_seeds": [1000, 1000]}, "validation_seeds repeats \\[1000\\]"),
        ({"test_seeds": [7, 8, 7]}, "test_seeds repeats \\[7\\]"),
        ({"langmarl": {"counterfactual_steps": [-1]}}, "counterfactual_steps \\[-1\\] are negative"),
        ({"langmarl": {"counterfactual_steps": []}}, "counterfactual_steps\\n.*at least 1 item"),
        ({"trainable_agents": []}, "trainable_agents\\n.*at least 1 item"),
        ({"langmarl": {"critic_credit_levels": []}}, "critic_credit_levels\\n.*at least 1 item"),
    ],
)
def test_settings_that_would_train_nothing_or_count_twice_are_refused(fields, message):
    with pytest.raises(ValidationError, match=message):
        TrainConfig(**fields)


def test_the_budget_counts_uncached_calls_only(tmp_path):
    """A reply served by the response cache costs nothing: a replay of a run spends none of its budget."""

    def cached_stand_in():
        s = StandIn()
        s.backend = ScriptedBackend(s.reply, cache=tmp_path / "cache")
        return s

    first = train_with(cached_stand_in(), config(tmp_path / "a", iterations=3, max_llm_calls=1))
    m = first.metrics[0]
    assert len(first.metrics) == 1 and m.llm_calls > m.cached_calls  # uncached calls spent the budget: stopped
    again = train_with(cached_stand_in(), config(tmp_path / "b", iterations=2, max_llm_calls=1))
    assert again.metrics[0].cached_calls == again.metrics[0].llm_calls > 0  # all replayed from the cache
    assert len(again.metrics) == 2  # so the budget was not spent: iteration 1 ran


def test_the_counterfactual_critic_mode_credits_from_re_runs(tmp_path):
    """critic_mode=counterfactual: credits are computed from every agent's re-runs (partners too);
    the LLM writes only words (here the scripted stand-in's, which cannot change the numbers)."""
    with pytest.raises(ValidationError, match="'counterfactual' computes each agent's credit from re-runs"):
        config(tmp_path / "x", critic_mode="counterfactual")
    stand_in = StandIn(flipping=AGENTS)
    train_with(
        stand_in,
        config(
            tmp_path / "run",
            critic_mode="counterfactual",
            counterfactual=["alternatives"],
            partners={"piston_4": "heuristic"},
        ),
    )
    d = tmp_path / "run" / "iter_000"
    (report,) = jsonl(d / "credits.jsonl")
    assert report["mode"] == "counterfactual" and set(report["credits"]) == set(AGENTS)
    probes = jsonl(d / "counterfactuals.jsonl")
    assert {p["agents"][0] for p in probes} == set(AGENTS)  # the fixed partner was re-run too
    gains = {a: max(p["delta"] for p in probes if p["agents"] == [a]) for a in AGENTS}
    credits = {a: report["credits"][a]["credit"] for a in AGENTS}
    blamed = min(credits, key=credits.get)
    assert gains[blamed] == max(gains.values())  # the most to gain from a change: the lowest credit


class Interrupted(Exception):
    """Stands for a Ctrl-C or a crash in the middle of an iteration (test only)."""


def test_an_interrupted_attempts_calls_count_in_the_totals_and_the_budget(tmp_path):
    class CrashAtCritic(StandIn):
        def reply(self, req):
            if role_of(req) == "critic":
                raise Interrupted
            return super().reply(req)

    cfg = config(tmp_path / "run", iterations=2, episodes_per_iteration=2)
    crashing = CrashAtCritic(flipping=AGENTS[:1])
    with pytest.raises(Interrupted):
        train_with(crashing, cfg)
    spent = len(crashing.requests("actor"))  # the training and validation episodes; the critic call raised
    saved = json.loads((tmp_path / "run" / "iter_000" / "usage.json").read_text())
    assert saved["attempt"]["actor"]["calls"] == spent > 0 and saved["interrupted"] == {}

    again = StandIn(flipping=AGENTS[:1])
    res = train_with(again, resume=tmp_path / "run")
    first = res.metrics[0]
    assert first.interrupted_usage["actor"]["calls"] == spent
    assert first.llm_calls == len(list(again.backend.requests)) - res.metrics[1].llm_calls
    done = json.loads((tmp_path / "run" / "iter_001" / "done.json").read_text())
    assert done["calls_total"] == spent + len(again.backend.requests)  # what was really sent, both attempts
    assert json.loads((tmp_path / "run" / "iter_000" / "usage.json").read_text())["interrupted"]["actor"]["calls"] == spent
    from lang_pz.report import load_run, summary_text

    text = summary_text(load_run(tmp_path / "run"))
    changed = sum(len(m.accepted_agents) for m in res.metrics)
    assert f"+{spent} in interrupted attempts" in text and f"candidates: {changed} accepted," in text


def test_usage_is_saved_safely_from_steps_running_side_by_side(tmp_path):
    """The current validation runs beside the training episodes and both save usage.json."""
    import threading

    from lang_pz.runs import RunFolder

    run = RunFolder(tmp_path / "run")
    run.create("{}")
    log = run.begin(0)
    log.usage_source = lambda: {"actor": {"calls": 1}}
    errors: list[BaseException] = []

    def save_many() -> None:
        try:
            for _ in range(200):
                log.save_usage()
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=save_many) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert json.loads(log.files.usage.read_text())["attempt"] == {"actor": {"calls": 1}}


@pytest.mark.parametrize(
    "env_id, partners, message",
    [
        (
            "butterfly/pistonball-v0",
            {"piston_0": "greedy"},
            "piston_0 'greedy' is Overcooked-AI's greedy planner, for "
            "overcooked/\\* envs only; for butterfly/pistonball-v0 use random or heuristic",
        ),
        (
            "overcooked/cramped_room-v0",
            {"player_0": "heuristic"},
            "player_0 'heuristic' is the scripted Pistonball "
            "heuristic, for butterfly/pistonball\\* envs only; for overcooked/cramped_room-v0 use random or greedy",
        ),
    ],
)
def test_a_partner_kind_for_another_env_is_refused_before_anything_runs(tmp_path, env_id, partners, message):
    from lang_pz.error import InvalidKwargError

    with pytest.raises(InvalidKwargError, match=message):
        train_with(StandIn(), config(tmp_path / "run", env_id=env_id, env_kwargs={}, partners=partners))
    assert not (tmp_path / "run").exists()


def test_collect_refuses_repeated_episode_numbers(tmp_path):
    from lang_pz.training import build, collect

    parts = build(config(tmp_path / "run"), backends=StandIn().backend)
    with pytest.raises(ValueError, match=r"episode numbers \[0\] repeat"):
        collect(parts.envs["train"], parts.actors(dict.fromkeys(parts.llm_agents, UP)), seeds=[0, 5], episodes=[0, 0])
    parts.close()


def test_config_has_one_section_per_method_and_old_flat_files_still_load(tmp_path):
    """Common settings plus the chosen method's section; a flat key (deprecated: it warns) moves into
    its section, one of the other method is refused naming the new key, and a config.json of either
    shape resumes."""
    from pydantic import ValidationError

    with pytest.warns(DeprecationWarning) as caught:
        flat = TrainConfig(critic_mode="counterfactual", counterfactual=["alternatives"], skills=None)
    assert len(caught) == 3 and "(langmarl.critic_mode; " in str(caught[0].message)
    assert flat.langmarl is not None and flat.langmarl.critic_mode == "counterfactual" and flat.maskills is None
    assert TrainConfig(langmarl={"critic_mode": "counterfactual", "counterfactual": ["alternatives"]}) == flat
    assert TrainConfig.model_validate_json(flat.model_dump_json()) == flat
    with pytest.warns(DeprecationWarning) as caught:
        skills = TrainConfig(method="maskills", skill_credit="episode", critic_mode="central_credit")  # a default: dropped
    assert ["maskills.skill_credit" in str(w.message) for w in caught] == [True, False]
    assert skills.maskills is not None and skills.maskills.skill_credit == "episode" and skills.langmarl is None
    with pytest.raises(ValidationError, match=r"skill_reruns=3 is a setting of method 'maskills' \(maskills.skill_reruns"):
        TrainConfig(skill_reruns=3)
    with pytest.raises(ValidationError, match=r"the maskills section is a setting of method 'maskills'"):
        TrainConfig(maskills={})
    with pytest.raises(
        ValidationError, match=r"'evidence_gate' and 'langmarl.evidence_gate' are both given .* keep langmarl"
    ):
        TrainConfig(evidence_gate=False, langmarl={"evidence_gate": True})
    old = {
        **flat.model_dump(exclude={"langmarl", "maskills"}),
        **flat.langmarl.model_dump(),
        "skills": None,
        "skill_scoping": "team",
        "max_skills": 24,
    }  # a config.json written before sections
    with pytest.warns(DeprecationWarning, match="given flat"):
        assert TrainConfig(**old) == flat


def test_a_third_method_is_a_new_class_run_by_the_same_loop(tmp_path):
    """A prompt-only baseline (nothing learned: every iteration measures the starting texts) is a
    Method subclass implementing its stages; train() gives it the run folder, budget, progress and
    final test, and the iteration skeleton runs its stages in order."""
    from dataclasses import replace

    from lang_pz.methods import Method, Proposal
    from lang_pz.training import TrainState

    class PromptOnly(Method):
        name = "prompt_only"

        @classmethod
        def assemble(cls, parts, *, run=None):
            return cls(parts)

        def start(self):
            return TrainState(self.parts.initial_policies())

        def restore(self, run, done):
            return TrainState(**TrainState.fields_of(done[-1]))

        def parameter(self, state):
            return state.policies

        def with_parameter(self, state, parameter):
            return replace(state, policies=parameter)

        def team_for(self, state, parameter):
            return self.parts.actors(parameter)

        def assess(self, state, batch, evidence, ctx):
            return []  # no critic

        def gradients(self, state, batch, evidence, reports, ctx):
            return None

        def propose(self, state, gradients, ctx):
            return Proposal()  # no candidate

    said = []
    res = train(
        config(tmp_path / "run", iterations=2, test_seeds=[3000]),
        method=PromptOnly,
        backends=StandIn().backend,
        progress=said.append,
    )
    assert [m.iteration for m in res.metrics] == [0, 1] and res.final_policies == res.initial_policies
    assert res.final_test_return is not None and (tmp_path / "run" / "final" / "test.jsonl").exists()
    assert sum(line.startswith("iteration ") for line in said) == 2
    with pytest.raises(InvalidKwargError, match="does not take"):
        train(config(tmp_path / "r2"), method=PromptOnly, backends=StandIn().backend, critic=object())
