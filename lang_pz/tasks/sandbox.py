"""Run untrusted Python (model-written code and tests) in a separate, limited process.

The code-task environments execute what a language model wrote. :func:`run_python` runs one
program in a fresh interpreter (``python -I -B``, isolated mode: no ``PYTHON*`` variables, no
user site-packages) and returns an :class:`ExecutionResult`; a program that loops forever,
forks, allocates without bound, floods its output or looks for secrets costs its own result
and nothing else. The limits (:class:`SandboxConfig`):

==================  =========================================================================
What                How
==================  =========================================================================
CPU time            ``timeout_s`` CPU seconds per process (``RLIMIT_CPU``, soft limit
                    ``ceil(timeout_s)``: SIGXCPU; hard limit one second later: SIGKILL). This
                    is *the* time limit: CPU time does not grow while the machine is busy, so a
                    correct program gets the same verdict on an idle and a loaded machine
wall-clock time     ``wall_timeout_s`` (default ``10 * timeout_s``): a backstop for programs
                    that sleep or block without using CPU; on expiry the whole process group
                    is killed (SIGKILL). Both give status ``"timeout"``
memory              ``RLIMIT_AS`` = ``memory_mb`` (a huge allocation raises ``MemoryError``)
processes           ``RLIMIT_NPROC``: at most ``max_processes`` tasks for the sandbox user
files               ``RLIMIT_FSIZE`` = ``max_file_mb``, ``RLIMIT_NOFILE`` = 64, no core dumps
output              stdout/stderr go to unnamed temporary files (never pipes, so a flood cannot
                    fill the parent's memory), are read back truncated to ``max_output_chars``
working directory   a fresh temporary directory, removed afterwards; ``HOME`` points there
environment         built from scratch: ``PATH``, ``LANG``, ``HOME``, ``PYTHONHASHSEED=0`` and
                    single-thread BLAS settings. Nothing of ``os.environ`` (API keys, tokens)
                    is passed on
user (as root)      when the parent runs as root the program runs as a fresh unprivileged uid
                    (taken in turn from a pool starting at ``uid_base``), so ``RLIMIT_NPROC`` is
                    enforced and ``/proc/<parent>/environ`` is unreadable; after the run every
                    process of that uid is stopped and killed (forks that escaped the group)
network (as root)   a new, empty network namespace (``unshare(CLONE_NEWNET)``) when the kernel
                    allows it
==================  =========================================================================

The limits are set by a tiny trusted bootstrap interpreter that then ``exec``s the sandboxed
one, not in ``preexec_fn``: the environments are stepped from thread pools, and Python
documents ``preexec_fn`` as unsafe in the presence of threads.

Limitations, stated plainly: when the parent is *not* root the program runs as the same user,
so it can read that user's files and other processes' ``/proc/<pid>/environ`` (including the
parent's), it keeps network access, and ``RLIMIT_NPROC`` counts all of the user's processes
(it is set to their current count plus ``max_processes``). Use a container or run as root for
hostile code. Files written outside the working directory (e.g. ``/tmp``) are not removed.
Linux only (``resource``, ``/proc``).
"""

from __future__ import annotations

import json
import math
import os
import resource
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from lang_pz.error import InvalidKwargError, LangPZError

__all__ = [
    "ExecutionResult",
    "SandboxConfig",
    "Status",
    "run_python",
    "run_python_many",
]

Status = Literal["ok", "error", "timeout", "memory", "output_limit"]

_CLONE_NEWNET = 0x40000000

# Runs as the parent's user (root or not), sets the limits, optionally isolates the network
# and drops to the sandbox uid, then replaces itself with the sandboxed interpreter.
_BOOTSTRAP = r"""
import json, os, resource, sys
cfg = json.loads(sys.argv[1])
for name, value in cfg["rlimits"].items():
    soft, hard = value if isinstance(value, list) else (value, value)
    resource.setrlimit(getattr(resource, name), (soft, hard))
if cfg["unshare_net"]:
    import ctypes
    if ctypes.CDLL(None, use_errno=True).unshare(0x40000000) != 0:
        os.write(2, b"sandbox: could not isolate the network\n")
        os._exit(112)
if cfg["uid"] is not None:
    os.setgroups([])
    os.setgid(cfg["uid"])
    os.setuid(cfg["uid"])
os.execve(cfg["python"], [cfg["python"], "-I", "-B", cfg["script"]], cfg["env"])
"""


@dataclass(frozen=True)
class SandboxConfig:
    """Limits of one sandboxed run (see the module docstring for how each is enforced).

    Attributes:
        timeout_s: CPU seconds (> 0) each process of the program may use, interpreter start-up
            included (about 0.05 s); the kernel counts whole seconds, so it is rounded up.
        wall_timeout_s: wall-clock seconds (> 0) before the run is killed whatever it does
            (for programs that sleep or block); ``None`` (default) = ``10 * timeout_s``. Keep
            it well above ``timeout_s``: on a busy machine a program gets a fraction of a core.
        memory_mb: address-space limit in MiB (>= 64).
        max_processes: tasks (processes and threads) the sandbox user may have (>= 1).
        max_output_chars: characters kept of stdout and of stderr each (>= 0).
        max_file_mb: largest file the program may write, output included, in MiB (>= 1).
        drop_privileges: run as an unprivileged uid; ``None`` (default) = when root. ``True``
            when not root raises :class:`~lang_pz.error.LangPZError`.
        isolate_network: run in an empty network namespace; ``None`` (default) = when root
            and the kernel allows it. ``True`` when impossible raises.
        python: the sandboxed interpreter; ``None`` = this one when the sandbox user can run
            it, else a system ``python3.X`` of the same version that it can.
        uid_base: first uid of the pool used when dropping privileges (one uid per
            concurrent run; processes of these uids are killed after each run).
    """

    timeout_s: float = 5.0
    wall_timeout_s: float | None = None
    memory_mb: int = 512
    max_processes: int = 16
    max_output_chars: int = 4000
    max_file_mb: int = 16
    drop_privileges: bool | None = None
    isolate_network: bool | None = None
    python: str | None = None
    uid_base: int = 1_500_000_000

    def __post_init__(self) -> None:
        t = self.timeout_s
        if isinstance(t, bool) or not isinstance(t, (int, float)) or not 0 < t < math.inf:
            raise InvalidKwargError(f"timeout_s must be a finite number > 0 (CPU seconds), got {t!r}")
        w = self.wall_timeout_s
        if w is not None and (isinstance(w, bool) or not isinstance(w, (int, float)) or not w > 0 or w == math.inf):
            raise InvalidKwargError(f"wall_timeout_s must be None or a finite number > 0, got {w!r}")
        for name, low in (("memory_mb", 64), ("max_processes", 1), ("max_output_chars", 0), ("max_file_mb", 1)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise InvalidKwargError(f"{name} must be an integer >= {low}, got {value!r}")
        if not isinstance(self.uid_base, int) or self.uid_base < 1000:
            raise InvalidKwargError(f"uid_base must be an integer >= 1000, got {self.uid_base!r}")

    @property
    def cpu_limit_s(self) -> int:
        """The ``RLIMIT_CPU`` soft limit: ``timeout_s`` rounded up to whole seconds."""
        return max(1, math.ceil(self.timeout_s))

    @property
    def wall_limit_s(self) -> float:
        """The wall-clock backstop in seconds: ``wall_timeout_s`` or ``10 * timeout_s``."""
        return float(self.wall_timeout_s) if self.wall_timeout_s is not None else 10.0 * self.timeout_s


@dataclass(frozen=True)
class ExecutionResult:
    """What one sandboxed run did.

    Attributes:
        status: ``"ok"`` (exit code 0), ``"error"`` (non-zero exit or crash), ``"timeout"``
            (the CPU limit or the wall-clock backstop), ``"memory"`` (``MemoryError``) or ``"output_limit"``
            (a file or the output grew past ``max_file_mb``).
        returncode: the exit code; negative = killed by that signal (``None`` never).
        stdout, stderr: decoded output (UTF-8, invalid bytes replaced): the first
            ``max_output_chars`` of stdout and the last ``max_output_chars`` of stderr (where a
            traceback ends).
        stdout_truncated, stderr_truncated: whether anything was cut.
        duration_s: wall-clock seconds of the run.
        cpu_s: CPU seconds (user + system) of the program's main process and the children it
            waited for.
        isolation: how it ran: ``uid`` (``None`` = the parent's user), ``network``
            (``"isolated"`` or ``"shared"``), ``python`` (interpreter path).
    """

    status: Status
    returncode: int
    stdout: str
    stderr: str
    duration_s: float
    cpu_s: float = 0.0
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    isolation: dict[str, object] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """Whether the program exited with code 0 within its limits."""
        return self.status == "ok"


# -- capabilities (probed once per process) ----------------------------------------------------

_probe_lock = threading.Lock()
_probed: dict[tuple[str, object], object] = {}


def _is_root() -> bool:
    return os.geteuid() == 0


def _minimal_env(home: str) -> dict[str, str]:
    return {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "HOME": home,
        "PYTHONHASHSEED": "0",
        "PYTHONIOENCODING": "utf-8",
        "OMP_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
    }


def _probe(key: tuple[str, object], fn):  # type: ignore[no-untyped-def]
    with _probe_lock:
        if key not in _probed:
            _probed[key] = fn()
        return _probed[key]


def _can_run(python: str, uid: int | None, unshare_net: bool) -> bool:
    """Whether the bootstrap can start ``python`` as ``uid`` and import a few stdlib modules."""
    with tempfile.TemporaryDirectory(prefix="lang_pz_probe_") as tmp:
        script = Path(tmp) / "main.py"
        script.write_text("import collections, json, re\n")
        if uid is not None:
            os.chown(tmp, uid, uid)
            os.chown(script, uid, uid)
        cfg = {"rlimits": {}, "unshare_net": unshare_net, "uid": uid, "python": python,
               "script": str(script), "env": _minimal_env(tmp)}
        try:
            r = subprocess.run([sys.executable, "-I", "-S", "-c", _BOOTSTRAP, json.dumps(cfg)], cwd=tmp,
                               env=_minimal_env(tmp), stdin=subprocess.DEVNULL, capture_output=True,
                               timeout=30, check=False)
        except (OSError, subprocess.SubprocessError):
            return False
        return r.returncode == 0


def _candidates() -> list[str]:
    v = f"{sys.version_info[0]}.{sys.version_info[1]}"
    found = [sys.executable, os.path.realpath(sys.executable)]
    for d in ("/usr/local/bin", "/usr/bin", "/bin"):
        found.append(os.path.join(d, f"python{v}"))
    return [p for i, p in enumerate(found) if p and os.path.isfile(p) and p not in found[:i]]


def _resolve(config: SandboxConfig) -> tuple[bool, bool, str]:
    """``(drop_privileges, isolate_network, python)`` for ``config``, probing what is possible."""
    root = _is_root()
    drop = root if config.drop_privileges is None else config.drop_privileges
    if drop and not root:
        raise LangPZError(
            "SandboxConfig(drop_privileges=True) needs the parent to run as root; "
            "use drop_privileges=None (the default) to run as the current user"
        )
    probe_uid = config.uid_base if drop else None
    if config.isolate_network is None:
        net = root and bool(_probe(("net", None), lambda: _can_run(sys.executable, None, True)))
    else:
        net = config.isolate_network
        if net and not (root and _probe(("net", None), lambda: _can_run(sys.executable, None, True))):
            raise LangPZError(
                "SandboxConfig(isolate_network=True): this process cannot create a network "
                "namespace (needs root and unshare(CLONE_NEWNET)); use isolate_network=None"
            )
    if config.python is not None:
        python = config.python
        if not _probe(("python", (python, probe_uid)), lambda: _can_run(python, probe_uid, False)):
            raise LangPZError(
                f"SandboxConfig(python={python!r}) cannot be run by the sandbox user "
                f"(uid {probe_uid if probe_uid is not None else os.getuid()}); pick an interpreter "
                "that every user can read and execute"
            )
        return drop, net, python

    def find() -> str | None:
        for cand in _candidates():
            if _can_run(cand, probe_uid, False):
                return cand
        return None

    python_found = _probe(("python", (None, probe_uid)), find)
    if python_found is None:
        raise LangPZError(
            f"no Python interpreter that the sandbox user (uid {probe_uid}) can run: tried "
            f"{_candidates()}. Install a system python{sys.version_info[0]}.{sys.version_info[1]} "
            "readable by every user, or pass SandboxConfig(python=...)"
        )
    return drop, net, str(python_found)


# -- uid pool and process sweeping ---------------------------------------------------------------

_uid_lock = threading.Lock()
_uids_in_use: set[int] = set()
_uid_cursor = [0]
#: Size of the uid pool: uids are used in turn, so that the zombies of a killed fork bomb
#: (which still count against RLIMIT_NPROC until init reaps them) never meet the next run.
UID_POOL_SIZE = 4096


def _acquire_uid(base: int) -> int:
    with _uid_lock:
        for _ in range(UID_POOL_SIZE):
            uid = base + _uid_cursor[0] % UID_POOL_SIZE
            _uid_cursor[0] += 1
            if uid not in _uids_in_use and not _pids_of_uid(uid, zombies=True):
                _uids_in_use.add(uid)
                return uid
    raise LangPZError(
        f"all {UID_POOL_SIZE} sandbox uids from {base} are busy or still have processes; "
        "wait for running sandboxes to finish or pass another SandboxConfig(uid_base=...)"
    )


def _release_uid(uid: int) -> None:
    with _uid_lock:
        _uids_in_use.discard(uid)


def _pids_of_uid(uid: int, *, zombies: bool = False) -> list[int]:
    """Processes whose real or effective uid is ``uid`` (zombies only if ``zombies``)."""
    pids = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/status", encoding="ascii", errors="replace") as f:
                state, uids = "", []
                for line in f:
                    if line.startswith("State:"):
                        state = line.split()[1]
                    elif line.startswith("Uid:"):
                        uids = [int(x) for x in line.split()[1:3]]
                        break
        except (OSError, ValueError, IndexError):
            continue
        if uid in uids and (zombies or state != "Z"):
            pids.append(int(entry.name))
    return pids


def _kill_uid(uid: int) -> None:
    """Stop, then kill, every process of ``uid`` (stopped processes cannot fork any more)."""
    for _ in range(50):
        pids = _pids_of_uid(uid)
        if not pids:
            return
        for sig in (signal.SIGSTOP, signal.SIGKILL):
            for pid in pids:
                try:
                    os.kill(pid, sig)
                except OSError:
                    pass
        time.sleep(0.01)


def _user_task_count(uid: int) -> int:
    """Tasks (threads included, as ``RLIMIT_NPROC`` counts them) of ``uid``."""
    n = 0
    for pid in _pids_of_uid(uid):
        try:
            n += len(os.listdir(f"/proc/{pid}/task"))
        except OSError:
            n += 1
    return n


# -- running -------------------------------------------------------------------------------------


def _read_back(f, limit: int) -> tuple[str, bool]:  # type: ignore[no-untyped-def]
    f.seek(0)
    raw = f.read(4 * limit + 4)
    text = raw.decode("utf-8", errors="replace")
    more = bool(f.read(1))
    if len(text) > limit:
        return text[:limit], True
    return text, more


def _tail(f, n: int = 4000) -> str:  # type: ignore[no-untyped-def]
    f.seek(0, os.SEEK_END)
    f.seek(max(0, f.tell() - n))
    return f.read().decode("utf-8", errors="replace")


def _wait(pid: int, timeout: float | None) -> tuple[int | None, resource.struct_rusage | None]:
    """Reap ``pid`` with ``os.wait4`` (for its CPU use); ``(None, None)`` after ``timeout`` s.

    Waits on a pidfd where the kernel has them (Linux >= 5.3), else polls every <= 50 ms."""
    if timeout is None:
        _, status, usage = os.wait4(pid, 0)
        return os.waitstatus_to_exitcode(status), usage
    deadline = time.monotonic() + timeout
    fd = None
    try:
        fd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        pass
    try:
        delay = 0.001
        while True:
            wpid, status, usage = os.wait4(pid, os.WNOHANG)
            if wpid:
                return os.waitstatus_to_exitcode(status), usage
            left = deadline - time.monotonic()
            if left <= 0:
                return None, None
            if fd is not None:
                select.select([fd], [], [], left)
            else:
                time.sleep(min(delay, left))
                delay = min(2 * delay, 0.05)
    finally:
        if fd is not None:
            os.close(fd)


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
    ``timeout_s`` of CPU time, ``wall_limit_s`` of wall-clock time).

    Args:
        source: the whole program (it runs as ``main.py`` in an empty working directory).
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
    drop, net, python = _resolve(config)
    uid = _acquire_uid(config.uid_base) if drop else None
    tmp = tempfile.mkdtemp(prefix="lang_pz_sandbox_")
    try:
        script = Path(tmp) / "main.py"
        script.write_text(source, encoding="utf-8", errors="surrogatepass")
        if uid is not None:
            os.chown(tmp, uid, uid)
            os.chown(script, uid, uid)
            nproc = config.max_processes
        else:
            nproc = _user_task_count(os.getuid()) + config.max_processes
        rlimits = {
            "RLIMIT_AS": config.memory_mb * 2**20,
            "RLIMIT_CPU": (config.cpu_limit_s, config.cpu_limit_s + 1),
            "RLIMIT_NPROC": nproc,
            "RLIMIT_FSIZE": config.max_file_mb * 2**20,
            "RLIMIT_NOFILE": 64,
            "RLIMIT_CORE": 0,
        }
        env = _minimal_env(tmp)
        cfg = {"rlimits": rlimits, "unshare_net": net, "uid": uid, "python": python,
               "script": str(script), "env": env}
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            t0 = time.perf_counter()
            proc = subprocess.Popen(
                [sys.executable, "-I", "-S", "-c", _BOOTSTRAP, json.dumps(cfg)],
                cwd=tmp, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                start_new_session=True, close_fds=True,
            )
            returncode, usage = _wait(proc.pid, config.wall_limit_s)
            timed_out = returncode is None
            try:  # the whole group: children that did not call setsid()
                os.killpg(proc.pid, signal.SIGKILL)
            except OSError:
                pass
            if returncode is None:
                returncode, usage = _wait(proc.pid, None)
            proc.returncode = returncode  # reaped here (os.wait4), not by Popen
            duration = time.perf_counter() - t0
            cpu = (usage.ru_utime + usage.ru_stime) if usage is not None else 0.0
            # SIGKILL at the hard CPU limit (a program that caught SIGXCPU) is a timeout too
            timed_out = timed_out or (returncode == -signal.SIGKILL and cpu >= config.cpu_limit_s)
            if uid is not None:
                _kill_uid(uid)
            stdout, out_cut = _read_back(out, config.max_output_chars)
            err_tail = _tail(err, max(4000, 4 * config.max_output_chars))
            err.seek(0, os.SEEK_END)
            err_cut = err.tell() > len(err_tail.encode("utf-8", errors="replace")) or len(err_tail) > config.max_output_chars
            stderr = err_tail[-config.max_output_chars:] if config.max_output_chars else ""
        return ExecutionResult(
            status=_status(returncode, timed_out, err_tail),
            returncode=returncode,
            stdout=stdout,
            stderr=stderr,
            duration_s=round(duration, 4),
            cpu_s=round(cpu, 4),
            stdout_truncated=out_cut,
            stderr_truncated=err_cut,
            isolation={"uid": uid, "network": "isolated" if net else "shared", "python": python},
        )
    finally:
        if uid is not None:
            _kill_uid(uid)
            _release_uid(uid)
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
