"""No-fault cases: a good team that loses, or a team that plays as well as it can; does a critic
blame someone anyway?

Credit assignment is also measured where the right answer is "no one": the base team
(:mod:`lang_pz.evaluation.bases`) plays as scripted, nobody deviates from its policy, and the
outcome is what it is. Cases (:func:`lowest_return_seeds`): Pistonball's scripted heuristic on
its lowest-return seeds (the ball is simply hard to save), Overcooked's greedy cooks (a
deterministic environment: cases vary the horizon, seeds would replay one episode).

Per case and critic (:func:`run_nofault_benchmark`, the critics' re-runs of the episode as the
fault benchmark makes them, :func:`~lang_pz.evaluation.specs.score_specs`):

- **blames**: the report blames someone: its verdict names an agent (``CriticReport.verdict``,
  :mod:`lang_pz.critics.significance`), or, for a report without a verdict, some credit is
  negative (what an optimiser reads as "change this agent");
- **singles out**: one agent holds the lowest credit alone (the fault benchmark's blamed agent,
  :func:`~lang_pz.evaluation.scoring.blame`).

Both are false blame here; rates with 95 % Wilson intervals, next to the trivial rules (which
rank agents whatever happened, so they single someone out unless they tie).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from lang_pz.error import InvalidKwargError, LangPZError
from lang_pz.evaluation.baselines import baselines
from lang_pz.evaluation.faults import _seed, prepare
from lang_pz.evaluation.scoring import Assessor, blame
from lang_pz.evaluation.specs import CriticSpec, _specs, score_specs
from lang_pz.evaluation.summary import Rate, ResultsWriter, proportion_ci
from lang_pz.policies.base import Policy
from lang_pz.rollout import rollout
from lang_pz.trajectory import Trajectory, to_jsonable

__all__ = [
    "NoFaultCase",
    "NoFaultSummary",
    "lowest_return_seeds",
    "nofault_table",
    "pool_nofault",
    "run_nofault_benchmark",
]


@dataclass(frozen=True)
class NoFaultCase:
    """One no-fault case: an episode seed and the environment's keyword arguments."""

    seed: int
    env_kwargs: dict[str, Any] = field(default_factory=dict)


def lowest_return_seeds(
    env_id: str, env_kwargs: Mapping[str, Any], seeds: Sequence[int], k: int, base: str | None = None
) -> list[NoFaultCase]:
    """The ``k`` seeds of ``seeds`` on which the base team's return is lowest (ties: the lower
    seed), as no-fault cases, lowest first.

    Raises:
        InvalidKwargError: ``k < 1`` or fewer seeds than ``k``.
    """
    if k < 1 or len(seeds) < k:
        raise InvalidKwargError(f"need 1 <= k <= len(seeds), got k={k} of {len(seeds)} seeds")
    setup = prepare(env_id, fault=None, env_kwargs=env_kwargs, base=base, fault_action=None)
    env, make, agents = setup["env"], setup["make_base"], setup["agents"]
    returns = [(rollout(env, {a: make(env, a, j) for j, a in enumerate(agents)}, seed=s).team_return, s) for s in seeds]
    return [NoFaultCase(s, dict(env_kwargs)) for _, s in sorted(returns)[:k]]


def _outcome(critic: Assessor, traj: Trajectory, cfs: Sequence[Any]) -> dict[str, Any]:
    try:
        report = critic.assess(traj, None, cfs)
    except LangPZError as exc:
        return {"blames": False, "singles_out": False, "credits": {}, "error": f"{type(exc).__name__}: {exc}"}
    credits = {a: c.credit for a, c in report.credits.items()}
    names = list(report.verdict) if report.verdict is not None else [a for a, c in credits.items() if c < 0]
    return {
        "blames": bool(names),
        "named": names,
        "singles_out": blame(report).agent is not None,
        "credits": credits,
        "verdict": report.verdict,
        "error": None,
    }


@dataclass
class NoFaultSummary:
    """A critic's false blame on one family's no-fault cases (module docstring).

    Attributes:
        source / critic / cases: the family, the critic and the cases scored.
        blames / singles_out: the false-blame rates with 95 % Wilson intervals.
        failures: cases where the critic raised (counted as no blame).
        reruns: mean re-runs per case (``None``: the critic made none).
        baselines: each trivial rule's "singles out" rate.
        returns: the factual team returns of the cases.
        settings: the run's settings.
    """

    source: str
    critic: str
    cases: int
    blames: Rate
    singles_out: Rate
    failures: int
    reruns: float | None = None
    baselines: dict[str, Rate] = field(default_factory=dict)
    returns: list[float] = field(default_factory=list)
    settings: dict[str, Any] = field(default_factory=dict)


def nofault_summary_dict(summary: NoFaultSummary) -> dict[str, Any]:
    """A :class:`NoFaultSummary` as plain JSON-able data."""
    return to_jsonable(asdict(summary))


def run_nofault_benchmark(
    env_id: str,
    critics: Sequence[CriticSpec],
    cases: Sequence[NoFaultCase],
    *,
    label: str | None = None,
    seed: int = 0,
    window: int = 2,
    out: str | Path | None = None,
    progress: Callable[[str], None] | None = None,
) -> list[NoFaultSummary]:
    """Score every critic's false blame on ``cases`` of ``env_id`` (module docstring).

    Args:
        env_id: the environment id.
        critics: the critics under test (as in the fault benchmark; ``"reference"`` evidence
            uses the base team, which here is the team that played).
        cases: the no-fault cases (each with its own environment kwargs).
        label: the family's name in the results (default ``env_id``).
        seed: seeds the critics' own draws.
        window: the evidence's window (decisions), as the fault benchmark's.
        out: JSONL file the per-case records are appended to.
        progress: called with a one-line message per case.

    Raises:
        InvalidKwargError: no case, or a bad critic list.
        LangPZError: from the environment, the policies or the re-runs.
    """
    specs = _specs(critics)
    if not cases:
        raise InvalidKwargError("no no-fault case to score")
    rules = baselines(_seed(seed, 3))
    records: list[dict[str, Any]] = []
    setups: dict[str, dict[str, Any]] = {}
    with ResultsWriter(out) as writer:
        for i, case in enumerate(cases):
            key = repr(sorted(case.env_kwargs.items()))
            if key not in setups:
                setups[key] = prepare(env_id, fault=None, env_kwargs=case.env_kwargs, base=None, fault_action=None)
            setup = setups[key]
            env, make, agents = setup["env"], setup["make_base"], setup["agents"]

            def team(env: Any = env, make: Any = make, agents: Sequence[str] = agents) -> dict[str, Policy]:
                return {a: make(env, a, j) for j, a in enumerate(agents)}

            played = team()
            traj = rollout(env, played, seed=case.seed, episode=i)

            def score(critic: Assessor, cfs: Sequence[Any], traj: Trajectory = traj) -> dict[str, Any]:
                return _outcome(critic, traj, cfs)

            scores = score_specs(
                played, traj, specs, env, team, window=window, seed=_seed(seed, i, 4), score=score, texts=setup["texts"]
            )
            record = {
                "source": label or env_id,
                "kind": "no-fault",
                "case": i,
                "seed": case.seed,
                "env_kwargs": case.env_kwargs,
                "team_return": traj.team_return,
                "critics": scores,
                "baselines": {
                    n: {k: v for k, v in _outcome(r, traj, ()).items() if k != "credits"} for n, r in rules.items()
                },
            }
            writer.write(record)
            records.append(record)
            if progress:
                said = "; ".join(f"{n}: {c.get('named') or 'no one'}" for n, c in scores.items())
                progress(
                    f"{label or env_id} no-fault seed {case.seed} {case.env_kwargs} (return {traj.team_return:.1f}): {said}"
                )
    settings = {"env_id": env_id, "window": window, "seed": seed, "cases": [asdict(c) for c in cases]}
    return [summarise_nofault(label or env_id, s.name, records, settings) for s in specs]


def summarise_nofault(
    source: str, critic: str, records: Sequence[Mapping[str, Any]], settings: Any = None
) -> NoFaultSummary:
    """One critic's :class:`NoFaultSummary` of no-fault ``records``."""
    crit = [r["critics"][critic] for r in records]
    names = list(records[0]["baselines"]) if records else []
    reruns = [c["reruns"] for c in crit if "reruns" in c]
    return NoFaultSummary(
        source=source,
        critic=critic,
        cases=len(records),
        blames=Rate.of([c["blames"] for c in crit]),
        singles_out=Rate.of([c["singles_out"] for c in crit]),
        failures=sum(c["error"] is not None for c in crit),
        reruns=float(np.mean(reruns)) if reruns else None,
        baselines={b: Rate.of([r["baselines"][b]["singles_out"] for r in records]) for b in names},
        returns=[float(r["team_return"]) for r in records],
        settings=dict(settings or {}),
    )


def nofault_table(summaries: Sequence[NoFaultSummary]) -> str:
    """A Markdown table of false blame per family and critic."""
    head = (
        "| family | critic | cases | blames someone [95% CI] | singles one out [95% CI] | "
        "trivial rules single one out | re-runs / case | failed |"
    )
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for s in summaries:
        rules = ", ".join(f"{k} {v.value:.2f}" for k, v in s.baselines.items() if k != "random")
        lines.append(
            f"| {s.source} | {s.critic} | {s.cases} | {s.blames} | {s.singles_out} | {rules or '-'} | "
            f"{'-' if s.reruns is None else f'{s.reruns:.0f}'} | {s.failures} |"
        )
    return "\n".join(lines)


def pool_nofault(parts: list[NoFaultSummary]) -> NoFaultSummary:
    """One family's summary from its environments' (cases pooled)."""
    if len(parts) == 1:
        return parts[0]
    n = [p.cases for p in parts]

    def pool(get: Callable[[NoFaultSummary], Rate]) -> Rate:
        return _pooled([get(p).value for p in parts], n)

    reruns = [p.reruns for p in parts if p.reruns is not None]
    first = parts[0]
    return NoFaultSummary(
        source=first.source,
        critic=first.critic,
        cases=sum(n),
        blames=pool(lambda p: p.blames),
        singles_out=pool(lambda p: p.singles_out),
        failures=sum(p.failures for p in parts),
        reruns=sum(r * p.cases for r, p in zip(reruns, parts)) / sum(n) if len(reruns) == len(parts) else None,
        baselines={b: _pooled([p.baselines[b].value for p in parts], n) for b in first.baselines},
        returns=[r for p in parts for r in p.returns],
        settings={"parts": [p.settings for p in parts]},
    )


def _pooled(values: list[float], n: list[int]) -> Rate:
    """The rate of ``sum(values[i] * n[i])`` hits in ``sum(n)`` cases, with its Wilson interval."""
    hits, total = sum(v * k for v, k in zip(values, n)), sum(n)
    return Rate(hits / total if total else 0.0, proportion_ci(hits, total))
