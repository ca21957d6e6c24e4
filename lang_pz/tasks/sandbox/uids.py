"""The pool of unprivileged uids a root parent runs sandboxed programs as, and process sweeping.

A run takes the next free uid of the pool (:func:`acquire_uid`); afterwards every process of
that uid is stopped and killed (:func:`kill_uid`), which also catches children that left the
process group. Linux only (``/proc``).
"""

from __future__ import annotations

import os
import shutil
import signal
import threading
import time

from lang_pz.error import LangPZError

__all__ = ["SHARED_TMP_DIRS", "UID_POOL_SIZE", "acquire_uid", "kill_uid", "pids_of_uid", "release_uid", "sweep_files",
           "user_task_count"]

_uid_lock = threading.Lock()
_uids_in_use: set[int] = set()
_uid_cursor = [0]
#: Size of the uid pool: uids are used in turn, so that the zombies of a killed fork bomb
#: (which still count against RLIMIT_NPROC until init reaps them) never meet the next run.
UID_POOL_SIZE = 4096


def acquire_uid(base: int) -> int:
    """The next uid from ``base`` that no run uses and that has no process.

    Raises:
        LangPZError: all :data:`UID_POOL_SIZE` uids are busy.
    """
    with _uid_lock:
        for _ in range(UID_POOL_SIZE):
            uid = base + _uid_cursor[0] % UID_POOL_SIZE
            _uid_cursor[0] += 1
            if uid not in _uids_in_use and not pids_of_uid(uid, zombies=True):
                _uids_in_use.add(uid)
                return uid
    raise LangPZError(
        f"all {UID_POOL_SIZE} sandbox uids from {base} are busy or still have processes; "
        "wait for running sandboxes to finish or pass another SandboxConfig(uid_base=...)"
    )


def release_uid(uid: int) -> None:
    """Give ``uid`` back to the pool."""
    with _uid_lock:
        _uids_in_use.discard(uid)


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


#: World-writable folders where a program running as a pool uid can leave files.
SHARED_TMP_DIRS: tuple[str, ...] = ("/tmp", "/var/tmp", "/dev/shm")


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
