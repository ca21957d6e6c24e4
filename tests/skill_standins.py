"""The scripted LLM stand-in of the MASkills tests (a unit-test stand-in, never evidence that the
main job works): it answers every role of a skills run on 5-piston Pistonball (skill picks, the
skill critic, the writer), so tests compute expected returns from ConstantPolicy rollouts.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from pathlib import Path

from support import sectioned

import lang_pz
from lang_pz.backends.base import GenerationRequest
from lang_pz.policies.scripted import ConstantPolicy
from lang_pz.rollout import rollout
from lang_pz.skills import Skill, SkillLibrary, write_library
from lang_pz.skills.policy import NONE
from lang_pz.test import ScriptedBackend
from lang_pz.training import TrainConfig

ENV = {"n_pistons": 5, "hold": 5, "max_cycles": 50}
AGENTS = [f"piston_{i}" for i in range(5)]
UP = Skill("push-up", "Lift the ball. Use when the ball is above you.", "Always push up.")
DOWN = Skill("go-down", "Make a slope. Use when the ball is to your left.", "Always go down.")
STAY = Skill("hold-steady", "Keep your height. Use when the ball is far.", "Always stay.")
VAL_SEED = 1001  # measured with ConstantPolicy: all up is far worse than all down (checked where it matters)
SLOPE = {a: "go-down" if i < 3 else "push-up" for i, a in enumerate(AGENTS)}  # pistons 0-2 down, 3-4 up


def prompt_of(req: GenerationRequest) -> str:
    return req.prompt if req.prompt is not None else "\n".join(m.content for m in req.messages or ())


def word_of(instruction: str) -> str:
    """The action an instruction names (the stand-in follows instructions exactly)."""
    instruction = instruction.split(" (skill ")[0]  # the body is tagged with the skill's name
    return "down" if "down" in instruction else "stay" if "stay" in instruction else "up"


def jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


class SkillStandIn:
    """Every role of a skills run, scripted (module docstring).

    Args:
        picks: agent -> skill names in order of preference (the first one offered is chosen,
            else ``none``); agents not named pick the first offered skill.
        verdict: ``(agent, skill) -> (contribution, suggested edit)`` for the critic (default: neutral, no edit).
        needs: agent -> capability it lacks (the critic's residuals).
        write: ``(task text) -> {name?, description, body}`` for the writer.
        critic_ok: ``False``: the critic answers garbage (every attempt fails).
        text: ``(agent, instruction) -> reply`` for free-text actions (the task envs).
    """

    def __init__(
        self,
        picks: Mapping[str, list[str]] | None = None,
        verdict: Callable[[str, str], tuple[str, str]] | None = None,
        needs: Mapping[str, str] | None = None,
        write: Callable[[str], dict] | None = None,
        critic_ok: bool = True,
        text: Callable[[str, str], str] | None = None,
    ) -> None:
        self.text = text or (lambda agent, instruction: "Correct" if agent == "verifier" else "#### 0")
        self.picks, self.needs = dict(picks or {}), dict(needs or {})
        self.verdict = verdict or (lambda agent, skill: ("neutral", ""))
        self.write = write or (lambda task: {"name": "unused-skill", "description": "Unused.", "body": "Always stay."})
        self.critic_ok = critic_ok
        self.backend = ScriptedBackend(self.reply)

    def reply(self, req: GenerationRequest) -> str:
        p = prompt_of(req)
        if req.role == "actor.skill":
            block = p.rsplit("\n\n", 1)[-1]
            agent = re.search(r"You are (?:the )?(\w+)", block).group(1)
            names = [n for n in req.choices if n != NONE]
            prefs = self.picks.get(agent, names)
            return next((n for n in prefs if n in names), NONE)
        if req.role == "actor":
            instruction = re.findall(r"^Policy: (.*)$", p, re.MULTILINE)[-1].split(" (skill ")[0]
            if req.choices:  # the first action the instruction names, else the first one
                return next((c for c in req.choices if c in instruction), req.choices[0])
            agent = re.findall(r"You are (?:the )?(\w+)", p)[-1]
            return self.text(agent, instruction)
        if req.role == "critic.skill":
            if not self.critic_ok:
                return "not json"
            defs = req.json_schema["$defs"]
            uses = defs.get("SkillUses", {}).get("required", [])
            agents = defs["AgentResiduals"]["required"]
            out = {"uses": {}, "residuals": {}}
            for key in uses:
                agent, skill = key.split("/")
                contribution, edit = self.verdict(agent, skill)
                out["uses"][key] = {
                    "contribution": contribution,
                    "evidence_steps": [],
                    "suggested_edit": edit,
                    "utility_delta": 0.0,
                }
            for a in agents:
                out["residuals"][a] = {"needs_skill": a in self.needs, "capability": self.needs.get(a, "")}
            return json.dumps(out)
        if req.role == "optimiser.skill":
            return json.dumps(self.write(p.rsplit("\n\nTask: ", 1)[-1]))
        raise AssertionError(f"unexpected role {req.role!r}")

    def requests(self, role: str) -> list[GenerationRequest]:
        return [r for r in self.backend.requests if r.role == role]


def library_dir(tmp_path: Path, *skills: Skill, name: str = "lib") -> Path:
    return write_library(SkillLibrary.of(list(skills)), tmp_path / name)


def config(run_dir: Path, skills: Path | None = None, **kw) -> TrainConfig:
    base = {
        "env_kwargs": ENV,
        "iterations": 1,
        "episodes_per_iteration": 1,
        "validation_seeds": [VAL_SEED],
        "initial_policy": "Always push up.",
        "run_dir": str(run_dir),
        "method": "maskills",
        "skills": None if skills is None else str(skills),
    }
    return TrainConfig(**sectioned({**base, **kw}))


def team_return(words: Mapping[str, str], seed: int) -> float:
    env = lang_pz.make("butterfly/pistonball-v0", **ENV)
    try:
        return rollout(env, {a: ConstantPolicy(w) for a, w in words.items()}, seed=seed).team_return
    finally:
        env.close()


def episode_steps(words: Mapping[str, str], seed: int) -> int:
    env = lang_pz.make("butterfly/pistonball-v0", **ENV)
    try:
        return len(rollout(env, {a: ConstantPolicy(w) for a, w in words.items()}, seed=seed).steps)
    finally:
        env.close()


def words(picks: Mapping[str, str], bodies: Mapping[str, str], base: str = "up") -> dict[str, str]:
    """The action each agent plays when it invokes ``picks[agent]`` (absent: none, the base word)."""
    return {a: word_of(bodies[picks[a]]) if a in picks else base for a in AGENTS}


BODIES = {s.name: s.body for s in (UP, DOWN, STAY)}
