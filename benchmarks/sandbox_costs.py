"""What hostile programs and answers cost: wall time held, others stalled, text put into ``info``.

Measures, at the code envs' defaults (``timeout_s=10`` CPU seconds, ``check_timeout_s=5``):

* a sleeping program (``time.sleep(1000)``) in one sandboxed run, and a coder/tester/coder episode
  whose code sleeps at import (two sandboxed runs: the tester's and the hidden tests');
* a fork bomb and an endless loop in one run;
* the MATH checker: how long an honest check started 0.5 s after a hostile one
  (``2^{2^{30}}`` against ``1``, cut after its CPU bound) waits for its verdict;
* the length of ``info["score"]["error"]`` and of the tester's report in the transcript when the
  code raises an exception whose class name is 1.5 M characters long at import.

    PYTHONPATH=$PWD python benchmarks/sandbox_costs.py [--modes bubblewrap rlimits]
        [--measures sleep episode bomb loop error checker] [--out FILE --section NAME]
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's lang_pz, not an installed one

from lang_pz.tasks.code_env import CodeTaskEnv
from lang_pz.tasks.datasets import load_humaneval
from lang_pz.tasks.math_check import bounded_math_equal
from lang_pz.tasks.sandbox import SandboxConfig, run_python

SLEEP = "import time\ntime.sleep(1000)\n"
BOMB = "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n"
LOOP = "while True:\n    pass\n"
#: An exception class of a 1.5 M-character name, built at run time (an action is at most 8,192 characters).
RAISE_LONG = 'raise type("E" * 1_500_000, (Exception,), {})()'


def _run(source: str, mode: str) -> str:
    r = run_python(source, SandboxConfig(timeout_s=10.0, bubblewrap=mode == "bubblewrap"))
    return f"{r.duration_s:.1f} s ({r.status}, {r.cpu_s:.2f} CPU-s)"


def _episode(code: str, mode: str) -> tuple[float, CodeTaskEnv]:
    """Wall seconds of a coder/tester/coder episode on HumanEval/0 with ``code`` both times, and the env."""
    item = next(it for it in load_humaneval() if it.task_id == "HumanEval/0")
    env = CodeTaskEnv([item], turns=("coder", "tester", "coder"))
    env.sandbox = replace(env.sandbox, timeout_s=10.0, bubblewrap=mode == "bubblewrap")
    t0 = time.perf_counter()
    env.reset(options={"index": 0})
    env.step(code)
    env.step("assert has_close_elements([1.0, 2.0], 0.5) == False")
    env.step(code)
    return time.perf_counter() - t0, env


def _checker_stall(warm: int) -> tuple[float, float]:
    """``(honest check's latency, hostile check's latency)`` in seconds, the honest one started 0.5 s later,
    after ``warm`` checks at once (as many threads checking: that many workers idle, where there is a pool)."""
    with ThreadPoolExecutor(warm) as pool:
        list(pool.map(lambda _: bounded_math_equal("1", "1", 5.0), range(warm)))
    got: dict[str, float] = {}

    def hostile() -> None:
        t0 = time.perf_counter()
        bounded_math_equal("2^{2^{30}}", "1", 5.0)
        got["hostile"] = time.perf_counter() - t0

    t = threading.Thread(target=hostile)
    t.start()
    time.sleep(0.5)
    t0 = time.perf_counter()
    bounded_math_equal("\\frac{1}{2}", "0.5", 5.0)
    got["honest"] = time.perf_counter() - t0
    t.join()
    return got["honest"], got["hostile"]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--modes", nargs="+", default=["bubblewrap", "rlimits"])
    p.add_argument("--measures", nargs="+", default=["sleep", "episode", "bomb", "loop", "error", "checker"])
    p.add_argument("--out", default=None, help="append the table as a section of this markdown file")
    p.add_argument("--section", default="run")
    a = p.parse_args()
    rows: list[tuple[str, str]] = []
    warnings.simplefilter("ignore")
    stub = "def has_close_elements(*a):\n    return None\n"
    for mode in a.modes:
        if "sleep" in a.measures:
            rows.append((f"sleep(1000), one run, {mode}", _run(SLEEP, mode)))
        if "episode" in a.measures:
            wall, _ = _episode(SLEEP + stub, mode)
            rows.append((f"sleep at import, coder/tester/coder episode, {mode}", f"{wall:.1f} s"))
        if "bomb" in a.measures:
            rows.append((f"fork bomb, one run, {mode}", _run(BOMB, mode)))
        if "loop" in a.measures:
            rows.append((f"endless loop, one run, {mode}", _run(LOOP, mode)))
        if "error" in a.measures:
            _, env = _episode(stub + RAISE_LONG + "\n", mode)
            error = env.infos["coder"]["score"]["error"]
            report = max((m.text for m in env.transcript if m.speaker == "env"), key=len, default="")
            rows.append(
                (
                    f"1.5 M-char exception class name at import, {mode}",
                    f"info['score']['error'] {len(error)} chars, tester report {len(report)} chars",
                )
            )
        print(*rows, sep="\n", flush=True)
    if "checker" in a.measures:
        for warm in (1, 2):
            honest, hostile = _checker_stall(warm)
            rows.append(
                (
                    f"MATH check of '\\frac{{1}}{{2}}' started 0.5 s after a hostile one ({warm} checked at once before)",
                    f"{honest:.1f} s",
                )
            )
            rows.append(("the hostile MATH check itself (2^{2^{30}} vs 1, bound 5 CPU-s)", f"{hostile:.1f} s"))
    text = "| measure | value |\n|---|---|\n" + "".join(f"| {k} | {v} |\n" for k, v in rows)
    print(text)
    if a.out:
        with open(a.out, "a", encoding="utf-8") as fh:
            fh.write(f"\n## {a.section}\n\n`python benchmarks/sandbox_costs.py {' '.join(sys.argv[1:])}`\n\n{text}")


if __name__ == "__main__":
    main()
