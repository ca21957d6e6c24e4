"""LangMARL's own steps: its state, the evidence gate, the language gradients, the candidate texts
and momentum. Every other step of its iteration is :mod:`lang_pz.training`'s.

=========================  =================================================================
:class:`LangMARLState`     the run's state: the policies and the optimiser's momentum
:func:`evidence_gate`      agents no counterfactual re-run improved get no edit
:func:`gradients`          per agent: a language gradient per episode, aggregated with its momentum
:func:`propose`            per agent: the candidate text along its aggregated gradient
:func:`commit_momentum`    accepted agents' aggregated gradients enter the momentum
=========================  =================================================================

LangMARL's language policy gradient: the centralised critic's credits for one agent over a batch
become an edit direction in words (the gradient, :meth:`TextualPolicyOptimiser.gradients` and
:meth:`~TextualPolicyOptimiser.aggregate`), and an update rewrites the agent's policy along it
(:meth:`~TextualPolicyOptimiser.apply`), TextGrad's ``loss.backward()`` / ``optimizer.step()``
pattern (Yuksekgonul et al. 2024, "TextGrad: Automatic Differentiation via Text", Sec. 2).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from lang_pz.backends.base import Generation
from lang_pz.critics.base import CriticReport
from lang_pz.critics.counterfactual import Evidence, best_gain
from lang_pz.error import LangPZError
from lang_pz.optimisers import Gradient, Momentum, PolicyUpdate, TextualPolicyOptimiser
from lang_pz.training.parts import Context
from lang_pz.training.state import Failure, TrainState
from lang_pz.training.steps import each

T = TypeVar("T")


@dataclass
class LangMARLState(TrainState):
    """:class:`~lang_pz.training.state.TrainState` of a LangMARL run, with the optimiser's momentum
    (``None``: ``momentum: 0``), which only accepted directions enter (:func:`commit_momentum`)."""

    momentum: Momentum | None = None

    def to_json(self) -> dict[str, Any]:
        """The ``done.json`` fields (besides ``metrics``)."""
        return {**super().to_json(), "momentum": self.momentum.to_json() if self.momentum else None}

    @classmethod
    def from_json(cls, done: dict[str, Any], momentum: Momentum | None) -> LangMARLState:
        """Inverse of :meth:`to_json` (``momentum`` is used when the record holds none)."""
        mom = Momentum.from_json(done["momentum"]) if momentum is not None and done.get("momentum") else momentum
        return cls(**cls.fields_of(done), momentum=mom)


@dataclass(frozen=True)
class AgentGradient:
    """One agent's language gradient of an iteration.

    Attributes:
        gradient: the aggregate over the batch and the momentum: what the update follows and,
            once accepted, what the momentum remembers.
        gradients: the per-episode gradients it aggregates.
        generations: the LLM calls that made them.
    """

    gradient: Gradient
    gradients: list[Gradient]
    generations: list[Generation]


@dataclass(frozen=True)
class Directions:
    """What LangMARL's gradients stage found: agent -> its :class:`AgentGradient`, and the agents
    the evidence gate left alone (agent -> its best re-run gain)."""

    by_agent: dict[str, AgentGradient]
    gated: dict[str, float | None]


def evidence_gate(ctx: Context, agents: Sequence[str], evidence: Sequence[Evidence]) -> dict[str, float | None]:
    """The agents to give no edit: those for which no re-run's mean gain over the batch is
    positive (:func:`~lang_pz.critics.counterfactual.best_gain`), with that best gain (``None``
    when no re-run replaced the agent); each is logged to ``gated.jsonl``. A gate on numbers the
    system computed, never on the model's words."""
    out: dict[str, float | None] = {}
    for a in agents:
        gain = best_gain(a, evidence)
        if gain is None or gain <= 0:
            out[a] = gain
            reason = "no counterfactual re-run beat what the agent played: no edit proposed"
            ctx.record("gated", {"agent": a, "best_gain": gain, "reason": reason})
    return out


def verdict_gate(ctx: Context, agents: Sequence[str], reports: Sequence[CriticReport]) -> dict[str, float | None]:
    """The agents to give no edit because no report's verdict names them: a critic that states a
    verdict (:attr:`~lang_pz.critics.base.CriticReport.verdict`, the re-run critics under
    :class:`~lang_pz.critics.significance.Significance`) blames an agent only when its re-run gain
    is significant, and "no one" otherwise; an agent never blamed is not rewritten (no blame
    without significance). Reports without a verdict (the LLM critics) gate no one. Each gated
    agent is logged to ``gated.jsonl``."""
    verdicts = [r.verdict for r in reports if r.verdict is not None]
    if not verdicts:
        return {}
    named = {a for v in verdicts for a in v}
    out: dict[str, float | None] = {}
    for a in agents:
        if a not in named:
            out[a] = None
            reason = "no episode's verdict blamed the agent (its re-run gain was not significant): no edit proposed"
            ctx.record("gated", {"agent": a, "best_gain": None, "reason": reason})
    return out


def gradients(
    ctx: Context,
    optimiser: TextualPolicyOptimiser,
    policies: Mapping[str, str],
    agents: Sequence[str],
    reports: Sequence[CriticReport],
    momentum: Momentum | None = None,
) -> dict[str, AgentGradient]:
    """Per agent credited in ``reports`` (the agents concurrently on the context's executor): a
    gradient per episode and their aggregate with the agent's momentum (read, not written:
    :func:`commit_momentum`). Agents no report credits get none.

    A failure is logged and recorded in ``ctx`` (stage ``optimiser``); that agent keeps its policy.

    Returns:
        agent -> its :class:`AgentGradient`, for the agents that got one, in ``agents`` order.
    """
    credited = [a for a in agents if any(a in r.credits for r in reports)]

    def one(agent: str) -> AgentGradient:
        grads, gens = optimiser.gradients(agent, policies[agent], reports, executor=ctx.executor)
        agg, more = optimiser.aggregate(agent, policies[agent], grads, momentum.get(agent) if momentum else ())
        return AgentGradient(agg, grads, gens + more)

    return _per_agent(ctx, "optimiser gradients", credited, one)


def propose(
    ctx: Context, optimiser: TextualPolicyOptimiser, policies: Mapping[str, str], directions: Mapping[str, AgentGradient]
) -> dict[str, PolicyUpdate]:
    """Per agent with a gradient (concurrently on the context's executor): the candidate text along
    it (:meth:`TextualPolicyOptimiser.apply`), logged to ``gradients.jsonl``; the candidates that
    differ from the current policies are written to ``candidates/``. A failure is recorded as in
    :func:`gradients`.

    Returns:
        agent -> its :class:`~lang_pz.optimisers.PolicyUpdate` (its gradients and every LLM call
        of the step), for the agents that got one.
    """

    def one(agent: str) -> PolicyUpdate:
        d = directions[agent]
        upd = optimiser.apply(agent, policies[agent], d.gradient)
        return upd.model_copy(update={"gradients": d.gradients, "generations": d.generations + upd.generations})

    updates = _per_agent(ctx, "optimiser update", list(directions), one)
    for upd in updates.values():
        ctx.record("gradients", upd.model_dump(mode="json", exclude={"generations"}))
    changed = {a: u.new for a, u in updates.items() if u.changed}
    if ctx.log is not None and changed:
        ctx.log.write_candidates(changed)
    return updates


def _per_agent(ctx: Context, desc: str, agents: Sequence[str], step: Callable[[str], T]) -> dict[str, T]:
    """``step`` of each agent (:func:`~lang_pz.training.steps.each`); a failure is logged to
    ``optimiser_errors.jsonl`` and recorded in ``ctx`` (stage ``optimiser``), that agent left out."""

    def failed(agent: str, exc: LangPZError) -> None:
        ctx.fail(Failure("optimiser", agent, str(exc)), "optimiser_errors", {"agent": agent, "error": str(exc)})

    return dict(each(ctx, desc, agents, step, failed))


def commit_momentum(momentum: Momentum | None, gradients: Mapping[str, Gradient], accepted: Sequence[str]) -> None:
    """Push the aggregated gradient of each *accepted* agent into ``momentum`` (rejected
    directions are forgotten: they never steer a later iteration)."""
    if momentum is None:
        return
    for agent in accepted:
        if agent in gradients:
            momentum.push(agent, gradients[agent])
