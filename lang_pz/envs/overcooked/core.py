"""The numeric core of Overcooked: a PettingZoo ``ParallelEnv`` over overcooked_ai's ``OvercookedEnv``.

Actions are indices (into :data:`PRIMITIVES` or :data:`lang_pz.envs.overcooked.macro_actions.SKILL_WORDS`);
the observation is only the tick. The text is in :mod:`lang_pz.envs.overcooked.text`; the
package docstring (:mod:`lang_pz.envs.overcooked`) has the table of agents, spaces and rewards.

Importing this module calls :func:`numpy2_aliases` (overcooked_ai 1.1.0 on NumPy 2).
"""

from __future__ import annotations

import contextlib
import copy
import io
import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import ParallelEnv

from lang_pz.envs.overcooked.macro_actions import (
    AGENTS,
    PRIMITIVES,
    SKILL_WORDS,
    SkillRun,
    is_possible,
    next_action,
    update,
)
from lang_pz.envs.overcooked.planners import Planners, load_planners
from lang_pz.envs.overcooked.starts import Start, describe_start, start_states
from lang_pz.error import DependencyNotInstalled

#: Registered layout name -> overcooked_ai 1.1.0 layout file.
LAYOUTS: dict[str, str] = {
    "cramped_room": "cramped_room",
    "asymmetric_advantages": "asymmetric_advantages",
    "coordination_ring": "coordination_ring",
    "forced_coordination": "forced_coordination",
    "counter_circuit": "counter_circuit_o_1order",
}
#: Upper bound on the ticks of one skill step.
MAX_SKILL_TICKS: int = 40

_INSTALL_HINT = (
    "pip install 'lang_pz[overcooked]' && pip install --no-deps overcooked-ai==1.1.0 "
    "(or `make install`; --no-deps keeps overcooked-ai's pygame from overwriting pygame-ce)"
)


#: NumPy 2 removed these aliases (NEP 52); overcooked_ai 1.1.0 uses them (see :func:`numpy2_aliases`).
NUMPY2_ALIASES: dict[str, float] = {"Inf": np.inf}


def numpy2_aliases() -> list[str]:
    """Restore the NumPy 1 aliases that overcooked_ai 1.1.0 uses and NumPy 2 removed, where missing.

    overcooked_ai 1.1.0 (its last release, 2020) writes ``np.Inf``, removed in NumPy 2.0 (NEP 52),
    which lang_pz's venv holds (RLlib's pandas 3 needs it). Its uses, in ``overcooked_ai_py``:

    - ``mdp/overcooked_env.py:329`` and ``:370``: default arguments
      ``display_until=np.Inf`` of ``run_agents`` / ``get_rollouts``, evaluated at *import*:
      without the alias ``import overcooked_ai_py.mdp.overcooked_env`` raises ``AttributeError``;
    - ``planning/planners.py:130, 272, 273, 288, 300, 579, 594``: initial minimum costs of the
      motion planner and medium-level action manager (lang_pz's skills and the greedy partner);
    - ``agents/agent.py:353``: ``GreedyHumanModel``'s minimum cost (the greedy partner).

    That is the only one: once it is set, every ``np.<name>`` in overcooked_ai's code exists on
    NumPy 2.4 (``tests/envs/test_overcooked_numpy2.py`` walks its source), except ``np.int``
    (``mdp/layout_generator.py:327``, random layouts, which lang_pz never builds), removed in
    NumPy 1.24 and so already missing from NumPy 1.26. ``np.Inf`` is ``np.inf`` (the same float),
    so nothing else changes; on NumPy 1 the alias exists and this does nothing.

    Returns:
        The names it set (empty on NumPy 1, or when called again).
    """
    added = [name for name in NUMPY2_ALIASES if not hasattr(np, name)]
    for name in added:
        setattr(np, name, NUMPY2_ALIASES[name])
    return added


numpy2_aliases()


def import_overcooked() -> Any:
    """Import ``overcooked_ai_py`` (its ``gym`` import's deprecation notice silenced), after
    :func:`numpy2_aliases`.

    Returns:
        The ``overcooked_ai_py.mdp.overcooked_env`` module.

    Raises:
        DependencyNotInstalled: it is missing, or uses a NumPy name this NumPy lacks that
            :func:`numpy2_aliases` does not restore; the message says how to install it.
    """
    numpy2_aliases()
    try:
        with contextlib.redirect_stderr(io.StringIO()), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import overcooked_ai_py.mdp.overcooked_env as oc_env
    except ImportError as exc:
        raise DependencyNotInstalled(
            f"Overcooked needs {exc.name or 'overcooked_ai_py'}, which is not installed: {_INSTALL_HINT}"
        ) from exc
    except AttributeError as exc:  # a NumPy name numpy2_aliases() does not restore
        raise DependencyNotInstalled(
            f"overcooked-ai 1.1.0 does not work with numpy {np.__version__} ({exc}): install overcooked-ai==1.1.0 "
            "(the version lang_pz restores NumPy 2's removed aliases for) or the numpy of constraints.txt"
        ) from exc
    return oc_env


class OvercookedParallelEnv(ParallelEnv):
    """The numeric core: a PettingZoo ``ParallelEnv`` over overcooked_ai's ``OvercookedEnv``.

    Actions are indices: into :data:`PRIMITIVES` or into
    :data:`lang_pz.envs.overcooked.macro_actions.SKILL_WORDS`. Wrap it with
    :class:`OvercookedAdapter` (as :func:`make_env` does) for text.

    Args:
        layout: a key of :data:`LAYOUTS`.
        horizon: episode length in ticks.
        actions: ``"primitive"`` or ``"macro"``.
        shaping_factor: weight of the shaped reward (0: sparse only).
        render_mode: ``None`` or ``"ansi"`` (the global state text).
        split: ``None``: every episode starts from the layout's fixed start (as in overcooked_ai
            and the literature; the seed changes nothing). ``"train"`` / ``"validation"`` /
            ``"test"`` / ``"all"``: the reset seed picks the start state from that disjoint
            set (:mod:`lang_pz.envs.overcooked.starts`).
    """

    metadata = {"name": "overcooked_v0", "render_modes": ["ansi"], "is_parallelizable": True}

    def __init__(
        self,
        layout: str,
        horizon: int = 400,
        actions: str = "primitive",
        shaping_factor: float = 0.0,
        render_mode: str | None = None,
        split: str | None = None,
    ) -> None:
        oc_env = import_overcooked()
        from overcooked_ai_py.mdp.overcooked_mdp import OvercookedGridworld

        self.layout = layout
        self.horizon = horizon
        self.action_level = actions
        self.shaping_factor = float(shaping_factor)
        self.render_mode = render_mode
        self.mdp = OvercookedGridworld.from_layout_name(LAYOUTS[layout])
        self.planners: Planners = load_planners(self.mdp)
        self.split = split
        self._starts: tuple[list[Start], tuple[int, ...]] | None = None
        if split is not None:
            self._starts = start_states(self.mdp, split)
        standard = tuple((tuple(p), (0, -1)) for p in self.mdp.start_player_positions)
        self.start: Start = standard  # type: ignore[assignment]
        self._position: int | None = None
        fixed = split is None  # overcooked_ai's own standard start, exactly as before
        self.game = oc_env.OvercookedEnv.from_mdp(
            self.mdp, start_state_fn=None if fixed else self._start_state, horizon=horizon, info_level=0
        )
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

    def _start_state(self) -> Any:
        """A fresh ``OvercookedState`` of :attr:`start` (overcooked_ai calls it at each reset)."""
        from overcooked_ai_py.mdp.overcooked_mdp import OvercookedState

        return OvercookedState.from_players_pos_and_or(
            list(self.start), bonus_orders=self.mdp.start_bonus_orders, all_orders=self.mdp.start_all_orders
        )

    @property
    def item_id(self) -> str:
        """The start state of this episode in words (e.g. ``cramped_room: player_0 (1,2) up,
        player_1 (3,1) up``): what :func:`lang_pz.training.phases.items_played` compares."""
        return f"{self.layout}: {describe_start(self.start)}"

    @property
    def tick_id(self) -> int:
        """A number that changes with every tick and reset (for caches of per-tick text)."""
        return self._tick_id

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
                [is_possible(self.planners, self.game_state, i, w) for w in SKILL_WORDS], dtype=np.int8
            )
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
        if self._starts is not None:  # seed s plays start order[s % n]; no seed: the next one
            starts, order = self._starts
            if seed is not None:
                self._position = int(seed)
            elif self._position is None:
                self._position = int(np.random.default_rng().integers(len(starts)))
            else:
                self._position += 1
            self.start = starts[order[self._position % len(starts)]]
        self.game.reset(regen_mdp=False)
        self._use_planners()
        self.agents = list(AGENTS)
        self.soups_delivered = 0
        self.score = 0
        self.last_outcome = {}
        self._unread = {}
        self._tick_id += 1
        obs = dict.fromkeys(self.agents, 0)
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
        rewards = dict.fromkeys(agents, team)
        infos = {a: self._info(a, float(sparse[i]), float(shaped[i]), ticks) for i, a in enumerate(agents)}
        for a in agents:
            if "skill" in outcome[a]:
                infos[a]["skill"] = dict(outcome[a])
        t = int(self.game_state.timestep)
        obs = {a: min(t, self.horizon) for a in agents}
        terminations = dict.fromkeys(agents, False)
        truncations = dict.fromkeys(agents, done)
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
            a0 = (
                next_action(self.planners, before, 0, runs[0], frozenset({p1.position}))
                if runs[0].status == "running"
                else Action.STAY
            )
            going = runs[0].expected[0] if runs[0].status == "running" and runs[0].expected else p0.position
            a1 = (
                next_action(self.planners, before, 1, runs[1], frozenset({p0.position, going}))
                if runs[1].status == "running"
                else Action.STAY
            )
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
            a: {
                "skill": r.skill,
                "status": "in progress" if r.status == "running" else r.status,
                "ticks": r.ticks,
                "reason": r.reason,
            }
            for a, r in zip(AGENTS, runs)
        }
        return sparse, shaped, ticks, outcome

    def _info(self, agent: str, sparse: float, shaped: float, ticks: int) -> dict[str, Any]:
        return {
            "timestep": int(self.game_state.timestep),
            "ticks": ticks,
            "soups_delivered": self.soups_delivered,
            "sparse_reward": sparse,
            "shaped_reward": shaped,
        }

    # -- snapshots (lang_pz.snapshots) ------------------------------------------------------
    #: :meth:`snapshot` copies the whole episode state: a re-run continues from it exactly.
    snapshots_exact = True

    @property
    def snapshot_key(self) -> tuple[Any, ...]:
        """Envs with equal keys restore each other's snapshots: the constructor's arguments."""
        return (self.layout, self.horizon, self.action_level, self.shaping_factor, self.split)

    def snapshot(self) -> dict[str, Any]:
        """A copy of the episode's state: overcooked_ai's ``OvercookedState`` and game statistics,
        the soups, score, last outcome, unread notes and start (a few kB; not the layout, planners
        or caches, which an episode does not change)."""
        own = {n: getattr(self, n) for n in ("agents", "soups_delivered", "score", "last_outcome", "_unread", "start")}
        return copy.deepcopy(
            {"state": self.game.state, "game_stats": self.game.game_stats, "_position": self._position, **own}
        )

    def restore(self, snap: dict[str, Any]) -> None:
        """Continue from ``snap`` (:meth:`snapshot` of an env with the same :attr:`snapshot_key`;
        copied, so it can be restored again); the per-tick caches start afresh."""
        snap = copy.deepcopy(snap)
        self.game.state, self.game.game_stats = snap.pop("state"), snap.pop("game_stats")
        for name, value in snap.items():
            setattr(self, name, value)
        self._tick_id += 1

    def render(self) -> str | None:
        if self.render_mode == "ansi":
            from lang_pz.envs.overcooked.text import describe_state

            return describe_state(self)
        return None

    def close(self) -> None:
        pass
