"""Pistonball (PettingZoo butterfly) as a language environment.

=====================  =====================================================================
Agents                 ``piston_0`` ... ``piston_{n-1}``, left to right (3 to 20)
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
Hold                   ``hold=k`` repeats each decision for k cycles (as ``supersuit.frame_skip_v0``,
                       :class:`PistonballParallel`); rewards are summed; ``max_cycles`` counts
                       physics cycles
=====================  =====================================================================

Heights are in pixels above the lowest piston position (0 to 64).

Few pistons (PettingZoo's spawn geometry, inherited): the ball starts
``d = max(40 n - 110 + h, 1)`` px from the left wall (``h`` uniform in -30..30 with
``random_drop``, else 0), and the reward is scaled by ``100 / d``. Measured over seeds 0-49
with random and all-``stay`` teams (``max_cycles`` 10 and 125; returns per piston, the
reward being shared):

* 2 pistons: ``d = 1``: every episode ends after its first step, whatever the actions and
  for every hold and max_cycles. Refused (:class:`lang_pz.error.InvalidKwargError`).
* 3 pistons: ``d`` from 1 to 40: 26 % of episodes end after one decision at hold 1, 42-46 %
  at hold 5; returns reach about -3800. A ``UserWarning``.
* 4 pistons: ``d`` from 20 to 80: no episode ends after one decision at hold 1 or 2, 8-10 %
  at hold 3, 10-18 % at hold 4-5; returns reach about -290. A ``UserWarning`` when
  ``hold >= 3``.
* 5 pistons: ``d`` from 60 to 120: 0 % one-decision episodes at hold 1, 2-8 % at hold 5;
  returns stay above about -100. No warning.

``max_cycles < hold`` also warns: the first decision then ends every episode.
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Callable, Mapping
from typing import Any

from pettingzoo import ParallelEnv

from lang_pz.envs.checks import (
    check_api,
    check_bool,
    check_choice,
    check_int,
    check_number,
)
from lang_pz.error import InvalidKwargError
from lang_pz.registration import Api
from lang_pz.text.adapter import LanguageAdapter
from lang_pz.wrappers.lazy import LazyObservation

ACTIONS = ("down", "stay", "up")
_BALL = {"ball_mass": 0.75, "ball_friction": 0.3, "ball_elasticity": 1.5}  # pistonball_v6's defaults


class PistonballAdapter(LanguageAdapter):
    """Text for Pistonball, rendered from the physics state inside each piston's window.

    It never reads the image observations (``reads_observation = False``), so the language
    env does not compute them (:class:`lang_pz.wrappers.lazy.ObserveOnDemand`).
    """

    reads_observation = False

    def __init__(self) -> None:
        super().__init__(action_names=ACTIONS)

    @staticmethod
    def _geometry(raw: Any) -> tuple[float, float]:
        top_y = raw.screen_height - raw.wall_width - (raw.piston_height - raw.piston_head_height)
        return top_y, raw.n_piston_positions * raw.pixels_per_position

    @staticmethod
    def _height(raw: Any, lowest_y: float, i: int) -> int:
        return int(round(lowest_y - raw.pistonList[i].position[1]))

    def heights(self, env: Any) -> list[int]:
        """Every piston's height in px above its lowest position (0 to 64)."""
        raw = env.unwrapped
        lowest_y, _ = self._geometry(raw)
        return [self._height(raw, lowest_y, i) for i in range(raw.n_pistons)]

    def observation_text(self, env: Any, agent: str | None, observation: Any) -> str:
        raw = env.unwrapped
        i = raw.agent_name_mapping[agent]
        lowest_y, span = self._geometry(raw)
        mine = self._height(raw, lowest_y, i)
        parts = [
            f"You are {agent} (piston {i + 1} of {raw.n_pistons}, counted from the left).",
            f"Your height: {mine} of {int(span)} px.",
        ]
        for side, j in (("Left", i - 1), ("Right", i + 1)):
            if 0 <= j < raw.n_pistons:
                d = self._height(raw, lowest_y, j) - mine
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
    ball_mass: float = 0.75,
    ball_friction: float = 0.3,
    ball_elasticity: float = 1.5,
    strict: bool = False,
    render_mode: str | None = None,
) -> Any:
    """Make language Pistonball (see the module docstring for agents, spaces and rewards).

    Args:
        api: ``"parallel"`` or ``"aec"``.
        n_pistons: 3 to 20 (3, and 4 with ``hold >= 3``, warn: see the module docstring).
        continuous: number actions in [-1, 1] instead of ``down``/``stay``/``up``.
        hold: each decision is applied for this many physics cycles (>= 1).
        max_cycles: episode length in physics cycles.
        time_penalty: PettingZoo's ``pistonball_v6`` argument, passed on (its default -0.1).
        random_drop: passed on likewise (default ``True``).
        random_rotate: passed on likewise (default ``True``).
        ball_mass: passed on likewise (default 0.75; must be > 0).
        ball_friction: passed on likewise (default 0.3; must be >= 0).
        ball_elasticity: passed on likewise (default 1.5; must be >= 0).
        strict: raise :class:`lang_pz.error.ActionParseError` on unparseable text.

    Raises:
        InvalidKwargError: a value of the wrong type or out of range (e.g. ``n_pistons``
            outside 3-20, ``hold`` or ``max_cycles`` < 1, a non-bool flag), naming the value.

    Warns:
        UserWarning: a configuration whose episodes are often degenerate (module docstring).
    """
    from pettingzoo.butterfly import pistonball_v6
    from pettingzoo.utils.conversions import parallel_to_aec

    from lang_pz.wrappers import LanguageAECWrapper, LanguageParallelWrapper
    from lang_pz.wrappers.lazy import ObserveOnDemand

    check_api("butterfly/pistonball-v0", api, ("parallel", "aec"))
    if n_pistons == 2 and not isinstance(n_pistons, bool):
        raise InvalidKwargError(
            "n_pistons=2 gives no game: the ball starts touching the left wall, so every episode ends "
            "after its first step whatever the pistons do; use n_pistons=3 to 20 (5+ for normal episodes)"
        )
    check_int("n_pistons", n_pistons, 3, 20)
    check_int("hold", hold, 1)
    check_int("max_cycles", max_cycles, 1)
    check_number("time_penalty", time_penalty)
    for name, value, low in (
        ("ball_mass", ball_mass, None),
        ("ball_friction", ball_friction, 0),
        ("ball_elasticity", ball_elasticity, 0),
    ):
        check_number(name, value)
        if value < 0 or (low is None and value == 0):
            raise InvalidKwargError(
                f"{name} must be {'> 0' if low is None else '>= 0'}, got {value!r} (PettingZoo's default: {_BALL[name]})"
            )
    for name, flag in (
        ("continuous", continuous),
        ("random_drop", random_drop),
        ("random_rotate", random_rotate),
        ("strict", strict),
    ):
        check_bool(name, flag)
    check_choice("render_mode", render_mode, (None, "human", "rgb_array"))
    _warn_degenerate(n_pistons, hold, max_cycles)
    _load_sprites_once()
    kwargs = {
        "n_pistons": n_pistons,
        "continuous": continuous,
        "max_cycles": max_cycles,
        "time_penalty": time_penalty,
        "random_drop": random_drop,
        "random_rotate": random_rotate,
        "ball_mass": ball_mass,
        "ball_friction": ball_friction,
        "ball_elasticity": ball_elasticity,
        "render_mode": render_mode,
    }
    adapter = PistonballAdapter()
    if continuous:
        adapter.action_names = None
    if api == "aec" and hold == 1:  # PettingZoo's own AEC env (each piston's move is a physics step)
        return LanguageAECWrapper(ObserveOnDemand(pistonball_v6.env(**kwargs)), adapter, strict=strict)
    env = PistonballParallel(pistonball_v6.raw_env(**kwargs), hold)
    if api == "aec":  # a held decision is a parallel step: the pistons' turns are collected first
        return LanguageAECWrapper(parallel_to_aec(env), adapter, strict=strict)
    return LanguageParallelWrapper(env, adapter, strict=strict)


class PistonballParallel(ParallelEnv):
    """PettingZoo's parallel Pistonball with each decision held for ``hold`` cycles: the steps of
    ``frame_skip_v0(aec_to_parallel(pistonball_v6.env()), hold)``, made by calling the raw AEC
    env's ``step`` for each piston in turn, as those wrappers do, without them.

    Why: re-runs replay whole 20-piston episodes, and those layers (per agent and cycle: the order
    and bounds checks, the conversion's reads of every agent's reward after every agent's step,
    N^2 a cycle) cost more than the physics: with :meth:`_cycle`, 75-132 -> 29-40 CPU-ms per
    20-piston, hold-25 episode (``benchmarks/results/scale.md``). The same calls reach the raw env in the same order, so the
    episodes are the same (``tests/envs/test_env_pistonball.py`` compares every step with the
    PettingZoo stack): the reward of a cycle is the raw env's after its last piston (PettingZoo
    clears the others'), the env's generator is left as SuperSuit's frame skip leaves it (its
    draw of the hold's length from a range of one value consumes none of its state), and continuous actions out of bounds are clipped by PettingZoo's own
    ``ClipOutOfBoundsWrapper``. Observations are computed only when read
    (:class:`lang_pz.wrappers.lazy.LazyObservation`: the text comes from the physics state).
    """

    def __init__(self, raw: Any, hold: int = 1) -> None:
        from pettingzoo.utils.wrappers import ClipOutOfBoundsWrapper

        self.env, self.hold = raw, hold
        self._acting = ClipOutOfBoundsWrapper(raw) if raw.continuous else raw
        self.possible_agents = raw.possible_agents
        self.metadata = raw.metadata
        self.render_mode = raw.render_mode

    @property
    def unwrapped(self) -> Any:
        return self.env

    def observation_space(self, agent: str) -> Any:
        return self.env.observation_space(agent)

    def action_space(self, agent: str) -> Any:
        return self.env.action_space(agent)

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
        raw = self.env
        raw.reset(seed=seed, options=options)
        self.agents = raw.agents[:]
        return {a: LazyObservation(raw, a) for a in raw.agents}, dict(raw.infos)

    def step(self, actions: Mapping[str, Any]) -> tuple[dict[str, Any], ...]:
        raw, acting = self.env, self._acting
        fast = not raw.continuous and raw.render_mode is None
        totals = dict.fromkeys(self.agents, 0.0)
        obs: dict[str, Any] = {}
        terminations: dict[str, bool] = {}
        truncations: dict[str, bool] = {}
        infos: dict[str, Any] = {}
        for cycle in range(self.hold):
            if fast:
                self._cycle(actions)
            else:
                for agent in raw.agents:
                    acting.step(actions[agent])
            for a in totals:
                totals[a] += raw.rewards.get(a, 0)
            ended = raw.terminate or raw.truncate  # every piston's, set after the last piston's move
            if ended or cycle == self.hold - 1:
                terminations, truncations, infos = dict(raw.terminations), dict(raw.truncations), dict(raw.infos)
                obs = {a: LazyObservation(raw, a) for a in raw.agents}
            while raw.agents and (raw.terminations[raw.agent_selection] or raw.truncations[raw.agent_selection]):
                raw.step(None)
            self.agents = raw.agents
            if ended:
                break
        return obs, totals, terminations, truncations, infos

    def _cycle(self, actions: Mapping[str, Any]) -> None:
        """``raw.step(actions[a])`` for every piston ``a`` in turn (discrete actions, no rendering):
        PettingZoo 1.24's ``pistonball.raw_env.step``, its moves and physics steps as it makes them
        and its bookkeeping done once for the cycle (the same state after the last piston: its
        per-piston clearing and accumulating of every piston's reward is N^2 a cycle)."""
        raw = self.env
        space, pistons, index, dt = raw.space, raw.pistonList, raw.agent_name_mapping, raw.dt
        agents, frames = raw.agents, raw.frames
        if _plain(space):
            _moves_and_steps(raw, [(pistons[index[a]]._body, actions[a] - 1) for a in agents])
        else:
            for agent in agents:
                raw.move_piston(pistons[index[agent]], actions[agent] - 1)
                space.step(dt)
        ball_curr_pos = raw._get_ball_position()
        if ball_curr_pos + raw.ball.velocity[0] * dt <= raw.wall_width + 1:
            raw.terminate = True
        reward = -1 * (ball_curr_pos - raw.ball_prev_pos) * (100 / raw.distance_to_wall_at_game_start)
        if not raw.terminate:
            reward += raw.time_penalty
        raw.rewards = dict.fromkeys(agents, reward)
        raw.ball_prev_pos = ball_curr_pos
        raw.frames += 1
        raw.truncate = raw.frames >= raw.max_cycles
        if frames % raw.recentFrameLimit == 0 or raw.frames % raw.recentFrameLimit == 0:
            raw.recentPistons = set()
        raw.terminations = dict.fromkeys(agents, raw.terminate)
        raw.truncations = dict.fromkeys(agents, raw.truncate)
        raw._cumulative_rewards = dict.fromkeys(agents, 0 + reward)  # each zeroed at its move, then + reward

    def render(self) -> Any:
        return self.env.render()

    def state(self) -> Any:
        return self.env.state()

    def close(self) -> None:
        self.env.close()


_SPRITES: dict[str, Any] = {}  # image path -> PettingZoo's get_image() of it
_SPRITES_LOCK = threading.Lock()


def _load_sprites_once() -> None:
    """Make PettingZoo's Pistonball load its three images once per process: each new env
    (``raw_env.__init__``) gets a copy of the first one's surfaces (``Surface.copy``: the same
    size, flags and pixels) instead of decoding the PNGs again. The background, 960 x 560 px, took
    12.5 of a 20-piston env's 18 CPU-ms to load, 1.6 to copy; concurrent re-runs build one env
    per worker (``benchmarks/results/scale.md``). The loader is replaced in PettingZoo's module,
    so plain PettingZoo Pistonball envs of this process get copies too (the same pixels)."""
    from pettingzoo.butterfly.pistonball import pistonball as module

    with _SPRITES_LOCK:
        load: Callable[[str], Any] | None = getattr(module, "get_image", None)
        if load is None or getattr(load, "lang_pz_cached", False):
            return  # another PettingZoo (no module-level loader: its own loading) or done already

        def get_image(path: str) -> Any:
            with _SPRITES_LOCK:
                if path not in _SPRITES:
                    _SPRITES[path] = load(path)
                return _SPRITES[path].copy()

        get_image.lang_pz_cached = True  # type: ignore[attr-defined]
        module.get_image = get_image


def _plain(space: Any) -> bool:
    """Whether ``space.step(dt)`` is just ``cpSpaceStep`` under pymunk's lock flag: a pymunk 7
    space (the attributes read here) with no Python collision handlers (nothing a step could
    defer to its end: adds, removals, post-step callbacks), none of those pending, no body
    waiting for its mass check and one thread. PettingZoo's Pistonball spaces are so."""
    try:
        return not (
            space.threaded
            or space._handlers
            or space._bodies_to_check
            or space._add_later
            or space._remove_later
            or space._post_step_callbacks
            or space._removed_shapes
            or space._locked
        )
    except AttributeError:  # another pymunk: its own step()
        return False


def _moves_and_steps(raw: Any, moves: list[tuple[Any, int]]) -> None:
    """``raw.move_piston(piston, v)`` then ``raw.space.step(raw.dt)`` for each ``(piston's cffi
    body, v)`` in turn, on a space :func:`_plain` accepts: the same chipmunk calls with the same
    arguments (PettingZoo 1.24's ``move_piston``: the position read, moved by ``v`` positions
    and capped, and set; pymunk 7's ``Space.step``: ``cpSpaceStep`` with ``_locked`` set), without
    the Python layers around them (a property, a ``__setattr__`` hook and a closure per move, the
    step's bookkeeping of empty queues: about as much CPU as the physics)."""
    from pymunk._chipmunk_cffi import lib

    space, dt, per = raw.space, raw.dt, raw.pixels_per_position
    cp_space, get, put, step = space._space, lib.cpBodyGetPosition, lib.cpBodySetPosition, lib.cpSpaceStep
    top = raw.screen_height - raw.wall_width - (raw.piston_height - raw.piston_head_height)
    bottom = top - (raw.n_piston_positions * per)
    for body, v in moves:
        p = get(body)
        y = p.y - v * per
        if y > top:
            y = top
        elif y < bottom:
            y = bottom
        put(body, (p.x, y))
        space._locked = True
        try:
            step(cp_space, dt)
        finally:
            space._locked = False


def _warn_degenerate(n_pistons: int, hold: int, max_cycles: int) -> None:
    """Warn about the configurations the module docstring lists as often degenerate."""
    why = []
    if n_pistons == 3:
        why.append(
            "with 3 pistons the ball can start touching the left wall: 26-46 % of episodes end after "
            "one decision and rewards are scaled by up to 100x (returns to about -3800)"
        )
    elif n_pistons == 4 and hold >= 3:
        why.append(f"with 4 pistons and hold={hold}, 8-18 % of episodes end after the first decision")
    if max_cycles < hold:
        why.append(f"max_cycles={max_cycles} < hold={hold}: the first decision ends every episode")
    if why:
        warnings.warn(
            f"Pistonball: {'; '.join(why)}. Use 5+ pistons (and max_cycles >= hold) for meaningful episodes.",
            UserWarning,
            stacklevel=4,
        )
