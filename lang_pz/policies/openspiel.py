"""OpenSpiel's classical players in a seat of an ``openspiel/*`` language env.

:class:`OpenSpielPlayer` plays one seat with one of OpenSpiel's own algorithms and answers with
the move word the seat's text offers (so it goes through the same parser as an LLM's reply):

=========  ============================================================================  ================
kind       player                                                                        reads
=========  ============================================================================  ================
random     uniform over the legal moves (OpenSpiel's ``UniformRandomPolicy``)            legal moves
cfr        the average strategy of CFR+ (Tammelin 2014, "Solving Large Imperfect        its information
           Information Games Using CFR+"; CFR: Zinkevich et al., NeurIPS 2007), solved    state string
           by OpenSpiel's C++ ``CFRPlusSolver`` for ``iterations`` iterations; each
           move sampled from the strategy at the seat's information state
mcts       OpenSpiel's ``MCTSBot`` (UCT, Kocsis & Szepesvari 2006) with random           the full state
           rollouts; perfect-information games only, where the state is public
=========  ============================================================================  ================

CFR touches every history of the game once per iteration: small games only (Kuhn poker: 300
iterations in about 0.2 s; Leduc poker: about 28 s on a busy 2-core machine). The strategy is
solved once per game, parameters and iterations, then kept in memory and on disk as JSON in a
private cache folder (``$LANG_PZ_CACHE_DIR/cfr`` or the user cache dir; see
:mod:`lang_pz.cachedir`), so a bench pays for it once.
"""

from __future__ import annotations

import difflib
import functools
import json
import time
from collections.abc import Mapping
from typing import Any

import numpy as np

from lang_pz.cachedir import cache_root, private_folder, write_private_text
from lang_pz.error import InvalidKwargError, LangPZError
from lang_pz.policies.base import Decision, Policy, mixed_rng

#: The players :class:`OpenSpielPlayer` knows.
KINDS: tuple[str, ...] = ("random", "cfr", "mcts")


def _info_states(game: Any) -> list[tuple[str, list[int]]]:
    """Every (information state string, legal actions) of the players' decision nodes."""
    seen: dict[str, list[int]] = {}
    stack = [game.new_initial_state()]
    while stack:
        state = stack.pop()
        if state.is_terminal():
            continue
        if not state.is_chance_node():
            seen.setdefault(state.information_state_string(), list(state.legal_actions()))
        stack.extend(state.child(a) for a in state.legal_actions())
    return list(seen.items())


@functools.lru_cache(maxsize=8)
def cfr_strategy(game_string: str, iterations: int) -> dict[str, dict[int, float]]:
    """The CFR+ average strategy of the game ``pyspiel.load_game(game_string)`` after ``iterations``
    iterations: information state string -> {action: probability}. Solved once, then read from
    memory or the disk cache (module docstring).

    Raises:
        LangPZError: the game is not sequential with information states (CFR needs both), or
            the cache folder is not private (:func:`lang_pz.cachedir.private_folder`).
    """
    import pyspiel

    path = (
        private_folder(cache_root() / "cfr", "CFR strategy cache")
        / f"{''.join(c if c.isalnum() else '_' for c in game_string)}-cfrplus-{iterations}.json"
    )
    if path.is_file():
        raw = json.loads(path.read_text(encoding="utf-8"))
        return {k: {int(a): p for a, p in v.items()} for k, v in raw.items()}
    game = pyspiel.load_game(game_string)
    kind = game.get_type()
    if kind.dynamics != pyspiel.GameType.Dynamics.SEQUENTIAL or not kind.provides_information_state_string:
        raise LangPZError(
            f"CFR needs a sequential game with information states; {game_string} is not one: "
            "use the 'random' or 'mcts' player"
        )
    solver = pyspiel.CFRPlusSolver(game)
    for _ in range(iterations):
        solver.evaluate_and_update_policy()
    average = solver.average_policy()
    table = {info: dict(average.get_state_policy(info)) for info, _ in _info_states(game)}
    write_private_text(path, json.dumps({k: {str(a): p for a, p in v.items()} for k, v in table.items()}))
    return table


class OpenSpielPlayer(Policy):
    """One of OpenSpiel's classical players in ``agent``'s seat (module docstring).

    A *scripted seat* like :class:`lang_pz.policies.OvercookedGreedyPolicy`: built with the
    language env, it reads the OpenSpiel state (``env.unwrapped.game_state``) instead of the
    text; ``cfr`` and ``random`` use only what the seat may know, ``mcts`` the whole state
    (refused in imperfect-information games for that reason).

    Args:
        env: an ``openspiel/*`` language env (:func:`lang_pz.envs.openspiel.games.make_openspiel`).
        agent: the seat, e.g. ``"player_1"``.
        kind: ``"random"``, ``"cfr"`` or ``"mcts"``.
        iterations: CFR+ iterations (``cfr``).
        simulations: MCTS simulations per move (``mcts``).
        seed: construction seed, mixed with every episode's seed (:meth:`reset`).

    Raises:
        InvalidKwargError: an unknown ``kind``, a non-OpenSpiel env, or ``mcts`` in an
            imperfect-information game.
    """

    def __init__(
        self,
        env: Any,
        agent: str,
        kind: str = "random",
        *,
        iterations: int = 300,
        simulations: int = 100,
        seed: int | None = None,
    ) -> None:
        import pyspiel

        if kind not in KINDS:
            close = difflib.get_close_matches(str(kind), list(KINDS), n=1, cutoff=0.6)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise InvalidKwargError(f"unknown OpenSpiel player {kind!r}{hint}; players: {', '.join(KINDS)}")
        raw = env.unwrapped
        if not hasattr(raw, "game_type") or not hasattr(raw, "agent_name_id_mapping"):  # game_state: after reset
            raise InvalidKwargError(f"OpenSpiel players play openspiel/* envs; {type(raw).__name__} is not one")
        if kind == "mcts" and raw.game_type.information != pyspiel.GameType.Information.PERFECT_INFORMATION:
            raise InvalidKwargError(
                f"MCTS searches the true state, which {raw.game_type.short_name} hides from a "
                "player; use 'cfr' (small poker games) or 'random'"
            )
        self.env, self.agent, self.kind = env, agent, kind
        self.iterations, self.simulations, self.seed = iterations, simulations, seed
        self.player = raw.agent_name_id_mapping[agent]
        self.rng = mixed_rng(seed, None)
        self._strategy: dict[str, dict[int, float]] | None = None

    def __repr__(self) -> str:
        return f"OpenSpielPlayer({self.agent!r}, {self.kind!r})"

    def reset(self, seed: int | None = None) -> None:
        """Reseed from the construction seed and the episode's ``seed``."""
        self.rng = mixed_rng(self.seed, seed)

    def _action(self, state: Any) -> int:
        legal = list(state.legal_actions(self.player))
        if self.kind == "random":
            return int(legal[int(self.rng.integers(len(legal)))])
        if self.kind == "cfr":
            if self._strategy is None:
                self._strategy = cfr_strategy(str(state.get_game()), self.iterations)
            probs = self._strategy.get(state.information_state_string(self.player))
            if probs is None:
                raise LangPZError(
                    f"CFR strategy of {state.get_game()} has no information state "
                    f"{state.information_state_string(self.player)!r}"
                )
            actions = [a for a in legal if a in probs]
            weights = np.asarray([probs[a] for a in actions], dtype=float)
            weights = weights / weights.sum() if weights.sum() > 0 else np.full(len(actions), 1 / len(actions))
            return int(actions[int(self.rng.choice(len(actions), p=weights))])
        from open_spiel.python.algorithms import mcts

        random_state = np.random.RandomState(int(self.rng.integers(2**31)))
        bot = mcts.MCTSBot(
            state.get_game(),
            uct_c=2.0,
            max_simulations=self.simulations,
            evaluator=mcts.RandomRolloutEvaluator(1, random_state),
            random_state=random_state,
        )
        return int(bot.step(state))

    def decide(self, observation: Mapping[str, Any] | str, info: Mapping[str, Any] | None = None) -> Decision:
        """The move word of this player's choice; the observation text is not read.

        Raises:
            LangPZError: it is not this seat's turn.
        """
        t0 = time.perf_counter()
        env = self.env
        state = env.unwrapped.game_state
        if state.is_terminal() or env.unwrapped.agent_selection != self.agent:
            raise LangPZError(f"{self!r} asked to move when it is not {self.agent}'s turn")
        word = env.adapter.action_text(env.env, self.agent, self._action(state))
        return Decision(action=word, raw_output=word, latency_s=time.perf_counter() - t0)
