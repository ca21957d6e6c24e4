"""The main job end to end with the REAL embedded model (SmolLM2-135M via llama.cpp).

Slow-ish (about a minute); marked ``integration`` (``make test-fast`` skips it).
"""

from __future__ import annotations

import json

import pytest

import lang_pz
from lang_pz.rollout import rollout
from lang_pz.training import TrainConfig, train

pytestmark = pytest.mark.integration


def test_embedded_model_plays_a_short_episode(embedded):
    from lang_pz.policies.llm import LLMPolicy

    env = lang_pz.make("butterfly/pistonball-v0", n_pistons=5, hold=25, max_cycles=50)
    traj = rollout(env, {a: LLMPolicy("Always push up.", embedded) for a in env.possible_agents}, seed=0)
    assert len(traj.steps) == 5 * 2  # two decisions per piston (the ball stays up at seed 0)
    assert all(s.parse_error is None for s in traj.steps)  # constrained output always parses
    assert all(s.raw_output in ("down", "stay", "up") for s in traj.steps)
    assert all(s.prompt_tokens > 0 for s in traj.steps)


def test_one_training_iteration_writes_a_complete_run_folder(tmp_path, embedded):
    run = tmp_path / "run"
    result = train(
        TrainConfig(
            env_kwargs={"n_pistons": 5, "hold": 25, "max_cycles": 50},  # 2 decisions per piston
            iterations=1,
            episodes_per_iteration=1,
            validation_seeds=[1000],
            trainable_agents=["piston_0", "piston_1"],  # two candidates validated in turn (per-agent acceptance)
            run_dir=str(run),
            on_stage_failure="continue",  # the 135M model's failures are checked below, not stopped on
        ),
        backends=embedded,
    )  # the loaded model, passed as an object (no monkeypatching)
    it = run / "iter_000"
    assert json.loads((run / "config.json").read_text())["iterations"] == 1
    assert (
        len((it / "trajectories.jsonl").read_text().splitlines()) == 5 * 2 + 2 + 1
    )  # agent steps, a state line per decision, the end
    assert sorted(p.name for p in (it / "policies").iterdir()) == [f"piston_{i}.txt" for i in range(5)]
    # The critic either produced a validated report or its failure was reported; never both, never neither.
    credits = (it / "credits.jsonl").exists()
    assert credits != (it / "critic_errors.jsonl").exists()
    if credits:
        report = json.loads((it / "credits.jsonl").read_text().splitlines()[0])
        assert set(report["credits"]) == set(result.initial_policies)
        assert all(-1 <= c["credit"] <= 1 for c in report["credits"].values())
    assert len(result.metrics) == 1 and result.metrics[0].llm_calls >= 5 * 2
    assert set(result.final_policies) == set(result.initial_policies)
    assert (run / "final" / "policies" / "piston_0.txt").read_text().strip() == result.final_policies["piston_0"]
