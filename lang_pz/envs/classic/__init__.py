"""PettingZoo classic games as language environments, one module each (as ``pettingzoo.classic``).

* ``classic/tictactoe-v0``: :mod:`lang_pz.envs.classic.tictactoe`, from ``tictactoe_v3`` (AEC);
* ``classic/connect_four-v0``: :mod:`lang_pz.envs.classic.connect_four`, from ``connect_four_v3`` (AEC);
* ``classic/rps-v0``: :mod:`lang_pz.envs.classic.rps`, from ``rps_v2`` (parallel and AEC).

:mod:`lang_pz.envs.classic.turns` holds what the turn-based games share (the move grammar,
the turn line). Each module's docstring is the table of its agents, spaces and rewards.
"""

from typing import TYPE_CHECKING

from lang_pz._moved import moved_getattr
from lang_pz.envs.classic.connect_four import ConnectFourAdapter, make_connect_four
from lang_pz.envs.classic.rps import RPSAdapter, make_rps
from lang_pz.envs.classic.tictactoe import TicTacToeAdapter, make_tictactoe

__all__ = ["ConnectFourAdapter", "RPSAdapter", "TicTacToeAdapter", "make_connect_four", "make_rps", "make_tictactoe"]


#: Names this package no longer exports -> where to import them from (a DeprecationWarning
#: until the next release: :mod:`lang_pz._moved`).
_MOVED = {
    "PhraseTable": "lang_pz.envs.classic.turns.PhraseTable",
    "TICTACTOE_SQUARES": "lang_pz.envs.classic.tictactoe.TICTACTOE_SQUARES",
    "TurnBasedAdapter": "lang_pz.envs.classic.turns.TurnBasedAdapter",
    "parse_phrases": "lang_pz.envs.classic.turns.parse_phrases",
    "rps_moves": "lang_pz.envs.classic.rps.rps_moves",
    "rps_outcome": "lang_pz.envs.classic.rps.rps_outcome",
    "tictactoe_action": "lang_pz.envs.classic.tictactoe.tictactoe_action",
    "tictactoe_phrases": "lang_pz.envs.classic.tictactoe.tictactoe_phrases",
    "tictactoe_square": "lang_pz.envs.classic.tictactoe.tictactoe_square",
}
if not TYPE_CHECKING:
    __getattr__ = moved_getattr(__name__, _MOVED)
