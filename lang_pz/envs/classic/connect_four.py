"""Connect four (PettingZoo ``connect_four_v3``) as a language environment: ``classic/connect_four-v0``.

=====================  =====================================================================
Agents                 ``player_0`` (moves first), ``player_1``
API                    AEC
Observation            ``{"text": str}``: the 6x7 board (top row first) with column numbers,
                       your discs ``X`` and the opponent's ``O`` (whoever you are), whose turn
                       it is, then the legal columns
Action                 ``str``: a column number ``1``-``7`` (left to right), e.g. ``4`` or
                       ``column 4``
Reward                 +1 win, -1 loss, 0 draw (PettingZoo's)
Fallback               an unreadable reply or a full column plays the leftmost legal column;
                       the player's next observation says so
=====================  =====================================================================

Parsing: the generic rules of :mod:`lang_pz.text.codec` over the words ``1``-``7``; refusals
name only the columns that are legal now. The text is rendered from the board
(``env.unwrapped.board``: 42 cells, row 0 on top, 0 empty / 1 player_0 / 2 player_1), so
PettingZoo's observation arrays are not built for it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from lang_pz.envs.checks import check_api, check_bool
from lang_pz.envs.classic.turns import TurnBasedAdapter
from lang_pz.error import ActionParseError
from lang_pz.registration import Api
from lang_pz.text import codec

_COLUMNS = [str(c) for c in range(1, 8)]


class ConnectFourAdapter(TurnBasedAdapter):
    """Connect four: the board top row first, your discs X, the opponent's O; moves are columns 1-7."""

    reads_observation = False
    move_hint = " Reply with a column number."

    def __init__(self) -> None:
        super().__init__(action_names=_COLUMNS)

    @staticmethod
    def _grid(board: Any, symbols: Mapping[int, str]) -> str:
        # board: 42 cells, row 0 on top
        lines = [" ".join(_COLUMNS)]
        for r in range(6):
            lines.append(" ".join(symbols[v] for v in board[7 * r : 7 * r + 7]))
        return "\n".join(lines)

    def _free_columns(self, env: Any, agent: str | None) -> list[int]:
        """The columns (0-6) with room if ``agent`` is to move, else ``[]``."""
        if not self.to_move(env, agent):
            return []
        board = env.unwrapped.board
        return [c for c in range(7) if board[c] == 0]

    def observation_text(self, env: Any, agent: str | None, observation: Any) -> str:
        raw = env.unwrapped
        mine = raw.possible_agents.index(agent) + 1
        symbols = {0: ".", mine: "X", 3 - mine: "O"}
        return (
            f"You are {agent}. Your discs are X, the opponent's are O. A disc drops to the lowest "
            "empty row of its column; four in a row (across, up-down or diagonal) wins.\n"
            f"Board (column numbers on top, bottom row last):\n{self._grid(raw.board, symbols)}"
        )

    def action_mask(self, env: Any, agent: str | None, observation: Any, info: Mapping[str, Any]) -> np.ndarray:
        """PettingZoo's mask (columns with room for the agent to move, none for the other), read
        from the board; none at all once the game is over."""
        mask = np.zeros(7, dtype=np.int8)
        mask[self._free_columns(env, agent)] = 1
        return mask

    def legal_actions(self, env: Any, agent: str | None, observation: Any, info: Mapping[str, Any]) -> list[str]:
        return [_COLUMNS[c] for c in self._free_columns(env, agent)]

    def parse(self, env: Any, agent: str | None, text: str, observation: Any, info: Mapping[str, Any]) -> int:
        free = self._free_columns(env, agent)
        if not free:
            # Unparseable text is reported as such; a well-formed column as out of turn.
            codec.parse_action(self.action_space(env, agent), text, names=self.action_names)
            raise ActionParseError(text, "it is not your turn")
        mask = np.zeros(7, dtype=np.int8)
        mask[free] = 1
        return codec.parse_action(self.action_space(env, agent), text, names=self.action_names, mask=mask)

    def fallback(self, env: Any, agent: str | None, observation: Any, info: Mapping[str, Any]) -> int:
        """The leftmost column with room (column 1 if none)."""
        free = self._free_columns(env, agent)
        return free[0] if free else 0

    def fallback_text(self, env: Any, agent: str | None, action: Any, reason: str) -> str:
        return f"Your last reply was not a legal move ({reason}), so column {int(action) + 1} was played for you."

    def action_text(self, env: Any, agent: str | None, action: Any) -> str:
        """``column N`` (1-7, left to right): what the board text calls action ``action`` (0-6)."""
        return f"column {int(action) + 1}"

    def state_text(self, env: Any, observations: Mapping[str, Any]) -> str:
        raw = env.unwrapped
        return (
            f"Connect four, {raw.agent_selection} to move (player_0 = X, player_1 = O).\n"
            f"{self._grid(raw.board, {0: '.', 1: 'X', 2: 'O'})}"
        )


def make_connect_four(api: Api = "aec", *, strict: bool = False, render_mode: str | None = None) -> Any:
    """Make language connect four (module docstring: agents, grammar, rewards).

    Args:
        api: ``"aec"`` only.
        strict: raise :class:`lang_pz.error.ActionParseError` on unparseable or illegal text
            (otherwise the leftmost legal column is played and ``info["parse_error"]`` is set).
        render_mode: PettingZoo's (``"human"``, ``"rgb_array"`` or None).

    Raises:
        InvalidKwargError: another ``api``, or a non-bool ``strict``.
    """
    from pettingzoo.classic import connect_four_v3
    from pettingzoo.utils.wrappers import OrderEnforcingWrapper

    from lang_pz.wrappers import LanguageAECWrapper

    check_api("classic/connect_four", api, ("aec",))
    check_bool("strict", strict)
    # PettingZoo's env() adds TerminateIllegalWrapper and AssertOutOfBoundsWrapper, which re-check
    # every move; the adapter only ever plays legal moves, so they would only cost time.
    env = OrderEnforcingWrapper(connect_four_v3.raw_env(render_mode=render_mode))
    return LanguageAECWrapper(env, ConnectFourAdapter(), strict=strict)
