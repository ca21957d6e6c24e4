"""MATH answer checks bounded in CPU time, in worker interpreters that never import ``__main__``.

Short answers can hang a symbolic check (measured: ``2^{2^{30}}``, ``9^{9^{9^{9}}}`` or
``(10^{10^{7}})!`` against ``1`` run for minutes in sympy without a bound). ``math-verify`` bounds
its own steps with ``signal.alarm``, which works only in the main thread, so environments stepped
by a thread pool cannot rely on it. :func:`bounded_math_equal` therefore sends each check, from
any thread, to a worker process of a pool and cuts a check (killing that worker) once the worker
has spent ``timeout_s`` seconds of CPU time on it. A check holds its worker alone and no lock
while it runs, so a hostile answer stalls only its own check: others run in other workers (a
thread that finds no idle worker starts one; at most :data:`MAX_IDLE_WORKERS` are kept idle).

The worker is a fresh interpreter started as ``python -c`` that imports only lang_pz (not a
``multiprocessing`` spawn or forkserver child, which re-import the caller's main module: a plain
script without an ``if __name__ == "__main__":`` guard would then run again in the worker and
fail). Requests and replies are JSON lines on the worker's stdin and a private copy of its
stdout (anything the checked libraries print goes to stderr).
"""

from __future__ import annotations

import atexit
import json
import logging
import os
import select
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from lang_pz.error import DependencyNotInstalled, LangPZError
from lang_pz.tasks.scoring import last_boxed, math_equal

__all__ = [
    "MAX_ANSWER_CHARS",
    "MAX_IDLE_WORKERS",
    "WALL_BACKSTOP_FACTOR",
    "WORKER_START_TIMEOUT_S",
    "bounded_math_equal",
]

#: Longest answer (in characters) handed to math-verify; longer ones score 0 unparsed.
MAX_ANSWER_CHARS = 400
#: The wall-clock backstop of one check, as a multiple of its CPU-time bound (a check that waits
#: instead of computing cannot hang forever; a busy machine slows a check but never fails it).
WALL_BACKSTOP_FACTOR = 10.0
#: Bound in seconds on starting the worker (a fresh interpreter importing math-verify and sympy);
#: kept apart from the per-check bound so that a slow start is not taken for a hanging check.
WORKER_START_TIMEOUT_S = 120.0
#: Workers kept alive between checks (each an interpreter with sympy loaded, about 85 MB); more
#: start when more threads check at once, and are closed when they finish.
MAX_IDLE_WORKERS = 4
#: Longest error text of a failed check (it may quote the answer) in the error raised.
MAX_ERROR_CHARS = 300

# the folder holding the lang_pz package this process uses (the worker imports the same one)
_ROOT = str(Path(__file__).resolve().parents[2])
_WORKER_CODE = f"import sys; sys.path.insert(0, {_ROOT!r}); from lang_pz.tasks.math_check import _serve; _serve()"
_pool_lock = threading.Lock()  # held only to take or give back an idle worker, never during a check
_idle: list[_Worker] = []


def _serve() -> None:
    """The worker's loop: one JSON ``[answer, gold]`` per stdin line, one JSON reply per line."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is for the caller; it kills the worker
    out = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # what sympy or math-verify print cannot break the protocol
    sys.stdout = sys.stderr
    for name in ("math_verify.grader", "math_verify.parser"):  # "Timeout is disabled": this worker bounds it
        logging.getLogger(name).addFilter(lambda record: not record.getMessage().startswith("Timeout is disabled"))

    def reply(answer: str, gold: str) -> dict[str, Any]:
        try:
            return {"equal": math_equal(answer, gold, timeout_seconds=None)}
        except Exception as e:  # reported to the caller, which raises it
            text = f"{type(e).__name__}: {e}"
            if len(text) > MAX_ERROR_CHARS:
                text = text[:MAX_ERROR_CHARS] + f" ...[{len(text) - MAX_ERROR_CHARS} more chars cut]"
            return {"error": text, "type": type(e).__name__[:100]}

    out.write(json.dumps(reply("1", "1")) + "\n")  # imports math-verify, then says ready
    for line in sys.stdin:
        out.write(json.dumps(reply(*json.loads(line))) + "\n")


def _cpu_seconds(pid: int) -> float | None:
    """CPU time (user + system) used so far by process ``pid``, from ``/proc`` (``None`` if unknown)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


class _Worker:
    """One worker interpreter and its pipes (used by one check at a time)."""

    def __init__(self) -> None:
        self.owner = os.getpid()  # a forked child must not share the parent's pipes
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _WORKER_CODE], stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0
        )
        self.buf = b""
        deadline = time.monotonic() + WORKER_START_TIMEOUT_S
        while (line := self.read_line(0.05)) is None:
            if time.monotonic() > deadline:
                self.close()
                raise LangPZError(f"the math-check worker did not start within {WORKER_START_TIMEOUT_S} s")
        self.result(line)

    def read_line(self, wait_s: float) -> dict[str, Any] | None:
        """The worker's next reply, waiting at most ``wait_s`` seconds (``None``: not yet).

        Raises:
            EOFError: the worker exited.
        """
        assert self.proc.stdout is not None
        if b"\n" not in self.buf and select.select([self.proc.stdout], [], [], wait_s)[0]:
            chunk = os.read(self.proc.stdout.fileno(), 65536)
            if not chunk:
                raise EOFError
            self.buf += chunk
        if b"\n" not in self.buf:
            return None
        line, self.buf = self.buf.split(b"\n", 1)
        return dict(json.loads(line))

    def result(self, reply: dict[str, Any]) -> bool:
        """The verdict in ``reply``; an error the worker reported is raised here."""
        if "error" not in reply:
            return bool(reply["equal"])
        self.close()
        cls = DependencyNotInstalled if reply["type"] == "DependencyNotInstalled" else LangPZError
        raise cls(f"the MATH answer check failed in its worker: {reply['error']}")

    def close(self) -> None:
        if self.owner == os.getpid() and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def _close_idle() -> None:
    """Close every idle worker (at exit)."""
    with _pool_lock:
        workers = list(_idle)
        _idle.clear()
    for w in workers:
        w.close()


def _forget_pool() -> None:
    """In a forked child: the parent's workers and lock are not this process's."""
    global _pool_lock
    _pool_lock = threading.Lock()
    _idle.clear()


atexit.register(_close_idle)
os.register_at_fork(after_in_child=_forget_pool)


def _take_worker() -> _Worker:
    """An idle live worker of the pool, else a new one (started without holding any lock).

    Raises:
        LangPZError: a new worker cannot start.
    """
    with _pool_lock:
        while _idle:
            worker = _idle.pop()
            if worker.proc.poll() is None:
                return worker
    try:
        return _Worker()
    except EOFError:
        raise LangPZError(
            "the math-check worker exited before it was ready (its error is printed above); "
            "check that lang_pz imports in a fresh interpreter: python -c 'import lang_pz.tasks.scoring'"
        ) from None


def _give_back(worker: _Worker) -> None:
    """Return ``worker`` to the pool after a check it answered (closed if the pool is full)."""
    if worker.owner == os.getpid() and worker.proc.poll() is None:
        with _pool_lock:
            if len(_idle) < MAX_IDLE_WORKERS:
                _idle.append(worker)
                return
    worker.close()


def bounded_math_equal(prediction: str, gold: str, timeout_s: float = 5.0) -> tuple[bool, str]:
    """:func:`lang_pz.tasks.scoring.math_equal` bounded in CPU time, from any thread.

    Every check runs in a worker interpreter of a pool (see the module docstring); it is cut when the
    worker has spent ``timeout_s`` seconds of *CPU time* on it, so a busy machine slows a check
    but never fails a correct answer, with a wall-clock backstop of
    :data:`WALL_BACKSTOP_FACTOR` x ``timeout_s``. Starting a worker (up to
    :data:`WORKER_START_TIMEOUT_S`, only when no idle one is left) is not counted. Checks from
    several threads run at once, each in its own worker: a hostile answer delays no other check.

    Args:
        prediction: a bare answer or a solution text (its last ``\\boxed{}`` is used).
        gold: the bare gold answer.
        timeout_s: the CPU-time bound of the check in seconds.

    Returns:
        ``(equal, check)`` where ``check`` is ``"ok"``, ``"too_long"`` (the prediction's answer
        has more than :data:`MAX_ANSWER_CHARS` characters; not parsed) or ``"timeout"`` (no
        verdict within the bound, or the worker died on it, e.g. out of memory; not equal).

    Raises:
        DependencyNotInstalled: math-verify is missing.
        LangPZError: the worker cannot start, or the check raised in it.
    """
    boxed = last_boxed(prediction)
    answer = boxed if boxed is not None else prediction.strip()
    if len(answer) > MAX_ANSWER_CHARS:
        return False, "too_long"
    worker = _take_worker()
    assert worker.proc.stdin is not None
    cpu0, wall0 = _cpu_seconds(worker.proc.pid), time.monotonic()
    try:
        worker.proc.stdin.write((json.dumps([answer, gold]) + "\n").encode())
        while (reply := worker.read_line(0.05)) is None:
            cpu = _cpu_seconds(worker.proc.pid)
            spent = (cpu - cpu0) if cpu is not None and cpu0 is not None else time.monotonic() - wall0
            if spent > timeout_s or time.monotonic() - wall0 > WALL_BACKSTOP_FACTOR * timeout_s:
                worker.close()
                return False, "timeout"
    except (EOFError, BrokenPipeError):
        worker.close()
        return False, "timeout"
    except BaseException:  # KeyboardInterrupt mid-check: the worker's state is unknown
        worker.close()
        raise
    equal = worker.result(reply)  # closes the worker before raising a reported error
    _give_back(worker)
    return equal, "ok"
