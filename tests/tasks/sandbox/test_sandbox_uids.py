"""The uid pool of a root parent holds across processes: two lang_pz processes running sandboxes at
the same time never share a uid, so neither's clean-up kills the other's runs nor can one run read
another's files (issue: in 2 x 12 runs with a per-process pool, 4-9 runs were killed by the other
process's clean-up)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support import requires_bwrap

ROOT = os.geteuid() == 0

# One process: wait until both are ready, then 6 sandboxed runs at once, each holding its uid for
# 2 s; print (uid, start, end, stdout, status) per run.
_CHILD = r"""
import json, os, sys, threading, time
from lang_pz.tasks.sandbox import SandboxConfig, run_python
me, other = sys.argv[1], sys.argv[2]
open(me, "w").close()
while not os.path.exists(other):
    time.sleep(0.01)
cfg = SandboxConfig(timeout_s=5.0, idle_timeout_s=60.0, wall_timeout_s=120.0)  # each run sleeps 2 s
out, lock = [], threading.Lock()
def one():
    t0 = time.time()
    r = run_python("import time; time.sleep(2); print('done')", cfg)
    with lock:
        out.append((r.isolation["uid"], t0, time.time(), r.stdout, r.status))
threads = [threading.Thread(target=one) for _ in range(6)]
for t in threads: t.start()
for t in threads: t.join()
print(json.dumps(out))
"""


@requires_bwrap
@pytest.mark.skipif(not ROOT, reason="the uid pool is used only when the parent is root")
def test_two_processes_never_share_a_sandbox_uid(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[3])}
    ready = [str(tmp_path / "a"), str(tmp_path / "b")]
    procs = [
        subprocess.Popen([sys.executable, "-c", _CHILD, ready[i], ready[1 - i]], env=env, stdout=subprocess.PIPE, text=True)
        for i in range(2)
    ]
    runs = [json.loads(p.communicate(timeout=600)[0]) for p in procs]
    assert [p.returncode for p in procs] == [0, 0]
    for side in runs:
        assert len(side) == 6 and all(r[3] == "done\n" and r[4] == "ok" for r in side), side
    overlapping = [(a, b) for a in runs[0] for b in runs[1] if a[0] == b[0] and a[1] < b[2] and b[1] < a[2]]
    assert overlapping == []
    # the runs really were concurrent, so a per-process pool would have handed out the same uids
    assert max(r[1] for r in runs[0] + runs[1]) < min(r[2] for r in runs[0] + runs[1])
    assert len({r[0] for r in runs[0] + runs[1]}) == 12


@pytest.mark.skipif(not ROOT, reason="the uid pool is used only when the parent is root")
def test_a_uid_held_by_another_process_is_skipped_until_it_dies() -> None:
    from lang_pz.tasks.sandbox.uids import _try_lock, acquire_uid, release_uid

    base = 1_600_000_000
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; from lang_pz.tasks.sandbox.uids import acquire_uid\n"
            f"print(acquire_uid({base}), flush=True); time.sleep(60)",
        ],
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[3])},
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        held = int(holder.stdout.readline())
        assert _try_lock(held) is None
        mine = acquire_uid(base)
        assert mine != held
        release_uid(mine)
    finally:
        holder.kill()
        holder.wait()
    fd = _try_lock(held)  # the kernel dropped the dead holder's lock
    assert fd is not None
    os.close(fd)
