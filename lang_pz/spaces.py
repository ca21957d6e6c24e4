"""Gymnasium spaces for text observations and text actions.

``gymnasium.spaces.Text`` defaults to an alphanumeric charset and ``min_length=1``; real text
(spaces, punctuation, newlines, the empty string) would be out of bounds. These helpers build
Text spaces over printable ASCII with ``min_length=0``.
"""

from __future__ import annotations

import string
from typing import Any

from gymnasium import spaces

from lang_pz.error import ActionParseError

#: Characters allowed in observation and action text: printable ASCII, tab and newline.
TEXT_CHARSET: str = string.printable

#: Default bound on observation text, in characters.
OBSERVATION_MAX_LENGTH: int = 8192
#: Default bound on action text, in characters: the declared ``Text`` action space's
#: ``max_length``, enforced by :func:`check_action_text` in every language environment.
ACTION_MAX_LENGTH: int = 1024

_ALLOWED = frozenset(TEXT_CHARSET)


def text_space(max_length: int, *, min_length: int = 0) -> spaces.Text:
    """A ``Text`` space over :data:`TEXT_CHARSET` with ``min_length`` (default 0) to ``max_length`` chars."""
    return spaces.Text(max_length=max_length, min_length=min_length, charset=TEXT_CHARSET)


def text_observation_space(max_length: int = OBSERVATION_MAX_LENGTH) -> spaces.Dict:
    """The observation space of every language environment: ``Dict({"text": Text})``.

    A dict rather than a bare ``Text`` because ``pettingzoo.test.api_test`` compares an
    observation's ``dtype`` with its space's, which a plain ``str`` does not have.
    """
    return spaces.Dict({"text": text_space(max_length)})


def to_charset(text: str, max_length: int = OBSERVATION_MAX_LENGTH) -> str:
    """Map ``text`` into :data:`TEXT_CHARSET` (other characters become ``?``) and bound its length.

    Raises:
        ValueError: if ``text`` is longer than ``max_length`` (a renderer bug: rendering
            must be compact, and silently cutting an observation would hide information).
    """
    if len(text) > max_length:
        raise ValueError(
            f"rendered text has {len(text)} characters, more than max_length={max_length}; "
            "make the renderer more compact or raise the observation max_length"
        )
    if all(c in _ALLOWED for c in text):
        return text
    return "".join(c if c in _ALLOWED else "?" for c in text)


def check_action_text(action: Any, max_length: int = ACTION_MAX_LENGTH) -> str:
    """The one rule every language environment applies to an action before parsing it.

    An action is a ``str`` of at most ``max_length`` characters (the action space's declared
    bound). Anything else is an :class:`~lang_pz.error.ActionParseError`, which the env turns
    into its documented fallback action (or raises, in strict mode), exactly like text that
    does not parse. Longer text is refused rather than cut, so nothing is silently dropped.

    Raises:
        ActionParseError: ``action`` is not a ``str``, or is longer than ``max_length``.
    """
    if not isinstance(action, str):
        raise ActionParseError(action, f"the action must be a str (text), got {type(action).__name__}")
    if len(action) > max_length:
        raise ActionParseError(
            action[:200], f"the action has {len(action)} characters, more than the action space's "
                          f"max_length={max_length}; reply with shorter text")
    return action
