"""Language wrapper for PettingZoo AEC environments."""

from __future__ import annotations

from typing import Any

from pettingzoo import AECEnv
from pettingzoo.utils.wrappers import BaseWrapper

from lang_pz.spaces import ACTION_MAX_LENGTH, OBSERVATION_MAX_LENGTH
from lang_pz.text.adapter import LanguageAdapter
from lang_pz.wrappers.common import (
    MultiAgentTextSpaces,
    agent_info,
    decode_action,
    observation_dict,
)


class LanguageAECWrapper(MultiAgentTextSpaces, BaseWrapper):
    """Make an AEC environment speak text: observations ``{"text": str}``, actions ``str``.

    Overrides ``observe`` (render text) and ``step`` (parse text); everything else is
    forwarded, so the result is still an ``AECEnv`` that passes ``pettingzoo.test.api_test``.

    Args:
        env: any PettingZoo AEC environment.
        adapter: the text interface (default: generic, from the spaces).
        strict: if True, text that does not parse raises
            :class:`lang_pz.error.ActionParseError`; otherwise the adapter's fallback action
            is applied and the raw text and reason are put in the agent's ``info``.
        observation_max_length / action_max_length: bounds of the Text spaces (characters).

    Spaces: observation ``Dict({"text": Text(0..observation_max_length)})``; action
    ``Text(0..action_max_length)`` over printable ASCII. ``infos[agent]`` gains
    ``legal_actions`` (list of str, finite action sets), ``action_range`` (one-number Box
    actions) and, after the agent acts, ``action_text``, ``action``, ``parse_error``,
    ``fallback``. An agent that is terminated or truncated steps with ``None`` whatever
    text it is given.
    """

    def __init__(
        self,
        env: AECEnv,
        adapter: LanguageAdapter | None = None,
        *,
        strict: bool = False,
        observation_max_length: int = OBSERVATION_MAX_LENGTH,
        action_max_length: int = ACTION_MAX_LENGTH,
    ) -> None:
        super().__init__(env)
        self._init_language(env.possible_agents, adapter, strict, observation_max_length, action_max_length)
        self._action_infos: dict[str, dict[str, Any]] = {}

    def _raw(self, agent: str) -> Any:
        # Raw observations are only needed for masks; skip the inner observe() otherwise.
        if self.adapter.uses_action_mask(self.env, agent):
            return self.env.observe(agent)
        return None

    def observe(self, agent: str) -> dict[str, str]:
        return observation_dict(
            self.adapter, self.env, agent, self.env.observe(agent), self.env.infos.get(agent, {}),
            self.observation_max_length,
        )

    @property
    def infos(self) -> dict[str, dict[str, Any]]:  # type: ignore[override]
        return {
            a: agent_info(self.adapter, self.env, a, self._raw(a), info, self._action_infos.get(a))
            for a, info in self.env.infos.items()
        }

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        self._action_infos = {}
        self.env.reset(seed=seed, options=options)

    def step(self, action: Any) -> None:
        agent = self.env.agent_selection
        if self.env.terminations[agent] or self.env.truncations[agent]:
            self.env.step(None)
            return
        raw, info = self._raw(agent), self.env.infos[agent]
        inner, self._action_infos[agent] = decode_action(
            self.adapter, self.env, agent, action, raw, info, strict=self.strict
        )
        self.env.step(inner)

    def raw_observation(self, agent: str) -> Any:
        """The wrapped environment's own observation of ``agent`` (for policies that opt in with
        :attr:`lang_pz.policies.Policy.reads_raw_observation`; text policies never see it)."""
        return self.env.observe(agent)

    def state_text(self) -> str:
        """Global state as text, for a centralised critic only (never give it to policies)."""
        return self.adapter.state_text(self.env, {a: self.env.observe(a) for a in self.env.agents})
