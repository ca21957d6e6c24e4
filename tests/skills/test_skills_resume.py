"""A skills run (``--method maskills``) with the real embedded model, killed with SIGKILL and resumed."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from lang_pz.skills import read_library
from lang_pz.trajectory import read_trajectories

ROOT = Path(__file__).resolve().parents[2]


def lines_of(path: Path, episode: int) -> list[str]:
    """Lines of ``episode`` in a file a kill may have cut (a partial last line is skipped)."""
    out = []
    for line in path.read_text().splitlines():
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            continue
        if rec["episode"] == episode:
            out.append(line)
    return out


@pytest.mark.integration
def test_kill_9_then_resume_a_skills_run_with_the_embedded_model(tmp_path):
    run = tmp_path / "run"
    env = {**os.environ, "LANG_PZ_CACHE_DIR": str(tmp_path / "cache")}
    # tiny: 5 pistons x 2 decisions, one episode an iteration, one re-run, one edit at most
    cmd = [
        sys.executable,
        "-m",
        "lang_pz.cli",
        "train",
        "--method",
        "maskills",
        "--skills",
        str(ROOT / "examples" / "skills" / "pistonball"),
        "--kw",
        "n_pistons=5",
        "--kw",
        "hold=25",
        "--kw",
        "max_cycles=50",
        "--iterations",
        "2",
        "--episodes",
        "1",
        "--set",
        "validation_seeds=[1000]",
        "--set",
        "skill_reruns=1",
        "--set",
        "max_skill_edits=1",
        "--set",
        "initial_policy=Follow the skill.",
        "--set",
        "on_stage_failure=continue",  # about kill and resume: a failed 135M step is not stopped on
        "--run-dir",
        str(run),
    ]
    traj = run / "iter_000" / "trajectories.jsonl"
    log = (tmp_path / "first.log").open("w")
    proc = subprocess.Popen(cmd, env=env, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
    try:
        hung = time.monotonic() + 1800  # a guard against a hang, not a speed check (a busy machine is slow)
        while '"episode_end"' not in (traj.read_text() if traj.exists() else ""):
            assert proc.poll() is None, f"train exited early ({proc.returncode}): {(tmp_path / 'first.log').read_text()}"
            assert time.monotonic() < hung, "no finished episode after 30 min"
            time.sleep(0.2)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
        log.close()
    assert proc.returncode == -signal.SIGKILL
    assert not (run / "iter_000" / "done.json").exists()
    ep0 = lines_of(traj, 0)
    assert json.loads(ep0[-1])["type"] == "episode_end"
    assert read_library(run / "iter_000" / "skills") == read_library(ROOT / "examples" / "skills" / "pistonball")

    done = subprocess.run(
        [sys.executable, "-m", "lang_pz.cli", "train", "--resume", str(run)],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=1200,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert re.search(r"iteration 0: kept 1 finished episode\(s\)", done.stderr), done.stderr[-3000:]
    assert lines_of(traj, 0) == ep0  # the episode finished before the kill was kept as it was
    (t0,) = read_trajectories(traj)
    assert t0.finished and all(s.meta["skills"]["offered"] for s in t0.steps)  # every decision offered skills
    metrics = [json.loads(x) for x in (run / "metrics.jsonl").read_text().splitlines()]
    assert [m["iteration"] for m in metrics] == [0, 1]
    final = read_library(run / "final" / "skills")
    assert final.version == json.loads((run / "iter_001" / "done.json").read_text())["library"]["version"]
    assert "skill library per iteration" in done.stdout and "method: maskills" in done.stdout
