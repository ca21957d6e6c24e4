"""OpenSpiel games as language environments: ``openspiel/<game>-v0`` ids and ``openspiel/<any game>``.

=====================  =====================================================================
Agents                 ``player_0`` ... ``player_{n-1}`` (OpenSpiel's players 0 ... n-1)
API                    AEC (Shimmy's ``OpenSpielCompatibilityV0``; chance nodes are sampled
                       from the reset seed; simultaneous moves are collected one agent at a time)
Observation            ``{"text": str}``: the game and your seat, a rules note, what OpenSpiel
                       lets you know (:mod:`lang_pz.envs.openspiel.adapter`), the legal moves
Action                 ``str``: one of the legal moves as OpenSpiel words it (``Call``, ``a5a4``)
Reward                 OpenSpiel's (poker: chips won; Hanabi: fireworks points, shared)
Fallback               an unreadable reply plays the first legal move; the next observation says so
=====================  =====================================================================

Registered ids (small configurations, so an episode is short): ``openspiel/hanabi-v0``
(cooperative, 2 players, 2 colours x 3 ranks), ``openspiel/kuhn_poker-v0``,
``openspiel/leduc_poker-v0``, ``openspiel/goofspiel-v0`` (simultaneous bids) and
``openspiel/breakthrough-v0`` (a board game). Any other game of ``pyspiel.registered_names()``:
``lang_pz.make("openspiel/<game>", **params)`` (or ``"openspiel/<game>-v0"``) with the game's own
parameters. A registered name without its version (``"openspiel/hanabi"``) is the registered id
(``openspiel/hanabi-v0``), as ``gymnasium.make`` and ``pettingzoo.make`` resolve ids; OpenSpiel's
own configuration of such a game: ``make_openspiel(game="hanabi", **params)``.
"""

from __future__ import annotations

import difflib
from typing import Any

from lang_pz.envs.checks import check_api, check_bool, check_int
from lang_pz.envs.openspiel.adapter import OpenSpielAdapter
from lang_pz.error import InvalidKwargError, UnknownEnvironmentError
from lang_pz.registration import Api

#: Rules and legends for the games whose strings are terse, by OpenSpiel short name.
NOTES: dict[str, str] = {
    "kuhn_poker": (
        "Rules: three cards, 0 = Jack, 1 = Queen, 2 = King; each player antes 1 chip and gets one "
        "card. What you know is your card, then the moves so far (p = pass, b = bet). Pass after "
        "a bet folds; otherwise the higher card wins the pot."
    ),
    "leduc_poker": (
        "Rules: six cards, 0 and 1 = Jack, 2 and 3 = Queen, 4 and 5 = King. Private is your card, "
        "Public the shared card of round 2; a pair with it wins, else the higher card. Round1 / "
        "Round2 list the moves so far (0 = fold, 1 = call, 2 = raise); Pot and Money are chips."
    ),
    "goofspiel": (
        "Rules: each round a point card is shown (the current point card); both players "
        "bid one card of their hand at once; the higher bid wins the points, a tie wins nothing. "
        "Win sequence: who won each round (-3 = nobody). Most points wins."
    ),
    "hanabi": (
        "Rules (cooperative): build each colour's firework from rank 1 up. You cannot see your own cards "
        "(XX) but see your partner's. Each card line is 'card || what you were told | what it may "
        "still be'. Reveal spends an info token; a wrong play costs a life token. Cur player marks "
        "whose hand is listed first (yours)."
    ),
    "breakthrough": (
        "Rules: b = player_0's pieces (moving down the board), w = player_1's (moving up). A piece "
        "steps one square forward or diagonally forward, captures diagonally only. A move is "
        "from-square then to-square, e.g. a5a4. Reach the far row, or capture every enemy "
        "piece, to win."
    ),
}


def _load(game: str, params: dict[str, Any]) -> None:
    """Check that OpenSpiel has ``game`` and accepts ``params`` (loading it once).

    Raises:
        UnknownEnvironmentError: no such game (close names suggested).
        InvalidKwargError: a parameter the game refuses (OpenSpiel's reason and the game's parameters).
    """
    import pyspiel

    names = pyspiel.registered_names()
    if game not in names:
        close = difflib.get_close_matches(game, names, n=3, cutoff=0.6)
        hint = f" Did you mean {' or '.join(repr(f'openspiel/{c}') for c in close)}?" if close else ""
        raise UnknownEnvironmentError(
            f"no environment 'openspiel/{game}': OpenSpiel has no game {game!r}.{hint} "
            f"pyspiel.registered_names() lists its {len(names)} games; `lang-pz envs` lists lang_pz's configurations"
        )
    try:
        pyspiel.load_game(game, params)
    except pyspiel.SpielError as exc:
        defaults = pyspiel.load_game(game).get_parameters()
        raise InvalidKwargError(
            f"OpenSpiel game {game!r} refused parameters {params}: {exc}; its parameters and defaults: {defaults}"
        ) from None


def _import_shimmy_quietly() -> None:
    """Import shimmy's OpenSpiel bridge without the old Gym's banner.

    ``import shimmy`` imports its Gym bridges, hence ``gym``, which prints "Gym has been
    unmaintained since 2022 ..." to stderr for every user of ``openspiel/*`` (lang_pz uses only
    Gymnasium and never Gym). The banner comes from ``gym_notices``: its table is emptied for
    the time of this import only and then restored (not a global filter): a program that imports
    ``gym`` itself first still gets the banner, and nothing else printed meanwhile is hidden.
    """
    try:
        import gym_notices.notices as gym_notices
    except ImportError:  # no gym_notices: no banner
        gym_notices = None
    table = getattr(gym_notices, "notices", None)
    if isinstance(table, dict):
        gym_notices.notices = {}
    try:
        import shimmy.openspiel_compatibility  # noqa: F401
    finally:
        if isinstance(table, dict):
            gym_notices.notices = table


def _shimmy_env(game: str, params: dict[str, Any]) -> Any:
    """Shimmy's ``OpenSpielCompatibilityV0`` of ``game``, with its move count fixed.

    Shimmy 2.0.1 counts chance outcomes (deals, draws) as moves against OpenSpiel's
    ``max_game_length()``, which counts player moves only, and truncates the game when the sum
    passes it: Kuhn poker was truncated right after its first move, Leduc and Hanabi before
    their end. Here chance outcomes are sampled as Shimmy does (from the reset seed) but not
    counted, and a game that has ended is terminated, not also truncated. Shimmy also added
    the last move's rewards again to the remaining agents at each agent's final (dead) step, so
    their returns were off (Kuhn poker's loser lost twice the pot); here a dead step adds nothing.
    """
    _import_shimmy_quietly()
    from shimmy.openspiel_compatibility import OpenSpielCompatibilityV0  # imported: no banner now

    class _Compatibility(OpenSpielCompatibilityV0):
        def _execute_chance_node(self) -> None:
            while self.game_state.is_chance_node():
                outcomes, probs = zip(*self.game_state.chance_outcomes())
                self.game_state.apply_action(int(self.np_random.choice(outcomes, p=probs)))

        def _update_termination_truncation(self) -> None:
            super()._update_termination_truncation()
            if self.game_state.is_terminal():
                self.truncations = dict.fromkeys(self.agents, False)

        def step(self, action: Any) -> None:
            agent = self.agent_selection
            if self.terminations.get(agent, False) or self.truncations.get(agent, False):
                # Shimmy would add the last move's rewards to the others again on every dead step.
                self._cumulative_rewards[agent] = 0.0
                self._end_routine()
                self.rewards = dict.fromkeys(self.agents, 0.0)
                self._choose_next_agent()
                return
            super().step(action)

    # game_name + config, not a loaded game: Shimmy reloads the game on every reset from these
    # (a loaded game's parameters would be lost).
    return _Compatibility(game_name=game, config=dict(params))


def make_openspiel(api: Api = "aec", *, game: str, strict: bool = False, **params: Any) -> Any:
    """Make any OpenSpiel game a language environment (module docstring).

    Args:
        api: ``"aec"`` only.
        game: an OpenSpiel short name from ``pyspiel.registered_names()``, e.g. ``"liars_dice"``.
        strict: raise :class:`lang_pz.error.ActionParseError` on unreadable or illegal text.
        **params: the game's own parameters (``pyspiel.load_game(game, params)``), e.g. ``players=3``.

    Raises:
        UnknownEnvironmentError: OpenSpiel has no game ``game``.
        InvalidKwargError: another ``api``, a non-bool ``strict``, or parameters the game refuses.
    """
    check_api(f"openspiel/{game}", api, ("aec",))
    check_bool("strict", strict)
    _load(game, params)
    from pettingzoo.utils.wrappers import OrderEnforcingWrapper

    from lang_pz.wrappers import LanguageAECWrapper

    env = _shimmy_env(game, params)
    return LanguageAECWrapper(OrderEnforcingWrapper(env), OpenSpielAdapter(NOTES.get(game, "")), strict=strict)


def make_hanabi(
    api: Api = "aec",
    *,
    players: int = 2,
    colors: int = 2,
    ranks: int = 3,
    hand_size: int = 3,
    max_information_tokens: int = 3,
    max_life_tokens: int = 1,
    strict: bool = False,
) -> Any:
    """Hanabi, cooperative (a small configuration by default; full Hanabi is colors=5, ranks=5,
    hand_size=5, max_information_tokens=8, max_life_tokens=3).

    Raises:
        InvalidKwargError: a value out of OpenSpiel's range (players 2-5, colors and ranks 1-5).
    """
    check_int("players", players, 2, 5)
    check_int("colors", colors, 1, 5)
    check_int("ranks", ranks, 1, 5)
    check_int("hand_size", hand_size, 1, 5)
    check_int("max_information_tokens", max_information_tokens, 1)
    check_int("max_life_tokens", max_life_tokens, 1)
    return make_openspiel(
        api,
        game="hanabi",
        strict=strict,
        players=players,
        colors=colors,
        ranks=ranks,
        hand_size=hand_size,
        max_information_tokens=max_information_tokens,
        max_life_tokens=max_life_tokens,
    )


def make_kuhn_poker(api: Api = "aec", *, players: int = 2, strict: bool = False) -> Any:
    """Kuhn poker (Kuhn 1950): one card each from J, Q, K; pass or bet.

    Raises:
        InvalidKwargError: ``players`` outside 2-10.
    """
    check_int("players", players, 2, 10)
    return make_openspiel(api, game="kuhn_poker", strict=strict, players=players)


def make_leduc_poker(api: Api = "aec", *, players: int = 2, strict: bool = False) -> Any:
    """Leduc poker (Southey et al. 2005, "Bayes' Bluff"): two rounds, a public card in the second.

    Raises:
        InvalidKwargError: ``players`` outside 2-10.
    """
    check_int("players", players, 2, 10)
    return make_openspiel(api, game="leduc_poker", strict=strict, players=players)


def make_goofspiel(api: Api = "aec", *, num_cards: int = 5, points_order: str = "random", strict: bool = False) -> Any:
    """Goofspiel: simultaneous bids for point cards (``num_cards`` rounds).

    Raises:
        InvalidKwargError: ``num_cards`` outside 1-13 or an unknown ``points_order``.
    """
    check_int("num_cards", num_cards, 1, 13)
    if points_order not in ("random", "descending", "ascending"):
        raise InvalidKwargError(f"points_order must be 'random', 'descending' or 'ascending', got {points_order!r}")
    return make_openspiel(api, game="goofspiel", strict=strict, num_cards=num_cards, points_order=points_order)


def make_breakthrough(api: Api = "aec", *, rows: int = 6, columns: int = 6, strict: bool = False) -> Any:
    """Breakthrough on a ``rows`` x ``columns`` board (default 6x6; the classic game is 8x8).

    Raises:
        InvalidKwargError: a side outside 4-26.
    """
    check_int("rows", rows, 4, 26)
    check_int("columns", columns, 4, 26)
    return make_openspiel(api, game="breakthrough", strict=strict, rows=rows, columns=columns)
