"""Skill execution: progressive disclosure, explicit invocation recorded per step, withheld-skill
re-runs on a real environment (scripted LLM stand-in; the real model is in the integration test)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

import lang_pz
from lang_pz.backends.base import GenerationRequest
from lang_pz.error import BackendError, LangPZError
from lang_pz.objectives import make_objective
from lang_pz.policies.scripted import ConstantPolicy
from lang_pz.rollout import rollout
from lang_pz.skills import Scoping, Skill, SkillLibrary, read_library
from lang_pz.skills.evidence import skill_utilities
from lang_pz.skills.library import TEAM
from lang_pz.skills.policy import NONE, SkillPolicy, invocations, skill_policies, usage_counts
from lang_pz.test import ScriptedBackend

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "skills"
PUSH = Skill("push-up", "Lift the ball. Use when the ball is above you.", "Always push up.")
DOWN = Skill("go-down", "Make a slope. Use when the ball is to your left.", "Always go down.")


def last_block(req: GenerationRequest) -> str:
    """The real (last) block of a completion prompt: what a reply should depend on."""
    return (req.prompt or req.messages[-1].content).rsplit("\n\n", 1)[-1]


def scripted(pick=lambda names, block: names[0] if names[0] != NONE else NONE) -> ScriptedBackend:
    """Choice requests (choices end with 'none') -> ``pick``; act requests -> the action the
    disclosed body names (up / down), else 'stay'."""

    def reply(req: GenerationRequest) -> str:
        names = list(req.choices or ())
        if names and names[-1] == NONE:
            return pick(names, last_block(req))
        block = last_block(req)
        return "up" if "push up" in block else "down" if "go down" in block else "stay"

    return ScriptedBackend(reply)


def test_choose_prompt_lists_cards_not_bodies_and_act_discloses_the_body():
    llm = scripted()
    p = SkillPolicy("Play well.", llm, SkillLibrary.of([PUSH, DOWN]), agent="piston_0")
    d = p.decide({"text": "Ball: above you.\nActions: down, stay, up"}, {"legal_actions": ["down", "stay", "up"]})
    choose, act = llm.requests
    assert choose.choices == ("go-down", "push-up", NONE)
    block = last_block(choose)
    assert "push-up: Lift the ball." in block and "Always push up" not in block  # progressive disclosure
    assert (
        "Policy: Always go down. (skill go-down)" in last_block(act)
        and "Play well" not in last_block(act)
        and d.action == "down"
    )
    assert d.meta["skills"] == {
        "agent": "piston_0",
        "decision": 0,
        "library_version": 0,
        "offered": [[TEAM, "go-down"], [TEAM, "push-up"]],
        "invoked": {"name": "go-down", "scope": TEAM, "version": 1},
    }


def test_none_means_no_invocation_and_base_policy_only():
    llm = scripted(pick=lambda names, block: NONE)
    p = SkillPolicy("Always stay.", llm, SkillLibrary.of([PUSH]), agent="a")
    d = p.decide("obs", {"legal_actions": ["down", "stay", "up"]})
    assert d.meta["skills"]["invoked"] is None and "Policy: Always stay.\n" in last_block(llm.requests[-1])
    empty = SkillPolicy("Always stay.", llm, SkillLibrary(), agent="a")
    n = len(llm.requests)
    assert empty.decide("obs", {"legal_actions": ["stay"]}).meta["skills"]["offered"] == []
    assert len(llm.requests) == n + 1  # no choice request without skills


def test_scopes_and_withheld_skills():
    lib = SkillLibrary(
        {TEAM: {PUSH.name: PUSH}, "solver": {DOWN.name: DOWN}, "piston_1": {"push-up": PUSH.evolve(body="Always stay.")}}
    )
    llm = scripted()
    roles = Scoping(roles={"piston_0": "solver"})
    p0 = SkillPolicy("x", llm, lib, agent="piston_0", scoping=roles)
    p1 = SkillPolicy("x", llm, lib, agent="piston_1", scoping=roles)
    assert {n: sc for n, (sc, _) in p0.skills().items()} == {"go-down": "solver", "push-up": TEAM}
    assert p1.skills()["push-up"][0] == "piston_1"  # the narrower scope hides the team's skill
    assert list(p0.without("go-down").skills()) == ["push-up"] and list(p0.skills()) == ["go-down", "push-up"]


def test_bad_choice_reply_raises():
    p = SkillPolicy("x", ScriptedBackend(lambda r: "up"), SkillLibrary.of([PUSH]), agent="a")
    with pytest.raises(BackendError, match="not one of"):
        p.decide("obs", {"legal_actions": ["up"]})


def pistonball():
    return lang_pz.make("butterfly/pistonball-v0", n_pistons=3, hold=25)


def test_invocations_recorded_in_a_real_episode():
    env = pistonball()
    # piston_0 invokes push-up whenever offered; the others never invoke anything
    pick = lambda names, block: "push-up" if "piston_0" in block and "push-up" in names else NONE  # noqa: E731
    pols = skill_policies(SkillLibrary.of([PUSH, DOWN]), env.possible_agents, scripted(pick), "Always stay.")
    traj = rollout(env, pols, seed=3)
    inv = invocations(traj)
    p0_steps = [s.step for s in traj.agent_steps("piston_0")]
    assert [i.step for i in inv] == p0_steps and {i.agent for i in inv} == {"piston_0"}
    assert [i.decision for i in inv] == list(range(len(p0_steps)))  # counted from 0 after reset
    assert {(i.skill, i.version, i.scope, i.library_version) for i in inv} == {("push-up", 1, TEAM, 0)}
    assert Counter(s.raw_output for s in traj.agent_steps("piston_0")) == Counter({"up": len(p0_steps)})
    invoked, offered = usage_counts([traj])
    assert invoked == Counter({(TEAM, "push-up"): len(p0_steps)})
    assert offered[(TEAM, "go-down")] == len(traj.steps)  # offered at every decision, never invoked
    again = rollout(env, pols, seed=3)  # replays exactly, invocation records included
    assert [s.meta for s in again.steps] == [s.meta for s in traj.steps]


def test_withheld_skill_rerun_measures_utility_on_real_env():
    env = pistonball()

    def pick(names, block):
        if "piston_1" in block and "push-up" in names:
            return "push-up"
        return "go-down" if "go-down" in names and "piston_1" in block else NONE

    pols = skill_policies(SkillLibrary.of([PUSH, DOWN]), env.possible_agents, scripted(pick), "Always stay.")
    traj = rollout(env, pols, seed=5)
    (u,) = skill_utilities(env, pols, traj, "team_return")
    # without push-up, piston_1 picks its next choice (go-down); the others stay: same as constant policies
    const = {"piston_0": ConstantPolicy("stay"), "piston_1": ConstantPolicy("up"), "piston_2": ConstantPolicy("stay")}
    assert rollout(env, const, seed=5).team_return == pytest.approx(traj.team_return)
    const["piston_1"] = ConstantPolicy("down")
    withheld = rollout(env, const, seed=5).team_return
    assert (u.agent, u.skill, u.scope, u.version) == ("piston_1", "push-up", TEAM, 1)
    assert u.withheld == pytest.approx(withheld) and u.factual == pytest.approx(traj.team_return)
    assert u.utility == pytest.approx(traj.team_return - withheld) and u.utility != 0
    assert u.reinvoked == ("go-down",) and u.steps == tuple(s.step for s in traj.agent_steps("piston_1"))
    assert "without push-up, piston_1" in u.describe()
    # the objective by name or object, and a pair filter
    obj = make_objective("return:piston_1", env.possible_agents)
    assert skill_utilities(env, pols, traj, obj, skills=[("piston_0", "push-up")]) == []


def test_withheld_rerun_needs_skill_policies_and_a_seed():
    env = pistonball()
    pols = skill_policies(SkillLibrary.of([PUSH]), env.possible_agents, scripted(), "Always stay.")
    traj = rollout(env, pols, seed=1)
    with pytest.raises(LangPZError, match="not a SkillPolicy"):
        skill_utilities(env, {**pols, "piston_0": ConstantPolicy("up")}, traj, "team_return")
    traj.seed = None
    with pytest.raises(LangPZError, match="no seed"):
        skill_utilities(env, pols, traj, "team_return")


def test_example_libraries_load_and_offer_role_skills():
    gsm = read_library(EXAMPLES / "gsm8k")
    llm = scripted()
    solver = SkillPolicy("Solve it.", llm, gsm, agent="solver")
    verifier = SkillPolicy("Check it.", llm, gsm, agent="verifier")
    assert set(solver.skills()) == {"final-answer-format", "read-the-question", "show-the-arithmetic"}
    assert set(verifier.skills()) == {"final-answer-format", "keep-a-right-answer", "recompute-and-confirm"}
    assert len(read_library(EXAMPLES / "pistonball")) == 3 and len(read_library(EXAMPLES / "overcooked")) == 4
