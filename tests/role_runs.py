"""A synthetic run folder (no training: the files lang_pz.runs names, written directly) whose
three pistons start from one policy and play alike, then piston_0 turns to "down" in its text
and its play. Expected role differentiation (lang_pz.differentiation):

- iteration 0: policy text 0 (identical), actions 0 (every piston plays "up");
- iteration 1: policy text 1/3 (piston_0 is 0.5 from each of the others, which are 0 apart),
  actions 2/3 (piston_0 is 1 bit from each of the others: disjoint actions);
- final: policy text 1/3.

:func:`labelled_run` adds critic records and a human labels file (lang_pz.evaluation.labels).
"""

from __future__ import annotations

import json
from pathlib import Path

from lang_pz.runs import RunFolder, append_jsonl, write_policies
from lang_pz.trajectory import AgentStep, TrajectoryWriter

AGENTS = ("piston_0", "piston_1", "piston_2")
UP, DOWN = "Always push up.", "Always push down."
WORDS = ["down", "stay", "up"]


def _episode(writer: TrajectoryWriter, episode: int, words: dict[str, str], steps: int = 4) -> None:
    for t in range(steps):
        writer.state(episode, t, f"cycle {t}")
        for agent in AGENTS:
            w = words[agent]
            writer.agent_step(
                AgentStep(episode, t, agent, f"You are {agent}.", w, WORDS.index(w), None, -0.1, legal_actions=WORDS)
            )
    writer.episode_end(episode, 100 + episode, dict.fromkeys(AGENTS, -0.1 * steps), steps)


def role_run(root: Path) -> Path:
    """Two completed iterations and final policies (see the module docstring)."""
    run = RunFolder(root)
    run.create(json.dumps({"env_id": "butterfly/pistonball-v0", "env_kwargs": {"n_pistons": 3}, "iterations": 2}))
    plans = [dict.fromkeys(AGENTS, UP), {**dict.fromkeys(AGENTS, UP), "piston_0": DOWN}]
    for it, policies in enumerate(plans):
        files = run.iteration(it)
        write_policies(files.policies, policies)
        with TrajectoryWriter(files.trajectories) as w:
            for ep in range(2):
                _episode(w, ep, {a: "down" if "down" in p else "up" for a, p in policies.items()})
        metrics = {"iteration": it, "train_return": -1.2, "train_returns": [-1.2, -1.2], "val_return": None}
        metrics |= {"candidate_val_return": None, "accepted": None}
        files.done.write_text(json.dumps({"metrics": metrics, "policies": policies}))
        with run.metrics.open("a") as f:
            f.write(json.dumps(metrics) + "\n")
    run.finish(plans[-1])
    return root


def credit(c: float, steps=()) -> dict:
    return {"credit": c, "explanation": "x", "steps": list(steps)}


def labelled_run(tmp_path: Path) -> Path:
    """The role run, its critic's records, and four labels (see the expected figures below):
    it 1 ep 0: label piston_0 at step 2, critic blames piston_0 citing 2 -> agent and step agree;
    it 1 ep 1: label piston_0 at step 3, critic's verdict "no one" -> both disagree;
    it 0 ep 0: label no one, critic all 0.0 without a verdict -> agrees (no one singled out);
    it 0 ep 1: label no one, no critic record -> no verdict, disagrees."""
    run = RunFolder(role_run(tmp_path / "run"))
    zero = {a: credit(0.0) for a in ("piston_0", "piston_1", "piston_2")}
    append_jsonl(run.iteration(1).log("credits"), {"episode": 0, "credits": {**zero, "piston_0": credit(-0.5, [2])}})
    append_jsonl(run.iteration(1).log("credits"), {"episode": 1, "credits": zero, "verdict": []})
    append_jsonl(run.iteration(0).log("credits"), {"episode": 0, "credits": zero})
    lines = [
        {"run": "run", "iteration": 1, "episode": 0, "blamed": ["piston_0"], "step": 2, "annotator": "a"},
        {"run": "run", "iteration": 1, "episode": 1, "blamed": ["piston_0"], "step": 3, "annotator": "a"},
        {"run": "run", "iteration": 0, "episode": 0, "blamed": [], "annotator": "a", "note": "all played up"},
        {"run": "run", "iteration": 0, "episode": 1, "blamed": [], "annotator": "b"},
    ]
    path = tmp_path / "labels.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n\n")
    return path
