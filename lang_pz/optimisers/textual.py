"""The textual policy optimiser: credits -> a language gradient -> a rewritten policy.

LangMARL's *language policy gradient*: the centralised critic's credits for one agent over a
batch of trajectories are turned into an *edit direction* (the "gradient", in words, citing
the steps it rests on), and an optimiser step rewrites that agent's policy text along it —
the same two-stage pattern as TextGrad's textual gradients (feedback on a variable, then a
"textual gradient descent" update of its text).

Both stages are single LLM calls through :func:`lang_pz.structured.ask_structured`: the reply
is schema-constrained, validated (evidence steps must be among the cited ones; the new policy
non-empty, at most ``max_policy_chars`` printable ASCII characters, no phrase repeated three
times), retried with the error
shown, and after ``max_attempts`` a :class:`~lang_pz.error.SchemaValidationError` is raised —
a policy is never silently kept or replaced by a default. Each agent's gradient is computed
from that agent's credits only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, create_model

from lang_pz.backends.base import Generation, GenerationRequest, LLMBackend, Message
from lang_pz.critics.central import Credit, CriticReport
from lang_pz.structured import ask_structured, repeated_phrase

#: Longest edit direction (characters); also the schema's ``maxLength``.
DIRECTION_MAX_CHARS = 120
#: Most evidence steps one gradient may cite.
MAX_EVIDENCE_STEPS = 3
#: Schema hints (not enforced on parsing) for text written by the model: printable ASCII
#: without quotes or backslashes, starting with a letter. The direction also excludes digits
#: (measured: SmolLM2-135M otherwise fills strings with "1.0.0.0..." up to maxLength);
#: policies may contain numbers ("within 10 px").
DIRECTION_PATTERN = r"^[A-Za-z][A-Za-z ,.;:'!?()-]{0,%d}$"
POLICY_PATTERN = r"^[A-Za-z][A-Za-z0-9 ,.;:'!?()%%+<>=/-]{0,%d}$"

#: Worked example of the gradient stage (toy agent and task).
GRADIENT_EXAMPLE = """Agent: robot_b
Current policy: Always wait.
Critic's credits for robot_b (from -1 = hurt the team to 1 = helped it):
- episode 0: credit -0.5, steps [1, 2]: only waited, so the box moved slowly
- episode 1: credit -1, steps [0]: blocked the door by waiting
Edit direction as JSON:
{"direction": "wait less; push the box toward the goal instead", "evidence_steps": [1, 0]}"""

#: Worked example of the update stage (toy agent and task).
APPLY_EXAMPLE = """Current policy: Always wait.
Edit direction: wait less; push the box toward the goal instead
New policy as JSON:
{"policy": "Always push the box toward the goal."}"""


class Gradient(BaseModel):
    """A language gradient: how one agent's policy text should change, and why.

    Attributes:
        agent: the agent id.
        direction: the edit direction, in words.
        evidence_steps: trajectory steps supporting it (among the steps its credits cite).
    """

    model_config = ConfigDict(frozen=True)

    agent: str
    direction: str = Field(min_length=1, max_length=DIRECTION_MAX_CHARS)
    evidence_steps: list[int] = Field(default_factory=list, max_length=MAX_EVIDENCE_STEPS)


class PolicyUpdate(BaseModel):
    """One optimiser step on one agent's policy.

    Attributes:
        agent: the agent id.
        old: the policy text before the step.
        new: the policy text after it (may equal ``old``).
        gradient: the :class:`Gradient` the step followed.
        generations: the LLM calls of both stages, oldest first.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    agent: str
    old: str
    new: str
    gradient: Gradient
    generations: list[Generation] = Field(default_factory=list)

    @property
    def changed(self) -> bool:
        """Whether the policy text changed."""
        return self.new != self.old


def _fmt(x: float) -> str:
    return f"{x:.2f}".rstrip("0").rstrip(".") if x != int(x) else str(int(x))


def _printable_ascii(text: str) -> bool:
    return all(32 <= ord(ch) < 127 for ch in text)


def gradient_reply_model(cited_steps: Sequence[int]) -> type[BaseModel]:
    """The JSON reply of the gradient stage: ``{"direction": str, "evidence_steps": [int]}``.

    ``evidence_steps`` is hinted to an enum of the cited steps (empty list if none).
    """
    cited = sorted(set(cited_steps))
    if cited:
        steps_field: Any = (
            list[Annotated[int, Field(json_schema_extra={"enum": cited})]],
            Field(max_length=MAX_EVIDENCE_STEPS),
        )
    else:
        steps_field = (list[int], Field(max_length=0))
    return create_model(
        "GradientReply",
        __config__=ConfigDict(extra="forbid"),
        direction=(
            str,
            Field(
                min_length=1,
                max_length=DIRECTION_MAX_CHARS,
                json_schema_extra={"pattern": DIRECTION_PATTERN % (DIRECTION_MAX_CHARS - 1)},
            ),
        ),
        evidence_steps=steps_field,
    )


def policy_reply_model(max_policy_chars: int) -> type[BaseModel]:
    """The JSON reply of the update stage: ``{"policy": str}`` (bounded, printable ASCII)."""
    return create_model(
        "PolicyReply",
        __config__=ConfigDict(extra="forbid"),
        policy=(
            str,
            Field(
                min_length=1,
                max_length=max_policy_chars,
                json_schema_extra={"pattern": POLICY_PATTERN % (max_policy_chars - 1)},
            ),
        ),
    )


class TextualPolicyOptimiser:
    """LangMARL language-policy-gradient optimiser (TextGrad-style textual gradients).

    Args:
        backend: the LLM backend.
        max_policy_chars: longest policy text a step may produce.
        max_attempts: LLM calls per stage before :class:`~lang_pz.error.SchemaValidationError`.
        temperature: sampling temperature of first attempts.
        retry_temperature: temperature of retries (each retry uses ``seed + attempt``).
        seed: base sampling seed.
    """

    def __init__(
        self,
        backend: LLMBackend,
        *,
        max_policy_chars: int = 300,
        max_attempts: int = 3,
        temperature: float = 0.0,
        retry_temperature: float = 0.7,
        seed: int = 0,
    ) -> None:
        if max_policy_chars < 8:
            raise ValueError(f"max_policy_chars must be >= 8, got {max_policy_chars}")
        if max_attempts < 1:
            raise ValueError(f"max_attempts must be >= 1, got {max_attempts}")
        self.backend = backend
        self.max_policy_chars = max_policy_chars
        self.max_attempts = max_attempts
        self.temperature = temperature
        self.retry_temperature = retry_temperature
        self.seed = seed

    # -- requests --------------------------------------------------------------------------

    def _request(
        self, instructions: str, example: str, body: str, errors: Sequence[str], schema: dict[str, Any], max_tokens: int
    ) -> GenerationRequest:
        attempt = len(errors)
        fix = f"\nYour previous reply was rejected: {errors[-1]}\nFix this in your new reply." if errors else ""
        common: dict[str, Any] = {
            "json_schema": schema,
            "max_tokens": max_tokens,
            "temperature": self.temperature if attempt == 0 else max(self.temperature, self.retry_temperature),
            "seed": self.seed + attempt,
        }
        if getattr(self.backend, "prompt_format", "chat") == "chat":
            system = f"{instructions}\n\nExample:\n{example}"
            return GenerationRequest(messages=(Message("system", system), Message("user", body + fix)), **common)
        head, _, tail = body.rpartition("\n")
        prompt = f"{instructions}\n\nExample:\n{example}\n\nNow your task:\n{head}{fix}\n{tail}\n"
        return GenerationRequest(prompt=prompt, **common)

    def gradient_request(
        self, agent: str, policy: str, credits: Sequence[Credit], errors: Sequence[str] = ()
    ) -> GenerationRequest:
        """The request of one attempt of the gradient stage (public for inspection)."""
        cited = sorted({s for c in credits for s in c.steps})
        schema = gradient_reply_model(cited).model_json_schema()
        lines = [
            f"Agent: {agent}",
            f"Current policy: {policy}",
            f"Critic's credits for {agent} (from -1 = hurt the team to 1 = helped it):",
        ]
        for i, c in enumerate(credits):
            lines.append(f"- episode {i}: credit {_fmt(c.credit)}, steps {list(c.steps)}: {c.explanation}")
        lines.append("Edit direction as JSON:")
        instructions = (
            "You improve one agent's policy. From the critic's credits, say in a few words how "
            f"the policy should change (at most {DIRECTION_MAX_CHARS} characters) and cite up to "
            f"{MAX_EVIDENCE_STEPS} of the steps the credits cite"
            + (f" ({', '.join(map(str, cited))})" if cited else " (none are cited: give [])")
            + ". Reply with JSON only."
        )
        return self._request(
            instructions, GRADIENT_EXAMPLE, "\n".join(lines), errors, schema, DIRECTION_MAX_CHARS // 2 + 40
        )

    def apply_request(self, agent: str, policy: str, gradient: Gradient, errors: Sequence[str] = ()) -> GenerationRequest:
        """The request of one attempt of the update stage (public for inspection)."""
        schema = policy_reply_model(self.max_policy_chars).model_json_schema()
        body = "\n".join(
            [
                f"Current policy: {policy}",
                f"Edit direction: {gradient.direction}",
                "New policy as JSON:",
            ]
        )
        instructions = (
            f"Rewrite the policy of agent {agent} along the edit direction. The new policy is "
            f"one short instruction (at most {self.max_policy_chars} characters, plain ASCII). "
            "Reply with JSON only."
        )
        return self._request(
            instructions, APPLY_EXAMPLE, body, errors, schema, min(self.max_policy_chars // 2, 160) + 16
        )

    # -- stages ----------------------------------------------------------------------------

    def gradient(self, agent: str, policy: str, credits: Sequence[Credit]) -> Gradient:
        """One LLM call (plus retries): this agent's credits -> an edit direction.

        Args:
            agent: the agent id.
            policy: its current policy text.
            credits: the critic's credits *for this agent*, one per trajectory of the batch.

        Raises:
            ValueError: no credits, or a credit of another agent.
            SchemaValidationError: no valid reply after ``max_attempts``.
        """
        return self._gradient(agent, policy, credits)[0]

    def _gradient(self, agent: str, policy: str, credits: Sequence[Credit]) -> tuple[Gradient, list[Generation]]:
        if not credits:
            raise ValueError(f"no credits for agent {agent!r}: nothing to compute a gradient from")
        others = sorted({c.agent for c in credits if c.agent != agent})
        if others:
            raise ValueError(
                f"gradient for {agent!r} was given credits of other agent(s) {others}; "
                "each agent's update must use only its own credits"
            )
        cited = sorted({s for c in credits for s in c.steps})
        model = gradient_reply_model(cited)

        def validate(reply: BaseModel) -> None:
            d = reply.model_dump()
            if not d["direction"].strip():
                raise ValueError("direction is empty: say how the policy should change")
            rep = repeated_phrase(d["direction"])
            if rep:
                raise ValueError(f"direction repeats {rep!r}: say it once, in a few words")
            bad = [s for s in d["evidence_steps"] if s not in cited]
            if bad:
                raise ValueError(
                    f"evidence_steps {bad} were not cited by the credits; cite only steps {cited}"
                    if cited
                    else f"evidence_steps {bad} were not cited by the credits (none are): give []"
                )

        reply, gens = ask_structured(
            self.backend,
            lambda errors: self.gradient_request(agent, policy, credits, errors),
            model,
            what=f"language gradient for {agent}",
            max_attempts=self.max_attempts,
            validate=validate,
        )
        d = reply.model_dump()
        grad = Gradient(
            agent=agent,
            direction=" ".join(d["direction"].split()),
            evidence_steps=list(dict.fromkeys(d["evidence_steps"])),
        )
        return grad, gens

    def apply(self, agent: str, policy: str, gradient: Gradient) -> PolicyUpdate:
        """One LLM call (plus retries): rewrite ``policy`` along ``gradient``.

        Raises:
            ValueError: the gradient belongs to another agent.
            SchemaValidationError: no valid new policy (non-empty, at most
                ``max_policy_chars`` printable ASCII characters) after ``max_attempts``.
        """
        if gradient.agent != agent:
            raise ValueError(f"gradient of {gradient.agent!r} applied to agent {agent!r}")
        model = policy_reply_model(self.max_policy_chars)

        def validate(reply: BaseModel) -> None:
            text = reply.model_dump()["policy"]
            if not text.strip():
                raise ValueError("policy is empty: write one short instruction")
            if not _printable_ascii(text):
                bad = sorted({repr(ch) for ch in text if not 32 <= ord(ch) < 127})
                raise ValueError(f"policy has characters that are not printable ASCII: {', '.join(bad)}")
            rep = repeated_phrase(text)
            if rep:
                raise ValueError(f"policy repeats {rep!r}: write one short instruction, once")

        reply, gens = ask_structured(
            self.backend,
            lambda errors: self.apply_request(agent, policy, gradient, errors),
            model,
            what=f"policy update for {agent}",
            max_attempts=self.max_attempts,
            validate=validate,
        )
        new = " ".join(reply.model_dump()["policy"].split())
        return PolicyUpdate(agent=agent, old=policy, new=new, gradient=gradient, generations=gens)

    def step(self, policies: Mapping[str, str], reports: Sequence[CriticReport]) -> dict[str, PolicyUpdate]:
        """One optimiser step for every agent of ``policies`` credited in ``reports``.

        For each agent: gather *its own* credits from every report, compute its gradient,
        apply it. Agents credited in no report get no update (they are absent from the
        result); credits of agents without a policy (e.g. fixed opponents) are ignored.

        Returns:
            agent -> :class:`PolicyUpdate` (``generations`` holds both stages' calls).

        Raises:
            SchemaValidationError: a stage found no valid reply for some agent.
        """
        updates: dict[str, PolicyUpdate] = {}
        for agent, policy in policies.items():
            credits = [r.credits[agent] for r in reports if agent in r.credits]
            if not credits:
                continue
            grad, gens = self._gradient(agent, policy, credits)
            upd = self.apply(agent, policy, grad)
            updates[agent] = upd.model_copy(update={"generations": gens + upd.generations})
        return updates
