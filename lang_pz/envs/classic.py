"""PettingZoo classic games as language environments: tic-tac-toe, connect four, rock-paper-scissors.

Tic-tac-toe (``classic/tictactoe-v0``, from ``tictactoe_v3``)

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
=====================  =====================================================================

Connect four (``classic/connect_four-v0``, from ``connect_four_v3``)

=====================  =====================================================================
Agents                 ``player_0`` (moves first), ``player_1``
API                    AEC
Observation            ``{"text": str}``: the 6x7 board (top row first) with column numbers,
                       your discs ``X`` and the opponent's ``O`` (whoever you are), whose turn
                       it is, then the legal columns
Action                 ``str``: a column number ``1``-``7`` (left to right), e.g. ``4`` or
                       ``column 4``
Reward                 +1 win, -1 loss, 0 draw (PettingZoo's)
=====================  =====================================================================

Rock-paper-scissors (``classic/rps-v0``, from ``rps_v2``)

=====================  =====================================================================
Agents                 ``player_0``, ``player_1``
API                    parallel (default, simultaneous moves) and AEC
Observation            ``{"text": str}``: the round number, the opponent's last move (the
                       PettingZoo observation) and your own last move with its outcome
Action                 ``str``: ``rock`` / ``paper`` / ``scissors`` (``num_actions=5`` adds
                       ``spock`` / ``lizard``; 7+ add ``action_6`` ...)
Reward                 +1 win, -1 loss, 0 tie, each round; ``max_cycles`` rounds
=====================  =====================================================================

Parsing: connect four (words ``1``-``7``) and rock-paper-scissors use the generic rules of
:mod:`lang_pz.text.codec`; tic-tac-toe uses the same rules over its square numbers and names
(:func:`parse_phrases`, which also accepts ``move: MOVE`` and treats synonyms of one square as
one mention). In short: a JSON ``{"action": ...}`` is unwrapped; a reply that is exactly a move
is that move; else the last ``action: MOVE``; else the single move mentioned as a whole word
anywhere. Mentioning two different moves is ambiguous and fails; a move that is not legal now
(an occupied square, a full column, or any move when it is not your turn) fails with the legal
moves in the reason.

Observation layouts, read from the PettingZoo 1.27 source: tic-tac-toe's ``(3, 3, 2)`` array
is indexed ``[column, row, plane]`` (action ``a`` is column ``a // 3``, row ``a % 3``) and
connect four's ``(6, 7, 2)`` is ``[row (0 = top), column, plane]``; in both, plane 0 holds the
observing agent's own marks and plane 1 the opponent's. In rock-paper-scissors the code orders
the extra moves ``spock`` (3) before ``lizard`` (4), unlike PettingZoo's docstring table.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from lang_pz.envs.checks import check_api, check_bool
from lang_pz.error import ActionParseError, InvalidKwargError
from lang_pz.registration import Api
from lang_pz.text import codec
from lang_pz.text.adapter import LanguageAdapter

_STRIP = codec.STRIP_CHARS
_unwrap_json = codec.unwrap_json


def _normalise(text: str) -> str:
    # "top-left", "top_left" and "top  left" alike; "-1" stays a negative number.
    return re.sub(r"\s+", " ", re.sub(r"(?<=[a-z])[-_]+(?=[a-z])", " ", text.lower()))


def parse_phrases(text: Any, phrases: Mapping[str, int], what: str = "move") -> int:
    """Parse ``text`` into the value of one of ``phrases`` (several phrases may share a value).

    Phrases are matched case-insensitively as whole words, treating ``-``, ``_`` and runs of
    white space alike. Rules as in the module docstring; two *different* values mentioned
    are ambiguous (synonyms of one value are not).

    Raises:
        ActionParseError: no phrase, or phrases of different values.
    """
    if not isinstance(text, str):
        raise ActionParseError(text, f"expected a str action, got {type(text).__name__}")
    raw = text
    text = _normalise(_unwrap_json(text))
    table = {_normalise(p): v for p, v in phrases.items()}
    s = text.strip(_STRIP)
    if s in table:
        return table[s]
    alternation = "|".join(re.escape(p) for p in sorted(table, key=len, reverse=True))
    word = rf"(?<![\w-])(?<!\d\.)({alternation})(?![\w-])(?!\.\d)"
    marked = re.findall(rf"(?:action|move)\s*[:=]\s*[\"'`*]*{word}", text)
    if marked:
        return table[marked[-1]]
    found = {table[m] for m in re.findall(word, text)}
    if len(found) == 1:
        return found.pop()
    if not found:
        raise ActionParseError(raw, f"no {what} found")
    raise ActionParseError(raw, f"ambiguous: mentions {len(found)} different {what}s; reply with exactly one")


class _TurnBasedAdapter(LanguageAdapter):
    """Shared action line of the turn-based board games: legal moves, or why there are none."""

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


# -- tic-tac-toe --------------------------------------------------------------------------

#: Square names in reading order (square 1 is top-left, 9 bottom-right).
TICTACTOE_SQUARES = (
    "top-left", "top", "top-right", "left", "center", "right", "bottom-left", "bottom", "bottom-right",
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


class TicTacToeAdapter(_TurnBasedAdapter):
    """Tic-tac-toe with a drawn board; moves are square numbers or names (module docstring)."""

    move_hint = " Reply with a square number, or a name such as top-left or center."
    MARKS = {"player_1": "X", "player_2": "O"}

    def __init__(self) -> None:
        super().__init__()
        self._phrases = tictactoe_phrases()

    def _mark(self, agent: str) -> tuple[str, str]:
        mine = self.MARKS.get(agent, "X")
        return mine, "O" if mine == "X" else "X"

    @staticmethod
    def _grid(cells: Sequence[str]) -> str:
        rows = [" " + " | ".join(cells[3 * r:3 * r + 3]) for r in range(3)]
        return "\n---+---+---\n".join(rows)

    def observation_text(self, env: Any, agent: str | None, observation: Any) -> str:
        planes = np.asarray(observation["observation"])
        mine, theirs = self._mark(agent)
        cells = []
        for square in range(1, 10):
            col, row = divmod(tictactoe_action(square), 3)
            cells.append(mine if planes[col, row, 0] else theirs if planes[col, row, 1] else str(square))
        return (
            f"You are {agent} and play {mine}; the opponent plays {theirs}. X moves first. "
            "Three in a row, column or diagonal wins.\n"
            f"Board (empty squares show their number):\n{self._grid(cells)}"
        )

    def legal_actions(self, env: Any, agent: str | None, observation: Any, info: Mapping[str, Any]) -> list[str]:
        mask = self.action_mask(env, agent, observation, info)
        if mask is None:
            return []
        return [str(s) for s in range(1, 10) if mask[tictactoe_action(s)]]

    def parse(self, env: Any, agent: str | None, text: str, observation: Any, info: Mapping[str, Any]) -> int:
        action = parse_phrases(text, self._phrases, "square")
        mask = self.action_mask(env, agent, observation, info)
        if mask is not None and not mask[action]:
            legal = self.legal_actions(env, agent, observation, info)
            square = tictactoe_square(action)
            why = "it is not your turn" if not legal else f"square {square} is taken; legal: {legal}"
            raise ActionParseError(text, why)
        return action

    def fallback(self, env: Any, agent: str | None, observation: Any, info: Mapping[str, Any]) -> int:
        """The first legal square in reading order (square 1 if none is legal)."""
        legal = self.legal_actions(env, agent, observation, info)
        return tictactoe_action(int(legal[0]) if legal else 1)

    def action_text(self, env: Any, agent: str | None, action: Any) -> str:
        return str(tictactoe_square(action))

    def state_text(self, env: Any, observations: Mapping[str, Any]) -> str:
        raw = env.unwrapped
        symbol = {0: ".", 1: "X", 2: "O"}
        cells = [symbol[raw.board.squares[tictactoe_action(s)]] for s in range(1, 10)]
        mover = self.MARKS.get(raw.agent_selection, "?")
        return f"Tic-tac-toe, {mover} ({raw.agent_selection}) to move.\n{self._grid(cells)}"


# -- connect four -------------------------------------------------------------------------


class ConnectFourAdapter(_TurnBasedAdapter):
    """Connect four: the board top row first, your discs X, the opponent's O; moves are columns 1-7."""

    move_hint = " Reply with a column number."

    def __init__(self) -> None:
        super().__init__(action_names=[str(c) for c in range(1, 8)])

    @staticmethod
    def _grid(board: np.ndarray, mine: str = "X", theirs: str = "O") -> str:
        # board: (6, 7) of 0 empty / 1 mine / 2 theirs, row 0 on top
        symbol = {0: ".", 1: mine, 2: theirs}
        lines = [" ".join(str(c) for c in range(1, 8))]
        lines += [" ".join(symbol[int(v)] for v in row) for row in board]
        return "\n".join(lines)

    def observation_text(self, env: Any, agent: str | None, observation: Any) -> str:
        planes = np.asarray(observation["observation"])
        board = planes[:, :, 0].astype(int) + 2 * planes[:, :, 1].astype(int)
        return (
            f"You are {agent}. Your discs are X, the opponent's are O. A disc drops to the lowest "
            "empty row of its column; four in a row (across, up-down or diagonal) wins.\n"
            f"Board (column numbers on top, bottom row last):\n{self._grid(board)}"
        )

    def parse(self, env: Any, agent: str | None, text: str, observation: Any, info: Mapping[str, Any]) -> int:
        mask = self.action_mask(env, agent, observation, info)
        if mask is not None and not np.any(mask):
            # Unparseable text is reported as such; a well-formed column as out of turn.
            codec.parse_action(self.action_space(env, agent), text, names=self.action_names)
            raise ActionParseError(text, "it is not your turn")
        return super().parse(env, agent, text, observation, info)

    def state_text(self, env: Any, observations: Mapping[str, Any]) -> str:
        raw = env.unwrapped
        board = np.asarray(raw.board).reshape(6, 7)
        return (
            f"Connect four, {raw.agent_selection} to move (player_0 = X, player_1 = O).\n"
            f"{self._grid(board)}"
        )


# -- rock-paper-scissors ------------------------------------------------------------------


def rps_moves(num_actions: int = 3) -> list[str]:
    """Move words of ``rps_v2`` with ``num_actions`` actions, in action order (as its code orders them)."""
    moves = ["rock", "paper", "scissors"]
    if num_actions > 3:
        moves += ["spock", "lizard"]
        moves += [f"action_{i + 6}" for i in range(num_actions - 5)]
    return moves


def rps_outcome(mine: int, theirs: int) -> int:
    """+1 if move ``mine`` beats ``theirs``, -1 if it loses, 0 on a tie (``rps_v2``'s rule)."""
    if mine == theirs:
        return 0
    if (mine + theirs) % 2 == 0:  # same parity: the lower move wins
        return 1 if mine < theirs else -1
    return 1 if mine > theirs else -1  # different parity: the higher move wins


class RPSAdapter(LanguageAdapter):
    """Rock-paper-scissors: the round, the opponent's last move (the observation) and your own."""

    def __init__(self, num_actions: int = 3) -> None:
        super().__init__(action_names=rps_moves(num_actions))

    def observation_text(self, env: Any, agent: str | None, observation: Any) -> str:
        raw = env.unwrapped
        names = self.action_names
        assert names is not None
        me = raw.agent_name_mapping[agent]
        opp_last = int(np.asarray(observation))
        head = f"You are {agent}, playing {' / '.join(names)} against one opponent."
        if raw.num_moves >= raw.max_cycles:
            now = "The game is over."
        else:
            now = f"Round {raw.num_moves + 1} of {raw.max_cycles}."
        if opp_last >= len(names):
            last = "No round played yet."
        else:
            my_last = raw.history[me]
            outcome = ""
            if 0 <= my_last < len(names):
                result = {1: "you won", -1: "you lost", 0: "a tie"}[rps_outcome(my_last, opp_last)]
                outcome = f" You played {names[my_last]}: {result}."
            last = f"Last round the opponent played {names[opp_last]}.{outcome}"
        return f"{head}\n{now} {last}"

    def state_text(self, env: Any, observations: Mapping[str, Any]) -> str:
        raw = env.unwrapped
        names = self.action_names or []
        past = []
        for r in range(len(raw.history) // 2):
            a, b = raw.history[2 * r], raw.history[2 * r + 1]
            if a < 0:
                break
            past.append(f"{names[a]} vs {names[b]}")
        return (
            f"Rock-paper-scissors, {raw.num_moves} of {raw.max_cycles} rounds played. "
            f"Latest rounds first, at most 5 (player_0 vs player_1): {'; '.join(past) or 'none'}."
        )


# -- entry points -------------------------------------------------------------------------


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

    from lang_pz.wrappers import LanguageAECWrapper

    check_api("classic/tictactoe", api, ("aec",))
    check_bool("strict", strict)
    return LanguageAECWrapper(tictactoe_v3.env(render_mode=render_mode), TicTacToeAdapter(), strict=strict)


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

    from lang_pz.wrappers import LanguageAECWrapper

    check_api("classic/connect_four", api, ("aec",))
    check_bool("strict", strict)
    return LanguageAECWrapper(connect_four_v3.env(render_mode=render_mode), ConnectFourAdapter(), strict=strict)


def make_rps(
    api: Api = "parallel",
    *,
    num_actions: int = 3,
    max_cycles: int = 15,
    strict: bool = False,
    render_mode: str | None = None,
) -> Any:
    """Make language rock-paper-scissors (module docstring: agents, grammar, rewards).

    Args:
        api: ``"parallel"`` (simultaneous moves) or ``"aec"`` (player_0 then player_1; a
            round's outcome is revealed after both moved).
        num_actions: 3 (rock, paper, scissors), 5 (+ spock, lizard) or any larger odd number.
        max_cycles: number of rounds (>= 1).
        strict: raise :class:`lang_pz.error.ActionParseError` on unparseable text
            (otherwise ``rock`` is played and ``info["parse_error"]`` is set).
        render_mode: PettingZoo's (``"human"``, ``"rgb_array"`` or None).

    Raises:
        InvalidKwargError: another ``api``; ``num_actions`` not an odd integer >= 3;
            ``max_cycles`` < 1; a non-bool ``strict``.
    """
    from pettingzoo.classic import rps_v2

    from lang_pz.wrappers import LanguageAECWrapper, LanguageParallelWrapper

    check_api("classic/rps", api, ("parallel", "aec"))
    if not isinstance(num_actions, int) or isinstance(num_actions, bool) or num_actions < 3 or num_actions % 2 == 0:
        raise InvalidKwargError(f"num_actions must be an odd integer >= 3, got {num_actions!r}")
    if not isinstance(max_cycles, int) or isinstance(max_cycles, bool) or max_cycles < 1:
        raise InvalidKwargError(f"max_cycles must be an integer >= 1, got {max_cycles!r}")
    check_bool("strict", strict)
    adapter = RPSAdapter(num_actions)
    if api == "aec":
        env = rps_v2.env(num_actions=num_actions, max_cycles=max_cycles, render_mode=render_mode)
        return LanguageAECWrapper(env, adapter, strict=strict)
    env = rps_v2.parallel_env(num_actions=num_actions, max_cycles=max_cycles, render_mode=render_mode)
    return LanguageParallelWrapper(env, adapter, strict=strict)
