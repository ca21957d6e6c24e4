"""Gymnasium spaces for text observations and text actions.

``gymnasium.spaces.Text`` defaults to an alphanumeric charset and ``min_length=1``; real text
(spaces, punctuation, newlines, the empty string) would be out of bounds. These helpers build
Text spaces with ``min_length=0``:

* observations (every language environment, :func:`text_observation_space`): Unicode, the Basic
  Multilingual Plane without control characters (:class:`UnicodeText`), so a game's own text
  keeps its card suits (``K♠``), box drawing (``┌─┐``), chess pieces and accented names; the
  benchmark tasks' data has names like 'Jānis Strazdiņš' that an agent must read and write exactly.
  :func:`to_charset` puts a rendered text in that charset: only control characters (other than
  tab, newline, carriage return, vertical tab and form feed) and characters beyond the BMP (emoji,
  rare CJK) become ``?``.
* actions (:func:`text_space`): declared over printable ASCII, the characters of every action word
  lang_pz lists; a reply with other characters is still parsed (``ｄｏｗｎ`` is ``down``).
"""

from __future__ import annotations

import copy
import string
import threading
from typing import Any

from gymnasium import spaces

from lang_pz.error import ActionParseError

#: Characters of the declared action spaces (:func:`text_space`): printable ASCII, tab and newline.
TEXT_CHARSET: str = string.printable

#: Default bound on observation text, in characters.
OBSERVATION_MAX_LENGTH: int = 8192
#: Default bound on action text, in characters: the declared ``Text`` action space's
#: ``max_length``, enforced by :func:`check_action_text` in every language environment.
ACTION_MAX_LENGTH: int = 1024


def text_space(max_length: int, *, min_length: int = 0) -> spaces.Text:
    """A ``Text`` space over :data:`TEXT_CHARSET` with ``min_length`` (default 0) to ``max_length`` chars."""
    return spaces.Text(max_length=max_length, min_length=min_length, charset=TEXT_CHARSET)


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
            action,
            f"the action has {len(action)} characters, more than the action space's "
            f"max_length={max_length}; reply with shorter text",
        )
    return action


def stored_text(key: str, text: Any, limit: int) -> dict[str, Any]:
    """``{key: text}`` as an info or a record stores it, cut to ``limit`` characters.

    What is stored is the text (the ``repr`` of a non-str) when it has at most ``limit``
    characters; a longer one keeps its first ``limit`` characters and gains ``KEY_chars`` (its
    full length) and ``KEY_truncated: True``. Used where a reply is recorded (``info
    ["action_text"]``, capped at the action space's bound, which a longer action breaks anyway,
    and the trajectory JSONL's ``raw_output``): a 10 MB reply costs 10 MB in every copy of the
    info and every line of the file otherwise. The parser always sees the action as sent.

    Raises:
        ValueError: ``limit`` is negative.
    """
    if limit < 0:
        raise ValueError(f"limit must be >= 0 characters, got {limit}")
    value = text if isinstance(text, str) else repr(text)
    if len(value) <= limit:
        return {key: value}
    return {key: value[:limit], f"{key}_chars": len(value), f"{key}_truncated": True}


# -- Unicode text (every observation; the benchmark tasks) ----------------------------------------

#: Code points left out of :func:`unicode_text_space`: control characters other than tab,
#: newline, vertical tab, form feed and carriage return, and the UTF-16 surrogates.
EXCLUDED_CODE_POINTS: tuple[tuple[int, int], ...] = ((0x00, 0x08), (0x0E, 0x1F), (0x7F, 0x9F), (0xD800, 0xDFFF))
#: Characters beyond the Basic Multilingual Plane (emoji, rare CJK) are outside the charset too:
#: a Gymnasium ``Text`` space holds its charset as a set and an index (all of Unicode would be
#: about 190 MB and 3 s per space; the BMP is 11 MB and 0.13 s, built once per process).
UNICODE_MAX_CODE_POINT: int = 0xFFFF

_unicode_lock = threading.Lock()
_unicode_tables: tuple[Any, ...] | None = None


def _tables() -> tuple[Any, ...]:
    global _unicode_tables
    with _unicode_lock:
        if _unicode_tables is None:
            chars: list[str]
            chars, start = [], 0
            for lo, hi in EXCLUDED_CODE_POINTS:
                chars.extend(map(chr, range(start, lo)))
                start = hi + 1
            chars.extend(map(chr, range(start, UNICODE_MAX_CODE_POINT + 1)))
            built = spaces.Text(1, charset="".join(chars))  # gymnasium's own tables, once
            _unicode_tables = (built._char_set, built._char_list, built._char_index, built._char_str)
        return _unicode_tables


class UnicodeText(spaces.Text):
    """A ``gymnasium.spaces.Text`` over the Basic Multilingual Plane without controls and
    surrogates (see :data:`EXCLUDED_CODE_POINTS`), ``min_length`` 0 by default.

    It is a plain ``Text`` (``sample``, ``contains``, flattening and equality are Gymnasium's);
    only its charset tables are built once per process and shared, and it pickles and
    deep-copies by its bounds.
    """

    def __init__(self, max_length: int, *, min_length: int = 0, seed: Any = None) -> None:
        if not isinstance(max_length, int) or isinstance(max_length, bool) or not 0 <= min_length <= max_length:
            raise ValueError(f"UnicodeText needs 0 <= min_length <= max_length, got {min_length}, {max_length!r}")
        self.min_length, self.max_length = int(min_length), int(max_length)
        self._char_set, self._char_list, self._char_index, self._char_str = _tables()
        spaces.Space.__init__(self, dtype=str, seed=seed)

    def __repr__(self) -> str:
        return f"UnicodeText({self.min_length}, {self.max_length}, charset=BMP without controls and surrogates)"

    def __reduce__(self) -> tuple[Any, ...]:
        return _unicode_text, (self.max_length, self.min_length, self._np_random)

    def __deepcopy__(self, memo: dict[int, Any]) -> UnicodeText:
        return _unicode_text(self.max_length, self.min_length, copy.deepcopy(self._np_random, memo))


def _unicode_text(max_length: int, min_length: int, rng: Any) -> UnicodeText:
    space = UnicodeText(max_length, min_length=min_length)
    space._np_random = rng
    return space


def unicode_text_space(max_length: int, *, min_length: int = 0) -> UnicodeText:
    """A :class:`UnicodeText` space of ``min_length`` (default 0) to ``max_length`` characters."""
    return UnicodeText(max_length, min_length=min_length)


def text_observation_space(max_length: int = OBSERVATION_MAX_LENGTH) -> spaces.Dict:
    """The observation space of every language environment: ``Dict({"text": UnicodeText})``.

    A dict rather than a bare ``Text`` because ``pettingzoo.test.api_test`` compares an
    observation's ``dtype`` with its space's, which a plain ``str`` does not have.
    """
    return spaces.Dict({"text": unicode_text_space(max_length)})


#: The benchmark tasks' name for :func:`text_observation_space` (one observation space for all).
unicode_observation_space = text_observation_space


def to_charset(text: str, max_length: int = OBSERVATION_MAX_LENGTH) -> str:
    """``text`` inside the observation charset (:func:`to_unicode_charset`: only controls and
    characters beyond the BMP become ``?``), checked against ``max_length``.

    Raises:
        ValueError: if ``text`` is longer than ``max_length`` (a renderer bug: rendering
            must be compact, and silently cutting an observation would hide information).
    """
    if len(text) > max_length:
        raise ValueError(
            f"rendered text has {len(text)} characters, more than max_length={max_length}; "
            "make the renderer more compact or raise the observation max_length"
        )
    return to_unicode_charset(text)


def to_unicode_charset(text: str) -> str:
    """``text`` inside :class:`UnicodeText`'s charset: excluded characters (controls other than
    white space, surrogates, characters beyond the BMP) become ``?``; nothing else changes."""
    charset = _tables()[0]
    if all(c in charset for c in text):
        return text
    return "".join(c if c in charset else "?" for c in text)
