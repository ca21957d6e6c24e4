"""Which agent, which step? The corrected fault benchmark, for the LLM critic and the
counterfactual critic, next to chance and trivial rules (issue 15).

For 5-piston Pistonball, Overcooked (cramped_room, skills) and GSM8K (solver + verifier), one
agent of a good scripted team is made faulty for a short window (``misplay``: an action the
team itself plays, in the wrong state; GSM8K ``harmful``: a wrong final answer), and a case
counts only if the fault lowered the team return by at least 2 %. Critics, all on the embedded
SmolLM2-135M model where a model is used:

- ``central_credit``: the LLM critic (one call, every agent's credit);
- ``counterfactual/reference``: the counterfactual critic given re-runs in which each window of
  two decisions of each agent is played as the base team would have (the evidence a fault
  benchmark can compute: it knows the good team);
- ``counterfactual/alternatives`` (Pistonball, Overcooked) or ``counterfactual/default``
  (GSM8K, free text): re-runs with each other action word (or the environment's default) over
  each window — the evidence training has, without a reference.

The LLM calls are what costs (15-30 s each for the critic's 2,000-token prompt on a busy
2-core machine), so the LLM critics run on the first ``--llm-cases`` cases of each environment
and the counterfactual critics' numbers (computed without a model: the model's words cannot
change them) on ``--cases``; the first ``--llm-cases`` cases are the same in both. Writes
``benchmarks/results/credit_benchmark.md``, ``.json`` and ``.cases.jsonl`` (``--out`` to change)::

    python benchmarks/credit_benchmark.py --data-dir DATA            # the committed results
    python benchmarks/credit_benchmark.py --data-dir DATA --cases 4 --llm-cases 2  # a quick look
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

from lang_pz.backends import LlamaCppBackend
from lang_pz.critics import CentralCritic
from lang_pz.critics.difference import DifferenceCritic
from lang_pz.evaluation import CriticSpec, run_fault_benchmark
from lang_pz.evaluation.summary import Summary, rules_table, summary_dict, table

ROOT = Path(__file__).resolve().parent


def envs(args: argparse.Namespace) -> list[dict]:
    """The benchmarked environments: id, kwargs, fault, window, kept cases, evidence without a reference."""
    out = [
        {
            "env": "butterfly/pistonball-v0",
            "kw": {"n_pistons": 5, "hold": 1, "max_cycles": 20},
            "fault": "misplay",
            "window": 2,
            "blind": "alternatives",
        },
        {
            "env": "overcooked/cramped_room-v0",
            "kw": {"actions": "skills", "horizon": 40},
            "fault": "misplay",
            "window": 2,
            "blind": "alternatives",
        },
    ]
    if args.data_dir:
        out.append(
            {
                "env": "tasks/gsm8k-v0",
                "kw": {"data_dir": str(args.data_dir), "split": "test"},
                "fault": "harmful",
                "window": 1,
                "blind": "default",
            }
        )
    return out


def examples(cases_file: Path) -> list[str]:
    """Per environment, the first LLM case's credits and words, for the reader to judge them."""
    lines, seen = [], set()
    for line in cases_file.read_text().splitlines():
        r = json.loads(line)
        if r["source"] in seen or "central_credit" not in r["critics"]:
            continue
        seen.add(r["source"])
        lines.append(
            f"- {r['source']}, seed {r['seed']}: faulty **{r['truth_agent']}** at steps {r['faulty_steps']} "
            f"(team return {r['clean_team_return']:.1f} -> {r['team_return']:.1f})"
        )
        for name, c in r["critics"].items():
            said = (
                "; ".join(f'{a} {c["credits"][a]:+.2f} "{c["explanations"][a]}"' for a in c["credits"])
                if c.get("credits")
                else c.get("error")
            )
            lines.append(f"  - {name}: {said}")
    return lines


NOTES = """How to read it:

- `counterfactual/reference` re-runs each window of two decisions of each agent as the base team
  would have played it. A teammate that played its base policy changes nothing (delta exactly
  0 in these deterministic environments), so the agent whose window restores the return is the
  faulty one, and the window says when. It needs a known good policy per agent: a fault
  benchmark has one (the base team); training has only the policies before an update.
- `counterfactual/alternatives` (each other action word over each window) is what training can
  compute without a reference. It credits the agent whose other choice *somewhere* would have
  helped most. After a fault, teammates near the ball (Pistonball) or the other cook
  (Overcooked) can often compensate by as much as undoing the fault, so "who could have fixed
  it" is not "who broke it": this evidence does not identify the faulty agent.
- `counterfactual/default` (GSM8K: an empty reply): a silent solver scores 0 as a wrong one
  does, so a faulty solver is never found (a tie); a verifier that overwrote the right answer
  is.
- The LLM critic (`central_credit`, SmolLM2-135M) mostly gives tied or arbitrary credits; its
  words, and the counterfactual critic's words (`+ LLM words`), copy the worked example and
  can contradict the computed facts, which is why the counterfactual critic's numbers never
  depend on them.
"""


def markdown(
    summaries: list[Summary], args: argparse.Namespace, wall_s: float, per_env: dict[str, float], cases_file: Path
) -> str:
    cmd = (
        f"python benchmarks/credit_benchmark.py{' --data-dir DATA' if args.data_dir else ''} "
        f"--cases {args.cases} --llm-cases {args.llm_cases} --threads {args.threads}"
    )
    lines = [
        "# Credit benchmark: which agent, which step",
        "",
        f"`{cmd}` — {time.strftime('%Y-%m-%d')}, {platform.machine()}, {os.cpu_count()} cores "
        f"(load average {os.getloadavg()[0]:.1f} at the start: a shared machine), wall time "
        f"{wall_s / 60:.1f} min ({', '.join(f'{k} {v / 60:.1f} min' for k, v in per_env.items())}). "
        "Critic model: the embedded SmolLM2-135M (llama.cpp).",
        "",
        "Each case: a good scripted team (Pistonball heuristic, Overcooked greedy, GSM8K oracle) with one "
        "agent made faulty for a window of decisions; kept only if the team return fell by at least 2 % "
        "(`cases (drawn/dropped)`: seeds drawn, and dropped because no fault of that seed hurt enough). "
        "Accuracies are strict (a tie for the lowest credit is a miss) with 95 % Wilson intervals; "
        "`ties at random` is the expected score of breaking ties uniformly; trivial rules and the random "
        "critic are scored with ties at random. Agent accuracy of a blind guess is `chance agent` whatever "
        "the labels; `majority label` is what always blaming the most frequent faulty agent would score.",
        "",
        table(summaries),
        "",
        "Trivial rules (no credit assignment at all) and the seeded random critic, agent / step accuracy:",
        "",
        rules_table(summaries),
        "",
        "Does a per-agent action statistic give the faulty agent away? (one-sided binomial test of each "
        "action-statistic rule against chance; `p` Bonferroni-corrected over the three rules)",
        "",
        "| env | cases | chance | unusual_actions | histogram_outlier | action_switches | p | labels |",
        "|---|---|---|---|---|---|---|---|",
    ]
    largest: dict[str, Summary] = {}  # per environment, the run with the most cases
    for s in summaries:
        if s.leakage.get("rules") and s.cases > getattr(largest.get(s.source), "cases", -1):
            largest[s.source] = s
    for s in largest.values():
        r = s.leakage["rules"]
        lines.append(
            f"| {s.source} | {s.cases} | {s.leakage['chance']:.2f} | "
            + " | ".join(
                f"{r[k]['share']:.2f} (p {r[k]['p_value']:.2g})"
                for k in ("unusual_actions", "histogram_outlier", "action_switches")
            )
            + f" | {s.leakage['p_value']:.2g} | {s.labels} |"
        )
    lines += ["", NOTES, "Examples (the first case of each environment, as the LLM critics saw it):", ""]
    lines += examples(cases_file)
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--data-dir",
        type=Path,
        default=os.environ.get("LANG_PZ_DATA_DIR"),
        help="benchmark data folder with gsm8k/test.jsonl (default $LANG_PZ_DATA_DIR; none: no GSM8K)",
    )
    ap.add_argument("--cases", type=int, default=20, help="kept cases per environment (counterfactual critics)")
    ap.add_argument("--llm-cases", type=int, default=8, help="the first cases also given to the LLM critics")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--threads",
        type=int,
        default=1,
        help="llama.cpp threads (default 1: on a busy shared machine more threads spin; measured "
        "12 s against 43 s for a 1,500-token prompt with 2)",
    )
    ap.add_argument("--out", type=Path, default=ROOT / "results" / "credit_benchmark")
    args = ap.parse_args(argv)
    llm = LlamaCppBackend(n_threads=args.threads, cache=False)  # no replay: the wall time is real
    t0 = time.perf_counter()
    summaries: list[Summary] = []
    per_env: dict[str, float] = {}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    cases_file = args.out.with_suffix(".cases.jsonl")
    cases_file.unlink(missing_ok=True)
    log = lambda m: print(m, file=sys.stderr, flush=True)  # noqa: E731
    for e in envs(args):
        t1 = time.perf_counter()
        common = {
            "seed": args.seed,
            "fault": e["fault"],
            "env_kwargs": e["kw"],
            "window": e["window"],
            "out": cases_file,
            "progress": log,
        }
        with_llm = [
            CriticSpec("central_credit", CentralCritic(llm)),
            CriticSpec("counterfactual/reference + LLM words", DifferenceCritic(llm), ("reference",)),
        ]
        summaries += run_fault_benchmark(e["env"], with_llm, cases=args.llm_cases, **common)
        computed = [
            CriticSpec("counterfactual/reference", DifferenceCritic(), ("reference",)),
            CriticSpec(f"counterfactual/{e['blind']}", DifferenceCritic(), (e["blind"],)),
        ]
        summaries += run_fault_benchmark(e["env"], computed, cases=args.cases, **common)
        per_env[e["env"].split("/")[-1]] = time.perf_counter() - t1
    wall = time.perf_counter() - t0
    for s in summaries:  # no machine paths in the committed results
        s.settings["env_kwargs"] = {k: ("DATA" if k == "data_dir" else v) for k, v in s.settings["env_kwargs"].items()}
    args.out.with_suffix(".md").write_text(markdown(summaries, args, wall, per_env, cases_file))
    args.out.with_suffix(".json").write_text(
        json.dumps(
            {
                "wall_s": round(wall, 1),
                "per_env_s": {k: round(v, 1) for k, v in per_env.items()},
                "summaries": [summary_dict(s) for s in summaries],
            },
            indent=1,
        )
    )
    print(args.out.with_suffix(".md").read_text())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
