"""Momentum of language gradients: a decayed memory of earlier iterations' edit directions.

MASkills (skill-library optimisation) and TextGrad's momentum variant keep earlier feedback in
view so one noisy batch cannot undo a consistent trend. Here each agent's memory is a short
list of earlier aggregated :class:`~lang_pz.optimisers.textual.Gradient` s, each with a weight:
a new iteration multiplies every weight by ``beta`` and forgets those below ``min_weight``.
The aggregation prompt shows the remembered directions with their weights.

Only *accepted* updates enter the memory: the training loop's accept step pushes an agent's
aggregated gradient once validation kept its candidate, so a rejected direction never steers a
later iteration (and a rejected agent's memory does not decay either).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from lang_pz.optimisers.gradient import Gradient


@dataclass
class Momentum:
    """Per-agent decayed memory of aggregated gradients.

    Args:
        beta: decay per iteration in [0, 1) (0 = no momentum).
        min_weight: weights below this are forgotten (> 0).

    Raises:
        ValueError: ``beta`` or ``min_weight`` out of range.
    """

    beta: float = 0.5
    min_weight: float = 0.2
    memory: dict[str, list[tuple[float, Gradient]]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not 0.0 <= self.beta < 1.0:
            raise ValueError(f"momentum beta must be in [0, 1), got {self.beta}")
        if not 0.0 < self.min_weight <= 1.0:
            raise ValueError(f"momentum min_weight must be in (0, 1], got {self.min_weight}")

    def get(self, agent: str) -> list[tuple[float, Gradient]]:
        """The agent's remembered ``(weight, gradient)`` pairs, newest first."""
        return list(self.memory.get(agent, []))

    def push(self, agent: str, gradient: Gradient) -> None:
        """Decay the agent's memory by ``beta``, forget light items, remember ``gradient`` at weight 1."""
        kept = [(round(w * self.beta, 6), g) for w, g in self.memory.get(agent, [])]
        self.memory[agent] = [(1.0, gradient)] + [(w, g) for w, g in kept if w >= self.min_weight]

    def to_json(self) -> dict[str, Any]:
        """A JSON-able dict (what the run folder stores for ``--resume``)."""
        return {
            "beta": self.beta,
            "min_weight": self.min_weight,
            "memory": {a: [[w, g.model_dump()] for w, g in items] for a, items in self.memory.items()},
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Momentum:
        """Inverse of :meth:`to_json`."""
        m = cls(beta=data["beta"], min_weight=data["min_weight"])
        m.memory = {a: [(float(w), Gradient(**g)) for w, g in items] for a, items in data["memory"].items()}
        return m
