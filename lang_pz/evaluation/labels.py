"""Human credit labels: who a person says was at fault in an episode, and when.

A labels file is JSONL, one object per labelled episode (blank lines are skipped)::

    {"run": "runs/pb-3", "iteration": 2, "episode": 0, "blamed": ["piston_1"], "step": 14,
     "annotator": "ab", "note": "pushes down under the ball"}
    {"run": "runs/pb-3", "iteration": 2, "episode": 1, "blamed": []}
    {"whowhen": "Hand-Crafted/12.json", "blamed": ["WebSurfer"], "step": 6, "annotator": "cd"}

- The episode, one of: ``run`` (a training run folder, :mod:`lang_pz.runs`) with ``iteration``
  and ``episode``: a training episode of that iteration (``iter_NNN/trajectories.jsonl``), whose
  critic verdict the run recorded (``credits.jsonl``); or ``whowhen``: a JSON file in the
  Who&When layout (:mod:`lang_pz.evaluation.whowhen`: its ``history`` is the episode, history
  entry ``t`` is step ``t``; its own ``mistake_agent`` / ``mistake_step``, if any, are ignored:
  the label is this line). Relative paths are read from the labels file's folder.
- ``blamed``: the agents at fault, spelt as in the episode (Who&When names ignoring case); ``[]``
  says no one is (an episode that went as well as it could, or a loss no agent caused).
- ``step`` (optional): the step of the decisive mistake, a step of the episode (the trajectory's
  ``step`` field; for Who&When the history index). Only with a non-empty ``blamed``.
- ``annotator``, ``note`` (optional): who labelled it and why. Two annotators may label the
  same episode (each line is scored); one annotator may not label it twice.

Any other key, a bad value, an episode that is not there, an agent that does not act in it or a
step it does not have is refused with the file, line and fix (:func:`load_labelled`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from lang_pz.error import LangPZError
from lang_pz.runs import RunFolder, read_jsonl, read_policies
from lang_pz.trajectory import Trajectory, read_trajectories

__all__ = ["CreditLabel", "LabelledEpisode", "load_labelled", "read_labels"]


class CreditLabel(BaseModel):
    """One line of a labels file (see the module docstring); ``line`` is its 1-based line number."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    run: str | None = Field(default=None, min_length=1)
    iteration: int | None = Field(default=None, ge=0)
    episode: int | None = Field(default=None, ge=0)
    whowhen: str | None = Field(default=None, min_length=1)
    blamed: tuple[str, ...]
    step: int | None = Field(default=None, ge=0)
    annotator: str | None = None
    note: str | None = None
    line: int = 0

    @model_validator(mode="after")
    def _one_episode(self) -> CreditLabel:
        if (self.run is None) == (self.whowhen is None):
            raise ValueError("give either 'run' (with 'iteration' and 'episode') or 'whowhen', not both, not neither")
        if self.run is not None and (self.iteration is None or self.episode is None):
            raise ValueError("a 'run' label needs 'iteration' and 'episode' (ints >= 0)")
        if self.whowhen is not None and (self.iteration is not None or self.episode is not None):
            raise ValueError("'iteration' and 'episode' belong to a 'run' label, not a 'whowhen' one")
        if any(not a.strip() for a in self.blamed) or len(set(self.blamed)) < len(self.blamed):
            raise ValueError(f"'blamed' must list distinct agent names, got {list(self.blamed)}")
        if self.step is not None and not self.blamed:
            raise ValueError("'step' says when a blamed agent erred: give it with a non-empty 'blamed'")
        return self

    @property
    def source(self) -> str:
        """The episode as a short text: ``RUN iteration I episode E`` or the Who&When file."""
        return f"{self.run} iteration {self.iteration} episode {self.episode}" if self.run else str(self.whowhen)


def read_labels(path: str | Path) -> list[CreditLabel]:
    """Read and check a labels file (format: the module docstring), without opening episodes.

    Raises:
        LangPZError: the file cannot be read, a line is not a JSON object or breaks the format
            (named with the file, line and field), the same annotator labels an episode twice,
            or there is no label.
    """
    p = Path(path)
    try:
        lines = p.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise LangPZError(f"labels file {p} cannot be read ({exc}); give a UTF-8 JSONL file") from exc
    labels: list[CreditLabel] = []
    for i, text in enumerate(lines, 1):
        if not text.strip():
            continue
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise LangPZError(f"{p} line {i} is not JSON ({exc.msg}); one JSON object per line") from None
        if not isinstance(data, dict):
            raise LangPZError(f"{p} line {i} is a {type(data).__name__}, not a JSON object of label fields")
        try:
            labels.append(CreditLabel(**{**data, "line": i}))
        except ValidationError as exc:
            e = exc.errors(include_url=False)[0]
            where = ".".join(str(x) for x in e["loc"])
            msg = str(e["msg"]).removeprefix("Value error, ")
            raise LangPZError(
                f"{p} line {i}: {where + ': ' if where else ''}{msg}; fields: run, iteration, episode, whowhen, "
                "blamed, step, annotator, note (docs/credit.md)"
            ) from None
    seen: dict[tuple[str, str | None], int] = {}
    for lab in labels:
        key = (lab.source, lab.annotator)
        if key in seen:
            raise LangPZError(
                f"{p} line {lab.line} labels {lab.source} again for annotator {lab.annotator!r} (first on line "
                f"{seen[key]}); keep one line, or give each annotator's its own 'annotator'"
            )
        seen[key] = lab.line
    if not labels:
        raise LangPZError(f"labels file {p} holds no label; one JSON object per labelled episode (docs/credit.md)")
    return labels


@dataclass
class LabelledEpisode:
    """A label with its episode.

    Attributes:
        label: the label line; ``blamed`` and ``step`` as spelt in the episode.
        trajectory: the episode.
        blamed: the label's agents, spelt as the trajectory spells them.
        recorded: the run's critic report of the episode (a ``credits.jsonl`` record), ``None``
            for a Who&When case or an episode the run's critic gave no report.
        policies: the agents' policy texts the episode was played with (``{}`` if unknown).
        task: a Who&When case's task text (``None`` otherwise).
    """

    label: CreditLabel
    trajectory: Trajectory
    blamed: tuple[str, ...]
    recorded: dict[str, Any] | None = None
    policies: dict[str, str] = field(default_factory=dict)
    task: str | None = None


def load_labelled(path: str | Path, *, max_chars: int = 200) -> list[LabelledEpisode]:
    """:func:`read_labels` and open each label's episode (Who&When messages are cut to
    ``max_chars`` characters, as :mod:`lang_pz.evaluation.whowhen` shows them).

    Raises:
        LangPZError: the labels file breaks the format, or a label's episode is not there, or
            names an agent that does not act in it, or a step it does not have (each names the
            line and the fix).
    """
    p = Path(path)
    base = p.parent
    runs: dict[tuple[Path, int], tuple[dict[int, Trajectory], dict[int, dict[str, Any]], dict[str, str]]] = {}
    out = []
    for lab in read_labels(p):
        where = f"{p} line {lab.line}"
        if lab.run is not None:
            assert lab.iteration is not None and lab.episode is not None  # the model's validator
            root = base / lab.run
            key = (root, lab.iteration)
            if key not in runs:
                runs[key] = _iteration(root, lab.iteration, where)
            episodes, credits, policies = runs[key]
            if lab.episode not in episodes:
                raise LangPZError(
                    f"{where}: {root} iteration {lab.iteration} has no training episode {lab.episode} (it has "
                    f"{sorted(episodes) or 'none'}); fix 'episode'"
                )
            traj = episodes[lab.episode]
            blamed = _spelt(lab.blamed, traj.agents, where, case_sensitive=True)
            out.append(LabelledEpisode(lab, traj, blamed, credits.get(lab.episode), policies))
        else:
            out.append(_whowhen(lab, base / str(lab.whowhen), where, max_chars))
        steps = {s.step for s in out[-1].trajectory.steps}
        if lab.step is not None and lab.step not in steps:
            raise LangPZError(f"{where}: step {lab.step} is not a step of {lab.source} (steps {min(steps)}-{max(steps)})")
    return out


def _iteration(root: Path, it: int, where: str) -> tuple[dict[int, Trajectory], dict[int, dict[str, Any]], dict[str, str]]:
    """The finished training episodes, credit records and policies of iteration ``it`` of ``root``."""
    run = RunFolder(root)
    try:
        run.load_config()
    except LangPZError as exc:
        raise LangPZError(f"{where}: 'run': {exc}") from None
    files = run.iteration(it)
    if not files.trajectories.is_file():
        raise LangPZError(
            f"{where}: {files.trajectories} is missing: the run has no iteration {it} episodes; fix 'iteration'"
        )
    try:
        trajectories = read_trajectories(files.trajectories, finished_only=True)
        policies = read_policies(files.policies)
    except (ValueError, KeyError, TypeError, OSError) as exc:
        raise LangPZError(f"{where}: {files.root} cannot be read ({type(exc).__name__}: {exc})") from None
    credits = {r["episode"]: r for r in read_jsonl(files.log("credits")) if isinstance(r.get("episode"), int)}
    return {t.episode: t for t in trajectories}, credits, policies


def _spelt(blamed: tuple[str, ...], agents: list[str], where: str, *, case_sensitive: bool) -> tuple[str, ...]:
    """``blamed`` spelt as ``agents`` spell them (ignoring case unless ``case_sensitive``)."""
    by = {a if case_sensitive else a.casefold(): a for a in agents}
    unknown = [b for b in blamed if (b if case_sensitive else b.casefold()) not in by]
    if unknown:
        raise LangPZError(f"{where}: 'blamed' names {unknown}, who do not act in the episode (agents: {', '.join(agents)})")
    return tuple(by[b if case_sensitive else b.casefold()] for b in blamed)


def _whowhen(lab: CreditLabel, path: Path, where: str, max_chars: int) -> LabelledEpisode:
    """A Who&When-style case file as a labelled episode (its mistake fields are not read)."""
    from lang_pz.evaluation.whowhen import agent_of, is_poser, parse_case, task_text, to_trajectory

    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise LangPZError(f"{where}: 'whowhen' {path} cannot be read as JSON ({exc})") from None
    history = data.get("history") if isinstance(data, dict) else None
    speakers = []
    for entry in history if isinstance(history, list) else []:
        try:
            speakers.append(agent_of(entry))
        except (ValueError, AttributeError):
            continue
    team = [a for a in speakers if not is_poser(a)]
    # parse_case checks the history and the label's agent and step against it; the file's own
    # mistake fields are replaced by the label's (a placeholder agent when the label blames no one)
    probe = {"mistake_agent": lab.blamed[0] if lab.blamed else (team[0] if team else ""), "mistake_step": lab.step or 0}
    try:
        case = parse_case({**(data if isinstance(data, dict) else {}), **probe}, str(path))
    except ValueError as exc:  # it names the file's fields, which hold the label's values here
        why = str(exc).replace("mistake_step", "'step'").replace("mistake_agent", "'blamed'")
        raise LangPZError(f"{where}: 'whowhen' {path}: {why}") from None
    blamed = _spelt(lab.blamed, case.agents, where, case_sensitive=False)
    return LabelledEpisode(lab, to_trajectory(case, max_chars=max_chars), blamed, task=task_text(case, max_chars))
