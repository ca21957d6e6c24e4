"""SkillTeamSpec (env -> team on a library; picklable for remote workers) and RoleRouter."""

from __future__ import annotations

import pickle

import lang_pz
from lang_pz.backends.base import GenerationRequest
from lang_pz.executor import set_worker_backend
from lang_pz.policies.llm import LLMPolicy
from lang_pz.skills import Skill, SkillLibrary
from lang_pz.skills.policy import CHOOSE_ROLE, SkillPolicy
from lang_pz.skills.team import RoleRouter, SkillTeamSpec
from lang_pz.test import ScriptedBackend
from lang_pz.training import TrainConfig

LIB = SkillLibrary.of([Skill("go-down", "Make a slope.", "Always go down."), Skill("push-up", "Lift.", "Always push up.")])


def spec(**kw) -> SkillTeamSpec:
    cfg = TrainConfig(env_kwargs={"n_pistons": 5, "hold": 5}, method="maskills", partners={"piston_4": "heuristic"})
    return SkillTeamSpec({f"piston_{i}": "Always stay." for i in range(4)}, cfg, ScriptedBackend(["x"]), library=LIB, **kw)


def test_team_of_skill_policies_partners_and_plain_llm_agents():
    env = lang_pz.make("butterfly/pistonball-v0", n_pistons=5, hold=5)
    team = spec(skilled=("piston_0", "piston_1"))(env)
    assert [type(team[f"piston_{i}"]).__name__ for i in range(5)] == [
        "SkillPolicy",
        "SkillPolicy",
        "LLMPolicy",
        "LLMPolicy",
        "PistonballHeuristic",
    ]
    assert isinstance(team["piston_2"], LLMPolicy) and not isinstance(team["piston_2"], SkillPolicy)
    withheld = spec().without("piston_1", "go-down").without("piston_1", "push-up")(env)
    assert list(withheld["piston_1"].skills()) == [] and list(withheld["piston_0"].skills()) == ["go-down", "push-up"]
    assert spec().without("piston_1", "go-down").with_library(LIB).withheld == {}


def test_a_pickled_team_carries_the_library_never_the_backend(monkeypatch):
    import lang_pz.executor as executor_module

    monkeypatch.setattr(executor_module, "_WORKER_BACKENDS", {})  # this process's worker backends, restored after the test
    s = spec().without("piston_0", "push-up")
    back = pickle.loads(pickle.dumps(s))
    assert back.backend is None and back.library == LIB and back.withheld == {"piston_0": frozenset({"push-up"})}
    worker = ScriptedBackend(["y"])
    set_worker_backend(back.config.backend_spec("actor"), worker)  # what a remote worker installs
    env = lang_pz.make("butterfly/pistonball-v0", n_pistons=5, hold=5)
    team = back(env)
    assert team["piston_0"].backend is worker and list(team["piston_0"].skills()) == ["go-down"]


def test_role_router_sends_skill_choices_to_their_own_instance():
    act, choose = ScriptedBackend(lambda r: "up"), ScriptedBackend(lambda r: r.choices[0])
    router = RoleRouter(act, {CHOOSE_ROLE: choose})
    pol = SkillPolicy("Always stay.", router, LIB, agent="piston_0")
    d = pol.decide("Ball: above you.", {"legal_actions": ["down", "stay", "up"]})
    assert [r.role for r in choose.requests] == [CHOOSE_ROLE] and [r.role for r in act.requests] == ["actor"]
    assert d.action == "up" and d.meta["skills"]["invoked"]["name"] == "go-down"
    assert router.usage.calls == 2
    assert router.generate(GenerationRequest(prompt="p", role="critic")).text == "up"  # no route: the default
