"""Small real training runs for the viewer and tracker tests: real Pistonball (5 pistons, short
episodes) with :class:`~lang_pz.backends.ScriptedBackend` as every LLM role. Actors play the
word their policy names; the counterfactual critic credits agents from real re-runs (the stand-in
only words it); the optimiser names the re-runs' word of a supported change, else flips a policy between up and
down. Nothing here is a measurement."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from support import sectioned

from lang_pz.backends.base import GenerationRequest
from lang_pz.test import ScriptedBackend
from lang_pz.training import Callback, TrainConfig, train

UP, DOWN = "Always push up.", "Always push down."


def prompt_of(req: GenerationRequest) -> str:
    return req.prompt if req.prompt is not None else "\n".join(m.content for m in req.messages or ())


def reply(req: GenerationRequest) -> str:
    """Every role of a langmarl run with the counterfactual critic (see the module docstring)."""
    p = prompt_of(req)
    if req.role == "actor":
        policy = re.findall(r"^Policy: (.*)$", p, re.MULTILINE)[-1]
        return "down" if "down" in policy else "up"
    if req.role == "critic.explain":
        return json.dumps({k: {"explanation": f"re-runs say so for {k}"} for k in req.json_schema["properties"]})
    if req.role == "critic":
        return json.dumps(
            {k: {"credit": 0.0, "steps": [], "explanation": "scripted"} for k in req.json_schema["properties"]}
        )
    if req.role in ("optimiser.gradient", "optimiser.aggregate"):
        change = req.json_schema["properties"]["change"].get("enum", ["push the other way"])[0]
        return json.dumps({"keep": "", "change": change, "drop": "", "evidence_steps": []})
    task = p.rsplit("Now your task:", 1)[-1]
    current = re.findall(r"^Current policy: (.*)$", task, re.MULTILINE)[-1]
    supported = re.findall(r"^Change: play (\w+) at", task, re.MULTILINE)  # the re-runs' word: name it
    return json.dumps({"policy": f"Always push {supported[-1]}." if supported else DOWN if current == UP else UP})


def small_run(run_dir: Path, callbacks: tuple[Callback, ...] = (), **kw: Any) -> Path:
    """Two iterations on 5-piston Pistonball (piston_1 starts pushing up), written to ``run_dir``."""
    cfg = TrainConfig(
        **sectioned(
            {
                "env_kwargs": {"n_pistons": 5, "hold": 5, "max_cycles": 30},
                "iterations": 2,
                "episodes_per_iteration": 1,
                "validation_seeds": [1001],
                "test_seeds": [2001],
                "critic_mode": "counterfactual",
                "counterfactual": ["alternatives"],
                "initial_policy": DOWN,
                "initial_policies": {"piston_1": UP},
                "run_dir": str(run_dir),
                **kw,
            }
        )
    )
    train(cfg, backends=ScriptedBackend(reply), callbacks=callbacks)
    return run_dir


def skills_reply(req: GenerationRequest) -> str:
    """Every role of a MASkills run: piston_1 invokes push-up, the others no skill; actors play the
    first offered word their instruction names; the skill critic judges every use neutral."""
    p = prompt_of(req)
    if req.role == "actor.skill":
        agent = re.search(r"You are (?:the )?(\w+)", p.rsplit("\n\n", 1)[-1]).group(1)
        return "push-up" if agent == "piston_1" and "push-up" in req.choices else "none"
    if req.role == "actor":
        instruction = re.findall(r"^Policy: (.*)$", p, re.MULTILINE)[-1].split(" (skill ")[0]
        return next((c for c in req.choices if c in instruction), req.choices[0])
    if req.role == "critic.skill":
        defs = req.json_schema["$defs"]
        return json.dumps(
            {
                "uses": {
                    k: {"contribution": "neutral", "evidence_steps": [], "suggested_edit": "", "utility_delta": 0.0}
                    for k in defs.get("SkillUses", {}).get("required", [])
                },
                "residuals": {a: {"needs_skill": False, "capability": ""} for a in defs["AgentResiduals"]["required"]},
            }
        )
    raise AssertionError(f"unexpected role {req.role!r}")


def skills_run(run_dir: Path) -> Path:
    """One MASkills iteration from examples/skills/pistonball: push-up, invoked by piston_1 only,
    measures harmful on seed 3 and is pruned (validated)."""
    library = Path(__file__).resolve().parents[1] / "examples" / "skills" / "pistonball"
    cfg = TrainConfig(
        env_kwargs={"n_pistons": 5, "hold": 5, "max_cycles": 50},
        iterations=1,
        episodes_per_iteration=1,
        validation_seeds=[1001],
        test_seeds=[2001],
        initial_policy="Always go down.",
        seed=3,
        method="maskills",
        maskills={"skills": str(library)},
        run_dir=str(run_dir),
    )
    train(cfg, backends=ScriptedBackend(skills_reply))
    return run_dir
