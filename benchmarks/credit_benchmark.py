"""Which agent, which step? The fault benchmark for every critic configuration, next to chance
and trivial rules (issues 15 and 21).

Environments (:func:`families`, one line each): 5-piston Pistonball, Overcooked cramped_room
and asymmetric_advantages (skills, horizon 40), GSM8K and MATH-500 (solver + verifier, with
``--data-dir``). One agent of a good scripted team is made faulty for a short window
(``misplay``: an action the team itself plays, in the wrong state; math ``harmful``: a wrong
final answer); the faulty agent is drawn stratified (each agent equally often); a case counts
only if the fault lowered the team return by at least 2 %. Environments with at least three
agents (Pistonball) also get two-fault cases, scored "both at the bottom"
(:mod:`lang_pz.evaluation.pairs`).

Critics (:data:`CRITICS`, one line each; a new critic mode is one more line), on the embedded
SmolLM2-135M model where a model is used:

- ``central_credit``: the LLM critic (one call, every agent's credit);
- ``counterfactual/reference``: the counterfactual critic given re-runs in which each window of
  two decisions of each agent is played as the base team would have (a fault benchmark knows
  the good team; training does not);
- ``counterfactual/alternatives`` (Pistonball, Overcooked) or ``counterfactual/default``
  (math, free text): re-runs with each other action word (or the environment's default) over
  each window: the evidence training has, without a reference;
- ``decisive/...`` and ``coalition/...``: the reference-free searches of
  :mod:`lang_pz.critics.decisive` (the earliest decision whose change recovers the loss) and
  :mod:`lang_pz.critics.coalition` (Shapley values over agents' decisive windows), with the same
  blind replacements; each runs its own re-runs (counted per case).

The LLM critics (``Critic.llm``) run on the first ``--llm-cases`` cases of each environment and
the others on ``--cases``; the first ``--llm-cases`` cases are the same in both. Writes
``benchmarks/results/credit_benchmark.md``, ``.json`` and ``.cases.jsonl`` (``--out`` to change)::

    nice -n 10 python benchmarks/credit_benchmark.py --data-dir DATA     # the full run
    python benchmarks/credit_benchmark.py --cases 2 --llm-cases 0 --pair-cases 2 --only butterfly/pistonball-v0
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lang_pz.backends import LlamaCppBackend
from lang_pz.critics import CentralCritic
from lang_pz.critics.coalition import CoalitionCritic
from lang_pz.critics.decisive import DecisiveCritic
from lang_pz.critics.difference import DifferenceCritic
from lang_pz.evaluation import CriticSpec, run_fault_benchmark
from lang_pz.evaluation.faults import CaseContext
from lang_pz.evaluation.pairs import PairSummary, pair_summary_dict, pair_table, run_pair_benchmark
from lang_pz.evaluation.summary import Rate, Summary, every_rule_fails, rules_table, summary_dict, table

ROOT = Path(__file__).resolve().parent
#: The default numbers of cases (a full run).
DEFAULTS = {"cases": 20, "llm_cases": 8, "pair_cases": 10}
#: In a critic's name and evidence, replaced by the environment's evidence without a reference.
BLIND = "{blind}"


@dataclass(frozen=True)
class Critic:
    """One critic configuration of the benchmark (one line of :data:`CRITICS`).

    Attributes:
        name: its row name; ``{blind}`` becomes the environment's evidence without a reference
            (``alternatives``, or ``default`` for free-text envs).
        make: ``llm -> Assessor``, built once per environment (``None`` with ``build``).
        evidence: re-runs computed per case and given to it (``{blind}`` as in ``name``).
        llm: it asks the model, so it runs on the first ``--llm-cases`` cases only.
        build: ``(llm, CaseContext) -> Assessor``, a critic built per case (one that re-runs
            the case itself, e.g. a search by replay); used instead of ``make``.
    """

    name: str
    make: Callable[[Any], Any] | None = None
    evidence: tuple[str, ...] = ()
    llm: bool = False
    build: Callable[[Any, CaseContext], Any] | None = None

    def spec(self, llm: Any, blind: str) -> CriticSpec:
        """The :class:`CriticSpec` of this configuration on an environment whose blind evidence is ``blind``."""
        evidence = tuple(blind if e == BLIND else e for e in self.evidence)
        name = self.name.replace(BLIND, blind)
        if self.build is not None:
            build = self.build
            return CriticSpec(name, evidence=evidence, build=lambda ctx: build(llm, ctx))
        assert self.make is not None
        return CriticSpec(name, self.make(llm), evidence)


#: Every critic configuration, one line each. A new critic mode is one more line, e.g.
#: ``Critic("decisive", lambda llm: make_critic("decisive", llm))`` or, for a critic that
#: re-runs the case itself, ``Critic("decisive", build=lambda llm, ctx: Decisive(ctx.env, ctx.team))``.
CRITICS: list[Critic] = [
    Critic("central_credit", lambda llm: CentralCritic(llm), llm=True),
    Critic("counterfactual/reference + LLM words", lambda llm: DifferenceCritic(llm), ("reference",), llm=True),
    Critic("counterfactual/reference", lambda llm: DifferenceCritic(), ("reference",)),
    Critic(f"counterfactual/{BLIND}", lambda llm: DifferenceCritic(), (BLIND,)),
    Critic(f"decisive/{BLIND}", lambda llm: DecisiveCritic()),  # offered words; free text: the default
    Critic(f"coalition/{BLIND}", lambda llm: CoalitionCritic()),
]


@dataclass(frozen=True)
class Family:
    """One benchmarked environment (one line of :func:`families`).

    Attributes:
        env / kw: the id and its :func:`lang_pz.make` keyword arguments.
        fault / window: the fault and the decisions it replaces.
        blind: the evidence without a reference (``{blind}`` in :data:`CRITICS`).
        pairs: also run two-fault cases (needs >= 3 agents: with 2, both are always at the bottom).
        data: needs ``--data-dir``.
    """

    env: str
    kw: dict[str, Any] = field(default_factory=dict)
    fault: str = "misplay"
    window: int = 2
    blind: str = "alternatives"
    pairs: bool = False
    data: bool = False


def families(data_dir: Path | None) -> list[Family]:
    """The benchmarked environments (math tasks only with a data folder)."""
    data = {"data_dir": str(data_dir), "split": "test"} if data_dir else {}
    out = [
        Family("butterfly/pistonball-v0", {"n_pistons": 5, "hold": 1, "max_cycles": 20}, pairs=True),
        Family("overcooked/cramped_room-v0", {"actions": "skills", "horizon": 40}),
        Family("overcooked/asymmetric_advantages-v0", {"actions": "skills", "horizon": 40}),
        Family("tasks/gsm8k-v0", data, "harmful", 1, "default", data=True),
        Family("tasks/math500-v0", data, "harmful", 1, "default", data=True),
    ]
    return [f for f in out if data_dir or not f.data]


def run_family(
    f: Family,
    llm: Any,
    *,
    cases: int,
    llm_cases: int,
    pair_cases: int,
    seed: int,
    out: Path | None,
    progress: Callable[[str], None] | None = None,
    critics: list[Critic] | None = None,
) -> tuple[list[Summary], list[PairSummary]]:
    """One environment's rows: the LLM critics on ``llm_cases`` cases, the others on ``cases``
    (the first ``llm_cases`` cases are the same), and, if ``f.pairs``, every critic on
    ``pair_cases`` two-fault cases (the LLM critics on at most ``llm_cases`` of them)."""
    chosen = CRITICS if critics is None else critics
    common: dict[str, Any] = {"seed": seed, "fault": f.fault, "env_kwargs": f.kw, "window": f.window, "progress": progress}
    with_llm = [c.spec(llm, f.blind) for c in chosen if c.llm]
    computed = [c.spec(llm, f.blind) for c in chosen if not c.llm]
    singles: list[Summary] = []
    pairs: list[PairSummary] = []
    cases_file = out.with_suffix(".cases.jsonl") if out else None
    if with_llm and llm_cases:
        singles += run_fault_benchmark(f.env, with_llm, cases=llm_cases, out=cases_file, max_seeds=10 * llm_cases, **common)
    if computed and cases:
        singles += run_fault_benchmark(f.env, computed, cases=cases, out=cases_file, max_seeds=10 * cases, **common)
    if f.pairs and pair_cases:
        if with_llm and llm_cases:
            pairs += run_pair_benchmark(f.env, with_llm, cases=min(llm_cases, pair_cases), out=cases_file, **common)
        if computed:
            pairs += run_pair_benchmark(f.env, computed, cases=pair_cases, out=cases_file, **common)
    return singles, pairs


def examples(cases_file: Path) -> list[str]:
    """Per environment, the first LLM case's credits and words, for the reader to judge them."""
    lines, seen = [], set()
    for line in cases_file.read_text().splitlines():
        r = json.loads(line)
        if r.get("kind") == "two-fault" or r["source"] in seen or "central_credit" not in r["critics"]:
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


def command(args: argparse.Namespace) -> str:
    """The one command that reproduces every row of the results."""
    return (
        f"nice -n 10 python benchmarks/credit_benchmark.py{' --data-dir DATA' if args.data_dir else ''} "
        f"--cases {args.cases} --llm-cases {args.llm_cases} --pair-cases {args.pair_cases} "
        f"--seed {args.seed} --threads {args.threads}" + (f" --only {' --only '.join(args.only)}" if args.only else "")
    )


def markdown(
    summaries: list[Summary],
    pairs: list[PairSummary],
    args: argparse.Namespace,
    wall_s: float,
    per_env: dict[str, float],
    cases_file: Path,
) -> str:
    """The results page."""
    lines = [
        "# Credit benchmark: which agent, which step",
        "",
        f"`{command(args)}` (DATA: the benchmark data folder, `$LANG_PZ_DATA_DIR`) reproduces every row — "
        f"{time.strftime('%Y-%m-%d')}, {platform.machine()}, {os.cpu_count()} cores "
        f"(load average {args.load:.1f} at the start: a shared machine), wall time "
        f"{wall_s / 60:.1f} min ({', '.join(f'{k} {v / 60:.1f} min' for k, v in per_env.items())}). "
        "Critic model: the embedded SmolLM2-135M (llama.cpp). The LLM rows are the first "
        f"{args.llm_cases} cases of each environment (the same cases as the first rows of the others).",
        "",
        "Each case: a good scripted team (Pistonball heuristic, Overcooked greedy, GSM8K/MATH-500 oracle) with "
        "one agent made faulty for a window of decisions; kept only if the team return fell by at least 2 % "
        "(`cases (drawn/dropped)`: seeds drawn, and dropped because no fault of that seed hurt enough). "
        "**The faulty agent is drawn stratified**: the k-th kept case's faulty agent is the (k mod n)-th of a "
        "seeded order of the agents, so each agent is the faulty one equally often (a seed where that agent's "
        "fault cannot hurt is dropped; `labels` below shows the counts). "
        "Accuracies are strict (a tie for the lowest credit is a miss) with 95 % Wilson intervals; a step hit "
        "counts only the blamed agent's own steps. `ties at random` is the expected score of breaking ties "
        "uniformly; trivial rules and the random critic are scored with ties at random. `every trivial rule "
        "fails`: the cases on which no trivial rule does better than a blind guess (each rule's expected hit, "
        "ties at random, is at most chance: a rule that ties every agent fails), and the critic's agent accuracy "
        "on them (the cases no statistic gives away). With two agents whose first and last speakers differ, "
        "`first_speaker` or `last_speaker` is right on every case, so that set is empty by construction: for "
        "Overcooked and the math tasks read each rule's own accuracy against chance (the binomial test below)."
        + (
            f" **Fewer cases than the defaults** (`--cases {DEFAULTS['cases']} --llm-cases {DEFAULTS['llm_cases']} "
            f"--pair-cases {DEFAULTS['pair_cases']}`) to fit the time available on a loaded machine: the intervals "
            "are wide."
            if (args.cases, args.llm_cases, args.pair_cases)
            < (DEFAULTS["cases"], DEFAULTS["llm_cases"], DEFAULTS["pair_cases"])
            else ""
        ),
        "",
        "## Single fault",
        "",
        table(summaries),
        "",
        "Trivial rules (no credit assignment at all) and the seeded random critic, agent / step accuracy:",
        "",
        rules_table(summaries),
        "",
        "Does a per-agent action statistic give the faulty agent away? (one-sided binomial test of each "
        "action-statistic rule against chance; `p` Bonferroni-corrected over the three rules; `leaks`: "
        "p < 0.05, read the `every trivial rule fails` column for that environment)",
        "",
        *leakage_table(summaries),
        "",
        "## Two faults: both at the bottom",
        "",
        "Two agents made faulty in overlapping windows (the second agent's window starts within one decision "
        "of the first's), the pair drawn stratified over the C(n, 2) pairs; kept if the two faults together "
        "lowered the team return by at least 2 %. Score: the two faulty agents hold the two lowest credits, "
        "strictly; a blind guess scores 1 / C(n, 2). Only Pistonball (5 agents): Overcooked and the math tasks "
        "have two agents, where both are always at the bottom.",
        "",
        pair_table(pairs) if pairs else "(no two-fault run)",
        "",
        NOTES,
        "Examples (the first case of each environment, as the LLM critics saw it):",
        "",
    ]
    lines += examples(cases_file)
    return "\n".join(lines) + "\n"


def _rate(d: dict[str, Any]) -> Rate:
    return Rate(d["value"], (d["ci95"][0], d["ci95"][1]))


def rescore(out: Path) -> tuple[list[Summary], list[PairSummary], dict[str, Any]]:
    """The summaries of a finished run (``out``'s ``.json``), with the ``every trivial rule
    fails`` column recomputed from its ``.cases.jsonl`` by :func:`every_rule_fails` (the run
    itself is not repeated: every other number is the run's)."""
    saved = json.loads(out.with_suffix(".json").read_text())
    records = [json.loads(x) for x in out.with_suffix(".cases.jsonl").read_text().splitlines()]
    summaries, pairs = [], []
    for d in saved["summaries"]:
        mine = [
            r for r in records if r.get("kind") != "two-fault" and r["source"] == d["source"] and d["critic"] in r["critics"]
        ]
        hard = [r["critics"][d["critic"]]["agent_hit"] for r in mine if every_rule_fails(r)]
        d = {**d, "hard_cases": len(hard), "agent_hard": Rate.of(hard)}
        for k in ("agent", "step", "joint"):
            d[k] = _rate(d[k])
        d["baselines"] = {b: {k: _rate(v) for k, v in r.items()} for b, r in d["baselines"].items()}
        summaries.append(Summary(**d))
    for d in saved.get("two_fault", []):
        mine = [
            r for r in records if r.get("kind") == "two-fault" and r["source"] == d["source"] and d["critic"] in r["critics"]
        ]
        hard = [r["critics"][d["critic"]]["both"] for r in mine if every_rule_fails(r, "both_expected", "chance")]
        d = {**d, "hard_cases": len(hard), "hard": Rate.of(hard), "both": _rate(d["both"])}
        d["baselines"] = {b: _rate(v) for b, v in d["baselines"].items()}
        pairs.append(PairSummary(**d))
    return summaries, pairs, saved


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--data-dir",
        type=Path,
        default=os.environ.get("LANG_PZ_DATA_DIR"),
        help="benchmark data folder with gsm8k/ and math500/ (default $LANG_PZ_DATA_DIR; none: no math tasks)",
    )
    ap.add_argument("--cases", type=int, default=DEFAULTS["cases"], help="kept single-fault cases per environment")
    ap.add_argument(
        "--llm-cases", type=int, default=DEFAULTS["llm_cases"], help="the first cases also given to the LLM critics"
    )
    ap.add_argument(
        "--pair-cases", type=int, default=DEFAULTS["pair_cases"], help="kept two-fault cases (environments with >= 3 agents)"
    )
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--only", action="append", default=[], help="run only this environment id (repeatable)")
    ap.add_argument(
        "--threads",
        type=int,
        default=1,
        help="llama.cpp threads (default 1: on a busy shared machine more threads spin; measured "
        "12 s against 43 s for a 1,500-token prompt with 2)",
    )
    ap.add_argument("--out", type=Path, default=ROOT / "results" / "credit_benchmark")
    ap.add_argument(
        "--rescore",
        action="store_true",
        help="rewrite the .md and .json of a finished run from its .cases.jsonl (no new cases; the other "
        "options must be the run's)",
    )
    args = ap.parse_args(argv)
    args.load = os.getloadavg()[0]
    if args.rescore:
        old, old_pairs, saved = rescore(args.out)
        args.load = saved.get("load", args.load)
        write(args, old, old_pairs, saved["wall_s"], saved["per_env_s"])
        return 0
    chosen = [f for f in families(args.data_dir) if not args.only or f.env in args.only]
    if not chosen:
        ap.error(f"--only {args.only} names no benchmarked environment ({[f.env for f in families(args.data_dir)]})")
    llm = LlamaCppBackend(n_threads=args.threads, cache=False) if args.llm_cases else None  # no replay: real wall time
    t0 = time.perf_counter()
    summaries: list[Summary] = []
    pairs: list[PairSummary] = []
    per_env: dict[str, float] = {}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    cases_file = args.out.with_suffix(".cases.jsonl")
    cases_file.unlink(missing_ok=True)
    log = lambda m: print(m, file=sys.stderr, flush=True)  # noqa: E731
    for f in chosen:
        t1 = time.perf_counter()
        one, two = run_family(
            f,
            llm,
            cases=args.cases,
            llm_cases=args.llm_cases,
            pair_cases=args.pair_cases,
            seed=args.seed,
            out=args.out,
            progress=log,
        )
        summaries += one
        pairs += two
        per_env[f.env.split("/")[-1]] = time.perf_counter() - t1
    wall = time.perf_counter() - t0
    for settings in [s.settings for s in summaries] + [s.settings for s in pairs]:  # no machine paths in the results
        settings["env_kwargs"] = {k: ("DATA" if k == "data_dir" else v) for k, v in settings["env_kwargs"].items()}
    write(args, summaries, pairs, wall, per_env)
    return 0


def write(
    args: argparse.Namespace, summaries: list[Summary], pairs: list[PairSummary], wall: float, per_env: dict[str, float]
) -> None:
    """Write the run's ``.md`` and ``.json`` (the ``.cases.jsonl`` is written case by case)."""
    cases_file = args.out.with_suffix(".cases.jsonl")
    args.out.with_suffix(".md").write_text(markdown(summaries, pairs, args, wall, per_env, cases_file))
    args.out.with_suffix(".json").write_text(
        json.dumps(
            {
                "command": command(args),
                "load": round(args.load, 1),
                "wall_s": round(wall, 1),
                "per_env_s": {k: round(v, 1) for k, v in per_env.items()},
                "summaries": [summary_dict(s) for s in summaries],
                "two_fault": [pair_summary_dict(s) for s in pairs],
            },
            indent=1,
        )
    )
    print(args.out.with_suffix(".md").read_text())


if __name__ == "__main__":
    raise SystemExit(main())
