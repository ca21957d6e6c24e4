"""The turn-based (AEC) bridge: a language AEC env in PettingZoo's action-mask convention.

PettingZoo's classic games observe ``{"observation": ..., "action_mask": ...}`` and take
``Discrete`` actions, and the RL code written for them indexes exactly that: SB3's
``MaskablePPO`` through ``sb3_contrib``'s ``ActionMasker``, Tianshou's ``PettingZooEnv`` (which
reads ``observation["action_mask"]``), RLlib's ``PettingZooEnv``, AgileRL's loops, the
LangChain agents of PettingZoo's tutorials (``action_space(agent).sample(obs["action_mask"])``).
:func:`to_masked_aec_env` gives a lang_pz language AEC env that form, so those loops run with
only the env constructor changed:

=======================  ====================================================================
action                   ``Discrete(n)``, **the game's own numbering**: index ``i`` is the
                         inner env's action ``i`` (PettingZoo's: connect four's column ``i + 1``,
                         tic-tac-toe's cell ``i`` counted down the columns, OpenSpiel's action
                         ids). With ``actions=[...]`` words, index ``i`` is the i-th word.
                         ``None`` for an agent that is done.
``action_mask``          int8 ``MultiBinary(n)``: 1 for the indexes legal now (the adapter's
                         legal moves; all zeros when it is not the agent's turn, as in PettingZoo)
``observation``          ``observation=`` chooses: ``"vector"`` (default) ``encoder(text)``, a
                         float32 ``Box(encoder.dim)``; ``"text"`` (same as ``keep_text=True``) the
                         text itself, for an LLM agent; ``"raw"`` the inner env's own observation
                         (connect four's 6x7x2 planes, OpenSpiel's tensor): no text is rendered
infos                    numeric only: ``{"fallback": bool}`` (Tianshou's buffer breaks on strings)
=======================  ====================================================================

One numbering: the text an agent reads through this bridge (``"text"``, ``"vector"`` and
:meth:`MaskedAECEnv.text`) ends with the legal moves as ``index: move`` in the bridge's own
numbering (``Legal moves ... 4: square 5``), so the number an LLM sends is the move the text
names, and the mask, the index and the text agree (tested on every registered turn-based game).

Speed: the bridge drives the language env's inner game with the inner action itself; it parses
no text for an index and renders text only for the ``"text"`` / ``"vector"`` observations (or
when :meth:`MaskedAECEnv.text` is called), so a learner on ``observation="raw"`` steps at about
PettingZoo's own speed (``benchmarks/bench_bridges.py``).

An index that is not legal now plays the env's documented fallback (e.g. connect four's leftmost
legal column; ``info["fallback"]`` is True), or raises with ``strict=True`` language envs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils.wrappers import BaseWrapper

from lang_pz.error import ActionParseError, LangPZError
from lang_pz.interop.encoders import HashedBagOfWords, TextEncoder
from lang_pz.interop.wrappers import _index, _language_wrapper, bridge_words
from lang_pz.text.adapter import LanguageAdapter
from lang_pz.wrappers import LanguageAECWrapper
from lang_pz.wrappers.common import decode_action, fit_charset, with_note
from lang_pz.wrappers.lazy import resolve

Observation = Literal["vector", "text", "raw"]
OBSERVATIONS: tuple[str, ...] = ("vector", "text", "raw")


def observation_kind(observation: str | None, keep_text: bool) -> str:
    """The observation kind of a bridge from its ``observation=`` and ``keep_text=`` arguments.

    Raises:
        LangPZError: an unknown kind, or ``keep_text=True`` with another kind than ``"text"``.
    """
    kind = observation if observation is not None else ("text" if keep_text else "vector")
    if kind not in OBSERVATIONS:
        raise LangPZError(f"observation must be one of {list(OBSERVATIONS)}, got {observation!r}")
    if keep_text and kind != "text":
        raise LangPZError(f"keep_text=True is observation='text'; got observation={observation!r} too: give one of them")
    return kind


def _own_mask(adapter: LanguageAdapter) -> bool:
    """Whether ``adapter.action_mask`` says exactly which moves its ``legal_actions`` lists: its
    class overrides ``action_mask`` (the classic games read it from the board) or keeps the base
    ``legal_actions``, which is read from that mask."""
    cls = type(adapter)
    return cls.action_mask is not LanguageAdapter.action_mask or cls.legal_actions is LanguageAdapter.legal_actions


class MaskedAECEnv(BaseWrapper):
    """A language AEC env with PettingZoo's action-mask observations and ``Discrete`` actions in
    the game's own numbering (see the module docstring).

    It wraps the language env's inner game and speaks through the language env's adapter, so
    step and observe it, not the language env, once wrapped.

    Args:
        env: a language ``AECEnv`` as ``lang_pz.make(id, api="aec")`` returns it (wrap the bridge,
            not the language env, with other wrappers).
        encoder: text -> vector for ``observation="vector"`` (default
            :class:`~lang_pz.interop.HashedBagOfWords`, 256 dims).
        actions: words instead of the game's numbering, one list for every agent or a dict agent
            -> list (for games without a finite action space, e.g. TextArena's); each index is
            sent as its word and parsed.
        keep_text: observe the text itself (``observation="text"``), for an LLM agent.
        observation: ``"vector"`` (default), ``"text"`` or ``"raw"``.

    Raises:
        LangPZError: ``env`` is not a lang_pz language AEC env (or has wrappers around it), no
            action words can be found, a list is empty, or the observation kinds conflict; from
            ``step``, an index out of range, not a whole number, or ``None`` for an agent that is
            not done.
        ActionParseError: from ``step``, an index that is not legal now, on a ``strict`` env.
    """

    def __init__(
        self,
        env: AECEnv,
        encoder: TextEncoder | None = None,
        *,
        actions: Sequence[str] | Mapping[str, Sequence[str]] | None = None,
        keep_text: bool = False,
        observation: Observation | None = None,
    ) -> None:
        if not isinstance(env, AECEnv):
            raise LangPZError(
                f"to_masked_aec_env takes a PettingZoo AECEnv, got {type(env).__name__}; "
                "parallel envs: lang_pz.interop.to_vector_env"
            )
        language = _language_wrapper(env)
        if not isinstance(language, LanguageAECWrapper) or language is not env:
            held = "no lang_pz language wrapper" if language is None else f"{type(env).__name__} around its language wrapper"
            raise LangPZError(
                f"to_masked_aec_env takes a language AEC env as lang_pz.make(id, api='aec') returns it, got {held}; "
                "apply other wrappers to the bridge instead"
            )
        super().__init__(language.env)
        self.language = language
        self.adapter: LanguageAdapter = language.adapter
        self.kind = observation_kind(observation, keep_text)
        self.keep_text = self.kind == "text"
        agents = list(env.possible_agents)
        inner = {a: self.adapter.action_space(self.env, a) for a in agents}
        discrete = {a: s for a, s in inner.items() if isinstance(s, spaces.Discrete)}
        #: each agent's words when indexes name words (``actions=`` or no finite inner space), else None
        self.words = None if actions is None and len(discrete) == len(agents) else bridge_words(env, agents, actions)
        #: index i of agent a is inner action _start[a] + i (direct) or word i
        self._start = {a: int(discrete[a].start) if self.words is None else 0 for a in agents}
        sizes = {a: int(discrete[a].n) for a in agents} if self.words is None else {a: len(self.words[a]) for a in agents}
        self._n = sizes
        self.encoder = encoder if encoder is not None else HashedBagOfWords()
        if self.kind == "vector" and (not isinstance(self.encoder, TextEncoder) or not isinstance(self.encoder.dim, int)):
            raise LangPZError(f"encoder must be callable with an int dim (a TextEncoder), got {self.encoder!r}")
        self._own_mask = _own_mask(self.adapter)
        self._action_spaces = {a: spaces.Discrete(n) for a, n in sizes.items()}
        self._observation_spaces = {
            a: spaces.Dict({"observation": self._inner_space(a), "action_mask": spaces.MultiBinary(n)})
            for a, n in sizes.items()
        }
        self._fallback: dict[str, bool] = {}
        self._notes: dict[str, str] = {}
        self._step_cache: dict[tuple[str, str], Any] = {}

    def _inner_space(self, agent: str) -> spaces.Space[Any]:
        if self.kind == "text":
            text = self.language.observation_space(agent)
            assert isinstance(text, spaces.Dict)  # a language env observes Dict({"text": Text})
            return text["text"]
        if self.kind == "vector":
            return spaces.Box(-np.inf, np.inf, (self.encoder.dim,), np.float32)
        space = self.env.observation_space(agent)
        return space["observation"] if isinstance(space, spaces.Dict) and "observation" in space.spaces else space

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        return self._observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space[Any]:
        return self._action_spaces[agent]

    # -- what the adapter's hooks get, fetched once between two steps -------------------------
    def _cached(self, what: str, agent: str, make: Any) -> Any:
        key = (what, agent)
        if key not in self._step_cache:
            self._step_cache[key] = make()
        return self._step_cache[key]

    def _raw(self, agent: str) -> Any:
        return self._cached("raw", agent, lambda: resolve(self.env.observe(agent)))

    def _for_adapter(self, agent: str) -> Any:
        return self._raw(agent) if self.adapter.reads_observation else None

    def _info(self, agent: str) -> Mapping[str, Any]:
        return self.env.infos.get(agent, {})

    def action_mask(self, agent: str) -> np.ndarray:
        """The int8 mask of ``agent``'s legal indexes now (all zeros when it may not move)."""
        return self._cached("mask", agent, lambda: self._make_mask(agent))

    def _make_mask(self, agent: str) -> np.ndarray:
        n = self._n[agent]
        obs, info = self._for_adapter(agent), self._info(agent)
        if self.words is None and self._own_mask:
            mask = self.adapter.action_mask(self.env, agent, obs, info)
            if mask is not None and len(mask) == n:
                return np.asarray(mask, dtype=np.int8)
        out = np.zeros(n, dtype=np.int8)
        legal = self.adapter.legal_actions(self.env, agent, obs, info)
        if legal is None:
            out[:] = 1
        elif self.words is not None:
            allowed = {str(w).lower() for w in legal}
            out[:] = [w.lower() in allowed for w in self.words[agent]]
        else:
            start = self._start[agent]
            for word in legal:
                try:
                    i = int(self.adapter.parse(self.env, agent, str(word), obs, info)) - start
                except (ActionParseError, TypeError, ValueError):
                    continue
                if 0 <= i < n:
                    out[i] = 1
        return out

    def move_text(self, agent: str, index: int) -> str:
        """What index ``index`` plays for ``agent``, in the env's words (``square 5``, ``Call``)."""
        if self.words is not None:
            return self.words[agent][index]
        start = self._start[agent]
        return self.adapter.action_text(self.env, agent, start + index)

    def text(self, agent: str) -> str:
        """What an LLM agent reads: the env's text, its action line replaced by the legal moves as
        ``index: move`` in this bridge's numbering (rendered on call, once a step)."""
        return self._cached("text", agent, lambda: self._make_text(agent))

    def _make_text(self, agent: str) -> str:
        full = self.adapter.render(self.env, agent, self._for_adapter(agent), self._info(agent))
        legal = np.flatnonzero(self.action_mask(agent))
        if len(legal):
            head, sep, _ = full.rpartition("\n")
            moves = ", ".join(f"{i}: {self.move_text(agent, int(i))}" for i in legal)
            full = f"{head}{sep}Your turn. Legal moves as index: move; reply with the index (the number before the colon): {moves}."
        return fit_charset(with_note(full, self._notes.get(agent)), self.language.observation_max_length)

    def observe(self, agent: str) -> dict[str, Any]:
        if self.kind == "raw":
            raw = self._raw(agent)
            value = raw["observation"] if isinstance(raw, Mapping) and "observation" in raw else raw
        elif self.kind == "text":
            value = self.text(agent)
        else:
            value = self.encoder(self.text(agent))
        return {"observation": value, "action_mask": self.action_mask(agent)}

    @property
    def infos(self) -> dict[str, dict[str, Any]]:
        return {a: {"fallback": self._fallback.get(a, False)} for a in self.env.infos}

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        self._fallback, self._notes, self._step_cache = {}, {}, {}
        self.env.reset(seed=seed, options=options)

    def step(self, action: Any) -> None:
        env = self.env
        agent = env.agent_selection
        if env.terminations.get(agent) or env.truncations.get(agent):
            self._step_cache = {}
            env.step(None)
            return
        n = self._n[agent]
        if action is None:
            raise LangPZError(
                f"action of {agent} is None, but {agent} is not done (None is only for a terminated or truncated "
                f"agent); give an index in 0..{n - 1}"
            )
        i = _index(action, n, agent)
        inner, fallback, note = self._decode(agent, i)
        self._fallback[agent] = fallback
        if note is None:
            self._notes.pop(agent, None)
        else:
            self._notes[agent] = note
        self._step_cache = {}
        env.step(inner)

    def _decode(self, agent: str, i: int) -> tuple[Any, bool, str | None]:
        """The inner action of index ``i``, whether it is the fallback, and the note for the agent."""
        obs, info = self._for_adapter(agent), self._info(agent)
        if self.words is not None:
            inner, action_info, note = decode_action(
                self.adapter,
                self.env,
                agent,
                self.words[agent][i],
                obs,
                info,
                strict=self.language.strict,
                max_length=self.language.action_max_length,
            )
            return inner, bool(action_info["fallback"]), note
        if self.action_mask(agent)[i]:
            return self._start[agent] + i, False, None
        legal = [int(j) for j in np.flatnonzero(self.action_mask(agent))]
        reason = f"index {i} is not a legal move now; legal indexes: {legal}" if legal else f"{agent} has no move now"
        if self.language.strict:
            raise ActionParseError(str(i), reason)
        inner = self.adapter.fallback(self.env, agent, obs, info)
        return inner, True, self.adapter.fallback_text(self.env, agent, inner, reason)


def to_masked_aec_env(
    env: AECEnv,
    encoder: TextEncoder | None = None,
    *,
    actions: Sequence[str] | Mapping[str, Sequence[str]] | None = None,
    keep_text: bool = False,
    observation: Observation | None = None,
) -> MaskedAECEnv:
    """A language ``AECEnv`` in PettingZoo's action-mask convention (:class:`MaskedAECEnv`):
    ``{"observation", "action_mask"}`` observations, ``Discrete`` actions in the game's own
    numbering, numeric infos.

    Example (PettingZoo's SB3 ``MaskablePPO`` connect-four tutorial, constructor changed only)::

        env = to_masked_aec_env(lang_pz.make("classic/connect_four-v0"), observation="raw")

    Raises:
        LangPZError, ActionParseError: see :class:`MaskedAECEnv`.
    """
    return MaskedAECEnv(env, encoder, actions=actions, keep_text=keep_text, observation=observation)
