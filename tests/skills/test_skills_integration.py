"""The real embedded model (SmolLM2-135M) uses a skill library in a real episode."""

from __future__ import annotations

from pathlib import Path

import pytest

import lang_pz
from lang_pz.rollout import rollout
from lang_pz.skills import read_library
from lang_pz.skills.critic import SkillCritic
from lang_pz.skills.evidence import skill_utilities
from lang_pz.skills.policy import invocations, skill_policies

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "skills"


@pytest.mark.integration
def test_embedded_model_invokes_skills_in_a_pistonball_episode(embedded):
    env = lang_pz.make("butterfly/pistonball-v0", n_pistons=3, hold=25)  # 5 decisions per piston
    lib = read_library(EXAMPLES / "pistonball")
    pols = skill_policies(lib, env.possible_agents, embedded, "Follow the skill.")
    traj = rollout(env, pols, seed=0)
    inv = invocations(traj)
    assert inv, "the model never invoked a skill"
    names = {s.name: s for _, s in lib}
    for i in inv:  # every record names a real skill at its real version, at a real step of that agent
        assert i.skill in names and i.version == names[i.skill].version and i.library_version == lib.version
        assert i.step in {s.step for s in traj.agent_steps(i.agent)}
    for s in traj.steps:
        assert s.raw_output in ("down", "stay", "up") and s.parse_error is None
    # the same seed replays the same episode, invocations included
    again = rollout(env, pols, seed=0)
    assert [s.meta for s in again.steps] == [s.meta for s in traj.steps]
    # evidence and credit on the real model: re-runs without each skill, then a validated report
    utils = skill_utilities(env, pols, traj, "team_return", skills=[(inv[0].agent, inv[0].skill)])
    assert len(utils) == 1 and utils[0].factual == pytest.approx(traj.team_return)
    report = SkillCritic(embedded).assess(traj, lib, utils)
    assert {(u.agent, u.skill) for u in report.uses} == {(i.agent, i.skill) for i in inv}
    assert set(report.residuals) == set(env.possible_agents)
