"""The bounded MATH check works from a plain script without a ``__main__`` guard (its workers
never re-import the caller's main module, as a multiprocessing spawn child would), still cuts
a hostile answer, and a hostile answer delays no other check."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from support import DATA

ROOT = Path(__file__).resolve().parents[2]

_SCRIPT = """\
import lang_pz
from lang_pz.tasks.math_env import bounded_math_equal

with open({runs!r}, "a") as f:  # one line per run of this module: a re-import would add a second
    f.write("run\\n")
env = lang_pz.make("tasks/math500-v0", data_dir={data!r}, index=0, turns=("solver",), check_timeout_s=1.0)
env.reset()
gold = env.unwrapped.item.answer
env.step("The answer is \\\\boxed{{" + gold + "}}.")
print("reward", env.rewards["solver"], env.unwrapped.score["check"])
# sympy would compute a 2^30-bit number for minutes: cut after 1 s of the worker's CPU time
print("hostile", *bounded_math_equal("2^{{2^{{30}}}}", "1", 1.0))
"""


@pytest.mark.skipif(not (DATA / "math500").is_dir(), reason="MATH-500 data not available")
def test_an_unguarded_script_steps_math500_and_a_hostile_answer_is_cut(tmp_path):
    runs = tmp_path / "runs.txt"
    script = tmp_path / "unguarded.py"
    script.write_text(textwrap.dedent(_SCRIPT.format(runs=str(runs), data=str(DATA))))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    res = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=600, env=env, cwd=tmp_path, check=False
    )
    assert res.returncode == 0, res.stderr[-3000:]
    lines = res.stdout.splitlines()
    assert "reward 1.0 ok" in lines, res.stdout
    assert "hostile False timeout" in lines, res.stdout
    assert runs.read_text() == "run\n"  # the script's module ran once: the worker did not import it


def test_a_hostile_answer_stalls_only_its_own_check():
    """Checks run in a pool of workers, none under a process-wide lock: an honest check started while a hostile
    one runs (and is cut after its CPU bound) gets its verdict first, from another worker."""
    pytest.importorskip("math_verify")
    from lang_pz.tasks.math_check import bounded_math_equal

    with ThreadPoolExecutor(2) as pool:  # two workers started and idle, as after two threads checked at once
        assert list(pool.map(lambda _: bounded_math_equal("1", "1", 5.0), range(2))) == [(True, "ok")] * 2
    ended: dict[str, tuple[float, tuple[bool, str]]] = {}

    def check(name: str, answer: str, gold: str, bound: float) -> None:
        verdict = bounded_math_equal(answer, gold, bound)
        ended[name] = (time.monotonic(), verdict)

    hostile = threading.Thread(target=check, args=("hostile", "2^{2^{30}}", "1", 1.5))
    hostile.start()
    time.sleep(0.3)
    check("honest", "\\frac{1}{2}", "1/2", 5.0)
    hostile.join()
    assert ended["honest"][1] == (True, "ok") and ended["hostile"][1] == (False, "timeout")
    assert ended["honest"][0] < ended["hostile"][0]
