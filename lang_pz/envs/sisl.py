"""PettingZoo's SISL environments as text, for an env wrapped without an adapter of its own (registered
for ``pursuit``, ``multiwalker`` and ``waterworld`` in :mod:`lang_pz.text.families`). Each layout is
the one the environment documents (PettingZoo 1.27's docstrings; waterworld's, which PettingZoo
1.25 dropped, from 1.24).

==============  ==================================================================================
pursuit         the agent's ``obs_range`` x ``obs_range`` view as a map (``#`` wall or outside,
                ``P`` pursuers, ``E`` evaders, with counts; ``@`` you, at the centre; up is +y)
                and each evader in view as an offset; actions ``left``, ``right``, ``up``,
                ``down``, ``stay`` (PettingZoo's 0-4)
multiwalker     the 31 numbers named (hull angle and velocities, both legs' joint angles and
                speeds and ground contact, 10 lidar readings, neighbours and package); actions:
                torques ``hip_1``, ``knee_1``, ``hip_2``, ``knee_2`` from -1 to 1
waterworld      per sensor (``n_sensors`` around the pursuer): obstacle, barrier, food, poison and
                pursuer distances (and food, poison and pursuer speeds with ``speed_features``),
                then the food and poison collision flags; actions: thrust ``x``, ``y``
==============  ==================================================================================
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from lang_pz.text.adapter import LanguageAdapter
from lang_pz.text.render import Fields, Labels

#: Pursuit's actions 0-4 (``DiscreteAgent.eactions``: move left, right, up, down, stay).
PURSUIT_ACTIONS: tuple[str, ...] = ("left", "right", "up", "down", "stay")


def _cell(wall: float, pursuers: int, evaders: int, me: bool) -> str:
    if wall:
        return "#"
    who = ("@" if me else "") + (f"P{pursuers - me}" if pursuers - me > 0 else "") + (f"E{evaders}" if evaders else "")
    return who or "."


class PursuitAdapter(LanguageAdapter):
    """Text for SISL pursuit (module docstring)."""

    def __init__(self) -> None:
        super().__init__(PURSUIT_ACTIONS)

    @classmethod
    def for_env(cls, env: Any) -> PursuitAdapter:
        """The family entry point (:mod:`lang_pz.text.families`)."""
        return cls()

    def observation_text(self, env: Any, agent: str | None, observation: Any) -> str:
        obs = np.asarray(observation)
        if obs.ndim != 3 or obs.shape[0] != obs.shape[1] or obs.shape[2] != 3:
            return super().observation_text(env, agent, observation)
        n, mid = obs.shape[0], obs.shape[0] // 2
        # observe() gives obs[y, x, channel] (channels: wall, pursuers, evaders); drawn with +y up
        rows = [
            [_cell(obs[r, c, 0], int(obs[r, c, 1]), int(obs[r, c, 2]), (r, c) == (mid, mid)) for c in range(n)]
            for r in range(n - 1, -1, -1)
        ]
        width = max(len(cell) for row in rows for cell in row)
        lines = [" ".join(cell.ljust(width) for cell in row).rstrip() for row in rows]
        evaders = [
            f"{_offset(c - mid, r - mid)}: {int(obs[r, c, 2])}"
            for r in range(n)
            for c in range(n)
            if obs[r, c, 2] > 0 and not obs[r, c, 0]
        ]
        return (
            f"You are {agent}, a pursuer (SISL pursuit): surround evaders with other pursuers to catch them.\n"
            f"Your {n}x{n} view, you (@) at the centre, +y up: # wall or outside, . empty, Pk k other pursuers, "
            f"Ek k evaders.\n" + "\n".join(lines) + "\nEvaders in view (where: how many): " + ("; ".join(evaders) or "none")
        )


def _offset(dx: int, dy: int) -> str:
    """A map offset in words: ``3 left, 1 up``; ``on your square`` for none."""
    parts = [f"{abs(d)} {plus if d > 0 else minus}" for d, plus, minus in ((dx, "right", "left"), (dy, "up", "down")) if d]
    return ", ".join(parts) or "on your square"


#: Multiwalker's observation (PettingZoo's table; index 9 is hip joint 2's angle, which the table
#: calls "Hip joint 1 angle").
MULTIWALKER_FIELDS = Fields.of(
    "hull angle (radians)",
    "hull angular velocity",
    "velocity x",
    "velocity y",
    "hip 1 angle",
    "hip 1 speed",
    "knee 1 angle",
    "knee 1 speed",
    "leg 1 touches the ground (1 yes, 0 no)",
    "hip 2 angle",
    "hip 2 speed",
    "knee 2 angle",
    "knee 2 speed",
    "leg 2 touches the ground (1 yes, 0 no)",
    ("lidar, 10 readings ahead and below (fraction of range to the first hit)", 10),
    ("left neighbour relative (x, y) (0 for the leftmost walker)", 2),
    ("right neighbour relative (x, y) (0 for the rightmost walker)", 2),
    ("your position relative to the package (x: 0 left edge, 1 right edge; y)", 2),
    "package angle",
)
MULTIWALKER_COMPONENTS: tuple[str, ...] = ("hip_1", "knee_1", "hip_2", "knee_2")


class MultiwalkerAdapter(LanguageAdapter):
    """Text for SISL multiwalker (module docstring)."""

    @classmethod
    def for_env(cls, env: Any) -> MultiwalkerAdapter:
        """The family entry point (:mod:`lang_pz.text.families`)."""
        return cls()

    def observation_labels(self, env: Any, agent: str | None) -> Labels | None:
        return MULTIWALKER_FIELDS

    def component_names(self, env: Any, agent: str | None) -> Sequence[str] | None:
        return MULTIWALKER_COMPONENTS

    def observation_text(self, env: Any, agent: str | None, observation: Any) -> str:
        return (
            "Multiwalker (SISL): walkers carry a package to the right together; do not fall or drop it. "
            "Act with the torques of your hips and knees.\n" + super().observation_text(env, agent, observation)
        )


class WaterworldAdapter(LanguageAdapter):
    """Text for SISL waterworld (module docstring; PettingZoo <= 1.24)."""

    @classmethod
    def for_env(cls, env: Any) -> WaterworldAdapter:
        """The family entry point (:mod:`lang_pz.text.families`)."""
        return cls()

    def observation_labels(self, env: Any, agent: str | None) -> Labels | None:
        base = getattr(env.unwrapped, "env", None)
        n = getattr(base, "n_sensors", None)
        speed = getattr(base, "speed_features", True)
        if not isinstance(n, int):
            return None
        kinds = ["obstacle distance", "barrier distance", "food distance"]
        kinds += (
            ["food speed", "poison distance", "poison speed", "pursuer distance", "pursuer speed"]
            if speed
            else [
                "poison distance",
                "pursuer distance",
            ]
        )
        return Fields.of(
            *(
                (f"{k}, sensors 1-{n} (1 = nothing in range)" if "distance" in k else f"{k}, sensors 1-{n}", n)
                for k in kinds
            ),
            "touching food (1 yes)",
            "touching poison (1 yes)",
        )

    def component_names(self, env: Any, agent: str | None) -> Sequence[str] | None:
        return ("x", "y")
