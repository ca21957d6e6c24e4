"""Make a TextArena game a language env: ``textarena/<game>-v0`` ids and ``textarena/<TextArena id>``.

=====================  =====================================================================
Agents                 ``player_0`` ... ``player_{n-1}`` (the game's Player 0 ... n-1)
API                    AEC (:class:`lang_pz.envs.textarena.bridge.TextArenaAEC`)
Observation            ``{"text": str}``: the game's own messages to the agent, then the
                       listed moves or the game's move format
Action                 ``str``: a listed move (``[4]``, ``4``), or an action in square brackets
Reward                 the game's, at its end (win 1, loss -1, draw 0 in two-player games)
=====================  =====================================================================

TextArena 0.7.4 (Guertler et al., "TextArena", 2025): 96 games (712 ids with variants);
``benchmarks/textarena_games.py`` lists which pass lang_pz's compliance test and why others do not.
"""

from __future__ import annotations

import difflib
from typing import Any

from lang_pz.envs.checks import check_api, check_bool, check_int
from lang_pz.envs.textarena.adapter import TextArenaAdapter
from lang_pz.error import UnknownEnvironmentError
from lang_pz.registration import Api


def make_textarena(api: Api = "aec", *, game: str, num_players: int = 2, max_turns: int = 200, strict: bool = False) -> Any:
    """Make TextArena game ``game`` (module docstring).

    Args:
        api: ``"aec"`` only.
        game: a TextArena id, e.g. ``"TicTacToe-v0"`` (``textarena.envs.registration.ENV_REGISTRY``).
        num_players: players (the game's range applies: TextArena raises for others).
        max_turns: moves before the episode is truncated.
        strict: raise :class:`lang_pz.error.ActionParseError` on unreadable text.

    Raises:
        UnknownEnvironmentError: TextArena has no game ``game`` (close ids suggested).
        InvalidKwargError: another ``api`` or a bad value.
    """
    check_api(f"textarena/{game}", api, ("aec",))
    check_int("num_players", num_players, 1, 20)
    check_int("max_turns", max_turns, 1)
    check_bool("strict", strict)
    from textarena.envs.registration import ENV_REGISTRY

    if game not in ENV_REGISTRY:
        close = difflib.get_close_matches(game, list(ENV_REGISTRY), n=3, cutoff=0.6)
        hint = f" Did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
        raise UnknownEnvironmentError(f"TextArena has no game {game!r}.{hint}")
    from lang_pz.envs.textarena.bridge import TextArenaAEC
    from lang_pz.wrappers import LanguageAECWrapper

    return LanguageAECWrapper(TextArenaAEC(game, num_players, max_turns), TextArenaAdapter(), strict=strict)
