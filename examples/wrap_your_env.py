"""Wrap your own PettingZoo environment: a LanguageAdapter says how agents see and act in text.

Here rock-paper-scissors (``pettingzoo.classic.rps_v2``, parallel): its observation is the
opponent's last move as a number, its action a number. The adapter turns both into words; the
wrapped env is still a PettingZoo ParallelEnv and passes PettingZoo's own API tests. Run::

    python examples/wrap_your_env.py
"""

from __future__ import annotations

from pettingzoo.classic import rps_v2

from lang_pz.policies import RandomPolicy
from lang_pz.rollout import rollout
from lang_pz.test import language_api_test
from lang_pz.text.adapter import LanguageAdapter
from lang_pz.wrappers import LanguageParallelWrapper

MOVES = ["rock", "paper", "scissors"]


class RPSAdapter(LanguageAdapter):
    """Observation 0-2: the opponent's last move; 3: no move yet. Actions: the three words."""

    def __init__(self) -> None:
        super().__init__(action_names=MOVES)

    def observation_text(self, env, agent, observation) -> str:
        last = "none yet" if int(observation) == 3 else MOVES[int(observation)]
        return f"You are {agent}, playing rock-paper-scissors. Your opponent's last move: {last}."


def make_env():
    return LanguageParallelWrapper(rps_v2.parallel_env(max_cycles=5), RPSAdapter())


def main(policies=None, seed: int = 0) -> float:
    language_api_test(make_env)  # PettingZoo's api/parallel/seed tests plus the text checks
    env = make_env()
    obs, infos = env.reset(seed=seed)
    print(obs["player_0"]["text"])  # ... Your opponent's last move: none yet.\nActions: rock, paper, scissors
    team = policies or {a: RandomPolicy() for a in env.possible_agents}
    traj = rollout(env, team, seed=seed)
    print({a: round(r, 1) for a, r in traj.returns.items()})
    return traj.returns["player_0"]


if __name__ == "__main__":
    import argparse

    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()  # --help; no options
    main()
