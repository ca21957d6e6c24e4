"""A mixed team: LLM seats next to classical partners, in one PettingZoo loop.

Overcooked-AI cramped_room at the skills level: ``player_0`` is an LLM policy, ``player_1``
overcooked_ai's greedy planner. Then Pistonball: two LLM pistons among scripted ones. Run
(embedded model; a few minutes on 2 idle cores, 7 min measured on a busy machine: about 100
model calls on ~450-token prompts)::

    python examples/mixed_team.py

``--ticks`` and ``--cycles`` shorten both episodes (a quick check: ``--ticks 6 --cycles 10``).
"""

from __future__ import annotations

import lang_pz
from lang_pz.backends import make_backend
from lang_pz.policies import LLMPolicy, PistonballHeuristic, overcooked_partner
from lang_pz.rollout import rollout


def main(llm=None, seed: int = 0, ticks: int = 60, cycles: int = 125) -> dict[str, float]:
    """Play both teams; ``ticks``: the kitchen's horizon, ``cycles``: Pistonball's ``max_cycles``."""
    llm = llm or make_backend("embedded")
    kitchen = lang_pz.make("overcooked/cramped_room-v0", actions="macro", horizon=ticks)
    team = {
        "player_0": LLMPolicy("Pick up onions and put them in the pot.", llm),
        "player_1": overcooked_partner("greedy", kitchen, "player_1"),
    }
    cooks = rollout(kitchen, team, seed=seed)
    print(f"Overcooked: {cooks.team_return / 40:.0f} soup(s) in {ticks} ticks; returns {cooks.returns}")

    pistons = lang_pz.make("butterfly/pistonball-v0", n_pistons=5, hold=5, max_cycles=cycles)
    team = {a: PistonballHeuristic() for a in pistons.possible_agents}
    team.update({"piston_0": LLMPolicy("Always push down.", llm), "piston_1": LLMPolicy("Always push down.", llm)})
    balls = rollout(pistons, team, seed=seed)
    print(f"Pistonball: team return {balls.team_return:.1f}")
    return {"overcooked": cooks.team_return, "pistonball": balls.team_return}


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ticks", type=int, default=60, help="Overcooked horizon (default 60)")
    parser.add_argument("--cycles", type=int, default=125, help="Pistonball max_cycles (default 125)")
    args = parser.parse_args()
    main(ticks=args.ticks, cycles=args.cycles)
