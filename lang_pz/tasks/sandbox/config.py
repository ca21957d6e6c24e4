"""The limits of a sandboxed run (:class:`SandboxConfig`) and what it did (:class:`ExecutionResult`)."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from lang_pz.error import InvalidKwargError

__all__ = [
    "IDLE_TIMEOUT_S",
    "MAX_ERROR_CHARS",
    "SANDBOX_MODES",
    "TIMING_KEYS",
    "ExecutionResult",
    "SandboxConfig",
    "Status",
    "clip",
    "sandbox_from_spec",
]

Status = Literal["ok", "error", "timeout", "memory", "output_limit"]

#: Fields of :class:`ExecutionResult` that measure time: they differ between two runs of the
#: same program, everything else is the same (for a program that is itself deterministic).
TIMING_KEYS: tuple[str, ...] = ("duration_s", "cpu_s")
#: Default of :attr:`SandboxConfig.idle_timeout_s`: seconds a run may spend idle (see
#: :mod:`.monitor`). Start-up is hardly idle at all (measured on 2 cores at load 6-12, 110 runs
#: per mode: median 0.000 s idle, at most 0.32 s under bubblewrap and 0.05 s in the rlimits mode,
#: against 0.1-0.7 s of wall-clock time), so this bounds what a sleeping program costs, with a
#: wide margin for a slow start.
IDLE_TIMEOUT_S = 2.0
#: Longest text a program controls (an exception's name and message, a reason a test failed) that
#: goes into a verdict, ``info`` or a log line; longer text is cut by :func:`clip`.
MAX_ERROR_CHARS = 300


def clip(text: str, limit: int = MAX_ERROR_CHARS, *, tail: bool = False) -> str:
    """``text`` if it has at most ``limit`` characters, else its head (``tail``: its end, where a
    traceback names the error) with a note of how much was cut: ``limit`` characters in all."""
    if len(text) <= limit:
        return text
    if tail:
        note = f"[{len(text) - limit} chars cut]... "
        return note + text[len(text) - max(0, limit - len(note)) :]
    note = f" ...[{len(text) - limit} more chars cut]"
    return text[: max(0, limit - len(note))] + note


def _is_number(x: object) -> bool:
    return not isinstance(x, bool) and isinstance(x, (int, float))


@dataclass(frozen=True)
class SandboxConfig:
    """Limits of one sandboxed run (see :mod:`lang_pz.tasks.sandbox` for how each is enforced).

    Attributes:
        timeout_s: CPU seconds (> 0) each process of the program may use, and all its processes
            together, interpreter start-up included (about 0.05 s); the kernel counts whole
            seconds, so it is rounded up.
        idle_timeout_s: seconds (> 0) the run may be idle, none of its threads running or
            waiting for a CPU (sleeping, blocked), before it is killed (:mod:`.monitor`);
            ``None`` (default) = :data:`IDLE_TIMEOUT_S`. A busy machine does not make a program
            idle, so this does not depend on the load.
        wall_timeout_s: wall-clock seconds (> 0) before the run is killed whatever it does: a
            backstop for a machine so overloaded that a program waits for a CPU more than 20
            times longer than it runs; ``None`` (default) = ``10 * timeout_s``.
        memory_mb: address-space limit in MiB (>= 64).
        max_processes: tasks (processes and threads) the sandbox user may have (>= 1).
        max_output_chars: characters kept of stdout and of stderr each (>= 0).
        max_file_mb: largest file the program may write, output included, in MiB (>= 1); with
            bubblewrap also the size of its whole writable folder.
        bubblewrap: run inside ``bwrap`` (Debian/Ubuntu package ``bubblewrap``). ``None``
            (default) and ``True``: required, :class:`~lang_pz.error.LangPZError` (saying how to
            install it) where it cannot run; ``False``: the opt-in to resource limits only,
            warned about once per configuration (what that mode does not contain).
        drop_privileges: run as an unprivileged uid; ``None`` (default) = when root. ``True``
            when not root raises :class:`~lang_pz.error.LangPZError`.
        isolate_network: run in an empty network namespace; ``None`` (default) = whenever
            possible (always with bubblewrap; as root without it). ``True`` when impossible
            raises; ``False`` keeps the network.
        python: the sandboxed interpreter; ``None`` = this one when the sandbox user can run
            it, else a system ``python3.X`` of the same version that it can.
        uid_base: first uid of the pool used when dropping privileges (one uid per
            concurrent run; processes of these uids are killed after each run).
    """

    timeout_s: float = 5.0
    idle_timeout_s: float | None = None
    wall_timeout_s: float | None = None
    memory_mb: int = 512
    max_processes: int = 16
    max_output_chars: int = 4000
    max_file_mb: int = 16
    bubblewrap: bool | None = None
    drop_privileges: bool | None = None
    isolate_network: bool | None = None
    python: str | None = None
    uid_base: int = 1_500_000_000

    def __post_init__(self) -> None:
        t = self.timeout_s
        if not _is_number(t) or not 0 < t < math.inf:
            raise InvalidKwargError(f"timeout_s must be a finite number > 0 (CPU seconds), got {t!r}")
        for name in ("idle_timeout_s", "wall_timeout_s"):
            w = getattr(self, name)
            if w is not None and (not _is_number(w) or not 0 < w < math.inf):
                raise InvalidKwargError(f"{name} must be None or a finite number > 0 (seconds), got {w!r}")
        for name, low in (("memory_mb", 64), ("max_processes", 1), ("max_output_chars", 0), ("max_file_mb", 1)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise InvalidKwargError(f"{name} must be an integer >= {low}, got {value!r}")
        for name in ("bubblewrap", "drop_privileges", "isolate_network"):
            if getattr(self, name) not in (None, True, False):
                raise InvalidKwargError(f"{name} must be None, True or False, got {getattr(self, name)!r}")
        if isinstance(self.uid_base, bool) or not isinstance(self.uid_base, int) or self.uid_base < 1000:
            raise InvalidKwargError(f"uid_base must be an integer >= 1000, got {self.uid_base!r}")

    @property
    def cpu_limit_s(self) -> int:
        """The ``RLIMIT_CPU`` soft limit: ``timeout_s`` rounded up to whole seconds."""
        return max(1, math.ceil(self.timeout_s))

    @property
    def idle_limit_s(self) -> float:
        """Idle seconds before the run is killed: ``idle_timeout_s`` or :data:`IDLE_TIMEOUT_S`."""
        return float(self.idle_timeout_s) if self.idle_timeout_s is not None else IDLE_TIMEOUT_S

    @property
    def wall_limit_s(self) -> float:
        """The wall-clock backstop in seconds: ``wall_timeout_s`` or ``10 * timeout_s``."""
        return float(self.wall_timeout_s) if self.wall_timeout_s is not None else 10.0 * self.timeout_s


@dataclass(frozen=True)
class ExecutionResult:
    """What one sandboxed run did.

    Attributes:
        status: ``"ok"`` (exit code 0), ``"error"`` (non-zero exit or crash), ``"timeout"``
            (a CPU, idle or wall-clock limit), ``"memory"`` (``MemoryError``) or
            ``"output_limit"`` (a file or the output grew past ``max_file_mb``).
        returncode: the exit code; negative = killed by that signal (with bubblewrap an exit
            code of 128 + n is read as signal n, as bubblewrap reports a killed program).
        stdout, stderr: decoded output (UTF-8, invalid bytes replaced): the first
            ``max_output_chars`` of stdout and the last ``max_output_chars`` of stderr (where a
            traceback ends). The program's folder is shown as ``/sandbox`` in every mode.
        stdout_truncated, stderr_truncated: whether anything was cut.
        duration_s: wall-clock seconds of the run (timing: see :data:`TIMING_KEYS`).
        cpu_s: CPU seconds (user + system) of the program and its children (those it waited for,
            and those still running at the last look of :mod:`.monitor`).
        isolation: how it ran: ``mode`` (``"bubblewrap"`` or ``"rlimits"``), ``uid``
            (``None`` = the parent's user), ``network`` and ``ipc`` (``"isolated"`` or
            ``"shared"``), ``python`` (interpreter path), ``seccomp`` (the syscall filter was
            installed), ``landlock`` (the rlimits mode's Landlock ABI version, 0 = none).
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


#: The ``sandbox=`` strings of the code task envs -> ``SandboxConfig.bubblewrap``.
SANDBOX_MODES: dict[str, bool | None] = {"bubblewrap": None, "rlimits": False}


def sandbox_from_spec(
    spec: SandboxConfig | str | Mapping[str, Any] | None,
    *,
    timeout_s: float,
    memory_mb: int,
    default_timeout_s: float,
    default_memory_mb: int,
) -> SandboxConfig:
    """The :class:`SandboxConfig` of a code task env's ``sandbox=`` keyword argument.

    Args:
        spec: ``None`` or ``"bubblewrap"`` (isolation, required: the default), ``"rlimits"``
            (resource limits only, the opt-in of ``SandboxConfig(bubblewrap=False)``), a dict of
            :class:`SandboxConfig` fields (e.g. from a YAML config:
            ``{"bubblewrap": false, "max_processes": 4}``) or a :class:`SandboxConfig`, used as
            given.
        timeout_s, memory_mb: the env's own ``timeout_s`` (CPU seconds) and ``memory_mb``
            (MiB) keyword arguments; they fill the config unless ``spec`` sets them.
        default_timeout_s, default_memory_mb: their defaults in the env's signature (a value
            other than these beside a ``SandboxConfig`` or a dict that sets the same field is a
            conflict).

    Raises:
        InvalidKwargError: an unknown string or dict key (the valid ones listed), a value of
            another type, the same limit given twice, or an invalid limit.
    """
    if isinstance(timeout_s, bool) or not isinstance(timeout_s, (int, float)):
        raise InvalidKwargError(f"timeout_s must be a number (CPU seconds), got {timeout_s!r}")
    given = {"timeout_s": timeout_s != default_timeout_s, "memory_mb": memory_mb != default_memory_mb}
    if isinstance(spec, SandboxConfig):
        twice = [k for k, v in given.items() if v]
        if twice:
            raise InvalidKwargError(
                f"{', '.join(twice)} given both as a keyword argument and in sandbox=SandboxConfig(...); "
                f"set {' and '.join(twice)} inside the SandboxConfig (it is used as given)"
            )
        return spec
    if spec is None or isinstance(spec, str):
        if spec is not None and spec not in SANDBOX_MODES:
            raise InvalidKwargError(
                f"sandbox must be one of {list(SANDBOX_MODES)}, a dict of SandboxConfig fields or a "
                f"SandboxConfig, got {spec!r}"
            )
        bubblewrap = SANDBOX_MODES[spec] if spec is not None else None
        return SandboxConfig(timeout_s=float(timeout_s), memory_mb=memory_mb, bubblewrap=bubblewrap)
    if isinstance(spec, Mapping):
        fields_ = {f.name for f in dataclasses.fields(SandboxConfig)}
        unknown = sorted(str(k) for k in spec if k not in fields_)
        if unknown:
            raise InvalidKwargError(
                f"sandbox={dict(spec)!r}: {unknown} are not SandboxConfig fields; valid: {sorted(fields_)}"
            )
        twice = [k for k, v in given.items() if v and k in spec]
        if twice:
            raise InvalidKwargError(
                f"{', '.join(twice)} given both as a keyword argument and in sandbox={dict(spec)!r}; give each once"
            )
        return SandboxConfig(**{"timeout_s": float(timeout_s), "memory_mb": memory_mb, **spec})
    raise InvalidKwargError(
        f"sandbox must be 'bubblewrap', 'rlimits', a dict of SandboxConfig fields or a SandboxConfig, got "
        f"{type(spec).__name__} {spec!r}"
    )
