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


NOTES = """How to read it (the cases behind each statement are in `credit_benchmark.cases.jsonl`):

- **The verdict** (`lang_pz/critics/significance.py`): a re-run critic names an agent only when
  its gain exceeds the no-change re-run's variation (0 in every case here: the envs and scripted
  teams are deterministic) plus 1 % of the objective's scale, and beats every other agent's gain
  by half its own; else "no one" (every credit 0.0). Without it (`no verdict` rows) the blind
  critics blame someone on every no-fault Pistonball case and single one piston out on 8, 9 and 8
  of 10: the pistons that could have saved the ball. With it: alternatives 1/10, decisive 0/10,
  coalition 2/10 (the goal was at most 1: in those two cases, seeds 69 and 11, the rightmost
  piston's Shapley value is more than twice any other's; the re-runs cannot tell "could have
  helped by far the most" from "erred"; alternatives' one, seed 75, is piston_3 alike). On
  Overcooked's greedy cooks 3 of 10 no-fault cases were blamed without the verdict, 1 of 10 with
  it (coordination_ring at horizon 70: one cook's other skills would have delivered a second soup,
  the other's nothing, so all three blind modes name it).
- **What the verdict costs without a reference**: after a fault a teammate can usually recover about
  as much as undoing it, so the blind critics' blame rarely stands out and they answer "no one" on
  almost every single fault (agent accuracy 0 everywhere but the math tasks, where a verifier that
  overwrote the right answer is still found). Their accuracy without the verdict was at or below
  the best trivial rule anyway (Pistonball 0.20 / 0.10 / 0.00, late-effect 0.40 / 0.50 / 0.10
  against action_switches 0.78): "who could have fixed it" is not "who broke it", and the verdict
  now says so instead of naming someone.
- **`counterfactual/reference`** keeps 10/10 on every single-fault family, late-effect included:
  a teammate that played its base policy changes nothing (delta exactly 0), so the faulty agent
  stands out by construction. It needs a known good policy (a fault benchmark's base team;
  training has only the previous texts). On two and three faults it names one agent: one fault
  masks the others, whose reference windows then change nothing.
- **`own_policy`** (no reference: the agents' own texts, `lang_pz/critics/own.py`) finds every
  Pistonball single and late-effect fault in 2 re-runs per case and blames no one on the 20
  no-fault cases: nobody deviated from their text. It blames nobody on Overcooked and the math
  tasks because their texts are not ones its reader executes (a greedy planner; "solve the
  problem"), so their accuracy is 0 there by construction, not by chance. In the benchmark the
  pistons' text is the heuristic's rule, so a faulty piston is exactly one that deviated from its
  text: these figures are what a faithful reading of the text gives, the best case.
- **Two and three faults, `own_policy` 5/10 and 1/10 against action_switches 0.80 and 0.90**: in
  every miss (5 and 9 cases) a faulty piston's deviations did not hurt: in 13 its Shapley value is
  exactly 0 (undoing them gains nothing in any coalition of re-runs, or gains and losses cancel),
  in one (three faults, seed 10) its deviation helped. The verdict does not name a deviation that
  made no difference, and the score, which asks for every agent that had a faulty step, counts a
  miss. `action_switches` counts the misplays'
  extra action changes whatever their effect. The verdict is right not to blame a fault that did
  not matter; the score does not ask that question.
- **Exact coalitions**: every coalition row enumerates all coalitions (2 cooks: 1 coalition
  re-run; 5 pistons: 26), so two cooks whose changes recover the same +40 tie exactly (10 ties in
  10 cramped_room cases, 10 in 10 asymmetric_advantages): the 0.17 and 0.33 the coalition mode had
  on them before (sampled orders of two players) were coin flips.
- `counterfactual/default` (math, an empty reply): a silent solver scores 0 as a wrong one does, so
  a faulty solver is never found without a reference (ties); the own-policy reader cannot execute
  "solve the problem" either.
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
