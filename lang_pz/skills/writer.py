"""The skill writer: the LLM call that writes a skill's text for :mod:`lang_pz.skills.operators`.

:class:`SkillWriter` asks through :func:`lang_pz.structured.ask_structured`: the reply is
schema-constrained (:func:`_reply_model`), validated (name rules, limits, no name clash, no
phrase repeated three times, a refine must change something) and retried with the error shown.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, create_model

from lang_pz.backends.base import Generation, GenerationRequest, LLMBackend, Message
from lang_pz.error import SkillFormatError
from lang_pz.skills.library import SkillLimits
from lang_pz.skills.skill import Skill, check_name
from lang_pz.structured import (
    ask_structured,
    attempt_sampling,
    rejection_note,
    repeated_phrase,
)

NAME_SCHEMA_PATTERN = r"^[a-z0-9]+(-[a-z0-9]+)*$"
TEXT_SCHEMA_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9 ,.;:'!?()%%+<>=/#-]{0,%d}$"
TEXT_SCHEMA_PATTERN_OPEN = r"^[A-Za-z0-9][A-Za-z0-9 ,.;:'!?()%+<>=/#-]*$"
NAME_MAX_CHARS = 40
#: Longest text whose length bound goes into the JSON schema. llama.cpp turns a bound into nested
#: optional rules and refuses long ones (measured: a 1,200-character body gave "number of rules
#: that are going to be repeated ... exceeds sane defaults"); longer texts are checked on parsing.
SCHEMA_BOUND_MAX_CHARS = 300
#: ``GenerationRequest.role`` of the skill writer's requests.
WRITER_ROLE = "optimiser.skill"

INSTRUCTIONS = (
    "You maintain a library of skills for a team of agents. A skill has a name (lowercase words "
    "joined by hyphens), a description (what it does and when to use it) and a body (the "
    "instruction an agent follows once it uses the skill). Reply with JSON only."
)
EXAMPLE = """Task: rewrite the skill along the directions.
Skill carry-box: Carry a box. Body: Pick up the box.
Directions:
- say where to take the box
New skill as JSON:
{"description": "Carry a box to the door. Use when a box is near you.", "body": "Pick up the box and take it to the door."}"""


class SkillText(BaseModel):
    """What :class:`SkillWriter` returns: a name (for induce / consolidate), a description and a body."""

    model_config = ConfigDict(frozen=True)

    name: str | None = None
    description: str
    body: str


def _reply_model(with_name: bool, limits: SkillLimits) -> type[BaseModel]:
    def text(n: int) -> Any:
        if n > SCHEMA_BOUND_MAX_CHARS:  # bounded by validation and max_tokens instead
            return (str, Field(min_length=1, json_schema_extra={"pattern": TEXT_SCHEMA_PATTERN_OPEN}))
        return (str, Field(min_length=1, max_length=n, json_schema_extra={"pattern": TEXT_SCHEMA_PATTERN % (n - 1)}))

    fields: dict[str, Any] = {"description": text(limits.max_description_chars), "body": text(limits.max_body_chars)}
    if with_name:
        fields = {
            "name": (
                str,
                Field(min_length=1, max_length=NAME_MAX_CHARS, json_schema_extra={"pattern": NAME_SCHEMA_PATTERN}),
            ),
            **fields,
        }
    return create_model("SkillReply", __config__=ConfigDict(extra="forbid"), **fields)


@dataclass
class SkillWriter:
    """The LLM calls of :func:`~lang_pz.skills.operators.refine`, :func:`~lang_pz.skills.operators.induce`
    and :func:`~lang_pz.skills.operators.consolidate`.

    Args:
        backend: the LLM backend.
        limits: the library limits (the schema's and validation's lengths).
        max_attempts: as the policy critic.
        temperature: as the policy critic.
        retry_temperature: as the policy critic.
        seed: as the policy critic.

    Attributes:
        generations: every call made, oldest first (for usage and budgets).
    """

    backend: LLMBackend
    limits: SkillLimits = field(default_factory=SkillLimits)
    max_attempts: int = 3
    temperature: float = 0.0
    retry_temperature: float = 0.7
    seed: int = 0
    generations: list[Generation] = field(default_factory=list)

    def write(self, task: str, *, with_name: bool, taken: Sequence[str] = (), unchanged: Skill | None = None) -> SkillText:
        """Ask for one skill text.

        Args:
            task: the task and its inputs, in words (shown after a worked example).
            with_name: whether the reply names the skill.
            taken: names it must not use.
            unchanged: a reply equal to this skill is rejected (a refine must change it).

        Raises:
            SchemaValidationError: no valid reply after ``max_attempts``.
        """
        model = _reply_model(with_name, self.limits)
        schema = model.model_json_schema()

        def validate(reply: BaseModel) -> None:
            data = reply.model_dump()
            if with_name:
                try:
                    check_name(data["name"])
                except SkillFormatError as exc:
                    raise ValueError(str(exc).split(": ", 1)[-1]) from None
                if data["name"] in taken:
                    raise ValueError(f"name {data['name']!r} is taken; choose another name")
            for k, limit in (("description", self.limits.max_description_chars), ("body", self.limits.max_body_chars)):
                if not data[k].strip():
                    raise ValueError(f"{k} is empty")
                if len(data[k]) > limit:
                    raise ValueError(f"{k} has {len(data[k])} characters; at most {limit}")
                if (p := repeated_phrase(data[k])) is not None:
                    raise ValueError(f"{k} repeats {p!r}; write it once")
            if (
                unchanged is not None
                and " ".join(data["body"].split()) == " ".join(unchanged.body.split())
                and " ".join(data["description"].split()) == " ".join(unchanged.description.split())
            ):
                raise ValueError("the skill is unchanged; apply the directions")

        def build(errors: list[str]) -> GenerationRequest:
            common: dict[str, Any] = {
                "json_schema": schema,
                "role": WRITER_ROLE,
                "max_tokens": 40 + (self.limits.max_description_chars + self.limits.max_body_chars) // 3,
                **attempt_sampling(errors, self.temperature, self.retry_temperature, self.seed),
            }
            body = task + rejection_note(errors)
            if getattr(self.backend, "prompt_format", "chat") == "chat":
                return GenerationRequest(
                    messages=(Message("system", f"{INSTRUCTIONS}\n\nExample:\n{EXAMPLE}"), Message("user", body)), **common
                )
            return GenerationRequest(
                prompt=f"{INSTRUCTIONS}\n\nExample:\n{EXAMPLE}\n\n{body}\nNew skill as JSON:\n", **common
            )

        reply, gens = ask_structured(
            self.backend, build, model, what="skill text", max_attempts=self.max_attempts, validate=validate
        )
        self.generations += gens
        return SkillText(**reply.model_dump())
