"""Overcooked-AI (``overcooked_ai_py`` 1.1.0) as a language environment.

Two cooks share a kitchen: fetch onions, put three in a pot, start it cooking (20 steps),
fill a dish with the soup and serve it (Carroll et al., "On the Utility of Learning about
Humans for Human-AI Coordination", NeurIPS 2019; layouts of their Sec. 5).

=====================  =====================================================================
Ids                    ``overcooked/<layout>-v0``: cramped_room, asymmetric_advantages,
                       coordination_ring, forced_coordination, counter_circuit (the 1.1.0
                       file ``counter_circuit_o_1order``: the paper's onion-only layout; the
                       file named ``counter_circuit`` there is a tomato variant)
Agents                 ``player_0``, ``player_1`` (overcooked_ai's players 0 and 1)
API                    parallel (default) and AEC (``parallel_to_aec``)
Observation            ``{"text": str}``: the map with a key, where you and your teammate stand
                       and face and what each holds, each pot's contents and cooking progress,
                       objects on counters, the orders, steps left, the team's score, the
                       outcome of your last skill or unreadable reply; then the action line
Action                 ``actions="primitive"``: ``up``/``down``/``left``/``right``/``stay``/
                       ``interact``, one tick per step. ``actions="skills"``: one of
                       :data:`lang_pz.envs.overcooked_skills.SKILL_WORDS` (only those possible
                       now are legal), run by the planner for several ticks (below)
Reward                 sparse, shared: 20 per delivered soup to both players; plus
                       ``shaping_factor`` x the team's shaped reward in the paper's units (3 per
                       onion put in a pot, 3 per useful dish pickup, 5 per soup picked up)
Episode                truncated after ``horizon`` ticks (default 400); never terminated
Fallback               unreadable text: ``stay`` (primitive) / ``wait 1`` (skills); the next
                       observation says so, and ``info`` has ``parse_error``
=====================  =====================================================================

Skill steps (``actions="skills"``): both players' skills advance together, one tick at a time,
each re-planned every tick with overcooked_ai's motion planner
(:mod:`lang_pz.envs.overcooked_skills`). The step ends after the tick in which *either*
skill ends (done, impossible, blocked), the episode ends, or :data:`MAX_SKILL_TICKS` ticks
have passed; both players then choose again (a skill still running is reported "in progress";
choosing it again continues it, since every skill re-plans from where you stand). An
impossible skill costs its player one tick standing still. ``info["ticks"]`` gives the ticks
a step took, ``info["skill"]`` the outcome.

The game is deterministic (fixed start state); ``reset(seed=...)`` is accepted for the API.
The numeric core's observation is only the tick (``Discrete(horizon + 1)``); the text is
rendered from the game state, ``env.unwrapped.game_state``.
"""

from __future__ import annotations

import contextlib
import inspect
import io
import warnings
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import ParallelEnv

from lang_pz.envs.checks import check_api, check_bool, check_choice, check_int, check_number
from lang_pz.envs.overcooked_skills import (
    SKILL_WORDS,
    Planners,
    SkillRun,
    article,
    is_possible,
    load_planners,
    next_action,
    skill_targets,
    update,
)
from lang_pz.error import ActionParseError, DependencyNotInstalled, InvalidKwargError
from lang_pz.registration import Api
from lang_pz.text import codec
from lang_pz.text.adapter import LanguageAdapter

#: Registered layout name -> overcooked_ai 1.1.0 layout file.
LAYOUTS: dict[str, str] = {
    "cramped_room": "cramped_room",
    "asymmetric_advantages": "asymmetric_advantages",
    "coordination_ring": "coordination_ring",
    "forced_coordination": "forced_coordination",
    "counter_circuit": "counter_circuit_o_1order",
}
#: Primitive action words in overcooked_ai's ``Action.INDEX_TO_ACTION`` order (N, S, E, W, stay, interact).
PRIMITIVES: tuple[str, ...] = ("up", "down", "right", "left", "stay", "interact")
#: Upper bound on the ticks of one skill step.
MAX_SKILL_TICKS: int = 40
AGENTS: tuple[str, str] = ("player_0", "player_1")

_INSTALL_HINT = (
    "pip install 'lang_pz[overcooked]' && pip install --no-deps overcooked-ai==1.1.0 "
    "(or `make install`; --no-deps keeps overcooked-ai's pygame from overwriting pygame-ce)"
)
_DIRECTIONS = {(0, -1): "up", (0, 1): "down", (1, 0): "right", (-1, 0): "left"}
_TERRAIN = {"X": "counter", "O": "onion dispenser", "T": "tomato dispenser", "D": "dish dispenser",
            "P": "pot", "S": "serving window", " ": "floor"}
_OBJECT_LETTER = {"onion": "o", "tomato": "t", "dish": "d", "soup": "s"}


def import_overcooked() -> Any:
    """Import ``overcooked_ai_py`` (its ``gym`` import's deprecation notice silenced).

    Returns:
        The ``overcooked_ai_py.mdp.overcooked_env`` module.

    Raises:
        DependencyNotInstalled: it is missing, or NumPy 2 is installed (it uses ``np.Inf``);
            the message says how to install it.
    """
    try:
        with contextlib.redirect_stderr(io.StringIO()), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import overcooked_ai_py.mdp.overcooked_env as oc_env
    except ImportError as exc:
        raise DependencyNotInstalled(
            f"Overcooked needs {exc.name or 'overcooked_ai_py'}, which is not installed: {_INSTALL_HINT}"
        ) from exc
    except AttributeError as exc:  # `np.Inf` and friends under NumPy 2
        raise DependencyNotInstalled(
            f"overcooked-ai 1.1.0 does not work with numpy {np.__version__} ({exc}): "
            "pip install 'numpy<2' (the lang_pz[overcooked] extra pins it)"
        ) from exc
    return oc_env


class OvercookedParallelEnv(ParallelEnv):
    """The numeric core: a PettingZoo ``ParallelEnv`` over overcooked_ai's ``OvercookedEnv``.

    Actions are indices: into :data:`PRIMITIVES` or into
    :data:`lang_pz.envs.overcooked_skills.SKILL_WORDS`. Wrap it with
    :class:`OvercookedAdapter` (as :func:`make_env` does) for text.

    Args:
        layout: a key of :data:`LAYOUTS`.
        horizon: episode length in ticks.
        actions: ``"primitive"`` or ``"skills"``.
        shaping_factor: weight of the shaped reward (0: sparse only).
        render_mode: ``None`` or ``"ansi"`` (the global state text).
    """

    metadata = {"name": "overcooked_v0", "render_modes": ["ansi"], "is_parallelizable": True}

    def __init__(self, layout: str, horizon: int = 400, actions: str = "primitive",
                 shaping_factor: float = 0.0, render_mode: str | None = None) -> None:
        oc_env = import_overcooked()
        from overcooked_ai_py.mdp.overcooked_mdp import OvercookedGridworld

        self.layout = layout
        self.horizon = horizon
        self.action_level = actions
        self.shaping_factor = float(shaping_factor)
        self.render_mode = render_mode
        self.mdp = OvercookedGridworld.from_layout_name(LAYOUTS[layout])
        self.planners: Planners = load_planners(self.mdp)
        self.game = oc_env.OvercookedEnv.from_mdp(self.mdp, horizon=horizon, info_level=0)
        self._use_planners()
        self.possible_agents = list(AGENTS)
        self.agents: list[str] = []
        n = len(PRIMITIVES) if actions == "primitive" else len(SKILL_WORDS)
        self._action_spaces = {a: spaces.Discrete(n) for a in AGENTS}
        self._observation_spaces = {a: spaces.Discrete(horizon + 1) for a in AGENTS}
        self.soups_delivered = 0
        self.score = 0
        self.last_outcome: dict[str, dict[str, Any]] = {}
        self._unread: dict[str, str] = {}
        self._tick_id = 0
        self._mask_cache: dict[tuple[str, int], np.ndarray] = {}

    def _use_planners(self) -> None:
        # OvercookedEnv.step reads env.mp, which otherwise loads or pickles a planner in
        # site-packages; give it ours (``reset(regen_mdp=False)`` keeps them).
        self.game._mlam = self.planners.mlam
        self.game._mp = self.planners.mlam.motion_planner

    # -- spaces ---------------------------------------------------------------------------
    def observation_space(self, agent: str) -> spaces.Space[Any]:
        return self._observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space[Any]:
        return self._action_spaces[agent]

    @property
    def game_state(self) -> Any:
        """The current ``OvercookedState`` (shared, fully observable)."""
        return self.game.state

    def index(self, agent: str) -> int:
        """overcooked_ai's player index of ``agent``."""
        return AGENTS.index(agent)

    # -- what the adapter needs -------------------------------------------------------------
    def skill_mask(self, agent: str) -> np.ndarray:
        """1 for each word of ``SKILL_WORDS`` that ``agent`` can start now (cached per tick)."""
        key = (agent, self._tick_id)
        if key not in self._mask_cache:
            i = self.index(agent)
            self._mask_cache = {k: v for k, v in self._mask_cache.items() if k[1] == self._tick_id}
            self._mask_cache[key] = np.array(
                [is_possible(self.planners, self.game_state, i, w) for w in SKILL_WORDS], dtype=np.int8)
        return self._mask_cache[key]

    def note_unread(self, agent: str, reason: str | None, *, replace: bool = True) -> None:
        """Record that ``agent``'s text for the coming step did not parse (``None``: it did);
        the outcome is reported in its next observation. ``replace=False`` keeps a reason
        already recorded for this step."""
        if reason is None:
            self._unread.pop(agent, None)
        elif replace or agent not in self._unread:
            self._unread[agent] = reason

    # -- PettingZoo API ---------------------------------------------------------------------
    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None):
        self.game.reset(regen_mdp=False)
        self._use_planners()
        self.agents = list(AGENTS)
        self.soups_delivered = 0
        self.score = 0
        self.last_outcome = {}
        self._unread = {}
        self._tick_id += 1
        obs = {a: 0 for a in self.agents}
        infos = {a: self._info(a, 0.0, 0.0, 0) for a in self.agents}
        return obs, infos

    def step(self, actions: Mapping[str, Any]):
        if not self.agents:
            return {}, {}, {}, {}, {}
        unread = dict(self._unread)
        self._unread = {}
        if self.action_level == "primitive":
            sparse, shaped, ticks = self._primitive_step(actions)
            outcome = {a: {"action": PRIMITIVES[self._index_of(actions, a, 4)]} for a in self.agents}
        else:
            sparse, shaped, ticks, outcome = self._skill_step(actions)
        for a, reason in unread.items():
            outcome[a]["unread"] = reason
        self.last_outcome = outcome
        team = float(sum(sparse)) + self.shaping_factor * float(sum(shaped))
        done = self.game.is_done()
        agents = list(self.agents)
        rewards = {a: team for a in agents}
        infos = {a: self._info(a, float(sparse[i]), float(shaped[i]), ticks) for i, a in enumerate(agents)}
        for a in agents:
            if "skill" in outcome[a]:
                infos[a]["skill"] = dict(outcome[a])
        t = int(self.game_state.timestep)
        obs = {a: min(t, self.horizon) for a in agents}
        terminations = {a: False for a in agents}
        truncations = {a: done for a in agents}
        if done:
            self.agents = []
        return obs, rewards, terminations, truncations, infos

    def _index_of(self, actions: Mapping[str, Any], agent: str, default: int) -> int:
        a = actions.get(agent)
        return default if a is None else int(a)

    def _tick(self, joint: tuple[Any, Any]) -> tuple[list[float], list[float]]:
        _, _, _, info = self.game.step(joint)
        self._tick_id += 1
        sparse = [float(x) for x in info["sparse_r_by_agent"]]
        self.soups_delivered += sum(1 for x in sparse if x > 0)
        self.score += int(sum(sparse))
        return sparse, [float(x) for x in info["shaped_r_by_agent"]]

    def _primitive_step(self, actions: Mapping[str, Any]) -> tuple[list[float], list[float], int]:
        from overcooked_ai_py.mdp.actions import Action

        joint = tuple(Action.INDEX_TO_ACTION[self._index_of(actions, a, 4)] for a in AGENTS)
        sparse, shaped = self._tick(joint)
        return sparse, shaped, 1

    def _skill_step(self, actions: Mapping[str, Any]):
        from overcooked_ai_py.mdp.actions import Action

        wait1 = SKILL_WORDS.index("wait 1")
        runs = [SkillRun(SKILL_WORDS[self._index_of(actions, a, wait1)]) for a in AGENTS]
        sparse, shaped, ticks = [0.0, 0.0], [0.0, 0.0], 0
        while True:
            before = self.game_state
            p0, p1 = before.players
            a0 = next_action(self.planners, before, 0, runs[0], frozenset({p1.position})) \
                if runs[0].status == "running" else Action.STAY
            going = runs[0].expected[0] if runs[0].status == "running" and runs[0].expected else p0.position
            a1 = next_action(self.planners, before, 1, runs[1], frozenset({p0.position, going})) \
                if runs[1].status == "running" else Action.STAY
            joint = (a0, a1)
            sp, sh = self._tick(joint)
            sparse = [x + y for x, y in zip(sparse, sp)]
            shaped = [x + y for x, y in zip(shaped, sh)]
            ticks += 1
            for i, run in enumerate(runs):
                update(self.planners, before, self.game_state, i, run, joint[i])
            if self.game.is_done() or ticks >= MAX_SKILL_TICKS or any(r.status != "running" for r in runs):
                break
        outcome = {
            a: {"skill": r.skill, "status": "in progress" if r.status == "running" else r.status,
                "ticks": r.ticks, "reason": r.reason}
            for a, r in zip(AGENTS, runs)
        }
        return sparse, shaped, ticks, outcome

    def _info(self, agent: str, sparse: float, shaped: float, ticks: int) -> dict[str, Any]:
        return {"timestep": int(self.game_state.timestep), "ticks": ticks, "soups_delivered": self.soups_delivered,
                "sparse_reward": sparse, "shaped_reward": shaped}

    def render(self) -> str | None:
        if self.render_mode == "ansi":
            return describe_state(self)
        return None

    def close(self) -> None:
        pass


# -- text ---------------------------------------------------------------------------------


def _held_text(player: Any) -> str:
    if not player.has_object():
        return "nothing"
    obj = player.get_object()
    if obj.name == "soup":
        return f"a soup of {_ingredients(obj.ingredients)}"
    return article(obj.name)


def _ingredients(names: list[str]) -> str:
    parts = []
    for name in sorted(set(names)):
        k = names.count(name)
        parts.append(f"{k} {name}{'s' if k != 1 else ''}")
    return " and ".join(parts) or "nothing"


def _facing_text(mdp: Any, state: Any, player: Any) -> str:
    dx, dy = player.orientation
    x, y = player.position
    fx, fy = x + dx, y + dy
    what = _TERRAIN.get(mdp.get_terrain_type_at_pos((fx, fy)), "?")
    if what == "floor":
        return f"facing {_DIRECTIONS[player.orientation]} (floor)"
    return f"facing {_DIRECTIONS[player.orientation]} to the {what} ({fx},{fy})"


def _pot_text(state: Any, pos: tuple[int, int]) -> str:
    if not state.has_object(pos):
        return f"Pot ({pos[0]},{pos[1]}): empty."
    soup = state.get_object(pos)
    n = len(soup.ingredients)
    if soup.is_ready:
        return f"Pot ({pos[0]},{pos[1]}): soup of {_ingredients(soup.ingredients)}, READY to fill a dish."
    if soup.is_cooking:
        return (f"Pot ({pos[0]},{pos[1]}): soup of {_ingredients(soup.ingredients)}, cooking, "
                f"{soup.cook_time_remaining} more steps.")
    return f"Pot ({pos[0]},{pos[1]}): {_ingredients(soup.ingredients)} of 3, not cooking{' (full)' if n >= 3 else ''}."


def _map_lines(mdp: Any, state: Any, marks: dict[tuple[int, int], str]) -> list[str]:
    width = len(mdp.terrain_mtx[0])
    lines = ["  " + "".join(str(x % 10) for x in range(width))]
    for y, row in enumerate(mdp.terrain_mtx):
        cells = []
        for x, t in enumerate(row):
            pos = (x, y)
            if pos in marks:
                cells.append(marks[pos])
            elif t == "X" and state.has_object(pos):
                cells.append(_OBJECT_LETTER.get(state.get_object(pos).name, "?"))
            else:
                cells.append(t)
        lines.append(f"{y % 10} " + "".join(cells))
    return lines


def _key_line(mdp: Any) -> str:
    present = {t for row in mdp.terrain_mtx for t in row}
    names = [f"{t} {_TERRAIN[t]}" for t in "XODTPS" if t in present]
    return "Key: " + ", ".join(names) + "; on a counter: o onion, d dish, s soup."


def _shared_lines(env: OvercookedParallelEnv) -> list[str]:
    """Pots, counter objects and orders."""
    state, mdp = env.game_state, env.mdp
    lines = [_pot_text(state, p) for p in mdp.get_pot_locations()]
    on_counters = [f"{obj.name} ({x},{y})" for (x, y), obj in sorted(state.objects.items())
                   if mdp.get_terrain_type_at_pos((x, y)) == "X"]
    if on_counters:
        lines.append("On counters: " + ", ".join(on_counters) + ".")
    orders = [f"soup of {_ingredients(list(r.ingredients))} ({r.value} points, cooks {r.time} steps)"
              for r in state.all_orders]
    lines.append("Orders: " + "; ".join(orders) + ".")
    return lines


def _outcome_text(outcome: Mapping[str, Any] | None, you: bool) -> str | None:
    if not outcome:
        return None
    who, did = ("Your", "you") if you else ("Its", "it")
    if "unread" in outcome:
        done = outcome.get("skill", outcome.get("action"))
        note = outcome['unread']
        return f"{note[0].upper()}{note[1:]}, so {did} did '{done}' instead."
    if "skill" in outcome:
        status, n = outcome["status"], outcome["ticks"]
        line = f"{who} last skill '{outcome['skill']}': {status} after {n} step{'s' if n != 1 else ''}"
        if outcome.get("reason"):
            line += f" ({outcome['reason']})"
        return line + "."
    return None


def describe_for(env: OvercookedParallelEnv, agent: str) -> str:
    """``agent``'s observation text (without the action line)."""
    state, mdp = env.game_state, env.mdp
    i = env.index(agent)
    me, mate = state.players[i], state.players[1 - i]
    t = int(state.timestep)
    lines = [
        f"Overcooked, {env.layout}. You are {agent} (A); your teammate is {AGENTS[1 - i]} (B).",
        f"Step {t} of {env.horizon}, {env.horizon - t} left. Soups delivered: {env.soups_delivered} "
        f"(team score {env.score}).",
        *_map_lines(mdp, state, {me.position: "A", mate.position: "B"}),
        _key_line(mdp),
        f"You (A): at ({me.position[0]},{me.position[1]}), {_facing_text(mdp, state, me)}, "
        f"holding {_held_text(me)}.",
        f"Teammate (B): at ({mate.position[0]},{mate.position[1]}), {_facing_text(mdp, state, mate)}, "
        f"holding {_held_text(mate)}.",
        *_shared_lines(env),
    ]
    if env.action_level == "primitive":
        lines.append("interact = use what you face (take, put, start a full pot, serve).")
    mine = _outcome_text(env.last_outcome.get(agent), True)
    if mine:
        lines.append(mine)
    return "\n".join(lines)


def describe_state(env: OvercookedParallelEnv) -> str:
    """The global state text (both players named, no "you"), for the centralised critic."""
    state, mdp = env.game_state, env.mdp
    t = int(state.timestep)
    lines = [f"Overcooked, {env.layout}. Step {t} of {env.horizon}. Soups delivered: "
             f"{env.soups_delivered} (team score {env.score}).",
             *_map_lines(mdp, state, {p.position: str(k) for k, p in enumerate(state.players)}),
             _key_line(mdp) + " 0/1: player_0/player_1."]
    for k, p in enumerate(state.players):
        line = (f"player_{k}: at ({p.position[0]},{p.position[1]}), {_facing_text(mdp, state, p)}, "
                f"holding {_held_text(p)}.")
        last = _outcome_text(env.last_outcome.get(AGENTS[k]), False)
        lines.append(line + (f" {last}" if last else ""))
    lines.extend(_shared_lines(env))
    return "\n".join(lines)


class OvercookedAdapter(LanguageAdapter):
    """Text for Overcooked: the per-player view of :func:`describe_for`, skill masks, and
    unreadable replies reported back to the player."""

    def __init__(self, actions: str = "primitive") -> None:
        super().__init__(action_names=PRIMITIVES if actions == "primitive" else SKILL_WORDS)
        self.level = actions

    def observation_text(self, env: Any, agent: str | None, observation: Any) -> str:
        return describe_for(env.unwrapped, agent)

    def action_mask(self, env: Any, agent: str | None, observation: Any, info: Mapping[str, Any]) -> np.ndarray | None:
        """Skills: those that can start now (``skill_mask``); primitive actions: no mask."""
        if self.level == "skills":
            return env.unwrapped.skill_mask(agent)
        return None

    def parse(self, env: Any, agent: str | None, text: str, observation: Any, info: Mapping[str, Any]) -> Any:
        """Parse as the generic adapter does. A skill word that is impossible now is rejected
        with the reason (e.g. "you must hold a soup, but you hold nothing"). Either way the
        game is told, so the player's next observation says what happened instead."""
        game = env.unwrapped
        try:
            action = super().parse(env, agent, text, observation, info)
        except ActionParseError as exc:
            word = self._skill_word(text)
            if word is None:
                game.note_unread(agent, "your last reply named no action")
                raise
            why = skill_targets(game.planners, game.game_state, game.index(agent), word)[1]
            game.note_unread(agent, f"'{word}' was impossible: {why}")
            raise ActionParseError(text, f"'{word}' is impossible now: {why}") from exc
        game.note_unread(agent, None)
        return action

    def _skill_word(self, text: str) -> str | None:
        """The skill ``text`` names, ignoring whether it is possible (``None`` if it names none)."""
        if self.level != "skills":
            return None
        try:
            return SKILL_WORDS[codec.parse_action(spaces.Discrete(len(SKILL_WORDS)), text, names=SKILL_WORDS)]
        except ActionParseError:
            return None

    def fallback_text(self, env: Any, agent: str | None, action: Any, reason: str) -> str | None:
        """None: the game itself reports an unread reply in the next observation. :meth:`parse`
        has told it why; a reply refused before parsing (not text, too long) is told here."""
        env.unwrapped.note_unread(agent, f"your last reply could not be used ({reason})", replace=False)
        return None

    def fallback(self, env: Any, agent: str | None, observation: Any, info: Mapping[str, Any]) -> Any:
        """``stay`` (primitive) or ``wait 1`` (skills)."""
        return PRIMITIVES.index("stay") if self.level == "primitive" else SKILL_WORDS.index("wait 1")

    def state_text(self, env: Any, observations: Mapping[str, Any]) -> str:
        return describe_state(env.unwrapped)


def make_env(
    api: Api = "parallel",
    *,
    layout: str = "cramped_room",
    horizon: int = 400,
    actions: str = "primitive",
    shaping_factor: float = 0.0,
    strict: bool = False,
    render_mode: str | None = None,
) -> Any:
    """Make language Overcooked (see the module docstring for agents, spaces and rewards).

    Args:
        api: ``"parallel"`` or ``"aec"``.
        layout: a key of :data:`LAYOUTS` (fixed by the registered id).
        horizon: episode length in ticks (>= 1; the literature uses 400).
        actions: ``"primitive"`` (one tick per step) or ``"skills"`` (planner-run skills).
        shaping_factor: weight (>= 0) of the shaped reward; 1.0 gives the paper's units.
        strict: raise :class:`lang_pz.error.ActionParseError` on unreadable text.
        render_mode: ``None`` or ``"ansi"``.

    Raises:
        InvalidKwargError: a bad value (named in the message, with the valid ones).
        DependencyNotInstalled: overcooked-ai (or NumPy < 2) is missing; says how to install.
    """
    from pettingzoo.utils.conversions import parallel_to_aec

    from lang_pz.wrappers import LanguageAECWrapper, LanguageParallelWrapper

    env_id = f"overcooked/{layout}-v0"
    check_api(env_id, api, ("parallel", "aec"))
    check_choice("layout", layout, tuple(LAYOUTS))
    check_int("horizon", horizon, 1)
    check_choice("actions", actions, ("primitive", "skills"))
    check_number("shaping_factor", shaping_factor)
    if shaping_factor < 0:
        raise InvalidKwargError(f"shaping_factor must be >= 0 (0 = sparse reward only), got {shaping_factor!r}")
    check_bool("strict", strict)
    check_choice("render_mode", render_mode, (None, "ansi"))
    env = OvercookedParallelEnv(layout, horizon=horizon, actions=actions,
                                shaping_factor=shaping_factor, render_mode=render_mode)
    adapter = OvercookedAdapter(actions)
    if api == "aec":
        return LanguageAECWrapper(parallel_to_aec(env), adapter, strict=strict)
    return LanguageParallelWrapper(env, adapter, strict=strict)


def _entry_point(layout: str) -> Callable[..., Any]:
    """``make_env`` with ``layout`` fixed: the registered entry point of one id."""

    def make(api: Api = "parallel", **kwargs: Any) -> Any:
        return make_env(api, layout=layout, **kwargs)

    sig = inspect.signature(make_env)
    make.__signature__ = sig.replace(  # type: ignore[attr-defined]
        parameters=[p for p in sig.parameters.values() if p.name != "layout"])
    make.__name__ = make.__qualname__ = f"make_{layout}"
    make.__doc__ = f"Make language Overcooked on {layout} (see :func:`make_env`)."
    return make


make_cramped_room = _entry_point("cramped_room")
make_asymmetric_advantages = _entry_point("asymmetric_advantages")
make_coordination_ring = _entry_point("coordination_ring")
make_forced_coordination = _entry_point("forced_coordination")
make_counter_circuit = _entry_point("counter_circuit")
