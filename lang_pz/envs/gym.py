"""Single-agent Gymnasium environments as language environments (:class:`LanguageGymWrapper`).

CartPole (``classic_control/cartpole-v0``, from ``CartPole-v1``)

=====================  =====================================================================
API                    gymnasium
Observation            ``{"text": str}``: cart position (m) and velocity (m/s), pole angle
                       (degrees from upright) and angular velocity (degrees/s), each with its
                       sign convention and the limits that end the episode, then the actions
Action                 ``str``: ``left`` / ``right`` (push the cart)
Reward                 +1 per step while the pole is up (Gymnasium's); 500 steps at most
=====================  =====================================================================

FrozenLake (``toy_text/frozen_lake-v0``, from ``FrozenLake-v1``)

=====================  =====================================================================
API                    gymnasium
Observation            ``{"text": str}``: the lake map (``S`` start, ``F`` frozen, ``H`` hole,
                       ``G`` goal) with your square drawn as ``@``, your row and column
                       (1-based), whether the ice is slippery, then the actions
Action                 ``str``: ``left`` / ``down`` / ``right`` / ``up``
Reward                 1 on reaching the goal, else 0 (Gymnasium's); falling in a hole ends
                       the episode
=====================  =====================================================================
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from lang_pz.envs.checks import check_api, check_bool, check_choice, check_int
from lang_pz.registration import Api
from lang_pz.text.adapter import LanguageAdapter

CARTPOLE_ACTIONS = ("left", "right")
FROZEN_LAKE_ACTIONS = ("left", "down", "right", "up")


class CartPoleAdapter(LanguageAdapter):
    """CartPole's four state variables, named, with units, signs and episode limits."""

    def __init__(self) -> None:
        super().__init__(action_names=CARTPOLE_ACTIONS, describe_agent=False)

    def observation_text(self, env: Any, agent: str | None, observation: Any) -> str:
        raw = _unwrapped(self, env)
        x, x_dot, theta, theta_dot = (float(v) for v in np.asarray(observation).ravel().tolist())
        limits = (raw.x_threshold, raw.theta_threshold_radians)
        memo = self.__dict__.get("_limits")
        if memo is None or memo[0] != limits:  # the two sentences with the limits, once per limits
            memo = self.__dict__["_limits"] = (
                limits,
                (
                    f"m from the centre (positive = right; the episode ends beyond +/-{limits[0]:g} m).\nCart velocity: ",
                    f"degrees from upright (positive = leaning right; the episode ends beyond "
                    f"+/-{math.degrees(limits[1]):.0f} degrees).\nPole angular velocity: ",
                ),
            )
        at_x, at_theta = memo[1]
        return (
            "Balance the pole on the cart by pushing the cart left or right.\n"
            f"Cart position: {x:+.2f} {at_x}{x_dot:+.2f} m/s.\n"
            f"Pole angle: {math.degrees(theta):+.1f} {at_theta}{math.degrees(theta_dot):+.1f} degrees/s "
            "(positive = falling to the right)."
        )


def _unwrapped(adapter: LanguageAdapter, env: Any) -> Any:
    """``env.unwrapped``, looked up once per env (it walks every Gymnasium wrapper)."""
    hit = adapter.__dict__.get("_unwrapped")
    if hit is None or hit[0] is not env:
        hit = adapter.__dict__["_unwrapped"] = (env, env.unwrapped)
    return hit[1]


class FrozenLakeAdapter(LanguageAdapter):
    """FrozenLake's map with your square marked ``@``."""

    def __init__(self, is_slippery: bool = True) -> None:
        super().__init__(action_names=FROZEN_LAKE_ACTIONS, describe_agent=False)
        self.is_slippery = is_slippery

    def observation_text(self, env: Any, agent: str | None, observation: Any) -> str:
        # The map is fixed, so the text depends on the square only: rendered once per square.
        raw = _unwrapped(self, env)
        memo = self.__dict__.setdefault("_texts", {})
        key = (id(raw.desc), int(observation))
        if key not in memo:
            memo[key] = self._text(raw, int(observation))
        return memo[key]

    def _text(self, raw: Any, observation: int) -> str:
        desc = [[c.decode() if isinstance(c, bytes) else str(c) for c in row] for row in raw.desc]
        nrow, ncol = len(desc), len(desc[0])
        row, col = divmod(observation, ncol)
        here = {"S": "the start", "F": "frozen ice", "H": "a hole", "G": "the goal"}[desc[row][col]]
        desc[row][col] = "@"
        grid = "\n".join("".join(r) for r in desc)
        ice = (
            "The ice is slippery: you move in the chosen direction only 1/3 of the time, otherwise to one side of it."
            if self.is_slippery
            else "The ice is not slippery."
        )
        return (
            f"Walk across a {nrow}x{ncol} frozen lake from S to G without falling into a hole.\n"
            "Map (S start, F frozen ice, H hole, G goal, @ you):\n"
            f"{grid}\n"
            f"You are at row {row + 1}, column {col + 1} (on {here}). {ice} "
            "Walking into the edge leaves you in place."
        )


def make_cartpole(
    api: Api = "gymnasium",
    *,
    max_episode_steps: int | None = None,
    strict: bool = False,
    render_mode: str | None = None,
) -> Any:
    """Make language CartPole (module docstring: spaces and reward).

    Args:
        api: ``"gymnasium"`` only.
        max_episode_steps: episode length limit (default: Gymnasium's 500).
        strict: raise :class:`lang_pz.error.ActionParseError` on unparseable text
            (otherwise ``left`` is applied and ``info["parse_error"]`` is set).
        render_mode: Gymnasium's (``"human"``, ``"rgb_array"`` or None).

    Raises:
        InvalidKwargError: another ``api`` or ``max_episode_steps`` < 1.
    """
    import gymnasium as gym

    from lang_pz.wrappers import LanguageGymWrapper

    check_api("classic_control/cartpole-v0", api, ("gymnasium",))
    check_int("max_episode_steps", max_episode_steps, 1, optional=True)
    check_bool("strict", strict)
    check_choice("render_mode", render_mode, (None, "human", "rgb_array"))
    env = gym.make("CartPole-v1", max_episode_steps=max_episode_steps, render_mode=render_mode)
    return LanguageGymWrapper(env, CartPoleAdapter(), strict=strict)


def make_frozen_lake(
    api: Api = "gymnasium",
    *,
    map_name: str = "4x4",
    is_slippery: bool = True,
    max_episode_steps: int | None = None,
    strict: bool = False,
    render_mode: str | None = None,
) -> Any:
    """Make language FrozenLake (module docstring: spaces and reward).

    Args:
        api: ``"gymnasium"`` only.
        map_name: ``"4x4"`` or ``"8x8"``.
        is_slippery: whether moves slip sideways 2/3 of the time (Gymnasium's default True).
        max_episode_steps: episode length limit (default: Gymnasium's, 100 for 4x4).
        strict: raise :class:`lang_pz.error.ActionParseError` on unparseable text
            (otherwise ``left`` is applied and ``info["parse_error"]`` is set).
        render_mode: Gymnasium's (``"human"``, ``"ansi"``, ``"rgb_array"`` or None).

    Raises:
        InvalidKwargError: another ``api``, an unknown ``map_name``, a non-bool
            ``is_slippery`` or ``max_episode_steps`` < 1.
    """
    import gymnasium as gym

    from lang_pz.wrappers import LanguageGymWrapper

    check_api("toy_text/frozen_lake-v0", api, ("gymnasium",))
    check_choice("map_name", map_name, ("4x4", "8x8"))
    check_bool("is_slippery", is_slippery)
    check_int("max_episode_steps", max_episode_steps, 1, optional=True)
    check_bool("strict", strict)
    check_choice("render_mode", render_mode, (None, "human", "rgb_array", "ansi"))
    env = gym.make(
        "FrozenLake-v1",
        map_name=map_name,
        is_slippery=is_slippery,
        max_episode_steps=max_episode_steps,
        render_mode=render_mode,
    )
    return LanguageGymWrapper(env, FrozenLakeAdapter(is_slippery), strict=strict)
