"""`lang-pz train` against a local fake OpenAI-compatible endpoint that injects faults.

Starts :class:`lang_pz.test.fake_server.FakeOpenAIServer` (first one fault of each kind,
then each request faulty with probability ``--fault-rate``: timeouts, HTTP 429 with
``Retry-After: 1``, 500, 503, connection resets, truncated bodies, empty choices, malformed
JSON, replies outside the choices), runs ``python -m lang_pz.cli train`` on 5-piston
Pistonball (hold 5) with ``--backend openai:fake`` in a subprocess, with
``OPENAI_BASE_URL`` pointing at the fake server and a dummy ``OPENAI_API_KEY``, and checks:

- the run completes with exit status 0, without ``--resume``;
- no record is lost or duplicated: ``metrics.jsonl`` has one line per iteration; every
  training and validation episode is complete exactly once (each agent's steps 0..n-1 once,
  one ``episode_end``); one ``validation.jsonl`` line per validation episode; one critic
  record (credits or error) per training episode; ``done.json`` per iteration;
- the key appears in no file written (run folder, response cache, the run's stdout/stderr).

It prints the injected faults by kind and the retries made (from ``metrics.jsonl``). The
backend's timeout and waits are made short through ``LANG_PZ_BACKEND_OPTIONS`` (the fake
endpoint answers at once, so long timeouts would only make the run slow); the number of
attempts is the default.

    python benchmarks/fault_injection_train.py [--fault-rate 0.3] [--seed 0] [--iterations 2] [--no-cache]
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from lang_pz.test.fake_server import FAULT_KINDS, FakeOpenAIServer

ROOT = Path(__file__).resolve().parents[1]


def episodes_complete(path: Path) -> tuple[list[int], list[str]]:
    """The episodes of a trajectory file, and every problem found (duplicates, gaps, no end)."""
    ends: Counter[int] = Counter()
    steps: Counter[tuple[int, str, int]] = Counter()
    problems = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            problems.append(f"{path.name}:{n} is not JSON")
            continue
        if rec["type"] == "episode_end":
            ends[rec["episode"]] += 1
        elif rec["type"] == "agent_step":
            steps[(rec["episode"], rec["agent"], rec["step"])] += 1
    problems += [f"{path.name}: episode {e} ends {c} times" for e, c in ends.items() if c != 1]
    problems += [f"{path.name}: step {k} recorded {c} times" for k, c in steps.items() if c != 1]
    for e in {e for e, _, _ in steps}:
        if e not in ends:
            problems.append(f"{path.name}: episode {e} has steps but no episode_end")
        for agent in {a for ep, a, _ in steps if ep == e}:
            got = sorted(s for ep, a, s in steps if ep == e and a == agent)
            if got != list(range(len(got))):
                problems.append(f"{path.name}: episode {e} {agent} steps {got[:5]}... are not 0..{len(got) - 1}")
    return sorted(ends), problems


def check_run(run_dir: Path, iterations: int, episodes: int) -> tuple[list[str], dict[str, int]]:
    """Problems found in a finished run folder, and record counts."""
    problems: list[str] = []
    counts: Counter[str] = Counter()
    metrics_path = run_dir / "metrics.jsonl"
    metrics = [json.loads(line) for line in metrics_path.read_text().splitlines()] if metrics_path.exists() else []
    if [m["iteration"] for m in metrics] != list(range(iterations)):
        problems.append(f"metrics.jsonl iterations {[m['iteration'] for m in metrics]} != 0..{iterations - 1}")
    for it in range(iterations):
        d = run_dir / f"iter_{it:03d}"
        if not (d / "done.json").exists():
            problems.append(f"{d.name}/done.json missing")
        expected = [it * episodes + k for k in range(episodes)]
        got, found = episodes_complete(d / "trajectories.jsonl")
        problems += [f"{d.name}/{p}" for p in found]
        if got != expected:
            problems.append(f"{d.name}/trajectories.jsonl episodes {got} != {expected}")
        counts["training episodes"] += len(got)
        critic = [
            json.loads(line)["episode"]
            for name in ("credits.jsonl", "critic_errors.jsonl")
            if (d / name).exists()
            for line in (d / name).read_text().splitlines()
        ]
        if sorted(critic) != expected:
            problems.append(f"{d.name}: critic records for episodes {sorted(critic)} != {expected}")
        counts["critic errors"] += (
            sum(1 for _ in (d / "critic_errors.jsonl").open()) if (d / "critic_errors.jsonl").exists() else 0
        )
        counts["optimiser errors"] += (
            sum(1 for _ in (d / "optimiser_errors.jsonl").open()) if (d / "optimiser_errors.jsonl").exists() else 0
        )
        if (d / "validation.jsonl").exists():
            val = [json.loads(line)["episode"] for line in (d / "validation.jsonl").read_text().splitlines()]
            got, found = episodes_complete(d / "validation_trajectories.jsonl")
            problems += [f"{d.name}/{p}" for p in found]
            if val != list(range(len(val))) or got != val:
                problems.append(f"{d.name}: validation.jsonl episodes {val} vs trajectories {got}")
            counts["validation episodes"] += len(val)
    if not (run_dir / "final" / "policies").is_dir():
        problems.append("final/policies missing")
    return problems, dict(counts)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fault-rate", type=float, default=0.3)
    parser.add_argument("--seed", type=int, default=0, help="seed of the fault draws")
    parser.add_argument("--iterations", type=int, default=2)
    parser.add_argument(
        "--no-cache", action="store_true", help="no response cache: every decision is a request (more requests, more faults)"
    )
    parser.add_argument("--out", type=Path, default=None, help="folder to keep (default: a temporary one)")
    args = parser.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="lang_pz_faults_"))
    out.mkdir(parents=True, exist_ok=True)
    run_dir, cache_dir = out / "run", out / "cache"
    key = "sk-fault-injection-" + secrets.token_hex(16)  # a dummy: the fake server checks nothing
    options: dict = {"openai": {"timeout_s": 1.0, "backoff_s": 0.05, "max_backoff_s": 1.0}}
    if args.no_cache:
        options["openai"]["cache"] = False
    cmd = [
        sys.executable,
        "-m",
        "lang_pz.cli",
        "train",
        "--env",
        "butterfly/pistonball-v0",
        "--kw",
        "n_pistons=5",
        "--kw",
        "hold=5",
        "--iterations",
        str(args.iterations),
        "--episodes",
        "1",
        "--backend",
        "openai:fake",
        "--run-dir",
        str(run_dir),
        "--set",
        "validation_seeds=[1000, 1001]",
        "--set",
        "max_rewrite=1.0",
    ]
    with FakeOpenAIServer(args.fault_rate, seed=args.seed, stall_s=3.0, retry_after="1", script=list(FAULT_KINDS)) as server:
        env = {
            **os.environ,
            "OPENAI_BASE_URL": server.url,
            "OPENAI_API_KEY": key,
            "LANG_PZ_CACHE_DIR": str(cache_dir),
            "LANG_PZ_BACKEND_OPTIONS": json.dumps(options),
        }
        print(f"fake endpoint {server.url}, fault rate {args.fault_rate}, seed {args.seed}")
        print(f"LANG_PZ_BACKEND_OPTIONS={json.dumps(options)}")
        print("$ " + " ".join(cmd[1:]))
        t0 = time.perf_counter()
        with (out / "stdout.txt").open("w") as so, (out / "stderr.txt").open("w") as se:
            rc = subprocess.run(cmd, cwd=ROOT, env=env, stdout=so, stderr=se, check=False).returncode
        wall = time.perf_counter() - t0
        faults, requests, log = Counter(server.faults), server.requests, list(server.log)
    problems, counts = check_run(run_dir, args.iterations, 1) if rc == 0 else ([f"exit status {rc}"], {})
    leaked = [str(f.relative_to(out)) for f in out.rglob("*") if f.is_file() and key.encode() in f.read_bytes()]
    problems += [f"the API key is in {f}" for f in leaked]

    print(f"\nexit status {rc} after {wall:.0f} s; {requests} requests to the endpoint")
    print(f"faults injected: {sum(faults.values())} ({sum(faults.values()) / max(1, requests):.1%} of requests)")
    for kind in FAULT_KINDS:
        print(f"  {kind:15s} {faults[kind]}")
    metrics_path = run_dir / "metrics.jsonl"
    if metrics_path.exists():
        usage = Counter()
        for line in metrics_path.read_text().splitlines():
            for role, u in json.loads(line)["usage"].items():
                usage[role] += u.get("retries", 0)
        schema_invalid = sum(1 for _, f, k in log if f == "invalid_reply" and k == "schema")
        print(f"retries made by the backend: {sum(usage.values())} ({', '.join(f'{r} {n}' for r, n in usage.items())})")
        print(f"schema replies rejected and re-asked by lang_pz.structured: {schema_invalid}")
        print(f"faults not matched by a retry: {sum(faults.values()) - sum(usage.values()) - schema_invalid}")
    print("records: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    print(f"key in files written: {len(leaked)}")
    print(f"output kept in {out}")
    if problems:
        print("PROBLEMS:\n  " + "\n  ".join(problems))
        return 1
    print("OK: completed without a resume, no record lost or duplicated, key written nowhere")
    return 0


if __name__ == "__main__":
    sys.exit(main())
