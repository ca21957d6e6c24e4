"""Language wrapper for single-agent Gymnasium environments."""

from __future__ import annotations

from typing import Any, SupportsFloat

import gymnasium as gym
from gymnasium.utils import RecordConstructorArgs

from lang_pz.spaces import (
    ACTION_MAX_LENGTH,
    OBSERVATION_MAX_LENGTH,
    text_observation_space,
    text_space,
)
from lang_pz.text.adapter import LanguageAdapter
from lang_pz.text.families import adapter_for
from lang_pz.wrappers.common import (
    FixedActions,
    agent_info,
    decode_action,
    observation_dict,
)


class LanguageGymWrapper(gym.Wrapper[dict[str, str], str, Any, Any], RecordConstructorArgs):
    """The single-agent counterpart of the PettingZoo language wrappers; passes ``check_env``.

    Observation ``Dict({"text": Text})``, action ``Text``; the action bound, the note after a
    fallback and the ``info`` keys are those of :class:`lang_pz.wrappers.LanguageAECWrapper`.
    Adapter hooks receive ``agent=None``.

    Attributes follow Gymnasium 1.x: a wrapper forwards none (read ``env.unwrapped.x_threshold``
    or ``env.get_wrapper_attr("x_threshold")``; write with ``env.set_wrapper_attr``).
    """

    def __init__(
        self,
        env: gym.Env[Any, Any],
        adapter: LanguageAdapter | None = None,
        *,
        strict: bool = False,
        observation_max_length: int = OBSERVATION_MAX_LENGTH,
        action_max_length: int = ACTION_MAX_LENGTH,
    ) -> None:
        RecordConstructorArgs.__init__(
            self,
            adapter=adapter,
            strict=strict,
            observation_max_length=observation_max_length,
            action_max_length=action_max_length,
        )
        gym.Wrapper.__init__(self, env)
        self.adapter = adapter if adapter is not None else adapter_for(env)
        self.strict = strict
        self.observation_max_length = observation_max_length
        self.observation_space = text_observation_space(observation_max_length)  # type: ignore[assignment]  # gymnasium types spaces.Dict as Space[dict[str, Space]], not of its values
        self.action_max_length = action_max_length
        self.action_space = text_space(action_max_length)
        self._raw_obs: Any = None
        self._raw_info: dict[str, Any] = {}
        self._fixed_actions = FixedActions()
        self._warned: set[str] = set()  # the warnings this env has issued (each once)

    def _wrap(self, obs: Any, info: dict[str, Any], action_info: dict[str, Any] | None, note: str | None = None):
        self._raw_obs, self._raw_info = obs, info
        text = observation_dict(self.adapter, self.env, None, obs, info, self.observation_max_length, note)
        return text, agent_info(self.adapter, self.env, None, obs, info, action_info, self._fixed_actions)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        obs, info = self.env.reset(seed=seed, options=options)
        return self._wrap(obs, info, None)

    def step(self, action: Any) -> tuple[dict[str, str], SupportsFloat, bool, bool, dict[str, Any]]:
        inner, action_info, note = decode_action(
            self.adapter,
            self.env,
            None,
            action,
            self._raw_obs,
            self._raw_info,
            strict=self.strict,
            max_length=self.action_max_length,
            warned=self._warned,
        )
        obs, reward, terminated, truncated, info = self.env.step(inner)
        text, info = self._wrap(obs, info, action_info, note)
        return text, reward, terminated, truncated, info

    def raw_observation(self, agent: str | None = None) -> Any:
        """The wrapped environment's own last observation (for policies that opt in with
        :attr:`lang_pz.policies.Policy.reads_raw_observation`); ``agent`` is ignored."""
        return self._raw_obs
