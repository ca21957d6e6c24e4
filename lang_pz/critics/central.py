"""The centralised language critic: one LLM call assigns credit to every agent, in words.

LangMARL's critic is *centralised* (centralised training, decentralised execution — CTDE):
during training it reads the global state and every agent's actions, which no policy sees at
run time, and it does *credit assignment in language*: for each agent, a signed credit, a
short explanation and the steps that justify it. Those credits are what the textual
optimiser (:mod:`lang_pz.optimisers.textual`) turns into each agent's language gradient.

Modes (``mode=``), as compared in LangMARL's ablations:

- ``"central_credit"`` (default): one call reads the whole trajectory (global state, every
  agent's actions) and assigns *each agent its own* credit;
- ``"central_global"``: one call reads the same view but writes *one shared* critique for the
  team, which every agent receives (a team-level update, no credit assignment);
- ``"independent"``: one call per agent that sees only that agent's own observations, actions
  and return (independent learners: no global view, no credit assignment).

Counterfactual re-runs (:mod:`lang_pz.critics.counterfactual`) may be passed to
:meth:`CentralCritic.assess`; they are shown among the computed evidence.

Design choices, for small models (the embedded SmolLM2-135M):

- one call per trajectory; the prompt is a compact rendering (the global state and each
  agent's action per step, evenly subsampled to ``max_prompt_steps`` steps, saying so) plus
  *evidence the system computes* — returns, team return, action counts, parse errors — since
  free-form judgement from a 135M model is noise (measured: near-uniform credits on fault-injection
  cases, see :mod:`lang_pz.evaluation.faults`);
- the reply's JSON schema is built per trajectory: one required property per agent (so
  constrained decoding emits every agent exactly once and no other), credits restricted to a
  few levels in [-1, 1], cited steps restricted to steps of the trajectory, the explanation
  bounded by ``maxLength``;
- the reply is validated anyway (any backend may ignore the schema) and retried with the
  error shown; after ``max_attempts`` it raises :class:`~lang_pz.error.SchemaValidationError`.
  A reply is never handed whole to every agent, and no credit is ever filled in by default.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

from lang_pz.backends.base import GenerationRequest, LLMBackend, Message
from lang_pz.critics.base import (
    EXPLANATION_MAX_CHARS,
    MAX_CITED_STEPS,
    Credit,
    CriticReport,
    _fmt,
    compute_evidence,
)
from lang_pz.critics.counterfactual import Counterfactual
from lang_pz.critics.render import (
    CRITIC_EXAMPLE,
    GLOBAL_EXAMPLE,
    own_view,
    render_trajectory,
)
from lang_pz.error import LangPZError
from lang_pz.structured import ask_structured, attempt_sampling, rejection_note
from lang_pz.trajectory import Trajectory

if TYPE_CHECKING:
    from pydantic.json_schema import JsonDict

CriticMode = Literal["central_credit", "central_global", "independent"]
CRITIC_MODES: tuple[str, ...] = ("central_credit", "central_global", "independent")
#: The reply key of the shared critique in ``"central_global"`` mode.
TEAM = "team"
#: Schema hint for explanations: words and light punctuation, no digits (measured: without
#: it SmolLM2-135M fills the string with "1.0.0.0..." until maxLength). Not enforced on
#: parsing, so models that ignore the grammar are not rejected for a digit.
EXPLANATION_PATTERN = r"^[A-Za-z][A-Za-z ,.;'-]{0,%d}$" % (EXPLANATION_MAX_CHARS - 1)
#: Credit levels offered to the model (the schema's ``enum``); ``None`` = any number.
DEFAULT_CREDIT_LEVELS: tuple[float, ...] = (-1.0, -0.5, 0.0, 0.5, 1.0)


def reply_model(
    agents: Sequence[str],
    steps: Sequence[int],
    credit_levels: Sequence[float] | None = DEFAULT_CREDIT_LEVELS,
) -> type[BaseModel]:
    """The pydantic model of the critic's JSON reply for these agents and steps.

    Its JSON schema (sent to the backend) has one required property per agent, no other
    properties, each ``{"explanation": str <= EXPLANATION_MAX_CHARS, "steps": [step, ...] (at
    most MAX_CITED_STEPS, enum of the trajectory's steps), "credit": number (enum of
    credit_levels)}``. The enums are schema hints only: parsing accepts any int / float, and
    :meth:`CentralCritic.validate_reply` reports out-of-range values with a message for the
    model.
    """
    step_item: Any = Annotated[int, Field(json_schema_extra={"enum": [*sorted(set(steps))]})] if steps else int
    credit_extra: JsonDict | None = {"enum": [float(c) for c in credit_levels]} if credit_levels else None
    agent_credit = create_model(
        "AgentCredit",
        __config__=ConfigDict(extra="forbid"),
        credit=(float, Field(json_schema_extra=credit_extra)),
        steps=(list[step_item], Field(max_length=MAX_CITED_STEPS)),
        explanation=(
            str,
            Field(
                min_length=1,
                max_length=EXPLANATION_MAX_CHARS,
                json_schema_extra={"pattern": EXPLANATION_PATTERN},
            ),
        ),
    )
    fields: dict[str, Any] = {f"agent_{i}": (agent_credit, Field(alias=a)) for i, a in enumerate(agents)}
    return create_model("CriticReply", __config__=ConfigDict(extra="forbid"), **fields)


class CentralCritic:
    """Centralised language critic (LangMARL): one LLM call credits every agent of a trajectory.

    Args:
        backend: the LLM backend.
        max_attempts: LLM calls before :class:`~lang_pz.error.SchemaValidationError`.
        max_prompt_steps: at most this many steps are rendered (evenly subsampled).
        max_prompt_chars: budget of the trajectory rendering (state texts are shortened, then
            fewer steps shown, to fit); the instructions and the worked example add about
            1,500 characters. The default keeps the embedded model's prompt near 2,500 tokens
            (its context is 4,096).
        credit_levels: credit values offered in the schema (``None``: any number in [-1, 1]).
        temperature: sampling temperature of the first attempt.
        retry_temperature: temperature of retries (a greedy retry of a nearly identical
            prompt tends to repeat the same mistake); each retry uses ``seed + attempt``.
        seed: base sampling seed.
        mode: ``"central_credit"``, ``"central_global"`` or ``"independent"`` (module docstring).

    Raises:
        ValueError: a bad setting (the message names it).
    """

    def __init__(
        self,
        backend: LLMBackend,
        *,
        mode: CriticMode = "central_credit",
        max_attempts: int = 3,
        max_prompt_steps: int = 40,
        max_prompt_chars: int = 5000,
        credit_levels: Sequence[float] | None = DEFAULT_CREDIT_LEVELS,
        temperature: float = 0.0,
        retry_temperature: float = 0.7,
        seed: int = 0,
    ) -> None:
        if mode not in CRITIC_MODES:
            raise ValueError(f"mode must be one of {', '.join(CRITIC_MODES)}, got {mode!r}")
        if max_attempts < 1:
            raise ValueError(f"max_attempts must be >= 1, got {max_attempts}")
        if max_prompt_steps < 1:
            raise ValueError(f"max_prompt_steps must be >= 1, got {max_prompt_steps}")
        if max_prompt_chars < 1000:
            raise ValueError(f"max_prompt_chars must be >= 1000, got {max_prompt_chars}")
        if credit_levels is not None and not all(-1.0 <= c <= 1.0 for c in credit_levels):
            raise ValueError(f"credit_levels must lie in [-1, 1], got {list(credit_levels)}")
        self.backend = backend
        self.mode: str = mode  # the Critic protocol's (settable) str attribute
        self.max_attempts = max_attempts
        self.max_prompt_steps = max_prompt_steps
        self.max_prompt_chars = max_prompt_chars
        self.credit_levels = tuple(credit_levels) if credit_levels else None
        self.temperature = temperature
        self.retry_temperature = retry_temperature
        self.seed = seed

    # -- prompt ----------------------------------------------------------------------------

    def layout(
        self,
        trajectory: Trajectory,
        policies: Mapping[str, str] | None = None,
        extra_evidence: Sequence[str] = (),
    ) -> tuple[str, list[int]]:
        """The trajectory as the critic sees it, and the steps shown
        (:func:`~lang_pz.critics.render.render_trajectory` with this critic's budgets)."""
        return render_trajectory(
            trajectory,
            policies,
            extra_evidence,
            max_prompt_steps=self.max_prompt_steps,
            max_prompt_chars=self.max_prompt_chars,
        )

    def render(
        self, trajectory: Trajectory, policies: Mapping[str, str] | None = None, extra_evidence: Sequence[str] = ()
    ) -> str:
        """The trajectory as the critic sees it (see :meth:`layout`)."""
        return self.layout(trajectory, policies, extra_evidence)[0]

    def _instructions(self, agents: Sequence[str]) -> str:
        levels = ", ".join(_fmt(c) for c in self.credit_levels) if self.credit_levels else "a number from -1 to 1"
        if self.mode == "central_global":
            return (
                "You are the team's critic. Read how the episode went and give the whole team one "
                f"shared credit for the team result: {levels} (positive: good, negative: bad), "
                f'under the key "{TEAM}", with a short explanation (at most '
                f"{EXPLANATION_MAX_CHARS} characters) and up to {MAX_CITED_STEPS} step numbers "
                "from the steps shown. Reply with JSON only."
            )
        return (
            "You are the team's critic. Read how the episode went and give each agent a credit "
            f"for its share in the team result: {levels} (positive: helped the team, negative: "
            f"hurt it). Give every agent ({', '.join(agents)}) exactly once, a short "
            f"explanation (at most {EXPLANATION_MAX_CHARS} characters) and up to "
            f"{MAX_CITED_STEPS} step numbers from the steps shown. Reply with JSON only."
        )

    def build_request(
        self,
        trajectory: Trajectory,
        policies: Mapping[str, str] | None,
        errors: Sequence[str],
        schema: dict[str, Any],
        extra_evidence: Sequence[str] = (),
    ) -> GenerationRequest:
        """The request of one attempt (``errors``: messages of the rejected attempts)."""
        agents = [TEAM] if self.mode == "central_global" else trajectory.agents
        body, _ = self.layout(trajectory, policies, extra_evidence)
        fix = rejection_note(errors)
        max_tokens = 32 + len(agents) * (EXPLANATION_MAX_CHARS // 2 + 24 + 4 * MAX_CITED_STEPS)
        common: dict[str, Any] = {
            "json_schema": schema,
            "max_tokens": max_tokens,
            "role": "critic",
            **attempt_sampling(errors, self.temperature, self.retry_temperature, self.seed),
        }
        instructions = self._instructions(agents)
        example = GLOBAL_EXAMPLE if self.mode == "central_global" else CRITIC_EXAMPLE
        fmt = getattr(self.backend, "prompt_format", "chat")
        if fmt == "chat":
            system = f"{instructions}\n\nExample:\n{example}"
            return GenerationRequest(messages=(Message("system", system), Message("user", body + fix)), **common)
        prompt = f"{instructions}\n\nExample:\n{example}\n\nNow the real episode:\n{body}{fix}\nCredits as JSON:\n"
        return GenerationRequest(prompt=prompt, **common)

    # -- validation ------------------------------------------------------------------------

    @staticmethod
    def validate_reply(reply: BaseModel, agents: Sequence[str], steps: Sequence[int]) -> None:
        """Semantic checks of a parsed reply (the schema's enums are only hints).

        Raises:
            ValueError: a credit outside [-1, 1], a cited step not in the trajectory, or an
                empty explanation; the message is written for the model to fix it.
        """
        valid = set(steps)
        data = reply.model_dump(by_alias=True)
        missing = [a for a in agents if a not in data]
        if missing:  # cannot happen with the generated model; kept for custom models
            raise ValueError(f"missing agent(s) {', '.join(missing)}: give a credit for each agent")
        for a in agents:
            c = data[a]
            if not -1.0 <= c["credit"] <= 1.0:
                raise ValueError(f"{a}: credit {c['credit']} is outside [-1, 1]")
            bad = [s for s in c["steps"] if s not in valid]
            if bad:
                lo, hi = (min(valid), max(valid)) if valid else (0, -1)
                raise ValueError(f"{a}: cites step(s) {bad} that are not in the trajectory (steps {lo} to {hi})")
            if not c["explanation"].strip():
                raise ValueError(f"{a}: the explanation is empty")

    # -- public ----------------------------------------------------------------------------

    def assess(
        self,
        trajectory: Trajectory,
        policies: Mapping[str, str] | None = None,
        counterfactuals: Sequence[Counterfactual] = (),
    ) -> CriticReport:
        """Credit every agent that acted in ``trajectory`` (validated LLM calls, per ``mode``).

        Args:
            trajectory: the episode (its ``states`` are the global state texts; CTDE: only
                the critic reads them; ``"independent"`` mode shows each agent only its own
                observations instead).
            policies: agent -> its current policy text, shown to the critic if given.
            counterfactuals: re-run results shown as evidence (in ``"independent"`` mode each
                agent sees only the probes that replaced it alone).

        Returns:
            The :class:`CriticReport`.

        Raises:
            LangPZError: the trajectory has no agent steps.
            SchemaValidationError: no valid reply after ``max_attempts`` (the message holds
                the last raw reply and every error).
            BackendError: the backend failed.
        """
        agents = trajectory.agents
        if not agents:
            raise LangPZError(f"trajectory of episode {trajectory.episode} has no agent steps to assess")
        cf = list(counterfactuals)
        if self.mode != "independent":
            lines = [c.describe(agents) for c in counterfactuals]
            report = self._assess_view(trajectory, policies, lines)
            if self.mode == "central_global":  # the one shared critique, given to every agent
                shared = report.credits[TEAM]
                report.credits = {a: shared.model_copy(update={"agent": a}) for a in agents}
            return report.model_copy(update={"mode": self.mode, "counterfactuals": cf})
        parts = []
        for a in agents:
            own = [c.describe([a]) for c in counterfactuals if c.agents == (a,)]
            parts.append(self._assess_view(own_view(trajectory, a), policies, own))
        return CriticReport(
            episode=trajectory.episode,
            credits={a: p.credits[a] for a, p in zip(agents, parts)},
            team_return=trajectory.team_return,
            mode=self.mode,
            counterfactuals=cf,
            evidence=compute_evidence(trajectory),
            shown_steps=sorted({t for p in parts for t in p.shown_steps}),
            total_steps=len({s.step for s in trajectory.steps}),
            errors=[e for p in parts for e in p.errors],
            generations=[g for p in parts for g in p.generations],
        )

    def _assess_view(
        self, trajectory: Trajectory, policies: Mapping[str, str] | None, extra_evidence: Sequence[str]
    ) -> CriticReport:
        agents = [TEAM] if self.mode == "central_global" else trajectory.agents
        all_steps = sorted({s.step for s in trajectory.steps})
        model = reply_model(agents, all_steps, self.credit_levels)
        schema = model.model_json_schema()
        seen: list[str] = []

        def build(errors: list[str]) -> GenerationRequest:
            seen[:] = errors
            return self.build_request(trajectory, policies, errors, schema, extra_evidence)

        reply, gens = ask_structured(
            self.backend,
            build,
            model,
            what=f"critic report for episode {trajectory.episode}",
            max_attempts=self.max_attempts,
            validate=lambda r: self.validate_reply(r, agents, all_steps),
        )
        data = reply.model_dump(by_alias=True)
        credits = {
            a: Credit(
                agent=a,
                credit=float(data[a]["credit"]),
                explanation=data[a]["explanation"].strip(),
                steps=list(dict.fromkeys(data[a]["steps"])),
            )
            for a in agents
        }
        return CriticReport(
            episode=trajectory.episode,
            credits=credits,
            team_return=trajectory.team_return,
            evidence=compute_evidence(trajectory),
            shown_steps=self.layout(trajectory, policies, extra_evidence)[1],
            total_steps=len(all_steps),
            errors=list(seen),
            generations=gens,
        )
