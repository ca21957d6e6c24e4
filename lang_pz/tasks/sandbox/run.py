"""Running one program in the sandbox (:func:`run_python`) or many at once (:func:`run_python_many`)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from lang_pz.error import InvalidKwargError
from lang_pz.tasks.sandbox.bootstrap import bootstrap_argv
from lang_pz.tasks.sandbox.config import ExecutionResult, SandboxConfig, Status
from lang_pz.tasks.sandbox.isolation import WORKDIR, command, launch_config, minimal_env, resolve, seccomp_file
from lang_pz.tasks.sandbox.monitor import kill_tree, watch
from lang_pz.tasks.sandbox.uids import (
    acquire_uid,
    kill_uid,
    release_uid,
    sweep_files,
    user_task_count,
)

__all__ = ["run_python", "run_python_many"]

#: Tasks bubblewrap itself adds for the sandbox user: its monitor and the pid namespace's init.
_BWRAP_TASKS = 3
_SIGNALS = frozenset(int(s) for s in signal.Signals)


def _unplace(text: str, folder: str) -> str:
    """``text`` with the host path of the program's folder shown as :data:`WORKDIR`."""
    for path in {folder, os.path.realpath(folder)}:
        text = text.replace(path, WORKDIR)
    return text


def _read_back(f, limit: int) -> tuple[str, bool]:
    f.seek(0)
    raw = f.read(4 * limit + 4)
    text = raw.decode("utf-8", errors="replace")
    more = bool(f.read(1))
    if len(text) > limit:
        return text[:limit], True
    return text, more


def _tail(f, n: int = 4000) -> str:
    f.seek(0, os.SEEK_END)
    f.seek(max(0, f.tell() - n))
    return f.read().decode("utf-8", errors="replace")


def _status(returncode: int, timed_out: bool, stderr_tail: str) -> Status:
    if timed_out or returncode == -signal.SIGXCPU:
        return "timeout"
    if returncode == -signal.SIGXFSZ:
        return "output_limit"
    if returncode == 0:
        return "ok"
    if "MemoryError" in stderr_tail:
        return "memory"
    if "[Errno 27] File too large" in stderr_tail:  # Python ignores SIGXFSZ: writes raise EFBIG
        return "output_limit"
    return "error"


def run_python(source: str, config: SandboxConfig | None = None) -> ExecutionResult:
    """Run the Python program ``source`` in the sandbox and wait for it to end (at most
    ``timeout_s`` of CPU time per process and in all, ``idle_limit_s`` idle, ``wall_limit_s`` of
    wall-clock time: :mod:`.monitor`).

    Args:
        source: the whole program (it runs as ``/sandbox/main.py`` in an otherwise empty
            working directory).
        config: the limits; default :class:`SandboxConfig()`.

    Returns:
        The :class:`ExecutionResult`. Whatever the program does, this returns a result; it
        raises only if the sandbox itself cannot be set up.

    Raises:
        LangPZError: no usable interpreter for the sandbox user, or an impossible ``config``.
        InvalidKwargError: ``source`` is not a str.
    """
    if not isinstance(source, str):
        raise InvalidKwargError(f"source must be a str (a Python program), got {type(source).__name__}")
    config = config or SandboxConfig()
    plan = resolve(config)
    uid = acquire_uid(config.uid_base) if plan.drop else None
    tmp = tempfile.mkdtemp(prefix="lang_pz_sandbox_")
    try:
        script = Path(tmp) / "main.py"
        script.write_text(source, encoding="utf-8", errors="surrogatepass")
        if uid is not None:
            os.chown(tmp, uid, uid)
            os.chown(script, uid, uid)
            nproc = config.max_processes
        else:
            nproc = user_task_count(os.getuid()) + config.max_processes
        if plan.mode == "bubblewrap":
            nproc += _BWRAP_TASKS
        rlimits = {
            "RLIMIT_AS": config.memory_mb * 2**20,
            # bubblewrap runs the program as its pid namespace's init, which ignores SIGXCPU:
            # there the hard limit (SIGKILL) is the soft one
            "RLIMIT_CPU": (config.cpu_limit_s, config.cpu_limit_s + (plan.mode == "rlimits")),
            "RLIMIT_NPROC": nproc,
            "RLIMIT_FSIZE": config.max_file_mb * 2**20,
            "RLIMIT_NOFILE": 64,
            "RLIMIT_CORE": 0,
        }
        with (
            tempfile.TemporaryFile() as out,
            tempfile.TemporaryFile() as err,
            seccomp_file(plan) as bpf,
        ):
            fd = bpf.fileno() if plan.seccomp else None
            argv, env = command(plan, tmp, config.max_file_mb * 2**20, fd)
            cfg = launch_config(plan, tmp, argv, env, rlimits, uid, fd)
            t0 = time.perf_counter()
            proc = subprocess.Popen(
                bootstrap_argv(cfg),
                cwd=tmp,
                env=minimal_env(tmp),
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                start_new_session=True,
                close_fds=True,
                pass_fds=(bpf.fileno(),) if plan.seccomp else (),
            )
            w = watch(proc.pid, config.cpu_limit_s, config.idle_limit_s, config.wall_limit_s)
            returncode, usage = w.returncode, w.usage
            if returncode is None:  # a limit was reached: every process of the tree
                kill_tree(proc.pid)
            try:  # the whole group: children that did not call setsid() (nor stay in the tree)
                os.killpg(proc.pid, signal.SIGKILL)
            except OSError:
                pass
            if returncode is None or usage is None:
                _, status, usage = os.wait4(proc.pid, 0)
                returncode = os.waitstatus_to_exitcode(status)
            proc.returncode = returncode  # reaped here (os.wait4), not by Popen
            if plan.mode == "bubblewrap" and returncode > 128 and returncode - 128 in _SIGNALS:
                returncode = -(returncode - 128)  # bwrap exits with 128 + n when its child got signal n
            duration = time.perf_counter() - t0
            cpu = max(w.cpu_s, usage.ru_utime + usage.ru_stime)
            # SIGKILL at the hard CPU limit is a timeout too. The rusage read back can be short of
            # the kernel's own count (measured 1.68 s at a 2 s limit on a busy machine), hence
            # the margin; a program that kills itself early stays an "error".
            timed_out = w.limit is not None or (returncode == -signal.SIGKILL and cpu >= 0.5 * config.cpu_limit_s)
            if uid is not None:
                kill_uid(uid)
            stdout, out_cut = _read_back(out, config.max_output_chars)
            err_tail = _tail(err, max(4000, 4 * config.max_output_chars))
            if plan.mode == "rlimits":  # show the folder as bubblewrap does: the same text every run
                stdout, err_tail = (_unplace(t, tmp) for t in (stdout, err_tail))
            err.seek(0, os.SEEK_END)
            err_cut = err.tell() > len(err_tail.encode("utf-8", errors="replace")) or len(err_tail) > config.max_output_chars
            stderr = err_tail[-config.max_output_chars :] if config.max_output_chars else ""
        return ExecutionResult(
            status=_status(returncode, timed_out, err_tail),
            returncode=returncode,
            stdout=stdout,
            stderr=stderr,
            duration_s=round(duration, 4),
            cpu_s=round(cpu, 4),
            stdout_truncated=out_cut,
            stderr_truncated=err_cut,
            isolation={
                "mode": plan.mode,
                "uid": uid,
                "network": "isolated" if plan.network_isolated else "shared",
                "python": plan.python,
                "seccomp": plan.seccomp,
                "ipc": "isolated" if plan.ipc_isolated else "shared",
                "landlock": plan.landlock,
            },
        )
    finally:
        if uid is not None:
            kill_uid(uid)
            if plan.mode == "rlimits":  # bubblewrap shows the program no host folder it can write
                sweep_files(uid)
            release_uid(uid)
        shutil.rmtree(tmp, ignore_errors=True)


def run_python_many(
    sources: Sequence[str], config: SandboxConfig | None = None, *, max_workers: int | None = None
) -> list[ExecutionResult]:
    """Run several programs concurrently (each in its own sandbox); results in input order.

    ``max_workers`` threads (default: twice the number of CPUs; each mostly waits on its
    sandboxed process) run one program at a time.
    """
    if max_workers is not None and (isinstance(max_workers, bool) or not isinstance(max_workers, int) or max_workers < 1):
        raise InvalidKwargError(f"max_workers must be None or an integer >= 1, got {max_workers!r}")
    workers = max_workers or 2 * (os.cpu_count() or 1)
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(lambda s: run_python(s, config), sources))
