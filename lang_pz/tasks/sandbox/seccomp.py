"""The syscall filter bubblewrap installs before it starts the program (``bwrap --seccomp FD``).

The filter is built with libseccomp (through the PyPI package ``pyseccomp``, a ctypes binding of
the maintained C library; Debian/Ubuntu package ``libseccomp2``), not written as BPF by hand. It
allows everything except :data:`REFUSED`: kernel interfaces that benchmark code never needs and
that are a kernel exploit's usual way in (io_uring, userfaultfd, perf events, eBPF, the key
ring), or that reach outside the sandbox (mounts, namespaces, ptrace, other processes' memory,
kernel modules, the clock, reboot). A refused call fails with ``EPERM``, as an unprivileged
process sees many of them anyway, so programs that merely probe for them go on.

The rlimits mode installs the same filter from its bootstrap (:mod:`.bootstrap`), with one more
refusal (``unix_sockets=False``): ``socket(AF_UNIX, ...)``, since there the program shares the
host's file system and could connect to any Unix socket it can name (``socketpair`` stays allowed).
"""

from __future__ import annotations

import errno
import socket
import tempfile
import threading
from typing import IO

__all__ = ["REFUSED", "filter_bpf", "filter_file"]

#: Syscalls the filter refuses (``EPERM``); names the running architecture lacks are skipped.
REFUSED: tuple[str, ...] = (
    # kernel attack surface
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "userfaultfd",
    "perf_event_open",
    "bpf",
    "keyctl",
    "add_key",
    "request_key",
    # the file system and namespaces
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "move_mount",
    "open_tree",
    "mount_setattr",
    "setns",
    "unshare",
    "open_by_handle_at",
    "name_to_handle_at",
    "quotactl",
    # other processes
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "kcmp",
    "pidfd_getfd",
    # the kernel and the machine
    "init_module",
    "finit_module",
    "delete_module",
    "kexec_load",
    "kexec_file_load",
    "reboot",
    "swapon",
    "swapoff",
    "acct",
    "syslog",
    "settimeofday",
    "clock_settime",
    "clock_adjtime",
    "adjtimex",
    "iopl",
    "ioperm",
    "vhangup",
    "lookup_dcookie",
    "uselib",
    "personality",
)

_lock = threading.Lock()
_cache: dict[bool, bytes | None] = {}


def filter_bpf(unix_sockets: bool = True) -> bytes | None:
    """The compiled filter (a BPF program for ``bwrap --seccomp`` or ``PR_SET_SECCOMP``), built once
    per process and variant (``unix_sockets=False``: ``socket(AF_UNIX, ...)`` refused too); ``None``
    where ``pyseccomp`` or libseccomp is not installed."""
    with _lock:
        if unix_sockets not in _cache:
            _cache[unix_sockets] = _build(unix_sockets)
        return _cache[unix_sockets]


def _build(unix_sockets: bool) -> bytes | None:
    try:
        import pyseccomp

        f = pyseccomp.SyscallFilter(defaction=pyseccomp.ALLOW)
    except (ImportError, OSError, RuntimeError):  # no package, or no libseccomp.so
        return None
    for name in REFUSED:
        try:
            f.add_rule(pyseccomp.ERRNO(errno.EPERM), name)
        except (ValueError, RuntimeError, OSError):  # not a syscall on this architecture
            continue
    if not unix_sockets:
        f.add_rule(pyseccomp.ERRNO(errno.EPERM), "socket", pyseccomp.Arg(0, pyseccomp.EQ, socket.AF_UNIX))
    with tempfile.TemporaryFile() as out:
        f.export_bpf(out)
        out.seek(0)
        return out.read()


def filter_file(unix_sockets: bool = True) -> IO[bytes]:
    """A new unnamed file holding :func:`filter_bpf` (``unix_sockets``), at offset 0 (one per run:
    bubblewrap and the bootstrap read it through the file offset, which concurrent runs must not share).

    Raises:
        LangPZError: the filter cannot be built (``pyseccomp`` or libseccomp missing).
    """
    from lang_pz.error import LangPZError

    bpf = filter_bpf(unix_sockets)
    if bpf is None:
        raise LangPZError(
            "the seccomp filter needs the PyPI package pyseccomp (pip install pyseccomp) and "
            "libseccomp (apt-get install libseccomp2)"
        )
    f = tempfile.TemporaryFile()
    f.write(bpf)
    f.seek(0)
    return f
