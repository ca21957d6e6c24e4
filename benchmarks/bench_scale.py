"""One training iteration against an endpoint with a fixed latency L: wall time / L, serial vs concurrent.

Starts :class:`lang_pz.test.fake_server.FakeOpenAIServer` with ``latency_s = L`` (every
request waits L, requests are served concurrently), and runs one iteration of Pistonball
training (counterfactual re-runs on, 4 validation seeds, per-agent acceptance) with the
response cache off, once with ``workers=1`` (everything one after another, as before
lang_pz.executor) and once with many workers, in the same process, interleaved per size.

For each run it prints the wall time in units of L, the LLM calls, the endpoint's peak of
requests in flight, and the *critical path* in L: the longest chain of requests that depend on
each other given the loop's stages (the longest episode of each stage of concurrent episodes —
in a parallel env one step is one round trip, every agent at once — plus the critic's call, the
optimiser's gradient, aggregate and update calls (every attempt of an update whose reply did not
validate: the stand-in's minimal replies never do), and the candidate validations, which
per-agent acceptance runs one after another). The goal: concurrent wall within 1.5x of it.

Before the timed runs the process imports what an iteration uses (the OpenAI client library,
Pistonball's physics) and makes one environment of each size: a run's first iteration pays that
once per process (2-4 s, about as long as the critical path at L = 0.2 s), later ones do not.

    python benchmarks/bench_scale.py [--latency 0.2] [--pistons 5 20] [--workers 64]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import re
import tempfile
import time
from pathlib import Path
from typing import Any

from lang_pz.test.fake_server import FakeOpenAIServer
from lang_pz.training import TrainConfig, train
from lang_pz.trajectory import read_trajectories


def episode_rounds(path: Path) -> dict[int, int]:
    """Episode -> its number of decision rounds (distinct steps)."""
    if not path.exists():
        return {}
    return {t.episode: len({s.step for s in t.steps}) for t in read_trajectories(path)}


def critical_path(run: Path) -> float:
    """The longest chain of dependent requests of iteration 0, in round trips, for the loop as it is
    (lang_pz.training.loop.run_iteration): the test, the current validation and the training
    episodes side by side, then every re-run at once, the critic's calls at once, per agent the
    gradients at once then the aggregate and the update, then the candidate validations one
    group after another (per-agent acceptance), each group's seeds at once."""
    d = run / "iter_000"
    train_rounds = max(episode_rounds(d / "trajectories.jsonl").values())
    val = [json.loads(x) for x in (d / "validation.jsonl").read_text().splitlines()]
    val_rounds = episode_rounds(d / "validation_trajectories.jsonl")
    by_label: dict[str, int] = {}
    for v in val:
        by_label[v["policies"]] = max(by_label.get(v["policies"], 0), val_rounds.get(v["episode"], 0))
    current = by_label.pop("current", 0)
    probes = (
        [json.loads(x)["steps"] for x in (d / "counterfactuals.jsonl").read_text().splitlines()]
        if (d / "counterfactuals.jsonl").exists()
        else []
    )
    grads = (
        [json.loads(x) for x in (d / "gradients.jsonl").read_text().splitlines()] if (d / "gradients.jsonl").exists() else []
    )
    chains = [(len(g["gradients"]) > 1) + 2 for g in grads]  # gradients at once, aggregate?, update
    # an agent whose update failed (optimiser_errors.jsonl: the stand-in's minimal reply does not
    # validate) waited for every attempt: gradients at once, aggregate, the update's attempts
    episodes = len(episode_rounds(d / "trajectories.jsonl"))
    for line in (d / "optimiser_errors.jsonl").read_text().splitlines() if (d / "optimiser_errors.jsonl").exists() else []:
        attempts = re.search(r"after (\d+) attempt", json.loads(line)["error"])
        chains.append(1 + (episodes > 1) + int(attempts.group(1)) if attempts else 1)
    optimiser = max(chains, default=0)
    return max(current, train_rounds) + max(probes, default=0) + 1 + optimiser + sum(by_label.values())


def serve(latency: float, conn: Any) -> None:
    """The stand-in endpoint in a process of its own (in the benchmark's process it would take
    the client's CPU: one Python process, one GIL); reports its URL, then its peak in flight."""
    with FakeOpenAIServer(latency_s=latency) as server:
        conn.send(server.url)
        while True:
            msg = conn.recv()
            if msg == "stop":
                return
            conn.send(server.max_in_flight)
            server.max_in_flight = 0


def run_once(url: str, pistons: int, workers: int, folder: Path) -> dict[str, float]:
    cfg = TrainConfig(
        env_kwargs={"n_pistons": pistons, "hold": 25},
        iterations=1,
        episodes_per_iteration=2,
        validation_seeds=[1000, 1001, 1002, 1003],
        langmarl={"counterfactual": ["alternatives"], "max_rewrite": 1.0},
        initial_policy="Always push up.",
        actor_backend="openai:fake",
        backend_options={"openai:fake": {"base_url": url, "cache": False}},
        workers=workers,
        max_concurrent_requests=workers,
        run_dir=str(folder),
        on_stage_failure="continue",  # the stand-in's minimal updates never validate (counted above)
    )
    t0, c0 = time.perf_counter(), time.process_time()
    res = train(cfg)
    return {"wall": time.perf_counter() - t0, "cpu": time.process_time() - c0, "calls": res.metrics[0].llm_calls}


def warm(pistons: list[int]) -> None:
    """Import what an iteration uses and make one environment of each size (not timed)."""
    import lang_pz
    import lang_pz.backends.openai  # the OpenAI client library: 2-3 s to import

    for n in pistons:
        lang_pz.make("butterfly/pistonball-v0", n_pistons=n, hold=25).reset(seed=0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.2, help="L: seconds per request")
    parser.add_argument("--pistons", type=int, nargs="+", default=[5, 20])
    parser.add_argument("--workers", type=int, default=256)
    parser.add_argument(
        "--no-serial", dest="serial", action="store_false", help="skip the workers=1 run (it takes calls x L)"
    )
    args = parser.parse_args()
    os.environ.setdefault("OPENAI_API_KEY", "sk-bench-not-a-real-key")
    warm(args.pistons)
    rows = []
    here, there = multiprocessing.Pipe()
    server = multiprocessing.get_context("spawn").Process(target=serve, args=(args.latency, there), daemon=True)
    server.start()
    url = here.recv()
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.pistons:
            for w in (1, args.workers) if args.serial else (args.workers,):
                out = run_once(url, n, w, Path(tmp) / f"p{n}-w{w}")
                here.send("peak")
                peak = here.recv()
                crit = critical_path(Path(tmp) / f"p{n}-w{w}")
                rows.append((n, w, out["wall"] / args.latency, out["calls"], peak, crit, out["cpu"]))
                print(
                    f"\npistons {n:2d} workers {w:3d}: wall {out['wall'] / args.latency:7.1f} L, "
                    f"{out['calls']:5d} calls, peak in flight {peak:3d}, critical path {crit:.0f} L, "
                    f"{out['cpu']:.2f} CPU-s, load average {os.getloadavg()[0]:.1f}",
                    flush=True,
                )
    here.send("stop")
    server.join(5)
    print(
        f"\nL = {args.latency} s; one iteration, 2 training episodes, counterfactual alternatives, "
        "4 validation seeds, per-agent acceptance"
    )
    print(
        "| pistons | workers | wall / L | LLM calls | peak in flight | critical path / L | wall / critical "
        "| CPU-s (training process) |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for n, w, wall, calls, peak, crit, cpu in rows:
        print(f"| {n} | {w} | {wall:.1f} | {calls} | {peak} | {crit:.0f} | {wall / crit:.2f} | {cpu:.2f} |")


if __name__ == "__main__":
    main()
