"""Pistonball (PettingZoo butterfly) as a language environment.

=====================  =====================================================================
Agents                 ``piston_0`` ... ``piston_{n-1}``, left to right (2 to 20)
API                    parallel (default) and AEC
Observation            ``{"text": str}``: what the piston's own 3-piston-wide window shows,
                       in its own frame (its height, its neighbours' heights relative to it,
                       the ball's position and motion relative to it, or that the ball is out
                       of view), then the action line
Action                 ``str``: ``down`` / ``stay`` / ``up`` (discrete) or a number in [-1, 1]
                       (continuous; positive raises the piston)
Reward                 PettingZoo's: shared by all pistons, proportional to the ball's
                       leftward progress (100 = whole way), plus ``time_penalty`` per cycle
Fallback               unparseable text applies ``stay`` (discrete) or 0.0 (continuous)
Hold                   ``hold=k`` repeats each decision for k cycles (``supersuit.frame_skip_v0``);
                       rewards are summed; ``max_cycles`` counts physics cycles
=====================  =====================================================================

Heights are in pixels above the lowest piston position (0 to 64). With 2 or 3 pistons the
ball starts touching the left wall, so PettingZoo ends the episode after one step; use 4+.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lang_pz.envs.checks import (
    check_api,
    check_bool,
    check_choice,
    check_int,
    check_number,
)
from lang_pz.registration import Api
from lang_pz.text.adapter import LanguageAdapter

ACTIONS = ("down", "stay", "up")


class PistonballAdapter(LanguageAdapter):
    """Text for Pistonball, rendered from the physics state inside each piston's window."""

    def __init__(self) -> None:
        super().__init__(action_names=ACTIONS)

    @staticmethod
    def _geometry(raw: Any) -> tuple[float, float]:
        top_y = raw.screen_height - raw.wall_width - (raw.piston_height - raw.piston_head_height)
        return top_y, raw.n_piston_positions * raw.pixels_per_position

    def heights(self, env: Any) -> list[int]:
        """Every piston's height in px above its lowest position (0 to 64)."""
        raw = env.unwrapped
        lowest_y, _ = self._geometry(raw)
        return [int(round(lowest_y - p.position[1])) for p in raw.pistonList]

    def observation_text(self, env: Any, agent: str | None, observation: Any) -> str:
        raw = env.unwrapped
        i = raw.agent_name_mapping[agent]
        h = self.heights(env)
        _, span = self._geometry(raw)
        parts = [f"You are {agent} (piston {i + 1} of {raw.n_pistons}, counted from the left).",
                 f"Your height: {h[i]} of {int(span)} px."]
        for side, j in (("Left", i - 1), ("Right", i + 1)):
            if 0 <= j < raw.n_pistons:
                d = h[j] - h[i]
                rel = "level with you" if d == 0 else f"{abs(d)} px {'higher' if d > 0 else 'lower'} than you"
                parts.append(f"{side} neighbour: {rel}.")
            else:
                parts.append(f"{side}: wall.")
        parts.append(self._ball_text(raw, i))
        return " ".join(parts)

    @staticmethod
    def _ball_text(raw: Any, i: int) -> str:
        bx, by = raw.ball.position
        r = raw.ball_radius
        x_low = raw.wall_width + raw.piston_width * (i - 1)
        x_high = raw.wall_width + raw.piston_width * (i + 2)
        if bx + r <= x_low or bx - r >= x_high:
            return "Ball: out of view."
        centre = raw.wall_width + raw.piston_width * i + raw.piston_width / 2
        dx = int(round(bx - centre))
        piston_top = raw.pistonList[i].position[1] - raw.piston_radius
        gap = int(round(piston_top - (by + r)))
        where = "right above you" if abs(dx) < 10 else f"{abs(dx)} px to your {'right' if dx > 0 else 'left'}"
        vx, vy = raw.ball.velocity
        horiz = "still sideways" if abs(vx) < 5 else f"moving {'right' if vx > 0 else 'left'}"
        vert = "" if abs(vy) < 5 else f" and {'down' if vy > 0 else 'up'}"
        return f"Ball: {where}, its bottom {gap} px above your top, {horiz}{vert}."

    def fallback(self, env: Any, agent: str | None, observation: Any, info: Mapping[str, Any]) -> Any:
        """Unparseable text keeps the piston still: ``stay`` (discrete) or 0.0 (continuous)."""
        return ACTIONS.index("stay") if self.action_names else super().fallback(env, agent, observation, info)

    def state_text(self, env: Any, observations: Mapping[str, Any]) -> str:
        raw = env.unwrapped
        bx, by = raw.ball.position
        vx, vy = raw.ball.velocity
        floor, _ = self._geometry(raw)
        return (
            f"Cycle {raw.frames}/{raw.max_cycles}. Ball: {int(bx - raw.ball_radius - raw.wall_width)} px "
            f"from the left wall (goal: 0), bottom {int(floor - by - raw.ball_radius)} px above the lowest "
            f"piston top, velocity ({int(vx)}, {int(vy)}) px/s (negative x = towards the goal). "
            f"Piston heights, left to right: {' '.join(map(str, self.heights(env)))}."
        )


def make_env(
    api: Api = "parallel",
    *,
    n_pistons: int = 20,
    continuous: bool = False,
    hold: int = 1,
    max_cycles: int = 125,
    time_penalty: float = -0.1,
    random_drop: bool = True,
    random_rotate: bool = True,
    strict: bool = False,
    render_mode: str | None = None,
) -> Any:
    """Make language Pistonball (see the module docstring for agents, spaces and rewards).

    Args:
        api: ``"parallel"`` or ``"aec"``.
        n_pistons: 2 to 20.
        continuous: number actions in [-1, 1] instead of ``down``/``stay``/``up``.
        hold: each decision is applied for this many physics cycles (>= 1).
        max_cycles: episode length in physics cycles.
        strict: raise :class:`lang_pz.error.ActionParseError` on unparseable text.

    Raises:
        InvalidKwargError: a value of the wrong type or out of range (e.g. ``n_pistons``
            outside 2-20, ``hold`` or ``max_cycles`` < 1, a non-bool flag), naming the value.
    """
    from pettingzoo.butterfly import pistonball_v6
    from pettingzoo.utils.conversions import parallel_to_aec
    from supersuit import frame_skip_v0

    from lang_pz.wrappers import LanguageAECWrapper, LanguageParallelWrapper

    check_api("butterfly/pistonball-v0", api, ("parallel", "aec"))
    check_int("n_pistons", n_pistons, 2, 20)
    check_int("hold", hold, 1)
    check_int("max_cycles", max_cycles, 1)
    check_number("time_penalty", time_penalty)
    for name, flag in (("continuous", continuous), ("random_drop", random_drop),
                       ("random_rotate", random_rotate), ("strict", strict)):
        check_bool(name, flag)
    check_choice("render_mode", render_mode, (None, "human", "rgb_array"))
    env = pistonball_v6.parallel_env(
        n_pistons=n_pistons, continuous=continuous, max_cycles=max_cycles, time_penalty=time_penalty,
        random_drop=random_drop, random_rotate=random_rotate, render_mode=render_mode,
    )
    if hold > 1:
        env = frame_skip_v0(env, hold)
    adapter = PistonballAdapter()
    if continuous:
        adapter.action_names = None
    if api == "aec":
        return LanguageAECWrapper(parallel_to_aec(env), adapter, strict=strict)
    return LanguageParallelWrapper(env, adapter, strict=strict)
