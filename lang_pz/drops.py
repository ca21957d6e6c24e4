"""Flag a gradient whose "drop" names an action its agent never played.

The optimiser's gradient (:mod:`lang_pz.optimisers`, LLM-written) says per agent what to keep,
change and *drop*. A small model can write ``drop: up at every step`` for a piston that played
only ``down`` (seen in a ``make demo`` run with SmolLM2-135M): advice to stop doing something it
never did. The optimiser's words are not changed here; the report flags them, from the
iteration's own records: the actions each agent played (the credit records' computed
``evidence.action_counts``, summed over the iteration's training episodes) and the action words
of the environment (those counts' keys and the counterfactual replacements of every agent).

A drop naming no action word is not flagged (nothing to compare), nor an agent without evidence;
parts of a damaged record that are not what the loop writes (not an object, a count that is not
an integer) are ignored.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from lang_pz.critics.counterfactual import NOT_ACTIONS

__all__ = ["played_actions", "unplayed_drops"]


def _items(obj: Any) -> list[tuple[str, Any]]:
    """The items of a record's JSON object ``obj`` (``[]`` if it is not one: a damaged record)."""
    return [(str(k), v) for k, v in obj.items()] if isinstance(obj, Mapping) else []


def played_actions(credits: Sequence[Mapping[str, Any]]) -> tuple[dict[str, dict[str, int]], set[str]]:
    """``(played, vocabulary)`` from an iteration's credit records: agent -> action -> how many
    times it played it, and every action word seen (played by anyone, or a re-run's replacement)."""
    played: dict[str, dict[str, int]] = {}
    words: set[str] = set()
    for rep in credits:
        for a, ev in _items(rep.get("evidence")):
            counts = played.setdefault(a, {})
            for act, n in _items(ev.get("action_counts") if isinstance(ev, Mapping) else None):
                if isinstance(n, int) and not isinstance(n, bool):
                    counts[str(act)] = counts.get(str(act), 0) + n
                    words.add(str(act))
        probes = rep.get("counterfactuals")
        for c in probes if isinstance(probes, list) else []:
            w = c.get("replacement") if isinstance(c, Mapping) else None
            if isinstance(w, str) and w not in NOT_ACTIONS:
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
        grad = g.get("gradient")
        agent, drop = g.get("agent"), str((grad.get("drop") if isinstance(grad, Mapping) else None) or "")
        if not isinstance(agent, str) or agent not in played or not drop.strip():
            continue
        never = [w for w in _named(drop, vocabulary) if played[agent].get(w, 0) == 0]
        if never:
            did = ", ".join(f"{w} x{n}" for w, n in sorted(played[agent].items()) if n) or "nothing"
            notes.append(
                f"{agent}'s gradient says drop {drop!r} but {agent} never played {' or '.join(never)} (played {did})"
            )
    return notes
