"""What the AEC, parallel and Gymnasium language wrappers share: decoding text actions."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gymnasium import spaces

from lang_pz.error import ActionParseError
from lang_pz.spaces import text_observation_space, text_space, to_charset
from lang_pz.text.adapter import LanguageAdapter
from lang_pz.trajectory import to_jsonable


def decode_action(
    adapter: LanguageAdapter,
    env: Any,
    agent: str | None,
    text: Any,
    observation: Any,
    info: Mapping[str, Any],
    *,
    strict: bool,
) -> tuple[Any, dict[str, Any]]:
    """Parse ``text`` into an inner action, applying the fallback unless ``strict``.

    Returns:
        ``(action, action_info)`` where ``action_info`` has ``action_text`` (the raw text),
        ``action`` (the applied inner action, JSON-able), ``parse_error`` (``None`` or the
        reason) and ``fallback`` (whether the fallback action was applied).

    Raises:
        ActionParseError: in strict mode, when the text does not parse.
    """
    try:
        action = adapter.parse(env, agent, text, observation, info)
        error = None
    except ActionParseError as exc:
        if strict:
            raise
        action, error = adapter.fallback(env, agent, observation, info), exc.reason
    return action, {
        "action_text": text if isinstance(text, str) else repr(text),
        "action": to_jsonable(action),
        "parse_error": error,
        "fallback": error is not None,
    }


def observation_dict(adapter: LanguageAdapter, env: Any, agent: str | None, observation: Any,
                     info: Mapping[str, Any], max_length: int) -> dict[str, str]:
    """The language observation ``{"text": ...}`` of one agent."""
    return {"text": to_charset(adapter.render(env, agent, observation, info), max_length)}


def agent_info(adapter: LanguageAdapter, env: Any, agent: str | None, observation: Any,
               info: Mapping[str, Any], action_info: Mapping[str, Any] | None) -> dict[str, Any]:
    """The inner info plus ``legal_actions`` / ``action_range`` and the last action's decoding.

    A numeric ``action_mask`` is removed from the info: a Text action space cannot be
    sampled with it (the legal actions are given as words in ``legal_actions`` instead).
    """
    out = {k: v for k, v in info.items() if k != "action_mask"}
    legal = adapter.legal_actions(env, agent, observation, info)
    if legal is not None:
        out["legal_actions"] = legal
    rng = adapter.action_range(env, agent)
    if rng is not None:
        out["action_range"] = rng
    if action_info:
        out.update(action_info)
    return out


class MultiAgentTextSpaces:
    """Mixin of the PettingZoo language wrappers: per-agent Text spaces, cached (same object
    on every call, as PettingZoo requires for seeding)."""

    adapter: LanguageAdapter
    strict: bool
    observation_max_length: int

    def _init_language(self, possible_agents: list[str], adapter: LanguageAdapter | None, strict: bool,
                       observation_max_length: int, action_max_length: int) -> None:
        self.adapter = adapter if adapter is not None else LanguageAdapter()
        self.strict = strict
        self.observation_max_length = observation_max_length
        self._observation_spaces = {a: text_observation_space(observation_max_length) for a in possible_agents}
        self._action_spaces = {a: text_space(action_max_length) for a in possible_agents}

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        return self._observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space[Any]:
        return self._action_spaces[agent]
