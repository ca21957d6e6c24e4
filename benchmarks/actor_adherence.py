"""Does the embedded actor play what a text policy names? ``adherence_table`` on PISTON_POLICIES.

Every phrasing of :data:`lang_pz.evaluation.adherence.PISTON_POLICIES` (five free phrasings of
each of down / stay / up and the textual optimiser's own two) on ``--observations`` real
Pistonball observations, played by :class:`~lang_pz.policies.llm.LLMPolicy` on the embedded
SmolLM2-135M (greedy, actions restricted to the three words by a grammar), in the prompt form
the actor uses. Writes ``benchmarks/results/actor_adherence.json`` (``--out``): per policy the
actions chosen. The page ``actor_adherence.md`` quotes the runs before and after a prompt change.

    PYTHONPATH=. nice -n 10 python benchmarks/actor_adherence.py --label after
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from lang_pz.backends import make_backend
from lang_pz.evaluation.adherence import PISTON_ACTIONS, PISTON_POLICIES, adherence_table, pistonball_observations

RESULTS = Path(__file__).resolve().parent / "results"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--observations", type=int, default=8)
    parser.add_argument("--label", default="run", help="the key this run is stored under in the JSON file")
    parser.add_argument("--out", type=Path, default=RESULTS / "actor_adherence.json")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    llm = make_backend("embedded", cache=False, n_threads=args.threads)
    obs = pistonball_observations(args.observations)
    t0 = time.perf_counter()
    table = adherence_table(llm, PISTON_POLICIES, obs, PISTON_ACTIONS)
    seconds = time.perf_counter() - t0
    llm.close()
    saved = json.loads(args.out.read_text()) if args.out.exists() else {}
    saved[args.label] = {
        "rate": table.rate,
        "observations": len(obs),
        "seconds": round(seconds, 1),
        "policies": {
            p: {"expected": PISTON_POLICIES[p], "rate": table.per_policy[p], "actions": table.actions[p]}
            for p in PISTON_POLICIES
        },
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(saved, indent=1) + "\n")
    for p, rate in table.per_policy.items():
        print(f"{rate:5.0%}  {p!r} -> {PISTON_POLICIES[p]}: {', '.join(table.actions[p])}")
    print(f"adherence {table.rate:.1%} of {len(PISTON_POLICIES) * len(obs)} decisions, {seconds:.0f} s")


if __name__ == "__main__":
    main()
