"""Every paper preset (``lang_pz/presets/*.yaml``), one iteration through a REAL llama.cpp server.

Starts llama-cpp-python's OpenAI-compatible server with the embedded SmolLM2-135M (n_ctx 2048;
or uses ``--base-url``) and runs ``python -m lang_pz.cli train --preset NAME --backend
openai:smollm2`` for each preset in a subprocess, made small by the overrides of
:data:`COMMON` and :data:`SMALL` (one iteration, one training episode, one validation seed, no
test seeds, short episodes). Records the exit code, the wall time, the LLM calls per role (from
the run folder's ``iter_000/usage.json``, the attempt's and interrupted attempts') and the
errors (the first ``error:`` line; ``critic_errors.jsonl`` / ``optimiser_errors.jsonl`` records).
Presets are run in the order of :data:`ORDER` (cheapest first) until ``--budget-min`` is spent;
the rest are listed as not run.

    python benchmarks/server_presets.py [--base-url http://127.0.0.1:8080/v1] [--budget-min 40]
        [--only NAME ...] [--out benchmarks/results/server_presets.md]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from lang_pz.error import DependencyNotInstalled
from lang_pz.test.llama_server import embedded_model_server

ROOT = Path(__file__).resolve().parents[1]

#: Overrides every preset gets.
COMMON = [
    "--set", "iterations=1",
    "--set", "episodes_per_iteration=1",
    "--set", "validation_seeds=[1000]",
    "--set", "test_seeds=[]",
]  # fmt: skip

#: Short episodes, per family: Overcooked 2 ticks; Pistonball one decision per piston (25 cycles at
#: the preset's hold 25); task envs are one item per episode already.
SMALL = {
    "langmarl-overcooked": ["--kw", "horizon=2"],
    "langmarl-pistonball": ["--kw", "max_cycles=25"],
}

ORDER = [
    "langmarl-overcooked-cramped-room",
    "langmarl-hotpotqa",
    "maskills-hotpotqa",
    "langmarl-math",
    "maskills-transfer-gsm8k",
    "langmarl-humaneval",
    "langmarl-overcooked-asymmetric-advantages",
    "langmarl-overcooked-coordination-ring",
    "langmarl-overcooked-forced-coordination",
    "langmarl-overcooked-counter-circuit",
    "langmarl-pistonball-10",
    "langmarl-pistonball-12",
    "langmarl-pistonball-16",
    "langmarl-pistonball-20",
]


@contextlib.contextmanager
def llama_server(base_url: str | None = None) -> Iterator[str]:
    """``base_url`` if given, else llama-cpp-python's server with the embedded model on a free port
    (:func:`lang_pz.test.llama_server.embedded_model_server`, stopped at the end); yields the
    ``.../v1`` URL."""
    if base_url:
        yield base_url
        return
    try:
        with embedded_model_server() as url:
            yield url
    except (DependencyNotInstalled, RuntimeError) as exc:
        sys.exit(f"{exc} (or give --base-url)")


def cli_env(cache: Path) -> dict[str, str]:
    """The environment of a ``lang-pz`` subprocess: this checkout, a fresh response cache, the data."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "LANG_PZ_CACHE_DIR": str(cache)}  # $LANG_PZ_DATA_DIR passed on
    env.pop("OPENAI_BASE_URL", None)
    env.pop("OPENAI_API_KEY", None)
    return env


def overrides(preset: str) -> list[str]:
    return COMMON + next((extra for prefix, extra in SMALL.items() if preset.startswith(prefix)), [])


def calls(run_dir: Path) -> dict[str, int]:
    """LLM calls per role (uncached and cached) of iteration 0, this attempt and interrupted ones."""
    path = run_dir / "iter_000" / "usage.json"
    out = {"actor": 0, "critic": 0, "optimiser": 0}
    if not path.is_file():
        return out
    usage = json.loads(path.read_text())
    for part in (usage.get("attempt") or {}, *((usage.get("interrupted") or {}).values())):
        for role, u in part.items():
            if isinstance(u, dict) and role in out:
                out[role] += int(u.get("calls", 0))
    return out


def lines_of(path: Path) -> int:
    return len(path.read_text().splitlines()) if path.is_file() else 0


def run_preset(preset: str, base_url: str, work: Path, timeout_s: float) -> dict[str, object]:
    run_dir, cache = work / preset, work / f"cache-{preset}"
    cmd = [sys.executable, "-m", "lang_pz.cli", "train", "--preset", preset, "--backend", "openai:smollm2"]
    cmd += ["--backend-option", f"base_url={base_url}", "--backend-option", "timeout_s=600", *overrides(preset)]
    cmd += ["--run-dir", str(run_dir)]
    t0 = time.monotonic()
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, env=cli_env(cache), timeout=timeout_s, cwd=ROOT)
        code, stderr, stdout = r.returncode, r.stderr, r.stdout
    except subprocess.TimeoutExpired as exc:
        code = "timeout"
        stderr = exc.stderr.decode() if isinstance(exc.stderr, bytes) else str(exc.stderr or "")
        stdout = ""
    wall = time.monotonic() - t0
    errors = [line.removeprefix("error: ") for line in stderr.splitlines() if line.startswith("error:")]
    if code not in (0, 2) and not errors and stderr.strip():
        errors = [stderr.strip().splitlines()[-1]]
    it = run_dir / "iter_000"
    return {
        "preset": preset,
        "exit": code,
        "wall_s": round(wall, 1),
        "calls": calls(run_dir),
        "critic_errors": lines_of(it / "critic_errors.jsonl"),
        "optimiser_errors": lines_of(it / "optimiser_errors.jsonl"),
        "done": (it / "done.json").exists(),
        "error": errors[0] if errors else "",
        "totals": next((line.strip() for line in stdout.splitlines() if line.startswith("totals:")), ""),
        "overrides": " ".join(overrides(preset)[len(COMMON) :]),
    }


def table(rows: list[dict[str, object]], not_run: list[str]) -> str:
    out = [
        "| preset | exit | wall (s) | LLM calls (actor / critic / optimiser) | iteration done | errors |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        c = r["calls"]
        assert isinstance(c, dict)
        errs = []
        if r["error"]:
            errs.append(str(r["error"])[:300].replace("|", "\\|"))
        if r["critic_errors"]:
            errs.append(f"{r['critic_errors']} critic_errors.jsonl record(s)")
        if r["optimiser_errors"]:
            errs.append(f"{r['optimiser_errors']} optimiser_errors.jsonl record(s)")
        out.append(
            f"| {r['preset']} | {r['exit']} | {r['wall_s']} | {sum(c.values())} ({c['actor']} / {c['critic']} / "
            f"{c['optimiser']}) | {'yes' if r['done'] else 'no'} | {'; '.join(errs) or 'none'} |"
        )
    for name in not_run:
        out.append(f"| {name} | not run | - | - | - | out of the time budget |")
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base-url", help="an already running llama.cpp server's .../v1 (default: start one)")
    ap.add_argument("--budget-min", type=float, default=40.0, help="start no preset after this many minutes")
    ap.add_argument("--timeout-min", type=float, default=15.0, help="per preset")
    ap.add_argument("--only", nargs="*", help="these presets (default: all, in ORDER)")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks/results/server_presets.json")
    args = ap.parse_args()
    names = args.only or ORDER
    rows: list[dict[str, object]] = []
    not_run: list[str] = []
    start = time.monotonic()
    with llama_server(args.base_url) as url, tempfile.TemporaryDirectory(prefix="server_presets-") as tmp:
        for name in names:
            if time.monotonic() - start > args.budget_min * 60:
                not_run.append(name)
                continue
            load = os.getloadavg()[0]
            row = run_preset(name, url, Path(tmp), args.timeout_min * 60)
            row["load_before"] = round(load, 1)
            row["load_after"] = round(os.getloadavg()[0], 1)
            rows.append(row)
            print(json.dumps(row), flush=True)
            args.out.write_text(json.dumps({"rows": rows, "not_run": not_run}, indent=1))
    args.out.write_text(json.dumps({"rows": rows, "not_run": not_run}, indent=1))
    print(table(rows, not_run))


if __name__ == "__main__":
    main()
