"""Which agent, which step? The fault benchmark for every critic configuration, next to chance
and trivial rules (issues 15 and 21).

Environments (:func:`families`, one line each): 5-piston Pistonball, its late-effect cases (the
team's reward first differs from the unfaulted episode's 3 or more steps after the fault),
Overcooked cramped_room and asymmetric_advantages (skills, horizon 40), GSM8K and MATH-500
(solver + verifier, with ``--data-dir``). One agent of a good scripted team is made faulty for a
short window (``misplay``: an action the team itself plays, in the wrong state; math
``harmful``: a wrong final answer); the faulty agent is drawn stratified (each agent equally
often); a case counts only if the fault lowered the team return by at least 2 %. Pistonball
also gets two- and three-fault cases, scored "all at the bottom"
(:mod:`lang_pz.evaluation.pairs`), and every family with a scripted team no-fault cases
(:func:`nofault_families`: the heuristic pistons on their 10 lowest-return seeds of 0-99, the
greedy cooks on three layouts and horizons), scored by false blame
(:mod:`lang_pz.evaluation.nofault`).

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
  :mod:`lang_pz.critics.coalition` (exact Shapley values over agents' decisive windows), with
  the same blind replacements; each runs its own re-runs (counted per case);
- ``own_policy``: :mod:`lang_pz.critics.own`, the agents' deviations from their own policy
  texts (the base team's, :data:`lang_pz.evaluation.bases.BASE_TEXTS`), no reference;
- every re-run critic gives a verdict (:mod:`lang_pz.critics.significance`); the rows marked
  ``no verdict`` are the same critics without it (the same re-runs, as before the rule), and
  ``coalition ... up to 4 named`` lets the verdict name a group.

The LLM critics (``Critic.llm``) run on the first ``--llm-cases`` cases of each environment and
the others on ``--cases``; the first ``--llm-cases`` cases are the same in both. Writes
``benchmarks/results/credit_benchmark.md``, ``.json`` and ``.cases.jsonl`` (``--out`` to change)::

    nice -n 10 python benchmarks/credit_benchmark.py --data-dir DATA     # the full run
    python benchmarks/credit_benchmark.py --cases 2 --llm-cases 0 --pair-cases 2 --nofault-cases 2 \
        --only butterfly/pistonball-v0
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's lang_pz, not an installed one
sys.path.insert(0, str(Path(__file__).resolve().parent))
from credit_report import markdown

from lang_pz.backends import LlamaCppBackend
from lang_pz.critics import CentralCritic
from lang_pz.critics.coalition import CoalitionCritic
from lang_pz.critics.decisive import DecisiveCritic
from lang_pz.critics.difference import DifferenceCritic
from lang_pz.critics.own import OwnPolicyCritic
from lang_pz.critics.significance import DEFAULT_SIGNIFICANCE
from lang_pz.evaluation import CriticSpec, run_fault_benchmark
from lang_pz.evaluation.cases import late_effect
from lang_pz.evaluation.faults import CaseContext
from lang_pz.evaluation.nofault import (
    NoFaultCase,
    NoFaultSummary,
    lowest_return_seeds,
    nofault_summary_dict,
    pool_nofault,
    run_nofault_benchmark,
)
from lang_pz.evaluation.pairs import PairSummary, pair_summary_dict, run_pair_benchmark
from lang_pz.evaluation.summary import Rate, Summary, every_rule_fails, summary_dict

ROOT = Path(__file__).resolve().parent
#: The default numbers of cases (a full run).
DEFAULTS = {"cases": 20, "llm_cases": 8, "pair_cases": 10, "nofault_cases": 10}
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
    Critic(f"counterfactual/{BLIND}, no verdict", lambda llm: DifferenceCritic(significance=None), (BLIND,)),
    Critic(f"decisive/{BLIND}", lambda llm: DecisiveCritic()),  # offered words; free text: the default
    Critic(f"decisive/{BLIND}, no verdict", lambda llm: DecisiveCritic(significance=None)),
    Critic(f"coalition/{BLIND}", lambda llm: CoalitionCritic()),
    Critic(f"coalition/{BLIND}, up to 4 named", lambda llm: CoalitionCritic(max_blamed=4)),
    Critic(f"coalition/{BLIND}, no verdict", lambda llm: CoalitionCritic(significance=None)),
    Critic("own_policy", build=lambda llm, ctx: OwnPolicyCritic(texts=ctx.texts)),
]


@dataclass(frozen=True)
class Family:
    """One benchmarked family of cases (one line of :func:`families`).

    Attributes:
        env / kw: the id and its :func:`lang_pz.make` keyword arguments.
        fault / window: the fault and the decisions it replaces.
        blind: the evidence without a reference (``{blind}`` in :data:`CRITICS`).
        groups: the multi-fault sizes also run (needs more agents than faults).
        data: needs ``--data-dir``.
        late: keep only late-effect cases (:func:`~lang_pz.evaluation.cases.late_effect`, this
            many steps; 0: every case).
        label: the family's name in the results (default ``env``).
    """

    env: str
    kw: dict[str, Any] = field(default_factory=dict)
    fault: str = "misplay"
    window: int = 2
    blind: str = "alternatives"
    groups: tuple[int, ...] = ()
    data: bool = False
    late: int = 0
    label: str | None = None

    @property
    def pairs(self) -> bool:
        """Whether multi-fault cases are run."""
        return bool(self.groups)

    @property
    def name(self) -> str:
        """The family's name in the results."""
        return self.label or self.env


PISTONBALL = {"n_pistons": 5, "hold": 1, "max_cycles": 20}


def families(data_dir: Path | None) -> list[Family]:
    """The benchmarked families (math tasks only with a data folder)."""
    data = {"data_dir": str(data_dir), "split": "test"} if data_dir else {}
    out = [
        Family("butterfly/pistonball-v0", PISTONBALL, groups=(2, 3)),
        Family("butterfly/pistonball-v0", PISTONBALL, late=3, label="pistonball late-effect"),
        Family("overcooked/cramped_room-v0", {"actions": "macro", "horizon": 40}),
        Family("overcooked/asymmetric_advantages-v0", {"actions": "macro", "horizon": 40}),
        Family("tasks/gsm8k-v0", data, "harmful", 1, "default", data=True),
        Family("tasks/math500-v0", data, "harmful", 1, "default", data=True),
    ]
    return [f for f in out if data_dir or not f.data]


def nofault_families(cases: int) -> list[tuple[str, str, list[NoFaultCase]]]:
    """``(label, env id, cases)`` of the no-fault families: the heuristic pistons on their
    ``cases`` lowest-return seeds of 0-99, and the greedy cooks (a deterministic env: a case is
    a layout and a horizon) on coordination_ring (horizons 40-80: at 40 they deliver nothing),
    asymmetric_advantages (40-60) and cramped_room (40, 50), at most ``cases`` of them."""
    cooks = [("coordination_ring", 40), ("coordination_ring", 50), ("asymmetric_advantages", 40)]
    cooks += [("cramped_room", 40), ("coordination_ring", 60), ("asymmetric_advantages", 50)]
    cooks += [("coordination_ring", 70), ("coordination_ring", 80), ("asymmetric_advantages", 60), ("cramped_room", 50)]
    out = [
        (
            "pistonball no fault",
            "butterfly/pistonball-v0",
            lowest_return_seeds("butterfly/pistonball-v0", PISTONBALL, range(100), cases),
        )
    ]
    for layout in dict.fromkeys(lay for lay, _ in cooks[:cases]):
        horizons = [h for lay, h in cooks[:cases] if lay == layout]
        out.append(
            (
                "overcooked no fault",
                f"overcooked/{layout}-v0",
                [NoFaultCase(0, {"actions": "macro", "horizon": h}) for h in horizons],
            )
        )
    return out


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
    """One family's rows: the LLM critics on ``llm_cases`` cases, the others on ``cases``
    (the first ``llm_cases`` cases are the same), and for each size of ``f.groups`` every critic
    on ``pair_cases`` multi-fault cases (the LLM critics on at most ``llm_cases`` of them)."""
    chosen = CRITICS if critics is None else critics
    common: dict[str, Any] = {"seed": seed, "fault": f.fault, "env_kwargs": f.kw, "window": f.window, "progress": progress}
    with_llm = [c.spec(llm, f.blind) for c in chosen if c.llm]
    computed = [c.spec(llm, f.blind) for c in chosen if not c.llm]
    singles: list[Summary] = []
    pairs: list[PairSummary] = []
    cases_file = out.with_suffix(".cases.jsonl") if out else None
    extra: dict[str, Any] = {"label": f.label, "keep": late_effect(f.late) if f.late else None}
    seeds = 40 if f.late else 10  # late-effect cases are rarer (14 of 115 hurting draws)
    if with_llm and llm_cases:
        singles += run_fault_benchmark(
            f.env, with_llm, cases=llm_cases, out=cases_file, max_seeds=seeds * llm_cases, **common, **extra
        )
    if computed and cases:
        singles += run_fault_benchmark(
            f.env, computed, cases=cases, out=cases_file, max_seeds=seeds * cases, **common, **extra
        )
    for k in f.groups if pair_cases else ():
        if with_llm and llm_cases:
            pairs += run_pair_benchmark(
                f.env, with_llm, cases=min(llm_cases, pair_cases), faults=k, out=cases_file, **common
            )
        if computed:
            pairs += run_pair_benchmark(f.env, computed, cases=pair_cases, faults=k, out=cases_file, **common)
    return singles, pairs


def run_nofault(
    llm: Any, *, cases: int, seed: int, out: Path | None, progress: Callable[[str], None] | None = None
) -> list[NoFaultSummary]:
    """The no-fault rows (:func:`nofault_families`), every critic but the LLM ones, merged per
    label (the cooks' layouts are one family)."""
    cases_file = out.with_suffix(".cases.jsonl") if out else None
    records: dict[tuple[str, str], list[NoFaultSummary]] = {}
    for label, env, chosen in nofault_families(cases):
        specs = [c.spec(llm, "alternatives") for c in CRITICS if not c.llm]  # both name actions
        for s in run_nofault_benchmark(env, specs, chosen, label=label, seed=seed, out=cases_file, progress=progress):
            records.setdefault((label, s.critic), []).append(s)
    return [pool_nofault(v) for v in records.values()]


def command(args: argparse.Namespace) -> str:
    """The one command that reproduces every row of the results."""
    return (
        f"nice -n 10 python benchmarks/credit_benchmark.py{' --data-dir DATA' if args.data_dir else ''} "
        f"--cases {args.cases} --llm-cases {args.llm_cases} --pair-cases {args.pair_cases} "
        f"--nofault-cases {args.nofault_cases} --seed {args.seed} --threads {args.threads}"
        + "".join(f" --only '{o}'" for o in args.only)
    )


def _rate(d: dict[str, Any]) -> Rate:
    return Rate(d["value"], (d["ci95"][0], d["ci95"][1]))


def rescore(out: Path) -> tuple[list[Summary], list[PairSummary], list[NoFaultSummary], dict[str, Any]]:
    """The summaries of a finished run (``out``'s ``.json``), with the ``every trivial rule
    fails`` column recomputed from its ``.cases.jsonl`` by :func:`every_rule_fails` (the run
    itself is not repeated: every other number is the run's)."""
    saved = json.loads(out.with_suffix(".json").read_text())
    records = [json.loads(x) for x in out.with_suffix(".cases.jsonl").read_text().splitlines()]
    summaries, pairs, nofault = [], [], []
    for d in saved["summaries"]:
        mine = [r for r in records if not r.get("kind") and r["source"] == d["source"] and d["critic"] in r["critics"]]
        hard = [r["critics"][d["critic"]]["agent_hit"] for r in mine if every_rule_fails(r)]
        d = {**d, "hard_cases": len(hard), "agent_hard": Rate.of(hard)}
        for k in ("agent", "step", "joint"):
            d[k] = _rate(d[k])
        d["baselines"] = {b: {k: _rate(v) for k, v in r.items()} for b, r in d["baselines"].items()}
        summaries.append(Summary(**d))
    for d in saved.get("multi_fault", []):
        kind = {2: "two-fault", 3: "three-fault"}[d["faults"]]
        mine = [r for r in records if r.get("kind") == kind and r["source"] == d["source"] and d["critic"] in r["critics"]]
        hard = [r["critics"][d["critic"]]["bottom"] for r in mine if every_rule_fails(r, "bottom_expected", "chance")]
        d = {**d, "hard_cases": len(hard), "hard": Rate.of(hard), "bottom": _rate(d["bottom"])}
        d["baselines"] = {b: _rate(v) for b, v in d["baselines"].items()}
        pairs.append(PairSummary(**d))
    for d in saved.get("no_fault", []):
        d = {**d, "blames": _rate(d["blames"]), "singles_out": _rate(d["singles_out"])}
        d["baselines"] = {b: _rate(v) for b, v in d["baselines"].items()}
        nofault.append(NoFaultSummary(**d))
    return summaries, pairs, nofault, saved


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--data-dir",
        type=Path,
        default=os.environ.get("LANG_PZ_DATA_DIR"),
        help="benchmark data folder with gsm8k/ and math500/ (default $LANG_PZ_DATA_DIR; none: no math tasks)",
    )
    ap.add_argument("--cases", type=int, default=DEFAULTS["cases"], help="kept single-fault cases per family")
    ap.add_argument(
        "--llm-cases", type=int, default=DEFAULTS["llm_cases"], help="the first cases also given to the LLM critics"
    )
    ap.add_argument("--pair-cases", type=int, default=DEFAULTS["pair_cases"], help="kept two- and three-fault cases")
    ap.add_argument(
        "--nofault-cases", type=int, default=DEFAULTS["nofault_cases"], help="no-fault cases per family (0: none)"
    )
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--only", action="append", default=[], help="run only this family (environment id or label; repeatable)")
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
        old, old_pairs, old_nofault, saved = rescore(args.out)
        args.load = saved.get("load", args.load)
        write(args, old, old_pairs, saved["wall_s"], saved["per_env_s"], old_nofault)
        return 0
    every = families(args.data_dir)
    chosen = [f for f in every if not args.only or f.env in args.only or f.name in args.only]
    if not chosen and not (args.only and "no fault" in args.only):
        ap.error(f"--only {args.only} names no benchmarked family ({[f.name for f in every]} or 'no fault')")
    llm = LlamaCppBackend(n_threads=args.threads, cache=False) if args.llm_cases else None  # no replay: real wall time
    t0 = time.perf_counter()
    summaries: list[Summary] = []
    pairs: list[PairSummary] = []
    nofault: list[NoFaultSummary] = []
    per_env: dict[str, float] = {}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    cases_file = args.out.with_suffix(".cases.jsonl")
    cases_file.unlink(missing_ok=True)
    log = lambda m: print(m, file=sys.stderr, flush=True)  # noqa: E731
    if args.nofault_cases and (not args.only or "no fault" in args.only):
        t1 = time.perf_counter()
        nofault = run_nofault(llm, cases=args.nofault_cases, seed=args.seed, out=args.out, progress=log)
        per_env["no fault"] = time.perf_counter() - t1
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
        per_env[f.label or f.env.split("/")[-1]] = time.perf_counter() - t1
    wall = time.perf_counter() - t0
    for settings in [s.settings for s in summaries] + [s.settings for s in pairs]:  # no machine paths in the results
        settings["env_kwargs"] = {k: ("DATA" if k == "data_dir" else v) for k, v in settings["env_kwargs"].items()}
    write(args, summaries, pairs, wall, per_env, nofault)
    return 0


def write(
    args: argparse.Namespace,
    summaries: list[Summary],
    pairs: list[PairSummary],
    wall: float,
    per_env: dict[str, float],
    nofault: list[NoFaultSummary] | None = None,
) -> None:
    """Write the run's ``.md`` and ``.json`` (the ``.cases.jsonl`` is written case by case)."""
    cases_file = args.out.with_suffix(".cases.jsonl")
    page = markdown(
        summaries, pairs, args, wall, per_env, cases_file, nofault, command_line=command(args), defaults=DEFAULTS
    )
    args.out.with_suffix(".md").write_text(page)
    args.out.with_suffix(".json").write_text(
        json.dumps(
            {
                "command": command(args),
                "load": round(args.load, 1),
                "wall_s": round(wall, 1),
                "per_env_s": {k: round(v, 1) for k, v in per_env.items()},
                "significance": DEFAULT_SIGNIFICANCE.describe(),
                "summaries": [summary_dict(s) for s in summaries],
                "multi_fault": [pair_summary_dict(s) for s in pairs],
                "no_fault": [nofault_summary_dict(s) for s in nofault or []],
            },
            indent=1,
        )
    )
    print(args.out.with_suffix(".md").read_text())


if __name__ == "__main__":
    raise SystemExit(main())
