"""What a valid reply looks like, said once in two forms: a GBNF grammar and a regular expression.

An env whose replies are free text but must contain something (sentence labels, ``#### n``, a
``\\boxed{}`` answer, ``Answer: ...``) puts a :class:`ReplyFormat` in ``info["reply_format"]``
(:meth:`ReplyFormat.as_info`: plain JSON data). A policy passes it to the backend, which
constrains decoding to it where it can: llama.cpp (the embedded model, and llama.cpp's server) with
the GBNF grammar (``GenerationRequest.grammar``); servers that take a regular expression or a
JSON-schema ``pattern`` with the regex (``GenerationRequest.pattern``); elsewhere the reply stays
free text. Every sentence of the grammar is a reply the env parses without its fallback.
Finite action sets need none of this: their ``legal_actions`` are the grammar (``choices``).

The formats are built from small parts (:func:`literal`, :func:`one_of`, :func:`chars`,
:func:`sequence`, :func:`repeat`) that render both forms, so the two always say the same.
GBNF is llama.cpp's grammar format (``grammars/README.md`` of llama.cpp); its literals are
escaped by :func:`lang_pz.backends.llama_cpp.gbnf_literal` rules (llama.cpp crashes on a grammar
it cannot parse, so nothing unescaped reaches it).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

#: The info key of an env's reply format.
INFO_KEY = "reply_format"
#: Every white-space character (``str.isspace``), for parts that must not start or end blank.
WHITESPACE = "".join(c for c in map(chr, range(0x3001)) if c.isspace())


@dataclass(frozen=True)
class Part:
    """One piece of a reply format, in both notations (a GBNF expression and a regex)."""

    gbnf: str
    regex: str
    max_chars: int | None


def _gbnf_char(ch: str) -> str:
    o = ord(ch)
    if ch.isascii() and (ch.isalnum() or ch in " _-.,:;!?'()/+=*&%$#@^~`|<>{}"):
        return ch
    return f"\\x{o:02X}" if o < 0x80 else f"\\u{o:04X}" if o <= 0xFFFF else f"\\U{o:08X}"


def _regex_char(ch: str) -> str:
    # hex escapes mean the same in Python's and ECMAScript's (JSON Schema's) regex dialects
    o = ord(ch)
    if ch.isascii() and ch.isalnum():
        return ch
    return f"\\x{o:02X}" if o < 0x80 else f"\\u{o:04X}" if o <= 0xFFFF else re.escape(ch)


def literal(text: str) -> Part:
    """Exactly ``text`` (non-empty)."""
    if not text:
        raise ValueError("a literal must not be empty")
    return Part('"' + "".join(_gbnf_char(c) for c in text) + '"', "".join(_regex_char(c) for c in text), len(text))


def one_of(options: Sequence[str]) -> Part:
    """Exactly one of ``options`` (non-empty strings; at least one)."""
    unique = list(dict.fromkeys(options))
    if not unique or any(not o for o in unique):
        raise ValueError(f"one_of needs non-empty options, got {list(options)!r}")
    parts = [literal(o) for o in sorted(unique, key=len, reverse=True)]
    return Part(
        "(" + " | ".join(p.gbnf for p in parts) + ")",
        "(?:" + "|".join(p.regex for p in parts) + ")",
        max(len(o) for o in unique),
    )


def chars(excluded: str, low: int, high: int) -> Part:
    """``low`` to ``high`` characters, none of them in ``excluded`` (nor a newline)."""
    if not 0 <= low <= high or high < 1:
        raise ValueError(f"chars needs 0 <= low <= high, high >= 1; got {low}, {high}")
    banned = dict.fromkeys("\n" + excluded)
    gbnf_set = "".join(
        c if c.isascii() and c.isalnum() else f"\\x{ord(c):02X}" if ord(c) < 0x80 else _gbnf_char(c) for c in banned
    )
    regex_set = "".join(_regex_char(c) for c in banned)
    return Part(f"[^{gbnf_set}]{{{low},{high}}}", f"[^{regex_set}]{{{low},{high}}}", high)


def digits(low: int, high: int) -> Part:
    """``low`` to ``high`` decimal digits."""
    if not 0 <= low <= high or high < 1:
        raise ValueError(f"digits needs 0 <= low <= high, high >= 1; got {low}, {high}")
    return Part(f"[0-9]{{{low},{high}}}", f"[0-9]{{{low},{high}}}", high)


def either(*parts: Part) -> Part:
    """Any one of ``parts``."""
    if not parts:
        raise ValueError("either needs at least one part")
    most = None if any(p.max_chars is None for p in parts) else max(p.max_chars or 0 for p in parts)
    return Part("(" + " | ".join(p.gbnf for p in parts) + ")", "(?:" + "|".join(p.regex for p in parts) + ")", most)


def sequence(*parts: Part) -> Part:
    """The parts one after another."""
    total = None if any(p.max_chars is None for p in parts) else sum(p.max_chars or 0 for p in parts)
    return Part(" ".join(p.gbnf for p in parts), "".join(p.regex for p in parts), total)


def repeat(part: Part, low: int, high: int) -> Part:
    """``part`` ``low`` to ``high`` times."""
    if not 0 <= low <= high or high < 1:
        raise ValueError(f"repeat needs 0 <= low <= high, high >= 1; got {low}, {high}")
    most = None if part.max_chars is None else part.max_chars * high
    return Part(f"({part.gbnf}){{{low},{high}}}", f"(?:{part.regex}){{{low},{high}}}", most)


@dataclass(frozen=True)
class ReplyFormat:
    """A reply format: the GBNF grammar (root rule ``root``), the same language as a regex
    (to match a whole reply), the longest reply in characters and an example.

    Build one with :meth:`of`; ``as_info`` / ``from_info`` carry it through ``info``.
    """

    gbnf: str
    regex: str
    max_chars: int
    example: str

    @classmethod
    def of(cls, part: Part, example: str) -> ReplyFormat:
        """The format whose replies are ``part``'s sentences (bounded: ``part.max_chars`` known).

        Raises:
            ValueError: ``part`` is unbounded, or ``example`` is not one of its sentences.
        """
        if part.max_chars is None:
            raise ValueError("a reply format must be bounded (every part with a max length)")
        fmt = cls(f"root ::= {part.gbnf}\n", part.regex, part.max_chars, example)
        if not fmt.matches(example):
            raise ValueError(f"example {example!r} is not a reply of the format {part.regex!r}")
        return fmt

    def matches(self, text: str) -> bool:
        """Whether ``text`` is a sentence of the format."""
        return re.fullmatch(self.regex, text) is not None

    def closed_by(self, end: str) -> str:
        """The GBNF grammar with ``end`` (e.g. the closing quote of a completion prompt) allowed
        once after a reply, so that a model can end where its prompt says a reply ends."""
        body = self.gbnf.removeprefix("root ::= ")
        return f"root ::= reply {literal(end).gbnf}?\nreply ::= {body}"

    def as_info(self) -> dict[str, Any]:
        """Plain JSON data for ``info["reply_format"]``."""
        return {"gbnf": self.gbnf, "regex": self.regex, "max_chars": self.max_chars, "example": self.example}

    @classmethod
    def from_info(cls, info: Mapping[str, Any] | None) -> ReplyFormat | None:
        """The format in ``info[INFO_KEY]``, or ``None`` (no info, no key, or not a format)."""
        raw = (info or {}).get(INFO_KEY)
        if not isinstance(raw, Mapping) or not all(k in raw for k in ("gbnf", "regex", "max_chars", "example")):
            return None
        return cls(str(raw["gbnf"]), str(raw["regex"]), int(raw["max_chars"]), str(raw["example"]))
