"""The single checks of :func:`lang_pz.test.language_api_test`, usable alone on one step: an
observation (:func:`check_observation`), the legal action words (:func:`check_legal_actions`)
and the info a language wrapper sets after an action (:func:`check_decoded`); and the
:data:`GARBAGE` texts the test sends. Each raises ``AssertionError`` naming ``where``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from gymnasium import spaces as gym_spaces

from lang_pz.error import ActionParseError

__all__ = ["GARBAGE", "check_decoded", "check_legal_actions", "check_observation"]

#: Text actions that no language environment should accept (no action word, no number).
GARBAGE: tuple[str, ...] = (
    "",
    "   \n\t",
    "qwzx vbnm",
    "\x00\x01\x02\x7f",
    "\u00ff\u20ac\U0001f600 " * 20,
    "{" * 300,
    '{"action": null}',
    "zq" * 3000,
)


def check_observation(space: gym_spaces.Space[Any], obs: Any, where: str) -> None:
    """``obs`` is ``{"text": str}`` and inside ``space``."""
    assert isinstance(obs, Mapping) and isinstance(obs.get("text"), str), (
        f"{where}: observation must be {{'text': str}}, got {type(obs).__name__}: {obs!r:.200}"
    )
    if not space.contains(obs):
        text = obs["text"]
        inner = space["text"] if isinstance(space, gym_spaces.Dict) and "text" in space.spaces else None
        bounds, bad = "", []
        if isinstance(inner, gym_spaces.Text):
            bounds = f"{inner.min_length} to {inner.max_length} characters, "
            bad = sorted({c for c in text if c not in inner.character_set})
        raise AssertionError(
            f"{where}: observation text is outside its space ({bounds}length {len(text)}, "
            f"characters outside the charset: {bad[:10]}): {text[:200]!r}"
        )


def check_legal_actions(
    wrapper: Any, agent: str | None, raw_obs: Any, raw_info: Mapping[str, Any], legal: Sequence[str], where: str
) -> None:
    """Every legal word parses to a legal inner action, and that action's text parses back to it."""
    adapter, inner = wrapper.adapter, wrapper.env
    mask = adapter.action_mask(inner, agent, raw_obs, raw_info)
    space = adapter.action_space(inner, agent)
    for word in legal:
        try:
            action = adapter.parse(inner, agent, word, raw_obs, raw_info)
        except ActionParseError as exc:
            raise AssertionError(f"{where}: legal action {word!r} does not parse: {exc.reason}") from exc
        if mask is not None and isinstance(space, gym_spaces.Discrete):
            assert mask[int(action) - int(space.start)], (
                f"{where}: legal action {word!r} parses to {action}, which the mask forbids"
            )
        again = adapter.parse(inner, agent, adapter.action_text(inner, agent, action), raw_obs, raw_info)
        assert np.array_equal(np.asarray(again), np.asarray(action)), (
            f"{where}: action_text({action!r}) parses to {again!r}, not back to {action!r}"
        )


def check_decoded(info: Mapping[str, Any], text: str, garbage: bool, where: str) -> None:
    """The info keys a language wrapper sets after an action."""
    for key in ("action_text", "action", "parse_error", "fallback"):
        assert key in info, f"{where}: info lacks {key!r} after an action; info keys: {sorted(info)}"
    stored = info["action_text"]
    if info.get("action_text_truncated"):  # a text over the bound is stored cut, with its length
        assert isinstance(text, str) and text.startswith(stored) and info.get("action_text_chars") == len(text), (
            f"{where}: info['action_text'] {stored!r:.80} ({info.get('action_text_chars')} chars) is not the text "
            f"sent cut ({len(text)} chars)"
        )
    else:
        assert stored == text, f"{where}: info['action_text'] is {stored!r:.80}, not the text sent"
    if garbage:
        assert isinstance(info["parse_error"], str) and info["parse_error"], (
            f"{where}: garbage {text!r:.80} did not set info['parse_error'] (it parsed to {info['action']!r})"
        )
        assert info["fallback"] is True, f"{where}: garbage {text!r:.80} did not set info['fallback']"
    else:
        assert info["parse_error"] is None, f"{where}: valid text {text!r} was rejected: {info['parse_error']}"
        assert info["fallback"] is False, f"{where}: valid text {text!r} applied the fallback"
