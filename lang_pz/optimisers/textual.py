"""The textual policy optimiser: credits -> a language gradient -> a rewritten policy.

LangMARL's *language policy gradient*: the centralised critic's credits for one agent over a
batch of trajectories are turned into an *edit direction* (the "gradient", in words, citing
the steps it rests on), and an optimiser step rewrites that agent's policy text along it —
the same two-stage pattern as TextGrad's textual gradients (feedback on a variable, then a
"textual gradient descent" update of its text).

Each agent's step has three stages (gradient per trajectory, aggregation over the batch with
momentum, update); this module runs them, :mod:`lang_pz.optimisers.prompts` builds their
requests. Every stage is a single LLM call through :func:`lang_pz.structured.ask_structured`: the reply
is schema-constrained, validated (evidence steps must be among the cited ones; the new policy
non-empty, at most ``max_policy_chars`` printable ASCII characters, no phrase repeated three
times), retried with the error
shown, and after ``max_attempts`` a :class:`~lang_pz.error.SchemaValidationError` is raised —
a policy is never silently kept or replaced by a default. Each agent's gradient is computed
from that agent's credits only.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel

from lang_pz.backends.base import Generation, GenerationRequest, LLMBackend
from lang_pz.critics.base import Credit, CriticReport
from lang_pz.error import SchemaValidationError
from lang_pz.executor import Executor, LocalExecutor
from lang_pz.optimisers.adherence import ActorCheck, Adherence, RecordedDecision, cited_decisions
from lang_pz.optimisers.gradient import (  # noqa: F401  (the examples and limits: re-exported)
    AGGREGATE_EXAMPLE,
    APPLY_EXAMPLE,
    DIRECTION_MAX_CHARS,
    GRADIENT_EXAMPLE,
    MAX_EVIDENCE_STEPS,
    MAX_REWRITE,
    Gradient,
    PolicyUpdate,
    action_words,
    direction_word,
    evidence_changes,
    evidence_for,
    gradient_reply_model,
    policy_reply_model,
    rewrite_fraction,
    text_problem,
)
from lang_pz.optimisers.prompts import StageRequests
from lang_pz.structured import ask_structured, repeated_phrase

if TYPE_CHECKING:
    from lang_pz.optimisers.momentum import Momentum
    from lang_pz.trajectory import Trajectory


class TextualPolicyOptimiser(StageRequests):
    """LangMARL language-policy-gradient optimiser (TextGrad-style textual gradients).

    One step per agent: a *gradient* per trajectory (the critic's credit for this agent and the
    counterfactual evidence that concerns it -> keep / change / drop), an *aggregation* of the
    batch's gradients with the agent's momentum (skipped when there is one gradient and no
    momentum), and an *update* that rewrites the policy along the aggregate, rewriting at most
    ``max_rewrite`` of it. Each stage's request is public for inspection
    (:meth:`gradient_request`, :meth:`aggregate_request`, :meth:`apply_request`, from
    :class:`~lang_pz.optimisers.prompts.StageRequests`).

    Args:
        backend: the LLM backend.
        max_policy_chars: longest policy text a step may produce.
        max_rewrite: largest share of the policy one update may rewrite, in (0, 1]
            (:func:`rewrite_fraction`); a larger rewrite is rejected and retried.
        max_attempts: LLM calls per stage before :class:`~lang_pz.error.SchemaValidationError`.
        temperature: sampling temperature of first attempts.
        retry_temperature: temperature of retries (each retry uses ``seed + attempt``).
        seed: base sampling seed.
        directions: ``"evidence"`` (default): where counterfactual re-runs found actions that
            beat what the agent played, the gradient's ``change`` is one of those
            (:func:`~lang_pz.optimisers.directions.evidence_changes`, as a schema enum) and the
            aggregate's one of the batch's, so the direction rests on computed facts and the LLM
            picks and phrases (measured with SmolLM2-135M: free directions copy the worked
            example, while the update stage follows an explicit change); with no such evidence
            the direction is free text. ``"free"``: always free text (LangMARL as published).
        actor: checks each candidate of a supported direction on the recorded decisions it cites
            with the agent's actor (:class:`~lang_pz.optimisers.adherence.ActorCheck`, or the actor's
            backend for the default check); ``None``: no check. It needs the batch's trajectories
            (``update(..., trajectories=...)`` or :meth:`record`).

    Raises:
        ValueError: a bad setting (the message names it).
    """

    def __init__(
        self,
        backend: LLMBackend,
        *,
        max_policy_chars: int = 300,
        max_rewrite: float = MAX_REWRITE,
        max_attempts: int = 3,
        temperature: float = 0.0,
        retry_temperature: float = 0.7,
        seed: int = 0,
        directions: Literal["evidence", "free"] = "evidence",
        actor: ActorCheck | LLMBackend | None = None,
    ) -> None:
        if directions not in ("evidence", "free"):
            raise ValueError(f"directions must be 'evidence' or 'free', got {directions!r}")
        if max_policy_chars < 8:
            raise ValueError(f"max_policy_chars must be >= 8, got {max_policy_chars}")
        if not 0.0 < max_rewrite <= 1.0:
            raise ValueError(f"max_rewrite must be in (0, 1], got {max_rewrite}")
        if max_attempts < 1:
            raise ValueError(f"max_attempts must be >= 1, got {max_attempts}")
        self.backend = backend
        self.max_policy_chars = max_policy_chars
        self.max_rewrite = max_rewrite
        self.max_attempts = max_attempts
        self.temperature = temperature
        self.retry_temperature = retry_temperature
        self.seed = seed
        self.directions = directions
        self.actor = ActorCheck(actor) if isinstance(actor, LLMBackend) else actor
        self.recorded: list[Trajectory] = []

    def record(self, trajectories: Sequence[Trajectory]) -> None:
        """Keep this iteration's trajectories: :meth:`update` checks candidates on their recorded
        decisions when it is not given ``trajectories`` (for a loop that cannot pass them)."""
        self.recorded = list(trajectories)

    # -- stages ----------------------------------------------------------------------------

    def _direction_validator(
        self, cited: Sequence[int], changes: Sequence[str] | None = None
    ) -> Callable[[BaseModel], None]:
        def validate(reply: BaseModel) -> None:
            d = reply.model_dump()
            if not d["change"].strip():
                raise ValueError("change is empty: say how the policy should change")
            if changes and d["change"] not in changes:
                raise ValueError(f"change must be one of the supported changes: {'; '.join(changes)}")
            for part in ("keep", "change", "drop"):
                rep = repeated_phrase(d[part])
                if rep:
                    raise ValueError(f"{part} repeats {rep!r}: say it once, in a few words")
            bad = [s for s in d["evidence_steps"] if s not in cited]
            if bad:
                raise ValueError(
                    f"evidence_steps {bad} were not cited; cite only steps {list(cited)}"
                    if cited
                    else f"evidence_steps {bad} were not cited (none are): give []"
                )

        return validate

    def _ask_direction(
        self,
        agent: str,
        build: Callable[[list[str]], GenerationRequest],
        cited: Sequence[int],
        what: str,
        changes: Sequence[str] | None = None,
        words: Sequence[str] = (),
    ) -> tuple[Gradient, list[Generation]]:
        """One validated keep/change/drop reply (gradient and aggregation stages); ``words``: the
        agent's action words the evidence names (:attr:`Gradient.words`)."""
        reply, gens = ask_structured(
            self.backend,
            build,
            gradient_reply_model(cited, changes or None),
            what=what,
            max_attempts=self.max_attempts,
            validate=self._direction_validator(cited, changes),
        )
        d = reply.model_dump()
        return Gradient(
            agent=agent,
            keep=" ".join(d["keep"].split()),
            change=" ".join(d["change"].split()),
            drop=" ".join(d["drop"].split()),
            evidence_steps=list(dict.fromkeys(d["evidence_steps"])),
            supported=bool(changes),
            words=sorted(set(words)),
        ), gens

    def gradient(self, agent: str, policy: str, credits: Sequence[Credit], evidence: Sequence[str] = ()) -> Gradient:
        """One LLM call (plus retries): this agent's credits (and evidence) -> keep/change/drop.

        Args:
            agent: the agent id.
            policy: its current policy text.
            credits: the critic's credits *for this agent* (usually one trajectory's).
            evidence: computed facts about this agent (e.g. counterfactual re-run lines).

        Raises:
            ValueError: no credits, or a credit of another agent.
            SchemaValidationError: no valid reply after ``max_attempts``.
        """
        return self._gradient(agent, policy, credits, evidence)[0]

    def _gradient(
        self,
        agent: str,
        policy: str,
        credits: Sequence[Credit],
        evidence: Sequence[str] = (),
        changes: Sequence[str] = (),
        words: Sequence[str] = (),
    ) -> tuple[Gradient, list[Generation]]:
        if not credits:
            raise ValueError(f"no credits for agent {agent!r}: nothing to compute a gradient from")
        others = sorted({c.agent for c in credits if c.agent != agent})
        if others:
            raise ValueError(
                f"gradient for {agent!r} was given credits of other agent(s) {others}; "
                "each agent's update must use only its own credits"
            )
        cited = sorted({s for c in credits for s in c.steps})
        return self._ask_direction(
            agent,
            lambda errors: self.gradient_request(agent, policy, credits, errors, evidence, changes),
            cited,
            f"language gradient for {agent}",
            changes,
            words,
        )

    def aggregate(
        self,
        agent: str,
        policy: str,
        gradients: Sequence[Gradient],
        momentum: Sequence[tuple[float, Gradient]] = (),
    ) -> tuple[Gradient, list[Generation]]:
        """Merge a batch's gradients for one agent with its momentum into one gradient.

        One LLM call (plus retries), skipped when there is exactly one gradient and no
        momentum (that gradient is the aggregate).

        Returns:
            ``(aggregate, generations)``.

        Raises:
            ValueError: no gradients, or a gradient of another agent.
            SchemaValidationError: no valid reply after ``max_attempts``.
        """
        if not gradients:
            raise ValueError(f"no gradients for agent {agent!r} to aggregate")
        others = sorted({g.agent for g in gradients if g.agent != agent})
        if others:
            raise ValueError(f"aggregate for {agent!r} was given gradients of other agent(s) {others}")
        if len(gradients) == 1 and not momentum:
            return gradients[0], []
        cited = sorted({s for g in gradients for s in g.evidence_steps})
        return self._ask_direction(
            agent,
            lambda errors: self.aggregate_request(agent, policy, gradients, momentum, errors),
            cited,
            f"aggregated gradient for {agent}",
            self._merge_choices(gradients, momentum),
            [w for g in [*gradients, *(g for _, g in momentum)] for w in g.words],
        )

    def apply(self, agent: str, policy: str, gradient: Gradient, decisions: Sequence[RecordedDecision] = ()) -> PolicyUpdate:
        """One LLM call (plus retries): rewrite ``policy`` along ``gradient`` (a candidate).

        A *supported* gradient (its change is an action word W that computed re-runs found better,
        :func:`~lang_pz.optimisers.directions.direction_word`) is followed or refused: the new text
        must name W, no other action word of :attr:`Gradient.words`, and must not keep the current
        text whole around it (:func:`~lang_pz.optimisers.gradient.text_problem`). The evidence
        decides which word; the LLM writes the instruction.

        With an ``actor`` check and recorded ``decisions`` (those the direction cites,
        :func:`~lang_pz.optimisers.adherence.cited_decisions`), a text that passes those checks
        is played by the agent's actor on them; one whose actor plays W at fewer than
        ``actor.min_rate`` of them is retried with the measured adherence shown, and when no
        attempt reaches it the update is *refused*: ``new == old``, the measured texts in
        :attr:`PolicyUpdate.rejected`. An accepted text's measurement is
        :attr:`PolicyUpdate.adherence`.

        Raises:
            ValueError: the gradient belongs to another agent.
            SchemaValidationError: no valid new policy (non-empty, at most
                ``max_policy_chars`` printable ASCII characters, rewriting at most
                ``max_rewrite`` of the old text, naming a supported gradient's word) after
                ``max_attempts``.
            LangPZError: the actor failed while checking a text.
        """
        if gradient.agent != agent:
            raise ValueError(f"gradient of {gradient.agent!r} applied to agent {agent!r}")
        word = direction_word(gradient)
        check = self.actor if word is not None and decisions else None
        measured: dict[str, Adherence] = {}

        def validate(reply: BaseModel) -> None:
            text = " ".join(reply.model_dump()["policy"].split())
            problem = text_problem(policy, text, gradient, self.max_rewrite)
            if problem:
                raise ValueError(problem)
            if check is None or word is None:
                return
            if text not in measured:
                measured[text] = check.measure(text, word, decisions)
            if not check.followed(measured[text]):
                raise ValueError(
                    f"{measured[text].describe()}; it must play {word!r} at {check.min_rate:.0%} of them: "
                    f"write another instruction to play {word!r}"
                )

        try:
            reply, gens = ask_structured(
                self.backend,
                lambda errors: self.apply_request(agent, policy, gradient, errors),
                policy_reply_model(self.max_policy_chars, word),
                what=f"policy update for {agent}",
                max_attempts=self.max_attempts,
                validate=validate,
            )
        except SchemaValidationError:
            if not measured:
                raise
            return PolicyUpdate(agent=agent, old=policy, new=policy, gradient=gradient, rejected=list(measured.values()))
        new = " ".join(reply.model_dump()["policy"].split())
        followed = measured.get(new)
        rejected = [a for t, a in measured.items() if t != new]
        return PolicyUpdate(
            agent=agent, old=policy, new=new, gradient=gradient, generations=gens, adherence=followed, rejected=rejected
        )

    def gradients(
        self, agent: str, policy: str, reports: Sequence[CriticReport], *, executor: Executor | None = None
    ) -> tuple[list[Gradient], list[Generation]]:
        """The gradient stage over a batch: one :meth:`gradient` per report that credits ``agent``,
        each with the counterfactual evidence about it (:func:`evidence_for`); the calls are
        independent, so an ``executor`` makes them at once.

        Returns:
            ``(gradients in report order, generations)``.

        Raises:
            ValueError: no report credits ``agent``.
            SchemaValidationError: a reply never validated.
        """
        mine = [r for r in reports if agent in r.credits]
        if not mine:
            raise ValueError(f"no report credits agent {agent!r}: nothing to update it from")

        def one(r: CriticReport) -> tuple[Gradient, list[Generation]]:
            changes = evidence_changes(agent, r) if self.directions == "evidence" else []
            words = action_words(agent, r)
            return self._gradient(agent, policy, [r.credits[agent]], evidence_for(agent, r), changes, words)

        results = (executor or LocalExecutor(1)).map(one, mine)
        return [g for g, _ in results], [x for _, gg in results for x in gg]

    def update(
        self,
        agent: str,
        policy: str,
        reports: Sequence[CriticReport],
        momentum: Momentum | None = None,
        *,
        executor: Executor | None = None,
        trajectories: Sequence[Trajectory] | None = None,
    ) -> PolicyUpdate:
        """One optimiser step for one agent: a gradient per report that credits it
        (:meth:`gradients`), their aggregate with the agent's momentum (:meth:`aggregate`), the
        candidate policy (:meth:`apply`), checked with the ``actor`` on the decisions of
        ``trajectories`` (else those :meth:`record` kept) that the aggregate's direction cites.

        ``momentum`` is only read: the aggregate (``result.gradient``) enters it when the
        candidate is *accepted* (:meth:`lang_pz.optimisers.Momentum.push`, called by the
        training loop's accept step), so a rejected direction never steers later iterations.

        Raises:
            ValueError: no report credits ``agent``.
            SchemaValidationError: a stage found no valid reply.
            LangPZError: the actor failed while checking a candidate.
        """
        grads, gens = self.gradients(agent, policy, reports, executor=executor)
        agg, ga = self.aggregate(agent, policy, grads, momentum.get(agent) if momentum else ())
        upd = self.apply(agent, policy, agg, self.cited(agent, agg, reports, trajectories))
        return upd.model_copy(update={"gradients": grads, "generations": gens + ga + upd.generations})

    def cited(
        self,
        agent: str,
        gradient: Gradient,
        reports: Sequence[CriticReport] = (),
        trajectories: Sequence[Trajectory] | None = None,
    ) -> list[RecordedDecision]:
        """The recorded decisions a candidate along ``gradient`` is checked on (none without an actor)."""
        if self.actor is None:
            return []
        found = self.recorded if trajectories is None else trajectories
        return cited_decisions(agent, gradient, found, reports, limit=self.actor.max_decisions)
