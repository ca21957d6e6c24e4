"""What an agent's own policy text tells it to play, where a plain reader can tell.

The own-policy critic (:mod:`lang_pz.critics.own`) asks, at each decision, "what does this
agent's instruction say to play here?" and compares it with what the agent played. This module
is its reader: deterministic, no model, and it reads only two forms. Anything else is
*unreadable* (``None``): the critic then examines no decision of that agent, rather than guess.

- **Unconditional**: sentences naming exactly one offered action word, with no condition or
  negation: ``"Always play up."``, ``"Push down."``, ``"Stay put."`` (each sentence that names a
  word names the same one).
- **Rules on quoted phrases**: ``If <... 'phrase' ... 'phrase' ...>, play W.`` sentences, in
  order, each naming one action word outside its quotes, then at most one ``Otherwise, play V.``
  A rule applies when any of its quoted phrases (single or double quotes) occurs in the
  observation text, as a substring; the first that applies wins, else ``Otherwise``; with no
  ``Otherwise`` and no rule applying, the text says nothing there (``None``). E.g. Pistonball's
  scripted heuristic (:class:`~lang_pz.policies.scripted.PistonballHeuristic`) is
  ``If the observation says 'px to your right' or 'Ball: out of view', play down. Otherwise,
  play up.`` (:data:`lang_pz.evaluation.bases.BASE_TEXTS`).

Not read: negations (``not``, ``never``, ``don't``, ``avoid``, ...), conditions in plain words
("push up when the ball is to your left": a condition without quoted phrases), sentences
naming two action words. A multi-word action (Overcooked's ``pick up onion``) is matched
whole, and a shorter word inside it (``up``) is not counted again.

Why so narrow: the embedded 135M actor does not follow conditional instructions and writes
unconditional ones (``benchmarks/results/optimiser_words.md``), so these are the texts training
produces; a reader that guessed at free phrasing would blame agents for its own misreadings.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass

from lang_pz.trajectory import AgentStep

__all__ = ["Reading", "intent", "played_word", "read_policy"]

_QUOTED = re.compile(r"(?<![A-Za-z0-9])'([^']+)'(?![A-Za-z0-9])|\"([^\"]+)\"")
_NEGATION = re.compile(r"\b(?:not|never|no|none|nothing|avoid|except|unless|without|instead)\b|n't\b", re.IGNORECASE)
_CONDITION = re.compile(r"\b(?:if|when|whenever|while|until|unless|once|as long as|after|before|only)\b", re.IGNORECASE)
_IF = re.compile(r"^\s*(?:if|when|whenever)\b", re.IGNORECASE)
_OTHERWISE = re.compile(r"^\s*(?:otherwise|else|in (?:all|any) other cases?)\b", re.IGNORECASE)
_PLACEHOLDER = re.compile(r"\x00(\d+)\x00")


@dataclass(frozen=True)
class Reading:
    """A readable policy text (:func:`read_policy`).

    Attributes:
        rules: ``(phrases, word)`` in order: play ``word`` when any phrase occurs in the observation.
        otherwise: the word when no rule applies (``None``: the text says nothing there).
    """

    rules: tuple[tuple[tuple[str, ...], str], ...] = ()
    otherwise: str | None = None

    def __call__(self, observation: str) -> str | None:
        """The word the text prescribes for ``observation`` (``None``: it says nothing there)."""
        for phrases, word in self.rules:
            if any(p in observation for p in phrases):
                return word
        return self.otherwise


def _named(sentence: str, offered: Sequence[str]) -> list[str]:
    """The offered words ``sentence`` names as whole words (longest first, no overlaps)."""
    taken: list[tuple[int, int]] = []
    out: list[str] = []
    for w in sorted(offered, key=len, reverse=True):
        for m in re.finditer(rf"(?<![A-Za-z0-9]){re.escape(w)}(?![A-Za-z0-9])", sentence, re.IGNORECASE):
            if not any(m.start() < e and s < m.end() for s, e in taken):
                taken.append((m.start(), m.end()))
                out.append(w)
    return out


@functools.lru_cache(maxsize=256)
def _read(text: str, offered: tuple[str, ...]) -> Reading | None:
    phrases: list[str] = []

    def hold(m: re.Match[str]) -> str:
        phrases.append(m.group(1) or m.group(2))
        return f"\x00{len(phrases) - 1}\x00"

    held = _QUOTED.sub(hold, text)
    rules: list[tuple[tuple[str, ...], str]] = []
    otherwise: str | None = None
    plain: set[str] = set()
    for sentence in re.split(r"[.;!?\n]+", held):
        bare = _PLACEHOLDER.sub(" ", sentence)
        words = set(_named(bare, offered))
        if not words and not _PLACEHOLDER.search(sentence):
            continue  # a sentence naming no action (e.g. "You are a piston")
        if _NEGATION.search(bare) or len(words) != 1:
            return None
        (word,) = words
        quoted = tuple(phrases[int(i)] for i in _PLACEHOLDER.findall(sentence))
        if _IF.match(bare) and quoted:
            rules.append((quoted, word))
        elif _OTHERWISE.match(bare) and not quoted and otherwise is None:
            otherwise = word
        elif not quoted and not _CONDITION.search(bare):
            plain.add(word)
        else:
            return None
    if plain and (rules or otherwise is not None or len(plain) > 1):
        return None
    if plain:
        return Reading(otherwise=plain.pop())
    return Reading(tuple(rules), otherwise) if rules else None


def read_policy(text: str, offered: Sequence[str]) -> Reading | None:
    """``text`` as a :class:`Reading` over the ``offered`` action words, or ``None`` when it is
    not one of the two readable forms (module docstring)."""
    return _read(" ".join(str(text).split()), tuple(dict.fromkeys(offered)))


def intent(text: str, step: AgentStep) -> str | None:
    """What ``text`` tells the agent of ``step`` to play there (``None``: unreadable, free-text
    actions, or the text says nothing in that observation)."""
    if not step.legal_actions:
        return None
    reading = read_policy(text, step.legal_actions)
    return None if reading is None else reading(step.observation)


def played_word(step: AgentStep) -> str | None:
    """The offered action word ``step`` played (its reply, or its applied action when that is a
    word), ``None`` when its reply did not parse or is not an offered word."""
    if step.parse_error is not None:
        return None
    offered = list(step.legal_actions or ())
    reply = " ".join(str(step.raw_output).split()).rstrip(".").lower()
    for w in offered:
        if w.lower() == reply:
            return w
    return step.action if isinstance(step.action, str) and step.action in offered else None
