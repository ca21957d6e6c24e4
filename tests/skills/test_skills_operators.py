"""The four operators, the decayed evidence memory, edits, limits and rollback."""

from __future__ import annotations

import json

import pytest

from lang_pz.backends.base import GenerationRequest
from lang_pz.error import SkillLibraryError
from lang_pz.skills import Scoping, Skill, SkillEdit, SkillLibrary, SkillLimits
from lang_pz.skills.aggregate import SkillMemory
from lang_pz.skills.critic import Residual, SkillCriticReport, UseCredit
from lang_pz.skills.evidence import SkillUtility
from lang_pz.skills.library import TEAM
from lang_pz.skills.operators import (
    ProposalRules,
    SkillWriter,
    consolidate,
    induce,
    propose_edits,
    prune,
    refine,
)
from lang_pz.test import ScriptedBackend
from lang_pz.trajectory import AgentStep, Trajectory

A = Skill("add-numbers", "Add the numbers. Use for totals.", "Add every number in the problem.")
B = Skill("sum-up", "Sum the numbers. Use for totals.", "Sum all the numbers.")
C = Skill("never-used", "Something nobody needs.", "Do nothing.")
LIB = SkillLibrary.of([A, B, C])


def writer(*replies: dict, limits: SkillLimits | None = None) -> SkillWriter:
    return SkillWriter(ScriptedBackend([json.dumps(r) for r in replies]), limits=limits or SkillLimits())


def test_refine_proposes_without_applying():
    w = writer({"description": "Add the numbers the question asks about.", "body": "Add only the asked numbers."})
    edit = refine(LIB, TEAM, "add-numbers", ["add only what is asked"], w)
    assert edit.op == "refine" and edit.before == (A,) and edit.after[0].body == "Add only the asked numbers."
    assert LIB.get(TEAM, "add-numbers") == A  # nothing applied in place
    assert "add only what is asked" in w.backend.requests[0].prompt and "Skill add-numbers" in w.backend.requests[0].prompt
    new = LIB.apply(edit)
    assert new.version == 1 and new.get(TEAM, "add-numbers").version == 2 and new.get(TEAM, "sum-up").version == 1


def test_refine_that_changes_nothing_is_retried():
    w = writer({"description": A.description, "body": A.body}, {"description": A.description, "body": "New body."})
    edit = refine(LIB, TEAM, "add-numbers", ["be clearer"], w)
    assert edit.after[0].body == "New body." and "unchanged" in w.backend.requests[1].prompt
    with pytest.raises(SkillLibraryError, match="no edit directions"):
        refine(LIB, TEAM, "add-numbers", [" "], w)


def test_induce_new_skill_name_rules_and_no_clash():
    w = writer(
        {"name": "Bad Name", "description": "d", "body": "b"},
        {"name": "sum-up", "description": "d", "body": "b"},
        {"name": "check-units", "description": "Check units. Use before answering.", "body": "Look at units."},
    )
    edit = induce(LIB, "solver", ["check the units"], w, agents=["solver"])
    assert edit.op == "induce" and edit.scope == "solver" and edit.after[0].name == "check-units"
    errs = [r.prompt for r in w.backend.requests[1:]]
    assert "lowercase" in errs[0]
    assert "'sum-up' is taken" in errs[1]  # a team skill's name: a solver skill would hide it from the solver
    assert LIB.apply(edit).get("solver", "check-units").version == 1


def test_consolidate_merges_and_may_keep_a_name():
    w = writer({"name": "add-numbers", "description": "Add the numbers for totals.", "body": "Add the numbers."})
    edit = consolidate(LIB, TEAM, ["add-numbers", "sum-up"], w)
    new = LIB.apply(edit)
    assert sorted(new.scopes[TEAM]) == ["add-numbers", "never-used"] and new.get(TEAM, "add-numbers").version == 2
    assert "Skill sum-up" in w.backend.requests[0].prompt
    with pytest.raises(SkillLibraryError, match="at least two"):
        consolidate(LIB, TEAM, ["sum-up", "sum-up"], w)


def traj_using(skill: str, n: int, offered=("add-numbers", "sum-up", "never-used")) -> Trajectory:
    steps = [
        AgentStep(
            0,
            t,
            "solver",
            "o",
            "a",
            "a",
            None,
            0.0,
            meta={
                "skills": {
                    "agent": "solver",
                    "decision": t,
                    "library_version": 0,
                    "offered": [[TEAM, o] for o in offered],
                    "invoked": {"name": skill, "scope": TEAM, "version": 1},
                }
            },
        )
        for t in range(n)
    ]
    return Trajectory(0, 0, steps, returns={"solver": 0.0}, finished=True)


def util(skill: str, u: float) -> SkillUtility:
    return SkillUtility("solver", skill, TEAM, 1, 0, 0, (0,), "team_return", u, 0.0, u)


def test_prune_unused_from_counts_and_harmful_from_measured_utility_only():
    report = SkillCriticReport(
        episode=0,
        residuals={},
        uses=[
            UseCredit(
                agent="solver", skill="sum-up", scope=TEAM, version=1, steps=[0], contribution="harmful", utility_delta=-1.0
            )
        ],
    )
    # never-used: offered 12 times, never invoked; add-numbers measured harmful; sum-up only called harmful
    mem = SkillMemory().update(
        LIB,
        [traj_using("add-numbers", 6), traj_using("sum-up", 6)],
        reports=[report],
        utilities=[util("add-numbers", -1.0), util("sum-up", 0.5)],
    )
    edits = {e.before[0].name: e for e in prune(LIB, mem, min_offered=5)}
    assert set(edits) == {"never-used", "add-numbers"}  # not sum-up: the LLM's verdict alone never prunes
    assert edits["never-used"].reason.startswith("unused") and edits["add-numbers"].reason.startswith("harmful")
    assert edits["add-numbers"].evidence["measured_utility"] == -1.0
    assert prune(LIB, mem, min_offered=100) == [edits["add-numbers"]]


def test_memory_decays_and_restarts_on_a_new_version():
    mem = SkillMemory(beta=0.5).update(LIB, [traj_using("add-numbers", 4)], utilities=[util("add-numbers", 2.0)])
    assert mem.record(TEAM, "add-numbers").invoked == 4 and mem.record(TEAM, "add-numbers").measured == 2.0
    mem.update(LIB, [traj_using("add-numbers", 2)], utilities=[util("add-numbers", -1.0)])
    rec = mem.record(TEAM, "add-numbers")
    assert rec.invoked == 4 * 0.5 + 2 and rec.measured == pytest.approx((2.0 * 0.5 - 1.0) / 1.5)
    edited = LIB.apply(SkillEdit("refine", TEAM, (A,), (A.evolve(body="x"),)))
    mem.update(edited, [])
    assert mem.record(TEAM, "add-numbers").version == 2 and mem.record(TEAM, "add-numbers").measured is None
    assert SkillMemory.from_json(json.loads(json.dumps(mem.to_json()))) == mem


def credit(skill: str, contribution: str, edit: str = "") -> UseCredit:
    return UseCredit(
        agent="solver",
        skill=skill,
        scope=TEAM,
        version=1,
        steps=[0],
        contribution=contribution,
        utility_delta=0.0,
        suggested_edit=edit,
    )


def test_propose_edits_picks_operators_from_evidence():
    reports = [
        SkillCriticReport(
            episode=0,
            uses=[
                credit("add-numbers", "harmful", "add only asked numbers"),
                credit("sum-up", "redundant"),
                credit("never-used", "redundant"),
            ],
            residuals={"solver": Residual(agent="solver", needs_skill=True, capability="units")},
        )
    ]
    trajs = [traj_using("add-numbers", 1), traj_using("sum-up", 1), traj_using("never-used", 1)]
    mem = SkillMemory().update(LIB, trajs, reports=reports)

    def reply(req: GenerationRequest) -> str:
        if "Task: rewrite" in req.prompt.rsplit("Example:", 1)[-1].split("\n\n", 1)[-1]:
            return json.dumps({"description": "Add the asked numbers.", "body": "Add only the asked numbers."})
        if "Task: merge" in req.prompt:
            return json.dumps({"name": "sum-up", "description": "Sum numbers.", "body": "Sum them."})
        return json.dumps({"name": "check-units", "description": "Check units.", "body": "Look at units."})

    w = SkillWriter(ScriptedBackend(reply))
    props = propose_edits(LIB, mem, w, scoping=Scoping(mode="role"), rules=ProposalRules(max_edits=3))
    assert [e.op for e in props.edits] == ["refine", "consolidate", "induce"] and props.failed == []
    assert props.edits[2].scope == "solver"  # role mode: the solver's own scope
    lib = LIB
    for e in props.edits:  # distinct skills: they apply one after another
        lib = lib.apply(e)
    assert lib.version == 3 and sorted(n for _, s in lib for n in [s.name]) == ["add-numbers", "check-units", "sum-up"]
    assert len(propose_edits(LIB, mem, w, rules=ProposalRules(max_edits=1)).edits) == 1


def test_propose_reports_writer_failures():
    mem = SkillMemory().update(
        LIB,
        [traj_using("add-numbers", 1)],
        reports=[SkillCriticReport(episode=0, uses=[credit("add-numbers", "harmful", "fix it")], residuals={})],
    )
    props = propose_edits(LIB, mem, SkillWriter(ScriptedBackend(["nope"] * 3)))
    assert props.edits == [] and props.failed[0][0] == "refine team/add-numbers"


def test_limits_enforced_on_apply_and_in_the_writer_schema():
    small = SkillLimits(max_skills=3, max_skills_per_scope=3, max_body_chars=10)
    with pytest.raises(SkillLibraryError, match="at most 3"):
        LIB.apply(SkillEdit("induce", TEAM, (), (Skill("x", "d", "b"),)), small)
    with pytest.raises(SkillLibraryError, match="body has 11 characters; at most 10"):
        LIB.apply(SkillEdit("refine", TEAM, (C,), (C.evolve(body="b" * 11),)), small)
    assert LIB.apply(SkillEdit("prune", TEAM, (C,)), SkillLimits(max_skills=1)).version == 1  # shrinking is allowed
    w = writer({"description": "d", "body": "b" * 11}, {"description": "d", "body": "short"}, limits=small)
    assert refine(LIB, TEAM, "never-used", ["x"], w).after[0].body == "short"
    assert w.backend.requests[0].json_schema["properties"]["body"]["maxLength"] == 10
    assert "at most 10" in w.backend.requests[1].prompt


def test_long_bounds_stay_out_of_the_schema_but_are_enforced():
    # llama.cpp refuses a grammar for a 1,200-character bound: the default body limit is checked on parsing
    w = writer({"description": "d", "body": "b" * 1201}, {"description": "d", "body": "fine"})
    assert refine(LIB, TEAM, "never-used", ["x"], w).after[0].body == "fine"
    props = w.backend.requests[0].json_schema["properties"]
    assert "maxLength" not in props["body"] and "{" not in props["body"]["pattern"]
    assert props["description"]["maxLength"] == 200 and "at most 1200" in w.backend.requests[1].prompt


def test_stale_edit_and_rollback_restores_previous_version():
    refine_a = SkillEdit("refine", TEAM, (A,), (A.evolve(body="v2"),), "r")
    v1 = LIB.apply(refine_a)
    with pytest.raises(SkillLibraryError, match="stale edit"):
        v1.apply(refine_a)  # proposed against version 0: add-numbers changed since
    prune_b = SkillEdit("prune", TEAM, (B,))
    v2 = v1.apply(prune_b)
    with pytest.raises(SkillLibraryError, match="roll back the later edits first"):
        v2.rollback(refine_a)
    back = v2.rollback(prune_b, "validation fell")
    assert back.scopes == v1.scopes and back.version == 1
    assert back.history[-1].kind == "rollback" and back.history[-1].note == "validation fell"
    assert back.history[-1].edit.before == (B,)
    back0 = back.rollback(refine_a)
    assert back0.scopes == LIB.scopes and back0.version == 0 and back0.get(TEAM, "add-numbers").version == 1
    with pytest.raises(SkillLibraryError, match="nothing to roll back"):
        back0.rollback()
    assert [e.kind for e in back0.history] == ["edit", "edit", "rollback", "rollback"]
    again = back0.apply(refine_a)  # the rejected version number is reused by the next accepted edit
    assert again.version == 1 and again.get(TEAM, "add-numbers").version == 2
