"""Does per-agent language credit turn identical pistons into a winning team? (issue: evidence)

Trains 5-piston discrete Pistonball from identical policies ("Always push up.") with every role
(actor, critic, optimiser) on the embedded model, under the three critic modes
``central_credit``, ``central_global`` and ``independent``, for several training seeds with the
same LLM-call budget each, then evaluates the policies of every iteration on held-out episode
seeds. Writes ``benchmarks/results/credit_modes.{md,json,png}`` and the run folders under
``--out``.

    python benchmarks/credit_modes.py                 # the committed results (about 20-30 min)
    python benchmarks/credit_modes.py --seeds 1 --iterations 2 --out /tmp/cm   # a quick look

Evidence per mode: ``central_credit`` gets per-agent counterfactual re-runs (one agent
replaced by each other action), ``central_global`` team-level ones (every agent replaced
together), ``independent`` none (each critic sees one agent's own play only). The evidence gate
and validation on held-out seeds apply to every mode alike.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import lang_pz
from lang_pz.backends import make_backend
from lang_pz.policies.llm import LLMPolicy
from lang_pz.runs import iter_dir, read_policies
from lang_pz.training import TrainConfig, evaluate, train

MODES = ("central_credit", "central_global", "independent")
ENV_KWARGS = {"n_pistons": 5, "hold": 5}
START = "Always push up."


def held_out_return(policies: dict[str, str], test_seeds: list[int], llm, env, memo: dict) -> float:
    """Mean team return of ``policies`` (LLM actors) over the held-out test seeds."""
    key = tuple(policies[a] for a in env.possible_agents)
    if key not in memo:
        rets = evaluate(env, {a: LLMPolicy(p, llm) for a, p in policies.items()}, test_seeds)
        memo[key] = sum(rets) / len(rets)
    return memo[key]


def run_one(mode: str, s: int, args: argparse.Namespace) -> dict:
    """Train one (mode, training seed) run in this process, then evaluate every iteration's
    policies on the held-out test seeds. Resumes a run folder that already exists."""
    llm = make_backend("embedded")
    env = lang_pz.make("butterfly/pistonball-v0", **ENV_KWARGS)
    memo: dict = {}
    run = args.out / f"{mode}_seed{s}"
    cfg = TrainConfig(
        env_kwargs=ENV_KWARGS, iterations=args.iterations, episodes_per_iteration=1, seed=100 * s,
        validation_seeds=[1000 + 10 * s + k for k in range(args.validation_seeds)], tolerance=args.tolerance,
        critic_mode=mode, initial_policy=START, counterfactual=[] if mode == "independent" else ["alternatives"],
        max_llm_calls=args.budget, run_dir=str(run),
    )
    res = train(resume=run) if (run / "config.json").exists() else train(cfg)
    curve = [held_out_return(read_policies(iter_dir(run, m.iteration) / "policies"), args.test_seeds, llm, env, memo)
             for m in res.metrics]
    curve.append(held_out_return(res.final_policies, args.test_seeds, llm, env, memo))
    row = {
        "mode": mode, "seed": s, "held_out_per_iteration": curve, "final_held_out": curve[-1],
        "llm_calls": sum(m.llm_calls for m in res.metrics), "iterations": len(res.metrics),
        "accepted": sum(len(m.accepted_agents) for m in res.metrics),
        "rejected": sum(len(m.changed_agents) - len(m.accepted_agents) for m in res.metrics),
        "stopped": res.stopped, "final_policies": res.final_policies,
        "iterations_log": [
            {"iteration": m.iteration, "train_return": m.train_return, "val_return": m.val_return,
             "candidate_val_return": m.candidate_val_return, "changed": m.changed_agents,
             "accepted": m.accepted_agents, "llm_calls": m.llm_calls}
            for m in res.metrics
        ],
        "differentiated": len(set(res.final_policies.values())) > 1,
    }
    print(f"{mode} seed {s}: held-out {[round(x, 1) for x in curve]}, {row['llm_calls']} LLM calls", flush=True)
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=2, help="training seeds per mode")
    ap.add_argument("--iterations", type=int, default=6, help="most iterations (the LLM-call budget binds first)")
    ap.add_argument("--budget", type=int, default=3000, help="LLM calls per run (cached calls count)")
    ap.add_argument("--validation-seeds", type=int, default=4, help="held-out validation episodes per check")
    ap.add_argument("--tolerance", type=float, default=-1.0,
                    help="accept a candidate if validation return rises by more than -tolerance")
    ap.add_argument("--test-seeds", type=int, nargs="+", default=[2000, 2001, 2002, 2003, 2004, 2005])
    ap.add_argument("--workers", type=int, default=2, help="runs trained at once (one model each)")
    ap.add_argument("--out", type=Path, default=Path("runs/credit_modes"))
    ap.add_argument("--results", type=Path, default=Path(__file__).parent / "results")
    args = ap.parse_args()
    t0 = time.perf_counter()
    with ProcessPoolExecutor(args.workers) as pool:
        futures = [pool.submit(run_one, mode, s, args) for s in range(args.seeds) for mode in MODES]
        rows = [f.result() for f in futures]
    llm = make_backend("embedded")
    env = lang_pz.make("butterfly/pistonball-v0", **ENV_KWARGS)
    start_return = held_out_return({a: START for a in env.possible_agents}, args.test_seeds, llm, env, {})
    write_results(args, rows, start_return, (time.perf_counter() - t0) / 60)


def write_results(args: argparse.Namespace, rows: list[dict], start_return: float, minutes: float) -> None:
    args.results.mkdir(parents=True, exist_ok=True)
    (args.results / "credit_modes.json").write_text(json.dumps(
        {"start_held_out": start_return, "runs": rows, "minutes": round(minutes, 1), "test_seeds": args.test_seeds,
         "env_kwargs": ENV_KWARGS, "start_policy": START}, indent=1))
    lines = [
        "# Credit modes on 5-piston Pistonball, every role on the embedded SmolLM2-135M",
        "",
        f"Held-out team return: mean over test seeds {args.test_seeds}; spread over {args.seeds} training "
        f"seed(s); at most {args.iterations} iterations and {args.budget} LLM calls per run (cached calls count); "
        f"{args.validation_seeds} validation seeds, tolerance {args.tolerance}; "
        f"whole experiment {minutes:.1f} min. Re-run: `python benchmarks/credit_modes.py`.",
        "",
        "| policies | held-out return (mean ± sd over training seeds) | per seed | LLM calls | agent updates accepted / rejected | differentiated |",
        "|---|---|---|---|---|---|",
        f"| starting (all '{START}') | {start_return:.1f} | - | - | - | no |",
    ]
    for mode in MODES:
        rs = [r for r in rows if r["mode"] == mode]
        finals = [r["final_held_out"] for r in rs]
        sd = statistics.stdev(finals) if len(finals) > 1 else 0.0
        lines.append(
            f"| {mode} | {statistics.mean(finals):.1f} ± {sd:.1f} | {', '.join(f'{x:.1f}' for x in finals)} | "
            f"{', '.join(str(r['llm_calls']) for r in rs)} | "
            f"{sum(r['accepted'] for r in rs)} / {sum(r['rejected'] for r in rs)} | "
            f"{sum(r['differentiated'] for r in rs)} of {len(rs)} |"
        )
    lines += ["", "Runs, per iteration (validation return before -> after; agents changed / accepted):", ""]
    for r in rows:
        lines.append(f"- **{r['mode']} seed {r['seed']}** (held-out per iteration: "
                     f"{', '.join(f'{x:.1f}' for x in r['held_out_per_iteration'])}; {r['stopped'] or 'all iterations'})")
        for m in r["iterations_log"]:
            lines.append(f"  - iteration {m['iteration']}: train {m['train_return']:.1f}, validation "
                         f"{m['val_return']} -> {m['candidate_val_return']}, changed {m['changed'] or '-'}, "
                         f"accepted {m['accepted'] or '-'}, {m['llm_calls']} calls")
        pol = "; ".join(f"{a}: {p}" for a, p in r["final_policies"].items())
        lines.append(f"  - final policies: {pol}")
    (args.results / "credit_modes.md").write_text("\n".join(lines) + "\n")
    plot(args, rows, start_return)
    print("\n".join(lines))


def plot(args: argparse.Namespace, rows: list[dict], start_return: float) -> None:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7, 4.2))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    colours = {"central_credit": "tab:green", "central_global": "tab:blue", "independent": "tab:orange"}
    for mode in MODES:
        for i, r in enumerate(x for x in rows if x["mode"] == mode):
            ys = r["held_out_per_iteration"]
            ax.plot(range(len(ys)), ys, marker="o", color=colours[mode], alpha=0.8,
                    label=mode if i == 0 else None)
    ax.axhline(start_return, color="grey", linestyle="--", label="starting policies")
    ax.set_xlabel("iteration (last point: final policies)")
    ax.set_ylabel("held-out team return")
    ax.set_title("5-piston Pistonball, embedded SmolLM2-135M in every role")
    ax.legend(loc="best", fontsize=8)
    fig.tight_layout()
    fig.savefig(args.results / "credit_modes.png", dpi=110)


if __name__ == "__main__":
    main()
