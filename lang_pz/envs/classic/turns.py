"""What the turn-based board games share: a phrase grammar for moves and the turn line.

Parsing (:func:`parse_phrases`, used by tic-tac-toe; connect four uses the same rules through
:mod:`lang_pz.text.codec`): a JSON ``{"action": ...}`` is unwrapped; a reply that is exactly a
move is that move; else the last ``action: MOVE`` (or ``move: MOVE``); else the single move
mentioned as a whole word anywhere. Mentioning two different moves is ambiguous and fails
(synonyms of one move are one mention); a move that is not legal now fails with the legal
moves in the reason.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import Any

from lang_pz.error import ActionParseError
from lang_pz.text import codec
from lang_pz.text.adapter import LanguageAdapter


def _normalise(text: str) -> str:
    # "top-left", "top_left" and "top  left" alike; "-1" stays a negative number.
    return re.sub(r"\s+", " ", re.sub(r"(?<=[a-z])[-_]+(?=[a-z])", " ", text.lower()))


class PhraseTable:
    """A move grammar compiled once: normalised phrase -> value, and its search patterns.

    Args:
        phrases: phrase -> value (several phrases may share a value).
    """

    def __init__(self, phrases: Mapping[str, int]) -> None:
        self.table = {_normalise(p): v for p, v in phrases.items()}
        alternation = "|".join(re.escape(p) for p in sorted(self.table, key=len, reverse=True))
        word = rf"(?<![\w-])(?<!\d\.)({alternation})(?![\w-])(?!\.\d)"
        self.word = re.compile(word)
        self.marked = re.compile(rf"(?:action|move)\s*[:=]\s*[\"'`*]*{word}")

    def parse(self, text: Any, what: str = "move") -> int:
        """The value of the one phrase ``text`` names (rules: module docstring).

        Raises:
            ActionParseError: not a str, no phrase, or phrases of different values.
        """
        if not isinstance(text, str):
            raise ActionParseError(text, f"expected a str action, got {type(text).__name__}")
        quick = self.table.get(text.strip(codec.STRIP_CHARS).lower())
        if quick is not None:
            return quick
        norm = _normalise(codec.unwrap_json(text))
        s = norm.strip(codec.STRIP_CHARS)
        if s in self.table:
            return self.table[s]
        marked = self.marked.findall(norm)
        if marked:
            return self.table[marked[-1]]
        found = {self.table[m] for m in self.word.findall(norm)}
        if len(found) == 1:
            return found.pop()
        if not found:
            raise ActionParseError(text, f"no {what} found")
        raise ActionParseError(text, f"ambiguous: mentions {len(found)} different {what}s; reply with exactly one")


@functools.lru_cache(maxsize=32)
def _compiled(items: tuple[tuple[str, int], ...]) -> PhraseTable:
    return PhraseTable(dict(items))


def parse_phrases(text: Any, phrases: Mapping[str, int] | PhraseTable, what: str = "move") -> int:
    """Parse ``text`` into the value of one of ``phrases`` (several phrases may share a value).

    Phrases are matched case-insensitively as whole words, treating ``-``, ``_`` and runs of
    white space alike. Rules as in the module docstring; two *different* values mentioned
    are ambiguous (synonyms of one value are not). A mapping is compiled once and memoised;
    pass a :class:`PhraseTable` to skip even the lookup.

    Raises:
        ActionParseError: not a str, no phrase, or phrases of different values.
    """
    table = phrases if isinstance(phrases, PhraseTable) else _compiled(tuple(sorted(phrases.items())))
    return table.parse(text, what)


class TurnBasedAdapter(LanguageAdapter):
    """Shared action line of the turn-based board games: legal moves, or why there are none.

    Subclasses give :meth:`legal_actions` for the agent to move (``[]`` for the others and once
    the game is over).
    """

    move_hint = ""

    def render(self, env: Any, agent: str | None, observation: Any, info: Mapping[str, Any]) -> str:
        legal = self.legal_actions(env, agent, observation, info) or []
        if legal:
            line = f"Your turn. Legal moves: {', '.join(legal)}.{self.move_hint}"
        elif env.terminations.get(agent, False) or env.truncations.get(agent, False):
            line = "The game is over."
        else:
            line = "Not your turn: wait for the opponent."
        return f"{self.observation_text(env, agent, observation)}\n{line}"

    @staticmethod
    def to_move(env: Any, agent: str | None) -> bool:
        """Whether ``agent`` is the one to move now, in a game that is not over."""
        raw = env.unwrapped
        return (
            agent == raw.agent_selection and not raw.terminations.get(agent, False) and not raw.truncations.get(agent, False)
        )
