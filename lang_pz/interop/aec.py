"""The turn-based (AEC) bridge: a language AEC env in PettingZoo's action-mask convention.

PettingZoo's classic games observe ``{"observation": ..., "action_mask": ...}`` and take
``Discrete`` actions, and the RL code written for them indexes exactly that: SB3's
``MaskablePPO`` through ``sb3_contrib``'s ``ActionMasker``, Tianshou's ``PettingZooEnv`` (which
reads ``observation["action_mask"]``), the LangChain agents of PettingZoo's tutorials
(``action_space(agent).sample(obs["action_mask"])``). :func:`to_masked_aec_env` gives a lang_pz
language AEC env that form, so those loops run with only the env constructor changed:

=======================  ====================================================================
observation              ``{"observation": encoder(text), "action_mask": mask}``: a float32
                         ``Box`` of ``encoder.dim`` (or, with ``keep_text=True``, the text
                         itself, for an LLM agent) and an int8 ``MultiBinary(k)``, 1 for the
                         words in ``info["legal_actions"]`` (all zeros when it is not the
                         agent's turn, as in PettingZoo's games)
action                   ``Discrete(k)``: index ``i`` is the agent's i-th action word
                         (:func:`lang_pz.interop.action_words`); ``None`` for an agent that is done
infos                    numeric only: ``{"fallback": bool}`` (Tianshou's buffer stores infos and
                         breaks on lists and strings)
=======================  ====================================================================

An index whose word is not legal now is sent as that word: the language env applies its
documented fallback (e.g. connect four's leftmost legal column) and ``info["fallback"]`` is True.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils.wrappers import BaseWrapper

from lang_pz.error import LangPZError
from lang_pz.interop.encoders import HashedBagOfWords, TextEncoder
from lang_pz.interop.wrappers import _index, _language_wrapper, _mask, bridge_words
from lang_pz.wrappers import LanguageAECWrapper


class MaskedAECEnv(BaseWrapper):
    """A language AEC env with PettingZoo's action-mask observations and ``Discrete`` actions
    (see the module docstring).

    Args:
        env: a language ``AECEnv`` (``lang_pz.make(id, api="aec")``), possibly wrapped.
        encoder: text -> vector (default :class:`~lang_pz.interop.HashedBagOfWords`, 256 dims).
        actions: the words, one list for every agent or a dict agent -> list; default
            :func:`~lang_pz.interop.action_words` of each agent.
        keep_text: observe the text itself (``Text`` space) instead of its vector.

    Raises:
        LangPZError: ``env`` is not an ``AECEnv``, no action words can be found, or a list is
            empty; from ``step``, an index out of range, not a whole number, or ``None`` for an
            agent that is not done.
    """

    def __init__(
        self,
        env: AECEnv,
        encoder: TextEncoder | None = None,
        *,
        actions: Sequence[str] | Mapping[str, Sequence[str]] | None = None,
        keep_text: bool = False,
    ) -> None:
        if not isinstance(env, AECEnv):
            raise LangPZError(
                f"to_masked_aec_env takes a PettingZoo AECEnv, got {type(env).__name__}; "
                "parallel envs: lang_pz.interop.to_vector_env"
            )
        super().__init__(env)
        agents = list(env.possible_agents)
        lw = _language_wrapper(env)
        #: the language wrapper whose parse tells which index each legal word names (the words an
        #: env offers need not be the index: tic-tac-toe's squares 1-9, OpenSpiel's move names).
        self._language = lw if actions is None and isinstance(lw, LanguageAECWrapper) else None
        self.words = words = bridge_words(env, agents, actions)
        self.keep_text = keep_text
        self.encoder = None if keep_text else (encoder if encoder is not None else HashedBagOfWords())
        if self.encoder is not None and (not isinstance(self.encoder, TextEncoder) or not isinstance(self.encoder.dim, int)):
            raise LangPZError(f"encoder must be callable with an int dim (a TextEncoder), got {self.encoder!r}")
        self._action_spaces = {a: spaces.Discrete(len(w)) for a, w in words.items()}
        self._observation_spaces = {
            a: spaces.Dict(
                {
                    "observation": (
                        env.observation_space(a)["text"]
                        if self.encoder is None  # i.e. keep_text
                        else spaces.Box(-np.inf, np.inf, (self.encoder.dim,), np.float32)
                    ),
                    "action_mask": spaces.MultiBinary(len(w)),
                }
            )
            for a, w in words.items()
        }

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        return self._observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space[Any]:
        return self._action_spaces[agent]

    def observe(self, agent: str) -> dict[str, Any]:
        from lang_pz.policies.base import observation_text

        text = observation_text(self.env.observe(agent))
        return {
            "observation": text if self.encoder is None else self.encoder(text),
            "action_mask": self._mask(agent),
        }

    def _legal(self, agent: str) -> dict[int, str] | None:
        """Index -> the legal word that names it now (``None`` when the env lists no legal words,
        or the bridge was given its own words), from the language wrapper's
        :meth:`~lang_pz.wrappers.LanguageAECWrapper.parsed_legal_actions` (parsed once a step)."""
        parsed = self._language.parsed_legal_actions(agent) if self._language is not None else None
        if parsed is None:
            return None
        by_index: dict[int, str] = {}
        for word, i in parsed.items():
            if type(i) is int and 0 <= i < len(self.words[agent]):
                by_index.setdefault(i, word)
        return by_index

    def _mask(self, agent: str) -> np.ndarray:
        legal = self._legal(agent)
        if legal is None:
            return _mask(self.words[agent], self.env.infos.get(agent, {}))
        mask = np.zeros(len(self.words[agent]), dtype=np.int8)
        mask[list(legal)] = 1
        return mask

    @property
    def infos(self) -> dict[str, dict[str, Any]]:
        return {a: {"fallback": bool(i.get("fallback", False))} for a, i in self.env.infos.items()}

    def step(self, action: Any) -> None:
        agent = self.env.agent_selection
        if self.env.terminations.get(agent) or self.env.truncations.get(agent):
            self.env.step(None)
            return
        if action is None:
            raise LangPZError(
                f"action of {agent} is None, but {agent} is not done (None is only for a terminated or truncated "
                f"agent); give an index in 0..{len(self.words[agent]) - 1}"
            )
        words = self.words[agent]
        i = _index(action, len(words), agent)
        self.env.step((self._legal(agent) or {}).get(i, words[i]))


def to_masked_aec_env(
    env: AECEnv,
    encoder: TextEncoder | None = None,
    *,
    actions: Sequence[str] | Mapping[str, Sequence[str]] | None = None,
    keep_text: bool = False,
) -> MaskedAECEnv:
    """A language ``AECEnv`` in PettingZoo's action-mask convention (:class:`MaskedAECEnv`):
    ``{"observation", "action_mask"}`` observations, ``Discrete`` action words, numeric infos.

    Example (PettingZoo's SB3 ``MaskablePPO`` connect-four tutorial, constructor changed only)::

        env = to_masked_aec_env(lang_pz.make("classic/connect_four-v0"))

    Raises:
        LangPZError: see :class:`MaskedAECEnv`.
    """
    return MaskedAECEnv(env, encoder, actions=actions, keep_text=keep_text)
