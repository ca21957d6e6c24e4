"""One training iteration against an endpoint with a fixed latency L: wall time / L, serial vs concurrent.

Starts :class:`lang_pz.backends.fake_server.FakeOpenAIServer` with ``latency_s = L`` (every
request waits L, requests are served concurrently), and runs one iteration of Pistonball
training (counterfactual re-runs on, 4 validation seeds, per-agent acceptance) with the
response cache off, once with ``workers=1`` (everything one after another, as before
lang_pz.executor) and once with many workers, in the same process, interleaved per size.

For each run it prints the wall time in units of L, the LLM calls, the endpoint's peak of
requests in flight, and the *critical path* in L: the longest chain of requests that depend on
each other given the loop's stages (the longest episode of each stage of concurrent episodes —
in a parallel env one step is one round trip, every agent at once — plus the critic's call, the
optimiser's gradient, aggregate and update calls, and the candidate validations, which
per-agent acceptance runs one after another). The goal: concurrent wall within 1.5x of it.

    python benchmarks/bench_scale.py [--latency 0.2] [--pistons 5 20] [--workers 64]
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

from lang_pz.backends.fake_server import FakeOpenAIServer
from lang_pz.trajectory import read_trajectories
from lang_pz.training import TrainConfig, train


def episode_rounds(path: Path) -> dict[int, int]:
    """Episode -> its number of decision rounds (distinct steps)."""
    if not path.exists():
        return {}
    return {t.episode: len({s.step for s in t.steps}) for t in read_trajectories(path)}


def critical_path(run: Path) -> float:
    """The longest chain of dependent requests of iteration 0, in round trips (see the module docstring)."""
    d = run / "iter_000"
    train_rounds = max(episode_rounds(d / "trajectories.jsonl").values())
    val = [json.loads(x) for x in (d / "validation.jsonl").read_text().splitlines()]
    val_rounds = episode_rounds(d / "validation_trajectories.jsonl")
    by_label: dict[str, int] = {}
    for v in val:
        by_label[v["policies"]] = max(by_label.get(v["policies"], 0), val_rounds.get(v["episode"], 0))
    probes = [json.loads(x)["steps"] for x in (d / "counterfactuals.jsonl").read_text().splitlines()] \
        if (d / "counterfactuals.jsonl").exists() else []
    grads = [json.loads(x) for x in (d / "gradients.jsonl").read_text().splitlines()] \
        if (d / "gradients.jsonl").exists() else []
    optimiser = max((len(g["gradients"]) > 1) + 2 for g in grads) if grads else 0  # gradients, aggregate?, update
    return sum(by_label.values()) + train_rounds + max(probes, default=0) + 1 + optimiser


def run_once(url: str, pistons: int, workers: int, folder: Path) -> dict[str, float]:
    cfg = TrainConfig(
        env_kwargs={"n_pistons": pistons, "hold": 25}, iterations=1, episodes_per_iteration=2,
        validation_seeds=[1000, 1001, 1002, 1003], counterfactual=["alternatives"], initial_policy="Always push up.",
        actor_backend="openai:fake", backend_options={"openai:fake": {"base_url": url, "cache": False}},
        workers=workers, max_concurrent_requests=workers, run_dir=str(folder), max_rewrite=1.0,
    )
    t0 = time.perf_counter()
    res = train(cfg)
    return {"wall": time.perf_counter() - t0, "calls": res.metrics[0].llm_calls}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.2, help="L: seconds per request")
    parser.add_argument("--pistons", type=int, nargs="+", default=[5, 20])
    parser.add_argument("--workers", type=int, default=64)
    args = parser.parse_args()
    os.environ.setdefault("OPENAI_API_KEY", "sk-bench-not-a-real-key")
    rows = []
    with tempfile.TemporaryDirectory() as tmp, FakeOpenAIServer(latency_s=args.latency) as server:
        for n in args.pistons:
            for w in (1, args.workers):
                server.max_in_flight = 0
                out = run_once(server.url, n, w, Path(tmp) / f"p{n}-w{w}")
                crit = critical_path(Path(tmp) / f"p{n}-w{w}")
                rows.append((n, w, out["wall"] / args.latency, out["calls"], server.max_in_flight, crit))
                print(f"pistons {n:2d} workers {w:3d}: wall {out['wall'] / args.latency:7.1f} L, "
                      f"{out['calls']:5d} calls, peak in flight {server.max_in_flight:3d}, critical path {crit:.0f} L",
                      flush=True)
    print(f"\nL = {args.latency} s; one iteration, 2 training episodes, counterfactual alternatives, "
          "4 validation seeds, per-agent acceptance")
    print("| pistons | workers | wall / L | LLM calls | peak in flight | critical path / L | wall / critical |")
    print("|---|---|---|---|---|---|---|")
    for n, w, wall, calls, peak, crit in rows:
        print(f"| {n} | {w} | {wall:.1f} | {calls} | {peak} | {crit:.0f} | {wall / crit:.2f} |")


if __name__ == "__main__":
    main()
