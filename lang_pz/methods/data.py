"""What one iteration of a method passes between its stages: the propose stage's
:class:`Proposal`, and :class:`IterationData`, everything the iteration has computed so far
(:meth:`lang_pz.methods.Method.iteration`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from lang_pz.runs import IterationLog
from lang_pz.training.accept import Acceptance, Candidate
from lang_pz.training.parts import Context
from lang_pz.training.state import Callback, TrainState, UsageMeter
from lang_pz.training.steps import Batch

S = TypeVar("S", bound=TrainState)
P = TypeVar("P")


@dataclass
class Proposal(Generic[P]):
    """What the propose stage made: the candidates the accept stage validates.

    Attributes:
        candidates: one per changed label, in proposal order (``changed_agents`` in the metrics).
        gated: labels the method left alone on purpose, with why (LangMARL's evidence gate:
            agent -> its best re-run gain; ``gated_agents`` in the metrics).
    """

    candidates: list[Candidate[P]] = field(default_factory=list)
    gated: dict[str, Any] = field(default_factory=dict)

    @property
    def labels(self) -> list[str]:
        """The candidates' labels, in order."""
        return [c.label for c in self.candidates]


@dataclass
class IterationData(Generic[S, P]):
    """Everything one iteration has computed so far, filled by :meth:`Method.rollout`,
    :meth:`~Method.criticise`, :meth:`~Method.backward` and :meth:`~Method.step` in turn (the
    research's "State", TorchRL's ``TensorDict``: one container the modules read and write).

    Attributes:
        state: the state the iteration started from.
        log: the iteration's log; ``ctx``: its steps' context; ``meter``: its LLM usage.
        callbacks: the run's callbacks.
        team: ``env -> team`` of the state's parameter; ``validate``: ``(parameter, label) -> value``.
        batch: the played batch; ``evidence``, ``reports``, ``gradients``, ``proposal``,
            ``decision``: what each later stage made.
    """

    state: S
    log: IterationLog
    ctx: Context
    meter: UsageMeter
    callbacks: Sequence[Callback] = ()
    team: Any = None
    validate: Any = None
    batch: Batch | None = None
    evidence: list[Any] = field(default_factory=list)
    reports: list[Any] = field(default_factory=list)
    gradients: Any = None
    proposal: Proposal[P] | None = None
    decision: Acceptance[P] | None = None

    @property
    def trajectories(self) -> list[Any]:
        """The batch's training episodes (none before the batch is played)."""
        return self.batch.trajectories if self.batch is not None else []
