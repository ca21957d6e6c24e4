"""Small real training runs for the viewer and tracker tests: real Pistonball (5 pistons, short
episodes) with :class:`~lang_pz.backends.ScriptedBackend` as every LLM role. Actors play the
word their policy names; the counterfactual critic credits agents from real re-runs (the stand-in
only words it); the optimiser flips a policy between up and down. Nothing here is a measurement."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from lang_pz.backends import ScriptedBackend
from lang_pz.backends.base import GenerationRequest
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
        return json.dumps({k: {"credit": 0.0, "steps": [], "explanation": "scripted"} for k in req.json_schema["properties"]})
    if req.role in ("optimiser.gradient", "optimiser.aggregate"):
        change = req.json_schema["properties"]["change"].get("enum", ["push the other way"])[0]
        return json.dumps({"keep": "", "change": change, "drop": "", "evidence_steps": []})
    current = re.findall(r"^Current policy: (.*)$", p.rsplit("Now your task:", 1)[-1], re.MULTILINE)[-1]
    return json.dumps({"policy": DOWN if current == UP else UP})


def small_run(run_dir: Path, callbacks: tuple[Callback, ...] = (), **kw: Any) -> Path:
    """Two iterations on 5-piston Pistonball (piston_1 starts pushing up), written to ``run_dir``."""
    cfg = TrainConfig(**{
        "env_kwargs": {"n_pistons": 5, "hold": 5, "max_cycles": 30}, "iterations": 2, "episodes_per_iteration": 1,
        "validation_seeds": [1001], "test_seeds": [2001], "critic_mode": "counterfactual",
        "counterfactual": ["alternatives"], "initial_policy": DOWN, "initial_policies": {"piston_1": UP},
        "run_dir": str(run_dir), **kw})
    train(cfg, backends=ScriptedBackend(reply), callbacks=callbacks)
    return run_dir
