"""MASkills with every role on the embedded model: does a trained skill library beat no skills,
hand-written skills and prompt-only LangMARL at the same LLM-call budget? (issue 12)

Per env (5-piston Pistonball with hold 25 and 50 cycles: 2 decisions a piston; GSM8K, solver
then verifier), six teams are scored on the same held-out test seeds:

=================================  ==============================================================
no skills                          every agent acts from the base instruction alone
hand-written skills                ``examples/skills/<env>``, unchanged
trained skills (MASkills)          ``lang-pz train --method maskills`` from the hand-written ones
prompt-only LangMARL               ``lang-pz train`` (text policies) from the base instruction
MASkills without rollback          ``skill_rollback: false`` (every edit kept unvalidated)
MASkills w/o per-invocation credit ``skill_credit: episode`` (every skill shown shares the outcome)
=================================  ==============================================================

The four trained teams get the same budget of *uncached* LLM calls (``max_llm_calls``; each
training run has its own empty response cache, so none is served by another's replies; the
budget is checked before each iteration, so a run may end a little over it: the calls used are
reported). The base instruction is the bench's per-env one (:mod:`lang_pz.bench.teams`). Scores
are means over the test seeds with 95 % BCa bootstrap intervals (over those seeds: one training
run per arm, so the interval is about the test episodes, not about training's own variance).

    python benchmarks/skills_experiment.py --data-dir DATA      # the committed results
    python benchmarks/skills_experiment.py --data-dir DATA --envs pistonball --budget-pistonball 60   # quick

Writes ``benchmarks/results/skills.{json,md,png}`` (``--out``, ``--name``; in the ``.md`` only the
part between the generated markers is rewritten) and the run folders under ``--work`` (default
``runs/skills_experiment``). Re-running skips arms already trained in ``--work``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this checkout's lang_pz, whichever one is installed
ARMS = (
    "no skills",
    "hand-written skills",
    "trained skills (MASkills)",
    "prompt-only LangMARL",
    "MASkills without rollback",
    "MASkills w/o per-invocation credit",
)
TRAINED = {  # arm -> TrainConfig fields of its training run
    "trained skills (MASkills)": {"method": "maskills"},
    "prompt-only LangMARL": {"method": "langmarl"},
    "MASkills without rollback": {"method": "maskills", "maskills": {"skill_rollback": False}},
    "MASkills w/o per-invocation credit": {"method": "maskills", "maskills": {"skill_credit": "episode"}},
}


def env_cases(args: argparse.Namespace) -> dict[str, dict[str, Any]]:
    return {
        "pistonball": {
            "env_id": "butterfly/pistonball-v0",
            "env_kwargs": {"n_pistons": 5, "hold": 25, "max_cycles": 50},
            "objective": "team_return",
            "skills": "pistonball",
            "budget": args.budget_pistonball,
            "validation_seeds": [1000, 1001],
            "test_seeds": list(range(2000, 2000 + args.test_pistonball)),
        },
        "gsm8k": {
            "env_id": "tasks/gsm8k-v0",
            "env_kwargs": {"data_dir": str(args.data_dir)},
            "objective": "return:solver",
            "skills": "gsm8k",
            "budget": args.budget_gsm8k,
            "validation_seeds": [1000, 1001],
            "test_seeds": list(range(2000, 2000 + args.test_gsm8k)),
        },
    }


def backends(cache: Path, skills: bool, n_threads: int | None) -> dict[str, Any]:
    """Every role on the embedded model with its own response cache in ``cache``; a skills actor
    gets a second instance for skill choices (:class:`lang_pz.skills.team.RoleRouter`)."""
    from lang_pz.backends import LlamaCppBackend
    from lang_pz.skills.policy import CHOOSE_ROLE
    from lang_pz.skills.team import RoleRouter

    def llm() -> LlamaCppBackend:
        return LlamaCppBackend(cache=cache, n_threads=n_threads)

    actor = RoleRouter(llm(), {CHOOSE_ROLE: llm()}) if skills else llm()
    learner = llm()
    return {"actor": actor, "critic": learner, "optimiser": learner}


def close(bs: dict[str, Any]) -> None:
    for b in {id(b): b for b in bs.values()}.values():
        b.close()


def train_arm(
    name: str, arm: str, case: dict[str, Any], work: Path, base: str, n_threads: int | None, seed: int = 0
) -> dict:
    """Train one arm (resuming its run folder if it exists) and return what it produced."""
    from lang_pz.runs import RunFolder, read_policies
    from lang_pz.skills.files import read_library
    from lang_pz.training import TrainConfig, train

    slug = arm.split(" (")[0].replace(" ", "_").replace("/", "").lower()
    run = work / name / slug
    fields = TRAINED[arm]
    maskills = fields["method"] == "maskills"
    bs = backends(work / "cache" / name / slug, maskills, n_threads)
    t0 = time.perf_counter()
    try:
        if (run / "final").is_dir():
            pass  # finished earlier
        elif (run / "config.json").exists():
            train(resume=run, backends=bs)
        else:
            cfg = TrainConfig(
                env_id=case["env_id"],
                env_kwargs=case["env_kwargs"],
                objective=case["objective"],
                iterations=50,
                episodes_per_iteration=1,
                seed=seed,
                validation_seeds=case["validation_seeds"],
                initial_policy=base,
                max_llm_calls=case["budget"],
                run_dir=str(run),
                method=fields["method"],
                **(
                    {
                        "maskills": {
                            "skills": str(ROOT / "examples" / "skills" / case["skills"]),
                            "skill_reruns": 2,
                            **fields.get("maskills", {}),
                        }
                    }
                    if maskills
                    else {}
                ),
            )
            train(cfg, backends=bs)
    finally:
        close(bs)
    folder = RunFolder(run)
    done = folder.completed_iterations()
    out = {
        "run_dir": str(run),
        "iterations": len(done),
        "train_seconds": round(time.perf_counter() - t0, 1),
        "uncached_calls": done[-1]["uncached_calls_total"] if done else 0,
        "calls": done[-1]["calls_total"] if done else 0,
        "kept": sum(len(d["metrics"]["accepted_agents"]) for d in done),
        "proposed": sum(len(d["metrics"]["changed_agents"]) for d in done),
    }
    if maskills:
        lib = read_library(folder.final_skills)
        events = [e for d in done for e in d.get("skill_events", [])]
        out.update(
            library_version=lib.version,
            skills=[f"{sc}/{s.name}" for sc, s in lib],
            rolled_back=sum(e["event"] == "rolled_back" for e in events),
            edits=[f"{e['label']}: {e['event']}" for e in events],
        )
    else:
        out["policies"] = read_policies(folder.final_policies)
    return out


def score(
    name: str, case: dict[str, Any], work: Path, arm: str, trained: dict | None, base: str, n_threads: int | None
) -> dict:
    """Held-out test of one arm's team: per-seed objective and what the agents chose."""
    import lang_pz
    from lang_pz.bench.stats import bootstrap_interval
    from lang_pz.objectives import make_objective
    from lang_pz.skills.files import read_library
    from lang_pz.skills.library import SkillLibrary
    from lang_pz.skills.policy import SkillPolicy, invocations
    from lang_pz.training.steps import collect

    env = lang_pz.make(case["env_id"], **case["env_kwargs"])
    agents = list(env.possible_agents)
    if arm == "no skills":
        lib, texts = SkillLibrary(), dict.fromkeys(agents, base)
    elif arm == "hand-written skills":
        lib, texts = read_library(ROOT / "examples" / "skills" / case["skills"]), dict.fromkeys(agents, base)
    elif arm == "prompt-only LangMARL":
        lib, texts = SkillLibrary(), dict(trained["policies"])
    else:
        lib, texts = read_library(Path(trained["run_dir"]) / "final" / "skills"), dict.fromkeys(agents, base)
    bs = backends(work / "cache" / name / "eval", True, n_threads)
    t0 = time.perf_counter()
    try:
        trajs = collect(
            env,
            lambda e: {a: SkillPolicy(texts[a], bs["actor"], lib, agent=a) for a in agents},
            case["test_seeds"],
            list(range(len(case["test_seeds"]))),
            desc=f"{name}: {arm}",
        )
    finally:
        close(bs)
        env.close()
    obj = make_objective(case["objective"], agents, case["env_id"])
    values = [obj(t) for t in trajs]
    lo, hi = bootstrap_interval(values)
    picks = Counter(i.skill for t in trajs for i in invocations(t))
    offered = sum(1 for t in trajs for s in t.steps if s.meta.get("skills", {}).get("offered"))
    replies = [s.raw_output for t in trajs for s in t.steps]
    return {
        "values": values,
        "mean": sum(values) / len(values),
        "ci": [lo, hi],
        "test_seconds": round(time.perf_counter() - t0, 1),
        "library": [f"{sc}/{s.name}" for sc, s in lib],
        "invoked": dict(picks),
        "offered_decisions": offered,
        "none_chosen": offered - sum(picks.values()),
        "replies": dict(Counter(replies).most_common(5)),
        "usage": bs["actor"].usage.as_dict(),
    }


def run_env(name: str, args: argparse.Namespace) -> dict:
    from lang_pz.bench.teams import default_instruction

    case = env_cases(args)[name]
    base = default_instruction(case["env_id"])
    work = args.work
    t0 = time.perf_counter()
    trained = {arm: train_arm(name, arm, case, work, base, args.n_threads, args.train_seed) for arm in TRAINED}
    arms = {
        arm: {**score(name, case, work, arm, trained.get(arm), base, args.n_threads), **trained.get(arm, {})} for arm in ARMS
    }
    return {
        "env": name,
        "train_seed": args.train_seed,
        **{k: v for k, v in case.items() if k != "env_kwargs"},
        "env_kwargs": {k: v for k, v in case["env_kwargs"].items() if k != "data_dir"},
        "base_instruction": base,
        "seconds": round(time.perf_counter() - t0, 1),
        "arms": arms,
    }


def plot(results: list[dict], path: Path) -> None:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(4.2 * len(results), 4.6), dpi=110)
    FigureCanvasAgg(fig)
    for k, res in enumerate(results):
        ax = fig.add_subplot(1, len(results), k + 1)
        arms = list(res["arms"].values())
        means = [a["mean"] for a in arms]
        lo = [a["mean"] - a["ci"][0] if a["ci"][0] == a["ci"][0] else 0 for a in arms]
        hi = [a["ci"][1] - a["mean"] if a["ci"][1] == a["ci"][1] else 0 for a in arms]
        xs = range(len(arms))
        ax.bar(xs, means, color=["#999", "#69c", "#2a7", "#c84", "#8a5", "#a6a"][: len(arms)], yerr=[lo, hi], capsize=4)
        for x, a in zip(xs, arms):
            ax.scatter([x] * len(a["values"]), a["values"], s=9, color="k", alpha=0.5, zorder=3)
        ax.set_xticks(list(xs))
        ax.set_xticklabels(
            [
                n.replace(" (MASkills)", "")
                .replace("MASkills ", "")
                .replace("w/o per-invocation credit", "no per-use credit")
                for n in res["arms"]
            ],
            rotation=35,
            ha="right",
            fontsize=8,
        )
        ax.set_ylabel(res["objective"])
        ax.set_title(f"{res['env']} ({len(res['test_seeds'])} held-out seeds; budget {res['budget']})", fontsize=9)
        ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, format="png")


def fmt(x: float) -> str:
    return "-" if x != x else f"{x:.3g}"


def table(results: list[dict]) -> str:
    lines = [
        "| env | team | held-out mean | 95 % interval | training: iterations, uncached calls (all) | edits kept / "
        "proposed (rolled back) | final library or policies |",
        "|---|---|---|---|---|---|---|",
    ]
    for res in results:
        for arm, a in res["arms"].items():
            train_cell = f"{a['iterations']}, {a['uncached_calls']} ({a['calls']})" if "iterations" in a else "-"
            edits = (
                f"{a['kept']} / {a['proposed']}" + (f" ({a['rolled_back']})" if "rolled_back" in a else "")
                if "kept" in a
                else "-"
            )
            what = ", ".join(a["library"]) or "(no skills)"
            if "policies" in a:
                what = "; ".join(sorted(set(a["policies"].values())))
            lines.append(
                f"| {res['env']} | {arm} | {fmt(a['mean'])} | [{fmt(a['ci'][0])}, {fmt(a['ci'][1])}] | "
                f"{train_cell} | {edits} | {what} |"
            )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, required=True, help="folder holding gsm8k/test.jsonl")
    parser.add_argument("--envs", default="pistonball,gsm8k")
    parser.add_argument("--budget-pistonball", type=int, default=200, help="uncached LLM calls per training run")
    parser.add_argument("--budget-gsm8k", type=int, default=40)
    parser.add_argument("--test-pistonball", type=int, default=6, help="held-out test seeds")
    parser.add_argument("--test-gsm8k", type=int, default=6)
    parser.add_argument("--train-seed", type=int, default=0, help="seed of the first training episode (then +1 ...)")
    parser.add_argument("--name", default="skills", help="output files: OUT/NAME.{json,md,png}")
    parser.add_argument("--jobs", type=int, default=1, help="envs run in parallel processes")
    parser.add_argument("--n-threads", type=int, default=None, help="llama.cpp threads per model (default: its own)")
    parser.add_argument("--work", type=Path, default=Path("runs/skills_experiment"))
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results")
    args = parser.parse_args()
    os.environ.setdefault("TQDM_DISABLE", "1")
    names = [n.strip() for n in args.envs.split(",") if n.strip()]
    t0 = time.perf_counter()
    if args.jobs > 1:
        with ProcessPoolExecutor(args.jobs) as pool:
            results = list(pool.map(run_env, names, [args] * len(names)))
    else:
        results = [run_env(n, args) for n in names]
    wall = round(time.perf_counter() - t0, 1)
    load = os.getloadavg()
    args.out.mkdir(parents=True, exist_ok=True)
    meta = {
        "wall_seconds": wall,
        "load_average_at_end": [round(x, 2) for x in load],
        "cpus": os.cpu_count(),
        "command": "python benchmarks/skills_experiment.py "
        + " ".join(f"--{k.replace('_', '-')} {v}" for k, v in vars(args).items() if k not in ("out", "work", "data_dir"))
        + " --data-dir DATA",
    }
    (args.out / f"{args.name}.json").write_text(json.dumps({"meta": meta, "results": results}, indent=1) + "\n")
    plot(results, args.out / f"{args.name}.png")
    generated = "\n".join(
        [
            f"Command: `{meta['command']}`  ",
            f"Wall time: {wall:.0f} s on {meta['cpus']} cores "
            f"(load average at the end {meta['load_average_at_end']}), from an empty cache; training "
            f"episodes from seed {args.train_seed}.",
            "",
            table(results),
            "",
            f"![results]({args.name}.png)",
            "",
            "What the agents did on the held-out seeds:",
            "",
            behaviour(results),
        ]
    )
    write_generated(args.out / f"{args.name}.md", generated)
    print(generated)


GENERATED = (
    "<!-- generated by benchmarks/skills_experiment.py: everything between these markers is rewritten -->",
    "<!-- end of generated part -->",
)


def write_generated(path: Path, text: str) -> None:
    """Replace the generated part of ``path`` (between :data:`GENERATED`'s markers), keeping the rest."""
    head, tail = (
        "# MASkills experiment: trained skill libraries against no skills, hand-written skills and prompt-only LangMARL\n\n",
        "",
    )
    if path.exists() and GENERATED[0] in (old := path.read_text()) and GENERATED[1] in old:
        head, rest = old.split(GENERATED[0], 1)
        tail = rest.split(GENERATED[1], 1)[1]
    path.write_text(f"{head}{GENERATED[0]}\n{text}\n{GENERATED[1]}{tail}")


def behaviour(results: list[dict]) -> str:
    lines = [
        "| env | team | skill invocations (of decisions offered one) | most frequent replies | seconds: training, test |",
        "|---|---|---|---|---|",
    ]
    for res in results:
        for arm, a in res["arms"].items():
            inv = ", ".join(f"{k} x{n}" for k, n in a["invoked"].items())
            inv = f"{inv} (none x{a['none_chosen']}; {a['offered_decisions']})" if a["offered_decisions"] else "-"
            replies = ", ".join(f"`{' '.join(k.split())[:40].replace('|', '/')}` x{n}" for k, n in a["replies"].items())
            lines.append(
                f"| {res['env']} | {arm} | {inv} | {replies} | {a.get('train_seconds', '-')}, {a['test_seconds']} |"
            )
    return "\n".join(lines)


if __name__ == "__main__":
    main()
