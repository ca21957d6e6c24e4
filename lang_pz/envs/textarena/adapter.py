"""The text of a TextArena game for lang_pz: its own messages, the moves it lists, a parse back.

What an agent reads: ``Game: TicTacToe (TextArena TicTacToe-v0), 2 players. You are player_0
(the game's Player 0).``, then the game's messages to that player (the tail if very long), then
the action line: the moves the game listed in its latest message, or, for a game that lists
none, its own move format (TextArena's convention: the action in square brackets).

Parsing: where moves are listed, a reply that is one of them (``[4]``) or names one (``4``,
``I play [4]``); a bracketed move takes priority over the other moves a reply mentions, the last
bracketed one that is listed winning (``"0 and 8 are open, but [4]"`` plays ``[4]``:
:meth:`lang_pz.text.adapter.LanguageAdapter.parse_reply`, TextArena's convention); two different
moves named without brackets are ambiguous. Elsewhere any reply with an action in square brackets,
passed whole to the game, which judges it by its own rules. Fallback: the first
listed move, else ``[pass]`` (the game's rule for an invalid move then applies).

Reply format (``info["reply_format"]``, :mod:`lang_pz.text.replies`) where no moves are listed:
the game's own move form where it is known (:data:`MOVE_FORMATS`: Nim's ``[pile quantity]``),
else one action in square brackets (at most 60 characters); every such reply parses (whether
the move is legal is the game's to judge).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from lang_pz.envs.classic.turns import parse_phrases
from lang_pz.error import ActionParseError
from lang_pz.text import replies
from lang_pz.text.adapter import LanguageAdapter
from lang_pz.text.replies import ReplyFormat

#: Characters of the game's messages kept in an observation (the latest ones).
MAX_HISTORY_CHARS = 6000
_BRACKETED = re.compile(r"\[[^\[\]\n]{1,200}\]")
#: Reply formats of the games whose move form is known (TextArena id without ``-raw``).
MOVE_FORMATS: dict[str, ReplyFormat] = {
    # "Remove objects with the format '[pile quantity]', e.g. '[0 3]'" (TextArena Nim-v0's prompt)
    "Nim-v0": ReplyFormat.of(
        replies.sequence(
            replies.literal("["), replies.digits(1, 2), replies.literal(" "), replies.digits(1, 2), replies.literal("]")
        ),
        "[0 3]",
    ),
}


def _example(game: str) -> str:
    """An example move of ``game`` (a TextArena id): its :data:`MOVE_FORMATS` example where the
    form is known (Nim: ``[0 3]``; ``[4]`` would fail every time there), else ``[4]``."""
    known = MOVE_FORMATS.get(game)
    return known.example if known is not None else "[4]"


#: Any other game that lists no moves: one action in square brackets.
BRACKETED_FORMAT = ReplyFormat.of(
    replies.sequence(
        replies.literal("["),
        replies.chars('[]"' + replies.WHITESPACE, 1, 1),
        replies.chars('[]"', 0, 58),
        replies.literal("]"),
    ),
    "[4]",
)


class TextArenaAdapter(LanguageAdapter):
    """Text for a :class:`lang_pz.envs.textarena.bridge.TextArenaAEC` (module docstring)."""

    def _raw(self, env: Any) -> Any:
        return env.unwrapped

    def _to_move(self, env: Any, agent: str | None) -> bool:
        raw = self._raw(env)
        return (
            agent == raw.agent_selection and not raw.terminations.get(agent, False) and not raw.truncations.get(agent, False)
        )

    def _moves(self, env: Any, agent: str | None) -> list[str] | None:
        return self._raw(env).moves.get(agent) if self._to_move(env, agent) else None

    def observation_text(self, env: Any, agent: str | None, observation: Any) -> str:
        raw = self._raw(env)
        history = str(observation)
        if len(history) > MAX_HISTORY_CHARS:
            history = f"[{len(history) - MAX_HISTORY_CHARS} earlier characters left out] " + history[-MAX_HISTORY_CHARS:]
        seat = raw.possible_agents.index(agent)
        return (
            f"Game: {raw.game.split('-')[0]} (TextArena {raw.game}), {raw.num_players} players. You are {agent} "
            f"(the game's Player {seat}).\n{history}"
        )

    def render(self, env: Any, agent: str | None, observation: Any, info: Mapping[str, Any]) -> str:
        raw = self._raw(env)
        moves = self._moves(env, agent)
        if moves:
            line = f"Your turn. Legal moves: {', '.join(moves)}. Reply with one move."
        elif self._to_move(env, agent):
            line = f"Your turn. Reply with your action in square brackets, in the game's format (e.g. {_example(raw.game)})."
        elif raw.terminations.get(agent, False) or raw.truncations.get(agent, False):
            reward = raw.final_rewards.get(agent)
            line = "The game is over." + (f" Your reward: {reward:g}." if reward is not None else "")
        else:
            line = "Not your turn: wait for the others."
        return f"{self.observation_text(env, agent, observation)}\n{line}"

    def legal_actions(self, env: Any, agent: str | None, observation: Any, info: Mapping[str, Any]) -> list[str] | None:
        if not self._to_move(env, agent):
            return []
        moves = self._moves(env, agent)
        return list(moves) if moves else None

    def reply_format(self, env: Any, agent: str | None, observation: Any, info: Mapping[str, Any]) -> ReplyFormat | None:
        """On ``agent``'s turn in a game that lists no moves: the game's move form
        (:data:`MOVE_FORMATS`) or :data:`BRACKETED_FORMAT`; else ``None``."""
        if not self._to_move(env, agent) or self._moves(env, agent):
            return None
        return MOVE_FORMATS.get(self._raw(env).game, BRACKETED_FORMAT)

    def parse(self, env: Any, agent: str | None, text: str, observation: Any, info: Mapping[str, Any]) -> str:
        """The move to send (module docstring).

        Raises:
            ActionParseError: not this agent's turn, no listed move named, or no bracketed action.
        """
        if not isinstance(text, str):
            raise ActionParseError(text, f"expected a str action, got {type(text).__name__}")
        if not self._to_move(env, agent):
            raise ActionParseError(text, f"it is not {agent}'s turn")
        moves = self._moves(env, agent)
        if moves:
            if text.strip() in moves:
                return text.strip()
            phrases = {m: i for i, m in enumerate(moves)}
            phrases.update({m[1:-1].strip(): i for i, m in enumerate(moves) if m[1:-1].strip()})
            try:
                return moves[parse_phrases(text, phrases, what="listed move")]
            except ActionParseError as exc:
                raise ActionParseError(text, f"{exc.reason}; listed moves: {', '.join(moves)}") from None
        found = _BRACKETED.findall(text)
        if not found:
            raise ActionParseError(
                text, f"no action in square brackets; write it as the game asks, e.g. {_example(self._raw(env).game)}"
            )
        return text.strip()

    def fallback(self, env: Any, agent: str | None, observation: Any, info: Mapping[str, Any]) -> str:
        moves = self._moves(env, agent)
        return moves[0] if moves else "[pass]"

    def action_text(self, env: Any, agent: str | None, action: Any) -> str:
        """``action`` if it holds a bracketed action, else its text put in brackets (one line)."""
        text = str(action)
        if _BRACKETED.search(text):
            return text
        return "[" + (re.sub(r"[\[\]\s]+", " ", text).strip()[:200] or "pass") + "]"

    def state_text(self, env: Any, observations: Mapping[str, Any]) -> str:
        """Every player's messages (critic only)."""
        return "\n".join(f"[{a}] {self.observation_text(env, a, o)}" for a, o in observations.items())
