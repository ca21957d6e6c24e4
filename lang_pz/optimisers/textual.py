"""The textual policy optimiser: credits -> language gradient -> rewritten policy.

LangMARL's language policy gradient, in the style of TextGrad's textual gradients: for each
agent, its own credits over a batch of trajectories are turned into an edit direction (the
"gradient"), and the agent's policy text is rewritten along that direction (the "step").
Each agent's update uses only that agent's credits.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pydantic import BaseModel, Field

from lang_pz.backends.base import Generation, GenerationRequest, LLMBackend, Message
from lang_pz.critics.central import Credit, CriticReport
from lang_pz.structured import ask_structured, retry_note

_PRINTABLE = set(map(chr, range(32, 127)))


class Gradient(BaseModel):
    """An edit direction for one agent's policy.

    Attributes:
        agent: agent id.
        direction: what to change in the policy, in words.
        evidence_steps: steps (cited by the critic) the direction rests on.
    """

    agent: str
    direction: str = Field(min_length=1, max_length=300)
    evidence_steps: list[int] = Field(default_factory=list, max_length=5)


class _GradientReply(BaseModel):
    direction: str = Field(min_length=1, max_length=300)
    evidence_steps: list[int] = Field(default_factory=list, max_length=5)


class PolicyUpdate(BaseModel):
    """One agent's update: the policy before and after, and the gradient that led to it."""

    agent: str
    old: str
    new: str
    gradient: Gradient


class TextualPolicyOptimiser:
    """Rewrites each agent's text policy from its credits (LangMARL language policy gradient).

    Args:
        backend: the optimiser's LLM.
        max_policy_chars: longest policy an update may write.
        max_attempts: attempts per reply before it is reported invalid.
    """

    def __init__(self, backend: LLMBackend, *, max_policy_chars: int = 300, max_attempts: int = 3) -> None:
        self.backend = backend
        self.max_policy_chars = max_policy_chars
        self.max_attempts = max_attempts
        self.generations: list[Generation] = []

    def _request(self, text: str, schema: dict, max_tokens: int) -> GenerationRequest:
        if self.backend.prompt_format == "chat":
            return GenerationRequest(messages=(Message("user", text),), json_schema=schema, max_tokens=max_tokens)
        return GenerationRequest(prompt=text, json_schema=schema, max_tokens=max_tokens)

    def gradient(self, agent: str, policy: str, credits: Sequence[Credit]) -> Gradient:
        """Turn ``agent``'s credits over a batch into an edit direction (one LLM call).

        Raises:
            ValueError: ``credits`` is empty or holds another agent's credit.
            SchemaValidationError: no valid reply (e.g. evidence steps the critic never cited).
        """
        if not credits:
            raise ValueError(f"no credits for {agent}: nothing to compute a gradient from")
        others = {c.agent for c in credits} - {agent}
        if others:
            raise ValueError(f"gradient for {agent} was given credits of {sorted(others)}")
        cited = {t for c in credits for t in c.steps}
        feedback = "\n".join(
            f"- credit {c.credit:+.2f}: {c.explanation} (steps {c.steps})" for c in credits
        )

        def build(errors: list[str]) -> GenerationRequest:
            text = (
                f"Agent {agent} follows this policy:\n{policy}\n\n"
                f"A critic judged the agent's play in {len(credits)} episode(s):\n{feedback}\n\n"
                "Say in one sentence how the policy should change to earn more credit "
                "(what to keep, what to change, what to drop), and the steps this rests on.\n"
                + retry_note(errors) + "JSON:\n"
            )
            return self._request(text, _GradientReply.model_json_schema(), 160)

        def check(reply: _GradientReply) -> None:
            bad = [t for t in reply.evidence_steps if t not in cited]
            if bad:
                raise ValueError(f"evidence_steps {bad} were not cited by the critic (cited: {sorted(cited)})")

        reply, gens = ask_structured(self.backend, build, _GradientReply, what=f"gradient for {agent}",
                                     max_attempts=self.max_attempts, validate=check)
        self.generations.extend(gens)
        return Gradient(agent=agent, **reply.model_dump())

    def apply(self, agent: str, policy: str, gradient: Gradient) -> PolicyUpdate:
        """Rewrite ``policy`` along ``gradient`` (one LLM call).

        Raises:
            SchemaValidationError: no valid policy (empty, too long, not printable ASCII).
        """
        limit = self.max_policy_chars

        class _PolicyReply(BaseModel):
            policy: str = Field(min_length=1, max_length=limit)

        def build(errors: list[str]) -> GenerationRequest:
            text = (
                f"Current policy of {agent}:\n{policy}\n\nEdit direction:\n{gradient.direction}\n\n"
                f"Write the new policy: short instructions (at most {limit} characters) that follow "
                "the edit direction.\n" + retry_note(errors) + "JSON:\n"
            )
            return self._request(text, _PolicyReply.model_json_schema(), max(16, limit // 2))

        def check(reply: _PolicyReply) -> None:
            if not reply.policy.strip():
                raise ValueError("the new policy is blank")
            bad = sorted(set(reply.policy) - _PRINTABLE)
            if bad:
                raise ValueError(f"the new policy has non-printable or non-ASCII characters {bad[:5]}")

        reply, gens = ask_structured(self.backend, build, _PolicyReply, what=f"policy rewrite for {agent}",
                                     max_attempts=self.max_attempts, validate=check)
        self.generations.extend(gens)
        return PolicyUpdate(agent=agent, old=policy, new=reply.policy.strip(), gradient=gradient)

    def step(self, policies: Mapping[str, str], reports: Sequence[CriticReport]) -> dict[str, PolicyUpdate]:
        """Update every agent that has credits in ``reports``; each uses only its own credits.

        Agents with no credit in any report are left out of the result (their policy stays).

        Raises:
            SchemaValidationError: a gradient or rewrite reply never validated.
        """
        updates: dict[str, PolicyUpdate] = {}
        for agent, policy in policies.items():
            mine = [r.credits[agent] for r in reports if agent in r.credits]
            if mine:
                updates[agent] = self.apply(agent, policy, self.gradient(agent, policy, mine))
        return updates
