"""Generic text rendering and action parsing for Gymnasium spaces.

Supports ``Discrete``, ``MultiDiscrete``, ``Box`` and ``Dict`` spaces, so any PettingZoo or
Gymnasium environment can be given a text interface without an adapter of its own.

Parsing rules (:func:`parse_action`), applied in order:

1. A JSON object ``{"action": ...}`` is unwrapped to its ``"action"`` value.
2. Discrete: the reply and the action words are compared after Unicode NFKC normalisation
   (fullwidth ``ｄｏｗｎ`` is ``down``, ``①`` is ``1``; a vulgar fraction such as ``½`` names no
   number) and case-insensitively. The whole reply, stripped of white space, quotes and trailing
   punctuation, equal to one action word; else the last ``action: WORD``;
   else the single action word mentioned as a whole word anywhere. Mentions of two
   different words are ambiguous and fail, and so does the single word right after a negation
   ("not up", "don't go up": the reply rules the action out).
3. Box / MultiDiscrete: the numbers in the reply, which must be exactly as many as the
   space has elements, finite and within bounds (integers for MultiDiscrete).
4. Dict: a JSON object with one entry per sub-space, each parsed by these rules.

A parse failure raises :class:`lang_pz.error.ActionParseError`; it never crashes otherwise,
whatever the string (property-tested with hypothesis).

Before these rules, the language wrappers give a bracketed move priority (TextArena's convention,
``"... so I play [7]"``): where an agent has a finite set of moves, the last bracketed part of its
reply that parses alone is the action (:meth:`lang_pz.text.adapter.LanguageAdapter.parse_reply`).
"""

from __future__ import annotations

import functools
import json
import math
import re
import unicodedata
from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium import spaces

from lang_pz.error import ActionParseError
from lang_pz.text import render

_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
STRIP_CHARS = " \t\r\n\"'`.,;:!?()[]{}<>*"


def _fold(text: str) -> str:
    """``text`` as action words are compared: Unicode NFKC normalisation, then lower case."""
    return unicodedata.normalize("NFKC", text).lower()


def action_vocabulary(space: spaces.Discrete, names: Sequence[str] | None = None) -> list[str]:
    """The words that name each action of a Discrete space: ``names`` or the integers.

    Raises:
        ValueError: if ``names`` has the wrong length or repeats a word.
    """
    n = int(space.n)
    if names is None:
        return [str(int(space.start) + i) for i in range(n)]
    names = [str(x) for x in names]
    if len(names) != n:
        raise ValueError(f"{len(names)} action names given for Discrete({n}): {names}")
    if len({_fold(x) for x in names}) != n:
        raise ValueError(f"action names must be distinct (case-insensitively, after Unicode NFKC normalisation): {names}")
    return names


@functools.lru_cache(maxsize=256)
def _cached_vocabulary(n: int, start: int, names: tuple[str, ...] | None) -> list[str]:
    return action_vocabulary(spaces.Discrete(n, start=start), names)


_fmt = render.fmt


def render_value(space: spaces.Space[Any], value: Any) -> str:
    """Render a value of ``space`` as compact text that :func:`parse_action` reads back.

    Discrete and MultiDiscrete values become integers; Box values become every one of their
    numbers with 3 significant digits, as one list; Dict values become ``key: value`` lines. Other
    spaces fall back to ``str(value)``. (What an agent reads of an observation is
    :func:`lang_pz.text.render.describe`: named, laid out by shape, bounded in size.)
    """
    if isinstance(space, spaces.Discrete):
        return str(int(value))
    if isinstance(space, spaces.Dict):
        return "\n".join(f"{k}: {render_value(space[k], value[k])}" for k in space.spaces)
    if isinstance(space, (spaces.Box, spaces.MultiDiscrete, spaces.MultiBinary)):
        arr = np.asarray(value)
        if arr.ndim == 0:
            return _fmt(arr.item())
        return "[" + ", ".join(_fmt(v) for v in arr.ravel()) + "]"
    return str(value)


def describe_action_space(
    space: spaces.Space[Any], names: Sequence[str] | None = None, legal: Sequence[str] | None = None
) -> str:
    """One line telling an agent how to write an action of ``space``."""
    if isinstance(space, spaces.Discrete):
        words = list(legal) if legal is not None else action_vocabulary(space, names)
        return "Actions: " + ", ".join(words)
    if isinstance(space, spaces.Box):
        lo, hi = np.broadcast_to(space.low, space.shape), np.broadcast_to(space.high, space.shape)
        if space.shape in ((), (1,)):
            return f"Action: a number from {_fmt(lo.ravel()[0])} to {_fmt(hi.ravel()[0])}"
        return (
            f"Action: {int(np.prod(space.shape))} numbers, each from "
            f"{_fmt(lo.min())} to {_fmt(hi.max())}, e.g. [{', '.join(_fmt(v) for v in lo.ravel())}]"
        )
    if isinstance(space, spaces.MultiDiscrete):
        return "Action: integers " + ", ".join(f"0-{int(n) - 1}" for n in np.ravel(space.nvec))
    if isinstance(space, spaces.Dict):
        return "Action: a JSON object with keys " + ", ".join(
            f"{k} ({describe_action_space(s)})" for k, s in space.spaces.items()
        )
    raise TypeError(f"no text form for action space {space}")


def unwrap_json(text: str) -> str:
    """The ``"action"`` value of a JSON object reply, as text; any other text unchanged."""
    s = text.strip()
    if s.startswith("{") and s.endswith("}"):
        try:
            obj = json.loads(s)
        except (ValueError, RecursionError):
            return text
        if isinstance(obj, dict) and "action" in obj:
            v = obj["action"]
            return v if isinstance(v, str) else json.dumps(v)
    return text


#: A negation right before the only action word named ("not up", "don't go up", "never stay"):
#: the reply rules the action out, so it is not parsed as that action.
_NEGATED = re.compile(
    r"\b(?:not|no|never|don't|dont|do not|doesn't|won't|cannot|can't)\s+(?:\w+\s+){0,2}$", flags=re.IGNORECASE
)


@functools.lru_cache(maxsize=256)
def _discrete_grammar(vocab: tuple[str, ...]) -> tuple[dict[str, int], re.Pattern[str], re.Pattern[str]]:
    """For action words ``vocab``: folded word (:func:`_fold`) -> index, the whole-word pattern and
    the ``action: WORD`` pattern, both for a folded reply (built once per vocabulary)."""
    lowered = [_fold(w) for w in vocab]
    alternation = "|".join(re.escape(w) for w in sorted(lowered, key=len, reverse=True))
    # Not part of a longer word, a negative number, a decimal ("3.0" is not "0") or a fraction
    # written with the fraction slash (NFKC turns "½" into "1\u20442", which names neither 1 nor 2).
    word = rf"(?<![\w\u2044-])(?<!\d\.)({alternation})(?![\w\u2044-])(?!\.\d)"
    # Matched case-sensitively against the folded reply: IGNORECASE would also match letters that
    # fold to no action word (a dotless "ı" for "i"), whose match then names no action.
    marked = re.compile(rf"action\s*[:=]\s*[\"'`*]*{word}")
    return {w: i for i, w in enumerate(lowered)}, re.compile(word), marked


def _parse_discrete(text: str, vocab: Sequence[str], legal: Sequence[str] | None = None) -> int:
    """The index of the one action word ``text`` names (compared after NFKC normalisation:
    :func:`_fold`); reasons list ``legal`` (default ``vocab``) and carry the raw ``text``."""
    index, word, marked = _discrete_grammar(tuple(vocab))
    norm = _fold(text)
    s = norm.strip(STRIP_CHARS)
    if s in index:
        return index[s]
    shown = list(vocab) if legal is None else list(legal)
    found_marked = marked.findall(norm)
    if found_marked:
        return index[found_marked[-1]]
    found = set(word.findall(norm))
    if len(found) == 1:
        (w,) = found
        if _NEGATED.search(norm[: min(m.start() for m in word.finditer(norm))]):
            raise ActionParseError(
                text, f"negated: it names {w!r} only to rule it out; reply with the action to play, one of {shown}"
            )
        return index[w]
    if not found:
        raise ActionParseError(text, f"no action word found; expected one of {shown}")
    raise ActionParseError(text, f"ambiguous: mentions {sorted(found)}; reply with exactly one of {shown}")


def _fits_dtype(arr: np.ndarray, dtype: Any) -> bool:
    dtype = np.dtype(dtype)
    info = (
        np.finfo(dtype)
        if np.issubdtype(dtype, np.floating)
        else np.iinfo(dtype)
        if np.issubdtype(dtype, np.integer)
        else None
    )
    return info is None or bool(np.all((arr >= float(info.min)) & (arr <= float(info.max))))


def _numbers(text: str) -> list[float]:
    return [float(m) for m in _NUMBER.findall(text)]


def parse_action(
    space: spaces.Space[Any],
    text: str,
    *,
    names: Sequence[str] | None = None,
    mask: np.ndarray | None = None,
) -> Any:
    """Parse ``text`` into an action of ``space`` (rules in the module docstring).

    Args:
        space: the environment's action space.
        text: any string.
        names: words for the actions of a Discrete space (default: the integers).
        mask: legal-action mask of a Discrete space (1 = legal).

    Returns:
        ``int`` for Discrete, ``np.ndarray`` of the space's dtype for Box/MultiDiscrete,
        ``dict`` for Dict.

    Raises:
        ActionParseError: the text names no valid action, is ambiguous, out of range or
            illegal under ``mask``. Carries the raw text.
        TypeError: the space is of a kind this parser does not handle.
    """
    if not isinstance(text, str):
        raise ActionParseError(text, f"expected a str action, got {type(text).__name__}")
    try:
        return _parse_unwrapped(space, unwrap_json(text), names, mask)
    except ActionParseError as exc:
        if exc.text is text:
            raise
        raise ActionParseError(text, exc.reason) from None  # carry the raw text, not the unwrapped part


def _parse_unwrapped(space: spaces.Space[Any], text: str, names: Sequence[str] | None, mask: np.ndarray | None) -> Any:
    if isinstance(space, spaces.Discrete):
        vocab = _cached_vocabulary(int(space.n), int(space.start), None if names is None else tuple(names))
        legal = None if mask is None else [vocab[i] for i in np.flatnonzero(mask)]
        idx = _parse_discrete(text, vocab, legal)
        if mask is not None and not mask[idx]:
            raise ActionParseError(text, f"{vocab[idx]!r} is not legal now; legal: {legal}")
        return int(space.start) + idx
    if isinstance(space, (spaces.Box, spaces.MultiDiscrete)):
        want = int(np.prod(space.shape))
        nums = _numbers(text)
        if len(nums) != want:
            raise ActionParseError(text, f"expected {want} number(s), found {len(nums)}")
        if not all(math.isfinite(x) for x in nums):
            raise ActionParseError(text, "numbers must be finite")
        arr = np.asarray(nums, dtype=np.float64).reshape(space.shape)
        if isinstance(space, spaces.MultiDiscrete) and not np.all(arr == np.round(arr)):
            raise ActionParseError(text, "expected integers")
        low = space.low if isinstance(space, spaces.Box) else space.start
        high = space.high if isinstance(space, spaces.Box) else space.start + space.nvec - 1
        if np.any(arr < low) or np.any(arr > high):  # checked before the cast, which could overflow
            raise ActionParseError(text, f"out of range: {describe_action_space(space)}")
        if not _fits_dtype(arr, space.dtype):  # an unbounded space still has its dtype's range
            raise ActionParseError(text, f"out of range of {np.dtype(space.dtype).name}")
        arr = arr.astype(space.dtype)
        if not space.contains(arr):
            raise ActionParseError(text, f"out of range: {describe_action_space(space)}")
        return arr
    if isinstance(space, spaces.Dict):
        try:
            obj = json.loads(text)
        except (ValueError, RecursionError):
            raise ActionParseError(text, "expected a JSON object") from None
        if not isinstance(obj, dict) or set(obj) != set(space.spaces):
            raise ActionParseError(text, f"expected a JSON object with keys {list(space.spaces)}")
        return {
            k: parse_action(s, json.dumps(obj[k]) if not isinstance(obj[k], str) else obj[k])
            for k, s in space.spaces.items()
        }
    raise TypeError(f"no text parser for action space {space}")


def fallback_action(space: spaces.Space[Any], mask: np.ndarray | None = None) -> Any:
    """The documented default action used when text does not parse.

    Discrete: the first legal action under ``mask`` (else the first action); Box: zero
    clipped into the bounds; MultiDiscrete: zeros; Dict: the fallback of each sub-space.
    """
    if isinstance(space, spaces.Discrete):
        idx = int(np.flatnonzero(mask)[0]) if mask is not None and np.any(mask) else 0
        return int(space.start) + idx
    if isinstance(space, spaces.Box):
        return np.clip(np.zeros(space.shape), space.low, space.high).astype(space.dtype)
    if isinstance(space, spaces.MultiDiscrete):
        return np.zeros(space.shape, dtype=space.dtype)
    if isinstance(space, spaces.Dict):
        return {k: fallback_action(s) for k, s in space.spaces.items()}
    raise TypeError(f"no fallback action for action space {space}")
