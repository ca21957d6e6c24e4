"""What every critic returns, and the interface a critic implements.

A critic reads a whole trajectory after the episode (centralised training: it may see the
global state, which no policy sees at run time) and assigns credit to the agents that acted,
in words: for each agent a signed credit, a short explanation and the steps that justify it
(LangMARL's "credit assignment in language"). :class:`Critic` is the protocol the training
loop calls (:func:`lang_pz.training.assess`); :class:`~lang_pz.critics.central.CentralCritic`
is the LLM implementation.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, TypeVar, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from lang_pz.backends.base import Generation
from lang_pz.critics.counterfactual import Counterfactual
from lang_pz.structured import generation_usage
from lang_pz.trajectory import AgentStep, Trajectory

#: Longest explanation accepted per agent (characters); also the schema's ``maxLength``.
EXPLANATION_MAX_CHARS = 80
#: Most steps one credit may cite.
MAX_CITED_STEPS = 3


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
        counterfactuals: the counterfactual probes shown to the critic (computed evidence).
        evidence: agent -> the computed :class:`AgentEvidence` shown to the critic.
        shown_steps: the steps rendered in the prompt (after subsampling).
        total_steps: how many distinct steps the trajectory has.
        errors: validation errors of the rejected attempts, oldest first (empty if the first
            reply validated); the re-run critics add a note per agent whose words contradicted
            its re-runs and were replaced (:mod:`lang_pz.critics.claims`).
        generations: every :class:`~lang_pz.backends.base.Generation` made, oldest first.
        verdict: the agents the report blames, each with a negative credit
            (:mod:`lang_pz.critics.significance`): ``[]`` is "no one" (every credit 0.0), ``None``
            a critic that gives no verdict (the LLM critics, or a re-run critic without the
            significance rule: read the lowest credit).
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    episode: int
    credits: dict[str, Credit]
    team_return: float
    mode: str = "central_credit"
    counterfactuals: list[Counterfactual] = Field(default_factory=list)
    evidence: dict[str, AgentEvidence] = Field(default_factory=dict)
    shown_steps: list[int] = Field(default_factory=list)
    total_steps: int = 0
    errors: list[str] = Field(default_factory=list)
    generations: list[Generation] = Field(default_factory=list)
    verdict: list[str] | None = None

    @property
    def attempts(self) -> int:
        """LLM calls made (1 + rejected replies)."""
        return len(self.generations)

    @property
    def usage(self) -> dict[str, float]:
        """Summed prompt/completion tokens and latency of this report's calls."""
        return generation_usage(self.generations)


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


#: What a critic is shown about an episode (a :class:`Counterfactual`, a skill's measured utility, ...).
E_contra = TypeVar("E_contra", contravariant=True)
#: What a critic returns per episode (a :class:`CriticReport`, a skill critic's report, ...).
R_co = TypeVar("R_co", bound=BaseModel, covariant=True)
E_co = TypeVar("E_co", covariant=True)


@runtime_checkable
class Critic(Protocol[E_contra, R_co]):
    """The interface of a critic: one trajectory (and the evidence computed about it) in, one
    report out. Generic over the evidence items it reads (``E``: a
    :class:`~lang_pz.critics.counterfactual.Counterfactual` for the policy critics) and the
    report it writes (``R``: :class:`CriticReport` for them); :func:`lang_pz.training.assess`
    runs any of them.

    Attributes:
        mode: the critic's mode name, recorded in each report and the run config.
    """

    mode: str

    def assess(
        self,
        trajectory: Trajectory,
        policies: Mapping[str, str] | None = None,
        counterfactuals: Sequence[E_contra] = (),
    ) -> R_co:
        """Credit the agents that acted in ``trajectory``.

        Args:
            trajectory: the finished episode.
            policies: agent -> its current policy text (may be shown to an LLM critic).
            counterfactuals: the evidence computed about this episode (re-runs of its seed).

        Raises:
            LangPZError: the critic cannot assess this trajectory (e.g. a reply that never
                validated: :class:`~lang_pz.error.SchemaValidationError`).
        """
        ...


#: The critic of text policies: counterfactual re-runs in, a :class:`CriticReport` out.
PolicyCritic = Critic[Counterfactual, CriticReport]


@runtime_checkable
class EpisodeEvidence(Protocol[E_co]):
    """The evidence computed about one episode, as :func:`lang_pz.training.assess` hands it to a
    critic: its episode number and the items the critic is shown."""

    @property
    def episode(self) -> int:
        """The factual episode's number."""
        ...

    def shown(self) -> Sequence[E_co]:
        """The items the critic sees (evidence may hold more than it shows)."""
        ...
