"""Flag a gradient whose "drop" names an action its agent never played.

The optimiser's gradient (:mod:`lang_pz.optimisers`, LLM-written) says per agent what to keep,
change and *drop*. A small model can write ``drop: up at every step`` for a piston that played
only ``down`` (seen in a ``make demo`` run with SmolLM2-135M): advice to stop doing something it
never did. The optimiser's words are not changed here; the report flags them, from the
iteration's own records: the actions each agent played (the credit records' computed
``evidence.action_counts``, summed over the iteration's training episodes) and the action words
of the environment (those counts' keys and the counterfactual replacements of every agent).

A drop naming no action word is not flagged (nothing to compare), nor an agent without evidence.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["played_actions", "unplayed_drops"]

#: Counterfactual replacements that are not action words (lang_pz.critics.counterfactual).
_NOT_ACTIONS = frozenset({"default", "random", "previous", "alternatives", "reference policy"})


def played_actions(credits: Sequence[Mapping[str, Any]]) -> tuple[dict[str, dict[str, int]], set[str]]:
    """``(played, vocabulary)`` from an iteration's credit records: agent -> action -> how many
    times it played it, and every action word seen (played by anyone, or a re-run's replacement)."""
    played: dict[str, dict[str, int]] = {}
    words: set[str] = set()
    for rep in credits:
        for a, ev in (rep.get("evidence") or {}).items():
            counts = played.setdefault(a, {})
            for act, n in ((ev or {}).get("action_counts") or {}).items():
                counts[str(act)] = counts.get(str(act), 0) + int(n)
                words.add(str(act))
        for c in rep.get("counterfactuals") or []:
            w = c.get("replacement")
            if isinstance(w, str) and w not in _NOT_ACTIONS:
                words.add(w)
    return played, words


def _named(text: str, vocabulary: set[str]) -> list[str]:
    """The action words of ``vocabulary`` that ``text`` names (whole words, case-insensitive)."""
    low = text.lower()
    return sorted(w for w in vocabulary if re.search(rf"(?<![\w-]){re.escape(w.lower())}(?![\w-])", low))


def unplayed_drops(gradients: Sequence[Mapping[str, Any]], credits: Sequence[Mapping[str, Any]]) -> list[str]:
    """One note per gradient record (``gradients.jsonl``: ``agent`` and ``gradient.drop``) whose
    drop names an action its agent never played in the iteration's training episodes, e.g.
    ``piston_4's gradient says drop 'up at every step' but piston_4 never played up (played down x5)``."""
    played, vocabulary = played_actions(credits)
    notes = []
    for g in gradients:
        agent, drop = g.get("agent"), str((g.get("gradient") or {}).get("drop") or "")
        if not isinstance(agent, str) or agent not in played or not drop.strip():
            continue
        never = [w for w in _named(drop, vocabulary) if played[agent].get(w, 0) == 0]
        if never:
            did = ", ".join(f"{w} x{n}" for w, n in sorted(played[agent].items()) if n) or "nothing"
            notes.append(
                f"{agent}'s gradient says drop {drop!r} but {agent} never played {' or '.join(never)} (played {did})"
            )
    return notes
