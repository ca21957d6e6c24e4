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
  free-form judgement from a 135M model is noise (see ``/work/shared/GUIDE.md``);
- the reply's JSON schema is built per trajectory: one required property per agent (so
  constrained decoding emits every agent exactly once and no other), credits restricted to a
  few levels in [-1, 1], cited steps restricted to steps of the trajectory, the explanation
  bounded by ``maxLength``;
- the reply is validated anyway (any backend may ignore the schema) and retried with the
  error shown; after ``max_attempts`` it raises :class:`~lang_pz.error.SchemaValidationError`.
  A reply is never handed whole to every agent, and no credit is ever filled in by default.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, create_model

from lang_pz.backends.base import Generation, GenerationRequest, LLMBackend, Message
from lang_pz.critics.counterfactual import Counterfactual
from lang_pz.error import LangPZError
from lang_pz.structured import ask_structured, attempt_sampling, rejection_note
from lang_pz.trajectory import AgentStep, Trajectory

CriticMode = Literal["central_credit", "central_global", "independent"]
CRITIC_MODES: tuple[str, ...] = ("central_credit", "central_global", "independent")
#: The reply key of the shared critique in ``"central_global"`` mode.
TEAM = "team"

#: Longest explanation accepted per agent (characters); also the schema's ``maxLength``.
EXPLANATION_MAX_CHARS = 80
#: Schema hint for explanations: words and light punctuation, no digits (measured: without
#: it SmolLM2-135M fills the string with "1.0.0.0..." until maxLength). Not enforced on
#: parsing, so models that ignore the grammar are not rejected for a digit.
EXPLANATION_PATTERN = r"^[A-Za-z][A-Za-z ,.;'-]{0,%d}$" % (EXPLANATION_MAX_CHARS - 1)
#: Most steps one credit may cite.
MAX_CITED_STEPS = 3
#: Credit levels offered to the model (the schema's ``enum``); ``None`` = any number.
DEFAULT_CREDIT_LEVELS: tuple[float, ...] = (-1.0, -0.5, 0.0, 0.5, 1.0)
#: Longest / shortest global-state text shown per step in the critic prompt (characters).
MAX_STATE_CHARS = 240
MIN_STATE_CHARS = 60


#: A worked example shown before the real episode (toy agents and task, unrelated to any
#: environment; differentiated credits that follow the computed evidence).
CRITIC_EXAMPLE = """Agents: robot_a, robot_b.
Evidence (computed from all 3 steps):
Team return: 2.0
- robot_a: return 4.0; actions push x3; parse errors 0
- robot_b: return -2.0; actions wait x3; parse errors 0
Steps (all 3):
Step 0: The box is 3 m from the goal.
  actions: robot_a push; robot_b wait
Step 1: The box is 2 m from the goal.
  actions: robot_a push; robot_b wait
Step 2: The box is 1 m from the goal.
  actions: robot_a push; robot_b wait
Credits as JSON:
{"robot_a": {"credit": 1.0, "steps": [0, 1], "explanation": "highest return; pushed at every step"}, \
"robot_b": {"credit": -0.5, "steps": [1], "explanation": "negative return; only waited"}}"""


#: The worked example in ``"central_global"`` mode: the same toy episode, one shared critique.
GLOBAL_EXAMPLE = CRITIC_EXAMPLE.rsplit("Credits as JSON:", 1)[0] + """Credits as JSON:
{"team": {"credit": 0.5, "steps": [0, 1], "explanation": "the box moved, but only one robot pushed"}}"""


class Credit(BaseModel):
    """The critic's credit for one agent over one trajectory.

    Attributes:
        agent: the agent id.
        credit: contribution to the team outcome in [-1, 1] (positive = helped).
        explanation: why, in a few words (at most :data:`EXPLANATION_MAX_CHARS` characters).
        steps: trajectory steps that justify the credit (each exists in the trajectory).
    """

    model_config = ConfigDict(frozen=True)

    agent: str
    credit: float = Field(ge=-1.0, le=1.0)
    explanation: str = Field(min_length=1, max_length=EXPLANATION_MAX_CHARS)
    steps: list[int] = Field(default_factory=list, max_length=MAX_CITED_STEPS)


class AgentEvidence(BaseModel):
    """Facts the system computed about one agent's play (shown to the critic, kept in the report).

    Attributes:
        agent_return: the agent's episode return.
        action_counts: action text -> how many times it was taken.
        parse_errors: how many of its outputs could not be parsed into an action.
        n_steps: how many decisions it made.
    """

    agent_return: float
    action_counts: dict[str, int]
    parse_errors: int
    n_steps: int


class CriticReport(BaseModel):
    """The critic's assessment of one trajectory.

    Attributes:
        episode: the trajectory's episode index.
        credits: agent -> :class:`Credit`, one for every agent that acted (in
            ``"central_global"`` mode every agent holds the same shared critique).
        team_return: the trajectory's team return.
        mode: the critic mode that wrote the report.
        counterfactuals: the counterfactual probes shown to the critic
            (:meth:`~lang_pz.critics.counterfactual.Counterfactual.as_dict` each).
        evidence: agent -> the computed :class:`AgentEvidence` shown to the critic.
        shown_steps: the steps rendered in the prompt (after subsampling).
        total_steps: how many distinct steps the trajectory has.
        errors: validation errors of the rejected attempts, oldest first (empty if the first
            reply validated).
        generations: every :class:`~lang_pz.backends.base.Generation` made, oldest first.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    episode: int
    credits: dict[str, Credit]
    team_return: float
    mode: str = "central_credit"
    counterfactuals: list[dict[str, Any]] = Field(default_factory=list)
    evidence: dict[str, AgentEvidence] = Field(default_factory=dict)
    shown_steps: list[int] = Field(default_factory=list)
    total_steps: int = 0
    errors: list[str] = Field(default_factory=list)
    generations: list[Generation] = Field(default_factory=list)

    @property
    def attempts(self) -> int:
        """LLM calls made (1 + rejected replies)."""
        return len(self.generations)

    @property
    def usage(self) -> dict[str, float]:
        """Summed prompt/completion tokens and latency of this report's calls."""
        return {
            "calls": len(self.generations),
            "prompt_tokens": sum(g.prompt_tokens for g in self.generations),
            "completion_tokens": sum(g.completion_tokens for g in self.generations),
            "latency_s": round(sum(g.latency_s for g in self.generations), 3),
        }


def subsample_steps(steps: Sequence[int], k: int) -> list[int]:
    """At most ``k`` of ``steps`` (sorted, distinct), evenly spaced, first and last included."""
    uniq = sorted(set(steps))
    if k <= 0:
        raise ValueError(f"k must be > 0, got {k}")
    if len(uniq) <= k:
        return uniq
    idx = np.unique(np.linspace(0, len(uniq) - 1, k).round().astype(int))
    return [uniq[i] for i in idx]


def compute_evidence(trajectory: Trajectory) -> dict[str, AgentEvidence]:
    """Per agent: return, action counts, parse errors and number of decisions."""
    out: dict[str, AgentEvidence] = {}
    for agent in trajectory.agents:
        steps = trajectory.agent_steps(agent)
        counts = Counter(shown_action(s) for s in steps)
        ret = trajectory.returns.get(agent, float(sum(s.reward for s in steps)))
        out[agent] = AgentEvidence(
            agent_return=float(ret),
            action_counts=dict(counts.most_common()),
            parse_errors=sum(s.parse_error is not None for s in steps),
            n_steps=len(steps),
        )
    return out


def shown_action(step: AgentStep) -> str:
    """The action as the critic sees it: the policy's own text when it parsed (e.g. ``"up"``
    rather than the environment's index ``2``), else the applied action."""
    raw = " ".join(str(step.raw_output).split())
    if step.parse_error is None and raw:
        return _clip(raw, 40)
    return _clip(_action_text(step.action), 40)


def _action_text(action: Any) -> str:
    if isinstance(action, float):
        return f"{action:.2f}"
    if isinstance(action, (list, tuple)):
        return "[" + ", ".join(_action_text(a) for a in action) + "]"
    return str(action)


def _clip(text: str, n: int) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[: n - 3] + "..."


def _fmt(x: float) -> str:
    return str(round(float(x), 2))


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
    step_item: Any = Annotated[int, Field(json_schema_extra={"enum": sorted(set(steps))})] if steps else int
    credit_extra = {"enum": [float(c) for c in credit_levels]} if credit_levels else None
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
        self.mode = mode
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
        """The trajectory as the critic sees it, and the steps shown.

        Policies, the computed evidence (with ``extra_evidence`` lines, e.g. counterfactual
        re-runs, after the per-agent facts), then per shown step the global state text and each
        agent's action. Steps are evenly subsampled to ``max_prompt_steps``; if the rendering
        would exceed ``max_prompt_chars``, state texts are shortened (down to
        :data:`MIN_STATE_CHARS`) and then fewer steps are shown — the text says which.
        """
        agents = trajectory.agents
        all_steps = sorted({s.step for s in trajectory.steps})
        ev = compute_evidence(trajectory)
        head = [f"Agents: {', '.join(agents)}."]
        if policies:
            head.append("Policies:")
            head += [f"- {a}: {_clip(policies[a], 200)}" for a in agents if a in policies]
        head.append(f"Evidence (computed from all {len(all_steps)} steps):")
        head.append(f"Team return: {_fmt(trajectory.team_return)}")
        for a in agents:
            e = ev[a]
            acts = ", ".join(f"{k} x{v}" for k, v in e.action_counts.items())
            head.append(f"- {a}: return {_fmt(e.agent_return)}; actions {acts}; parse errors {e.parse_errors}")
        if extra_evidence:
            head.append("Counterfactual re-runs (same seed, computed):")
            head += [f"- {line}" for line in extra_evidence]
        acted: dict[int, list[str]] = {}
        for s in trajectory.steps:
            err = f" (unparsable output {_clip(s.raw_output, 30)!r})" if s.parse_error is not None else ""
            acted.setdefault(s.step, []).append(f"{s.agent} {shown_action(s)}{err}")
        action_lines = {t: "  actions: " + "; ".join(v) for t, v in acted.items()}

        shown = subsample_steps(all_steps, self.max_prompt_steps)
        budget = self.max_prompt_chars - sum(len(x) + 1 for x in head) - 80
        while True:
            fixed = sum(len(action_lines[t]) + len(f"Step {t}: ") + 2 for t in shown)
            state_chars = min(MAX_STATE_CHARS, (budget - fixed) // max(1, len(shown)))
            if state_chars >= MIN_STATE_CHARS or len(shown) <= 2:
                state_chars = max(state_chars, MIN_STATE_CHARS)
                break
            shown = subsample_steps(all_steps, max(2, len(shown) * 2 // 3))
        note = []
        if len(shown) < len(all_steps):
            note.append(f"{len(shown)} of {len(all_steps)}, evenly spaced; others omitted")
        else:
            note.append(f"all {len(all_steps)}")
        longest = max((len(" ".join(trajectory.states.get(t, "").split())) for t in shown), default=0)
        if longest > state_chars:
            note.append(f"states cut to {state_chars} characters")
        lines = head + [f"Steps ({'; '.join(note)}):"]
        for t in shown:
            state = trajectory.states.get(t)
            lines.append(f"Step {t}: {_clip(state, state_chars)}" if state else f"Step {t}:")
            lines.append(action_lines[t])
        return "\n".join(lines), shown

    def render(
        self, trajectory: Trajectory, policies: Mapping[str, str] | None = None, extra_evidence: Sequence[str] = ()
    ) -> str:
        """The trajectory as the critic sees it (see :meth:`layout`)."""
        return self.layout(trajectory, policies, extra_evidence)[0]

    def _instructions(self, agents: Sequence[str]) -> str:
        levels = (
            ", ".join(_fmt(c) for c in self.credit_levels)
            if self.credit_levels
            else "a number from -1 to 1"
        )
        if self.mode == "central_global":
            return (
                "You are the team's critic. Read how the episode went and give the whole team one "
                f"shared credit for the team result: {levels} (positive: good, negative: bad), "
                f"under the key \"{TEAM}\", with a short explanation (at most "
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
            **attempt_sampling(errors, self.temperature, self.retry_temperature, self.seed),
        }
        instructions = self._instructions(agents)
        example = GLOBAL_EXAMPLE if self.mode == "central_global" else CRITIC_EXAMPLE
        fmt = getattr(self.backend, "prompt_format", "chat")
        if fmt == "chat":
            system = f"{instructions}\n\nExample:\n{example}"
            return GenerationRequest(
                messages=(Message("system", system), Message("user", body + fix)), **common
            )
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
                raise ValueError(
                    f"{a}: cites step(s) {bad} that are not in the trajectory (steps {lo} to {hi})"
                )
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
        cf = [c.as_dict() for c in counterfactuals]
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


def own_view(trajectory: Trajectory, agent: str) -> Trajectory:
    """The part of ``trajectory`` one agent took part in: its own steps, its own observations
    in place of the global state, its own return (the ``"independent"`` critic's view)."""
    steps = trajectory.agent_steps(agent)
    return Trajectory(
        episode=trajectory.episode,
        seed=trajectory.seed,
        steps=steps,
        states={s.step: s.observation for s in steps},
        returns={agent: trajectory.returns.get(agent, float(sum(s.reward for s in steps)))},
        finished=trajectory.finished,
    )
