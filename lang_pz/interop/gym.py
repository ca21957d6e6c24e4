"""The single-agent (Gymnasium) bridges: :mod:`lang_pz.interop.wrappers`' parallel ones for a
language ``gymnasium.Env``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from lang_pz.error import LangPZError
from lang_pz.interop.encoders import HashedBagOfWords, TextEncoder
from lang_pz.interop.wrappers import _index, action_words, box_space, box_text


class GymEncodeObservations(gym.ObservationWrapper, gym.utils.RecordConstructorArgs):
    """The single-agent (Gymnasium) :class:`EncodeObservations`."""

    def __init__(self, env: gym.Env, encoder: TextEncoder | None = None) -> None:
        gym.utils.RecordConstructorArgs.__init__(self, encoder=encoder)
        gym.ObservationWrapper.__init__(self, env)
        self.encoder = encoder if encoder is not None else HashedBagOfWords()
        self.observation_space = spaces.Box(-np.inf, np.inf, (self.encoder.dim,), np.float32)

    def observation(self, observation: Any) -> np.ndarray:
        from lang_pz.policies.base import observation_text

        return self.encoder(observation_text(observation))


class GymDiscreteActions(gym.ActionWrapper, gym.utils.RecordConstructorArgs):
    """The single-agent (Gymnasium) :class:`DiscreteActions` (``actions``: a list of words)."""

    def __init__(self, env: gym.Env, actions: Sequence[str] | None = None) -> None:
        gym.utils.RecordConstructorArgs.__init__(self, actions=actions)
        gym.ActionWrapper.__init__(self, env)
        self.words = [str(w) for w in actions] if actions is not None else action_words(env, None)
        if not self.words:
            raise LangPZError("no action words: a Discrete bridge needs at least one")
        self.action_space = spaces.Discrete(len(self.words))

    def action(self, action: Any) -> str:
        return self.words[_index(action, len(self.words), None)]


class GymBoxActions(gym.ActionWrapper, gym.utils.RecordConstructorArgs):
    """The single-agent (Gymnasium) :class:`BoxActions`: the inner ``Box``, vectors sent as text."""

    def __init__(self, env: gym.Env) -> None:
        gym.utils.RecordConstructorArgs.__init__(self)
        gym.ActionWrapper.__init__(self, env)
        self.action_space = box_space(env, None)

    def action(self, action: Any) -> str:
        assert isinstance(self.action_space, spaces.Box)  # set to the inner Box in __init__
        return box_text(self.action_space, action, None)
