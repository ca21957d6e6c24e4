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
                       ``interact``, one tick per step. ``actions="macro"``: one of
                       :data:`lang_pz.envs.overcooked.macro_actions.SKILL_WORDS` (only those possible
                       now are legal), run by the planner for several ticks (below)
Reward                 sparse, shared: 20 per delivered soup to both players; plus
                       ``shaping_factor`` x the team's shaped reward in the paper's units (3 per
                       onion put in a pot, 3 per useful dish pickup, 5 per soup picked up)
Episode                truncated after ``horizon`` ticks (default 400); never terminated
Fallback               unreadable text: ``stay`` (primitive) / ``wait 1`` (skills); the next
                       observation says so, and ``info`` has ``parse_error``
=====================  =====================================================================

Skill steps (``actions="macro"``): both players' skills advance together, one tick at a time,
each re-planned every tick with overcooked_ai's motion planner
(:mod:`lang_pz.envs.overcooked.macro_actions`). The step ends after the tick in which *either*
skill ends (done, impossible, blocked), the episode ends, or :data:`MAX_SKILL_TICKS` ticks
have passed; both players then choose again (a skill still running is reported "in progress";
choosing it again continues it, since every skill re-plans from where you stand). An
impossible skill costs its player one tick standing still. ``info["ticks"]`` gives the ticks
a step took, ``info["skill"]`` the outcome.

The game is deterministic. By default (``split=None``) every episode starts from the layout's
fixed start state, as in overcooked_ai and the literature, so the seed changes nothing; with
``split="train"`` / ``"validation"`` / ``"test"`` (disjoint sets) or ``"all"`` the reset seed
picks the start state: both players' cells and facings (:mod:`lang_pz.envs.overcooked.starts`).
``env.unwrapped.item_id`` names the start state of the episode.
The numeric core's observation is only the tick (``Discrete(horizon + 1)``); the text is
rendered from the game state, ``env.unwrapped.game_state``.
"""

from typing import TYPE_CHECKING

from lang_pz._moved import moved_getattr
from lang_pz.envs.overcooked.core import LAYOUTS, OvercookedParallelEnv
from lang_pz.envs.overcooked.make import make_env
from lang_pz.envs.overcooked.text import OvercookedAdapter

__all__ = ["LAYOUTS", "OvercookedAdapter", "OvercookedParallelEnv", "make_env"]


#: Names this package no longer exports -> where to import them from (a DeprecationWarning
#: until the next release: :mod:`lang_pz._moved`).
_MOVED = {
    "AGENTS": "lang_pz.envs.overcooked.macro_actions.AGENTS",
    "MAX_SKILL_TICKS": "lang_pz.envs.overcooked.core.MAX_SKILL_TICKS",
    "PRIMITIVES": "lang_pz.envs.overcooked.macro_actions.PRIMITIVES",
    "describe_for": "lang_pz.envs.overcooked.text.describe_for",
    "describe_state": "lang_pz.envs.overcooked.text.describe_state",
    "import_overcooked": "lang_pz.envs.overcooked.core.import_overcooked",
    "make_asymmetric_advantages": "lang_pz.envs.overcooked.make.make_asymmetric_advantages",
    "make_coordination_ring": "lang_pz.envs.overcooked.make.make_coordination_ring",
    "make_counter_circuit": "lang_pz.envs.overcooked.make.make_counter_circuit",
    "make_cramped_room": "lang_pz.envs.overcooked.make.make_cramped_room",
    "make_forced_coordination": "lang_pz.envs.overcooked.make.make_forced_coordination",
}
if not TYPE_CHECKING:
    __getattr__ = moved_getattr(__name__, _MOVED)
