"""Language wrapper for PettingZoo parallel environments."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from pettingzoo import ParallelEnv
from pettingzoo.utils.wrappers import BaseParallelWrapper

from lang_pz.error import LangPZError
from lang_pz.spaces import ACTION_MAX_LENGTH, OBSERVATION_MAX_LENGTH
from lang_pz.text.adapter import LanguageAdapter
from lang_pz.wrappers.common import (
    MultiAgentTextSpaces,
    agent_info,
    decode_action,
    observation_dict,
)
from lang_pz.wrappers.lazy import LazyObservation, resolve


class LanguageParallelWrapper(MultiAgentTextSpaces, BaseParallelWrapper):
    """Make a parallel environment speak text: observations ``{"text": str}``, actions ``str``.

    Overrides ``reset`` and ``step``; the result is still a ``ParallelEnv`` that passes
    ``pettingzoo.test.parallel_api_test``. Arguments, spaces, the action bound, the note after
    a fallback, ``infos`` entries and attribute forwarding are those of
    :class:`lang_pz.wrappers.LanguageAECWrapper`.
    """

    def __init__(
        self,
        env: ParallelEnv,
        adapter: LanguageAdapter | None = None,
        *,
        strict: bool = False,
        observation_max_length: int = OBSERVATION_MAX_LENGTH,
        action_max_length: int = ACTION_MAX_LENGTH,
    ) -> None:
        super().__init__(env)
        self._init_language(env.possible_agents, adapter, strict, observation_max_length, action_max_length)
        self._raw_obs: dict[str, Any] = {}
        self._raw_infos: dict[str, dict[str, Any]] = {}
        self._ended: set[str] = set()  # agents the last step terminated or truncated (they need no action)
        self._last: tuple[list[str], dict[str, Any], dict[str, dict[str, Any]]] = ([], {}, {})  # for current()

    def _for_adapter(self, agent: str) -> Any:
        """The last inner observation of ``agent`` as the adapter's hooks get it."""
        if not self.adapter.reads_observation:
            return None
        obs = self._raw_obs.get(agent)
        if isinstance(obs, LazyObservation):
            obs = self._raw_obs[agent] = obs.value()
        return obs

    def _take(self, obs: dict[str, Any], infos: dict[str, Any], action_infos: dict[str, dict[str, Any]]) -> None:
        """Keep what the wrapped env returned (rendered by :meth:`current`)."""
        self._raw_obs.update(obs)
        self._raw_infos.update(infos)
        self._last = (list(obs), infos, action_infos)

    def current(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """The observations and infos of the last :meth:`reset` or step, rendered now (what
        ``step`` returns: it is :meth:`advance` and then this)."""
        agents, infos, action_infos = self._last
        adapter, env, notes, limit = self.adapter, self.env, self._notes, self.observation_max_length
        text = {
            a: observation_dict(adapter, env, a, self._for_adapter(a), infos.get(a, {}), limit, notes.get(a)) for a in agents
        }
        seen = set(agents)
        info = {
            a: agent_info(
                adapter, env, a, self._for_adapter(a) if a in seen else None, i, action_infos.get(a), self._fixed_actions
            )
            for a, i in infos.items()
        }
        return text, info

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None):
        self._raw_obs, self._raw_infos, self._notes, self._ended = {}, {}, {}, set()
        obs, infos = self.env.reset(seed=seed, options=options)
        self._find_holders()
        self._take(obs, infos, {})
        return self.current()

    def step(self, actions: dict[str, Any]):
        """Decode each live agent's action text and step the wrapped environment (:meth:`advance`,
        then :meth:`current`).

        Raises:
            TypeError: ``actions`` is not a dict agent -> action text.
            ValueError: a live agent (in ``agents``, not just terminated or truncated) has no action,
                or an action names an agent the env does not have.
            RuntimeError: ``step`` before the first ``reset``.
        """
        if not isinstance(actions, Mapping):
            example = dict.fromkeys(self.env.agents[:2], "...")
            raise TypeError(
                f"step takes a dict agent -> action text for every live agent, e.g. {example}, "
                f"got {type(actions).__name__} {actions!r}"
            )
        live = getattr(self.env, "agents", None)
        if live is None:  # PettingZoo's aec_to_parallel_wrapper has no agents before its first reset
            raise RuntimeError("step() before reset(): call env.reset(seed=...) first")
        unknown = sorted(set(map(str, actions)) - set(map(str, self.possible_agents)))
        missing = [a for a in live if a not in actions and a not in self._ended]
        if unknown and not missing:
            raise ValueError(
                f"step got actions for {unknown}, which are not agents of this env (agents: {list(self.possible_agents)})"
            )
        if missing:
            extra = f" (actions name {unknown}, which are not agents)" if unknown else ""
            raise ValueError(
                f"step got no action for live agent(s) {missing}{extra}: a parallel env takes one "
                f"action per agent in env.agents ({list(self.env.agents)}) each step"
            )
        rewards, terminations, truncations, _ = self.advance(actions)
        text, info = self.current()
        return text, rewards, terminations, truncations, info

    def advance(
        self, actions: dict[str, Any]
    ) -> tuple[dict[str, float], dict[str, bool], dict[str, bool], dict[str, dict[str, Any]]]:
        """:meth:`step` without rendering: the rewards, terminations, truncations and each acting
        agent's decoding of its action (``action_text``, ``action``, ``parse_error``, ``fallback``,
        as in its info); :meth:`current` renders the observations and infos. For loops that read no text, such as the prefix of a
        counterfactual re-run replayed from its record (:mod:`lang_pz.snapshots`); ``actions`` must
        be valid as for ``step`` (not checked here)."""
        inner, action_infos, notes = {}, {}, {}
        for agent, text in actions.items():
            inner[agent], action_infos[agent], note = decode_action(
                self.adapter,
                self.env,
                agent,
                text,
                self._for_adapter(agent),
                self._raw_infos.get(agent, {}),
                strict=self.strict,
                max_length=self.action_max_length,
                warned=self._warned,
            )
            if note is not None:
                notes[agent] = note
        self._notes = notes
        obs, rewards, terminations, truncations, infos = self.env.step(inner)
        self._ended = {a for a in terminations if terminations[a] or truncations.get(a)}
        self._take(obs, infos, action_infos)
        return dict(rewards), terminations, truncations, action_infos

    # -- snapshots (lang_pz.snapshots) ------------------------------------------------------
    @property
    def snapshots_exact(self) -> bool:
        """Whether :meth:`snapshot` works: the wrapped env is a raw env whose own ``snapshot`` /
        ``restore`` copy its state exactly (``snapshots_exact``; Overcooked does). Layers in
        between (Pistonball's PettingZoo and SuperSuit conversions) keep state of their own that is
        not copied: no snapshots there, re-runs replay the prefix instead."""
        inner = self.env
        return inner is inner.unwrapped and bool(getattr(inner, "snapshots_exact", False))

    @property
    def snapshot_key(self) -> Any:
        """Envs with equal keys restore each other's snapshots: the wrapped env's key (its id and
        kwargs) and this wrapper's options."""
        return (type(self), self.env.snapshot_key, type(self.adapter), self.strict, self.observation_max_length)

    def snapshot(self) -> Any:
        """A copy of the episode's state now (the wrapped env's and this wrapper's), unchanged by
        later steps; :meth:`restore` puts an env of the same id and kwargs in it.

        Raises:
            LangPZError: the env does not support snapshots (:attr:`snapshots_exact`).
        """
        self._check_snapshots()
        mine = (self._raw_obs, self._raw_infos, self._notes, self._ended, self._last)
        return self.env.snapshot(), copy.deepcopy(mine)

    def restore(self, snap: Any) -> None:
        """Continue from ``snap`` (:meth:`snapshot`, of this env or another of the same id and
        kwargs); ``snap`` itself is not changed, so it can be restored again.

        Raises:
            LangPZError: the env does not support snapshots (:attr:`snapshots_exact`).
        """
        self._check_snapshots()
        inner, mine = snap
        self.env.restore(inner)
        self._raw_obs, self._raw_infos, self._notes, self._ended, self._last = copy.deepcopy(mine)
        if "_holders" not in self.__dict__:
            self._find_holders()

    def _check_snapshots(self) -> None:
        if not self.snapshots_exact:
            raise LangPZError(
                f"{type(self.env.unwrapped).__name__} does not support snapshots (snapshots_exact is False): "
                "replay the episode from its start instead"
            )

    def raw_observation(self, agent: str) -> Any:
        """The wrapped environment's own last observation of ``agent`` (for policies that opt in
        with :attr:`lang_pz.policies.Policy.reads_raw_observation`; text policies never see it).
        Computed on demand where the environment skips it for text (Pistonball's image).

        Raises:
            KeyError: ``agent`` has no observation yet (call ``reset`` first).
        """
        obs = self._raw_obs[agent]
        if isinstance(obs, LazyObservation):
            obs = self._raw_obs[agent] = resolve(obs)
        return obs

    def state_text(self) -> str:
        """Global state as text, for a centralised critic only (never give it to policies)."""
        return self.adapter.state_text(self.env, {a: self._for_adapter(a) for a in self.env.agents if a in self._raw_obs})
