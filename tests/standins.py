"""The scripted LLM stand-in of the training tests (a unit-test stand-in, never evidence that the
main job works): it answers every role of a LangMARL run on 5-piston Pistonball, so tests compute
expected returns from ConstantPolicy rollouts instead of hard-coding them. Shared by the tests of
training, examples, executors and credit.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path

from support import sectioned

import lang_pz
from lang_pz.backends.base import GenerationRequest
from lang_pz.policies.scripted import ConstantPolicy
from lang_pz.rollout import rollout
from lang_pz.test import ScriptedBackend
from lang_pz.training import TrainConfig, train

ENV_ID = "butterfly/pistonball-v0"
ENV = {"n_pistons": 5, "hold": 5, "max_cycles": 50}
AGENTS = [f"piston_{i}" for i in range(5)]
UP, DOWN = "Always push up.", "Always push down."
VAL_SEED = 1001  # measured with ConstantPolicy: all up is far worse than pistons 0-2 down (checked in tests)
SLOPE = {a: (DOWN if i < 3 else UP) for i, a in enumerate(AGENTS)}  # pistons 0-2 down, 3-4 up
GRADIENT_KEYS = {"keep", "change", "drop", "evidence_steps"}


# -- the scripted stand-in ----------------------------------------------------------------


def prompt_of(req: GenerationRequest) -> str:
    return req.prompt if req.prompt is not None else "\n".join(m.content for m in req.messages or ())


def role_of(req: GenerationRequest) -> str:
    """actor / critic / gradient / apply: every request says who asks (``req.role``)."""
    return {
        "actor": "actor",
        "critic": "critic",
        "critic.explain": "explain",
        "optimiser.gradient": "gradient",
        "optimiser.aggregate": "gradient",
        "optimiser.update": "apply",
    }[req.role]


def agent_of_optimiser_request(req: GenerationRequest) -> str:
    """The agent an optimiser request is about (named in the task, after the worked example)."""
    p = prompt_of(req)
    m = re.search(r"policy of agent (\w+):", p) or re.search(r"Agent: (\w+)", p.rsplit("Now your task:", 1)[-1])
    assert m, p
    return m.group(1)


def flip(policy: str) -> str:
    return UP if policy == DOWN else DOWN


def critic_credit(key: str) -> float:
    """Distinct scripted credits per agent (so a shared critique is recognisable)."""
    if key not in AGENTS:
        return -0.5 if key == "team" else 0.0
    return [-1.0, -0.5, 0.0, 0.5, 1.0][AGENTS.index(key)]


class StandIn:
    """Answers every role; ``flipping`` agents get their policy flipped by the optimiser,
    the others get their current policy back (no change)."""

    def __init__(self, flipping: Iterable[str] = ()) -> None:
        self.flipping = set(flipping)
        self.backend = ScriptedBackend(self.reply)

    def reply(self, req: GenerationRequest) -> str:
        role, p = role_of(req), prompt_of(req)
        if role == "actor":
            policy = re.findall(r"^Policy: (.*)$", p, re.MULTILINE)[-1]
            return "down" if "down" in policy else "up"
        if role == "critic":
            return json.dumps(
                {
                    k: {"credit": critic_credit(k), "steps": [], "explanation": f"scripted credit of {k}"}
                    for k in req.json_schema["properties"]
                }
            )
        if role == "explain":  # the counterfactual critic's words (its numbers are computed)
            return json.dumps({k: {"explanation": "scripted words"} for k in req.json_schema["properties"]})
        if role == "gradient":  # the first supported change when the evidence offers some
            change = req.json_schema["properties"]["change"].get("enum", ["push the other way"])[0]
            return json.dumps({"keep": "", "change": change, "drop": "", "evidence_steps": []})
        agent = agent_of_optimiser_request(req)
        current = re.findall(r"^Current policy: (.*)$", p.rsplit("Now your task:", 1)[-1], re.MULTILINE)[-1]
        return json.dumps({"policy": flip(current) if agent in self.flipping else current})

    def requests(self, role: str, agent: str | None = None) -> list[GenerationRequest]:
        roles = {"optimiser": ("gradient", "apply")}.get(role, (role,))
        return [
            r
            for r in self.backend.requests
            if role_of(r) in roles and (agent is None or agent_of_optimiser_request(r) == agent)
        ]


def train_with(stand_in: StandIn, *args, **kwargs):
    """``train`` with the scripted stand-in as every role's backend (passed as an object)."""
    return train(*args, backends=stand_in.backend, **kwargs)


def config(run_dir: Path, **kw) -> TrainConfig:
    base = {
        "env_kwargs": ENV,
        "iterations": 1,
        "episodes_per_iteration": 1,
        "validation_seeds": [VAL_SEED],
        "initial_policy": UP,
        "run_dir": str(run_dir),
    }
    return TrainConfig(**sectioned({**base, **kw}))


def team_return(policies: dict[str, str], seed: int) -> float:
    """The team return of ``policies`` played exactly (ConstantPolicy of the word they name)."""
    env = lang_pz.make(ENV_ID, **ENV)
    try:
        return rollout(
            env, {a: ConstantPolicy("down" if "down" in p else "up") for a, p in policies.items()}, seed=seed
        ).team_return
    finally:
        env.close()


def jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def episode_lines(path: Path, episode: int) -> list[str]:
    return [line for line in path.read_text().splitlines() if json.loads(line)["episode"] == episode]


def run_contents(root: Path) -> dict[str, object]:
    """Every file of a run folder, parsed, without wall-clock fields (latencies, seconds, run_dir)."""

    def clean(x):
        if isinstance(x, dict):
            return {k: clean(v) for k, v in x.items() if k not in ("latency_s", "seconds", "run_dir")}
        if isinstance(x, list):
            return [clean(v) for v in x]
        return x

    out: dict[str, object] = {}
    for p in sorted(root.rglob("*")):
        if p.is_dir():
            continue
        rel = p.relative_to(root).as_posix()
        text = p.read_text()
        if p.suffix == ".jsonl":
            out[rel] = [clean(json.loads(line)) for line in text.splitlines()]
        elif p.suffix == ".json":
            out[rel] = clean(json.loads(text))
        else:
            out[rel] = text
    return out
