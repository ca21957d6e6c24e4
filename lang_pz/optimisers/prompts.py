"""The prompts of the textual optimiser: the request of one attempt of each of its LLM stages.

:class:`StageRequests` builds, for :class:`~lang_pz.optimisers.textual.TextualPolicyOptimiser`,
the request of the gradient, aggregation and update stages: instructions, a worked example
(:data:`~lang_pz.optimisers.gradient.GRADIENT_EXAMPLE`, ``AGGREGATE_EXAMPLE``,
``APPLY_EXAMPLE``), the agent's facts, the reply schema
(:func:`~lang_pz.optimisers.gradient.gradient_reply_model`,
:func:`~lang_pz.optimisers.gradient.policy_reply_model`) and, on a retry, the rejected reply's
errors with the retry sampling (:func:`lang_pz.structured.rejection_note`,
:func:`lang_pz.structured.attempt_sampling`). A chat backend gets the instructions and example
as the system message; a completion-format one gets them in one prompt.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from lang_pz.backends.base import GenerationRequest, LLMBackend, Message
from lang_pz.critics.base import Credit
from lang_pz.optimisers.gradient import (
    AGGREGATE_EXAMPLE,
    APPLY_EXAMPLE,
    APPLY_SUPPORTED_EXAMPLE,
    DIRECTION_MAX_CHARS,
    GRADIENT_EXAMPLE,
    MAX_EVIDENCE_STEPS,
    Gradient,
    _fmt,
    direction_word,
    gradient_reply_model,
    other_words,
    policy_reply_model,
)
from lang_pz.structured import attempt_sampling, rejection_note


class StageRequests:
    """The requests of the optimiser's stages (a base class of
    :class:`~lang_pz.optimisers.textual.TextualPolicyOptimiser`, which sets the attributes).

    Attributes:
        backend: the LLM backend (its ``prompt_format`` picks chat or completion requests).
        max_policy_chars: longest policy text the update stage may produce.
        temperature: sampling temperature of first attempts.
        retry_temperature: temperature of retries (each retry uses ``seed + attempt``).
        seed: base sampling seed.
        directions: ``"evidence"`` or ``"free"`` (whether the aggregate's ``change`` is one of
            the batch's supported changes).
    """

    backend: LLMBackend
    max_policy_chars: int
    temperature: float
    retry_temperature: float
    seed: int
    directions: Literal["evidence", "free"]

    def _request(
        self,
        instructions: str,
        example: str,
        body: str,
        errors: Sequence[str],
        schema: dict[str, Any],
        max_tokens: int,
        role: str,
    ) -> GenerationRequest:
        fix = rejection_note(errors)
        common: dict[str, Any] = {
            "json_schema": schema,
            "max_tokens": max_tokens,
            "role": role,
            **attempt_sampling(errors, self.temperature, self.retry_temperature, self.seed),
        }
        if getattr(self.backend, "prompt_format", "chat") == "chat":
            system = f"{instructions}\n\nExample:\n{example}"
            return GenerationRequest(messages=(Message("system", system), Message("user", body + fix)), **common)
        head, _, tail = body.rpartition("\n")
        prompt = f"{instructions}\n\nExample:\n{example}\n\nNow your task:\n{head}{fix}\n{tail}\n"
        return GenerationRequest(prompt=prompt, **common)

    @staticmethod
    def _steps_hint(cited: Sequence[int]) -> str:
        return f" ({', '.join(map(str, cited))})" if cited else " (none are cited: give [])"

    def gradient_request(
        self,
        agent: str,
        policy: str,
        credits: Sequence[Credit],
        errors: Sequence[str] = (),
        evidence: Sequence[str] = (),
        changes: Sequence[str] = (),
    ) -> GenerationRequest:
        """The request of one attempt of the gradient stage (public for inspection); ``changes``:
        the directions the evidence supports, one of which ``change`` must be."""
        cited = sorted({s for c in credits for s in c.steps})
        schema = gradient_reply_model(cited, changes or None).model_json_schema()
        lines = [
            f"Agent: {agent}",
            f"Current policy: {policy}",
            f"Critic's credits for {agent} (from -1 = hurt the team to 1 = helped it):",
        ]
        for i, c in enumerate(credits):
            lines.append(f"- episode {i}: credit {_fmt(c.credit)}, steps {list(c.steps)}: {c.explanation}")
        if evidence:
            lines.append(f"Computed re-runs of {agent}'s episodes:")
            lines += [f"- {e}" for e in evidence]
        if changes:
            lines.append(f"The re-runs support these changes: {'; '.join(changes)}")
        lines.append("Edit direction as JSON:")
        instructions = (
            "You improve one agent's policy. From the critic's credits and the computed re-runs, "
            "say what the policy should keep, what it should change and what it should drop "
            f"(each at most {DIRECTION_MAX_CHARS} characters; keep and drop may be empty) and cite "
            f"up to {MAX_EVIDENCE_STEPS} of the steps the credits cite{self._steps_hint(cited)}. "
            "A re-run with a higher team return shows a better action. Reply with JSON only."
        )
        return self._request(
            instructions,
            GRADIENT_EXAMPLE,
            "\n".join(lines),
            errors,
            schema,
            3 * DIRECTION_MAX_CHARS // 4 + 48,
            "optimiser.gradient",
        )

    def aggregate_request(
        self,
        agent: str,
        policy: str,
        gradients: Sequence[Gradient],
        momentum: Sequence[tuple[float, Gradient]] = (),
        errors: Sequence[str] = (),
    ) -> GenerationRequest:
        """The request of one attempt of the aggregation stage (public for inspection)."""
        cited = sorted({s for g in gradients for s in g.evidence_steps})
        schema = gradient_reply_model(cited, self._merge_choices(gradients, momentum)).model_json_schema()
        lines = [f"Agent: {agent}", f"Current policy: {policy}", "Edit directions from this batch:"]
        lines += [f"- {g.direction}; steps {list(g.evidence_steps)}" for g in gradients]
        if momentum:
            lines.append("Earlier directions (momentum; weight 1 = last iteration):")
            lines += [f"- weight {_fmt(w)}: {g.direction}" for w, g in momentum]
        lines.append("Edit direction as JSON:")
        instructions = (
            "You merge the edit directions for one agent's policy into one. Where they conflict, "
            "follow the majority of this batch, then the heavier earlier directions. Say what to "
            f"keep, change and drop (each at most {DIRECTION_MAX_CHARS} characters) and cite up to "
            f"{MAX_EVIDENCE_STEPS} of the steps the directions cite{self._steps_hint(cited)}. "
            "Reply with JSON only."
        )
        return self._request(
            instructions,
            AGGREGATE_EXAMPLE,
            "\n".join(lines),
            errors,
            schema,
            3 * DIRECTION_MAX_CHARS // 4 + 48,
            "optimiser.aggregate",
        )

    def apply_request(self, agent: str, policy: str, gradient: Gradient, errors: Sequence[str] = ()) -> GenerationRequest:
        """The request of one attempt of the update stage (public for inspection)."""
        word = direction_word(gradient)
        schema = policy_reply_model(self.max_policy_chars, word).model_json_schema()
        body = "\n".join(
            [
                f"Current policy: {policy}",
                f"Keep: {gradient.keep}",
                f"Change: {gradient.change}",
                f"Drop: {gradient.drop}",
                "New policy as JSON:",
            ]
        )
        instructions = (
            f"Rewrite the policy of agent {agent}: keep what Keep says, make the change, remove "
            f"what Drop says. The new policy is one short instruction (at most "
            f"{self.max_policy_chars} characters, plain ASCII). Reply with JSON only."
        )
        if word is not None:
            others = other_words(gradient)
            instructions += f" Re-runs showed that playing {word} is better: the new policy must say {word}" + (
                f" and no other action ({', '.join(others)})." if others else "."
            )
        return self._request(
            instructions,
            APPLY_EXAMPLE if word is None else APPLY_SUPPORTED_EXAMPLE,
            body,
            errors,
            schema,
            min(self.max_policy_chars // 2, 160) + 16,
            "optimiser.update",
        )

    def _merge_choices(self, gradients: Sequence[Gradient], momentum: Sequence[tuple[float, Gradient]]) -> list[str] | None:
        """With evidence directions, the aggregate's ``change`` is one of the supported changes of the
        batch (or of the momentum), if any is supported."""
        if self.directions != "evidence":
            return None
        supported = [g.change for g in gradients if g.supported] + [g.change for _, g in momentum if g.supported]
        return list(dict.fromkeys(supported)) or None
