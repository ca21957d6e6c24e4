"""Watching a sandboxed run until it ends or one of its time limits is reached (:func:`watch`).

Three clocks run besides the kernel's per-process ``RLIMIT_CPU``, all read from ``/proc`` for the
run's process tree (the started process and every descendant; Linux only):

==========  ======================================================================================
CPU         the CPU time of the whole tree, reaped children included, against the CPU limit: the
            processes of a fork bomb share one budget instead of each getting its own
idle        seconds in which none of the tree's threads ran *or waited for a CPU* (sleeping,
            blocked on a pipe, a lock or the disk, stopped): a sleeping program is stopped after
            ``idle_limit_s`` whatever its CPU limit, while a busy machine, which makes a program
            wait for a CPU, does not make it idle. Waiting for a CPU counts only up to
            :data:`WAIT_CREDIT` times the time a thread ran, so a thread that lowered its own
            priority (``nice``, ``SCHED_IDLE``) to wait forever on a loaded machine becomes idle
wall        the wall-clock backstop, for a machine overloaded so much that a program waits more
            than :data:`WAIT_CREDIT` times longer than it runs
==========  ======================================================================================

Time waiting for a CPU is read from ``/proc/<pid>/task/<tid>/schedstat`` (``run_delay``); where the
kernel has no schedstat, a process in state ``R`` counts as not idle.
"""

from __future__ import annotations

import os
import resource
import select
import signal
import time
from dataclasses import dataclass
from typing import Literal

__all__ = ["WAIT_CREDIT", "Watch", "kill_tree", "watch"]

#: Waiting for a CPU counts as progress up to this many times the time the thread ran in the same
#: interval (a program sharing a core with 20 others is still not idle).
WAIT_CREDIT = 20.0
_TICK = os.sysconf("SC_CLK_TCK")
#: Shortest and longest pause between two looks at ``/proc`` (seconds); in between, a run that ends
#: is noticed at once (through a pidfd where the kernel has them).
_MIN_POLL, _MAX_POLL = 0.05, 0.5

_SCHEDSTAT = os.path.exists("/proc/self/schedstat")

Limit = Literal["cpu", "idle", "wall"]


@dataclass(frozen=True)
class Watch:
    """How a watched run ended.

    Attributes:
        returncode: the exit code (negative: the signal), ``None`` when a limit was reached first
            (the process is then still running: :func:`kill_tree`, then reap it).
        usage: ``os.wait4``'s resource usage once reaped, else ``None``.
        limit: the limit reached (``"cpu"``: the tree's CPU time, ``"idle"``, ``"wall"``), or ``None``.
        cpu_s: the tree's CPU seconds at the last look (reaped children included).
        idle_s: idle seconds counted.
    """

    returncode: int | None
    usage: resource.struct_rusage | None
    limit: Limit | None
    cpu_s: float
    idle_s: float


def _stats() -> dict[int, list[str]]:
    """pid -> the fields of ``/proc/<pid>/stat`` after the command name (state first)."""
    table = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                with open(f"/proc/{entry.name}/stat", "rb") as f:
                    table[int(entry.name)] = f.read().rsplit(b")", 1)[1].decode("ascii", "replace").split()
            except (OSError, IndexError):
                continue
    return table


def _tree(root: int, table: dict[int, list[str]]) -> list[int]:
    """``root`` and its descendants (field 1 after the name is the parent pid)."""
    children: dict[int, list[int]] = {}
    for pid, f in table.items():
        if len(f) > 13 and f[1].isdigit():
            children.setdefault(int(f[1]), []).append(pid)
    found, todo = [], [root] if root in table else []
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo += children.get(pid, [])
    return found


def _sched(pid: int) -> dict[int, tuple[float, float]] | None:
    """tid -> (seconds run, seconds waited for a CPU) of ``pid``'s threads; ``None`` without schedstat."""
    if not _SCHEDSTAT:
        return None
    out = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return {}
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat", "rb") as f:
                ran, waited = f.read().split()[:2]
        except (OSError, ValueError):
            continue
        out[int(tid)] = (int(ran) / 1e9, int(waited) / 1e9)
    return out


class _Clocks:
    """The tree's CPU time and idle time, updated by :meth:`look`."""

    def __init__(self, root: int) -> None:
        self.root = root
        self.last = time.monotonic()
        self.idle = 0.0
        self.cpu = 0.0
        self.threads: dict[tuple[int, str, int], tuple[float, float]] = {}
        self.reaped: dict[tuple[int, str], float] = {}

    def look(self) -> float:
        """Read ``/proc`` once; returns the seconds it took."""
        t0 = time.perf_counter()
        now = time.monotonic()
        table = _stats()
        progress = cpu = 0.0
        for pid in _tree(self.root, table):
            f = table[pid]
            start = f[19] if len(f) > 19 else ""
            own, reaped = (int(f[11]) + int(f[12])) / _TICK, (int(f[13]) + int(f[14])) / _TICK
            cpu += own + reaped
            progress += reaped - self.reaped.get((pid, start), 0.0)  # children that ran and were reaped
            self.reaped[(pid, start)] = reaped
            sched = _sched(pid)
            if sched is None:  # no schedstat: a running or runnable process is not idle
                progress += (now - self.last) if f[0] == "R" else 0.0
                continue
            for tid, (ran, waited) in sched.items():
                ran0, waited0 = self.threads.get((pid, start, tid), (0.0, 0.0))
                d_ran = ran - ran0
                progress += d_ran + min(waited - waited0, WAIT_CREDIT * d_ran)
                self.threads[(pid, start, tid)] = (ran, waited)
        self.idle += max(0.0, (now - self.last) - progress)
        self.cpu = max(self.cpu, cpu)
        self.last = now
        return time.perf_counter() - t0


def watch(pid: int, cpu_limit_s: float, idle_limit_s: float, wall_limit_s: float) -> Watch:
    """Wait for the child ``pid`` to end, or for its tree to reach a limit (module docstring).

    Args:
        pid: a child of this process (reaped here with ``os.wait4`` when it ends).
        cpu_limit_s: CPU seconds of the whole tree.
        idle_limit_s: idle seconds.
        wall_limit_s: wall-clock seconds from now.

    Returns:
        The :class:`Watch`; when a limit is reached the tree is left running for the caller to kill.
    """
    clocks = _Clocks(pid)
    deadline = clocks.last + wall_limit_s
    next_look = clocks.last + _MIN_POLL
    fd = None
    try:
        fd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        pass
    delay = 0.001
    try:
        while True:
            wpid, status, usage = os.wait4(pid, os.WNOHANG)
            if wpid:
                cpu = max(clocks.cpu, usage.ru_utime + usage.ru_stime)
                return Watch(os.waitstatus_to_exitcode(status), usage, None, cpu, clocks.idle)
            now = time.monotonic()
            limit: Limit | None = "wall" if now >= deadline else None
            if limit is None and now >= next_look:
                cost = clocks.look()
                next_look = now + min(_MAX_POLL, max(_MIN_POLL, 20 * cost))  # reading /proc: at most ~5% of a core
                if clocks.cpu > cpu_limit_s:
                    limit = "cpu"
                elif clocks.idle > idle_limit_s:
                    limit = "idle"
            if limit is not None:
                return Watch(None, None, limit, clocks.cpu, clocks.idle)
            left = max(0.0, min(next_look, deadline) - time.monotonic())
            if fd is not None:
                select.select([fd], [], [], left)
            else:  # no pidfd: poll for the end every <= 50 ms
                time.sleep(min(delay, left))
                delay = min(2 * delay, 0.05)
    finally:
        if fd is not None:
            os.close(fd)


def kill_tree(root: int) -> None:
    """Stop, then kill, ``root`` (a child of this process, not yet reaped) and its descendants.

    The tree is read again here, not taken from an earlier look, so no process that has left it since
    (and whose pid may have been reused) is signalled; stopped processes can neither fork nor exit, so
    none is missed by being re-parented."""
    for _ in range(10):
        pids = _tree(root, _stats())
        if not pids:
            return
        for sig in (signal.SIGSTOP, signal.SIGKILL):
            for pid in pids:
                try:
                    os.kill(pid, sig)
                except OSError:
                    pass
