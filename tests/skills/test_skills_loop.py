"""The skills iteration (``method: maskills``): the loop, each operator in it, the gate and rollback,
invocation tracking through the run folder, budget, resume, ablations.

Unit tests run the real ``butterfly/pistonball-v0`` env (5 pistons, ``hold=5``, 50 cycles: 10
decisions per piston) with :class:`SkillStandIn`, a scripted LLM stand-in that answers every
role by ``req.role``: skill choices (``actor.skill``) by a per-agent preference, actions
(``actor``) by the word the disclosed instruction names, the skill critic (``critic.skill``)
and the writer (``optimiser.skill``) from per-test scripts. Expected returns are computed in
the tests from :class:`ConstantPolicy` rollouts, never hard-coded.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from pydantic import ValidationError
from skill_standins import (
    AGENTS,
    BODIES,
    DOWN,
    SLOPE,
    STAY,
    UP,
    VAL_SEED,
    SkillStandIn,
    config,
    episode_steps,
    jsonl,
    library_dir,
    prompt_of,
    team_return,
    word_of,
    words,
)

from lang_pz.error import SkillFormatError, SkillLibraryError
from lang_pz.skills import Skill, SkillLibrary, read_library, write_library
from lang_pz.skills.policy import invocations
from lang_pz.test import ScriptedBackend
from lang_pz.training import TrainConfig, train
from lang_pz.trajectory import read_trajectories

# -- one iteration, everything in the run folder --------------------------------------------


@pytest.fixture(scope="module")
def slope_run(tmp_path_factory):
    """One iteration from {push-up, go-down}: pistons 0-2 invoke go-down, 3-4 push-up (a slope)."""
    tmp = tmp_path_factory.mktemp("slope")
    other = {"go-down": "push-up", "push-up": "go-down"}
    stand_in = SkillStandIn(picks={a: [s, other[s]] for a, s in SLOPE.items()})
    cfg = config(tmp / "run", library_dir(tmp, UP, DOWN), test_seeds=[2001])
    result = train(cfg, backends=stand_in.backend)
    return result, stand_in, tmp / "run"


def test_invocations_are_tracked_through_the_run_folder(slope_run):
    result, _, run = slope_run
    assert read_library(run / "iter_000" / "skills") == SkillLibrary.of([UP, DOWN])  # the library the episodes used
    (traj,) = read_trajectories(run / "iter_000" / "trajectories.jsonl")
    inv = invocations(traj)
    assert {(i.agent, i.skill) for i in inv} == set(SLOPE.items())
    assert all(i.version == 1 and i.library_version == 0 and i.scope == "team" for i in inv)
    assert len(inv) == len(traj.steps)  # every decision invoked (never inferred: recorded by the agent)
    for s in traj.steps:  # the action is what the invoked skill's body says
        assert s.raw_output == word_of(BODIES[s.meta["skills"]["invoked"]["name"]])
    assert traj.team_return == pytest.approx(team_return(words(SLOPE, BODIES), 0))


def test_withheld_skill_reruns_measure_each_invoked_skill(slope_run):
    _, _, run = slope_run
    (traj,) = read_trajectories(run / "iter_000" / "trajectories.jsonl")
    recs = jsonl(run / "iter_000" / "counterfactuals.jsonl")
    assert [r["kind"] for r in recs] == ["withheld_skill"] * 5
    assert {(r["agent"], r["skill"]) for r in recs} == set(SLOPE.items())
    for r in recs:  # without its skill the agent picks the other one (its next choice): exact replay
        other = "push-up" if r["skill"] == "go-down" else "go-down"
        withheld = team_return(words({**SLOPE, r["agent"]: other}, BODIES), 0)
        assert r["reinvoked"] == [other]
        assert r["withheld"] == pytest.approx(withheld) and r["factual"] == pytest.approx(traj.team_return)
        assert r["utility"] == pytest.approx(traj.team_return - withheld)


def test_the_critic_judges_exactly_the_invoked_uses_with_the_measured_utilities(slope_run):
    _, stand_in, run = slope_run
    (req,) = stand_in.requests("critic.skill")
    assert sorted(req.json_schema["$defs"]["SkillUses"]["required"]) == sorted(f"{a}/{s}" for a, s in SLOPE.items())
    assert "Computed re-runs:" in prompt_of(req) and "without go-down, piston_0" in prompt_of(req)
    (credits,) = jsonl(run / "iter_000" / "credits.jsonl")
    assert {(u["agent"], u["skill"]) for u in credits["uses"]} == set(SLOPE.items())
    assert len(credits["utilities"]) == 5 and set(credits["residuals"]) == set(AGENTS)


def test_roles_on_every_request_and_per_role_usage(slope_run):
    result, stand_in, _ = slope_run
    roles = {r.role for r in stand_in.backend.requests}
    assert roles == {"actor", "actor.skill", "critic.skill"}  # no edit was proposed: no writer call
    (m,) = result.metrics
    assert m.usage["critic"]["calls"] == 1 and m.usage["optimiser"]["calls"] == 0
    final_test = 2 * episode_steps(words(SLOPE, BODIES), 2001)  # after the iteration: not in its metrics
    assert m.usage["actor"]["calls"] + final_test == len(stand_in.requests("actor")) + len(stand_in.requests("actor.skill"))
    assert m.llm_calls + final_test == len(stand_in.backend.requests)


def test_the_run_has_the_files_report_and_final_library(slope_run):
    from lang_pz.report import load_run, summary_text

    result, _, run = slope_run
    files = {p.name for p in (run / "iter_000").iterdir()}
    assert {
        "skills",
        "skill_memory.json",
        "trajectories.jsonl",
        "counterfactuals.jsonl",
        "credits.jsonl",
        "validation.jsonl",
        "test.jsonl",
        "done.json",
        "policies",
    } <= files
    done = json.loads((run / "iter_000" / "done.json").read_text())
    assert done["library"]["version"] == 0 and done["metrics"]["changed_agents"] == []
    memory = json.loads((run / "iter_000" / "skill_memory.json").read_text())
    assert memory["skills"]["team/go-down"]["invoked"] == 30 and memory["skills"]["team/push-up"]["invoked"] == 20
    assert read_library(run / "final" / "skills") == result.final_library == SkillLibrary.of([UP, DOWN])
    assert jsonl(run / "final" / "test.jsonl")[0]["objective"] == pytest.approx(
        team_return(words(SLOPE, BODIES), 2001), abs=1e-3
    )
    text = summary_text(load_run(run))
    assert "method: maskills" in text and "0: library version 0, 2 skill(s)" in text and "library unchanged" in text


# -- each operator in the loop, the gate and rollback ---------------------------------------


def test_prune_of_a_measured_harmful_skill_is_validated_and_kept(tmp_path):
    # Only piston_1 invokes push-up; the others invoke nothing and act from the base "Always go
    # down." Without push-up piston_1 goes down too; on the training seed (3) and VAL_SEED that
    # is much better (measured), so push-up's utility is negative and it is pruned, and kept.
    one_up = {a: "up" if a == "piston_1" else "down" for a in AGENTS}
    down = dict.fromkeys(AGENTS, "down")
    for seed in (3, VAL_SEED):
        assert team_return(down, seed) > team_return(one_up, seed) + 100
    stand_in = SkillStandIn(picks={a: ["push-up"] if a == "piston_1" else [] for a in AGENTS})
    result = train(
        config(tmp_path / "run", library_dir(tmp_path, UP), initial_policy="Always go down.", seed=3),
        backends=stand_in.backend,
    )
    run = tmp_path / "run" / "iter_000"
    (u,) = jsonl(run / "counterfactuals.jsonl")
    assert (u["agent"], u["skill"]) == ("piston_1", "push-up")
    assert u["utility"] == pytest.approx(team_return(one_up, 3) - team_return(down, 3))
    edits = jsonl(run / "skill_edits.jsonl")
    assert [(e["event"], e["label"]) for e in edits] == [("proposed", "prune team/push-up"), ("kept", "prune team/push-up")]
    assert edits[0]["reason"].startswith("harmful: measured utility")
    (dec,) = jsonl(run / "acceptance.jsonl")
    assert dec == {
        "agents": ["prune team/push-up"],
        "accepted": True,
        "val_return": pytest.approx(team_return(one_up, VAL_SEED)),
        "candidate_val_return": pytest.approx(team_return(down, VAL_SEED)),
    }
    assert len(result.final_library) == 0 and result.final_library.version == 1
    assert result.metrics[0].accepted_agents == ["prune team/push-up"]


def refine_down_to_up(task: str) -> dict:
    """The writer's refine of go-down: makes it push up (a regression on the validation seed)."""
    assert task.startswith("rewrite the skill") and "Skill go-down" in task
    return {"description": "Lift the ball. Use when the ball is to your left.", "body": "Always push up."}


def test_a_regression_is_rolled_back_and_the_rollback_recorded(tmp_path):
    # Everyone invokes go-down; the critic calls it harmful with a suggested edit; the writer's
    # refine makes it "push up", which loses on the validation seed: the edit is rolled back.
    assert team_return(dict.fromkeys(AGENTS, "up"), VAL_SEED) < team_return(dict.fromkeys(AGENTS, "down"), VAL_SEED)
    stand_in = SkillStandIn(
        picks={a: ["go-down"] for a in AGENTS}, verdict=lambda a, s: ("harmful", "push up instead"), write=refine_down_to_up
    )
    lib = library_dir(tmp_path, DOWN)
    result = train(config(tmp_path / "run", lib, skill_reruns=0), backends=stand_in.backend)
    run = tmp_path / "run"
    edits = jsonl(run / "iter_000" / "skill_edits.jsonl")
    assert [(e["event"], e["label"]) for e in edits] == [
        ("proposed", "refine team/go-down"),
        ("rolled_back", "refine team/go-down"),
    ]
    assert edits[0]["after"][0]["skill_md"].endswith("Always push up.\n")
    rolled = edits[1]
    assert rolled["candidate_val_return"] < rolled["val_return"] and rolled["library_version"] == 0
    assert rolled["note"].startswith("rolled back: validation")
    final = read_library(run / "final" / "skills")  # the previous version, with the rollback in its history
    assert final.scopes == SkillLibrary.of([DOWN]).scopes and final.version == 0
    assert [(e.kind, e.edit.op) for e in final.history] == [("edit", "refine"), ("rollback", "refine")]
    assert final.history[-1].note == rolled["note"]
    assert result.metrics[0].accepted is False and result.metrics[0].changed_agents == ["refine team/go-down"]
    val = jsonl(run / "iter_000" / "validation.jsonl")
    assert [v["policies"] for v in val] == ["current", "candidate refine team/go-down"]
    memory = json.loads((run / "iter_000" / "skill_memory.json").read_text())
    assert memory["skills"]["team/go-down"]["edits"] == []  # the rejected direction is forgotten


def test_without_rollback_the_regression_is_kept_unvalidated(tmp_path):
    stand_in = SkillStandIn(
        picks={a: ["go-down"] for a in AGENTS}, verdict=lambda a, s: ("harmful", "push up instead"), write=refine_down_to_up
    )
    result = train(
        config(tmp_path / "run", library_dir(tmp_path, DOWN), skill_reruns=0, skill_rollback=False),
        backends=stand_in.backend,
    )
    run = tmp_path / "run"
    assert [e["event"] for e in jsonl(run / "iter_000" / "skill_edits.jsonl")] == ["proposed", "kept"]
    assert not (run / "iter_000" / "validation.jsonl").exists()  # nothing validated
    assert result.final_library.get("team", "go-down").body == "Always push up."
    assert result.final_library.version == 1


def test_induce_from_residuals_into_the_agents_scope(tmp_path):
    # An empty library: the critic says piston_0 lacks "going down"; the writer induces go-down
    # into piston_0's own scope (skill_scoping: agent); validation keeps it if it does not hurt.
    def write(task: str) -> dict:
        assert task.startswith("write a new skill") and "go down to make a slope" in task and "piston_0" in task
        return {"name": "go-down", "description": "Make a slope. Use when the ball is left.", "body": "Always go down."}

    stand_in = SkillStandIn(needs={"piston_0": "go down to make a slope"}, write=write)
    result = train(config(tmp_path / "run", None, skill_scoping="agent", tolerance=1000.0), backends=stand_in.backend)
    lib = result.final_library
    assert [(sc, s.name) for sc, s in lib] == [("piston_0", "go-down")] and lib.version == 1
    (traj,) = read_trajectories(tmp_path / "run" / "iter_000" / "trajectories.jsonl")
    assert all(s.meta["skills"]["offered"] == [] for s in traj.steps)  # nothing to offer at first
    val = jsonl(tmp_path / "run" / "iter_000" / "validation_trajectories.jsonl")
    offered = {r["agent"]: r["meta"]["skills"]["offered"] for r in val if r["type"] == "agent_step" and r["episode"] == 1}
    assert offered["piston_0"] == [["piston_0", "go-down"]] and offered["piston_1"] == []  # only its own agent sees it


def test_consolidate_merges_redundant_skills(tmp_path):
    # Pistons 0-2 invoke push-up, 3-4 hold-steady... both judged redundant: merged into one.
    picks = {a: ["push-up"] if i < 3 else ["hold-steady"] for i, a in enumerate(AGENTS)}

    def write(task: str) -> dict:
        assert task.startswith("merge these skills") and "Skill push-up" in task and "Skill hold-steady" in task
        return {"name": "push-up", "description": "Lift the ball. Use when it is above you.", "body": "Always push up."}

    stand_in = SkillStandIn(picks=picks, verdict=lambda a, s: ("redundant", ""), write=write)
    result = train(
        config(tmp_path / "run", library_dir(tmp_path, UP, STAY), skill_reruns=0, tolerance=1000.0),
        backends=stand_in.backend,
    )
    edits = jsonl(tmp_path / "run" / "iter_000" / "skill_edits.jsonl")
    assert [(e["event"], e["label"]) for e in edits] == [
        ("proposed", "consolidate team/push-up + hold-steady -> push-up"),
        ("kept", "consolidate team/push-up + hold-steady -> push-up"),
    ]
    assert [s.name for _, s in result.final_library] == ["push-up"]
    assert result.final_library.get("team", "push-up").version == 2


def test_prune_of_an_unused_skill(tmp_path):
    # Everyone invokes go-down; hold-steady is offered 50 times and never invoked: pruned.
    stand_in = SkillStandIn(picks={a: ["go-down"] for a in AGENTS})
    result = train(config(tmp_path / "run", library_dir(tmp_path, DOWN, STAY), skill_reruns=0), backends=stand_in.backend)
    edits = jsonl(tmp_path / "run" / "iter_000" / "skill_edits.jsonl")
    assert edits[0]["label"] == "prune team/hold-steady" and edits[0]["reason"].startswith("unused: offered 50")
    assert [s.name for _, s in result.final_library] == ["go-down"]  # all down either way: validation level


def test_a_critic_failure_is_logged_and_never_defaulted(tmp_path):
    stand_in = SkillStandIn(picks={a: ["go-down"] for a in AGENTS}, critic_ok=False)
    result = train(
        config(
            tmp_path / "run",
            library_dir(tmp_path, DOWN),
            skill_reruns=0,
            critic_max_attempts=2,
            on_stage_failure="continue",  # the run goes on without the report (by default it stops)
        ),
        backends=stand_in.backend,
    )
    run = tmp_path / "run" / "iter_000"
    (err,) = jsonl(run / "critic_errors.jsonl")
    assert err["episode"] == 0 and not (run / "credits.jsonl").exists()
    assert result.metrics[0].critic_failures == 1 and len(stand_in.requests("critic.skill")) == 2
    memory = json.loads((run / "skill_memory.json").read_text())
    assert memory["skills"]["team/go-down"]["contributions"] == {} and memory["agents"] == {}


def test_episode_credit_ablation_credits_every_skill_shown(tmp_path):
    # skill_credit: episode: no re-run; the critic judges every offered skill, invoked or not.
    stand_in = SkillStandIn(picks={a: ["go-down"] for a in AGENTS})
    train(config(tmp_path / "run", library_dir(tmp_path, UP, DOWN), skill_credit="episode"), backends=stand_in.backend)
    run = tmp_path / "run" / "iter_000"
    recs = jsonl(run / "counterfactuals.jsonl")
    assert {r["kind"] for r in recs} == {"shared_outcome"} and len(recs) == 10  # 5 agents x 2 skills shown
    factual = team_return(dict.fromkeys(AGENTS, "down"), 0)
    baseline = team_return(dict.fromkeys(AGENTS, "down"), VAL_SEED)
    assert all(r["utility"] == pytest.approx(factual - baseline) for r in recs)
    (req,) = stand_in.requests("critic.skill")
    assert len(req.json_schema["$defs"]["SkillUses"]["required"]) == 10  # push-up too, never invoked
    assert "Computed re-runs" not in prompt_of(req).split("Now the real episode:")[-1]
    played = len(read_trajectories(run / "trajectories.jsonl")[0].steps) + sum(
        len(t.steps) for t in read_trajectories(run / "validation_trajectories.jsonl")
    )
    assert len(stand_in.requests("actor")) == played  # the training and validation episodes only: no re-run


# -- budget, resume, bad input ------------------------------------------------------------


def test_llm_call_budget_stops_before_the_next_iteration(tmp_path):
    stand_in = SkillStandIn(picks={a: ["go-down"] for a in AGENTS})
    result = train(
        config(tmp_path / "run", library_dir(tmp_path, DOWN), iterations=3, skill_reruns=0, max_llm_calls=10),
        backends=stand_in.backend,
    )
    assert len(result.metrics) == 1 and "budget" in result.stopped
    assert (tmp_path / "run" / "final" / "skills").is_dir()


def two_iteration_config(tmp_path: Path, run: Path) -> TrainConfig:
    return config(
        run,
        library_dir(tmp_path, UP, STAY) if not (tmp_path / "lib").exists() else tmp_path / "lib",
        iterations=2,
        episodes_per_iteration=2,
        skill_reruns=1,
        tolerance=1000.0,
        test_seeds=[2001],
        on_stage_failure="continue",  # iteration 1's refine writes the skill unchanged, which the writer refuses
    )


def two_iteration_stand_in() -> SkillStandIn:
    # iteration 0: hold-steady unused -> pruned; push-up judged harmful -> refined to go down
    def write(task: str) -> dict:
        return {"description": "Make a slope. Use when the ball is to your left.", "body": "Always go down."}

    return SkillStandIn(
        picks={a: ["push-up"] for a in AGENTS}, verdict=lambda a, s: ("harmful", "go down instead"), write=write
    )


def test_resume_redoes_the_interrupted_iteration_and_ends_as_the_uninterrupted_run(tmp_path):
    full = train(two_iteration_config(tmp_path, tmp_path / "full"), backends=two_iteration_stand_in().backend)
    assert full.final_library.version >= 1 and len(full.metrics) == 2
    run = tmp_path / "cut"
    shutil.copytree(tmp_path / "full", run)
    cfg = json.loads((run / "config.json").read_text())
    cfg["run_dir"] = str(run)
    (run / "config.json").write_text(json.dumps(cfg))
    # as after a kill -9 in iteration 1's second episode: no done.json, no final, a cut trajectory file
    (run / "iter_001" / "done.json").unlink()
    shutil.rmtree(run / "final")
    traj = run / "iter_001" / "trajectories.jsonl"
    lines = traj.read_text().splitlines(keepends=True)
    first = [ln for ln in lines if json.loads(ln)["episode"] == 2]
    traj.write_text("".join(first) + lines[len(first)][:40])
    (run / "iter_001" / "skill_edits.jsonl").write_text('{"event": "proposed", "label": "stale"}\n')
    messages: list[str] = []
    resumed = train(resume=run, backends=two_iteration_stand_in().backend, progress=messages.append)
    assert any("kept 1 finished episode" in m for m in messages)
    assert resumed.final_library == full.final_library
    assert [m.test_return for m in resumed.metrics] == [m.test_return for m in full.metrics]
    assert [m.accepted_agents for m in resumed.metrics] == [m.accepted_agents for m in full.metrics]
    assert jsonl(run / "iter_001" / "skill_edits.jsonl") == jsonl(tmp_path / "full" / "iter_001" / "skill_edits.jsonl")
    assert read_library(run / "final" / "skills") == read_library(tmp_path / "full" / "final" / "skills")
    assert (run / "iter_001" / "skill_memory.json").read_text() == (
        tmp_path / "full" / "iter_001" / "skill_memory.json"
    ).read_text()


def test_a_bad_skill_md_is_a_clear_error_and_nothing_is_written(tmp_path):
    lib = tmp_path / "lib" / "bad-skill"
    lib.mkdir(parents=True)
    (lib / "SKILL.md").write_text("---\nname: Bad_Skill\ndescription: x\n---\nbody\n")
    with pytest.raises(SkillFormatError, match=r"SKILL.md.*name.*lowercase"):
        train(config(tmp_path / "run", tmp_path / "lib"), backends=SkillStandIn().backend)
    assert not (tmp_path / "run").exists()


def test_a_scope_that_names_no_agent_is_refused(tmp_path):
    lib = library_dir(tmp_path, Skill("go-down", "Go down.", "Always go down."))
    (lib / "piston_99").mkdir()
    (lib / "go-down").rename(lib / "piston_99" / "go-down")
    (lib / "library.json").unlink()
    with pytest.raises(SkillLibraryError, match=r"scope folder\(s\) \['piston_99'\] name no agent or role"):
        train(config(tmp_path / "run", lib), backends=SkillStandIn().backend)
    assert not (tmp_path / "run").exists()


def test_a_starting_library_over_the_limits_is_refused(tmp_path):
    long = Skill("long-one", "Too long.", "x " * 400)
    with pytest.raises(SkillLibraryError, match="body has 799 characters; at most 600.*max_skill_body_chars"):
        train(config(tmp_path / "run", library_dir(tmp_path, long)), backends=SkillStandIn().backend)
    assert not (tmp_path / "run").exists()


def test_config_fields_of_the_method_are_checked():
    with pytest.raises(ValidationError, match="starting library of method 'maskills'"):
        TrainConfig(skills="lib")
    with pytest.raises(ValidationError, match="withheld-skill re-runs instead"):
        TrainConfig(method="maskills", counterfactual=["alternatives"])
    with pytest.raises(ValidationError, match="method"):
        TrainConfig(method="skills")


def test_skill_roles_must_name_agents(tmp_path):
    from lang_pz.error import InvalidKwargError

    with pytest.raises(InvalidKwargError, match="skill_roles names \\['piston_9'\\]"):
        train(
            config(tmp_path / "run", None, skill_scoping="role", skill_roles={"piston_9": "piston"}),
            backends=SkillStandIn().backend,
        )


def test_role_scoping_shares_a_role_skill_among_the_role(tmp_path):
    # every piston has role "piston": a role-scoped skill is offered to all of them, not to others
    lib = write_library(SkillLibrary({"piston": {DOWN.name: DOWN}}), tmp_path / "lib")
    stand_in = SkillStandIn()
    train(
        config(tmp_path / "run", lib, skill_scoping="role", skill_roles=dict.fromkeys(AGENTS, "piston"), skill_reruns=0),
        backends=stand_in.backend,
    )
    (traj,) = read_trajectories(tmp_path / "run" / "iter_000" / "trajectories.jsonl")
    assert all(s.meta["skills"]["offered"] == [["piston", "go-down"]] for s in traj.steps)
    assert all(s.raw_output == "down" for s in traj.steps)


def test_cli_trains_a_hand_written_library(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    import lang_pz.backends
    from lang_pz.cli import app

    stand_in = SkillStandIn(picks={a: ["go-down"] for a in AGENTS})
    monkeypatch.setattr(lang_pz.backends, "make_backend", lambda spec, **kw: stand_in.backend)
    monkeypatch.setattr(lang_pz.training.parts, "make_backend", lambda spec, **kw: stand_in.backend)
    lib = library_dir(tmp_path, DOWN)
    args = [
        "train",
        "--method",
        "maskills",
        "--skills",
        str(lib),
        "--kw",
        "n_pistons=5",
        "--kw",
        "hold=5",
        "--kw",
        "max_cycles=50",
        "--iterations",
        "1",
        "--run-dir",
        str(tmp_path / "run"),
        "--set",
        "validation_seeds=[1001]",
        "--set",
        "skill_reruns=0",
    ]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    assert "method: maskills" in res.output and "skill library per iteration" in res.output
    assert read_library(tmp_path / "run" / "final" / "skills") == read_library(lib)
    bad = CliRunner().invoke(app, ["train", "--skills", str(lib), "--run-dir", str(tmp_path / "r2")])
    assert bad.exit_code == 2 and "set method=maskills" in bad.output and not (tmp_path / "r2").exists()
    again = CliRunner().invoke(app, ["train", "--resume", str(tmp_path / "run"), "--method", "maskills"])
    assert again.exit_code == 2 and "drop --method" in again.output


def test_a_harmful_skill_is_pruned_before_idle_ones():
    # regression: prune() listed skills in library order, so with max_edits=2 two idle skills
    # used the edit slots and the measured-harmful one was never proposed
    from lang_pz.skills import SkillMemory
    from lang_pz.skills.evidence import SkillUtility
    from lang_pz.skills.operators import ProposalRules, SkillWriter, propose_edits
    from lang_pz.trajectory import AgentStep, Trajectory

    lib = SkillLibrary.of([Skill("a-idle", "Idle.", "Always stay."), Skill("b-idle", "Idle too.", "Always stay."), UP])
    offered = [["team", "a-idle"], ["team", "b-idle"], ["team", "push-up"]]
    steps = [
        AgentStep(
            0,
            t,
            "piston_0",
            "o",
            "up",
            2,
            None,
            0.0,
            meta={
                "skills": {
                    "agent": "piston_0",
                    "decision": t,
                    "library_version": 0,
                    "offered": offered,
                    "invoked": {"name": "push-up", "scope": "team", "version": 1},
                }
            },
        )
        for t in range(12)
    ]
    traj = Trajectory(0, 0, steps, returns={"piston_0": 0.0}, finished=True)
    util = SkillUtility("piston_0", "push-up", "team", 1, 0, 0, (0,), "team_return", -50.0, 0.0, -50.0)
    mem = SkillMemory().update(lib, [traj], utilities=[util])
    props = propose_edits(lib, mem, SkillWriter(ScriptedBackend([])), rules=ProposalRules(max_edits=2))
    assert [e.before[0].name for e in props.edits] == ["push-up", "a-idle"]
    assert props.edits[0].reason.startswith("harmful")


def test_the_library_in_done_json_round_trips_with_resources_and_history():
    from lang_pz.skills import SkillEdit
    from lang_pz.skills.library import library_from_json, library_to_json

    res = UP.evolve(resources={"references/why.md": b"the ball\n", "assets/x.bin": bytes(range(256))})
    lib = SkillLibrary({"team": {res.name: res}, "piston_0": {DOWN.name: DOWN}})
    lib = lib.apply(SkillEdit("refine", "team", (res,), (res.evolve(body="Always stay."),), "r", {"n": 1.5}))
    lib = lib.apply(SkillEdit("prune", "piston_0", (DOWN,)), None).rollback(note="validation fell")
    back = library_from_json(json.loads(json.dumps(library_to_json(lib))))
    assert back == lib and back.version == 1 and [e.kind for e in back.history] == ["edit", "edit", "rollback"]
    assert back.get("team", "push-up").resources["assets/x.bin"] == bytes(range(256))
