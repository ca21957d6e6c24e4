"""Does the embedded actor play what a text policy names? ``adherence_table`` on PISTON_POLICIES.

Every phrasing of :data:`lang_pz.evaluation.adherence.PISTON_POLICIES` (five free phrasings of
each of down / stay / up and the textual optimiser's own two) on ``--observations`` real
Pistonball observations, played by :class:`~lang_pz.policies.llm.LLMPolicy` on the embedded
SmolLM2-135M (greedy, actions restricted to the three words by a grammar), in the prompt form
the actor uses. Writes ``benchmarks/results/actor_adherence.json`` (``--out``): per policy the
actions chosen. The page ``actor_adherence.md`` quotes the runs before and after a prompt change.

``--rounds 1`` plays the prompt as it was before each action word was shown twice (the first
round of :func:`~lang_pz.policies.llm.choice_examples` is exactly the old three examples), so
both sides of the comparison run from this file. ``--policies held-out`` plays
:data:`HELD_OUT`, phrasings written after the prompt change and never used to choose it.

    PYTHONPATH=. nice -n 10 python benchmarks/actor_adherence.py --label after
    PYTHONPATH=. nice -n 10 python benchmarks/actor_adherence.py --policies held-out --observations 4 --rounds 1 --label held-out-before
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence
from pathlib import Path

import lang_pz.policies.llm as llm_prompt
from lang_pz.backends import make_backend
from lang_pz.evaluation.adherence import PISTON_ACTIONS, PISTON_POLICIES, adherence_table, pistonball_observations

RESULTS = Path(__file__).resolve().parent / "results"
#: Phrasings not in PISTON_POLICIES nor in the worked examples' templates, three per word.
HELD_OUT: dict[str, str] = {
    "Play up.": "up",
    "Set your action to up.": "up",
    "Raise the piston: up.": "up",
    "Play down always.": "down",
    "Set your action to down.": "down",
    "Lower the piston: down.": "down",
    "Play stay.": "stay",
    "Set your action to stay.": "stay",
    "Do not move: stay.": "stay",
}


TWO_ROUNDS = llm_prompt.choice_examples


def one_round(actions: Sequence[str]) -> tuple[tuple[str, str, str], ...]:
    """The worked examples before the change: the first round only (each word once)."""
    return TWO_ROUNDS(actions)[: min(3, len(set(actions)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--observations", type=int, default=8)
    parser.add_argument("--label", default="run", help="the key this run is stored under in the JSON file")
    parser.add_argument("--out", type=Path, default=RESULTS / "actor_adherence.json")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--rounds", type=int, choices=(1, 2), default=2, help="1: the prompt before the change")
    parser.add_argument("--policies", choices=("table", "held-out"), default="table")
    args = parser.parse_args()
    policies = PISTON_POLICIES if args.policies == "table" else HELD_OUT
    if args.rounds == 1:
        llm_prompt.choice_examples = one_round  # LLMPolicy reads the module's name at each request
    llm = make_backend("embedded", cache=False, n_threads=args.threads)
    obs = pistonball_observations(args.observations)
    t0 = time.perf_counter()
    table = adherence_table(llm, policies, obs, PISTON_ACTIONS)
    seconds = time.perf_counter() - t0
    llm.close()
    saved = json.loads(args.out.read_text()) if args.out.exists() else {}
    saved[args.label] = {
        "rate": table.rate,
        "rounds": args.rounds,
        "observations": len(obs),
        "seconds": round(seconds, 1),
        "policies": {
            p: {"expected": policies[p], "rate": table.per_policy[p], "actions": table.actions[p]} for p in policies
        },
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(saved, indent=1) + "\n")
    for p, rate in table.per_policy.items():
        print(f"{rate:5.0%}  {p!r} -> {policies[p]}: {', '.join(table.actions[p])}")
    print(f"adherence {table.rate:.1%} of {len(policies) * len(obs)} decisions, {seconds:.0f} s")


if __name__ == "__main__":
    main()
