"""Overcooked's macro-actions (the ``actions="macro"`` level), executed with overcooked_ai's planners,
and the action vocabulary of both levels (:data:`PRIMITIVES`, :data:`SKILL_WORDS`).

A macro-action (a *skill* in the env's ``actions`` kwarg) is a medium-level action in the sense of overcooked_ai's
``MediumLevelActionManager`` (Carroll et al., "On the Utility of Learning about Humans for
Human-AI Coordination", NeurIPS 2019, Sec. 4 and App. C: the planning agents choose "medium
level actions" = motion goals such as "go to a pot and interact"). Each skill names a set of
target cells; every tick the agent re-plans from where it stands to the cheapest reachable
target with overcooked_ai's ``MotionPlanner`` and takes the first action of that plan, then
``interact`` when it faces the target.

=====================  =====================================================================
Skill                  Precondition / target / done when
=====================  =====================================================================
pick up onion          empty hands / an onion dispenser or an onion on a counter / holding onion
pick up dish           empty hands / a dish dispenser or a dish on a counter / holding a dish
put onion in pot       holding an onion / a pot with room / the onion is in the pot
start cooking          empty hands / a pot with ingredients, not cooking (full pots first) /
                       the pot cooks
fill dish with soup    holding a dish / a ready pot, else a cooking one (waits beside it) /
                       holding soup
deliver soup           holding soup / a serving window / the soup is delivered
place on counter       holding anything / the nearest empty counter your teammate can reach
                       too (else any empty counter) / hands empty
wait N                 N in :data:`WAITS` / - / N ticks have passed
=====================  =====================================================================

A skill ends ``done``, ``impossible`` (its precondition fails or no target is reachable; the
reason is kept; the agent stays for that tick), or ``blocked`` (the teammate stood in the way
for :data:`BLOCKED_LIMIT` ticks in a row); the environment may also stop it while still
``running`` (see :mod:`lang_pz.envs.overcooked`). The precomputed plans ignore the teammate,
so traffic follows one rule (:func:`next_action`): ``player_0`` has right of way, ``player_1``
steers around it at once, ``player_0`` around a teammate that has not moved away after a
tick. Two skill-driven players therefore never collide or swap back and forth forever.

Planners: ``MediumLevelActionManager`` with overcooked_ai's standard ``NO_COUNTERS_PARAMS``
(used for the dispenser / pot / serving targets and by the greedy partner) and a
``MotionPlanner`` whose motion goals include every counter (for counter targets; building
the manager itself with counter goals takes 100 s on Counter Circuit). Both are built once per
process and layout and kept in memory only (:mod:`lang_pz.envs.overcooked.planners`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from lang_pz.envs.overcooked.planners import Planners

#: Skills without a parameter, in action-index order.
#: Primitive action words in overcooked_ai's ``Action.INDEX_TO_ACTION`` order (N, S, E, W, stay, interact).
PRIMITIVES: tuple[str, ...] = ("up", "down", "right", "left", "stay", "interact")
AGENTS: tuple[str, str] = ("player_0", "player_1")

SKILLS: tuple[str, ...] = (
    "pick up onion",
    "pick up dish",
    "put onion in pot",
    "start cooking",
    "fill dish with soup",
    "deliver soup",
    "place on counter",
)
#: The durations ``wait N`` accepts, in ticks.
WAITS: tuple[int, ...] = (1, 2, 5, 10)
#: Every skill word, in action-index order (``SKILLS`` then ``wait N``).
SKILL_WORDS: tuple[str, ...] = SKILLS + tuple(f"wait {n}" for n in WAITS)
#: Consecutive ticks the teammate may block a skill before it ends ``blocked``.
BLOCKED_LIMIT: int = 3

# -- skills -------------------------------------------------------------------------------


@dataclass
class SkillRun:
    """One agent's skill in progress.

    Attributes:
        skill: a word of :data:`SKILL_WORDS`.
        ticks: ticks spent on it so far.
        status: ``running``, ``done``, ``impossible`` or ``blocked``.
        reason: why it is impossible or blocked (empty otherwise).
        blocked: consecutive ticks the teammate stood in the way.
        expected: the (position, orientation) this tick's action should reach.
    """

    skill: str
    ticks: int = 0
    status: str = "running"
    reason: str = ""
    blocked: int = 0
    expected: Any = field(default=None, repr=False)

    @property
    def wait_ticks(self) -> int | None:
        """N for ``wait N``, else ``None``."""
        return int(self.skill.split()[1]) if self.skill.startswith("wait ") else None


def _held(player: Any) -> str | None:
    return player.get_object().name if player.has_object() else None


def skill_targets(planners: Planners, state: Any, index: int, skill: str) -> tuple[list[Any], str]:
    """Motion goals ``[(position, orientation), ...]`` of ``skill`` for player ``index`` now,
    reachable from where it stands, or ``([], reason)`` when the skill is impossible.

    ``wait N`` has no targets and is always possible (``([], "")``).
    """
    mdp, mlam, mp = planners.mdp, planners.mlam, planners.counter_mp
    player = state.players[index]
    held = _held(player)
    if skill.startswith("wait "):
        return [], ""
    needs = {
        "pick up onion": None,
        "pick up dish": None,
        "start cooking": None,
        "put onion in pot": "onion",
        "fill dish with soup": "dish",
        "deliver soup": "soup",
    }
    if skill in needs:
        need = needs[skill]
        if need is None and held is not None:
            return [], f"your hands must be empty, but you hold {article(held)}"
        if need is not None and held != need:
            return [], f"you must hold {article(need)}, but you hold {article(held) if held else 'nothing'}"
    elif skill == "place on counter" and held is None:
        return [], "you hold nothing"
    counter_objects = mdp.get_counter_objects_dict(state, mdp.get_counter_locations())
    pots = mdp.get_pot_states(state)
    if skill == "pick up onion":
        goals, what = mlam.pickup_onion_actions(counter_objects), "onion dispenser or onion on a counter"
    elif skill == "pick up dish":
        goals, what = mlam.pickup_dish_actions(counter_objects), "dish dispenser or dish on a counter"
    elif skill == "put onion in pot":
        goals, what = mlam.put_onion_in_pot_actions(pots), "pot with room for an onion"
    elif skill == "start cooking":
        full = mdp.get_full_but_not_cooking_pots(pots)
        positions = full or mdp.get_partially_full_pots(pots)
        goals, what = _goals_at(mp, positions), "pot with ingredients that is not cooking yet"
    elif skill == "fill dish with soup":
        goals, what = mlam.pickup_soup_with_dish_actions(pots, only_nearly_ready=True), "pot that is cooking or ready"
        ready = _goals_at(mp, pots["ready"])
        reachable_ready = [g for g in ready if mp.is_valid_motion_start_goal_pair(player.pos_and_or, g)]
        goals = reachable_ready or goals
    elif skill == "deliver soup":
        goals, what = mlam.deliver_soup_actions(), "serving window"
    elif skill == "place on counter":
        empty = mdp.get_empty_counter_locations(state)
        mate = state.players[1 - index].pos_and_or
        shared = [c for c in empty if any(mp.is_valid_motion_start_goal_pair(mate, g) for g in mp.motion_goals_for_pos[c])]
        goals, what = _goals_at(mp, shared or empty), "empty counter"
    else:
        raise ValueError(f"unknown skill {skill!r}; skills: {list(SKILL_WORDS)}")
    reachable = [g for g in goals if mp.is_valid_motion_start_goal_pair(player.pos_and_or, g)]
    if not reachable:
        return [], f"there is no {what} you can reach"
    return reachable, ""


def _goals_at(mp: Any, positions: list[Any]) -> list[Any]:
    return [g for pos in positions for g in mp.motion_goals_for_pos[pos]]


def article(obj: str | None) -> str:
    """``"an onion"``, ``"a dish"``, ``"a soup"`` (``"nothing"`` for ``None``)."""
    if obj is None:
        return "nothing"
    return f"{'an' if obj[0] in 'aeiou' else 'a'} {obj}"


def is_possible(planners: Planners, state: Any, index: int, skill: str) -> bool:
    """Whether ``skill`` can start now for player ``index``."""
    return skill.startswith("wait ") or bool(skill_targets(planners, state, index, skill)[0])


def next_action(
    planners: Planners, state: Any, index: int, run: SkillRun, avoid: frozenset[tuple[int, int]] = frozenset()
) -> Any:
    """The primitive overcooked_ai action player ``index`` takes this tick for ``run``.

    Marks ``run`` impossible (and returns ``STAY``) when its precondition fails or no target
    is reachable. The move is the first of the motion planner's precomputed shortest plan,
    unless that enters a cell of ``avoid`` (the teammate's cell, and for ``player_1`` also the
    cell ``player_0`` is moving to: ``player_0`` has right of way). Then ``player_1`` takes a
    shortest path around (:func:`_detour`) at once, ``player_0`` after waiting one tick for
    the teammate to clear; a tick spent waiting counts as blocked. ``run.expected`` is set to
    the (position, orientation) the action should reach.
    """
    from overcooked_ai_py.mdp.actions import Action

    me = state.players[index].pos_and_or
    run.expected = me
    if run.wait_ticks is not None:
        return Action.STAY
    goals, reason = skill_targets(planners, state, index, run.skill)
    if not goals:
        run.status, run.reason = "impossible", reason
        return Action.STAY
    goals = [g for g in goals if g[0] not in avoid] or goals  # prefer targets nobody stands on
    actions, path, _cost, goal = min((planners.counter_mp.get_plan(me, g) + (g,) for g in goals), key=lambda p: p[2])
    action = actions[0]
    if action == Action.INTERACT:
        if run.skill == "fill dish with soup" and not _ready_pot_faced(planners, state, goal):
            return Action.STAY  # beside a cooking pot: wait for the soup
        return action
    if path[0][0] in avoid and path[0][0] != me[0]:
        detour = None if index == 0 and run.blocked == 0 else _detour(planners.mdp, me, set(goals), avoid)
        if detour is None:
            run.blocked += 1
            return Action.STAY
        action = detour
    run.expected = planners.mdp._move_if_direction(me[0], me[1], action)
    return action


def _detour(mdp: Any, start: Any, goals: set[Any], avoid: frozenset[tuple[int, int]]) -> Any | None:
    """First move of a shortest path from ``start`` to any of ``goals`` that never enters a
    cell of ``avoid``, by breadth-first search over (position, orientation); ``None`` if there
    is none. The precomputed plans ignore the teammate; this routes around it."""
    from collections import deque

    from overcooked_ai_py.mdp.actions import Direction

    first: dict[Any, Any] = {start: None}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        if node in goals and node != start:
            return first[node]
        for d in Direction.ALL_DIRECTIONS:
            nxt = mdp._move_if_direction(node[0], node[1], d)
            if nxt in first or (nxt[0] in avoid and nxt[0] != node[0]):
                continue
            first[nxt] = d if first[node] is None else first[node]
            queue.append(nxt)
    return None


def _ready_pot_faced(planners: Planners, state: Any, goal: Any) -> bool:
    from overcooked_ai_py.mdp.actions import Action

    pos, orientation = goal
    return planners.mdp.soup_ready_at_location(state, Action.move_in_direction(pos, orientation))


def update(planners: Planners, before: Any, after: Any, index: int, run: SkillRun, action: Any) -> None:
    """Advance ``run`` after one tick from ``before`` to ``after`` in which player ``index`` took
    ``action``: count the tick, detect completion and blocking."""
    from overcooked_ai_py.mdp.actions import Action

    if run.status != "running":
        run.ticks += 1
        return
    run.ticks += 1
    held_before, held_after = _held(before.players[index]), _held(after.players[index])
    if run.wait_ticks is not None:
        if run.ticks >= run.wait_ticks:
            run.status = "done"
        return
    if action == Action.INTERACT:
        done = {
            "pick up onion": held_after == "onion",
            "pick up dish": held_after == "dish",
            "put onion in pot": held_before == "onion" and held_after is None,
            "fill dish with soup": held_after == "soup",
            "deliver soup": held_before == "soup" and held_after is None,
            "place on counter": held_before is not None and held_after is None,
            "start cooking": _faced_pot_cooking(planners, after, index),
        }[run.skill]
        if done:
            run.status = "done"
        return
    if after.players[index].pos_and_or != run.expected:
        run.blocked += 1  # the move did not happen: the teammate was in the way
    elif run.expected != before.players[index].pos_and_or:
        run.blocked = 0  # moved as planned
    if run.blocked >= BLOCKED_LIMIT:
        run.status, run.reason = "blocked", f"your teammate stood in your way for {run.blocked} steps"


def _faced_pot_cooking(planners: Planners, state: Any, index: int) -> bool:
    from overcooked_ai_py.mdp.actions import Action

    player = state.players[index]
    pos = Action.move_in_direction(player.position, player.orientation)
    if not state.has_object(pos) or pos not in planners.mdp.get_pot_locations():
        return False
    soup = state.get_object(pos)
    return bool(soup.is_cooking or soup.is_ready)
