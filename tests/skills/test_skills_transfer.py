"""Transfer: a library evaluated, unchanged, on another env or dataset (``lang-pz skills eval``)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from skill_standins import AGENTS, ENV, SkillStandIn, team_return
from typer.testing import CliRunner

import lang_pz
from lang_pz.skills import Skill, SkillLibrary, read_library, write_library
from lang_pz.skills.transfer import evaluate_library

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "skills"
from support import DATA  # noqa: E402  ($LANG_PZ_DATA_DIR or shared/data beside the project)

needs_data = pytest.mark.skipif(not DATA.is_dir(), reason="benchmark data folder not available")
SEEDS = [1000, 1001, 1002]


def test_library_against_the_same_team_without_skills_on_the_same_seeds():
    # everyone invokes go-down from the example library; without skills the base "Always push up."
    stand_in = SkillStandIn(picks={a: ["go-down"] for a in AGENTS})
    res = evaluate_library(
        read_library(EXAMPLES / "pistonball"),
        "butterfly/pistonball-v0",
        SEEDS,
        stand_in.backend,
        env_kwargs=ENV,
        policy="Always push up.",
    )
    assert res.with_skills == pytest.approx([team_return(dict.fromkeys(AGENTS, "down"), s) for s in SEEDS])
    assert res.without_skills == pytest.approx([team_return(dict.fromkeys(AGENTS, "up"), s) for s in SEEDS])
    assert res.differences == pytest.approx([a - b for a, b in zip(res.with_skills, res.without_skills)])
    assert res.invoked == {"team/go-down": res.decisions} and res.decisions > 0
    (label, mean, lo, hi), _, _ = res.rows()
    assert label == "with the library" and mean == pytest.approx(sum(res.with_skills) / 3) and lo <= mean <= hi
    text = res.render()
    assert "no skills" in text and "difference (paired)" in text and "team/go-down" in text


@needs_data
def test_a_gsm8k_library_on_math500_keeps_its_role_scopes():
    lib = read_library(EXAMPLES / "gsm8k")  # team + solver + verifier scopes: MATH-500 has the same roles
    stand_in = SkillStandIn(
        picks={"solver": ["show-the-arithmetic"], "verifier": ["keep-a-right-answer"]},
        text=lambda agent, instruction: "Correct" if agent == "verifier" else "\\boxed{3}",
    )
    res = evaluate_library(
        lib, "tasks/math500-v0", [0, 1], stand_in.backend, env_kwargs={"data_dir": str(DATA)}, policy="Solve the problem."
    )
    assert res.unmatched_scopes == [] and res.objective == "team_return"
    assert res.invoked == {"solver/show-the-arithmetic": 2, "verifier/keep-a-right-answer": 2}
    assert len(res.with_skills) == len(res.without_skills) == 2
    assert all(0.0 <= v <= 2.0 for v in res.with_skills + res.without_skills)


@needs_data
def test_scopes_no_agent_sees_are_reported(tmp_path):
    lib = SkillLibrary({"piston_3": {"go-down": Skill("go-down", "Go down.", "Always go down.")}})
    res = evaluate_library(lib, "tasks/gsm8k-v0", [0], SkillStandIn().backend, env_kwargs={"data_dir": str(DATA)})
    assert res.unmatched_scopes == ["piston_3"] and res.decisions == 0
    assert math.isnan(res.rows()[0][2])  # one seed: no interval
    assert "never offered): piston_3" in res.render()


def test_cramped_room_library_on_asymmetric_advantages_with_a_greedy_partner():
    pytest.importorskip("overcooked_ai_py")
    stand_in = SkillStandIn(picks={"player_0": ["fill-the-pot"]})
    res = evaluate_library(
        read_library(EXAMPLES / "overcooked"),
        "overcooked/asymmetric_advantages-v0",
        [0, 1],
        stand_in.backend,
        env_kwargs={"actions": "macro", "horizon": 20},
        partners={"player_1": "greedy"},
    )
    assert res.objective == "soups" and set(res.invoked) == {"team/fill-the-pot"}
    with pytest.raises(lang_pz.error.InvalidKwargError, match="player_7"):
        evaluate_library(
            SkillLibrary(), "overcooked/cramped_room-v0", [0], stand_in.backend, partners={"player_7": "greedy"}
        )


def test_cli_skills_eval_prints_both_teams_with_intervals(tmp_path, monkeypatch):
    import lang_pz.backends
    from lang_pz.cli import app

    stand_in = SkillStandIn(picks={a: ["go-down"] for a in AGENTS})
    monkeypatch.setattr(lang_pz.backends, "make_backend", lambda spec, **kw: stand_in.backend)
    lib = write_library(SkillLibrary.of([Skill("go-down", "Make a slope.", "Always go down.")]), tmp_path / "lib")
    args = [
        "skills",
        "eval",
        str(lib),
        "--env",
        "butterfly/pistonball-v0",
        "--seeds",
        "1000-1002",
        "--kw",
        "n_pistons=5",
        "--kw",
        "hold=5",
        "--kw",
        "max_cycles=50",
        "--policy",
        "Always push up.",
    ]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    want = sum(team_return(dict.fromkeys(AGENTS, "down"), s) for s in SEEDS) / 3
    assert f"{'with the library':<22} {want:>9.3g}" in res.output and "95 % interval" in res.output
    bad = CliRunner().invoke(app, ["skills", "eval", str(tmp_path / "nope"), "--env", "butterfly/pistonball-v0"])
    assert bad.exit_code == 2 and "is not a folder" in bad.output
