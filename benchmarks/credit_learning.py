"""Which agent should change? Each critic mode trains a good team with one or two wrong agents.

5-piston Pistonball (hold 25), every role on the embedded SmolLM2-135M. For each training seed s
the wrong agents are drawn at random (one or two of pistons 0-2: from all "down", each of them
pushing up costs the team 187-370 on the measured constant-team table, while pistons 3-4 pushing
up helps), so the right fix is known: those agents, and only those, should change to "down".
Each critic mode (central_credit, counterfactual, central_global, independent) trains from the
same start with the same budget of uncached LLM calls (every run has a cache of its own, so no
run is paid for by another), the same counterfactual re-runs ([alternatives]) and the same
validation and held-out test seeds. Reported per mode, mean and 95 % interval over the seeds:
held-out test return per iteration, wrong agents fixed, right agents changed, uncached calls;
and the agreement of validation with the held-out test on every validated decision (each
candidate and its current team are also played on the test seeds, afterwards).

    python benchmarks/credit_learning.py                          # the committed results
    python benchmarks/credit_learning.py --seeds 1 --iterations 1 --out /tmp/cl   # a quick look

With ``--starts random`` every piston's starting policy is drawn from the training seed (push down,
push up or stay, uniformly), so the start is not "all down plus wrong pistons", and the limit is
known instead: every one of the 3**5 constant teams is played on the same held-out test seeds
(cheap, no model), and each mode's final held-out return is reported as a share of the best one's.
An agent "should not have changed" when its starting word is already the best constant team's word
for it. ``central_global`` can only move the whole team to one word; the best constant team on
these seeds is heterogeneous, which is what the per-agent modes can reach and it cannot.

Every run sets ``langmarl.actor_check`` and uses :class:`checked_langmarl.CheckedLangMARL`
(``--stock``: neither): the optimiser plays each candidate of a supported direction on the
recorded decisions it cites with the run's actor and keeps it only if the actor plays the
direction's word at 90 % of them, and the coalition mode's pair re-runs become joint candidates
of two texts. Each accepted text is reported
with that check and with what the actor played with it in the candidate's validation episodes.

Writes ``benchmarks/results/credit_learning.{md,json,png}`` (``credit_learning_random.*`` with
``--starts random``) and the run folders under ``--out``. To share the runs among processes, give
each ``--only SEEDS`` (``--cache per-seed`` lets a seed's modes share replies), then write the
results from the finished runs with ``--finished-only`` (it trains nothing).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
from checked_langmarl import CheckedLangMARL  # the same folder: joint pair candidates
from credit_learning_tables import accepted_lines, accepted_texts, per_seed, plot, table, word_of

import lang_pz
from lang_pz.backends import make_backend
from lang_pz.runs import RunFolder, read_policies
from lang_pz.training import TrainConfig, evaluate, make_actors, train

MODES = ("central_credit", "counterfactual", "central_global", "independent")
#: Modes a run may name beyond the default four (the reference-free credit modes, when present).
EXTRA_MODES = ("decisive", "coalition")
ENV = {"n_pistons": 5, "hold": 25}
GOOD, BAD = "Always push down.", "Always push up."
HURTING = ("piston_0", "piston_1", "piston_2")  # from all down, pushing up costs 253 / 370 / 187
RESULTS = Path(__file__).resolve().parent / "results"


def wrong_agents(seed: int) -> list[str]:
    """One or two of the pistons whose pushing up hurts, drawn from the training seed."""
    rng = np.random.default_rng(seed)
    return sorted(rng.choice(HURTING, size=int(rng.integers(1, 3)), replace=False).tolist())


WORDS = {"down": GOOD, "up": BAD, "stay": "Always stay."}


def random_start(seed: int) -> dict[str, str]:
    """Each piston's starting policy, drawn uniformly from :data:`WORDS` with the training seed."""
    rng = np.random.default_rng(10_000 + seed)
    return {f"piston_{i}": WORDS[str(w)] for i, w in enumerate(rng.choice(sorted(WORDS), size=5))}


def constant_teams(test_seeds: list[int], saved: Path | None = None) -> list[tuple[tuple[str, ...], float]]:
    """Every constant 5-piston team's mean return on ``test_seeds``, best first (no model).

    ``saved``: a JSON file holding them for these seeds and :data:`ENV` (read if it matches, else
    written), so the processes sharing the seeds (``--only``) play the 3**5 * seeds episodes once.
    """
    import itertools

    from lang_pz.policies.scripted import ConstantPolicy
    from lang_pz.rollout import rollout

    key = {"env": ENV, "test_seeds": list(test_seeds)}
    if saved is not None and saved.exists():
        got = json.loads(saved.read_text())
        if got.get("key") == key:
            return [(tuple(team), float(v)) for team, v in got["teams"]]
    env = lang_pz.make("butterfly/pistonball-v0", **ENV)
    out = []
    try:
        for team in itertools.product(("down", "stay", "up"), repeat=5):
            pols = {f"piston_{i}": ConstantPolicy(w) for i, w in enumerate(team)}
            out.append((team, float(np.mean([rollout(env, pols, seed=s).team_return for s in test_seeds]))))
    finally:
        env.close()
    out = sorted(out, key=lambda tv: -tv[1])
    if saved is not None:
        saved.parent.mkdir(parents=True, exist_ok=True)
        saved.write_text(json.dumps({"key": key, "teams": out}) + "\n")
    return out


def decisions(run: Path) -> list[tuple[dict[str, str], dict[str, str], float, float]]:
    """Every validated decision: (current team, candidate team, current value, candidate value)."""
    out, folder = [], RunFolder(run)
    for done in folder.completed_iterations():
        it = done["metrics"]["iteration"]
        files = folder.iteration(it)
        current = read_policies(files.policies)
        cands = read_policies(files.candidates)
        path = files.log("acceptance")
        for line in path.read_text().splitlines() if path.exists() else []:
            d = json.loads(line)
            trial = {**current, **{a: cands[a] for a in d["agents"]}}
            out.append((dict(current), trial, d["val_return"], d["candidate_val_return"]))
            if d["accepted"]:
                current = trial
    return out


def run_one(mode: str, s: int, args: argparse.Namespace) -> dict:
    if args.starts == "random":
        start = random_start(s)
        best = dict(zip([f"piston_{i}" for i in range(5)], args.best_team, strict=True))
        wrong = sorted(a for a, p in start.items() if word_of(p) != best[a])
    else:
        best = {}
        wrong = wrong_agents(s)
        start = {f"piston_{i}": BAD if f"piston_{i}" in wrong else GOOD for i in range(5)}
    run = args.out / f"{mode}_seed{s}"
    # per-run: no run is paid for by another; per-seed: the modes of one seed share replies (their
    # identical first episodes are played once), so only the calls made, not the uncached ones, compare
    cache = run.parent / (f"cache_{mode}_seed{s}" if args.cache == "per-run" else f"cache_seed{s}")
    cfg = TrainConfig(
        env_kwargs=ENV,
        iterations=args.iterations,
        episodes_per_iteration=1,
        seed=100 * s,
        validation_seeds=list(range(1000, 1000 + args.validation_seeds)),
        test_seeds=list(range(2000, 2000 + args.test_seeds)),
        langmarl={"critic_mode": mode, "counterfactual": ["alternatives"], "actor_check": not args.stock},
        initial_policy=GOOD,
        initial_policies={a: p for a, p in start.items() if p != GOOD},
        max_llm_calls=args.budget,
        backend_options={"embedded": {"cache": str(cache), "n_threads": args.threads}},
        run_dir=str(run),
    )
    t0 = time.perf_counter()
    finished = (run / "config.json").exists() and len(RunFolder(run).completed_iterations()) >= args.iterations
    method = None if args.stock else CheckedLangMARL
    res = train(resume=run, method=method) if (run / "config.json").exists() else train(cfg, method=method)
    spent = run.parent / f"seconds_{mode}_seed{s}.txt"  # training time summed over the processes that ran it
    before = float(spent.read_text()) if spent.exists() else 0.0
    seconds = before if finished else time.perf_counter() - t0 + before  # replaying a finished run is no training
    spent.write_text(f"{seconds:.1f}\n")
    curve = [m.test_return for m in res.metrics] + [res.final_test_return]
    changed = {a for a in res.final_policies if res.final_policies[a] != res.initial_policies[a]}
    if args.starts == "random":  # an optimised text that still names the same word is no change
        changed = {a for a in changed if word_of(res.final_policies[a]) != word_of(res.initial_policies[a])}
    done = RunFolder(run).completed_iterations()
    uncached = done[-1].get("uncached_calls_total", done[-1]["calls_total"]) if done else 0
    calls = done[-1]["calls_total"] if done else 0
    # validation against the held-out test on every validated decision (played afterwards, same cache)
    env = lang_pz.make("butterfly/pistonball-v0", **ENV)
    llm = make_backend("embedded", cache=str(cache), n_threads=args.threads)
    agree = []
    for current, trial, val_cur, val_cand in decisions(run):
        test = [float(np.mean(evaluate(env, make_actors(team, llm), cfg.test_seeds))) for team in (current, trial)]
        agree.append(bool((val_cand >= val_cur) == (test[1] >= test[0])))
    llm.close()
    return {
        "mode": mode,
        "seed": s,
        "wrong": wrong,
        "start": {a: word_of(p) for a, p in start.items()},
        "final": {a: word_of(p) for a, p in res.final_policies.items()},
        "curve": curve,
        "changed": sorted(changed),
        # random starts: fixed means now playing the best constant team's word (not any other word)
        "fixed": sorted(
            a for a in changed & set(wrong) if args.starts != "random" or word_of(res.final_policies[a]) == best[a]
        ),
        "changed_right": sorted(changed - set(wrong)),
        "uncached_calls": uncached,
        "calls": calls,
        "iterations_done": len(res.metrics),
        "agreement": agree,
        "accepted_texts": accepted_texts(run),
        "stopped": res.stopped,
        "seconds": round(seconds, 1),
    }


def saved_row(mode: str, s: int, args: argparse.Namespace) -> Path:
    """Where :func:`main` keeps a finished run's row (read back by ``--finished-only``, no replay)."""
    return args.out / f"row_{mode}_seed{s}.json"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5, help="training seeds")
    parser.add_argument("--iterations", type=int, default=5)
    parser.add_argument("--stock", action="store_true", help="the stock LangMARL (no actor check, no joint pairs)")
    parser.add_argument("--validation-seeds", type=int, default=8)
    parser.add_argument("--test-seeds", type=int, default=8)
    parser.add_argument("--budget", type=int, default=1500, help="uncached LLM calls per run")
    parser.add_argument("--threads", type=int, default=1, help="llama.cpp CPU threads of each run's model")
    parser.add_argument(
        "--cache",
        choices=("per-run", "per-seed"),
        default="per-run",
        help="response cache of each run (per-run: uncached calls compare) or shared by a seed's modes "
        "(faster; then compare the calls made)",
    )
    parser.add_argument("--modes", nargs="+", default=list(MODES + EXTRA_MODES), choices=MODES + EXTRA_MODES)
    parser.add_argument(
        "--starts",
        choices=("wrong", "random"),
        default="wrong",
        help="wrong: all down with one or two wrong pistons; random: each piston's start drawn from the seed",
    )
    parser.add_argument("--out", type=Path, default=Path("runs/credit_learning"))
    parser.add_argument("--results", type=Path, default=RESULTS)
    parser.add_argument(
        "--only",
        type=int,
        nargs="+",
        default=None,
        metavar="SEED",
        help="train only these seeds and write no results (to share the work among processes; "
        "a run without --only then resumes the finished runs and writes the results)",
    )
    parser.add_argument(
        "--finished-only",
        action="store_true",
        help="write the results from the runs that finished all their iterations and train none",
    )
    args = parser.parse_args()
    teams = constant_teams(list(range(2000, 2000 + args.test_seeds)), args.out / "constant_teams.json")
    (args.best_team, args.best) = teams[0] if args.starts == "random" else (None, None)
    args.best_uniform = max(v for team, v in teams if len(set(team)) == 1)
    t0, rows = time.perf_counter(), []
    for s in args.only if args.only is not None else range(args.seeds):
        for mode in args.modes:
            run = args.out / f"{mode}_seed{s}"
            if args.finished_only and (
                not (run / "config.json").exists() or len(RunFolder(run).completed_iterations()) < args.iterations
            ):
                print(f"seed {s} {mode}: not finished, left out", flush=True)
                continue
            row = saved_row(mode, s, args)
            if args.finished_only and row.exists():
                rows.append(json.loads(row.read_text()))
            else:
                rows.append(run_one(mode, s, args))
                row.write_text(json.dumps(rows[-1]) + "\n")
            r = rows[-1]
            print(
                f"seed {s} {mode:15s} wrong {r['wrong']}: test {r['curve'][0]:.1f} -> {r['curve'][-1]:.1f}, "
                f"changed {r['changed']}, {r['uncached_calls']} uncached calls, {r['seconds']:.0f} s",
                flush=True,
            )
    minutes = (time.perf_counter() - t0) / 60
    if args.only is not None:
        return
    args.results.mkdir(parents=True, exist_ok=True)
    stem = "credit_learning" if args.starts == "wrong" else "credit_learning_random"
    (args.results / f"{stem}.json").write_text(json.dumps(rows, indent=1) + "\n")
    plot(rows, args.results / f"{stem}.png")
    text = table(rows, args)
    limit = ""
    if args.starts == "random":
        uniform = [(team, v) for team, v in teams if len(set(team)) == 1]
        limit = (
            f"The limit, from all {len(teams)} constant teams on the same {args.test_seeds} test seeds: best "
            f"{', '.join(teams[0][0])} = {teams[0][1]:.1f}; best team of one word (all central_global can "
            f"reach) {', '.join(uniform[0][0])} = {uniform[0][1]:.1f}.\n\n"
        )
    (args.results / f"{stem}.md").write_text(
        f"# Which agent should change? (`python benchmarks/credit_learning.py --starts {args.starts}`)\n\n"
        f"{len({r['seed'] for r in rows})} training seeds x {len({r['mode'] for r in rows})} critic modes "
        f"({len(rows)} runs), {args.iterations} iterations, {args.cache} response cache, budget "
        f"{args.budget} uncached calls per run, {args.validation_seeds} validation and {args.test_seeds} test seeds; "
        "see the script's docstring for the setup.\n\n"
        + limit
        + text
        + f"\n\n![curves]({stem}.png)\n\n"
        + per_seed(rows)
        + "\n\nEvery accepted text, the optimiser's check of it (the share of the recorded decisions it was "
        "played on that played its word) and what the actor played with it in the candidate's validation episodes:\n\n"
        + accepted_lines(rows)
        + "\n"
    )
    print(text)
    print(f"{minutes:.1f} min")


if __name__ == "__main__":
    main()
