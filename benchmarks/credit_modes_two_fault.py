"""Two faulty pistons at once: do the decisive and coalition critics put both at the bottom?

Pistonball (5 pistons, ``hold=1``, 20 cycles), the scripted heuristic team; per seed, seeded
draws of two distinct pistons and a start ``s``: the first is ``misplay``-faulty over decisions
``s..s+2``, the second over ``s+1..s+3`` (overlapping windows); the first draw (of at most 30)
that lowered the team return by >= 2 % with a faulty decision of each is kept. No reference:
both critics search their own re-runs (:mod:`lang_pz.critics.decisive`,
:mod:`lang_pz.critics.coalition`). Score: the two faulty pistons hold the two lowest credits
(chance 1 / C(5, 2) = 0.1; a tie at the bottom is a miss). Prints one line per case and the
totals (results: ``benchmarks/results/credit_modes_new.md``)::

    python benchmarks/credit_modes_two_fault.py --seeds 10
"""

from __future__ import annotations

import argparse

import numpy as np

import lang_pz
from lang_pz.critics.coalition import CoalitionCritic
from lang_pz.critics.decisive import DecisiveCritic, local_runner
from lang_pz.evaluation.bases import base_factory, repertoire
from lang_pz.evaluation.cases import hurts
from lang_pz.policies.faulty import FaultyPolicy
from lang_pz.rollout import rollout

ENV_ID = "butterfly/pistonball-v0"


def main() -> None:
    """Run the two-fault cases of ``--seeds`` seeds and print the scores."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=10)
    args = ap.parse_args()
    env = lang_pz.make(ENV_ID, n_pistons=5, hold=1, max_cycles=20)
    make = base_factory("heuristic", ENV_ID)
    agents = list(env.possible_agents)
    hits = {"decisive": 0, "coalition": 0}
    kept = 0
    for seed in range(args.seeds):

        def team() -> dict:
            return {a: make(env, a, j) for j, a in enumerate(agents)}

        clean = rollout(env, team(), seed=seed)
        rng = np.random.default_rng(seed)
        for _ in range(30):
            i, j = rng.choice(len(agents), 2, replace=False)
            start = int(rng.integers(0, 8))
            t = team()
            faulty = [agents[i], agents[j]]
            for k, a in enumerate(faulty):
                t[a] = FaultyPolicy(t[a], "misplay", range(start + k, start + k + 3), action=repertoire(clean), seed=seed)
            traj = rollout(env, t, seed=seed)
            if hurts(clean.team_return, traj.team_return, 0.02) and all(any(r.faulty for r in t[a].log) for a in faulty):
                break
        else:
            print(f"seed {seed}: no two-fault draw hurt the team, dropped")
            continue
        kept += 1
        line = []
        for critic in (DecisiveCritic(), CoalitionCritic()):
            found = critic.search(traj, local_runner(env, t, traj))
            credits = {a: c.credit for a, c in critic.assess(traj, None, found.probes).credits.items()}
            low = sorted(credits.values())
            bottom = {a for a, c in credits.items() if c <= low[1]}
            hit = bottom == set(faulty)
            hits[critic.mode] += hit
            line.append(f"{critic.mode}: bottom {sorted(bottom)} {'hit' if hit else 'miss'} ({found.reruns} re-runs)")
        print(
            f"seed {seed}: faulty {faulty} from decision {start}, loss {clean.team_return - traj.team_return:.1f}; "
            + "; ".join(line)
        )
    print(f"{kept} cases: " + ", ".join(f"{m} both at the bottom {h}/{kept}" for m, h in hits.items()))


if __name__ == "__main__":
    main()
