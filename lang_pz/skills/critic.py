"""Credit per skill invocation, in language: the skill critic.

MASkills' centralised credit (Yao et al., EMNLP 2026 Findings): after an episode, a critic that
sees the whole trajectory judges every skill *use* and every agent:

- per use (one agent's invocations of one skill in the episode, with their steps; in the task
  envs that is one invocation per turn): a contribution in {helped, redundant, harmful,
  neutral}, the steps that show it, a suggested edit of the skill (may be empty) and a utility
  delta in [-1, 1];
- per agent, a *residual*: does it need a skill it lacks, and which capability.

Only invocations the agents recorded are judged (:func:`lang_pz.skills.policy.invocations`);
a skill that was merely offered gets no credit. Measured utilities from withheld-skill re-runs
(:mod:`lang_pz.skills.evidence`) are shown among the computed evidence. As with
:class:`lang_pz.critics.central.CentralCritic`: one call per trajectory, the reply's JSON schema
is built per trajectory (one required property per use and per agent, enums for contributions,
utility levels and steps), the reply is validated anyway and retried with the error shown
(:func:`lang_pz.structured.ask_structured`), and nothing is ever filled in by default.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

from lang_pz.backends.base import Generation, GenerationRequest, LLMBackend, Message
from lang_pz.critics.base import shown_action
from lang_pz.critics.render import subsample_steps
from lang_pz.error import LangPZError
from lang_pz.skills.evidence import SkillUtility
from lang_pz.skills.library import SkillLibrary
from lang_pz.skills.policy import invocations
from lang_pz.structured import ask_structured, attempt_sampling, generation_usage, rejection_note
from lang_pz.trajectory import Trajectory

Contribution = Literal["helped", "redundant", "harmful", "neutral"]
CONTRIBUTIONS: tuple[str, ...] = ("helped", "redundant", "harmful", "neutral")
#: Utility levels offered in the schema (parsing accepts any number in [-1, 1]).
UTILITY_LEVELS: tuple[float, ...] = (-1.0, -0.5, 0.0, 0.5, 1.0)
#: Longest suggested edit / capability (characters); also the schemas' ``maxLength``.
EDIT_MAX_CHARS = 100
CAPABILITY_MAX_CHARS = 80
MAX_EVIDENCE_STEPS = 3
#: ``GenerationRequest.role`` of the skill critic's requests.
CRITIC_ROLE = "critic.skill"

CRITIC_EXAMPLE = """Agents: robot_a, robot_b.
Team return: 2.0
Skill uses:
- robot_a/carry-box (Pick up a box and carry it. Use when a box is near you.): steps [0, 1]
Computed re-runs:
- without carry-box, robot_a: team_return 0.00 against 2.00 (measured skill utility +2.00)
Steps:
Step 0: A box is near robot_a. A door is closed.
  robot_a [carry-box] carry; robot_b wait
Step 1: robot_a holds the box. The door is closed.
  robot_a [carry-box] carry; robot_b wait
Judgement as JSON:
{"uses": {"robot_a/carry-box": {"contribution": "helped", "evidence_steps": [0, 1], \
"suggested_edit": "", "utility_delta": 1.0}}, "residuals": {"robot_a": {"needs_skill": false, \
"capability": ""}, "robot_b": {"needs_skill": true, "capability": "open the closed door"}}}"""


class UseCredit(BaseModel):
    """The critic's judgement of one skill use (one agent's invocations of one skill in one episode).

    Attributes:
        agent, skill, scope, version: the use.
        steps: the trajectory steps at which the agent invoked the skill.
        contribution: ``helped``, ``redundant``, ``harmful`` or ``neutral``.
        evidence_steps: trajectory steps that show it (at most :data:`MAX_EVIDENCE_STEPS`).
        suggested_edit: how the skill should change (may be empty).
        utility_delta: the skill's effect on the outcome in [-1, 1].
    """

    model_config = ConfigDict(frozen=True)

    agent: str
    skill: str
    scope: str
    version: int
    steps: list[int]
    contribution: Contribution
    evidence_steps: list[int] = Field(default_factory=list, max_length=MAX_EVIDENCE_STEPS)
    suggested_edit: str = Field("", max_length=EDIT_MAX_CHARS)
    utility_delta: float = Field(ge=-1.0, le=1.0)


class Residual(BaseModel):
    """What an agent lacked: does it need a skill it does not have, and for which capability."""

    model_config = ConfigDict(frozen=True)

    agent: str
    needs_skill: bool
    capability: str = Field("", max_length=CAPABILITY_MAX_CHARS)


class SkillCriticReport(BaseModel):
    """The skill critic's assessment of one trajectory.

    Attributes:
        episode: the trajectory's episode index.
        uses: one :class:`UseCredit` per skill use, in order of first invocation.
        residuals: agent -> :class:`Residual`, for every agent that acted.
        utilities: the measured utilities shown (:meth:`SkillUtility.as_dict` each).
        errors: validation errors of rejected attempts, oldest first.
        generations: every LLM call made, oldest first.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    episode: int
    uses: list[UseCredit]
    residuals: dict[str, Residual]
    utilities: list[dict[str, Any]] = Field(default_factory=list)
    errors: list[str] = Field(default_factory=list)
    generations: list[Generation] = Field(default_factory=list)

    @property
    def usage(self) -> dict[str, float]:
        """Summed calls, tokens and latency of this report."""
        return generation_usage(self.generations)


#: What the critic credits: the skills an agent invoked (MASkills), or, as an ablation, every
#: skill it was shown (the reference code's "every injected skill gets the credit").
Attribution = Literal["invoked", "offered"]


def skill_uses(
    trajectory: Trajectory, attribution: Attribution = "invoked", library: SkillLibrary | None = None
) -> dict[str, dict[str, Any]]:
    """``"agent/skill"`` -> ``{agent, skill, scope, version, steps}``, in order of first use.

    With ``attribution="offered"`` (an ablation) every skill offered at a step counts as used
    there, whether invoked or not; versions then come from ``library``.

    Raises:
        LangPZError: ``"offered"`` without the library the trajectory was played with.
    """
    uses: dict[str, dict[str, Any]] = {}
    if attribution == "invoked":
        for inv in invocations(trajectory):
            u = uses.setdefault(
                f"{inv.agent}/{inv.skill}",
                {"agent": inv.agent, "skill": inv.skill, "scope": inv.scope, "version": inv.version, "steps": []},
            )
            u["steps"].append(inv.step)
        return uses
    if library is None:
        raise LangPZError("attribution='offered' needs the library the trajectory was played with")
    for s in trajectory.steps:
        rec = (s.meta or {}).get("skills") or {}
        for scope, name in rec.get("offered", []):
            version = library.get(scope, name).version
            u = uses.setdefault(
                f"{s.agent}/{name}", {"agent": s.agent, "skill": name, "scope": scope, "version": version, "steps": []}
            )
            u["steps"].append(s.step)
    return uses


def reply_model(use_keys: Sequence[str], agents: Sequence[str], steps: Sequence[int]) -> type[BaseModel]:
    """The pydantic model of the critic's reply: ``{"uses": {key: ...}, "residuals": {agent: ...}}``,
    every key required and no other (schema enums are hints; :meth:`SkillCritic.validate_reply` checks)."""
    step_item: Any = Annotated[int, Field(json_schema_extra={"enum": [*sorted(set(steps))]})] if steps else int
    text = lambda n: (str, Field(max_length=n, json_schema_extra={"pattern": f"^([A-Za-z][A-Za-z ,.;'-]{{0,{n - 1}}})?$"}))  # noqa: E731
    use = create_model(
        "SkillUseJudgement",
        __config__=ConfigDict(extra="forbid"),
        contribution=(Contribution, ...),
        evidence_steps=(list[step_item], Field(max_length=MAX_EVIDENCE_STEPS)),
        suggested_edit=text(EDIT_MAX_CHARS),
        utility_delta=(float, Field(json_schema_extra={"enum": list(UTILITY_LEVELS)})),
    )
    residual = create_model(
        "AgentResidual",
        __config__=ConfigDict(extra="forbid"),
        needs_skill=(bool, ...),
        capability=text(CAPABILITY_MAX_CHARS),
    )
    # field definitions typed Any: a **dict of them could, for mypy, also fill create_model's __config__ etc.
    use_fields: dict[str, Any] = {f"u{i}": (use, Field(alias=k)) for i, k in enumerate(use_keys)}
    uses = create_model("SkillUses", __config__=ConfigDict(extra="forbid"), **use_fields)
    residual_fields: dict[str, Any] = {f"a{i}": (residual, Field(alias=a)) for i, a in enumerate(agents)}
    residuals = create_model("AgentResiduals", __config__=ConfigDict(extra="forbid"), **residual_fields)
    return create_model(
        "SkillCriticReply", __config__=ConfigDict(extra="forbid"), uses=(uses, ...), residuals=(residuals, ...)
    )


class SkillCritic:
    """Judges every skill use and every agent's residual in one validated LLM call per trajectory.

    Args:
        backend: the LLM backend.
        max_attempts: calls before :class:`~lang_pz.error.SchemaValidationError`.
        max_prompt_steps: at most this many steps rendered (every invocation step first).
        max_state_chars: longest global-state text shown per step.
        temperature: sampling temperature of the first attempt.
        retry_temperature: sampling temperature of the retries.
        seed: sampling seed of the attempts.
        attribution: judge the skills agents invoked (default), or every skill they were shown
            (an ablation: :func:`skill_uses`).
    """

    def __init__(
        self,
        backend: LLMBackend,
        *,
        max_attempts: int = 3,
        max_prompt_steps: int = 16,
        max_state_chars: int = 200,
        temperature: float = 0.0,
        retry_temperature: float = 0.7,
        seed: int = 0,
        attribution: Attribution = "invoked",
    ) -> None:
        if attribution not in ("invoked", "offered"):
            raise ValueError(f"attribution must be 'invoked' or 'offered', got {attribution!r}")
        self.attribution = attribution
        if max_attempts < 1 or max_prompt_steps < 1 or max_state_chars < 20:
            raise ValueError(
                f"need max_attempts >= 1, max_prompt_steps >= 1, max_state_chars >= 20; got "
                f"{max_attempts}, {max_prompt_steps}, {max_state_chars}"
            )
        self.backend = backend
        self.max_attempts = max_attempts
        self.max_prompt_steps = max_prompt_steps
        self.max_state_chars = max_state_chars
        self.temperature = temperature
        self.retry_temperature = retry_temperature
        self.seed = seed

    def layout(
        self, trajectory: Trajectory, library: SkillLibrary | None = None, utilities: Sequence[SkillUtility] = ()
    ) -> tuple[str, list[int]]:
        """The episode as the critic sees it, and the steps shown (invocation steps first, then
        evenly spaced others, up to ``max_prompt_steps``)."""
        uses = skill_uses(trajectory, self.attribution, library)
        descs = {(sc, s.name): s.description for sc, s in library} if library is not None else {}
        lines = [f"Agents: {', '.join(trajectory.agents)}.", f"Team return: {round(trajectory.team_return, 2)}"]
        lines.append("Skill uses:" if uses else "Skill uses: none (no agent invoked a skill)")
        for k, u in uses.items():
            d = descs.get((u["scope"], u["skill"]))
            lines.append(
                f"- {k}"
                + (f" ({' '.join(d.split())})" if d else "")
                + f": steps {u['steps'][:12]}"
                + (f" and {len(u['steps']) - 12} more" if len(u["steps"]) > 12 else "")
            )
        if utilities:
            lines += ["Computed re-runs:", *(f"- {u.describe()}" for u in utilities)]
        all_steps = sorted({s.step for s in trajectory.steps})
        used = sorted({t for u in uses.values() for t in u["steps"]})
        shown = subsample_steps(used, self.max_prompt_steps) if used else []
        rest = [t for t in all_steps if t not in set(shown)]
        if rest and len(shown) < self.max_prompt_steps:
            shown = sorted(set(shown) | set(subsample_steps(rest, self.max_prompt_steps - len(shown))))
        lines.append(f"Steps ({len(shown)} of {len(all_steps)}):" if len(shown) < len(all_steps) else "Steps:")
        by_step: dict[int, list[str]] = {}
        for s in trajectory.steps:
            rec = (s.meta or {}).get("skills") or {}
            tag = f" [{rec['invoked']['name']}]" if rec.get("invoked") else ""
            by_step.setdefault(s.step, []).append(f"{s.agent}{tag} {shown_action(s)}")
        for t in shown:
            state = " ".join(str(trajectory.states.get(t, "")).split())[: self.max_state_chars]
            lines += [f"Step {t}: {state}".rstrip(), "  " + "; ".join(by_step.get(t, []))]
        return "\n".join(lines), shown

    def build_request(self, body: str, errors: Sequence[str], schema: dict[str, Any], n_items: int) -> GenerationRequest:
        """The request of one attempt (``errors``: messages of the rejected attempts)."""
        instructions = (
            "You are the team's skill critic. For each skill use, say whether the skill helped, was redundant, "
            "harmful or neutral, cite up to 3 steps, suggest a short edit of the skill (or nothing) and give a "
            "utility delta from -1 to 1; trust the computed re-runs. For each agent, say whether it needs a "
            "skill it lacks and which capability. Reply with JSON only."
        )
        common: dict[str, Any] = {
            "json_schema": schema,
            "max_tokens": 48 + 64 * n_items,
            "role": CRITIC_ROLE,
            **attempt_sampling(errors, self.temperature, self.retry_temperature, self.seed),
        }
        fix = rejection_note(errors)
        if getattr(self.backend, "prompt_format", "chat") == "chat":
            return GenerationRequest(
                messages=(Message("system", f"{instructions}\n\nExample:\n{CRITIC_EXAMPLE}"), Message("user", body + fix)),
                **common,
            )
        prompt = f"{instructions}\n\nExample:\n{CRITIC_EXAMPLE}\n\nNow the real episode:\n{body}{fix}\nJudgement as JSON:\n"
        return GenerationRequest(prompt=prompt, **common)

    @staticmethod
    def validate_reply(reply: BaseModel, steps: Sequence[int]) -> None:
        """Semantic checks (the schema's enums are only hints).

        Raises:
            ValueError: a utility delta outside [-1, 1], or a cited step not in the
                trajectory; the message is written for the model to fix it.
        """
        valid = set(steps)
        data = reply.model_dump(by_alias=True)
        for key, u in data["uses"].items():
            if not -1.0 <= u["utility_delta"] <= 1.0:
                raise ValueError(f"{key}: utility_delta {u['utility_delta']} is outside [-1, 1]")
            bad = [s for s in u["evidence_steps"] if s not in valid]
            if bad:
                raise ValueError(f"{key}: cites step(s) {bad} that are not in the trajectory")

    def assess(
        self, trajectory: Trajectory, library: SkillLibrary | None = None, utilities: Sequence[SkillUtility] = ()
    ) -> SkillCriticReport:
        """Judge every skill use and every agent's residual in ``trajectory``.

        Args:
            trajectory: the episode (steps' ``meta["skills"]`` hold the invocations).
            library: the library played (its descriptions are shown), if given.
            utilities: measured utilities of this episode's uses, shown as evidence.

        Raises:
            LangPZError: the trajectory has no agent steps.
            SchemaValidationError: no valid reply after ``max_attempts``.
            BackendError: the backend failed.
        """
        agents = trajectory.agents
        if not agents:
            raise LangPZError(f"trajectory of episode {trajectory.episode} has no agent steps to assess")
        uses = skill_uses(trajectory, self.attribution, library)
        steps = sorted({s.step for s in trajectory.steps})
        model = reply_model(list(uses), agents, steps)
        schema = model.model_json_schema()
        body, _ = self.layout(trajectory, library, utilities)
        seen: list[str] = []

        def build(errors: list[str]) -> GenerationRequest:
            seen[:] = errors
            return self.build_request(body, errors, schema, len(uses) + len(agents))

        reply, gens = ask_structured(
            self.backend,
            build,
            model,
            what=f"skill critic report for episode {trajectory.episode}",
            max_attempts=self.max_attempts,
            validate=lambda r: self.validate_reply(r, steps),
        )
        data = reply.model_dump(by_alias=True)
        credits = [
            UseCredit(
                **u,
                contribution=data["uses"][k]["contribution"],
                evidence_steps=list(dict.fromkeys(data["uses"][k]["evidence_steps"])),
                suggested_edit=data["uses"][k]["suggested_edit"].strip(),
                utility_delta=float(data["uses"][k]["utility_delta"]),
            )
            for k, u in uses.items()
        ]
        residuals = {
            a: Residual(agent=a, needs_skill=bool(r["needs_skill"]), capability=r["capability"].strip())
            for a, r in data["residuals"].items()
        }
        return SkillCriticReport(
            episode=trajectory.episode,
            uses=credits,
            residuals=residuals,
            utilities=[u.as_dict() for u in utilities],
            errors=list(seen),
            generations=gens,
        )
