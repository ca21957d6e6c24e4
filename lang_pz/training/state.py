"""What a run carries between iterations (what ``done.json`` stores), what one iteration measured
(:class:`UsageMeter`, :func:`iteration_metrics`), the callbacks a run calls, and where a run starts
from (:func:`open_run`)."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from lang_pz.backends.meter import RoleMeter
from lang_pz.error import RunDirError
from lang_pz.runs import IterationLog, RunFolder
from lang_pz.training.accept import Acceptance
from lang_pz.training.config import TrainConfig
from lang_pz.trajectory import Trajectory


@dataclass
class TrainState:
    """The state of a run after an iteration.

    Attributes:
        policies: agent -> current policy text (the trainable and the other LLM agents).
        value: the current parameter's validation value, if measured (carried to the next
            iteration, so validation of an unchanged parameter is not repeated).
        calls: LLM calls of completed iterations (a resumed run counts the earlier ones).
        uncached_calls: those of them not served by the response cache (what the
            ``max_llm_calls`` budget counts: a cached reply costs nothing).
    """

    policies: dict[str, str]
    value: float | None = None
    calls: int = 0
    uncached_calls: int = 0

    def spent(self, metrics: IterationMetrics) -> dict[str, int]:
        """``calls`` and ``uncached_calls`` after an iteration that measured ``metrics`` (keywords
        for the next state)."""
        return {
            "calls": self.calls + metrics.spent_calls,
            "uncached_calls": self.uncached_calls + metrics.spent_uncached_calls,
        }

    def to_json(self) -> dict[str, Any]:
        """The ``done.json`` fields (besides ``metrics``)."""
        return {
            "policies": self.policies,
            "val_return_next": self.value,
            "calls_total": self.calls,
            "uncached_calls_total": self.uncached_calls,
        }

    @staticmethod
    def fields_of(done: dict[str, Any]) -> dict[str, Any]:
        """The keywords of :class:`TrainState` in a ``done.json`` record (:meth:`to_json`'s inverse;
        a subclass adds its own)."""
        return {
            "policies": dict(done["policies"]),
            "value": done["val_return_next"],
            "calls": done["calls_total"],
            "uncached_calls": done.get("uncached_calls_total", done["calls_total"]),
        }


@dataclass(frozen=True)
class Failure:
    """One failed call of a stage, logged and never replaced by a default (``on_stage_failure``
    decides whether the iteration goes on without it).

    Attributes:
        stage: ``critic`` (a report), ``optimiser`` (an agent's step) or ``skill writer`` (a
            planned library edit).
        item: what failed, e.g. ``episode 3``, ``piston_1``, ``refine team/push-up``.
        error: why.
    """

    stage: str
    item: str
    error: str


@dataclass
class IterationMetrics:
    """What one iteration measured (one line of ``metrics.jsonl``). Returns are team returns;
    validation values are in the run's objective (the team return unless configured)."""

    iteration: int
    train_return: float
    train_returns: list[float]
    val_return: float | None
    candidate_val_return: float | None
    accepted: bool | None
    changed_agents: list[str]
    accepted_agents: list[str]
    parse_error_rate: float
    critic_failures: int
    optimiser_failures: int
    llm_calls: int
    cached_calls: int
    usage: dict[str, dict[str, float]]
    seconds: float
    gated_agents: list[str] = field(default_factory=list)
    test_return: float | None = None
    #: role -> LLM usage of interrupted attempts of this iteration (a resumed run's; ``{}`` otherwise):
    #: spent but not in ``usage`` / ``llm_calls``, which count the attempt that completed; the run's
    #: totals and the ``max_llm_calls`` budget include it.
    interrupted_usage: dict[str, dict[str, float]] = field(default_factory=dict)

    @property
    def spent_calls(self) -> int:
        """LLM calls of every attempt of this iteration: ``llm_calls`` and the interrupted attempts'."""
        return self.llm_calls + sum(int(u.get("calls", 0)) for u in self.interrupted_usage.values())

    @property
    def spent_uncached_calls(self) -> int:
        """Of :attr:`spent_calls`, those the response cache did not serve (what ``max_llm_calls`` counts)."""
        return (
            self.spent_calls
            - self.cached_calls
            - sum(int(u.get("cached_calls", 0)) for u in self.interrupted_usage.values())
        )


@dataclass
class TrainResult:
    """A finished run: where it is, what it measured, the policies before and after."""

    run_dir: Path
    metrics: list[IterationMetrics] = field(default_factory=list)
    initial_policies: dict[str, str] = field(default_factory=dict)
    final_policies: dict[str, str] = field(default_factory=dict)
    final_test_return: float | None = None
    stopped: str = ""


class Callback:
    """Hooks a run calls (subclass and override what you need; the defaults do nothing)."""

    def on_episode(self, iteration: int, trajectory: Trajectory) -> None:
        """A training episode finished (not called for episodes a resumed run kept)."""

    def on_iteration(self, metrics: IterationMetrics, state: TrainState) -> None:
        """An iteration completed (its ``done.json`` is written)."""


def open_run(config: TrainConfig | None, resume: str | Path | None) -> tuple[RunFolder, TrainConfig, list[dict]]:
    """The run folder, its config and its completed iterations' ``done.json`` records: ``resume``'s
    (its ``config.json``), or a new run's for ``config`` (its folder checked to be new, not yet
    created: build the parts first, then ``run.create``).

    Raises:
        ValueError: both or neither of ``config`` and ``resume``.
        lang_pz.error.RunDirError: ``resume`` is not a run with a valid config, or a new run's
            folder is not empty.
    """
    if (config is None) == (resume is None):
        raise ValueError("give exactly one of config= (a new run) or resume= (a run folder to continue)")
    if resume is not None:
        run = RunFolder(resume)
        try:
            loaded = TrainConfig(**run.load_config())
        except ValidationError as exc:
            raise RunDirError(f"{run.config} is not a valid TrainConfig: {exc}") from exc
        return run, loaded, run.completed_iterations()
    assert config is not None
    run = RunFolder(config.run_dir or f"runs/{time.strftime('%Y%m%d-%H%M%S')}")
    run.check_new()
    return run, config.model_copy(update={"run_dir": str(run.root)}), []


class UsageMeter:
    """LLM usage and wall time since construction, per role (for one iteration's metrics).

    With the iteration's ``log``, its usage so far is saved to ``usage.json`` with every record the
    log writes (:meth:`lang_pz.runs.IterationLog.save_usage`), so a resumed run still counts the
    calls an interrupted attempt made (``IterationMetrics.interrupted_usage``).
    """

    def __init__(self, meters: Mapping[str, RoleMeter], log: IterationLog | None = None) -> None:
        self.meters = dict(meters)
        self.snaps = {r: m.snapshot() for r, m in self.meters.items()}
        self.t0 = time.perf_counter()
        self.log = log
        if log is not None:
            log.usage_source = self.usage

    def usage(self) -> dict[str, dict[str, float]]:
        """role -> calls, cached_calls, tokens, latency and cost since construction."""
        return {r: m.since(self.snaps[r]) for r, m in self.meters.items()}

    def seconds(self) -> float:
        """Wall-clock seconds since construction."""
        return round(time.perf_counter() - self.t0, 2)


def iteration_metrics(
    *,
    iteration: int,
    trajectories: Sequence[Trajectory],
    value: float | None,
    decision: Acceptance[Any],
    changed: Sequence[str],
    meter: UsageMeter,
    gated: Mapping[str, Any] | Sequence[str] = (),
    critic_failures: int = 0,
    optimiser_failures: int = 0,
    test_value: float | None = None,
) -> IterationMetrics:
    """The :class:`IterationMetrics` of an iteration from what its steps returned.

    Args:
        iteration: the iteration's number.
        trajectories: its training episodes.
        value: the current parameter's validation value (``None`` without validation).
        decision: the accept step's result.
        changed: labels of the candidates proposed (``changed_agents`` in ``metrics.jsonl``).
        meter: the iteration's :class:`UsageMeter`.
        gated: agents the evidence gate left alone.
        critic_failures: failed critic reports.
        optimiser_failures: failed proposals.
        test_value: the held-out test value of the iteration's starting parameter.
    """
    usage = meter.usage()
    steps = [s for t in trajectories for s in t.steps]
    return IterationMetrics(
        iteration=iteration,
        train_return=round(sum(t.team_return for t in trajectories) / len(trajectories), 3),
        train_returns=[round(t.team_return, 3) for t in trajectories],
        val_return=None if value is None else round(value, 3),
        candidate_val_return=None if decision.candidate_value is None else round(decision.candidate_value, 3),
        accepted=decision.accepted,
        changed_agents=list(changed),
        accepted_agents=list(decision.accepted_labels),
        parse_error_rate=round(sum(s.parse_error is not None for s in steps) / max(1, len(steps)), 4),
        critic_failures=critic_failures,
        optimiser_failures=optimiser_failures,
        llm_calls=sum(int(u["calls"]) for u in usage.values()),
        cached_calls=sum(int(u["cached_calls"]) for u in usage.values()),
        usage=usage,
        seconds=meter.seconds(),
        gated_agents=list(gated),
        test_return=None if test_value is None else round(test_value, 3),
        interrupted_usage=meter.log.interrupted if meter.log is not None else {},
    )
