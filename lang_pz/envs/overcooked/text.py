"""Overcooked as text: each player's view, the critic's global state, and the adapter.

:func:`describe_for` renders one player's observation from the game state (the map with a key,
both players, pots, counters, orders, the outcome of its last skill or unread reply);
:func:`describe_state` the same for the centralised critic; :class:`OvercookedAdapter` is the
language interface of :func:`lang_pz.envs.overcooked.make_env`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
from gymnasium import spaces

from lang_pz.envs.overcooked.macro_actions import AGENTS, PRIMITIVES, SKILL_WORDS, article, skill_targets
from lang_pz.error import ActionParseError
from lang_pz.text import codec
from lang_pz.text.adapter import LanguageAdapter

if TYPE_CHECKING:
    from lang_pz.envs.overcooked.core import OvercookedParallelEnv

_DIRECTIONS = {(0, -1): "up", (0, 1): "down", (1, 0): "right", (-1, 0): "left"}
_TERRAIN = {
    "X": "counter",
    "O": "onion dispenser",
    "T": "tomato dispenser",
    "D": "dish dispenser",
    "P": "pot",
    "S": "serving window",
    " ": "floor",
}
_OBJECT_LETTER = {"onion": "o", "tomato": "t", "dish": "d", "soup": "s"}


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
        return (
            f"Pot ({pos[0]},{pos[1]}): soup of {_ingredients(soup.ingredients)}, cooking, "
            f"{soup.cook_time_remaining} more steps."
        )
    return f"Pot ({pos[0]},{pos[1]}): {_ingredients(soup.ingredients)} of 3, not cooking{' (full)' if n >= 3 else ''}."


class _Layout:
    """What the text of one layout never changes: the map rows, their header, the key line,
    the counters and pots (built once per ``OvercookedGridworld``)."""

    def __init__(self, mdp: Any) -> None:
        width = len(mdp.terrain_mtx[0])
        self.header = "  " + "".join(str(x % 10) for x in range(width))
        self.rows = [list(row) for row in mdp.terrain_mtx]
        self.prefixes = [f"{y % 10} " for y in range(len(self.rows))]
        self.counters = {(x, y) for y, row in enumerate(mdp.terrain_mtx) for x, t in enumerate(row) if t == "X"}
        self.pots = list(mdp.get_pot_locations())
        present = {t for row in mdp.terrain_mtx for t in row}
        names = [f"{t} {_TERRAIN[t]}" for t in "XODTPS" if t in present]
        self.key = "Key: " + ", ".join(names) + "; on a counter: o onion, d dish, s soup."


_LAYOUTS: dict[int, tuple[Any, _Layout]] = {}


def _layout(mdp: Any) -> _Layout:
    hit = _LAYOUTS.get(id(mdp))
    if hit is None or hit[0] is not mdp:
        hit = _LAYOUTS[id(mdp)] = (mdp, _Layout(mdp))
    return hit[1]


def _marked(lines: list[str], marks: dict[tuple[int, int], str]) -> list[str]:
    """Map ``lines`` (header first, rows prefixed ``"y "``) with ``marks`` drawn over them."""
    out = list(lines)
    for (x, y), letter in marks.items():
        row = out[y + 1]
        out[y + 1] = row[: x + 2] + letter + row[x + 3 :]
    return out


class _Tick:
    """What both players' texts (and the critic's) share in one tick, built once per tick:
    the map with the objects on counters, each player's position, facing and load, and the
    lines on pots, counter objects and orders."""

    def __init__(self, env: OvercookedParallelEnv, state: Any) -> None:
        mdp = env.mdp
        layout = _layout(mdp)
        on = {pos: obj for pos, obj in state.objects.items() if pos in layout.counters}
        changed: dict[int, list[str]] = {}
        for (x, y), obj in on.items():
            changed.setdefault(y, list(layout.rows[y]))[x] = _OBJECT_LETTER.get(obj.name, "?")
        self.map = [layout.header] + [
            prefix + "".join(changed.get(y, row)) for y, (prefix, row) in enumerate(zip(layout.prefixes, layout.rows))
        ]
        self.players = [
            f"at ({p.position[0]},{p.position[1]}), {_facing_text(mdp, state, p)}, holding {_held_text(p)}."
            for p in state.players
        ]
        lines = [_pot_text(state, p) for p in layout.pots]
        on_counters = [f"{obj.name} ({x},{y})" for (x, y), obj in sorted(on.items())]
        if on_counters:
            lines.append("On counters: " + ", ".join(on_counters) + ".")
        orders = [
            f"soup of {_ingredients(list(r.ingredients))} ({r.value} points, cooks {r.time} steps)" for r in state.all_orders
        ]
        lines.append("Orders: " + "; ".join(orders) + ".")
        self.shared = lines


def _tick(env: OvercookedParallelEnv) -> _Tick:
    """The :class:`_Tick` of the current state (rebuilt when the tick or the state object changes)."""
    state = env.game_state
    key = (env.tick_id, id(state))
    memo = env.__dict__.get("_tick_text")
    if memo is None or memo[0] != key or memo[1] is not state:
        memo = env.__dict__["_tick_text"] = (key, state, _Tick(env, state))
    return memo[2]


def _outcome_text(outcome: Mapping[str, Any] | None, you: bool) -> str | None:
    if not outcome:
        return None
    who, did = ("Your", "you") if you else ("Its", "it")
    if "unread" in outcome:
        done = outcome.get("skill", outcome.get("action"))
        note = outcome["unread"]
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
    state, tick = env.game_state, _tick(env)
    i = env.index(agent)
    t = int(state.timestep)
    lines = [
        f"Overcooked, {env.layout}. You are {agent} (A); your teammate is {AGENTS[1 - i]} (B).",
        f"Step {t} of {env.horizon}, {env.horizon - t} left. Soups delivered: {env.soups_delivered} "
        f"(team score {env.score}).",
        *_marked(tick.map, {state.players[i].position: "A", state.players[1 - i].position: "B"}),
        _layout(env.mdp).key,
        f"You (A): {tick.players[i]}",
        f"Teammate (B): {tick.players[1 - i]}",
        *tick.shared,
    ]
    if env.action_level == "primitive":
        lines.append("interact = use what you face (take, put, start a full pot, serve).")
    mine = _outcome_text(env.last_outcome.get(agent), True)
    if mine:
        lines.append(mine)
    return "\n".join(lines)


def describe_state(env: OvercookedParallelEnv) -> str:
    """The global state text (both players named, no "you"), for the centralised critic."""
    state, tick = env.game_state, _tick(env)
    t = int(state.timestep)
    lines = [
        f"Overcooked, {env.layout}. Step {t} of {env.horizon}. Soups delivered: "
        f"{env.soups_delivered} (team score {env.score}).",
        *_marked(tick.map, {p.position: str(k) for k, p in enumerate(state.players)}),
        _layout(env.mdp).key + " 0/1: player_0/player_1.",
    ]
    for k in range(len(state.players)):
        last = _outcome_text(env.last_outcome.get(AGENTS[k]), False)
        lines.append(f"player_{k}: {tick.players[k]}" + (f" {last}" if last else ""))
    lines.extend(tick.shared)
    return "\n".join(lines)


class OvercookedAdapter(LanguageAdapter):
    """Text for Overcooked: the per-player view of :func:`describe_for`, skill masks, and
    unreadable replies reported back to the player. It renders from the game state, never
    from the numeric observation (the tick), so the wrappers do not fetch it."""

    reads_observation = False

    def __init__(self, actions: str = "primitive") -> None:
        super().__init__(action_names=PRIMITIVES if actions == "primitive" else SKILL_WORDS)
        self.level = actions

    def observation_text(self, env: Any, agent: str | None, observation: Any) -> str:
        assert agent is not None  # a two-player env: hooks always get a player's name
        return describe_for(env.unwrapped, agent)

    def legal_actions_fixed(self, env: Any, agent: str | None) -> bool:
        """Primitive actions are always all legal; skills follow the state."""
        return self.level == "primitive"

    def action_mask(self, env: Any, agent: str | None, observation: Any, info: Mapping[str, Any]) -> np.ndarray | None:
        """Skills: those that can start now (``skill_mask``); primitive actions: no mask."""
        if self.level == "macro":
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
        if self.level != "macro":
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
