"""The credit benchmark's results page (:func:`markdown`), written by ``credit_benchmark.py``."""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

from lang_pz.evaluation.nofault import NoFaultSummary, nofault_table
from lang_pz.evaluation.pairs import PairSummary, pair_table
from lang_pz.evaluation.summary import Summary, rules_table, table


def examples(cases_file: Path) -> list[str]:
    """Per environment, the first LLM case's credits and words, for the reader to judge them."""
    lines, seen = [], set()
    for line in cases_file.read_text().splitlines():
        r = json.loads(line)
        if r.get("kind") or r["source"] in seen or "central_credit" not in r["critics"]:
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
- Two faults: when one fault masks the other (the ball is already lost, the soup already late),
  re-playing the masked agent's window as the base team would changes nothing, so even
  `counterfactual/reference` gives it delta 0, tied with the clean agents (`ties`): "both at the
  bottom" needs credit for sets of agents, not single windows. The misplay's extra action changes
  make `action_switches` a strong trivial rule on two-fault cases.
- The LLM critic (`central_credit`, SmolLM2-135M) mostly gives tied or arbitrary credits; its
  words, and the counterfactual critic's words (`+ LLM words`), copy the worked example and
  can contradict the computed facts, which is why the counterfactual critic's numbers never
  depend on them.
"""


def leakage_table(summaries: list[Summary]) -> list[str]:
    """Per environment (its run with the most cases), the action-statistic rules against chance."""
    lines = [
        "| env | cases | chance | unusual_actions | histogram_outlier | action_switches | p | labels |",
        "|---|---|---|---|---|---|---|---|",
    ]
    largest: dict[str, Summary] = {}
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
            + f" | {s.leakage['p_value']:.2g}{' (leaks)' if s.leakage['p_value'] < 0.05 else ''} | {s.labels} |"
        )
    return lines


def markdown(
    summaries: list[Summary],
    pairs: list[PairSummary],
    args: argparse.Namespace,
    wall_s: float,
    per_env: dict[str, float],
    cases_file: Path,
    nofault: list[NoFaultSummary] | None = None,
    *,
    command_line: str,
    defaults: dict[str, int],
) -> str:
    """The results page (``command_line`` reproduces it; ``defaults``: a full run's case counts)."""
    fewer = tuple(getattr(args, k) for k in defaults) < tuple(defaults.values())
    lines = [
        "# Credit benchmark: which agent, which step, and no one when no one erred",
        "",
        f"`{command_line}` (DATA: the benchmark data folder, `$LANG_PZ_DATA_DIR`) reproduces every row — "
        f"{time.strftime('%Y-%m-%d')}, {platform.machine()}, {os.cpu_count()} cores "
        f"(load average {args.load:.1f} at the start: a shared machine), wall time "
        f"{wall_s / 60:.1f} min ({', '.join(f'{k} {v / 60:.1f} min' for k, v in per_env.items())}). "
        + (
            "Critic model: the embedded SmolLM2-135M (llama.cpp). The LLM rows are the first "
            f"{args.llm_cases} cases of each environment (the same cases as the first rows of the others)."
            if args.llm_cases
            else "**No LLM critic in this run** (`--llm-cases 0`: the time went to the re-run critics and "
            "the no-fault cases); the LLM rows of the previous run are in this file's git history."
        ),
        "",
        "Each case: a good scripted team (Pistonball heuristic, Overcooked greedy, GSM8K/MATH-500 oracle) with "
        "one agent made faulty for a window of decisions; kept only if the team return fell by at least 2 % "
        "(`cases (drawn/dropped)`: seeds drawn, and dropped because no fault of that seed hurt enough). "
        "**The faulty agent is drawn stratified** (each agent equally often; `labels` below). "
        "Accuracies are strict (a tie for the lowest credit is a miss) with 95 % Wilson intervals; a step hit "
        "counts only the blamed agent's own steps. `ties at random` is the expected score of breaking ties "
        "uniformly; trivial rules and the random critic are scored with ties at random. `every trivial rule "
        "fails`: the cases on which no trivial rule does better than a blind guess, and the critic's accuracy "
        "on them. `blames someone`: the share of cases whose report blamed an agent (its verdict, "
        '`lang_pz/critics/significance.py`); 1 minus it is the share answered "no one". `re-runs / case`: '
        "the re-runs each critic was given or made (the no-change re-run included); `LLM calls / case`: the "
        "critic's calls and those its re-runs sent (the teams are scripted: 0 for every re-run critic). "
        "Rows marked `no verdict` are the same critics on the same re-runs without the significance rule."
        + (
            f" **Fewer cases than the defaults** (`{' '.join(f'--{k.replace(chr(95), chr(45))} {v}' for k, v in defaults.items())}`) "
            "to fit about 45 minutes on a loaded machine: the intervals are wide."
            if fewer
            else ""
        ),
        "",
        "## No fault: does a critic blame someone when no one erred?",
        "",
        "The base team plays as scripted (nobody deviates from its policy): Pistonball's heuristic pistons on their "
        "lowest-return seeds of 0-99 (the ball is simply hard to save), Overcooked's greedy cooks (deterministic: "
        "a case is a layout and a horizon; on coordination_ring at horizon 40 they deliver nothing). Every blame "
        "is false here. `blames someone`: the verdict names an agent (without a verdict: some credit is negative, "
        "what an optimiser acts on); `singles one out`: one agent holds the lowest credit alone (the fault "
        "benchmark's blamed agent). Goal: at most 1 in 10 per mode.",
        "",
        nofault_table(nofault or []) if nofault else "(no no-fault run)",
        "",
        "## Single fault (and late-effect faults)",
        "",
        "`pistonball late-effect`: Pistonball cases whose fault's cost shows up late, the team's reward first "
        "differing from the unfaulted episode's 3 or more steps after the last faulty step "
        "(`lang_pz.evaluation.cases.late_effect`).",
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
        *leakage_table(summaries),
        "",
        "## Two and three faults: all at the bottom",
        "",
        "Two or three agents made faulty in overlapping windows, the group drawn stratified; kept if the faults "
        "together lowered the team return by at least 2 %. Score: the faulty agents hold the lowest credits, "
        "strictly; a blind guess scores 1 / C(n, k). Only Pistonball (5 agents).",
        "",
        pair_table(pairs) if pairs else "(no multi-fault run)",
        "",
        NOTES,
    ]
    shown = examples(cases_file)
    if shown:
        lines += ["Examples (the first case of each environment, as the LLM critics saw it):", "", *shown]
    return "\n".join(lines) + "\n"
