"""Edit directions aggregated across trajectories, skills and agents, with a decayed memory.

What the operators (:mod:`lang_pz.skills.operators`) read: per skill (``scope/name``) how often
it was offered and invoked, its measured utilities (withheld-skill re-runs), the critic's
contributions and utility deltas, and its suggested edits; per agent how often the critic said
it lacked a skill, and for which capabilities. Numbers from every trajectory of a batch are
summed, across agents and topologies (the task envs' ``turns``) alike.

Momentum as in :class:`lang_pz.optimisers.momentum.Momentum` (MASkills' and TextGrad's
decayed memory of earlier feedback): each :meth:`SkillMemory.update` first multiplies
everything remembered by ``beta`` and forgets text items whose weight falls below
``min_weight``, then adds the new batch at weight 1. That class stores per-agent policy
:class:`~lang_pz.optimisers.textual.Gradient` s only, so this one keeps the same rule for
numbers and texts per skill. A skill's numeric record restarts when its version changes (the
evidence was about the old text); its suggested edits are kept (the direction of change).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from lang_pz.skills.critic import SkillCriticReport
from lang_pz.skills.evidence import SkillUtility
from lang_pz.skills.library import SkillEdit, SkillLibrary
from lang_pz.skills.policy import usage_counts
from lang_pz.trajectory import Trajectory

#: Most remembered texts per skill / agent.
MAX_TEXTS = 6


def skill_key(scope: str, name: str) -> str:
    return f"{scope}/{name}"


def _push_text(items: list[list[Any]], text: str) -> None:
    text = " ".join(text.split())
    if not text:
        return
    for it in items:
        if it[1].lower() == text.lower():
            it[0] = round(it[0] + 1.0, 6)
            return
    items.append([1.0, text])


@dataclass
class SkillRecord:
    """Decayed evidence about one skill (weights: 1 per item this iteration, x beta per iteration).

    Attributes:
        version: the skill version the numbers are about.
        offered, invoked: decisions that offered / invoked it.
        contributions: critic label -> weight.
        critic_sum, critic_n: weighted sum and weight of the critic's utility deltas.
        measured_sum, measured_n: weighted sum and weight of measured utilities.
        edits: ``[weight, suggested edit]``, heaviest first.
    """

    version: int = 1
    offered: float = 0.0
    invoked: float = 0.0
    contributions: dict[str, float] = field(default_factory=dict)
    critic_sum: float = 0.0
    critic_n: float = 0.0
    measured_sum: float = 0.0
    measured_n: float = 0.0
    edits: list[list[Any]] = field(default_factory=list)

    @property
    def measured(self) -> float | None:
        """Mean measured utility (``None``: never measured)."""
        return self.measured_sum / self.measured_n if self.measured_n else None

    @property
    def critic(self) -> float | None:
        """Mean critic utility delta (``None``: never judged)."""
        return self.critic_sum / self.critic_n if self.critic_n else None

    def share(self, label: str) -> float:
        """The weight share of one contribution label among the critic's verdicts (0 if none)."""
        total = sum(self.contributions.values())
        return self.contributions.get(label, 0.0) / total if total else 0.0

    def decay(self, beta: float, min_weight: float) -> None:
        for k in ("offered", "invoked", "critic_sum", "critic_n", "measured_sum", "measured_n"):
            setattr(self, k, round(getattr(self, k) * beta, 6))
        self.contributions = {k: round(v * beta, 6) for k, v in self.contributions.items()}
        self.edits = [[round(w * beta, 6), t] for w, t in self.edits if w * beta >= min_weight]

    def restart(self, version: int) -> None:
        edits = self.edits
        self.__init__(version=version)  # type: ignore[misc]
        self.edits = edits


@dataclass
class AgentRecord:
    """Decayed residuals of one agent: episodes judged, weight of "needs a skill", capabilities."""

    episodes: float = 0.0
    needs: float = 0.0
    capabilities: list[list[Any]] = field(default_factory=list)

    @property
    def need_share(self) -> float:
        return self.needs / self.episodes if self.episodes else 0.0


@dataclass
class SkillMemory:
    """Per-skill and per-agent decayed evidence (module docstring).

    Args:
        beta: decay per iteration in [0, 1) (0 = this batch only).
        min_weight: remembered texts lighter than this are forgotten (> 0).

    Raises:
        ValueError: ``beta`` or ``min_weight`` out of range.
    """

    beta: float = 0.5
    min_weight: float = 0.2
    skills: dict[str, SkillRecord] = field(default_factory=dict)
    agents: dict[str, AgentRecord] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not 0.0 <= self.beta < 1.0:
            raise ValueError(f"beta must be in [0, 1), got {self.beta}")
        if not 0.0 < self.min_weight <= 1.0:
            raise ValueError(f"min_weight must be in (0, 1], got {self.min_weight}")

    def record(self, scope: str, name: str) -> SkillRecord:
        """The record of a skill (an empty one if never seen)."""
        return self.skills.get(skill_key(scope, name), SkillRecord())

    def update(
        self,
        library: SkillLibrary,
        trajectories: Sequence[Trajectory],
        reports: Iterable[SkillCriticReport] = (),
        utilities: Iterable[SkillUtility] = (),
    ) -> SkillMemory:
        """Decay what is remembered, then add one batch (in place; returns ``self``).

        Args:
            library: the library the batch was played with (skills no longer in it are
                forgotten; a changed version restarts a skill's numbers).
            trajectories: the batch's episodes (offer and invocation counts).
            reports: the skill critic's reports of those episodes.
            utilities: measured utilities of those episodes.
        """
        present = {skill_key(sc, s.name): s.version for sc, s in library}
        self.skills = {k: r for k, r in self.skills.items() if k in present}
        for rec in self.skills.values():
            rec.decay(self.beta, self.min_weight)
        for arec in self.agents.values():
            arec.episodes, arec.needs = round(arec.episodes * self.beta, 6), round(arec.needs * self.beta, 6)
            arec.capabilities = [
                [round(w * self.beta, 6), t] for w, t in arec.capabilities if w * self.beta >= self.min_weight
            ]
        for key, version in present.items():
            rec = self.skills.setdefault(key, SkillRecord(version=version))
            if rec.version != version:
                rec.restart(version)
        invoked, offered = usage_counts(trajectories)
        for (scope, name), n in offered.items():
            if skill_key(scope, name) in self.skills:
                self.skills[skill_key(scope, name)].offered += n
        for (scope, name), n in invoked.items():
            if skill_key(scope, name) in self.skills:
                self.skills[skill_key(scope, name)].invoked += n
        for u in utilities:
            got = self.skills.get(skill_key(u.scope, u.skill))
            if got is not None and got.version == u.version:
                got.measured_sum += u.utility
                got.measured_n += 1
        for report in reports:
            for c in report.uses:
                got = self.skills.get(skill_key(c.scope, c.skill))
                if got is None or got.version != c.version:
                    continue
                got.contributions[c.contribution] = got.contributions.get(c.contribution, 0.0) + 1.0
                got.critic_sum += c.utility_delta
                got.critic_n += 1
                _push_text(got.edits, c.suggested_edit)
            for agent, r in report.residuals.items():
                arec = self.agents.setdefault(agent, AgentRecord())
                arec.episodes += 1
                if r.needs_skill:
                    arec.needs += 1
                    _push_text(arec.capabilities, r.capability)
        entries: list[SkillRecord | AgentRecord] = [*self.skills.values(), *self.agents.values()]
        for entry in entries:
            items = entry.edits if isinstance(entry, SkillRecord) else entry.capabilities
            items.sort(key=lambda it: (-it[0], it[1]))
            del items[MAX_TEXTS:]
        return self

    def commit(self, edit: SkillEdit, kept: bool) -> None:
        """Settle what ``edit`` rested on once validation decided (in place).

        A rolled-back edit's direction is forgotten, so it never steers a later iteration (as
        :func:`lang_pz.training.accept.commit_momentum` forgets rejected policy directions): the
        records of the skills it would have changed restart (numbers and suggested edits), and
        the residuals of the agents an induce was for are cleared. A kept edit needs no more:
        its skills have new versions (their numbers restart on the next :meth:`update`), and an
        induce's residuals are cleared as answered.
        """
        if edit.op == "induce":
            for agent in edit.evidence.get("agents", []):
                self.agents.pop(agent, None)
            return
        if not kept:
            for s in edit.before:
                key = skill_key(edit.scope, s.name)
                if key in self.skills:
                    self.skills[key] = SkillRecord(version=s.version)

    def to_json(self) -> dict[str, Any]:
        """A JSON-able dict (for a run folder and ``--resume``)."""
        return {
            "beta": self.beta,
            "min_weight": self.min_weight,
            "skills": {k: vars(r) for k, r in self.skills.items()},
            "agents": {k: vars(r) for k, r in self.agents.items()},
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SkillMemory:
        """Inverse of :meth:`to_json`."""
        return cls(
            beta=data["beta"],
            min_weight=data["min_weight"],
            skills={k: SkillRecord(**v) for k, v in data["skills"].items()},
            agents={k: AgentRecord(**v) for k, v in data["agents"].items()},
        )
