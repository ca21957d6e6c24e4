"""PettingZoo and Gymnasium wrappers that give a language environment the numeric spaces RL
libraries train on: observations encoded as vectors, actions as ``Discrete(k)`` indices of the
action words, infos reduced to fixed numeric keys.

Each wrapper overrides ``reset``/``step`` and the one space it changes; everything else is
forwarded (``raw_observation``, ``state_text`` and the adapter stay reachable). The result is
still a PettingZoo ``ParallelEnv`` (or a Gymnasium ``Env``): SuperSuit's vector envs and
Stable-Baselines3, TorchRL's ``PettingZooWrapper`` and RLlib's ``ParallelPettingZooEnv`` take it
as it is. :func:`to_vector_env` stacks them.

=======================  ====================================================================
:class:`EncodeObservations`  ``{"text": str}`` -> ``Box(-inf, inf, (encoder.dim,), float32)``
:class:`DiscreteActions`     ``Discrete(k)`` index -> the k-th action word; infos gain a
                             numeric ``action_mask`` (1 for the words in ``legal_actions``)
:class:`BoxActions`          the inner ``Box`` (continuous actions): a vector is sent as its
                             text, clipped into the bounds
:class:`NumericInfos`        every info holds exactly the given numeric keys (TorchRL builds its
                             info spec from the first reset and rejects strings)
:class:`RawObservations`     the env's own observations (Pistonball's image) instead of the
                             text, the text beside them (``text(agent)``)
=======================  ====================================================================

An index whose word is not legal right now (e.g. an Overcooked skill that cannot start) is sent
as that word: the language env applies its documented fallback and reports it in ``info``, as it
does for an LLM's unreadable reply.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

import numpy as np
from gymnasium import spaces
from pettingzoo import ParallelEnv
from pettingzoo.utils.wrappers import BaseParallelWrapper

from lang_pz.error import LangPZError
from lang_pz.interop.encoders import HashedBagOfWords, TextEncoder


def _language_wrapper(env: Any) -> Any:
    """The lang_pz language wrapper inside ``env`` (through ``.env`` and PettingZoo's conversion
    wrappers' ``.aec_env``), or ``None``."""
    from lang_pz.wrappers import (
        LanguageAECWrapper,
        LanguageGymWrapper,
        LanguageParallelWrapper,
    )
    from lang_pz.wrappers.common import wrapped_layers

    kinds = (LanguageParallelWrapper, LanguageAECWrapper, LanguageGymWrapper)
    return next((e for e in wrapped_layers(env) if isinstance(e, kinds)), None)


def action_words(env: Any, agent: str | None = None) -> list[str]:
    """Every action word of ``agent`` in a lang_pz language env with a finite action set, in the
    inner ``Discrete`` space's index order: word ``i`` is the adapter's ``action_text`` of the
    game's action ``start + i``, the text its parser maps back to that action (e.g. Pistonball:
    ``["down", "stay", "up"]``; MPE: ``["stay", "left", ...]``).

    Raises:
        LangPZError: ``env`` holds no lang_pz language wrapper, or the agent's actions are not
            a finite set (a Box or free-text action): pass ``actions=[...]`` to the bridge instead.
    """
    lw = _language_wrapper(env)
    if lw is None:
        raise LangPZError(
            f"{type(env).__name__} is not a lang_pz language environment; "
            "pass the action words explicitly: DiscreteActions(env, actions=[...])"
        )
    space = lw.adapter.action_space(lw.env, agent)
    if not isinstance(space, spaces.Discrete):
        raise LangPZError(
            f"{agent or 'the agent'} has no finite action set (inner action space {space}); "
            "a Discrete bridge needs one: pass actions=[...] words the env parses"
        )
    return [lw.adapter.action_text(lw.env, agent, int(space.start) + i) for i in range(int(space.n))]


def bridge_words(
    env: Any, agents: Sequence[str], actions: Sequence[str] | Mapping[str, Sequence[str]] | None
) -> dict[str, list[str]]:
    """Each agent's ``Discrete`` action words for a bridge: ``actions`` (one list for every agent,
    or a dict agent -> list), default :func:`action_words` of each agent.

    Raises:
        LangPZError: no action words can be found, ``actions`` is one str (it would be read as its
            letters), a dict lacks an agent, or an agent's list is empty.
    """
    if isinstance(actions, str) or (isinstance(actions, Mapping) and any(isinstance(v, str) for v in actions.values())):
        raise LangPZError(
            f"actions= is a list of action words, e.g. ['down', 'stay', 'up'], not one str: got {actions!r:.80}"
        )
    if actions is None:
        words = {a: action_words(env, a) for a in agents}
    elif isinstance(actions, Mapping):
        missing = [a for a in agents if a not in actions]
        if missing:
            raise LangPZError(
                f"actions= has no words for {missing}; a dict needs every agent of {list(agents)} (or give one list for all)"
            )
        words = {a: [str(w) for w in actions[a]] for a in agents}
    else:
        words = {a: [str(w) for w in actions] for a in agents}
    for a, w in words.items():
        if not w:
            raise LangPZError(f"no action words for {a}: a Discrete bridge needs at least one")
    return words


def box_space(env: Any, agent: str | None = None) -> spaces.Box:
    """The inner ``Box`` action space of ``agent`` in a lang_pz language env.

    Raises:
        LangPZError: ``env`` holds no lang_pz language wrapper, or the inner space is no ``Box``.
    """
    lw = _language_wrapper(env)
    if lw is None:
        raise LangPZError(f"{type(env).__name__} is not a lang_pz language environment; a Box bridge needs one")
    space = lw.adapter.action_space(lw.env, agent)
    if not isinstance(space, spaces.Box):
        raise LangPZError(
            f"{agent or 'the agent'} has no Box action space (inner action space {space}); "
            "finite action sets: DiscreteActions"
        )
    return space


def box_text(space: spaces.Box, action: Any, agent: str | None = None) -> str:
    """The text of a vector action: clipped into ``space``'s bounds, each number written so that
    it parses back exactly (``repr`` of the float), one number alone, several as ``[a, b, ...]``.

    Raises:
        LangPZError: ``action`` is not numbers (``None``, text, bools), has another size than the
            space, or a non-finite value.
    """
    try:
        raw = np.asarray(action)
    except (TypeError, ValueError) as exc:  # ragged nested lists
        raise LangPZError(f"action of {agent} must be {int(np.prod(space.shape))} number(s), got {action!r:.80}") from exc
    if raw.dtype.kind not in "iuf":  # None, text ('0.5' is not read as a number), bools, objects
        raise LangPZError(
            f"action of {agent} must be {int(np.prod(space.shape))} number(s), got {type(action).__name__} {action!r:.80}"
        )
    arr = raw.astype(np.float64)
    if arr.size != int(np.prod(space.shape)):
        raise LangPZError(
            f"action of {agent} must have {int(np.prod(space.shape))} number(s) (shape {space.shape}), got shape {arr.shape}"
        )
    if not np.all(np.isfinite(arr)):
        raise LangPZError(f"action of {agent} must be finite, got {arr.tolist()}")
    values = np.clip(arr.reshape(space.shape), space.low, space.high).ravel()
    texts = [repr(float(v)) for v in values]
    return texts[0] if len(texts) == 1 else "[" + ", ".join(texts) + "]"


def _mask(words: Sequence[str], info: Mapping[str, Any]) -> np.ndarray:
    legal = info.get("legal_actions")
    if legal is None:
        return np.ones(len(words), dtype=np.int8)
    allowed = {str(a).lower() for a in legal}
    return np.array([w.lower() in allowed for w in words], dtype=np.int8)


def _index(action: Any, n: int, agent: str | None) -> int:
    """``action`` as an index in ``0..n-1``: an int, a NumPy integer, or one of them in an array of
    one element (what SB3 and TorchRL send); a float only when it is a whole number (``2.0``).

    Raises:
        LangPZError: anything else, named: a fraction (``1.7`` is not read as 1), NaN or infinity,
            a bool, a str (the word itself goes to the language env, not through an index bridge),
            an array of several numbers (not read as its first), or an index out of range.
    """
    wanted = f"action of {agent} must be an index in 0..{n - 1}"
    value = action
    if isinstance(action, (np.ndarray, list, tuple)):
        arr = np.asarray(action, dtype=object)
        if arr.size != 1:
            raise LangPZError(f"{wanted} (one number), got {arr.size} values {action!r:.80}")
        value = arr.reshape(-1)[0]
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise LangPZError(f"{wanted}, got {type(value).__name__} {action!r:.80}")
    if not float(value).is_integer():  # a fraction, NaN or infinity
        shown = value.item() if isinstance(value, np.generic) else value  # 2.5, not np.float32(2.5)
        raise LangPZError(f"{wanted}, got {shown!r:.80}: not a whole number")
    i = int(value)
    if not 0 <= i < n:
        raise LangPZError(f"{wanted}, got {i}")
    return i


class EncodeObservations(BaseParallelWrapper):
    """Observations ``{"text": str}`` -> ``encoder(text)``, a float32 vector.

    Args:
        env: a language ``ParallelEnv``.
        encoder: a :class:`lang_pz.interop.encoders.TextEncoder` (default
            :class:`~lang_pz.interop.encoders.HashedBagOfWords` with 256 dimensions).

    Raises:
        LangPZError: ``encoder`` has no integer ``dim`` or is not callable.
    """

    def __init__(self, env: ParallelEnv, encoder: TextEncoder | None = None) -> None:
        super().__init__(env)
        self.encoder = encoder if encoder is not None else HashedBagOfWords()
        if not isinstance(self.encoder, TextEncoder) or not isinstance(self.encoder.dim, int):
            raise LangPZError(f"encoder must be callable with an int dim (a TextEncoder), got {self.encoder!r}")
        self._space = spaces.Box(-np.inf, np.inf, (self.encoder.dim,), np.float32)

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        return self._space

    def _encode(self, obs: Mapping[str, Any]) -> dict[str, np.ndarray]:
        from lang_pz.policies.base import observation_text

        return {a: self.encoder(observation_text(o)) for a, o in obs.items()}

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None):
        obs, infos = self.env.reset(seed=seed, options=options)
        return self._encode(obs), infos

    def step(self, actions: dict[str, Any]):
        obs, rewards, terms, truncs, infos = self.env.step(actions)
        return self._encode(obs), rewards, terms, truncs, infos


class DiscreteActions(BaseParallelWrapper):
    """``Discrete(k)`` actions: index ``i`` is sent to the language env as its i-th action word.

    Args:
        env: a language ``ParallelEnv`` (possibly already wrapped).
        actions: the words, one list for every agent or a dict agent -> list; default
            :func:`action_words` of each agent.

    Infos gain ``action_mask`` (int8, 1 for the words in ``info["legal_actions"]``, all ones
    when the env lists none).

    Raises:
        LangPZError: no action words can be found, or a list is empty; from ``step``, an
            index out of range.
    """

    def __init__(self, env: ParallelEnv, actions: Sequence[str] | Mapping[str, Sequence[str]] | None = None) -> None:
        super().__init__(env)
        agents = list(env.possible_agents)
        self.words = words = bridge_words(env, agents, actions)
        self._spaces = {a: spaces.Discrete(len(w)) for a, w in words.items()}

    def action_space(self, agent: str) -> spaces.Space[Any]:
        return self._spaces[agent]

    def _infos(self, infos: Mapping[str, Any]) -> dict[str, Any]:
        return {a: {**i, "action_mask": _mask(self.words[a], i)} for a, i in infos.items()}

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None):
        obs, infos = self.env.reset(seed=seed, options=options)
        return obs, self._infos(infos)

    def step(self, actions: dict[str, Any]):
        # an action for an agent the env does not have goes on as it is: the language env names it
        words = {a: self.words[a][_index(x, len(self.words[a]), a)] if a in self.words else x for a, x in actions.items()}
        obs, rewards, terms, truncs, infos = self.env.step(words)
        return obs, rewards, terms, truncs, self._infos(infos)


class BoxActions(BaseParallelWrapper):
    """Vector actions for a language env whose inner action space is a ``Box`` (Pistonball with
    ``continuous=True``): the action space is that ``Box``, and a vector is sent as its text
    (:func:`box_text`: clipped into the bounds, as Gymnasium's ``ClipAction`` would, and
    written to parse back exactly).

    Raises:
        LangPZError: an agent's inner action space is no ``Box``; from ``step``, a vector of
            the wrong size or with a non-finite value.
    """

    def __init__(self, env: ParallelEnv) -> None:
        super().__init__(env)
        self._spaces = {a: box_space(env, a) for a in env.possible_agents}

    def action_space(self, agent: str) -> spaces.Space[Any]:
        return self._spaces[agent]

    def step(self, actions: dict[str, Any]):
        return self.env.step({a: box_text(self._spaces[a], x, a) if a in self._spaces else x for a, x in actions.items()})


class NumericInfos(BaseParallelWrapper):
    """Every agent's info holds exactly the keys of ``defaults`` (numbers), plus ``action_mask``
    when the inner info has one; other keys (action text, parse errors, legal words) are dropped.

    TorchRL's ``PettingZooWrapper`` builds its info spec from the first ``reset`` and fails on
    strings ("too many dimensions 'str'") and on keys that appear later.

    Args:
        env: a ``ParallelEnv``.
        defaults: key -> the value used when the inner info lacks it (default
            ``{"fallback": False}``: whether the env applied its fallback action).

    Raises:
        LangPZError: from ``reset``/``step``, a kept value that is not a number, bool or
            numeric array (names the key and agent).
    """

    def __init__(self, env: ParallelEnv, defaults: Mapping[str, Any] | None = None) -> None:
        super().__init__(env)
        self.defaults = dict(defaults) if defaults is not None else {"fallback": False}

    def _filter(self, infos: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        for agent, info in infos.items():
            kept = {k: info.get(k, d) for k, d in self.defaults.items()}
            if "action_mask" in info:
                kept["action_mask"] = info["action_mask"]
            for k, v in kept.items():
                arr = np.asarray(v)
                if arr.dtype.kind not in "biuf":
                    raise LangPZError(f"info[{k!r}] of {agent} is {v!r}, not numeric; drop it from defaults")
            out[agent] = kept
        return out

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None):
        obs, infos = self.env.reset(seed=seed, options=options)
        return obs, self._filter(infos)

    def step(self, actions: dict[str, Any]):
        obs, rewards, terms, truncs, infos = self.env.step(actions)
        return obs, rewards, terms, truncs, self._filter(infos)


class RawObservations(BaseParallelWrapper):
    """The language env's own observations (Pistonball's image) instead of its text: what the
    image tutorials (SB3's and CleanRL's pistonball CNNs, SuperSuit's image wrappers) train on.
    The text stays beside them: :meth:`text` is what an LLM agent would read now.

    Args:
        env: a ``ParallelEnv`` holding a lang_pz language wrapper (possibly wrapped).

    Raises:
        LangPZError: ``env`` holds no lang_pz language wrapper.
    """

    def __init__(self, env: ParallelEnv) -> None:
        super().__init__(env)
        self.language = _language_wrapper(env)
        if self.language is None:
            raise LangPZError(f"{type(env).__name__} is not a lang_pz language environment; raw observations need one")
        self._texts: dict[str, Any] = {}

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        return self.language.env.observation_space(agent)

    def _raw(self, obs: Mapping[str, Any]) -> dict[str, Any]:
        self._texts = dict(obs)
        return {a: self.language.raw_observation(a) for a in obs}

    def text(self, agent: str) -> str:
        """``agent``'s text observation of the last reset or step.

        Raises:
            KeyError: ``agent`` had no observation then.
        """
        from lang_pz.policies.base import observation_text

        return observation_text(self._texts[agent])

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None):
        obs, infos = self.env.reset(seed=seed, options=options)
        return self._raw(obs), infos

    def step(self, actions: dict[str, Any]):
        obs, rewards, terms, truncs, infos = self.env.step(actions)
        return self._raw(obs), rewards, terms, truncs, infos


#: What an AEC env given to :func:`to_vector_env` should use instead.
AEC_RECIPE = (
    "turn-based games: lang_pz.interop.to_masked_aec_env(env); an AEC loop over a game that also has "
    "api='parallel' (as PettingZoo's SB3 tutorials evaluate): pettingzoo.utils.conversions.parallel_to_aec("
    "to_vector_env(lang_pz.make(id, api='parallel'))); Gymnasium envs: GymEncodeObservations with "
    "GymDiscreteActions / GymBoxActions"
)


def to_vector_env(
    env: ParallelEnv,
    encoder: TextEncoder | None = None,
    *,
    actions: Sequence[str] | Mapping[str, Sequence[str]] | None = None,
    numeric_infos: bool = True,
    observation: Literal["vector", "text", "raw"] = "vector",
) -> ParallelEnv:
    """A language ``ParallelEnv`` as RL libraries want it: ``Discrete`` actions
    (:class:`BoxActions` vectors when every agent's inner action space is a ``Box`` and no
    ``actions`` words are given), (by default) numeric infos, and observations as
    ``observation=`` says: ``"vector"`` (default) the encoded text, ``"raw"`` the env's own
    observation (:class:`RawObservations`: Pistonball's image, its text beside it), ``"text"``
    the text itself. See the module docstring.

    Raises:
        LangPZError: ``env`` is an AEC or Gymnasium env (the message gives the recipe for each),
            no action words, or an unknown ``observation``.
    """
    if not isinstance(env, ParallelEnv):
        raise LangPZError(f"to_vector_env takes a PettingZoo ParallelEnv, got {type(env).__name__}; {AEC_RECIPE}")
    if observation not in ("vector", "text", "raw"):
        raise LangPZError(f"observation must be one of ['vector', 'text', 'raw'], got {observation!r}")
    lw = _language_wrapper(env)
    boxes = (
        actions is None
        and lw is not None
        and all(isinstance(lw.adapter.action_space(lw.env, a), spaces.Box) for a in env.possible_agents)
    )
    out: ParallelEnv = BoxActions(env) if boxes else DiscreteActions(env, actions)
    if observation == "vector":
        out = EncodeObservations(out, encoder)
    elif observation == "raw":
        out = RawObservations(out)
    return NumericInfos(out) if numeric_infos else out
