"""PettingZoo classic games as language environments, one module each (as ``pettingzoo.classic``).

* ``classic/tictactoe-v0``: :mod:`lang_pz.envs.classic.tictactoe`, from ``tictactoe_v3`` (AEC);
* ``classic/connect_four-v0``: :mod:`lang_pz.envs.classic.connect_four`, from ``connect_four_v3`` (AEC);
* ``classic/rps-v0``: :mod:`lang_pz.envs.classic.rps`, from ``rps_v2`` (parallel and AEC).

:mod:`lang_pz.envs.classic.turns` holds what the turn-based games share (the move grammar,
the turn line). Each module's docstring is the table of its agents, spaces and rewards.
"""

from lang_pz.envs.classic.connect_four import ConnectFourAdapter, make_connect_four
from lang_pz.envs.classic.rps import RPSAdapter, make_rps, rps_moves, rps_outcome
from lang_pz.envs.classic.tictactoe import (
    TICTACTOE_SQUARES,
    TicTacToeAdapter,
    make_tictactoe,
    tictactoe_action,
    tictactoe_phrases,
    tictactoe_square,
)
from lang_pz.envs.classic.turns import PhraseTable, TurnBasedAdapter, parse_phrases

__all__ = [
    "TICTACTOE_SQUARES",
    "ConnectFourAdapter",
    "PhraseTable",
    "RPSAdapter",
    "TicTacToeAdapter",
    "TurnBasedAdapter",
    "make_connect_four",
    "make_rps",
    "make_tictactoe",
    "parse_phrases",
    "rps_moves",
    "rps_outcome",
    "tictactoe_action",
    "tictactoe_phrases",
    "tictactoe_square",
]
