"""The skill critic: per-use credit and per-agent residuals, schema-built, validated, retried."""

from __future__ import annotations

import json

import pytest

from lang_pz.error import LangPZError, SchemaValidationError
from lang_pz.skills import Skill, SkillLibrary
from lang_pz.skills.critic import SkillCritic, skill_uses
from lang_pz.skills.evidence import SkillUtility
from lang_pz.skills.library import TEAM
from lang_pz.test import ScriptedBackend
from lang_pz.trajectory import AgentStep, Trajectory

LIB = SkillLibrary.of(
    [Skill("check-units", "Check the units.", "Look at units."), Skill("show-work", "Write the steps.", "Step by step.")]
)


def step(t: int, agent: str, skill: str | None, decision: int) -> AgentStep:
    rec = {
        "agent": agent,
        "decision": decision,
        "library_version": 0,
        "offered": [[TEAM, "check-units"], [TEAM, "show-work"]],
        "invoked": {"name": skill, "scope": TEAM, "version": 1} if skill else None,
    }
    return AgentStep(
        episode=2,
        step=t,
        agent=agent,
        observation=f"obs {t}",
        raw_output=f"act {t}",
        action=f"act {t}",
        parse_error=None,
        reward=0.0,
        meta={"skills": rec},
    )


def trajectory() -> Trajectory:
    # solver invokes show-work twice (steps 0 and 2), the verifier check-units once, then nothing
    steps = [
        step(0, "solver", "show-work", 0),
        step(1, "verifier", "check-units", 0),
        step(2, "solver", "show-work", 1),
        step(3, "verifier", None, 1),
    ]
    return Trajectory(
        episode=2,
        seed=7,
        steps=steps,
        states={t: f"state {t}" for t in range(4)},
        returns={"solver": 1.0, "verifier": 1.0},
        finished=True,
    )


def good(uses=("solver/show-work", "verifier/check-units"), delta=0.5, steps=(0,)) -> str:
    return json.dumps(
        {
            "uses": {
                k: {
                    "contribution": "helped",
                    "evidence_steps": list(steps),
                    "suggested_edit": "say more",
                    "utility_delta": delta,
                }
                for k in uses
            },
            "residuals": {
                "solver": {"needs_skill": False, "capability": ""},
                "verifier": {"needs_skill": True, "capability": "recompute the sum"},
            },
        }
    )


def test_uses_group_invocations_per_agent_and_skill():
    uses = skill_uses(trajectory())
    assert list(uses) == ["solver/show-work", "verifier/check-units"]
    assert uses["solver/show-work"]["steps"] == [0, 2] and uses["verifier/check-units"]["steps"] == [1]


def test_report_from_a_valid_reply_and_schema_has_exactly_the_uses_and_agents():
    llm = ScriptedBackend([good()])
    util = SkillUtility("solver", "show-work", TEAM, 1, 2, 7, (0, 2), "team_return", 2.0, 0.0, 2.0)
    report = SkillCritic(llm).assess(trajectory(), LIB, [util])
    (req,) = llm.requests
    schema = req.json_schema
    uses_def = schema["$defs"]["SkillUses"]
    assert sorted(uses_def["required"]) == ["solver/show-work", "verifier/check-units"]
    assert schema["$defs"]["AgentResiduals"]["required"] == ["solver", "verifier"]
    assert "without show-work, solver" in req.prompt and "(Write the steps.)" in req.prompt
    assert "solver [show-work] act 0" in req.prompt and "verifier act 3" in req.prompt
    assert [(u.agent, u.skill, u.steps, u.contribution, u.utility_delta) for u in report.uses] == [
        ("solver", "show-work", [0, 2], "helped", 0.5),
        ("verifier", "check-units", [1], "helped", 0.5),
    ]
    assert report.residuals["verifier"].needs_skill and report.residuals["verifier"].capability == "recompute the sum"
    assert report.utilities[0]["utility"] == 2.0 and report.errors == [] and report.usage["calls"] == 1


@pytest.mark.parametrize(
    "bad, words",
    [
        (good(delta=3.0), "outside [-1, 1]"),
        (good(steps=(9,)), "not in the trajectory"),
        (good(uses=("solver/show-work",)), "verifier/check-units"),
        ("not json", "not valid JSON"),
    ],
)
def test_bad_reply_is_retried_with_the_error_then_accepted(bad, words):
    llm = ScriptedBackend([bad, good()])
    report = SkillCritic(llm).assess(trajectory(), LIB)
    assert len(report.errors) == 1 and words in report.errors[0]
    assert "rejected" in llm.requests[1].prompt and llm.requests[1].temperature > 0
    assert report.usage["calls"] == 2


def test_no_valid_reply_raises_nothing_filled_in():
    with pytest.raises(SchemaValidationError, match="skill critic report for episode 2"):
        SkillCritic(ScriptedBackend([good(delta=5.0)] * 2), max_attempts=2).assess(trajectory(), LIB)


def test_episode_without_invocations_still_judges_residuals():
    traj = trajectory()
    for s in traj.steps:
        s.meta["skills"]["invoked"] = None
    reply = json.dumps(
        {"uses": {}, "residuals": {a: {"needs_skill": True, "capability": "add numbers"} for a in ("solver", "verifier")}}
    )
    llm = ScriptedBackend([reply])
    report = SkillCritic(llm).assess(traj, LIB)
    assert report.uses == [] and "no agent invoked a skill" in llm.requests[0].prompt
    assert all(r.needs_skill for r in report.residuals.values())
    with pytest.raises(LangPZError, match="no agent steps"):
        SkillCritic(llm).assess(Trajectory(episode=0, seed=0))


def test_the_library_critic_is_a_critic_and_sees_only_re_run_evidence():
    """LibraryCritic satisfies lang_pz.critics.Critic (a mode, assess over evidence items), and the
    ablation's shared outcome (no re-run) is never shown to it."""
    from lang_pz.critics.base import Critic, EpisodeEvidence
    from lang_pz.methods.maskills.steps import LibraryCritic, SkillEvidence

    critic = LibraryCritic(SkillCritic(ScriptedBackend(["{}"])), SkillLibrary())
    assert isinstance(critic, Critic) and critic.mode == "skills"
    u = SkillUtility("a", "s", TEAM, 1, 0, 0, (0,), "team_return", 1.0, 0.0, 1.0)
    measured, shared = SkillEvidence(0, (u,)), SkillEvidence(0, (u,), rerun=False)
    assert isinstance(measured, EpisodeEvidence) and measured.shown() == [u] and shared.shown() == []
