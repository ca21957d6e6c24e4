"""Overcooked-AI's planners for the macro-actions: built once per process and layout, never on disk.

:func:`load_planners` gives a layout's ``MediumLevelActionManager`` (overcooked_ai's standard
``NO_COUNTERS_PARAMS``: dispenser / pot / serving targets, and the greedy partner) and a
``MotionPlanner`` whose goals include every counter (counter targets).
:mod:`lang_pz.envs.overcooked.macro_actions` executes the skills with them.

The planners are Python objects that only pickle could store, and a pickle read from a cache
folder runs whatever code whoever wrote the file put in it; so they are kept in memory only and
rebuilt in each process: 0.04-0.5 s a layout and about 2.3 s on Counter Circuit on an idle
2-core machine (several times that on a busy one). overcooked_ai's own planner files
(``overcooked_ai_py/data/planners``) are neither read nor written.
"""

from __future__ import annotations

import contextlib
import io
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Planners:
    """The planners of one layout.

    Attributes:
        mlam: ``MediumLevelActionManager`` with ``NO_COUNTERS_PARAMS``.
        counter_mp: ``MotionPlanner`` whose goals include every counter cell.
    """

    mlam: Any
    counter_mp: Any

    @property
    def mdp(self) -> Any:
        """The ``OvercookedGridworld`` the planners were built for."""
        return self.mlam.mdp


_MEMO: dict[tuple[str, ...], Planners] = {}
_BUILD_LOCK = threading.Lock()


@contextlib.contextmanager
def _no_planner_files() -> Iterator[None]:
    """Keep overcooked_ai's planner files out of a build, and its stdout quiet.

    Building a ``MediumLevelActionManager`` steps internal ``OvercookedEnv``\\ s, each of which
    asks ``MotionPlanner.from_pickle_or_compute`` for a motion planner: overcooked_ai unpickles
    it from ``overcooked_ai_py/data/planners`` (pickling it there first if missing) and announces
    that on stdout. Here it gets one motion planner built in memory per goal set instead.
    """
    from overcooked_ai_py.planning.planners import MotionPlanner

    built: dict[tuple[int, str], Any] = {}

    def in_memory(mdp: Any, counter_goals: Any, *args: Any, **kwargs: Any) -> Any:
        key = (id(mdp), repr(counter_goals))
        if key not in built:
            built[key] = MotionPlanner(mdp, counter_goals)
        return built[key]

    saved = MotionPlanner.__dict__["from_pickle_or_compute"]
    MotionPlanner.from_pickle_or_compute = staticmethod(in_memory)  # restored below
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            yield
    finally:
        MotionPlanner.from_pickle_or_compute = saved


def load_planners(mdp: Any) -> Planners:
    """The planners of ``mdp``'s layout: from this process's memo, else built (module docstring
    for the cost) and kept in the memo.

    Args:
        mdp: an ``overcooked_ai_py.mdp.overcooked_mdp.OvercookedGridworld``.
    """
    from overcooked_ai_py.planning.planners import (
        NO_COUNTERS_PARAMS,
        MediumLevelActionManager,
        MotionPlanner,
    )

    counters = sorted(mdp.get_counter_locations())
    key = (repr(mdp.terrain_mtx), repr(mdp.start_player_positions), repr(mdp.start_all_orders))
    with _BUILD_LOCK:  # one build per layout, and the patch above is process-wide
        if key not in _MEMO:
            with _no_planner_files():
                mlam = MediumLevelActionManager(mdp, NO_COUNTERS_PARAMS)
                counter_mp = MotionPlanner(mdp, counter_goals=counters)
            _MEMO[key] = Planners(mlam=mlam, counter_mp=counter_mp)
        return _MEMO[key]
