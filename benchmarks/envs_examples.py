"""One observation example per env id users bring (issue 23): the first text an agent reads.

Runs each ``openspiel/*``, ``mpe/*`` and ``textarena/*`` id (and one family id of each family)
at reset seed 0 and prints, as markdown, the first agent's observation text and its length in
characters (the full text the policy gets, legal moves included)::

    .venv/bin/python benchmarks/envs_examples.py > benchmarks/results/envs_bench/examples.md
"""

from __future__ import annotations

import argparse
import warnings
from typing import Any

import lang_pz
from lang_pz import registration

#: Family ids shown besides the registered ones (the generic adapters), with their kwargs.
EXTRA: list[tuple[str, dict[str, Any]]] = [
    ("openspiel/liars_dice", {}),
    ("textarena/Nim-v0", {}),
    ("mpe/simple_spread-v0", {"continuous_actions": True}),
]


def first_text(env_id: str, kwargs: dict[str, Any], seed: int) -> tuple[str, str]:
    """(agent, observation text) of the first agent to act after ``reset(seed=seed)``.

    Raises:
        whatever ``lang_pz.make`` raises for a bad id or kwargs.
    """
    spec = registration.spec(env_id)
    if "parallel" in spec.apis:
        env = lang_pz.make(env_id, api="parallel", **kwargs)
        observations, _ = env.reset(seed=seed)
        agent = env.agents[0]
        text = observations[agent]["text"]
    else:
        env = lang_pz.make(env_id, api="aec", **kwargs)
        env.reset(seed=seed)
        agent = env.agent_selection
        text = env.observe(agent)["text"]
    env.close()
    return agent, text


def main(argv: list[str] | None = None) -> None:
    """Print every example (module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0, help="reset seed (default 0)")
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore")
    ids = [(i, {}) for i in registration.registry if i.split("/")[0] in ("openspiel", "mpe", "textarena")]
    print(f"# Observation examples (reset seed {args.seed}; `benchmarks/envs_examples.py`)\n")
    for env_id, kwargs in ids + EXTRA:
        agent, text = first_text(env_id, kwargs, args.seed)
        shown = f"{env_id}({', '.join(f'{k}={v}' for k, v in kwargs.items())})" if kwargs else env_id
        print(f"## {shown}: {agent}, {len(text)} characters\n\n```text\n{text}\n```\n")


if __name__ == "__main__":
    main()
