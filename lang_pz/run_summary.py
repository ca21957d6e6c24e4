"""What a training run folder holds, read into a :class:`RunSummary` (:func:`load_run`) for the
reports of :mod:`lang_pz.report`.

Reads the run folder that :func:`lang_pz.training.train` writes, through
:class:`lang_pz.runs.RunFolder` (which names every file): ``config.json``, ``metrics.jsonl`` (one
object per *completed* iteration), each iteration's ``policies`` and ``candidates``, and
``final/policies`` (absent while the run is going).

Each metrics line must carry ``iteration``, ``train_return``, ``val_return``,
``candidate_val_return`` and ``accepted`` (the last three may be ``null``); other fields are
optional and unknown ones ignored. Accept/reject is the training loop's validation-gated
update (see :mod:`lang_pz.training`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from lang_pz.error import RunDirError
from lang_pz.runs import RunFolder, read_jsonl, read_policies

__all__ = ["ROLES", "IterationRecord", "RoleUsage", "RunSummary", "load_run"]

ROLES = ("actor", "critic", "optimiser")


class RoleUsage(BaseModel):
    """LLM usage of one role (actor, critic or optimiser) in one iteration; cost in US dollars."""

    model_config = ConfigDict(extra="ignore")
    calls: int = 0
    cached_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = None


class IterationRecord(BaseModel):
    """One line of ``metrics.jsonl``; returns are team returns (sum of agents' rewards)."""

    model_config = ConfigDict(extra="ignore")
    iteration: int = Field(ge=0)
    train_return: float
    train_returns: list[float] = Field(default_factory=list)
    val_return: float | None
    candidate_val_return: float | None
    accepted: bool | None
    changed_agents: list[str] = Field(default_factory=list)
    accepted_agents: list[str] | None = None
    parse_error_rate: float = 0.0
    critic_failures: int = 0
    optimiser_failures: int = 0
    llm_calls: int = 0
    usage: dict[str, RoleUsage] = Field(default_factory=dict)
    interrupted_usage: dict[str, RoleUsage] = Field(default_factory=dict)
    seconds: float = 0.0
    test_return: float | None = None
    gated_agents: list[str] = Field(default_factory=list)


@dataclass
class RunSummary:
    """What a run folder holds.

    Attributes:
        run_dir: the folder.
        config: ``config.json`` as a dict.
        metrics: one record per completed iteration, in file order.
        initial_policies: agent -> text of ``iter_000/policies``.
        final_policies: agent -> text of ``final/policies`` if present; otherwise the policies
            the run had when it stopped: ``iter_{N+1}/policies`` for the last completed
            iteration N if that folder exists, else ``iter_N/policies`` with N's accepted
            candidates (``accepted_agents``) laid over it, else the initial ones.
        finished: whether ``final/policies`` exists.
        final_test_return: mean held-out test value of the final policies (``final/test.jsonl``), if measured.
        running_usage: role -> LLM usage so far of the iteration after the last completed one
            (its ``usage.json``, present while it runs or after it was interrupted; ``{}`` if none).
    """

    run_dir: Path
    config: dict[str, Any]
    metrics: list[IterationRecord]
    initial_policies: dict[str, str]
    final_policies: dict[str, str]
    finished: bool
    final_test_return: float | None = None
    running_usage: dict[str, RoleUsage] = field(default_factory=dict)


def _text(path: Path) -> str:
    """``path``'s text (UTF-8), else :class:`RunDirError` naming the file."""
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise RunDirError(
            f"{path} is not UTF-8 text (byte {exc.start}: {exc.reason}): the file is damaged; "
            "restore it from a copy of the run"
        ) from exc


def _is_number(x: Any) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool)


def _read_metrics(path: Path) -> list[IterationRecord]:
    records: list[IterationRecord] = []
    if not path.exists():
        return records
    for n, line in enumerate(_text(path).splitlines(), start=1):
        if not line.strip():
            continue
        try:
            records.append(IterationRecord.model_validate(json.loads(line)))
        except json.JSONDecodeError as exc:
            raise RunDirError(f"{path} line {n} is not JSON ({exc.msg}); fix or delete that line") from exc
        except ValidationError as exc:
            err = exc.errors()[0]
            field = ".".join(str(x) for x in err["loc"]) or "(line)"
            got = "" if err["type"] == "missing" else f" (got {err.get('input')!r})"
            raise RunDirError(
                f"{path} line {n}, field {field!r}: {err['msg']}{got}; the run was "
                "written by an incompatible lang_pz version or the line is corrupt"
            ) from exc
    return records


def load_run(run_dir: str | Path) -> RunSummary:
    """Read a run folder (see the module docstring for the layout and the final-policy rule).

    Raises:
        lang_pz.error.RunDirError: the folder is missing, is not a run (no ``config.json`` or
            no ``iter_000/policies``), or ``metrics.jsonl`` has a bad line (file, line, field).
    """
    run = RunFolder(run_dir)
    root = run.root
    if not root.is_dir():
        what = "is a file, not a folder" if root.exists() else "does not exist"
        raise RunDirError(f"run folder {root} {what}; pass the folder `lang-pz train` wrote")
    first = run.iteration(0).policies
    missing = [p.relative_to(root).as_posix() for p in (run.config, first) if not p.exists()]
    if missing:
        raise RunDirError(f"{root} is not a training run folder: missing {' and '.join(missing)}")
    try:
        config = json.loads(_text(run.config))
    except json.JSONDecodeError as exc:
        raise RunDirError(f"{run.config} is not JSON ({exc.msg} at line {exc.lineno})") from exc
    if not isinstance(config, dict):
        raise RunDirError(
            f"{run.config} holds a JSON {type(config).__name__}, not an object of TrainConfig fields; "
            "restore the config.json `lang-pz train` wrote"
        )
    metrics = _read_metrics(run.metrics)
    initial = read_policies(first)
    finished = run.final_policies.is_dir()
    final = read_policies(run.final_policies) if finished else dict(initial)
    if not finished and metrics:
        last = metrics[-1]
        nxt = run.iteration(last.iteration + 1).policies
        if nxt.is_dir():
            final = read_policies(nxt)
        else:
            final = read_policies(run.iteration(last.iteration).policies) or final
            if last.accepted:
                cands = read_policies(run.iteration(last.iteration).candidates)
                kept = cands if last.accepted_agents is None else {a: cands[a] for a in last.accepted_agents if a in cands}
                final.update(kept)
    final_test = None
    if run.final_test.exists():
        vals = [r["objective"] for r in read_jsonl(run.final_test) if _is_number(r.get("objective"))]
        final_test = sum(vals) / len(vals) if vals else None  # a line cut by a kill is skipped
    return RunSummary(root, config, metrics, initial, final, finished, final_test, _running_usage(run, metrics))


def _running_usage(run: RunFolder, metrics: list[IterationRecord]) -> dict[str, RoleUsage]:
    """The ``usage.json`` of the iteration after the last completed one, if it has no ``done.json``
    (a file that is not the usage record lang_pz writes counts as no usage: the report still prints)."""
    files = run.iteration(metrics[-1].iteration + 1 if metrics else 0)
    if files.done.exists() or not files.usage.exists():
        return {}
    try:
        saved = json.loads(files.usage.read_text(encoding="utf-8"))
        parts = [{r: RoleUsage.model_validate(u) for r, u in saved[k].items()} for k in ("interrupted", "attempt")]
    except (OSError, ValueError, KeyError, TypeError, AttributeError):  # pydantic's ValidationError is a ValueError
        return {}
    out: dict[str, RoleUsage] = {}
    for part in parts:
        for role, u in part.items():
            was = out.get(role, RoleUsage())
            costs = [c for c in (was.cost_usd, u.cost_usd) if c is not None]
            out[role] = RoleUsage(
                calls=was.calls + u.calls,
                cached_calls=was.cached_calls + u.cached_calls,
                prompt_tokens=was.prompt_tokens + u.prompt_tokens,
                completion_tokens=was.completion_tokens + u.completion_tokens,
                cost_usd=sum(costs) if costs else None,
            )
    return out


def _critic_mode(config: dict[str, Any]) -> str:
    """A LangMARL run's critic mode: in its ``langmarl`` section (flat in run folders written before
    configs had method sections)."""
    return str((config.get("langmarl") or {}).get("critic_mode") or config.get("critic_mode") or "?")
