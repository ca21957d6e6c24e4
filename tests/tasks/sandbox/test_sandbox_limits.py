"""What a hostile program costs is bounded (lang_pz.tasks.sandbox.monitor): a sleeping program is stopped
by the idle clock after seconds, not at the old 10 x timeout_s wall-clock backstop (100 s at the code envs'
default timeout_s=10); waiting for a CPU, or for a busy child, is not idle; the wall-clock backstop still
holds; text a program controls is cut before it reaches a verdict, ``info`` or the transcript."""

from __future__ import annotations

import sys
import warnings

import pytest
from support import requires_bwrap

from lang_pz.tasks.code_env import CodeTaskEnv
from lang_pz.tasks.datasets import demo_items
from lang_pz.tasks.sandbox import SandboxConfig, monitor, run_python
from lang_pz.tasks.sandbox.config import IDLE_TIMEOUT_S, MAX_ERROR_CHARS, clip

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the sandbox is Linux-only")

#: The code envs' default limits (timeout_s=10 CPU seconds), in each mode.
ENV_DEFAULT = [
    pytest.param(SandboxConfig(timeout_s=10.0), id="bubblewrap", marks=requires_bwrap),
    pytest.param(SandboxConfig(timeout_s=10.0, bubblewrap=False), id="rlimits"),
]


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the rlimits mode warns once per configuration
        yield


def test_the_limits_defaults():
    config = SandboxConfig(timeout_s=10.0)
    assert config.idle_limit_s == IDLE_TIMEOUT_S == 2.0
    assert config.wall_limit_s == 100.0  # the backstop is unchanged; the idle clock ends sleepers long before
    assert SandboxConfig(idle_timeout_s=0.5).idle_limit_s == 0.5


@pytest.mark.parametrize("config", ENV_DEFAULT)
def test_a_sleeping_program_costs_seconds_not_the_wall_clock_backstop(config):
    r = run_python("import time\ntime.sleep(1000)", config)
    assert r.status == "timeout" and r.returncode < 0
    assert IDLE_TIMEOUT_S <= r.duration_s < 30.0, r  # was 100 s (10 x timeout_s)
    assert r.cpu_s < 1.0


@pytest.mark.parametrize("config", ENV_DEFAULT)
def test_a_program_that_mostly_sleeps_is_idle_too(config):
    """Sleeping 20 ms, computing a little, over and over: mostly idle, so stopped by the idle clock."""
    r = run_python("import time\nwhile True:\n    time.sleep(0.02)\n    sum(range(2000))", config)
    assert r.status == "timeout" and r.duration_s < 30.0, r


@requires_bwrap
def test_waiting_for_a_busy_child_is_not_idle():
    """The parent blocks in wait() while its child computes (about 1 s): the tree is busy, not idle."""
    src = (
        "import subprocess, sys\n"
        "r = subprocess.run([sys.executable, '-c', 'print(sum(i * i for i in range(4_000_000)) > 0)'],"
        " capture_output=True, text=True)\nprint(r.stdout.strip())\n"
    )
    r = run_python(src, SandboxConfig(timeout_s=20.0, idle_timeout_s=0.3))
    assert r.status == "ok" and r.stdout == "True\n", r


@requires_bwrap
def test_the_wall_clock_backstop_still_holds():
    r = run_python("import time\ntime.sleep(60)", SandboxConfig(timeout_s=2.0, idle_timeout_s=60.0, wall_timeout_s=1.0))
    assert r.status == "timeout" and 1.0 <= r.duration_s < 30.0, r


class _FakeProc:
    """One process (pid 100) as ``/proc`` shows it, advanced by hand: ``tick`` adds wall-clock seconds and
    what its thread ran and waited for a CPU, and what its reaped children ran (all in seconds)."""

    def __init__(self, monkeypatch):
        self.now, self.ran, self.waited, self.reaped = 1000.0, 0.0, 0.0, 0.0
        monkeypatch.setattr(monitor.time, "monotonic", lambda: self.now)
        monkeypatch.setattr(monitor, "_stats", self.stats)
        monkeypatch.setattr(monitor, "_sched", lambda pid: {pid: (self.ran, self.waited)})

    def stats(self):
        ticks = monitor._TICK
        fields = ["S", "1"] + ["0"] * 9 + [str(int(self.ran * ticks)), "0", str(int(self.reaped * ticks)), "0"]
        return {100: fields + ["0"] * 4 + ["12345"]}

    def tick(self, seconds, ran=0.0, waited=0.0, reaped=0.0):
        self.now += seconds
        self.ran, self.waited, self.reaped = self.ran + ran, self.waited + waited, self.reaped + reaped


@pytest.mark.parametrize(
    ("per_second", "idle_per_second"),
    [
        ({}, 1.0),  # asleep
        ({"ran": 0.2, "waited": 0.8}, 0.0),  # a busy machine: a fifth of a core, the rest waiting for it
        ({"reaped": 1.0}, 0.0),  # waiting for children that computed and were reaped
        # nice 19 beside busy loops: runs 1% of the time; waiting counts up to 20 x that (0.2), not 0.99
        ({"ran": 0.01, "waited": 0.99}, 0.79),
    ],
    ids=["sleeping", "busy-machine", "busy-children", "starved-by-its-own-priority"],
)
def test_the_idle_clock(monkeypatch, per_second, idle_per_second):
    proc = _FakeProc(monkeypatch)
    clocks = monitor._Clocks(100)
    clocks.look()
    for _ in range(10):
        proc.tick(1.0, **per_second)
        clocks.look()
    assert clocks.idle == pytest.approx(10 * idle_per_second, abs=0.05)
    assert clocks.cpu == pytest.approx(10 * (per_second.get("ran", 0.0) + per_second.get("reaped", 0.0)), abs=0.05)
    assert monitor.WAIT_CREDIT == 20.0


def test_clip_keeps_a_bounded_head_or_tail_with_a_marker():
    assert clip("short") == "short"
    head = clip("E" * 1_500_000)
    assert len(head) == MAX_ERROR_CHARS and head.startswith("EEE") and head.endswith("more chars cut]")
    tail = clip("x" * 5000 + "ValueError: boom", 100, tail=True)
    assert len(tail) == 100 and tail.startswith("[") and tail.endswith("ValueError: boom")


_LONG = 'raise type("E" * 1_500_000, (Exception,), {})()'


@requires_bwrap
def test_a_huge_exception_name_is_cut_in_info_and_the_transcript():
    """The exception's class name (1.5 M characters) reaches ``info["score"]["error"]`` and the tester's
    report cut to a few hundred characters with a marker (it went in whole)."""
    item = demo_items("mbpp")[0]
    env = CodeTaskEnv([item], turns=("coder", "tester", "coder"), sandbox=SandboxConfig(timeout_s=5.0))
    env.reset(options={"index": 0})
    code = f"def sum_squares(xs):\n    return 0\n{_LONG}\n"
    for reply in (code, item.tests[0], code):
        env.step(reply)
    error = env.infos["coder"]["score"]["error"]
    assert "EEEE" in error and "more chars cut]" in error and len(error) < 2 * MAX_ERROR_CHARS, error[:500]
    report = next(m.text for m in env.transcript if m.speaker == "env")
    assert "more chars cut]" in report and len(report) < 2 * MAX_ERROR_CHARS
