"""Does the actor follow a candidate text? Play it on the recorded decisions its direction cites.

A supported direction ("play up at steps [0, 1]", :func:`~lang_pz.optimisers.directions.direction_word`)
rests on re-runs in which the agent played that word. A candidate text that names the word is only
worth validating if the agent's *actor* then plays it: measured with the embedded SmolLM2-135M, the
text "Always play up." was played as down at 1,310 of 1,311 validation decisions, so the re-runs'
finding never reached the team and validation judged a team nobody proposed. This module checks a
candidate cheaply, before validation: the actor's own backend is asked, with the candidate text,
on the *recorded* observations of the decisions the direction cites (no episode is played), and
the share of them at which it plays the word is the text's **adherence**
(:class:`Adherence`). The textual optimiser retries a text below ``min_rate`` with the measured
adherence shown, and refuses it when no attempt reaches it
(:meth:`~lang_pz.optimisers.textual.TextualPolicyOptimiser.apply`).

This is the "measure, don't assume" rule of policy prompting (a policy prompt only matters if the
model follows it) applied to each candidate, on the decisions that matter for it. A textual
gradient's update is checked against its evidence in the spirit of TextGrad's validated updates
(Yuksekgonul et al. 2024, "TextGrad: Automatic Differentiation via Text"), with the evidence here
computed by re-runs, not judged by a model.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

from lang_pz.backends.base import LLMBackend
from lang_pz.optimisers.directions import direction_word, evidence_changes
from lang_pz.policies.base import Policy

if TYPE_CHECKING:
    from lang_pz.critics.base import CriticReport
    from lang_pz.optimisers.gradient import Gradient
    from lang_pz.trajectory import Trajectory

#: Share of the checked decisions a text must play its word at (the issue's 90 %).
MIN_ADHERENCE = 0.9
#: Most recorded decisions a candidate is played on (evenly spread over those cited).
MAX_CHECKED_DECISIONS = 16
#: Fewest: a direction citing fewer decisions is also played at the agent's other recorded
#: decisions of the same episodes (a decisive window often cites one decision, and one decision
#: tells little: the actor may play the word there and not at the next one).
MIN_CHECKED_DECISIONS = 8


class Adherence(BaseModel):
    """How the actor played one candidate text on the recorded decisions its direction cites.

    Attributes:
        text: the candidate policy text.
        word: the action word its direction supports.
        rate: share of ``decisions`` at which the actor played ``word`` (0.0 with no decision).
        decisions: how many recorded decisions were played.
        played: action -> how many of those decisions played it.
    """

    model_config = ConfigDict(frozen=True)

    text: str
    word: str
    rate: float = Field(ge=0.0, le=1.0)
    decisions: int = Field(ge=0)
    played: dict[str, int] = Field(default_factory=dict)

    def describe(self) -> str:
        """One line for the optimiser's retry prompt and the logs, e.g. ``the actor played 'up' at
        1 of 16 recorded decisions (6%) with this text (down 15)``."""
        counts = ", ".join(f"{a} {n}" for a, n in sorted(self.played.items(), key=lambda an: -an[1]))
        return (
            f"the actor played {self.word!r} at {self.played.get(self.word, 0)} of {self.decisions} recorded "
            f"decisions ({self.rate:.0%}) with this text ({counts})"
        )


@dataclass(frozen=True)
class RecordedDecision:
    """One decision of the agent as recorded in a trajectory (what its actor saw).

    Attributes:
        episode: the trajectory's episode.
        index: the agent's decision index in that episode (0-based, as ``at_steps`` counts).
        observation: the observation text the actor was shown.
        legal_actions: the action words it could choose from.
    """

    episode: int
    index: int
    observation: str
    legal_actions: tuple[str, ...]


def _steps_of(change: str) -> tuple[int, ...] | None:
    """The decision indices a supported change names (``None``: every step)."""
    if change.endswith("at every step") or "[" not in change:
        return None
    inside = change.rsplit("[", 1)[1].rstrip("]")
    return tuple(int(s) for s in inside.split(",") if s.strip())


def cited_decisions(
    agent: str,
    gradient: Gradient,
    trajectories: Sequence[Trajectory],
    reports: Sequence[CriticReport] = (),
    *,
    episodes: Collection[int] | None = None,
    limit: int = MAX_CHECKED_DECISIONS,
    at_least: int = MIN_CHECKED_DECISIONS,
) -> list[RecordedDecision]:
    """The agent's recorded decisions a supported direction cites, at most ``limit`` (evenly spread).

    The episodes are ``episodes`` when given, else those whose report supports the gradient's
    change (:func:`~lang_pz.optimisers.directions.evidence_changes`), or every trajectory when none
    does (a change remembered from an earlier iteration); the decisions are the change's ``at steps
    [...]`` of each, or all of the agent's decisions for ``at every step``; only decisions whose
    legal actions hold the word count. Fewer than ``at_least`` are topped up with the agent's
    other decisions of those episodes, in order (the texts the update stage writes are
    unconditional, "Always play up.": every decision plays them). Empty for a gradient without a
    supported word.

    Raises:
        ValueError: ``limit < 1``.
    """
    if limit < 1:
        raise ValueError(f"limit must be >= 1 recorded decision, got {limit}")
    word = direction_word(gradient)
    if word is None:
        return []
    supporting = (
        set(episodes)
        if episodes is not None
        else {r.episode for r in reports if gradient.change in evidence_changes(agent, r)}
    )
    steps = _steps_of(gradient.change)
    found: list[RecordedDecision] = []
    others: list[RecordedDecision] = []
    for traj in trajectories:
        if supporting and traj.episode not in supporting:
            continue
        mine = [s for s in traj.steps if s.agent == agent]
        for k, s in enumerate(mine):
            if s.legal_actions and word in s.legal_actions:
                d = RecordedDecision(traj.episode, k, s.observation, tuple(s.legal_actions))
                (found if steps is None or k in steps else others).append(d)
    found += others[: max(0, min(at_least, limit) - len(found))]
    if len(found) <= limit:
        return found
    return [found[round(i * (len(found) - 1) / (limit - 1))] for i in range(limit)] if limit > 1 else found[:1]


class ActorCheck:
    """Plays candidate texts on recorded decisions with the run's actor (module docstring).

    Args:
        actor: the actor's backend (each text is played by an
            :class:`~lang_pz.policies.llm.LLMPolicy` on it, as the training loop's actors are), or
            ``text -> Policy`` for actors built otherwise.
        min_rate: adherence a text needs, in (0, 1].
        max_decisions: most recorded decisions a text is played on (>= 1).

    Raises:
        ValueError: a setting out of range.
        TypeError: ``actor`` is neither a backend nor callable.
    """

    def __init__(
        self,
        actor: LLMBackend | Callable[[str], Policy],
        *,
        min_rate: float = MIN_ADHERENCE,
        max_decisions: int = MAX_CHECKED_DECISIONS,
    ) -> None:
        if not 0.0 < min_rate <= 1.0:
            raise ValueError(f"min_rate must be in (0, 1], got {min_rate}")
        if max_decisions < 1:
            raise ValueError(f"max_decisions must be >= 1, got {max_decisions}")
        if not isinstance(actor, LLMBackend) and not callable(actor):
            raise TypeError(f"actor must be an LLMBackend or a text -> Policy callable, got {actor!r}")
        self.actor = actor
        self.min_rate = min_rate
        self.max_decisions = max_decisions

    def policy(self, text: str) -> Policy:
        """The actor playing ``text``."""
        if isinstance(self.actor, LLMBackend):
            from lang_pz.policies.llm import LLMPolicy

            return LLMPolicy(text, self.actor)
        return self.actor(text)

    def measure(self, text: str, word: str, decisions: Sequence[RecordedDecision]) -> Adherence:
        """Play ``text`` at each recorded decision and count the decisions that play ``word``.

        Raises:
            LangPZError: the actor failed (e.g. :class:`~lang_pz.error.BackendError`).
        """
        pol = self.policy(text)
        pol.reset()
        played: Counter[str] = Counter()
        for d in decisions:
            played[str(pol({"text": d.observation}, {"legal_actions": list(d.legal_actions)}))] += 1
        n = len(decisions)
        return Adherence(text=text, word=word, rate=played[word] / n if n else 0.0, decisions=n, played=dict(played))

    def followed(self, adherence: Adherence) -> bool:
        """Whether a measured text reaches ``min_rate``."""
        return adherence.rate >= self.min_rate
