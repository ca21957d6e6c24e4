"""Rock-paper-scissors (PettingZoo ``rps_v2``) as a language environment: ``classic/rps-v0``.

=====================  =====================================================================
Agents                 ``player_0``, ``player_1``
API                    parallel (default, simultaneous moves) and AEC
Observation            ``{"text": str}``: the round number, the opponent's last move (the
                       PettingZoo observation) and your own last move with its outcome
Action                 ``str``: ``rock`` / ``paper`` / ``scissors`` (``num_actions=5`` adds
                       ``spock`` / ``lizard``; 7+ add ``action_6`` ...)
Reward                 +1 win, -1 loss, 0 tie, each round; ``max_cycles`` rounds
Fallback               an unreadable reply plays ``rock``; the player's next observation says so
=====================  =====================================================================

Parsing: the generic rules of :mod:`lang_pz.text.codec` over the move words. In ``rps_v2``'s
code the extra moves are ordered ``spock`` (3) before ``lizard`` (4), unlike its docstring table.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lang_pz.envs.checks import check_api, check_bool
from lang_pz.error import InvalidKwargError
from lang_pz.registration import Api
from lang_pz.text.adapter import LanguageAdapter


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
    """Rock-paper-scissors: the round, the opponent's last move and your own, read from the game
    (``env.unwrapped.observations[agent]`` is PettingZoo's observation: the opponent's last move)."""

    reads_observation = False

    def __init__(self, num_actions: int = 3) -> None:
        super().__init__(action_names=rps_moves(num_actions))

    def observation_text(self, env: Any, agent: str | None, observation: Any) -> str:
        raw = env.unwrapped
        names = self.action_names
        assert names is not None
        me = raw.agent_name_mapping[agent]
        opp_last = int(raw.observations[agent])
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
    from pettingzoo.utils.conversions import aec_to_parallel
    from pettingzoo.utils.wrappers import OrderEnforcingWrapper

    from lang_pz.wrappers import LanguageAECWrapper, LanguageParallelWrapper
    from lang_pz.wrappers.lazy import ObserveOnDemand

    check_api("classic/rps", api, ("parallel", "aec"))
    if not isinstance(num_actions, int) or isinstance(num_actions, bool) or num_actions < 3 or num_actions % 2 == 0:
        raise InvalidKwargError(f"num_actions must be an odd integer >= 3, got {num_actions!r}")
    if not isinstance(max_cycles, int) or isinstance(max_cycles, bool) or max_cycles < 1:
        raise InvalidKwargError(f"max_cycles must be an integer >= 1, got {max_cycles!r}")
    check_bool("strict", strict)
    adapter = RPSAdapter(num_actions)
    # PettingZoo's env() without its AssertOutOfBoundsWrapper (the adapter plays only valid
    # moves); the parallel form is its aec_to_parallel, with observations computed only if read
    # (order checks are the parallel API's own there, as in PettingZoo's parallel_env).
    raw = rps_v2.raw_env(num_actions=num_actions, max_cycles=max_cycles, render_mode=render_mode)
    if api == "aec":
        return LanguageAECWrapper(OrderEnforcingWrapper(raw), adapter, strict=strict)
    return LanguageParallelWrapper(aec_to_parallel(ObserveOnDemand(raw)), adapter, strict=strict)
