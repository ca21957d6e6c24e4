"""The run folder: everything a training run writes, as it is made, and what ``--resume`` reads.

Layout (``NNN`` is the iteration, zero-padded)::

    RUN_DIR/config.json                        the TrainConfig (no secrets: backends are specs)
    RUN_DIR/metrics.jsonl                      one line per completed iteration (rebuilt on resume)
    RUN_DIR/iter_NNN/policies/AGENT.txt        the policies the iteration's episodes used
    RUN_DIR/iter_NNN/trajectories.jsonl        every step of every training episode
    RUN_DIR/iter_NNN/counterfactuals.jsonl     counterfactual re-runs per episode
    RUN_DIR/iter_NNN/credits.jsonl             the critic's report per episode
    RUN_DIR/iter_NNN/critic_errors.jsonl       replies that failed validation after retries
    RUN_DIR/iter_NNN/gated.jsonl               agents given no edit: no re-run beat what they played
    RUN_DIR/iter_NNN/gradients.jsonl           per agent: per-episode gradients, aggregate, candidate
    RUN_DIR/iter_NNN/optimiser_errors.jsonl    stages that failed validation after retries
    RUN_DIR/iter_NNN/candidates/AGENT.txt      the candidate policies of the update
    RUN_DIR/iter_NNN/validation.jsonl          validation returns of current and candidate policies
    RUN_DIR/iter_NNN/acceptance.jsonl          per validated candidate: both scores, accepted or not
    RUN_DIR/iter_NNN/validation_trajectories.jsonl
    RUN_DIR/iter_NNN/done.json                 written last: metrics, accepted policies, momentum
    RUN_DIR/final/policies/AGENT.txt           the policies after the last iteration

An iteration is complete when its ``done.json`` exists (written atomically). Resuming reads the
last complete iteration's ``done.json`` and redoes the next iteration, keeping its finished
training episodes; every LLM reply made before the crash is served again by the response cache.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from lang_pz.error import RunDirError


def iter_dir(run_dir: Path, iteration: int) -> Path:
    """``RUN_DIR/iter_NNN``."""
    return run_dir / f"iter_{iteration:03d}"


def write_policies(folder: Path, policies: dict[str, str]) -> None:
    """One ``AGENT.txt`` per agent (the policy text and a newline)."""
    folder.mkdir(parents=True, exist_ok=True)
    for agent, text in policies.items():
        atomic_write(folder / f"{agent}.txt", text + "\n")


def read_policies(folder: Path) -> dict[str, str]:
    """Inverse of :func:`write_policies`."""
    return {p.stem: p.read_text(encoding="utf-8").rstrip("\n") for p in sorted(folder.glob("*.txt"))}


def append_jsonl(path: Path, record: dict[str, Any]) -> None:
    """Append one JSON line and flush it to disk."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as f:
        f.write(json.dumps(record) + "\n")
        f.flush()


def atomic_write(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` so that a kill leaves either the old file or the new one."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def completed_iterations(run_dir: Path) -> list[dict[str, Any]]:
    """The ``done.json`` records of the completed iterations 0, 1, ... (stops at the first gap)."""
    done: list[dict[str, Any]] = []
    while (p := iter_dir(run_dir, len(done)) / "done.json").exists():
        try:
            done.append(json.loads(p.read_text(encoding="utf-8")))
        except json.JSONDecodeError as exc:
            raise RunDirError(f"{p} is not valid JSON ({exc}); delete it to redo that iteration") from exc
    return done


def check_new_run_dir(run_dir: Path) -> None:
    """Refuse a folder that already holds files (a new run never overwrites another).

    Raises:
        RunDirError: ``run_dir`` exists and is not empty.
    """
    if run_dir.exists() and any(run_dir.iterdir()):
        raise RunDirError(
            f"run folder {run_dir} already holds a run; continue it with `lang-pz train --resume {run_dir}`, "
            "choose another --run-dir, or delete it"
        )


def load_config_json(run_dir: Path) -> dict[str, Any]:
    """``RUN_DIR/config.json`` as a dict.

    Raises:
        RunDirError: no readable ``config.json`` (not a run folder).
    """
    p = run_dir / "config.json"
    if run_dir.exists() and not run_dir.is_dir():
        raise RunDirError(f"{run_dir} is a file, not a run folder; give the folder `lang-pz train` wrote")
    if not p.exists():
        raise RunDirError(f"{run_dir} is not a run folder: {p} is missing (did you mean another folder?)")
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise RunDirError(f"{p} is not valid JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise RunDirError(f"{p} must hold a JSON object of TrainConfig fields")
    return data
