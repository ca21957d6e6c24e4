"""Tic-tac-toe (PettingZoo ``tictactoe_v3``) as a language environment: ``classic/tictactoe-v0``.

=====================  =====================================================================
Agents                 ``player_1`` (plays X, moves first), ``player_2`` (plays O)
API                    AEC (turn-based; PettingZoo does not parallelise it)
Observation            ``{"text": str}``: which mark you are, the 3x3 board drawn with X / O,
                       empty squares showing their number (1-9, reading order), whose turn
                       it is, then the legal moves
Action                 ``str``: a square number ``1``-``9`` (1 2 3 / 4 5 6 / 7 8 9, reading
                       order) or a square name: ``top-left``, ``top``, ``top-right``,
                       ``left``, ``center``, ``right``, ``bottom-left``, ``bottom``,
                       ``bottom-right`` (also ``centre``/``middle``, ``top-center``,
                       ``middle-left``, ``upper-left`` ...; hyphens, spaces or underscores)
Reward                 +1 win, -1 loss, 0 draw (PettingZoo's)
Fallback               an unreadable reply or a taken square plays the first free square in
                       reading order; the player's next observation says so
=====================  =====================================================================

Parsing: :func:`lang_pz.envs.classic.turns.parse_phrases` over the square numbers and names.
The text is rendered from the board (``env.unwrapped.board.squares``, fully visible to both
players), so PettingZoo's observation arrays are not built for it. PettingZoo's layout, read
from the 1.27 source: action ``a`` is column ``a // 3``, row ``a % 3`` (its ``(3, 3, 2)``
observation is indexed ``[column, row, plane]``); ``board.squares[a]`` is 0 (empty), 1
(player_1) or 2 (player_2).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from lang_pz.envs.checks import check_api, check_bool
from lang_pz.envs.classic.turns import PhraseTable, TurnBasedAdapter
from lang_pz.error import ActionParseError
from lang_pz.registration import Api

#: Square names in reading order (square 1 is top-left, 9 bottom-right).
TICTACTOE_SQUARES = (
    "top-left",
    "top",
    "top-right",
    "left",
    "center",
    "right",
    "bottom-left",
    "bottom",
    "bottom-right",
)
_TTT_SYNONYMS = {
    "top": ("top-center", "top-centre", "top-middle", "upper-center", "upper-middle"),
    "left": ("middle-left", "center-left", "centre-left"),
    "center": ("centre", "middle", "middle-center", "center-center"),
    "right": ("middle-right", "center-right", "centre-right"),
    "bottom": ("bottom-center", "bottom-centre", "bottom-middle", "lower-center", "lower-middle"),
    "top-left": ("upper-left",),
    "top-right": ("upper-right",),
    "bottom-left": ("lower-left",),
    "bottom-right": ("lower-right",),
}


def tictactoe_square(action: int) -> int:
    """The reading-order square number (1-9) of PettingZoo tic-tac-toe action ``action`` (0-8)."""
    col, row = divmod(int(action), 3)
    return 3 * row + col + 1


def tictactoe_action(square: int) -> int:
    """The PettingZoo action (0-8) of reading-order square ``square`` (1-9)."""
    row, col = divmod(int(square) - 1, 3)
    return 3 * col + row


def tictactoe_phrases() -> dict[str, int]:
    """Every phrase of the tic-tac-toe grammar (numbers, ``square N``, names, synonyms) -> PettingZoo action."""
    table: dict[str, int] = {}
    for i, name in enumerate(TICTACTOE_SQUARES):
        action = tictactoe_action(i + 1)
        table[str(i + 1)] = action
        table[f"square {i + 1}"] = action
        for p in (name, *_TTT_SYNONYMS.get(name, ())):
            table[p] = action
    return table


_ACTIONS = [tictactoe_action(s) for s in range(1, 10)]  # reading order -> action
_PHRASES = PhraseTable(tictactoe_phrases())


class TicTacToeAdapter(TurnBasedAdapter):
    """Tic-tac-toe with a drawn board; moves are square numbers or names (module docstring)."""

    reads_observation = False
    move_hint = " Reply with a square number, or a name such as top-left or center."
    MARKS = {"player_1": "X", "player_2": "O"}

    def _mark(self, agent: str | None) -> tuple[str, str]:
        mine = self.MARKS.get(agent, "X") if agent is not None else "X"
        return mine, "O" if mine == "X" else "X"

    @staticmethod
    def _grid(cells: Sequence[str]) -> str:
        rows = [" " + " | ".join(cells[3 * r : 3 * r + 3]) for r in range(3)]
        return "\n---+---+---\n".join(rows)

    def _free_squares(self, env: Any, agent: str | None) -> list[int]:
        """The free squares (1-9) if ``agent`` is to move, else ``[]``."""
        if not self.to_move(env, agent):
            return []
        squares = env.unwrapped.board.squares
        return [s for s, a in enumerate(_ACTIONS, 1) if squares[a] == 0]

    def observation_text(self, env: Any, agent: str | None, observation: Any) -> str:
        squares = env.unwrapped.board.squares
        mine, theirs = self._mark(agent)
        symbol = {1: "X", 2: "O"}
        cells = [symbol.get(squares[a], str(s)) for s, a in enumerate(_ACTIONS, 1)]
        return (
            f"You are {agent} and play {mine}; the opponent plays {theirs}. X moves first. "
            "Three in a row, column or diagonal wins.\n"
            f"Board (empty squares show their number):\n{self._grid(cells)}"
        )

    def action_mask(self, env: Any, agent: str | None, observation: Any, info: Mapping[str, Any]) -> np.ndarray:
        """PettingZoo's mask (free squares for the agent to move, none for the other), read from
        the board; none at all once the game is over."""
        mask = np.zeros(9, dtype=np.int8)
        for s in self._free_squares(env, agent):
            mask[_ACTIONS[s - 1]] = 1
        return mask

    def legal_actions(self, env: Any, agent: str | None, observation: Any, info: Mapping[str, Any]) -> list[str]:
        return [str(s) for s in self._free_squares(env, agent)]

    def parse(self, env: Any, agent: str | None, text: str, observation: Any, info: Mapping[str, Any]) -> int:
        free = self._free_squares(env, agent)
        try:
            action = _PHRASES.parse(text, "square")
        except ActionParseError as exc:
            if not free:
                raise
            raise ActionParseError(text, f"{exc.reason}; legal: {[str(s) for s in free]}") from None
        square = tictactoe_square(action)
        if square not in free:
            why = f"square {square} is taken; legal: {[str(s) for s in free]}" if free else "it is not your turn"
            raise ActionParseError(text, why)
        return action

    def fallback(self, env: Any, agent: str | None, observation: Any, info: Mapping[str, Any]) -> int:
        """The first free square in reading order (square 1 if none is free)."""
        free = self._free_squares(env, agent)
        return _ACTIONS[(free[0] if free else 1) - 1]

    def fallback_text(self, env: Any, agent: str | None, action: Any, reason: str) -> str:
        return f"Your last reply was not a legal move ({reason}), so square {tictactoe_square(action)} was played for you."

    def action_text(self, env: Any, agent: str | None, action: Any) -> str:
        """``square N`` (reading order): what the board text calls the cell of ``action``."""
        return f"square {tictactoe_square(action)}"

    def state_text(self, env: Any, observations: Mapping[str, Any]) -> str:
        raw = env.unwrapped
        symbol = {0: ".", 1: "X", 2: "O"}
        cells = [symbol[raw.board.squares[a]] for a in _ACTIONS]
        mover = self.MARKS.get(raw.agent_selection, "?")
        return f"Tic-tac-toe, {mover} ({raw.agent_selection}) to move.\n{self._grid(cells)}"


def make_tictactoe(api: Api = "aec", *, strict: bool = False, render_mode: str | None = None) -> Any:
    """Make language tic-tac-toe (module docstring: agents, grammar, rewards).

    Args:
        api: ``"aec"`` only.
        strict: raise :class:`lang_pz.error.ActionParseError` on unparseable or illegal text
            (otherwise the first legal square is played and ``info["parse_error"]`` is set).
        render_mode: PettingZoo's (``"human"``, ``"rgb_array"`` or None).

    Raises:
        InvalidKwargError: another ``api``, or a non-bool ``strict``.
    """
    from pettingzoo.classic import tictactoe_v3
    from pettingzoo.utils.wrappers import OrderEnforcingWrapper

    from lang_pz.wrappers import LanguageAECWrapper

    check_api("classic/tictactoe", api, ("aec",))
    check_bool("strict", strict)
    # PettingZoo's env() adds TerminateIllegalWrapper and AssertOutOfBoundsWrapper, which re-check
    # every move; the adapter only ever plays legal moves, so they would only cost time.
    env = OrderEnforcingWrapper(tictactoe_v3.raw_env(render_mode=render_mode))
    return LanguageAECWrapper(env, TicTacToeAdapter(), strict=strict)
