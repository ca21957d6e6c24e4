"""The run folder: every file a training run writes, named in one place, written as it is made.

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
    RUN_DIR/iter_NNN/validation_trajectories.jsonl
    RUN_DIR/iter_NNN/acceptance.jsonl          per validated candidate: both scores, accepted or not
    RUN_DIR/iter_NNN/test.jsonl                held-out test returns of the iteration's starting policies
    RUN_DIR/iter_NNN/usage.json                LLM usage per role of this attempt so far and of
                                               interrupted attempts (rewritten after every stage)
    RUN_DIR/iter_NNN/done.json                 written last: metrics, accepted policies, momentum
    RUN_DIR/final/policies/AGENT.txt           the policies after the last iteration
    RUN_DIR/final/test.jsonl                   held-out test returns of the final policies

A skill-library run (``method: maskills``, :mod:`lang_pz.skills.loop`) writes the same files (its
``counterfactuals.jsonl`` holds withheld-skill re-runs, ``credits.jsonl`` the skill critic's
per-use reports, ``acceptance.jsonl`` one record per validated library edit), and also::

    RUN_DIR/iter_NNN/skills/                   the skill library the iteration's episodes used
    RUN_DIR/iter_NNN/skill_edits.jsonl         proposed edits, then each one kept or rolled back
    RUN_DIR/iter_NNN/skill_memory.json         the aggregated skill evidence after the iteration
    RUN_DIR/final/skills/                      the library after the last iteration

An iteration is complete when its ``done.json`` exists (written atomically). Resuming reads the
last complete iteration's ``done.json`` and redoes the next iteration, keeping its finished
training episodes; every LLM reply made before the crash is served again by the response cache.
:class:`RunFolder` names and reads the files (the report reads a run through it);
:class:`IterationLog` writes one iteration's.
"""

from __future__ import annotations

import json
import os
import shutil
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lang_pz.error import RunDirError
from lang_pz.trajectory import Trajectory, TrajectoryWriter, read_trajectories

#: The JSONL logs of an iteration (``IterationLog.log(kind, record)`` appends to ``KIND.jsonl``).
LOGS = (
    "counterfactuals",
    "credits",
    "critic_errors",
    "credit_search",
    "gated",
    "gradients",
    "optimiser_errors",
    "validation",
    "acceptance",
    "test",
)


def write_policies(folder: Path, policies: dict[str, str]) -> None:
    """One ``AGENT.txt`` per agent (the policy text and a newline)."""
    folder.mkdir(parents=True, exist_ok=True)
    for agent, text in policies.items():
        atomic_write(folder / f"{agent}.txt", text + "\n")


def read_policies(folder: Path) -> dict[str, str]:
    """Inverse of :func:`write_policies` (``{}`` for a missing folder).

    Raises:
        RunDirError: a policy file holds no text or is not UTF-8 text (it names the file).
    """
    out = {}
    for p in sorted(Path(folder).glob("*.txt")):
        try:
            out[p.stem] = p.read_text(encoding="utf-8").rstrip("\n")
        except UnicodeDecodeError as exc:
            raise RunDirError(
                f"{p} is not UTF-8 text (byte {exc.start}: {exc.reason}): a policy file holds the agent's "
                "instruction text; save it as UTF-8 or delete the file"
            ) from exc
    empty = [a for a, text in out.items() if not text.strip()]
    if empty:
        raise RunDirError(
            f"{Path(folder) / (empty[0] + '.txt')} is empty: a policy file holds the agent's instruction "
            "text; write one or delete the file"
        )
    return out


def append_jsonl(path: Path, record: dict[str, Any]) -> None:
    """Append one JSON line and flush it to disk."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as f:
        f.write(json.dumps(record) + "\n")
        f.flush()


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """The records of a run file written by :func:`append_jsonl` (e.g. an iteration's
    ``credits.jsonl``); ``[]`` if it is not a file. A damaged line (cut by a kill, not JSON, not a
    JSON object, bytes that are not UTF-8) is skipped: a report of a damaged run still prints what
    the rest says."""
    if not path.is_file():
        return []
    out = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(rec, dict):
            out.append(rec)
    return out


def add_usage(a: dict[str, dict[str, float]], b: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
    """Role -> usage of ``a`` and ``b`` summed field by field."""
    return {
        role: {
            k: a.get(role, {}).get(k, 0) + b.get(role, {}).get(k, 0)
            for k in dict.fromkeys([*a.get(role, {}), *b.get(role, {})])
        }
        for role in dict.fromkeys([*a, *b])
    }


def atomic_write(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` so that a kill leaves either the old file or the new one."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


@dataclass(frozen=True)
class IterationFiles:
    """The paths of one iteration's files (see the module docstring)."""

    root: Path

    @property
    def policies(self) -> Path:
        return self.root / "policies"

    @property
    def candidates(self) -> Path:
        return self.root / "candidates"

    @property
    def trajectories(self) -> Path:
        return self.root / "trajectories.jsonl"

    @property
    def validation_trajectories(self) -> Path:
        return self.root / "validation_trajectories.jsonl"

    @property
    def usage(self) -> Path:
        return self.root / "usage.json"

    @property
    def done(self) -> Path:
        return self.root / "done.json"

    @property
    def skills(self) -> Path:
        """maskills: the skill library the iteration's episodes used (a library folder)."""
        return self.root / "skills"

    @property
    def skill_edits(self) -> Path:
        """maskills: proposed library edits and what became of each (kept or rolled back)."""
        return self.root / "skill_edits.jsonl"

    @property
    def skill_memory(self) -> Path:
        """maskills: the aggregated skill evidence after the iteration (read on resume)."""
        return self.root / "skill_memory.json"

    def log(self, kind: str) -> Path:
        """``KIND.jsonl`` (one of :data:`LOGS`)."""
        if kind not in LOGS:
            raise ValueError(f"unknown iteration log {kind!r}; one of {', '.join(LOGS)}")
        return self.root / f"{kind}.jsonl"


class RunFolder:
    """A run folder: names its files and reads them.

    Args:
        root: the folder (it need not exist yet).
    """

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)

    @property
    def config(self) -> Path:
        return self.root / "config.json"

    @property
    def metrics(self) -> Path:
        return self.root / "metrics.jsonl"

    @property
    def phases(self) -> Path:
        """phase -> the items (task ids, start states, first observations) its seeds play:
        the run's held-out check (:func:`lang_pz.training.phases.check_phases`)."""
        return self.root / "phases.json"

    @property
    def final_policies(self) -> Path:
        return self.root / "final" / "policies"

    @property
    def final_test(self) -> Path:
        return self.root / "final" / "test.jsonl"

    @property
    def final_skills(self) -> Path:
        """maskills: the skill library after the last iteration."""
        return self.root / "final" / "skills"

    def iteration(self, it: int) -> IterationFiles:
        """The files of iteration ``it`` (``RUN_DIR/iter_NNN``)."""
        return IterationFiles(self.root / f"iter_{it:03d}")

    def completed_iterations(self) -> list[dict[str, Any]]:
        """The ``done.json`` records of the completed iterations 0, 1, ... (stops at the first gap).

        Raises:
            RunDirError: a ``done.json`` is not valid JSON.
        """
        done: list[dict[str, Any]] = []
        while (p := self.iteration(len(done)).done).exists():
            try:
                done.append(json.loads(p.read_text(encoding="utf-8")))
            except json.JSONDecodeError as exc:
                raise RunDirError(f"{p} is not valid JSON ({exc}); delete it to redo that iteration") from exc
        return done

    def check_new(self) -> None:
        """Refuse a folder that already holds files (a new run never overwrites another).

        Raises:
            RunDirError: the folder exists and is not empty.
        """
        if self.root.exists() and any(self.root.iterdir()):
            raise RunDirError(
                f"run folder {self.root} already holds a run; continue it with `lang-pz train --resume {self.root}`, "
                "choose another --run-dir, or delete it"
            )

    def load_config(self) -> dict[str, Any]:
        """``config.json`` as a dict.

        Raises:
            RunDirError: no readable ``config.json`` (not a run folder).
        """
        if self.root.exists() and not self.root.is_dir():
            raise RunDirError(f"{self.root} is a file, not a run folder; give the folder `lang-pz train` wrote")
        if not self.config.exists():
            raise RunDirError(f"{self.root} is not a run folder: {self.config} is missing (did you mean another folder?)")
        try:
            data = json.loads(self.config.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise RunDirError(f"{self.config} is not valid JSON: {exc}") from exc
        if not isinstance(data, dict):
            raise RunDirError(f"{self.config} must hold a JSON object of TrainConfig fields")
        return data

    # -- writing -----------------------------------------------------------------------------

    def create(self, config_json: str, phases: dict[str, list[str]] | None = None) -> None:
        """Start a new run: the folder, its ``config.json`` and, given the items each phase plays
        (``Parts.items``), ``phases.json`` (refuses a non-empty folder)."""
        self.check_new()
        self.root.mkdir(parents=True, exist_ok=True)
        atomic_write(self.config, config_json)
        if phases is not None:
            atomic_write(self.phases, json.dumps(phases, indent=1))

    def rewrite_metrics(self, records: list[dict[str, Any]]) -> None:
        """``metrics.jsonl`` from the completed iterations (a resumed run drops a partial line)."""
        atomic_write(self.metrics, "".join(json.dumps(r) + "\n" for r in records))

    def begin(self, it: int) -> IterationLog:
        """Start (or redo) iteration ``it``: see :class:`IterationLog`."""
        return IterationLog(self, it)

    def finish(self, policies: dict[str, str]) -> None:
        """Write the final policies."""
        write_policies(self.final_policies, policies)


class IterationLog:
    """Writes one iteration's files as they are made.

    Starting an iteration clears the files a redone iteration makes again (every log, the
    candidates, validation trajectories), keeping only its finished training episodes, whose
    records stay verbatim and in order.

    Attributes:
        kept: the finished training episodes of an interrupted attempt (``[]`` for a fresh
            iteration); :func:`lang_pz.training.collect` does not replay them.
        interrupted: role -> LLM usage (``calls``, ``cached_calls``, tokens, ``cost_usd``) that
            interrupted attempts of this iteration spent, as last saved by :meth:`save_usage`
            (``{}`` for a fresh iteration): real spending that a redo does not repeat or count.
    """

    def __init__(self, run: RunFolder, it: int) -> None:
        self.run, self.iteration = run, it
        self.files = run.iteration(it)
        self.files.root.mkdir(parents=True, exist_ok=True)
        for kind in LOGS:
            self.files.log(kind).unlink(missing_ok=True)
        self.files.validation_trajectories.unlink(missing_ok=True)
        shutil.rmtree(self.files.candidates, ignore_errors=True)
        self.validation_episodes = 0  # validation episodes numbered on through the iteration
        self.kept = self._keep_finished()
        self.interrupted = self._interrupted_usage()
        #: role -> this attempt's usage so far (set by :class:`lang_pz.training.UsageMeter`); every
        #: record written saves it to ``usage.json``, so an interruption loses at most the calls in flight
        self.usage_source: Callable[[], dict[str, dict[str, float]]] | None = None
        self._usage_lock = threading.Lock()
        self._write_usage({})  # the interrupted attempts' usage, folded in once

    def _interrupted_usage(self) -> dict[str, dict[str, float]]:
        if not self.files.usage.exists():
            return {}
        try:
            saved = json.loads(self.files.usage.read_text(encoding="utf-8"))
            return add_usage(saved.get("interrupted", {}), saved.get("attempt", {}))
        except (json.JSONDecodeError, AttributeError, TypeError) as exc:
            raise RunDirError(
                f"{self.files.usage} is not the usage record lang_pz writes ({exc}); delete it "
                "(the interrupted attempts' usage is then not counted) and resume again"
            ) from exc

    def save_usage(self) -> None:
        """Write ``usage.json``: this attempt's usage so far (from :attr:`usage_source`; nothing to
        write without one) and the interrupted attempts'."""
        if self.usage_source is not None:
            self._write_usage(self.usage_source())

    def _write_usage(self, attempt: dict[str, dict[str, float]]) -> None:
        with self._usage_lock:  # steps running side by side (validation beside the training episodes) both save
            atomic_write(self.files.usage, json.dumps({"interrupted": self.interrupted, "attempt": attempt}, indent=1))

    def log(self, kind: str, record: dict[str, Any]) -> None:
        """Append ``record`` to this iteration's ``KIND.jsonl`` (and save the usage so far)."""
        append_jsonl(self.files.log(kind), record)
        self.save_usage()

    def write_policies(self, policies: dict[str, str]) -> None:
        """The policies this iteration's episodes use."""
        write_policies(self.files.policies, policies)

    def write_candidates(self, policies: dict[str, str]) -> None:
        """The candidate policies of the update."""
        write_policies(self.files.candidates, policies)

    def _keep_finished(self) -> list[Trajectory]:
        path = self.files.trajectories
        kept = read_trajectories(path, finished_only=True) if path.exists() else []
        if kept:
            atomic_write(path, _records_of(path, {t.episode for t in kept}))
        else:
            path.unlink(missing_ok=True)
        return kept

    def sort_trajectories(self) -> None:
        """Put ``trajectories.jsonl`` in episode order (episodes finished out of order when they
        ran concurrently; each episode's lines stay together and in their order)."""
        path = self.files.trajectories
        if not path.exists():
            return
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        order = sorted(range(len(lines)), key=lambda i: (_episode_of(lines[i]), i))
        atomic_write(path, "".join(lines[i] for i in order))

    def trajectory_writer(self) -> TrajectoryWriter:
        """A writer appending to ``trajectories.jsonl``."""
        return TrajectoryWriter(self.files.trajectories)

    def validation_writer(self) -> TrajectoryWriter:
        """A writer appending to ``validation_trajectories.jsonl``."""
        return TrajectoryWriter(self.files.validation_trajectories)

    def next_validation_episode(self) -> int:
        """The number of the next validation episode of this iteration."""
        n = self.validation_episodes
        self.validation_episodes += 1
        return n

    def done(self, record: dict[str, Any]) -> None:
        """Complete the iteration: ``done.json`` (atomically, last) and its ``metrics.jsonl`` line."""
        self.save_usage()
        atomic_write(self.files.done, json.dumps(record, indent=1))
        append_jsonl(self.run.metrics, record["metrics"])


def _records_of(path: Path, episodes: set[int]) -> str:
    """The lines of ``episodes`` in a JSONL trajectory file, unchanged and in order (a line cut
    by a kill, which is not valid JSON, is dropped)."""
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            continue
        if rec.get("episode") in episodes:
            out.append(line + "\n")
    return "".join(out)


def _episode_of(line: str) -> int:
    try:
        return int(json.loads(line)["episode"])
    except (json.JSONDecodeError, KeyError, TypeError, ValueError):
        return 1 << 62  # a cut line sorts last
