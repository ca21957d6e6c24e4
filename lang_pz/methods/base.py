"""The interface a self-improvement method implements: its stages, run by one iteration skeleton.

:func:`lang_pz.training.train` owns the outer loop (budget, resume, the run folder, progress, the
final test, closing the parts); :meth:`Method.iteration` owns the order of one iteration, the
same for every method; a method implements only its stages. This is SB3's split of
``OnPolicyAlgorithm.learn`` (the loop) and ``PPO.train`` (one update) taken one step further
(the update itself is a fixed order of overridable stages), as TorchRL's ``Trainer`` hooks and
DSPy's ``Teleprompter.compile`` keep the loop and vary the steps.

One iteration over a parameter of type ``P`` (LangMARL: agent -> policy text; MASkills: a skill
library)::

    begin      the iteration's starting files (the policies; a method adds its own)   rollout
    play       held-out test, current validation, training episodes -> Batch
    evidence   computed evidence of the batch (re-runs of the same seeds)            criticise
    assess     the critic's report per episode
    gradients  per-label directions from the reports                                backward
    propose    candidates along them -> Proposal[P]                                 step
    accept     candidates validated on held-out seeds, in order (the trust region)
    commit     the next state (what the method remembers of accepted candidates)

The right column is the phase (:meth:`Method.rollout`, ``criticise``, ``backward``, ``step``)
that :mod:`lang_pz.modules` calls as an actor, a critic, ``loss.backward()`` and
``optimizer.step()``.

``order`` (which candidates are validated together, in which order),
``validator`` and ``validation_seeds`` are stages' parts a method may change too. A stage that
raises :class:`~lang_pz.error.LangPZError`, or (``on_stage_failure: stop``, the default) records
a failed call (:meth:`~lang_pz.training.parts.Context.fail`), stops the iteration with a
:class:`~lang_pz.error.StageError` before ``done.json``, so ``--resume`` redoes it.

==============  ================================================================================
``name``        the ``config.method`` that picks it (:func:`lang_pz.methods.register_method`)
``settings_model``  the model of its config section (``None``: it has no settings of its own)
``assemble``    its own parts on the shared :class:`~lang_pz.training.parts.Parts` (``build``: both)
``start``       the state of a new run; ``restore``: the state after the last completed iteration
``parameter``   a state's parameter; ``with_parameter``: the state with another one
``team_for``    ``env -> team`` playing a parameter (the final held-out test plays ``team``)
``finish``      the final files (``final/``) and the result's final fields
==============  ================================================================================
"""

from __future__ import annotations

import dataclasses
import functools
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any, ClassVar, Generic, TypeVar

from pydantic import BaseModel

from lang_pz.backends import LLMBackend
from lang_pz.error import LangPZError, StageError
from lang_pz.methods.data import IterationData, Proposal
from lang_pz.runs import IterationLog, RunFolder
from lang_pz.training.accept import Acceptance, accept, acceptance_groups
from lang_pz.training.parts import Context, Parts
from lang_pz.training.parts import build as build_parts
from lang_pz.training.players import Team
from lang_pz.training.state import Callback, IterationMetrics, TrainResult, TrainState, UsageMeter, iteration_metrics
from lang_pz.training.steps import Batch, play_batch
from lang_pz.training.validation import validator

S = TypeVar("S", bound=TrainState)
P = TypeVar("P")
T = TypeVar("T")


class Method(ABC, Generic[S, P]):
    """One self-improvement method, driven by :func:`lang_pz.training.train` (module docstring).

    Attributes:
        name: the ``config.method`` value that selects it.
        settings_model: the pydantic model of its config section (``config.NAME``), or ``None``.
        objects: keyword arguments of ``train()`` it accepts instead of the config's specs
            (e.g. ``critic``), passed to :meth:`build`.
        parts: the shared parts of the run (env, pool, executor, role meters, objective, agents).
    """

    name: ClassVar[str]
    settings_model: ClassVar[type[BaseModel] | None] = None
    objects: ClassVar[tuple[str, ...]] = ()

    def __init__(self, parts: Parts) -> None:
        self.parts = parts
        self.config = parts.config

    @classmethod
    def build(
        cls,
        config: Any,
        *,
        backends: LLMBackend | Mapping[str, LLMBackend] | None = None,
        run: RunFolder | None = None,
        **objects: Any,
    ) -> Method[S, P]:
        """Build (and check) every part from ``config``; nothing is written: the shared parts
        (:func:`lang_pz.training.build`, on :meth:`backends_for`'s backends), then the method's
        own (:meth:`assemble`).

        Args:
            config: the run's :class:`~lang_pz.training.config.TrainConfig`.
            backends: objects instead of the role backends' specs.
            run: the run folder being resumed (``None`` for a new run).
            **objects: the parts named in :attr:`objects`, given as objects.

        Raises:
            LangPZError: whatever :func:`lang_pz.training.build` and :meth:`assemble` raise (a bad
                env id, kwargs, agent, objective, backend spec, or a method part).
        """
        return cls.assemble(build_parts(config, backends=cls.backends_for(config, backends)), run=run, **objects)

    @classmethod
    def backends_for(
        cls, config: Any, backends: LLMBackend | Mapping[str, LLMBackend] | None
    ) -> LLMBackend | Mapping[str, LLMBackend] | None:
        """The backend objects the shared parts are built on (default: ``backends`` as given)."""
        return backends

    @classmethod
    @abstractmethod
    def assemble(cls, parts: Parts, *, run: RunFolder | None = None, **objects: Any) -> Method[S, P]:
        """The method on ``parts``: its own parts from ``parts.config`` (``objects`` replace them),
        checked (``run``: the run folder being resumed, else ``None``)."""

    @abstractmethod
    def start(self) -> S:
        """The state of a new run (the starting parameter)."""

    @abstractmethod
    def restore(self, run: RunFolder, done: Sequence[dict[str, Any]]) -> S:
        """The state after the last completed iteration, from its ``done.json`` (``done[-1]``)
        and the files the method wrote.

        Raises:
            RunDirError: a file the state needs cannot be read.
        """

    @abstractmethod
    def parameter(self, state: S) -> P:
        """What ``state`` optimises (what the candidates change)."""

    @abstractmethod
    def with_parameter(self, state: S, parameter: P) -> S:
        """``state`` with ``parameter`` instead of its own (nothing else changed)."""

    @abstractmethod
    def team_for(self, state: S, parameter: P) -> Team:
        """``env -> team`` playing ``parameter`` in ``state`` (e.g. a candidate's team)."""

    def team(self, state: S) -> Team:
        """``env -> team`` playing ``state``'s parameter."""
        return self.team_for(state, self.parameter(state))

    # -- the stages (module docstring) --------------------------------------------------------

    def begin(self, state: S, log: IterationLog) -> None:
        """The iteration's starting files: the policies its episodes use."""
        log.write_policies(state.policies)

    def validation_seeds(self) -> Sequence[int]:
        """The held-out seeds candidates are validated on (none: every candidate accepted unchecked)."""
        return self.config.validation_seeds

    def validator(self, state: S, ctx: Context) -> Callable[[P, str], float | None]:
        """``(parameter, label) -> value`` of this iteration (:func:`~lang_pz.training.validation.validator`:
        each validation answers from the previous one's episodes where nothing changed)."""
        return validator(ctx, functools.partial(self.team_for, state), self.validation_seeds())

    def play(
        self, state: S, team: Team, validate: Callable[[P, str], float | None], ctx: Context, callbacks: Sequence[Callback]
    ) -> Batch:
        """The held-out test, the current value (unless known) and the training episodes
        (:func:`~lang_pz.training.play_batch`)."""
        cfg, it = self.config, ctx.iteration
        value = state.value if state.value is not None else functools.partial(validate, self.parameter(state), "current")
        return play_batch(
            ctx,
            team,
            cfg.training_seeds(it),
            cfg.episode_numbers(it),
            value=value,
            test_seeds=cfg.test_seeds,
            on_episode=self.on_episode(it, callbacks),
            desc=f"iter {it} episodes",
        )

    def evidence(self, state: S, team: Team, batch: Batch, ctx: Context) -> list[Any]:
        """Computed evidence about the batch's episodes (default: none)."""
        return []

    @abstractmethod
    def assess(self, state: S, batch: Batch, evidence: Sequence[Any], ctx: Context) -> list[Any]:
        """The critic's report per episode (e.g. :func:`~lang_pz.training.assess`, which records a
        failed report in ``ctx``)."""

    @abstractmethod
    def gradients(self, state: S, batch: Batch, evidence: Sequence[Any], reports: Sequence[Any], ctx: Context) -> Any:
        """Per-label directions of change from the reports and the evidence (what the propose
        and commit stages read)."""

    @abstractmethod
    def propose(self, state: S, gradients: Any, ctx: Context) -> Proposal[P]:
        """Candidates along ``gradients``."""

    def order(self, labels: Sequence[str], evidence: Sequence[Any]) -> list[list[str]]:
        """Which candidates are validated together, in which order (``config.acceptance``:
        :func:`~lang_pz.training.acceptance_groups`)."""
        return acceptance_groups(labels, self.config.acceptance_rule)

    def accept(
        self,
        state: S,
        batch: Batch,
        proposal: Proposal[P],
        evidence: Sequence[Any],
        validate: Callable[[P, str], float | None],
        ctx: Context,
    ) -> Acceptance[P]:
        """The candidates validated in :meth:`order` (:func:`~lang_pz.training.accept`: kept
        unless the held-out value falls by more than ``tolerance``)."""
        return accept(
            self.parameter(state),
            proposal.candidates,
            batch.value,
            validate,
            groups=self.order(proposal.labels, evidence),
            tolerance=self.config.tolerance,
            log=ctx.log,
        )

    def commit(
        self,
        state: S,
        gradients: Any,
        proposal: Proposal[P],
        decision: Acceptance[P],
        metrics: IterationMetrics,
        ctx: Context,
    ) -> tuple[S, dict[str, Any]]:
        """The next state (the accepted parameter, its value, the calls spent) and what else
        ``done.json`` holds (a method adds what it remembers of the accepted candidates)."""
        spent = state.spent(metrics)
        new = self.with_parameter(state, decision.parameter)
        return dataclasses.replace(
            new, value=decision.value, calls=spent["calls"], uncached_calls=spent["uncached_calls"]
        ), {}

    def iteration(self, state: S, log: IterationLog, callbacks: Sequence[Callback] = ()) -> tuple[IterationMetrics, S]:
        """One iteration from ``state``, its stages in order (module docstring), in four phases a
        loop of modules calls one by one (:mod:`lang_pz.modules`): :meth:`rollout` (begin, play),
        :meth:`criticise` (evidence, assess), :meth:`backward` (gradients) and :meth:`step`
        (propose, accept, commit); writes its files, ``done.json`` last.

        Raises:
            StageError: a stage raised a :class:`~lang_pz.error.LangPZError`, or recorded a
                failed call with ``on_stage_failure: stop``; nothing of the iteration is done.
        """
        data = self.rollout(state, log, callbacks)
        self.criticise(data)
        self.backward(data)
        return self.step(data)

    def rollout(self, state: S, log: IterationLog, callbacks: Sequence[Callback] = ()) -> IterationData[S, P]:
        """The iteration's starting files and its batch (``begin``, ``play``)."""
        ctx = self.parts.context(log)
        data: IterationData[S, P] = IterationData(state, log, ctx, UsageMeter(self.parts.meters, log), callbacks)
        self.begin(state, log)
        data.team, data.validate = self.team(state), self.validator(state, ctx)
        data.batch = self._stage("play", ctx, self.play, state, data.team, data.validate, ctx, callbacks)
        return data

    def criticise(self, data: IterationData[S, P]) -> None:
        """The batch's evidence and the critic's reports (``evidence``, ``assess``)."""
        state, ctx = data.state, data.ctx
        data.evidence = self._stage("evidence", ctx, self.evidence, state, data.team, data.batch, ctx)
        data.reports = self._stage("critic", ctx, self.assess, state, data.batch, data.evidence, ctx)

    def backward(self, data: IterationData[S, P]) -> None:
        """The directions of change from the reports (``gradients``)."""
        args = (data.state, data.batch, data.evidence, data.reports, data.ctx)
        data.gradients = self._stage("optimiser", data.ctx, self.gradients, *args)

    def step(self, data: IterationData[S, P]) -> tuple[IterationMetrics, S]:
        """The candidates along the gradients, validated, the next state (``propose``, ``accept``,
        ``commit``) and the iteration's last write (:meth:`conclude`)."""
        state, ctx, batch = data.state, data.ctx, data.batch
        assert batch is not None, "step() before rollout()"
        proposal = self._stage("optimiser", ctx, self.propose, state, data.gradients, ctx)
        decision = self._stage("validation", ctx, self.accept, state, batch, proposal, data.evidence, data.validate, ctx)
        metrics = iteration_metrics(
            iteration=ctx.iteration,
            trajectories=batch.trajectories,
            value=batch.value,
            decision=decision,
            changed=proposal.labels,
            gated=proposal.gated,
            critic_failures=sum(f.stage == "critic" for f in ctx.failures),
            optimiser_failures=sum(f.stage != "critic" for f in ctx.failures),
            meter=data.meter,
            test_value=batch.tested,
        )
        new, extra = self.commit(state, data.gradients, proposal, decision, metrics, ctx)
        data.proposal, data.decision = proposal, decision
        self.conclude(data.log, metrics, new, data.callbacks, **extra)
        return metrics, new

    def _stage(self, name: str, ctx: Context, fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)`` as the stage ``name``: a :class:`~lang_pz.error.LangPZError` it raises, or a
        failure it records under ``on_stage_failure: stop``, becomes a :class:`StageError`."""
        run_dir = str(ctx.log.run.root) if ctx.log is not None else "RUN_DIR"
        seen = len(ctx.failures)
        try:
            out = fn(*args)
        except StageError:
            raise
        except LangPZError as exc:
            raise StageError(name, ctx.iteration, run_dir, f"{type(exc).__name__}: {exc}") from exc
        failed = ctx.failures[seen:]
        if failed and self.config.on_stage_failure == "stop":
            more = f" (and {len(failed) - 1} more)" if len(failed) > 1 else ""
            raise StageError(failed[0].stage, ctx.iteration, run_dir, f"{failed[0].item}: {failed[0].error}{more}")
        return out

    # -- the run around the iterations ---------------------------------------------------------

    def result(self, run_dir: Path, start: S, metrics: list[IterationMetrics]) -> TrainResult:
        """The result of a run that started from ``start`` (its final fields set by :meth:`finish`)."""
        return TrainResult(run_dir=run_dir, initial_policies=dict(start.policies), metrics=metrics)

    def finish(self, run: RunFolder, state: S, result: TrainResult) -> None:
        """Write the final parameter (``final/``) and set ``result``'s final fields."""
        run.finish(state.policies)
        result.final_policies = dict(state.policies)

    def summary(self, metrics: IterationMetrics, state: S) -> str:
        """The end of the iteration's progress line (what was accepted; its labels are agents unless
        the method says otherwise)."""
        verdict = {None: "no candidate", True: "accepted", False: "rejected"}[metrics.accepted]
        return f"{verdict}: {len(metrics.accepted_agents)} of {len(metrics.changed_agents)} changed agent(s)"

    def conclude(
        self, log: IterationLog, metrics: IterationMetrics, state: S, callbacks: Sequence[Callback], **extra: Any
    ) -> None:
        """The iteration's last write (``done.json``: its metrics, the state and ``extra``), then
        the callbacks' ``on_iteration``."""
        log.done({"metrics": asdict(metrics), **state.to_json(), **extra})
        for c in callbacks:
            c.on_iteration(metrics, state)

    def on_episode(self, iteration: int, callbacks: Sequence[Callback]) -> Callable[[Any], None]:
        """``trajectory -> None``: every callback's ``on_episode`` for a training episode."""

        def call(trajectory: Any) -> None:
            for c in callbacks:
                c.on_episode(iteration, trajectory)

        return call

    def close(self) -> None:
        """Close the parts (environment instances, executor workers)."""
        self.parts.close()
