"""Supported directions: the changes the computed re-runs support for an agent, as phrases
("play up at every step", "play up at steps [0, 1]"), and the action word such a phrase names.

Kept apart from :mod:`lang_pz.optimisers.gradient` so that the actor check
(:mod:`lang_pz.optimisers.adherence`), which the gradient's record holds, can read a direction
without importing the gradient module.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from lang_pz.critics.base import CriticReport
from lang_pz.critics.counterfactual import NOT_ACTIONS

if TYPE_CHECKING:
    from lang_pz.optimisers.gradient import Gradient

#: What a policy text can hold as an action word: letters, digits, spaces, ``_`` or ``-``.
PLAIN_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9 _-]*")


def evidence_changes(agent: str, report: CriticReport) -> list[str]:
    """The directions the computed re-runs support for ``agent``: ``"play W at every step"`` (or
    ``"at steps [...]"``) for each action word W whose re-run, with only ``agent`` replaced,
    beat what it played; best gain first. These become the gradient's choices of ``change``
    with ``directions="evidence"`` (the facts come from re-runs, the LLM picks and phrases)."""
    better = sorted(
        (c for c in report.counterfactuals if c.agents == (agent,) and c.delta > 0 and c.replacement not in NOT_ACTIONS),
        key=lambda c: -c.delta,
    )
    phrases = [
        f"play {c.replacement} " + ("at every step" if c.at_steps is None else f"at steps {list(c.at_steps)}")
        for c in better
    ]
    return list(dict.fromkeys(phrases))


_SUPPORTED_CHANGE = re.compile(r"^play (?P<word>.+?) (?:at every step|at steps \[[0-9, ]*\])$")


def direction_word(gradient: Gradient) -> str | None:
    """The action word a supported gradient tells its agent to play, else ``None``.

    A supported ``change`` is one of :func:`evidence_changes`' phrases, ``"play W at every step"``
    or ``"play W at steps [...]"``; this returns ``W`` when a policy text can hold it (letters,
    digits, spaces, ``_`` or ``-``: not e.g. TextArena's ``[4]``). Free-text changes have no word.
    """
    if not gradient.supported:
        return None
    m = _SUPPORTED_CHANGE.match(gradient.change)
    return m.group("word") if m and PLAIN_WORD.fullmatch(m.group("word")) else None
