"""Observations computed only when something reads them.

Some environments spend most of a step building observations that a language adapter never
reads: Pistonball crops, rotates and copies a 457x120x3 image per agent, twice per agent in
PettingZoo's ``aec_to_parallel`` conversion, while its text is rendered from the physics state.
:class:`ObserveOnDemand` makes ``observe`` return a :class:`LazyObservation` instead; the
language wrappers resolve it only for an adapter that reads observations
(:attr:`lang_pz.text.adapter.LanguageAdapter.reads_observation`) or for
``raw_observation(agent)`` (a policy that opts in to the raw observation).
"""

from __future__ import annotations

from typing import Any

from pettingzoo.utils.wrappers import BaseWrapper


class LazyObservation:
    """The observation of ``agent`` in ``env``, computed by :meth:`value` when it is called.

    It stands for the observation of the state at the time :meth:`value` is called: resolve it
    before the environment steps again (the language wrappers keep only the latest one).
    """

    __slots__ = ("agent", "env")

    def __init__(self, env: Any, agent: str) -> None:
        self.env = env
        self.agent = agent

    def value(self) -> Any:
        """The real observation: ``env.observe(agent)`` now."""
        return self.env.observe(self.agent)

    def __repr__(self) -> str:
        return f"LazyObservation({self.agent!r})"


def resolve(observation: Any) -> Any:
    """``observation.value()`` for a :class:`LazyObservation`, else ``observation`` unchanged."""
    return observation.value() if isinstance(observation, LazyObservation) else observation


class ObserveOnDemand(BaseWrapper):
    """AEC wrapper whose ``observe(agent)`` returns a :class:`LazyObservation` of the wrapped env.

    Everything else is forwarded. Put it under PettingZoo's ``aec_to_parallel`` (and SuperSuit
    wrappers) so their steps collect lazy observations; the language wrappers above resolve
    them only when read. The observations are not in the observation space until resolved, so
    this env is an internal layer of a language environment, not one to hand to RL code.
    """

    def __init__(self, env: Any) -> None:
        super().__init__(env)
        self._raw = env.unwrapped

    def observe(self, agent: str) -> LazyObservation:
        return LazyObservation(self.env, agent)

    # The state PettingZoo's aec_to_parallel reads for every agent of every cycle (rewards once per
    # agent per agent: N^2 reads a cycle), read from the unwrapped env in one lookup instead of
    # through each wrapper's __getattr__ (their values are the unwrapped env's; 20-piston
    # Pistonball spent 58 % of its step time in that forwarding).
    @property
    def agents(self) -> list[str]:
        return self._raw.agents

    @property
    def agent_selection(self) -> str:
        return self._raw.agent_selection

    @property
    def rewards(self) -> dict[str, float]:
        return self._raw.rewards

    @property
    def terminations(self) -> dict[str, bool]:
        return self._raw.terminations

    @property
    def truncations(self) -> dict[str, bool]:
        return self._raw.truncations

    @property
    def infos(self) -> dict[str, dict[str, Any]]:
        return self._raw.infos

    @property
    def _cumulative_rewards(self) -> dict[str, float]:
        return self._raw._cumulative_rewards
