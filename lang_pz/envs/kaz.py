"""Knights Archers Zombies (PettingZoo butterfly, ``knights_archers_zombies_v11``) as text, for a KAZ env
wrapped without an adapter of its own (registered for ``knights_archers_zombies`` in
:mod:`lang_pz.text.families`).

=====================  =====================================================================
Observation            KAZ's vector observation (``obs_method="vector"``, the default, or
                       ``"vector-masked"``) as a table: one named row per entity in KAZ's
                       documented order (you; the archers and knights by name; swords, arrows,
                       zombies by number), columns ``distance``, ``x``, ``y``, ``heading x``,
                       ``heading y`` (after the type mask's six columns in ``vector-masked``);
                       runs of absent entities (KAZ's all-zero rows) are one line
Action                 ``forward``, ``backward``, ``counterclockwise``, ``clockwise``,
                       ``attack``, ``wait`` (KAZ's 0-5: move forward / backward, turn
                       counter-clockwise / clockwise, use weapon, do nothing)
=====================  =====================================================================

The image observation (``obs_method="image"``) and the variable-length ``vector-sequence`` keep the
generic rendering (:mod:`lang_pz.text.render`: block means of the image).
"""

from __future__ import annotations

from typing import Any

from lang_pz.text.adapter import LanguageAdapter
from lang_pz.text.render import Labels, Table

#: KAZ's actions 0-5 (its documentation: move forward, move backward, turn counter clockwise, turn
#: clockwise, use weapon, do nothing).
ACTIONS: tuple[str, ...] = ("forward", "backward", "counterclockwise", "clockwise", "attack", "wait")
_COLUMNS = ("distance", "x", "y", "heading x", "heading y")
_TYPEMASK = ("is zombie", "is archer", "is knight", "is sword", "is arrow", "is you")
_LEGEND = (
    "Positions are fractions of the screen: x to the right, y downward (zombies come from the top, "
    "y = 0, and must not reach the bottom, y = 1). Row 'you' gives your own position and heading; the "
    "other rows give each entity's distance from you, its position relative to yours, and its heading."
)


class KAZAdapter(LanguageAdapter):
    """Text for KAZ (module docstring)."""

    def __init__(self) -> None:
        super().__init__(ACTIONS)

    @classmethod
    def for_env(cls, env: Any) -> KAZAdapter:
        """The family entry point (:mod:`lang_pz.text.families`)."""
        return cls()

    def observation_labels(self, env: Any, agent: str | None) -> Labels | None:
        raw = env.unwrapped
        if not getattr(raw, "vector_state", False) or getattr(raw, "sequence_space", False):
            return None
        agents = [a for kind in ("archer", "knight") for a in raw.possible_agents if a.startswith(kind)]
        rows = (
            "you",
            *agents,
            *(f"sword {i + 1}" for i in range(raw.num_knights)),
            *(f"arrow {i + 1}" for i in range(raw.max_arrows)),
            *(f"zombie {i + 1}" for i in range(raw.max_zombies)),
        )
        columns = (_TYPEMASK if raw.use_typemasks else ()) + _COLUMNS
        return Table(rows, columns, absent="absent (dead, or not in play)")

    def observation_text(self, env: Any, agent: str | None, observation: Any) -> str:
        body = super().observation_text(env, agent, observation)
        if self.observation_labels(env, agent) is None:
            return body
        return f"Knights Archers Zombies: kill the zombies before they reach the bottom.\n{_LEGEND}\n{body}"
