"""Do a critic's words agree with its computed re-runs? A check, and computed words instead.

The re-run critics (:mod:`lang_pz.critics.difference`, :mod:`lang_pz.critics.decisive`) let an
LLM put the computed credit into a few words, followed by the computed fact in brackets. A small
model copies its prompt's example, and a user of ``make demo`` read
``its play did not matter (stay at every step: team +304.7)``: words saying "no effect" next to
a re-run that changed the team return by +304.7. This module reads what the words claim and
replaces words that contradict the numbers:

- the words claim *no effect* ("did not matter", "made no difference", "irrelevant", ...) while
  some single-agent re-run of that agent changed the return (``|delta| > UNCHANGED``);
- the words claim *an effect* ("hurt", "wrong", "mattered", "cost", ...; not negated) while
  every re-run of that agent left the return unchanged.

Words that claim neither (e.g. "b was perfect") are kept. The classification is a word list, not
an understanding: it catches the stock phrases such models write, not every paraphrase.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from lang_pz.critics.counterfactual import Counterfactual

__all__ = ["UNCHANGED", "checked_words", "claim", "computed_words", "contradiction", "spread"]

#: Largest ``|delta|`` (objective units, e.g. team-return points) counted as "the re-run left the
#: return unchanged". Deltas are recorded to 3 decimals, so this is an exact zero in practice.
UNCHANGED = 1e-9

_NEGATIONS = frozenset(
    {"not", "no", "never", "nothing", "none", "without", "neither", "nor", "barely", "hardly", "zero", "little"}
)
#: Words that negate an effect word just *after* it ("changed nothing", "costs nothing").
_AFTER = frozenset({"nothing", "none", "zero"})
#: Words that claim no effect by themselves.
_NO_EFFECT = frozenset(
    {"irrelevant", "harmless", "neutral", "unchanged", "inconsequential", "negligible", "immaterial", "unimportant"}
)
#: Stems of words that claim an effect (good or bad) unless a negation stands just before them.
_EFFECT = (
    "matter", "effect", "impact", "affect", "chang", "differ", "help", "hurt", "harm", "cost", "lost",
    "loss", "gain", "improv", "wors", "wrong", "mistak", "fault", "blam", "ruin", "damag", "crucial",
    "decisiv", "spoil", "broke",
)  # fmt: skip


def claim(words: str) -> str | None:
    """What ``words`` claim: ``"no effect"``, ``"effect"`` or ``None`` (neither; also for both,
    e.g. "hurt but did not matter", which reads as ``"no effect"``: the negated claim wins).

    A negation (``not``, ``no``, ``never``, ``zero``, ``little``, ``...n't``) up to three words
    before an effect word, or ``nothing``/``none``/``zero`` up to two words after it, makes it a
    no-effect claim ("did not matter", "made no difference", "had zero effect", "changed nothing").
    """
    tokens = re.findall(r"[a-z]+(?:'[a-z]+)?", words.lower())
    negated = effect = False
    for i, t in enumerate(tokens):
        if t in _NO_EFFECT:
            negated = True
        elif t.startswith(_EFFECT):
            before, after = tokens[max(0, i - 3) : i], tokens[i + 1 : i + 3]
            if any(b in _NEGATIONS or b.endswith("n't") for b in before) or any(x in _AFTER for x in after):
                negated = True
            else:
                effect = True
    return "no effect" if negated else "effect" if effect else None


def spread(counterfactuals: Sequence[Counterfactual], agent: str) -> tuple[float, float] | None:
    """``(lowest, highest)`` delta of the single-agent re-runs of ``agent`` (``None``: it has none)."""
    ds = [c.delta for c in counterfactuals if tuple(c.agents) == (agent,)]
    return (min(ds), max(ds)) if ds else None


def computed_words(low: float, high: float) -> str:
    """Words that follow the re-runs' deltas ``low <= high`` of one agent (no digits, at most 30
    characters: :data:`lang_pz.critics.difference.WORDS_MAX_CHARS`)."""
    if high > UNCHANGED:
        return "another play would do better"
    if low < -UNCHANGED:
        return "no re-run did better"
    return "its play did not matter"


def contradiction(words: str, low: float, high: float) -> str | None:
    """Why ``words`` contradict re-runs with deltas in ``[low, high]``, or ``None`` if they do not."""
    said = claim(words)
    moved = max(abs(low), abs(high)) > UNCHANGED
    if said == "no effect" and moved:
        return f"claim no effect, but a re-run changed the return by {high if abs(high) >= abs(low) else low:+.3g}"
    if said == "effect" and not moved:
        return "claim an effect, but every re-run left the return unchanged"
    return None


def checked_words(words: Mapping[str, str], counterfactuals: Sequence[Counterfactual]) -> tuple[dict[str, str], list[str]]:
    """``(words, notes)``: ``words`` (agent -> the LLM's words) with each contradicting entry
    replaced by :func:`computed_words`, and one note per replacement (for ``report.errors``).
    Agents without a single-agent re-run are kept as they are (nothing to check against)."""
    out, notes = dict(words), []
    for a, w in words.items():
        got = spread(counterfactuals, a)
        why = None if got is None else contradiction(w, *got)
        if got is not None and why is not None:
            out[a] = computed_words(*got)
            notes.append(f"{a}: the words {w!r} {why}; replaced by {out[a]!r}")
    return out, notes
