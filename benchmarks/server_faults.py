"""`lang-pz train` against a REAL llama.cpp server that fails: exit codes, time to the error
message, and the message's first line.

The run is ``langmarl-overcooked-cramped-room`` made small (:data:`SMALL`: one iteration, one
training episode, one validation seed, no test seeds, 2-tick episodes; its cooks' actions are
chat-format ``choices`` requests) through llama-cpp-python's OpenAI-compatible server serving the
embedded SmolLM2-135M (started here, or ``--base-url``). Each role has its own backend spec naming
the same served model (actor ``openai:smollm2``, critic ``openai:SmolLM2-135M``, optimiser
``openai:SmolLM2-135M-Instruct``), so one role's ``base_url`` can be a proxy
(``tests/backends/server_proxy.py``) that stops listening at a deterministic point: when the
``N``-th generation request after start-up arrives (every later connection is refused, as when
the server is stopped). The backends keep their default retries (``max_attempts`` 8, about a
minute of waits), the user's experience.

Faults: the endpoint goes away during the rollouts (after 3 actor requests), during the critic
(its first request), during the optimiser (its first request; the evidence gate is off and
directions free so the optimiser is asked); a wrong port; a wrong model name; a structured-output
form the server rejects (``structured_output=json_schema`` on llama-cpp-python's server).

Times: from the command's start to the first ``error:`` line on stderr, and from the moment the
proxy stopped listening (the fault) to that line.

    python benchmarks/server_faults.py [--base-url http://127.0.0.1:8080/v1] [--only NAME ...]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "backends"))

from server_presets import COMMON, ROOT, cli_env, llama_server
from server_proxy import SwitchProxy

from lang_pz.test.llama_server import free_port

PRESET = "langmarl-overcooked-cramped-room"
SMALL = [*COMMON, "--kw", "horizon=2"]  # the presets benchmark's overrides, 2-tick episodes
ACTOR, CRITIC, OPTIMISER = "openai:smollm2", "openai:SmolLM2-135M", "openai:SmolLM2-135M-Instruct"


@dataclass
class Fault:
    name: str
    expected: str
    proxy_role: str | None = None  # the role whose endpoint is a proxy that goes away
    fail_after: int = 0
    args: list[str] = field(default_factory=list)
    options: dict[str, dict[str, object]] = field(default_factory=dict)  # spec -> extra options


FAULTS = [
    Fault("endpoint down during rollouts", "exit 2 naming the play stage and --resume", "actor", fail_after=3),
    Fault("endpoint down during the critic", "exit 2 naming the critic stage and --resume", "critic"),
    Fault(
        "endpoint down during the optimiser",
        "exit 2 naming the optimiser stage and --resume",
        "optimiser",
        args=["--set", "langmarl.evidence_gate=false", "--set", "langmarl.directions=free"],
    ),
    Fault(
        "endpoint down during the critic, on_stage_failure=continue",
        "exit 0 by request, the failure said (progress line, totals, critic_errors.jsonl)",
        "critic",
        args=["--set", "on_stage_failure=continue"],
    ),
    Fault("wrong port", "exit 2 at the start-up check, in seconds", args=["WRONG_PORT"]),
    Fault("wrong model name", "exit 2 at the start-up check, naming the served model", args=["WRONG_MODEL"]),
    Fault(
        "structured_output=json_schema (llama-cpp-python rejects it)",
        "a warning at start; requests refused at once, exit 2 (not a minute of retries)",
        options={ACTOR: {"structured_output": "json_schema"}},
    ),
]


def run_fault(fault: Fault, base_url: str, work: Path, timeout_s: float) -> dict[str, object]:
    upstream = base_url.removesuffix("/v1")
    proxy = SwitchProxy(upstream, fail_after_posts=fault.fail_after) if fault.proxy_role else None
    urls = dict.fromkeys(("actor", "critic", "optimiser"), base_url)
    if proxy is not None and fault.proxy_role:
        urls[fault.proxy_role] = proxy.url
    if "WRONG_PORT" in fault.args:
        urls = dict.fromkeys(urls, f"http://127.0.0.1:{free_port()}/v1")
    actor = "openai:gpt-4o-mini" if "WRONG_MODEL" in fault.args else ACTOR
    specs = {"actor": actor, "critic": CRITIC, "optimiser": OPTIMISER}
    options = {specs[r]: {"base_url": urls[r], "timeout_s": 600, **fault.options.get(specs[r], {})} for r in specs}
    run_dir = work / "runs" / f"run-{int(time.time() * 1000)}"
    cmd = [sys.executable, "-m", "lang_pz.cli", "train", "--preset", PRESET, "--backend", actor]
    cmd += ["--critic-backend", CRITIC, "--optimiser-backend", OPTIMISER, "--set", f"backend_options={json.dumps(options)}"]
    cmd += [*SMALL, *(a for a in fault.args if a not in ("WRONG_PORT", "WRONG_MODEL")), "--run-dir", str(run_dir)]
    lines: list[tuple[float, str]] = []
    t0 = time.monotonic()
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=cli_env(work / ("cache-actor" if fault.proxy_role == "actor" else "cache")),
        cwd=ROOT,
    )

    def read() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.append((time.monotonic(), line.rstrip("\n")))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        proc.wait(timeout=timeout_s)
        code: object = proc.returncode
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        code = "timeout"
    reader.join(timeout=10)
    end = time.monotonic()
    if proxy is not None:
        proxy.close()
    errors = [(t, line) for t, line in lines if line.startswith("error:")]
    warnings = [line for _, line in lines if line.startswith("warning:")]
    first_t, first = errors[0] if errors else (end, "")
    down = proxy.went_down_at if proxy is not None else None
    it = run_dir / "iter_000"
    return {
        "fault": fault.name,
        "expected": fault.expected,
        "exit": code,
        "to_error_s": round(first_t - t0, 1) if errors else None,
        "fault_to_error_s": round(first_t - down, 1) if errors and down is not None else None,
        "wall_s": round(end - t0, 1),
        "first_line": first.removeprefix("error: "),
        "warnings": warnings,
        "done": (it / "done.json").exists(),
        "proxy_posts": proxy.posts if proxy is not None else None,
        "critic_errors": len((it / "critic_errors.jsonl").read_text().splitlines())
        if (it / "critic_errors.jsonl").is_file()
        else 0,
        "failure_lines": [line for _, line in lines if "failure" in line or "failed" in line][:4],
        "stderr_tail": [line for _, line in lines[-6:]],
    }


def table(rows: list[dict[str, object]]) -> str:
    out = [
        "| fault | exit | to the error (s) | fault -> error (s) | iteration done | the message's first line |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        line = str(r["first_line"]).replace("|", "\\|")
        fte = "-" if r["fault_to_error_s"] is None else r["fault_to_error_s"]
        tte = "no error line" if r["to_error_s"] is None else r["to_error_s"]
        out.append(f"| {r['fault']} | {r['exit']} | {tte} | {fte} | {'yes' if r['done'] else 'no'} | {line} |")
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base-url", help="an already running llama.cpp server's .../v1 (default: start one)")
    ap.add_argument("--timeout-min", type=float, default=12.0, help="per fault")
    ap.add_argument("--only", nargs="*", help="faults whose name starts with one of these")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks/results/server_faults.json")
    args = ap.parse_args()
    faults = [f for f in FAULTS if not args.only or any(f.name.startswith(o) for o in args.only)]
    rows: list[dict[str, object]] = []
    with llama_server(args.base_url) as url, tempfile.TemporaryDirectory(prefix="server_faults-") as tmp:
        for fault in faults:
            row = run_fault(fault, url, Path(tmp), args.timeout_min * 60)
            rows.append(row)
            print(json.dumps(row), flush=True)
            args.out.write_text(json.dumps(rows, indent=1))
    print(table(rows))


if __name__ == "__main__":
    main()
