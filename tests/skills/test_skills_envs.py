"""The same skills loop on every env family: the task envs (GSM8K, HotpotQA; roles, ``turns``
topologies) and the games (Overcooked at the skills level; Pistonball is in test_skills_loop.py).

Real environments and real benchmark items (``support.DATA``), the scripted stand-in of
test_skills_loop.py for every role (unit level: the real model is in test_skills_integration.py).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from skill_standins import SkillStandIn, jsonl
from support import sectioned

import lang_pz
from lang_pz.rollout import rollout
from lang_pz.skills import SkillMemory, read_library
from lang_pz.skills.policy import invocations, skill_policies
from lang_pz.test import ScriptedBackend
from lang_pz.training import TrainConfig, train
from lang_pz.trajectory import read_trajectories

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "skills"
from support import DATA, any_sandbox  # noqa: E402  ($LANG_PZ_DATA_DIR or shared/data beside the project)

needs_data = pytest.mark.skipif(not DATA.is_dir(), reason="benchmark data folder not available")
GSM8K_PICKS = {
    "solver": ["show-the-arithmetic", "read-the-question"],
    "verifier": ["keep-a-right-answer", "recompute-and-confirm"],
}


def run_config(tmp_path: Path, env_id: str, env_kwargs: dict, skills: Path, **kw) -> TrainConfig:
    base = {"iterations": 1, "episodes_per_iteration": 2, "validation_seeds": [1000]}
    return TrainConfig(
        **sectioned(
            {
                "env_id": env_id,
                "env_kwargs": env_kwargs,
                "method": "maskills",
                "skills": str(skills),
                "run_dir": str(tmp_path / "run"),
                **base,
                **kw,
            }
        )
    )


def scopes_seen(traj, agent: str) -> set[str]:
    return {sc for s in traj.agent_steps(agent) for sc, _ in s.meta["skills"]["offered"]}


@needs_data
def test_gsm8k_roles_see_their_scopes_and_the_turns_topology_is_tracked(tmp_path):
    turns = ["solver", "verifier", "solver"]  # the solver answers the verifier: two solver turns
    stand_in = SkillStandIn(
        picks=GSM8K_PICKS, text=lambda agent, instruction: "Correct" if agent == "verifier" else "#### 18"
    )
    cfg = run_config(tmp_path, "tasks/gsm8k-v0", {"data_dir": str(DATA), "turns": turns}, EXAMPLES / "gsm8k")
    result = train(cfg, backends=stand_in.backend)
    run = tmp_path / "run" / "iter_000"
    trajs = read_trajectories(run / "trajectories.jsonl")
    assert len(trajs) == 2
    for t in trajs:
        assert [s.agent for s in t.steps] == turns
        assert scopes_seen(t, "solver") == {"team", "solver"} and scopes_seen(t, "verifier") == {"team", "verifier"}
        assert [(i.agent, i.skill, i.scope) for i in invocations(t)] == [
            ("solver", "show-the-arithmetic", "solver"),
            ("verifier", "keep-a-right-answer", "verifier"),
            ("solver", "show-the-arithmetic", "solver"),
        ]
        assert [s.raw_output for s in t.steps] == ["#### 18", "Correct", "#### 18"]
    recs = jsonl(run / "counterfactuals.jsonl")  # one withheld-skill re-run per (episode, role, skill)
    assert sorted((r["episode"], r["agent"], r["skill"]) for r in recs) == sorted(
        (e, a, s[0]) for e in (0, 1) for a, s in GSM8K_PICKS.items()
    )
    assert all(r["reinvoked"] == [GSM8K_PICKS[r["agent"]][1]] for r in recs)  # each role's next choice
    credits = jsonl(run / "credits.jsonl")
    assert [sorted((u["agent"], u["skill"], tuple(u["steps"])) for u in c["uses"]) for c in credits] == [
        [("solver", "show-the-arithmetic", (0, 2)), ("verifier", "keep-a-right-answer", (1,))]
    ] * 2
    roles = Counter(r.role for r in stand_in.backend.requests)
    assert roles["critic.skill"] == 2 and set(roles) <= {"actor", "actor.skill", "critic.skill", "optimiser.skill"}
    assert result.metrics[0].usage["critic"]["calls"] == 2


@needs_data
def test_memory_aggregates_skill_evidence_across_topologies():
    lib = read_library(EXAMPLES / "gsm8k")
    stand_in = SkillStandIn(picks=GSM8K_PICKS)
    trajs = []
    for turns in (("solver", "verifier"), ("solver", "verifier", "solver")):
        env = lang_pz.make("tasks/gsm8k-v0", data_dir=str(DATA), turns=turns)
        trajs.append(rollout(env, skill_policies(lib, env.possible_agents, stand_in.backend, "Solve it."), seed=3))
    mem = SkillMemory().update(lib, trajs)
    assert mem.record("solver", "show-the-arithmetic").invoked == 1 + 2  # summed over both topologies
    assert mem.record("verifier", "keep-a-right-answer").invoked == 1 + 1
    assert mem.record("team", "final-answer-format").offered == 5 and mem.record("team", "final-answer-format").invoked == 0


@needs_data
def test_hotpotqa_finder_and_answerer_use_skills_and_long_observations_are_fitted(tmp_path):
    lib = tmp_path / "lib" / "cite-evidence"
    lib.mkdir(parents=True)
    (lib / "SKILL.md").write_text(
        "---\nname: cite-evidence\ndescription: Name the sentences that answer the "
        "question. Use when paragraphs are given.\n---\nCite the sentence numbers.\n"
    )
    stand_in = SkillStandIn(text=lambda agent, instruction: "[1.1]" if agent == "finder" else "Detroit")
    cfg = run_config(tmp_path, "tasks/hotpotqa-v0", {"data_dir": str(DATA)}, tmp_path / "lib")
    train(cfg, backends=stand_in.backend)
    trajs = read_trajectories(tmp_path / "run" / "iter_000" / "trajectories.jsonl")
    assert all({i.agent for i in invocations(t)} == {"finder", "answerer"} for t in trajs)
    # the choose prompt is fitted to the context window like an LLMPolicy prompt (n_ctx in words here)
    env = lang_pz.make("tasks/hotpotqa-v0", data_dir=str(DATA))
    env.reset(seed=0)
    small = ScriptedBackend(stand_in.reply, n_ctx=600)
    pol = skill_policies(read_library(tmp_path / "lib"), env.possible_agents, small, "Answer.")["finder"]
    obs = env.observe("finder")
    assert len(pol.choose_request(obs).prompt.split()) > 600  # whole, it would not fit
    req = pol.fit_choose_request(obs)
    assert "characters of the observation left out" in req.prompt and len(req.prompt.split()) + req.max_tokens <= 600
    assert pol.decide(obs, env.infos["finder"]).meta["skills"]["invoked"]["name"] == "cite-evidence"


def test_overcooked_skill_level_with_a_fixed_greedy_partner(tmp_path):
    pytest.importorskip("overcooked_ai_py")
    stand_in = SkillStandIn(picks={"player_0": ["fill-the-pot", "serve-soup"]})
    cfg = run_config(
        tmp_path,
        "overcooked/cramped_room-v0",
        {"actions": "macro", "horizon": 20},
        EXAMPLES / "overcooked",
        partners={"player_1": "greedy"},
        episodes_per_iteration=1,
        skill_reruns=1,
    )
    result = train(cfg, backends=stand_in.backend)
    run = tmp_path / "run" / "iter_000"
    (traj,) = read_trajectories(run / "trajectories.jsonl")
    inv = invocations(traj)
    assert inv and {i.agent for i in inv} == {"player_0"}  # the greedy partner plays, never uses skills
    assert all("skills" not in s.meta for s in traj.agent_steps("player_1"))
    assert {i.skill for i in inv} <= {"fill-the-pot", "serve-soup"}
    (rec,) = jsonl(run / "counterfactuals.jsonl")
    assert rec["agent"] == "player_0" and rec["objective"] == "soups"
    assert result.metrics[0].critic_failures == 0
    assert json.loads((run / "done.json").read_text())["library"]["version"] >= 0


def test_code_task_coder_and_tester_use_skills_and_the_code_runs_in_the_sandbox(tmp_path):
    lib = tmp_path / "lib" / "write-a-function"
    lib.mkdir(parents=True)
    (lib / "SKILL.md").write_text(
        "---\nname: write-a-function\ndescription: Use when you must write Python code "
        "for a task.\n---\nWrite one function with the name the task asks for.\n"
    )
    right = "```python\ndef is_palindrome(s):\n    return s == s[::-1]\n```"
    stand_in = SkillStandIn(text=lambda agent, instruction: right if agent == "coder" else "assert is_palindrome('aba')")
    # the demo set (two items) has no held-out split: training only
    cfg = run_config(
        tmp_path, "tasks/mbpp-v0", {"source": "demo", **any_sandbox("tasks/mbpp-v0")}, tmp_path / "lib", validation_seeds=[]
    )
    train(cfg, backends=stand_in.backend)
    trajs = read_trajectories(tmp_path / "run" / "iter_000" / "trajectories.jsonl")
    assert all({i.agent for i in invocations(t)} == {"coder", "tester"} for t in trajs)
    assert all(s.parse_error is None for t in trajs for s in t.steps)
    # the env scored the coder's code by running it: right on the palindrome item, wrong on the others
    for t in trajs:
        palindrome = "is_palindrome" in t.steps[0].observation
        assert (t.returns["coder"] > 0) == palindrome, (t.steps[0].observation[:80], t.returns)
    assert any("is_palindrome" in t.steps[0].observation for t in trajs)
