"""Episodes per second against the number of Ray workers on this machine, and LLM calls per
training iteration (the inputs of the capacity model in ``benchmarks/results/scale.md``).

Part 1 (``episodes``): the same seeded Pistonball episodes (actors on an OpenAI-compatible
stand-in endpoint, :class:`lang_pz.test.fake_server.FakeOpenAIServer`, every request waiting
``L`` seconds, served concurrently) played through :class:`lang_pz.executor_ray.RayExecutor`
with 1, 2 and 4 workers (``task_cpus`` 1 and 0.5) and, as the baseline, through
:class:`lang_pz.executor.LocalExecutor` threads with the same worker counts, in the same run,
interleaved per round (the median of ``--rounds`` rounds is shown). A first round warms every
configuration (Ray starts worker processes, which import lang_pz and build their env and client;
its cold time is printed). Every configuration must produce the same team returns, checked.

The episode tasks are mapped directly (``executor.map(partial(play_job, players), ...,
remote=True)``, what :func:`lang_pz.training.steps.collect` maps) because ``collect`` runs the
episodes in the driver when ``executor.workers == 1``.

Part 2 (``calls``): one training iteration of a 20-piston run against the endpoint (``L = 0``),
its LLM calls per role and its episodes counted from the run folder.

    python benchmarks/bench_ray.py [--latency 0.05] [--pistons 5] [--episodes 8] [--rounds 3]
    python benchmarks/bench_ray.py --part calls [--pistons 20]
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from lang_pz.executor import EnvPool, LocalExecutor
from lang_pz.test.fake_server import FakeOpenAIServer
from lang_pz.training import TrainConfig, train
from lang_pz.training.players import Players, play_job
from lang_pz.training.team import TeamSpec, worker_env

SPEC = "openai:fake"


def make_config(url: str, pistons: int, hold: int, **kw) -> TrainConfig:
    return TrainConfig(
        env_kwargs={"n_pistons": pistons, "hold": hold},
        actor_backend=SPEC,
        backend_options={SPEC: {"base_url": url, "cache": False}},
        **kw,
    )


def play(executor, players: Players, episodes: int) -> tuple[float, list[float]]:
    """Seconds to play episodes 0..episodes-1 (seed = episode), and their team returns."""
    t0 = time.perf_counter()
    out = executor.map(functools.partial(play_job, players), [(e, e) for e in range(episodes)], remote=True)
    return time.perf_counter() - t0, [round(t.team_return, 3) for t, _ in out]


def episodes_part(args: argparse.Namespace) -> None:
    import ray

    from lang_pz.backends import make_backend
    from lang_pz.executor_ray import RayExecutor, WorkerBackend

    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    ray.init(address="local", num_cpus=os.cpu_count() or 2, include_dashboard=False, log_to_driver=False)
    with FakeOpenAIServer(latency_s=args.latency) as server:
        cfg = make_config(server.url, args.pistons, args.hold, initial_policy="Always push down.")
        policies = {f"piston_{i}": cfg.initial_policy for i in range(args.pistons)}
        local_backend = make_backend(SPEC, **cfg.backend_options[SPEC])
        configs: list[tuple[str, int, float | None, object, Players]] = []
        for w in args.workers:
            pool = EnvPool(lambda: worker_env(cfg))
            team = TeamSpec(policies, cfg, local_backend)
            configs.append(("local threads", w, None, LocalExecutor(w), Players(pool, team, LocalExecutor(w))))
            for cpus in (1.0, 0.5):
                recipe = WorkerBackend(SPEC, cfg.backend_options[SPEC])
                ex = RayExecutor(w, backend=recipe, task_cpus=cpus)
                configs.append(("ray", w, cpus, ex, Players(None, TeamSpec(policies, cfg), None)))
        times: dict[int, list[float]] = {i: [] for i in range(len(configs))}
        reference: list[float] | None = None
        for r in range(args.rounds + 1):
            for i, (kind, w, cpus, ex, players) in enumerate(configs):
                seconds, returns = play(ex, players, args.episodes)
                reference = reference or returns
                assert returns == reference, f"{kind} workers={w}: returns {returns} != {reference}"
                if r == 0:
                    print(f"warm-up {kind:13s} workers {w} task_cpus {cpus}: {seconds:.1f} s", flush=True)
                else:
                    times[i].append(seconds)
        print(
            f"\n{args.pistons}-piston Pistonball (hold {args.hold}: {125 // args.hold} decision rounds, every piston at once), "
            f"{args.episodes} episodes a round, L = {args.latency} s, {os.cpu_count()} CPUs, median of "
            f"{args.rounds} rounds; team returns identical in every configuration"
        )
        base = {w: statistics.median(times[i]) for i, (k, w, *_r) in enumerate(configs) if k == "local threads"}
        one = next(statistics.median(times[i]) for i, c in enumerate(configs) if c[0] == "ray" and c[1] == min(args.workers))
        print(
            "| executor | workers | task_cpus | episodes/s | vs local threads, same workers | "
            f"vs ray {min(args.workers)} worker(s), task_cpus 1 |"
        )
        print("|---|---|---|---|---|---|")
        for i, (kind, w, cpus, _ex, _p) in enumerate(configs):
            med = statistics.median(times[i])
            print(
                f"| {kind} | {w} | {'-' if cpus is None else cpus} | {args.episodes / med:.2f} | "
                f"{base[w] / med:.2f}x | {one / med:.2f}x |"
            )
    ray.shutdown()


def counted(server: FakeOpenAIServer, stages: dict[str, int], name: str, fn):
    """``fn`` adding the requests ``server`` receives while it runs to ``stages[name]`` (one worker:
    the stages do not overlap)."""

    def wrapped(*a, **kw):
        before = server.requests
        try:
            return fn(*a, **kw)
        finally:
            stages[name] = stages.get(name, 0) + server.requests - before

    return wrapped


def calls_part(args: argparse.Namespace) -> None:
    import lang_pz.training.loop as loop

    stages: dict[str, int] = {}
    with tempfile.TemporaryDirectory() as tmp, FakeOpenAIServer(latency_s=0.0) as server:
        run = Path(tmp) / "run"
        cfg = make_config(
            server.url,
            args.pistons,
            args.hold,
            iterations=1,
            episodes_per_iteration=2,
            validation_seeds=[1000, 1001, 1002, 1003],
            langmarl={"counterfactual": ["alternatives"], "max_rewrite": 1.0},
            initial_policy="Always push up.",
            workers=1,
            run_dir=str(run),
        )
        for name in ("collect", "gather_evidence", "validate", "assess", "propose"):
            setattr(loop, name, counted(server, stages, name, getattr(loop, name)))
        t0 = time.perf_counter()
        res = train(cfg)
        wall = time.perf_counter() - t0
        m = json.loads((run / "metrics.jsonl").read_text())
        d = run / "iter_000"
        lines = {p.name: len(p.read_text().splitlines()) for p in d.glob("*.jsonl")}
        sys.path.insert(0, str(Path(__file__).parent))
        from bench_scale import critical_path

        print(
            f"{args.pistons} pistons (hold {args.hold}), one iteration: 2 training episodes, counterfactual alternatives, "
            f"4 validation seeds, per-agent acceptance; {wall:.1f} s wall at L = 0 with 1 worker"
        )
        print(
            json.dumps(
                {
                    "llm_calls": res.metrics[0].llm_calls,
                    "calls_by_role": {r: u["calls"] for r, u in m["usage"].items()},
                    "calls_by_step": stages,
                    "validation_episodes": lines.get("validation.jsonl", 0),
                    "counterfactual_reruns": lines.get("counterfactuals.jsonl", 0),
                    "accepted_agents": len(m["accepted_agents"]),
                    "changed_agents": len(m["changed_agents"]),
                    "critical_path_L": critical_path(run),
                },
                indent=1,
            )
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=["episodes", "calls"], default="episodes")
    parser.add_argument("--latency", type=float, default=0.05, help="L: seconds per request")
    parser.add_argument("--pistons", type=int, default=None, help="default: 5 (episodes), 20 (calls)")
    parser.add_argument("--hold", type=int, default=None, help="cycles per decision; default: 5 (episodes), 25 (calls)")
    parser.add_argument("--episodes", type=int, default=8, help="episodes per round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    args = parser.parse_args()
    os.environ.setdefault("OPENAI_API_KEY", "sk-bench-not-a-real-key")
    if args.part == "episodes":
        args.pistons, args.hold = args.pistons or 5, args.hold or 5
        episodes_part(args)
    else:
        args.pistons, args.hold = args.pistons or 20, args.hold or 25
        calls_part(args)


if __name__ == "__main__":
    main()
