"""What an episode is worth: the named objective that validation, the evidence gate and benchmarks
optimise and report.

The team return (sum of every agent's return) is the natural objective of a cooperative env, but
it is 0 in every episode of a two-player zero-sum game (rock-paper-scissors, tic-tac-toe, connect
four), where training on it would make validation and the evidence gate vacuous. Such games need
one seat's objective against a fixed opponent instead. Specs (strings, as in configs and the CLI):

=======================  ================================================================
``team_return``          sum of the agents' returns (cooperative envs; the default there)
``return:AGENT``         one seat's return, e.g. ``return:player_0``
``win:AGENT``            1 if AGENT's return is higher than every other agent's, 0.5 on a
                         tie for the highest, 0 otherwise (a win rate once averaged)
``soups``                Overcooked soups delivered: the team return / (20 x players)
=======================  ================================================================
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from lang_pz.error import InvalidKwargError
from lang_pz.registration import canonical_id
from lang_pz.trajectory import Trajectory

#: Registered ids whose team return is 0 in every episode (two-player zero-sum games; the OpenSpiel
#: and TextArena ones checked with random play).
ZERO_SUM_ENVS: frozenset[str] = frozenset(
    {
        "classic/rps-v0",
        "classic/tictactoe-v0",
        "classic/connect_four-v0",
        "openspiel/kuhn_poker-v0",
        "openspiel/leduc_poker-v0",
        "openspiel/goofspiel-v0",
        "openspiel/breakthrough-v0",
        "textarena/tictactoe-v0",
        "textarena/kuhn_poker-v0",
    }
)
#: Overcooked's reward per soup, given to each player.
SOUP_REWARD = 20.0

OBJECTIVE_FORMS = ("team_return", "return:AGENT", "win:AGENT", "soups")


@dataclass(frozen=True)
class Objective:
    """A named scalar of one episode (higher is better).

    Attributes:
        spec: the spec string it was built from (see the module docstring).
        description: one line for reports.
        value: trajectory -> float.
    """

    spec: str
    description: str
    value: Callable[[Trajectory], float]

    def __call__(self, trajectory: Trajectory) -> float:
        """The objective of one finished episode."""
        return float(self.value(trajectory))

    def mean(self, trajectories: Sequence[Trajectory]) -> float:
        """Mean over episodes.

        Raises:
            ValueError: no trajectories.
        """
        if not trajectories:
            raise ValueError("no trajectories to average the objective over")
        return sum(self(t) for t in trajectories) / len(trajectories)


def _win(agent: str) -> Callable[[Trajectory], float]:
    def value(t: Trajectory) -> float:
        mine = t.returns.get(agent, 0.0)
        others = [r for a, r in t.returns.items() if a != agent]
        best_other = max(others, default=float("-inf"))
        return 1.0 if mine > best_other else 0.5 if mine == best_other else 0.0

    return value


def make_objective(spec: str, agents: Sequence[str], env_id: str = "") -> Objective:
    """Build the objective named by ``spec`` for an env with these ``agents``.

    Args:
        spec: one of the forms in the module docstring.
        agents: the env's ``possible_agents`` (an AGENT in the spec must be one of them).
        env_id: the registered id, if any (``team_return`` is refused for zero-sum games).

    Raises:
        InvalidKwargError: an unknown form or agent, or ``team_return`` on a zero-sum game
            (the message names the seat objectives to use instead).
    """
    kind, sep, agent = spec.partition(":")
    if kind == "team_return" and not sep:
        if env_id and canonical_id(env_id) in ZERO_SUM_ENVS:
            seats = ", ".join(f"'win:{a}'" for a in agents)
            raise InvalidKwargError(
                f"{env_id} is a zero-sum game: its team return is 0 in every episode, so there is nothing "
                f"to optimise; name one seat's objective against a fixed opponent instead, e.g. {seats} "
                f"(or 'return:AGENT'), and make the other seat a fixed partner"
            )
        return Objective(spec, "team return (sum of every agent's return)", lambda t: t.team_return)
    if kind == "soups" and not sep:
        if env_id and not env_id.startswith("overcooked/"):
            raise InvalidKwargError(
                f"objective 'soups' counts Overcooked soups (the team return / 20 per player); "
                f"{env_id} is not Overcooked: use 'team_return' or 'return:AGENT'"
            )
        n = max(1, len(agents))
        return Objective(spec, "soups delivered", lambda t: t.team_return / (SOUP_REWARD * n))
    if kind in ("return", "win") and sep:
        if agent not in agents:
            close = difflib.get_close_matches(agent, list(agents), n=1, cutoff=0.7)
            hint = f" (did you mean {kind}:{close[0]}?)" if close else ""
            raise InvalidKwargError(
                f"objective {spec!r} names {agent!r}, which is not an agent{hint}; agents: {list(agents)}"
            )
        if kind == "return":
            return Objective(spec, f"{agent}'s return", lambda t: t.returns.get(agent, 0.0))
        return Objective(spec, f"{agent}'s win rate (tie 0.5)", _win(agent))
    close = difflib.get_close_matches(str(spec), list(OBJECTIVE_FORMS), n=1, cutoff=0.7)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    raise InvalidKwargError(f"unknown objective {spec!r}{hint}; valid forms: {', '.join(OBJECTIVE_FORMS)}")


def default_objective(env_id: str) -> str:
    """The default objective spec of a registered env: ``soups`` for Overcooked, ``team_return``
    elsewhere (zero-sum games have no default: :func:`make_objective` explains)."""
    return "soups" if env_id.startswith("overcooked/") else "team_return"
