"""The centralised language critic: reads a whole trajectory, credits each agent in words.

LangMARL (centralised training, decentralised execution): the critic sees what no agent saw
during the episode (the global state at every step and every agent's action) and assigns
each agent a credit in [-1, 1] with an explanation that cites steps (language credit
assignment). Its prompt also carries evidence the system computed (returns, action counts,
parse errors), since a small model's unaided judgement is unreliable.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, Field

from lang_pz.backends.base import Generation, GenerationRequest, LLMBackend, Message
from lang_pz.structured import ask_structured, retry_note
from lang_pz.trajectory import Trajectory

EXPLANATION_MAX = 100


class Credit(BaseModel):
    """One agent's credit for one trajectory.

    Attributes:
        agent: agent id.
        credit: in [-1, 1]; positive = helped the team, negative = hurt it.
        explanation: why, in words, citing steps.
        steps: the step indices the explanation rests on (each exists in the trajectory).
    """

    agent: str
    credit: float = Field(ge=-1.0, le=1.0)
    explanation: str = Field(min_length=1, max_length=EXPLANATION_MAX)
    steps: list[int] = Field(default_factory=list, max_length=3)


class _AgentJudgement(BaseModel):
    credit: float = Field(ge=-1.0, le=1.0)
    explanation: str = Field(min_length=1, max_length=EXPLANATION_MAX)
    steps: list[int] = Field(default_factory=list, max_length=3)


class CriticReport(BaseModel):
    """The critic's verdict on one trajectory: a :class:`Credit` per agent that acted."""

    episode: int
    team_return: float
    credits: dict[str, Credit]
    attempts: int = 1


def _reply_model(agents: list[str]) -> type[BaseModel]:
    from pydantic import create_model

    # Field names are positional; the JSON keys (aliases) are the agent ids, whatever they are.
    fields: dict[str, Any] = {f"agent_{i}": (_AgentJudgement, Field(alias=a)) for i, a in enumerate(agents)}
    return create_model("CriticReply", **fields)  # type: ignore[call-overload]


def render_trajectory(trajectory: Trajectory, max_steps: int) -> str:
    """The episode as text for the critic: per step, the global state then each agent's action.

    At most ``max_steps`` steps are shown, evenly subsampled (the text says so).
    """
    steps = sorted({s.step for s in trajectory.steps})
    shown = steps
    if len(steps) > max_steps:
        idx = [round(i * (len(steps) - 1) / (max_steps - 1)) for i in range(max_steps)]
        shown = [steps[i] for i in sorted(set(idx))]
    by_step: dict[int, list[str]] = {}
    for s in trajectory.steps:
        if s.step in shown:
            err = " (unparseable, fallback applied)" if s.parse_error else ""
            by_step.setdefault(s.step, []).append(f"{s.agent}: {s.raw_output.strip()[:40]!r}{err}")
    lines = []
    if len(shown) < len(steps):
        lines.append(f"({len(shown)} of {len(steps)} steps shown, evenly spaced.)")
    for t in shown:
        state = trajectory.states.get(t)
        lines.append(f"Step {t}: {state}" if state else f"Step {t}:")
        lines.append("  " + "; ".join(by_step.get(t, [])))
    return "\n".join(lines)


def evidence(trajectory: Trajectory) -> str:
    """Facts the system computed about the episode, one line per agent."""
    lines = [f"Team return: {trajectory.team_return:.1f}."]
    for agent in trajectory.agents:
        mine = trajectory.agent_steps(agent)
        counts = Counter(str(s.action) for s in mine)
        raw = Counter(s.raw_output.strip()[:20] for s in mine if not s.parse_error)
        errors = sum(s.parse_error is not None for s in mine)
        lines.append(
            f"{agent}: return {trajectory.returns.get(agent, 0.0):.1f}; {len(mine)} actions: "
            + ", ".join(f"{k!r} x{v}" for k, v in raw.most_common())
            + (f"; {errors} unparseable" if errors else "")
            + f" (env actions {dict(counts)})"
        )
    return "\n".join(lines)


#: A worked example of the reply form, from an unrelated toy game (it fixes the style).
EXAMPLE = (
    '{"robot_0": {"credit": 0.8, "explanation": "Step 2: carried the box to the door, which won the game.", '
    '"steps": [2]}, "robot_1": {"credit": -0.5, "explanation": "Steps 1 and 3: blocked the door.", '
    '"steps": [1, 3]}}'
)


class CentralCritic:
    """Centralised language critic (LangMARL, credit assignment under CTDE).

    Args:
        backend: the critic's LLM.
        max_attempts: attempts per trajectory before the reply is reported as invalid.
        max_prompt_steps: most steps rendered into the prompt (evenly subsampled).
        max_tokens: bound on the reply length (default: room for every agent's fields).
    """

    def __init__(self, backend: LLMBackend, *, max_attempts: int = 3, max_prompt_steps: int = 8,
                 max_tokens: int | None = None) -> None:
        self.backend = backend
        self.max_attempts = max_attempts
        self.max_prompt_steps = max_prompt_steps
        self.max_tokens = max_tokens
        self.generations: list[Generation] = []

    def prompt(self, trajectory: Trajectory, policies: Mapping[str, str] | None, errors: list[str]) -> str:
        """The critic's prompt (see :func:`render_trajectory` and :func:`evidence`)."""
        pol = "\n".join(f"{a}: {p}" for a, p in (policies or {}).items())
        return (
            "You are the critic of a team of agents. Judge how each agent's actions helped or hurt "
            "the team's outcome.\n\n"
            + (f"Policies:\n{pol}\n\n" if pol else "")
            + f"Episode {trajectory.episode}:\n{render_trajectory(trajectory, self.max_prompt_steps)}\n\n"
            + f"Evidence:\n{evidence(trajectory)}\n\n"
            + "For every agent give a credit from -1 (hurt the team) to 1 (helped), a short explanation "
            + "that cites step numbers, and those steps. Example of the form, for another game:\n"
            + EXAMPLE + "\n"
            + retry_note(errors)
            + "JSON:\n"
        )

    def assess(self, trajectory: Trajectory, policies: Mapping[str, str] | None = None) -> CriticReport:
        """Credit every agent that acted in ``trajectory``.

        Raises:
            ValueError: the trajectory has no agent steps.
            SchemaValidationError: no valid reply after ``max_attempts`` (a missing or unknown
                agent, a credit outside [-1, 1], a cited step that does not exist).
            BackendError: the backend failed.
        """
        agents = trajectory.agents
        if not agents:
            raise ValueError(f"episode {trajectory.episode} has no agent steps to judge")
        model = _reply_model(agents)
        max_tokens = self.max_tokens or 40 + len(agents) * (EXPLANATION_MAX + 40)
        schema = model.model_json_schema()
        valid_steps = {s.step for s in trajectory.steps}

        def build(errors: list[str]) -> GenerationRequest:
            text = self.prompt(trajectory, policies, errors)
            if self.backend.prompt_format == "chat":
                return GenerationRequest(messages=(Message("user", text),), json_schema=schema,
                                         max_tokens=max_tokens)
            return GenerationRequest(prompt=text, json_schema=schema, max_tokens=max_tokens)

        def check(reply: BaseModel) -> None:
            for i, agent in enumerate(agents):
                bad = [t for t in getattr(reply, f"agent_{i}").steps if t not in valid_steps]
                if bad:
                    raise ValueError(f"{agent} cites step(s) {bad}, which do not exist (steps are "
                                     f"{min(valid_steps)}-{max(valid_steps)})")

        reply, gens = ask_structured(self.backend, build, model, what=f"critic reply for episode "
                                     f"{trajectory.episode}", max_attempts=self.max_attempts, validate=check)
        self.generations.extend(gens)
        credits = {a: Credit(agent=a, **getattr(reply, f"agent_{i}").model_dump()) for i, a in enumerate(agents)}
        return CriticReport(episode=trajectory.episode, team_return=trajectory.team_return,
                            credits=credits, attempts=len(gens))
