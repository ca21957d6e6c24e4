"""Every MPE2 scenario as text, for an MPE2 env wrapped without an adapter of its own.

Registered for the family key ``mpe2`` (:mod:`lang_pz.text.families`), so
``LanguageParallelWrapper(simple_tag_v3.parallel_env())`` gets :class:`MPEFamilyAdapter`: the move
and message words of :class:`lang_pz.envs.mpe.adapter.MPEAdapter` (``stay``, ``left``, ``right``,
``down``, ``up``; ``up and say green``; named components for continuous actions) and the agent's
observation vector with every number named, following each scenario's ``observation()`` in MPE2
1.1.1 (:data:`LAYOUTS`). Positions are ``(x, y)`` with x to the right and y up; ``from you`` is the
other entity's position minus the agent's. With partial observability
(``num_landmark_neighbors`` / ``num_agent_neighbors``) the slots are the nearest ones, zero-padded.
A scenario not in :data:`LAYOUTS` (or a layout that does not add up) is shown numbered by position.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from lang_pz.envs.mpe.adapter import MPEAdapter
from lang_pz.text.render import Fields, Labels

Part = tuple[str, int]


def _lms(raw: Any, entities: list[Any], what: str = "landmark") -> list[Part]:
    n = getattr(raw.scenario, "num_landmark_neighbors", None)
    if n is None:
        return [(f"{e.name} from you (x, y)", 2) for e in entities]
    return [(f"nearest {what} {k + 1} from you (x, y)", 2) for k in range(n)]


def _others(raw: Any, me: Any, others: list[Any], what: str = "from you (x, y)") -> list[Part]:
    n = getattr(raw.scenario, "num_agent_neighbors", None)
    if n is None:
        return [(f"{o.name} {what}", 2) for o in others]
    return [(f"nearest other agent {k + 1} {what}", 2) for k in range(n)]


def _vel_pos(me: Any) -> list[Part]:
    return [("your velocity (x, y)", 2), ("your position (x, y)", 2)]


def _simple(raw: Any, me: Any) -> list[Part]:
    return [("your velocity (x, y)", 2)] + _lms(raw, raw.world.landmarks)


def _adversary(raw: Any, me: Any) -> list[Part]:
    others = [o for o in raw.world.agents if o is not me]
    goal = [] if me.adversary else [("goal landmark from you (x, y)", 2)]
    return goal + _lms(raw, raw.world.landmarks) + _others(raw, me, others)


def _crypto(raw: Any, me: Any) -> list[Part]:
    w = raw.world
    key: Part = ("the key", w.dim_c)
    if me.speaker:
        return [("the goal colour (the message to send)", len(w.landmarks[0].color)), key]
    speakers = [o for o in w.agents if o is not me and o.state.c is not None and o.speaker]
    heard = [(f"{o.name}'s message", w.dim_c) for o in speakers]
    return heard if me.adversary else [key, *heard]


def _push(raw: Any, me: Any) -> list[Part]:
    w = raw.world
    others = [o for o in w.agents if o is not me]
    if me.adversary:
        return [("your velocity (x, y)", 2), *_lms(raw, w.landmarks), *_others(raw, me, others)]
    colours = [(f"{lm.name} colour (r, g, b)", len(lm.color)) for lm in w.landmarks]
    return [
        ("your velocity (x, y)", 2),
        ("goal landmark from you (x, y)", 2),
        ("your colour (r, g, b)", len(me.color)),
        *_lms(raw, w.landmarks),
        *colours,
        *_others(raw, me, others),
    ]


def _reference(raw: Any, me: Any) -> list[Part]:
    w = raw.world
    other = next(o for o in w.agents if o is not me)
    return [
        ("your velocity (x, y)", 2),
        *_lms(raw, w.landmarks),
        (f"{other.name}'s goal colour (r, g, b)", w.dim_color),
        (f"{other.name}'s message", w.dim_c),
    ]


def _speaker_listener(raw: Any, me: Any) -> list[Part]:
    w = raw.world
    if not me.movable:
        return [("the listener's goal colour (r, g, b)", w.dim_color)]
    speakers = [o for o in w.agents if o is not me and o.state.c is not None]
    return [("your velocity (x, y)", 2), *_lms(raw, w.landmarks), *[(f"{o.name}'s message", w.dim_c) for o in speakers]]


def _spread(raw: Any, me: Any) -> list[Part]:
    w = raw.world
    others = [o for o in w.agents if o is not me]
    n = getattr(raw.scenario, "num_agent_neighbors", None)
    names = [o.name for o in others] if n is None else [f"nearest other agent {k + 1}" for k in range(n)]
    return [
        *_vel_pos(me),
        *_lms(raw, w.landmarks),
        *_others(raw, me, others),
        *[(f"{name}'s message", w.dim_c) for name in names],
    ]


def _formation(raw: Any, me: Any) -> list[Part]:
    return [*_vel_pos(me), *_lms(raw, raw.world.landmarks)]


def _tag(raw: Any, me: Any) -> list[Part]:
    w = raw.world
    others = [o for o in w.agents if o is not me]
    n = getattr(raw.scenario, "num_agent_neighbors", None)
    vels = (
        [(f"{o.name} velocity (x, y)", 2) for o in others if not o.adversary]
        if n is None
        else [(f"nearest other agent {k + 1} velocity (x, y; 0 for adversaries)", 2) for k in range(n)]
    )
    fixed = [lm for lm in w.landmarks if not lm.boundary]
    return [*_vel_pos(me), *_lms(raw, fixed), *_others(raw, me, others), *vels]


def _world_comm(raw: Any, me: Any) -> list[Part]:
    w = raw.world
    others = [o for o in w.agents if o is not me]
    entities = [lm for lm in w.landmarks if not lm.boundary]
    vels = [(f"{o.name} velocity (x, y; 0 when hidden)", 2) for o in others if not o.adversary]
    forests: list[Part] = [(f"you are in forest {i} (1 yes, -1 no)", 1) for i in range(len(w.forests))]
    head = [*_vel_pos(me), *[(f"{e.name} from you (x, y)", 2) for e in entities]]
    seen = [(f"{o.name} from you (x, y; 0 when hidden)", 2) for o in others]
    if me.adversary:
        return [*head, *seen, *vels, *forests, (f"{w.agents[0].name}'s message", w.dim_c)]
    return [*head, *seen, *forests, *vels]


def _collect_treasure(raw: Any, me: Any) -> list[Part]:
    w = raw.world
    n = len(w.treasure_types)
    parts: list[Part] = [("your position (x, y)", 2), ("your velocity (x, y)", 2)]
    if me.collector:
        parts.append(("treasure type you hold (one-hot)", n))
    for k in range(len(w.agents) - 1):
        parts += [
            (f"other agent {k + 1} by distance: from you (x, y)", 2),
            (f"other agent {k + 1}: velocity (x, y)", 2),
            (f"other agent {k + 1}: deposit type, then held type (one-hot each)", 2 * n),
        ]
    for k in range(len(raw.scenario.treasures(w))):
        parts += [
            (f"treasure {k + 1} by distance: from you (x, y; 0 once collected)", 2),
            (f"treasure {k + 1}: type (one-hot)", n),
        ]
    return parts


#: Scenario name (without version) -> the named parts of an agent's observation vector, and a
#: one-line goal.
LAYOUTS: dict[str, tuple[Callable[[Any, Any], list[Part]], str]] = {
    "simple": (_simple, "go to the landmark"),
    "simple_adversary": (
        _adversary,
        "good agents get close to the goal landmark while the adversary, who does not know which one it is, tries to as well",
    ),
    "simple_crypto": (
        _crypto,
        "alice sends bob the goal colour encrypted with a shared key; eve listens and tries to decode it",
    ),
    "simple_push": (_push, "the good agent goes to its goal landmark; the adversary pushes it away"),
    "simple_reference": (_reference, "each agent must reach a landmark only the other knows, and tells the other its goal"),
    "simple_speaker_listener": (_speaker_listener, "the speaker names the goal colour; the listener goes to that landmark"),
    "simple_spread": (_spread, "agents cover every landmark together without bumping into each other"),
    "simple_tag": (_tag, "adversaries (slower) chase the good agents (faster); landmarks block the way"),
    "simple_world_comm": (
        _world_comm,
        "adversaries, led by leadadversary (who sees all and speaks), chase the good agents, who collect food; forests hide agents",
    ),
    "simple_formation": (_formation, "agents form a circle around the landmark"),
    "simple_line": (_formation, "agents line up between the two landmarks"),
    "collect_treasure": (_collect_treasure, "collectors pick up treasures and bring each to the deposit agent of its type"),
}


class MPEFamilyAdapter(MPEAdapter):
    """Text for any MPE2 scenario (module docstring).

    Args:
        scenario: the scenario's name without version (``"simple_tag"``).
        continuous: the environment's ``continuous_actions``.
    """

    def __init__(self, scenario: str, continuous: bool) -> None:
        super().__init__(continuous)
        self.scenario = scenario

    @classmethod
    def for_env(cls, env: Any) -> MPEFamilyAdapter:
        """The adapter of MPE2 env ``env`` (its scenario from ``metadata["name"]``)."""
        raw = env.unwrapped
        name = re.sub(r"_v\d+$", "", str(raw.metadata.get("name", "")))
        return cls(name, bool(getattr(raw, "continuous_actions", False)))

    def observation_labels(self, env: Any, agent: str | None) -> Labels | None:
        layout = LAYOUTS.get(self.scenario)
        if layout is None:
            return None
        return Fields.of(*layout[0](env.unwrapped, self._agent(env, agent)))

    def observation_text(self, env: Any, agent: str | None, observation: Any) -> str:
        goal = LAYOUTS[self.scenario][1] if self.scenario in LAYOUTS else "see the MPE2 documentation"
        return (
            f"MPE2 {self.scenario}: {goal}. Positions are (x, y): x to the right, y up.\n"
            f"{super().observation_text(env, agent, observation)}"
        )


def family_adapter(env: Any) -> MPEFamilyAdapter:
    """The family entry point (:mod:`lang_pz.text.families`): :meth:`MPEFamilyAdapter.for_env`."""
    return MPEFamilyAdapter.for_env(env)
