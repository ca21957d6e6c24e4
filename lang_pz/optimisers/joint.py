"""Joint changes of two agents: one candidate of two texts when only their joint re-run helps.

When one fault masks another, neither agent's change recovers the loss alone, so a per-agent
optimiser finds no supported direction for them (the single-agent re-runs gain nothing) and
validation, judging one agent at a time, would reject each half. The coalition critic
(:mod:`lang_pz.critics.coalition`; Shapley counterfactual credits, Li et al. 2021) re-runs pairs
of agents' windows together; a pair whose joint re-run recovers more than either member alone,
at least one of which gains nothing alone, is a change the evidence supports *as a pair*.
:func:`pair_changes` reads those pairs from a report; :func:`joint_updates` rewrites both texts
along the pair's words (each with the update stage and the actor check of
:meth:`~lang_pz.optimisers.textual.TextualPolicyOptimiser.apply`) and returns them as one
:class:`JointUpdate`, to be validated together (one acceptance group of both agents).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from lang_pz.critics.counterfactual import NOT_ACTIONS, Counterfactual
from lang_pz.optimisers.adherence import cited_decisions
from lang_pz.optimisers.gradient import Gradient, PolicyUpdate

if TYPE_CHECKING:
    from lang_pz.optimisers.textual import TextualPolicyOptimiser
    from lang_pz.trajectory import Trajectory


class Reruns(Protocol):
    """An episode's re-runs: a :class:`~lang_pz.critics.base.CriticReport` or a
    :class:`~lang_pz.critics.counterfactual.Evidence`."""

    @property
    def episode(self) -> int: ...

    @property
    def counterfactuals(self) -> Sequence[Counterfactual]: ...


#: One member of a coalition re-run's ``replacement``: ``"piston_1: down@steps 0-4"``.
_PART = re.compile(r"^(?P<agent>[^:;@]+): (?P<word>[^@;]+)@(?P<span>every step|steps? [0-9, -]+)$")


def _span_steps(span: str) -> tuple[int, ...] | None:
    """``"every step"`` -> ``None``; ``"step 3"``, ``"steps 3-5"``, ``"steps 1,4"`` -> the indices."""
    if span == "every step":
        return None
    body = span.split(" ", 1)[1]
    if "-" in body:
        lo, hi = (int(x) for x in body.split("-"))
        return tuple(range(lo, hi + 1))
    return tuple(int(x) for x in body.split(","))


@dataclass(frozen=True)
class PairChange:
    """Two agents whose joint re-run recovers what neither recovers alone.

    Attributes:
        agents: the two agents, sorted.
        words: agent -> the action word it played in the joint re-run.
        steps: agent -> its replaced decisions (``None``: every decision).
        gain: the joint re-run's change of the objective.
        alone: agent -> its best single-agent re-run gain (0.0 with none).
        episode: the report's episode.
    """

    agents: tuple[str, str]
    words: dict[str, str]
    steps: dict[str, tuple[int, ...] | None]
    gain: float
    alone: dict[str, float]
    episode: int

    def change(self, agent: str) -> str:
        """The member's direction in the optimiser's supported form (``play W at steps [...]``)."""
        at = self.steps[agent]
        return f"play {self.words[agent]} " + ("at every step" if at is None else f"at steps {list(at)}")


def pair_changes(report: Reruns, *, margin: float = 0.0) -> list[PairChange]:
    """The two-agent re-runs of ``report`` (a critic report or an episode's evidence) that the
    per-agent evidence cannot propose, best first.

    A pair qualifies when its joint re-run gains more than ``margin`` over the better member's own
    best single re-run (and more than 0), and at least one member gains nothing alone (no single
    re-run of it beat what it played): that member's change only helps with the other's, which
    is what no per-agent update finds. Each member's part must name an action word.

    Raises:
        ValueError: ``margin < 0``.
    """
    if margin < 0:
        raise ValueError(f"margin must be >= 0, got {margin}")
    alone: dict[str, float] = {}
    for c in report.counterfactuals:
        if len(c.agents) == 1 and c.replacement not in NOT_ACTIONS:
            alone[c.agents[0]] = max(alone.get(c.agents[0], 0.0), c.delta)
    out = []
    for c in report.counterfactuals:
        if len(c.agents) != 2 or c.delta <= 0:
            continue
        parts = [_PART.match(p.strip()) for p in c.replacement.split(";")]
        if len(parts) != 2 or not all(parts):
            continue
        words = {m.group("agent"): m.group("word") for m in parts if m}
        if set(words) != set(c.agents) or any(w in NOT_ACTIONS for w in words.values()):
            continue
        single = {a: alone.get(a, 0.0) for a in c.agents}
        if min(single.values()) > 0 or c.delta <= max(single.values()) + margin:
            continue
        a, b = sorted(c.agents)
        steps = {m.group("agent"): _span_steps(m.group("span")) for m in parts if m}
        out.append(PairChange((a, b), words, steps, c.delta, single, report.episode))
    return sorted(out, key=lambda p: -p.gain)


def _words(agent: str, report: Reruns, word: str) -> list[str]:
    """The agent's action words the re-runs name (its single re-runs' words and the pair's)."""
    probed = {c.replacement for c in report.counterfactuals if c.agents == (agent,) and c.replacement not in NOT_ACTIONS}
    return sorted(probed | {word})


@dataclass
class JointUpdate:
    """Both texts of one :class:`PairChange`, to be validated together.

    Attributes:
        pair: the evidence.
        updates: agent -> its :class:`~lang_pz.optimisers.gradient.PolicyUpdate` (the member's
            ``adherence`` / ``rejected`` as for a single update).
    """

    pair: PairChange
    updates: dict[str, PolicyUpdate] = field(default_factory=dict)

    @property
    def agents(self) -> list[str]:
        """The two agents (the acceptance group)."""
        return list(self.pair.agents)

    @property
    def changed(self) -> bool:
        """Whether both texts changed (a joint change is proposed whole or not at all)."""
        return len(self.updates) == 2 and all(u.changed for u in self.updates.values())

    @property
    def texts(self) -> dict[str, str]:
        """agent -> the candidate text."""
        return {a: u.new for a, u in self.updates.items()}


def joint_updates(
    optimiser: TextualPolicyOptimiser,
    policies: Mapping[str, str],
    reports: Sequence[Reruns],
    trajectories: Sequence[Trajectory] | None = None,
    *,
    skip: Sequence[str] = (),
    margin: float = 0.0,
) -> list[JointUpdate]:
    """A :class:`JointUpdate` per disjoint best pair of :func:`pair_changes` over ``reports`` (critic
    reports or the iteration's :class:`~lang_pz.critics.counterfactual.Evidence`).

    Pairs are taken best gain first; a pair with an agent in ``skip`` (e.g. one whose own
    candidate is already proposed), without a policy in ``policies``, or sharing an agent with a
    pair already taken is left out. Each member's text is the update stage's rewrite along
    :meth:`PairChange.change` (a supported gradient), checked by the optimiser's ``actor`` on the
    member's recorded decisions the pair replaced (of ``trajectories``, else those the
    optimiser recorded). A member the optimiser cannot rewrite leaves the joint update unchanged.

    Raises:
        LangPZError: the actor failed while checking a text.
    """
    from lang_pz.error import SchemaValidationError

    taken: set[str] = set(skip)
    out = []
    pairs = sorted((p for r in reports for p in pair_changes(r, margin=margin)), key=lambda p: -p.gain)
    by_episode = {r.episode: r for r in reports}
    found = optimiser.recorded if trajectories is None else trajectories
    for pair in pairs:
        if taken & set(pair.agents) or not all(a in policies for a in pair.agents):
            continue
        taken |= set(pair.agents)
        joint = JointUpdate(pair)
        for a in pair.agents:
            grad = Gradient(
                agent=a,
                keep="",
                change=pair.change(a),
                drop="",
                supported=True,
                words=_words(a, by_episode[pair.episode], pair.words[a]),
            )
            decisions = (
                cited_decisions(a, grad, found, episodes=[pair.episode], limit=optimiser.actor.max_decisions)
                if optimiser.actor is not None
                else []
            )
            try:
                joint.updates[a] = optimiser.apply(a, policies[a], grad, decisions)
            except SchemaValidationError:
                break
        out.append(joint)
    return out
