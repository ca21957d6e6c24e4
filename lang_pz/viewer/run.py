"""A training run folder (:mod:`lang_pz.runs`) read into the data the page draws.

:func:`run_overview` gives everything but the steps of episodes: per iteration its metrics, LLM
usage per role, each agent's policy (and candidate) with a word diff, its credit, the validation
verdicts, the agents' role differentiation (:mod:`lang_pz.differentiation`), and for MASkills the skill library, its edits and the skill evidence. :func:`run_episodes`
yields one record per episode (training and validation) with every agent step, the critic's cited
steps and the counterfactual re-runs of that episode; the page loads each on demand. Iterations
still being written are read as far as they go (no ``done.json`` yet: ``done`` is false).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path
from typing import Any

from lang_pz.differentiation import role_differentiation
from lang_pz.error import LangPZError, RunDirError
from lang_pz.runs import IterationFiles, RunFolder, add_usage, read_jsonl, read_policies
from lang_pz.trajectory import read_trajectories
from lang_pz.viewer.source import read_json


def word_diff_ops(old: str, new: str) -> list[list[str]]:
    """Word diff of two texts as ``[op, words]`` pairs, ``op`` one of ``=``, ``-``, ``+``
    (difflib's longest matching blocks, on whitespace-separated words)."""
    a, b = old.split(), new.split()
    out: list[list[str]] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op == "equal":
            out.append(["=", " ".join(a[i1:i2])])
        if op in ("delete", "replace"):
            out.append(["-", " ".join(a[i1:i2])])
        if op in ("insert", "replace"):
            out.append(["+", " ".join(b[j1:j2])])
    return out


def _iterations(run: RunFolder) -> list[int]:
    """Iteration numbers with a folder, in order, up to the first gap."""
    out: list[int] = []
    while run.iteration(len(out)).root.is_dir():
        out.append(len(out))
    return out


def _policies(folder: Path) -> dict[str, str]:
    try:
        return read_policies(folder)
    except (LangPZError, OSError):
        return {}


def _skills(folder: Path) -> dict[str, Any] | None:
    """A skill library folder as ``scope/name -> {version, description, body}`` (``None`` if absent)."""
    if not folder.is_dir():
        return None
    from lang_pz.skills import read_library

    try:
        lib = read_library(folder)
    except (LangPZError, OSError) as exc:
        return {"error": str(exc)}
    return {
        "version": lib.version,
        "skills": {
            f"{scope}/{name}": {"version": s.version, "description": s.description, "body": s.body}
            for scope, skills in lib.scopes.items()
            for name, s in skills.items()
        },
    }


def _usage(files: IterationFiles, metrics: dict[str, Any] | None) -> dict[str, dict[str, float]]:
    """Role -> usage: the completed attempt's and interrupted ones' (``usage.json`` while running)."""
    if metrics is not None:
        return add_usage(metrics.get("usage", {}), metrics.get("interrupted_usage", {}))
    saved = read_json(files.usage)
    if not isinstance(saved, dict):
        return {}
    return add_usage(saved.get("interrupted", {}), saved.get("attempt", {}))


def _credits(files: IterationFiles) -> dict[str, dict[str, Any]]:
    """Agent -> mean credit and the per-episode credits and explanations of the critic's reports."""
    out: dict[str, dict[str, Any]] = {}
    for rep in read_jsonl(files.log("credits")):
        for agent, c in (rep.get("credits") or {}).items():
            if not isinstance(c, dict) or "credit" not in c:
                continue
            mine = out.setdefault(agent, {"episodes": []})
            mine["episodes"].append(
                {
                    "episode": rep.get("episode"),
                    "credit": c["credit"],
                    "explanation": c.get("explanation", ""),
                    "steps": c.get("steps", []),
                }
            )
    for mine in out.values():
        mine["mean"] = sum(float(e["credit"]) for e in mine["episodes"]) / len(mine["episodes"])
    return out


def _iteration(
    run: RunFolder, it: int, metrics: dict[str, Any] | None, before: dict[str, str], maskills: bool
) -> dict[str, Any]:
    files = run.iteration(it)
    policies = _policies(files.policies)
    candidates = _policies(files.candidates)
    rec: dict[str, Any] = {
        "iteration": it,
        "done": files.done.is_file(),
        "metrics": metrics,
        "usage": _usage(files, metrics),
        "policies": policies,
        "candidates": candidates,
        "diff": {a: word_diff_ops(before.get(a, ""), p) for a, p in policies.items() if a in before and before[a] != p},
        "candidate_diff": {a: word_diff_ops(policies.get(a, ""), c) for a, c in candidates.items()},
        "credits": _credits(files),
        "gated": read_jsonl(files.log("gated")),
        "acceptance": read_jsonl(files.log("acceptance")),
        "validation": read_jsonl(files.log("validation")),
        "test": read_jsonl(files.log("test")),
        "critic_errors": read_jsonl(files.log("critic_errors")),
        "optimiser_errors": read_jsonl(files.log("optimiser_errors")),
    }
    if maskills:
        rec["skills"] = _skills(files.skills)
        rec["skill_edits"] = read_jsonl(files.skill_edits)
        rec["skill_memory"] = read_json(files.skill_memory)
    return rec


def episode_id(it: int, kind: str, episode: int) -> str:
    """The id (and data file stem) of an episode: ``i003-train-0``, ``i003-validation-2``."""
    return f"i{it:03d}-{kind}-{episode}"


def _episode_files(run: RunFolder, it: int) -> list[tuple[str, Path]]:
    files = run.iteration(it)
    return [(k, p) for k, p in (("train", files.trajectories), ("validation", files.validation_trajectories)) if p.is_file()]


def episode_summary(ep: dict[str, Any]) -> dict[str, Any]:
    """The line of the episode list for an episode record of :func:`run_episodes` (no steps)."""
    keep = ("id", "iteration", "set", "episode", "seed", "finished", "returns", "agents")
    return {
        **{k: ep[k] for k in keep},
        "team_return": ep["team_return"] if ep["finished"] else None,
        "decisions": len(ep["steps"]),
    }


def run_overview(folder: str | Path) -> dict[str, Any]:
    """The page's data for a training run, without its episodes (see the module docstring and
    :func:`run_episodes`).

    Raises:
        lang_pz.error.RunDirError: not a run folder (no readable ``config.json``).
    """
    run = RunFolder(folder)
    config = run.load_config()
    maskills = config.get("method") == "maskills"
    metrics = {int(m["iteration"]): m for m in read_jsonl(run.metrics) if "iteration" in m}
    iterations: list[dict[str, Any]] = []
    before: dict[str, str] = {}
    for it in _iterations(run):
        rec = _iteration(run, it, metrics.get(it), before, maskills)
        iterations.append(rec)
        before = rec["policies"] or before
    final_test = read_jsonl(run.final_test)
    final = {
        "policies": _policies(run.final_policies),
        "test": final_test,
        "test_mean": sum(float(r["objective"]) for r in final_test) / len(final_test) if final_test else None,
    }
    if maskills:
        final["skills"] = _skills(run.final_skills)
    agents = list(dict.fromkeys(a for rec in iterations for a in rec["policies"]))
    mode = (config.get("langmarl") or {}).get("critic_mode", config.get("critic_mode", "?"))
    method = "MASkills (a skill library)" if maskills else f"critic mode {mode}"
    return {
        "kind": "run",
        "title": f"{config.get('env_id', '?')}: {method}",
        "source": str(run.root),
        "config": config,
        "maskills": maskills,
        "finished": run.final_policies.is_dir(),
        "agents": agents,
        "iterations": iterations,
        "final": final,
        "differentiation": [r.as_dict() for r in role_differentiation(run.root)],
    }


def run_episodes(folder: str | Path) -> Iterator[dict[str, Any]]:
    """One record per episode of the run (its id from :func:`episode_id`): every
    agent step, the state texts, and for training episodes the critic's credits (with the steps it
    cited) and the counterfactual re-runs of that episode."""
    run = RunFolder(folder)
    for it in _iterations(run):
        files = run.iteration(it)
        credits = {r.get("episode"): r for r in read_jsonl(files.log("credits"))}
        cfs: dict[Any, list[dict[str, Any]]] = {}
        for c in read_jsonl(files.log("counterfactuals")):
            cfs.setdefault(c.get("episode"), []).append(c)
        for kind, path in _episode_files(run, it):
            try:
                trajectories = read_trajectories(path)
            except (ValueError, KeyError, TypeError, AttributeError, IndexError) as exc:  # not torn: written otherwise
                raise RunDirError(
                    f"{path} is not a trajectories file lang_pz can read ({type(exc).__name__}: {str(exc)[:200]})"
                ) from exc
            for t in trajectories:
                rep = credits.get(t.episode, {}) if kind == "train" else {}
                yield {
                    "id": episode_id(it, kind, t.episode),
                    "iteration": it,
                    "set": kind,
                    "episode": t.episode,
                    "seed": t.seed,
                    "finished": t.finished,
                    "returns": t.returns,
                    "team_return": round(t.team_return, 3),
                    "agents": t.agents,
                    "steps": [_step(asdict(s)) for s in t.steps],
                    "states": {str(k): v for k, v in t.states.items()},
                    "credits": rep.get("credits", {}),
                    "critic_mode": rep.get("mode"),
                    "counterfactuals": cfs.get(t.episode, []) if kind == "train" else [],
                }


def _step(s: dict[str, Any]) -> dict[str, Any]:
    """An agent step with the fields the grid and the cell panel show."""
    return {
        k: s[k]
        for k in (
            "step",
            "agent",
            "observation",
            "raw_output",
            "action",
            "parse_error",
            "reward",
            "prompt_tokens",
            "completion_tokens",
            "meta",
            "legal_actions",
        )
    }
