"""Language wrapper for PettingZoo AEC environments."""

from __future__ import annotations

from typing import Any

from pettingzoo import AECEnv
from pettingzoo.utils.wrappers import BaseWrapper

from lang_pz.error import ActionParseError
from lang_pz.spaces import ACTION_MAX_LENGTH, OBSERVATION_MAX_LENGTH
from lang_pz.text.adapter import LanguageAdapter
from lang_pz.wrappers.common import (
    MultiAgentTextSpaces,
    agent_info,
    decode_action,
    observation_dict,
)
from lang_pz.wrappers.lazy import resolve


class LanguageAECWrapper(MultiAgentTextSpaces, BaseWrapper):
    """Make an AEC environment speak text: observations ``{"text": str}``, actions ``str``.

    Overrides ``observe`` (render text), ``step`` (parse text) and ``infos``; everything else is
    forwarded, so the result is still an ``AECEnv`` that passes ``pettingzoo.test.api_test``.

    Args:
        env: any PettingZoo AEC environment.
        adapter: the text interface (default: the one registered for the env's family,
            :func:`lang_pz.text.families.adapter_for`, else generic, from the spaces).
        strict: if True, an action that is refused raises
            :class:`lang_pz.error.ActionParseError`; otherwise the adapter's fallback action
            is applied and the raw text and reason are put in the agent's ``info``.
        observation_max_length: bound of the observation Text space (characters).
        action_max_length: bound of the action Text space (characters).

    Actions: every action first passes :func:`lang_pz.spaces.check_action_text` with
    ``action_max_length`` (a ``str`` of at most that many characters; anything else is refused
    like text that does not parse), then the adapter's parser. After a fallback the agent's
    next observation says so (the adapter's ``fallback_text``, before the action line).

    Spaces: observation ``Dict({"text": Text(0..observation_max_length)})``; action
    ``Text(0..action_max_length)`` over printable ASCII. ``infos[agent]`` gains
    ``legal_actions`` (list of str, finite action sets), ``action_range`` (one-number Box
    actions) and, after the agent acts, ``action_text``, ``action``, ``parse_error``,
    ``fallback``. An agent that is terminated or truncated steps with ``None`` whatever
    text it is given.

    ``infos`` is a plain dict, built once after each ``reset`` / ``step`` (when first read) and
    then kept: writes to it, and assigning a new dict, last until the next ``reset`` / ``step``,
    as with a PettingZoo env that reports fresh infos every step.

    Attributes (see :class:`lang_pz.wrappers.common.ForwardsAttributes`): reads of names the
    wrapper lacks are forwarded as by PettingZoo's ``BaseWrapper``, and environment-specific
    ones also through PettingZoo's conversion wrappers (``env.max_cycles`` works on AEC and
    parallel Pistonball alike); writes to an attribute of the wrapped environment reach it.
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
        self._raw_cache: dict[str, Any] = {}  # agent -> inner observation, since the last reset/step
        self._mask_in_obs: dict[str, bool] = {}
        self._infos: dict[str, dict[str, Any]] | None = None  # None: rebuild when read
        self._legal_parsed: dict[str, dict[str, Any] | None] = {}  # agent -> parsed legal words, since the last step

    # -- the inner observation, fetched at most once per agent between two steps ------------
    def _changed(self) -> None:
        self._raw_cache = {}
        self._infos = None
        self._legal_parsed = {}

    def _inner_observation(self, agent: str) -> Any:
        if agent not in self._raw_cache:
            self._raw_cache[agent] = resolve(self.env.observe(agent))
        return self._raw_cache[agent]

    def _observation_for(self, agent: str, *, for_info: bool = False) -> Any:
        """What the adapter's hooks get as ``observation``: None if the adapter does not read
        it (or, for infos, when the legal actions do not come from a mask in it)."""
        if not self.adapter.reads_observation:
            return None
        if for_info:
            if agent not in self._mask_in_obs:
                self._mask_in_obs[agent] = self.adapter.uses_action_mask(self.env, agent)
            if not self._mask_in_obs[agent]:
                return None
        return self._inner_observation(agent)

    # -- PettingZoo API ----------------------------------------------------------------------
    def observe(self, agent: str) -> dict[str, str]:
        return observation_dict(
            self.adapter,
            self.env,
            agent,
            self._observation_for(agent),
            self._inner("infos").get(agent, {}),
            self.observation_max_length,
            self._notes.get(agent),
        )

    @property
    def infos(self) -> dict[str, dict[str, Any]]:
        if self._infos is None:
            self._infos = {a: self._info_of(a, info) for a, info in self._inner("infos").items()}
        return self._infos

    @infos.setter
    def infos(self, value: dict[str, dict[str, Any]]) -> None:
        self._infos = value

    def _info_of(self, agent: str, info: dict[str, Any]) -> dict[str, Any]:
        """``agent``'s language info (legal actions computed once if they never change)."""
        return agent_info(
            self.adapter,
            self.env,
            agent,
            self._observation_for(agent, for_info=True),
            info,
            self._action_infos.get(agent),
            self._fixed_actions,
        )

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        self._action_infos, self._notes = {}, {}
        self.env.reset(seed=seed, options=options)
        self._find_holders()
        self._changed()

    def step(self, action: Any) -> None:
        env = self.env
        agent = self._inner("agent_selection")
        if self._inner("terminations")[agent] or self._inner("truncations")[agent]:
            env.step(None)
            self._changed()
            return
        inner, self._action_infos[agent], note = decode_action(
            self.adapter,
            env,
            agent,
            action,
            self._observation_for(agent),
            self._inner("infos")[agent],
            strict=self.strict,
            max_length=self.action_max_length,
            warned=self._warned,
        )
        if note is None:
            self._notes.pop(agent, None)
        else:
            self._notes[agent] = note
        env.step(inner)
        self._changed()

    def parsed_legal_actions(self, agent: str) -> dict[str, Any] | None:
        """Each word of ``infos[agent]["legal_actions"]`` -> the inner action the adapter parses
        it to now (words that do not parse are left out), in the listed order; ``None`` when
        the env lists no legal words for ``agent``. Parsed once between two steps (for bridges
        that index the words, :func:`lang_pz.interop.to_masked_aec_env`: the words need not be
        the index, e.g. tic-tac-toe's squares 1-9 or OpenSpiel's move names)."""
        if agent not in self._legal_parsed:
            legal = self.infos.get(agent, {}).get("legal_actions")
            parsed: dict[str, Any] | None = None
            if legal is not None:
                obs, info = self._observation_for(agent), self._inner("infos").get(agent, {})
                parsed = {}
                for word in map(str, legal):
                    try:
                        parsed.setdefault(word, self.adapter.parse(self.env, agent, word, obs, info))
                    except ActionParseError:
                        continue
            self._legal_parsed[agent] = parsed
        return self._legal_parsed[agent]

    def raw_observation(self, agent: str) -> Any:
        """The wrapped environment's own observation of ``agent`` now (for policies that opt in
        with :attr:`lang_pz.policies.Policy.reads_raw_observation`; text policies never see it).
        Computed on demand where the environment skips it for text (Pistonball's image)."""
        return self._inner_observation(agent)

    def state_text(self) -> str:
        """Global state as text, for a centralised critic only (never give it to policies)."""
        observations = {a: self._observation_for(a) for a in self.env.agents}
        return self.adapter.state_text(self.env, observations)
