"""The pool of unprivileged uids a root parent runs sandboxed programs as, and process sweeping.

A run takes the next free uid of the pool (:func:`acquire_uid`); afterwards every process of
that uid is stopped and killed (:func:`kill_uid`), which also catches children that left the
process group. A uid is held across processes by an exclusive ``flock`` on its lock file in
:data:`LOCK_DIR` (root-only), so two lang_pz processes on one machine (Ray workers, two
experiments) never hand out the same uid at once; the kernel drops the lock when its holder
dies. Linux only (``/proc``).
"""

from __future__ import annotations

import fcntl
import os
import shutil
import signal
import threading
import time

from lang_pz.error import LangPZError

__all__ = [
    "LOCK_DIR",
    "SHARED_TMP_DIRS",
    "UID_POOL_SIZE",
    "acquire_uid",
    "kill_uid",
    "pids_of_uid",
    "release_uid",
    "sweep_files",
    "user_task_count",
]

_uid_lock = threading.Lock()
_uids_in_use: dict[int, int] = {}  # uid -> the fd of its locked file
_uid_cursor = [0]
#: Size of the uid pool: uids are used in turn, so that the zombies of a killed fork bomb
#: (which still count against RLIMIT_NPROC until init reaps them) never meet the next run.
UID_POOL_SIZE = 4096
#: Where the uid lock files live: ``/run`` is writable by root only, so no sandboxed program
#: can create or hold them.
LOCK_DIR = "/run/lang_pz/sandbox-uids"


def _lock_dir() -> str:
    """:data:`LOCK_DIR`, created root-only; refuses one that another user could write."""
    os.makedirs(LOCK_DIR, mode=0o700, exist_ok=True)
    st = os.stat(LOCK_DIR)
    if st.st_uid != os.geteuid() or st.st_mode & 0o022:
        raise LangPZError(
            f"{LOCK_DIR} is owned by uid {st.st_uid} or writable by others (mode {st.st_mode & 0o777:o}); "
            "remove it so the sandbox can recreate it root-only"
        )
    return LOCK_DIR


def _try_lock(uid: int) -> int | None:
    """The fd of ``uid``'s lock file locked by this process, or ``None`` if another holds it."""
    fd = os.open(os.path.join(_lock_dir(), str(uid)), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    return fd


def acquire_uid(base: int) -> int:
    """The next uid from ``base`` that no run of any process holds (its lock file in
    :data:`LOCK_DIR`) and that has no process.

    Raises:
        LangPZError: all :data:`UID_POOL_SIZE` uids are busy, or :data:`LOCK_DIR` is unsafe.
    """
    with _uid_lock:
        for _ in range(UID_POOL_SIZE):
            uid = base + _uid_cursor[0] % UID_POOL_SIZE
            _uid_cursor[0] += 1
            if uid in _uids_in_use:
                continue
            fd = _try_lock(uid)
            if fd is None:  # another process runs a sandbox as this uid
                continue
            if pids_of_uid(uid, zombies=True):
                os.close(fd)
                continue
            _uids_in_use[uid] = fd
            return uid
    raise LangPZError(
        f"all {UID_POOL_SIZE} sandbox uids from {base} are busy or still have processes; "
        "wait for running sandboxes to finish or pass another SandboxConfig(uid_base=...)"
    )


def release_uid(uid: int) -> None:
    """Give ``uid`` back to the pool (unlocks its lock file)."""
    with _uid_lock:
        fd = _uids_in_use.pop(uid, None)
    if fd is not None:
        os.close(fd)


def pids_of_uid(uid: int, *, zombies: bool = False) -> list[int]:
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


def kill_uid(uid: int) -> None:
    """Stop, then kill, every process of ``uid`` (stopped processes cannot fork any more)."""
    for _ in range(50):
        pids = pids_of_uid(uid)
        if not pids:
            return
        for sig in (signal.SIGSTOP, signal.SIGKILL):
            for pid in pids:
                try:
                    os.kill(pid, sig)
                except OSError:
                    pass
        time.sleep(0.01)


def user_task_count(uid: int) -> int:
    """Tasks (threads included, as ``RLIMIT_NPROC`` counts them) of ``uid``."""
    n = 0
    for pid in pids_of_uid(uid):
        try:
            n += len(os.listdir(f"/proc/{pid}/task"))
        except OSError:
            n += 1
    return n


#: World-writable folders where a program running as a pool uid can leave files (the rlimits mode
#: without Landlock; with it, the program may write only its own folder).
SHARED_TMP_DIRS: tuple[str, ...] = ("/tmp", "/var/tmp", "/dev/shm", "/run/lock")


def sweep_files(uid: int) -> list[str]:
    """Remove what ``uid`` left at the top of :data:`SHARED_TMP_DIRS`; return the paths removed."""
    removed = []
    for folder in SHARED_TMP_DIRS:
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.stat(follow_symlinks=False).st_uid != uid:
                    continue
                if entry.is_dir(follow_symlinks=False):
                    shutil.rmtree(entry.path, ignore_errors=True)
                else:
                    os.unlink(entry.path)
                removed.append(entry.path)
            except OSError:
                continue
    return removed
