"""The trusted bootstrap that starts every sandboxed program (:data:`BOOTSTRAP`).

It runs as the parent's user (root or not) in a fresh ``python -I -S``, sets the resource limits,
optionally enters new network and IPC namespaces (root in the rlimits mode), builds and applies a
Landlock ruleset (the rlimits mode, :mod:`.landlock`), drops to the sandbox uid, installs the
syscall filter (the rlimits mode, :mod:`.seccomp`; bubblewrap installs its own), then ``exec``s
the command (``bwrap ... python`` or ``python``). The limits are set here, not in
``preexec_fn``: the environments are stepped from thread pools, and Python documents
``preexec_fn`` as unsafe in the presence of threads. Exit codes of its own failures: 112 (a
namespace), 113 (Landlock), 114 (the seccomp filter).
"""

from __future__ import annotations

import json
import sys
from typing import Any

__all__ = ["BOOTSTRAP", "CLONE_NEWIPC", "CLONE_NEWNET", "bootstrap_argv"]

CLONE_NEWNET = 0x40000000
CLONE_NEWIPC = 0x08000000

BOOTSTRAP = r"""
import json, os, resource, sys
cfg = json.loads(sys.argv[1])
for name, value in cfg["rlimits"].items():
    soft, hard = value if isinstance(value, list) else (value, value)
    resource.setrlimit(getattr(resource, name), (soft, hard))
def fail(what, code):
    os.write(2, b"sandbox: could not " + what + b"\n")
    os._exit(code)
ll = cfg["landlock"]
if cfg["unshare"] or ll or cfg["seccomp_fd"] is not None:
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    def call(nr, *args):
        return libc.syscall(ctypes.c_long(nr), *args)
if cfg["unshare"] and libc.unshare(cfg["unshare"]) != 0:
    fail(b"isolate the network or IPC", 112)
if ll:
    import stat, struct
    size = ll["size"]
    attr = ctypes.create_string_buffer(struct.pack("QQQ", *ll["handled"])[:size], size)
    rfd = call(444, attr, ctypes.c_size_t(size), ctypes.c_uint32(0))
    if rfd < 0:
        fail(b"create a Landlock ruleset", 113)
    for path, rights in ll["rules"]:
        try:
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
        except OSError:
            continue
        if not stat.S_ISDIR(os.fstat(fd).st_mode):
            rights &= ll["file_rights"]
        rule = ctypes.create_string_buffer(struct.pack("=Qi", rights, fd), 12)
        if call(445, ctypes.c_int(rfd), ctypes.c_int(1), rule, ctypes.c_uint32(0)) != 0:
            fail(b"add a Landlock rule for " + os.fsencode(path), 113)
        os.close(fd)
if cfg["uid"] is not None:
    os.setgroups([])
    os.setgid(cfg["uid"])
    os.setuid(cfg["uid"])
if (ll or cfg["seccomp_fd"] is not None) and libc.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS
    fail(b"set no_new_privs", 113)
if ll and call(446, ctypes.c_int(rfd), ctypes.c_uint32(0)) != 0:
    fail(b"apply the Landlock ruleset", 113)
if cfg["seccomp_fd"] is not None:
    import struct
    with os.fdopen(cfg["seccomp_fd"], "rb") as f:
        code = f.read()
    bpf = ctypes.create_string_buffer(code, len(code))
    prog = ctypes.create_string_buffer(struct.pack("HxxxxxxP", len(code) // 8, ctypes.addressof(bpf)))
    if libc.prctl(22, 2, prog, 0, 0) != 0:  # PR_SET_SECCOMP, SECCOMP_MODE_FILTER
        fail(b"install the seccomp filter", 114)
os.execve(cfg["argv"][0], cfg["argv"], cfg["env"])
"""


def bootstrap_argv(cfg: dict[str, Any]) -> list[str]:
    """The parent's command line: this interpreter running :data:`BOOTSTRAP` with ``cfg`` (keys
    ``rlimits``, ``unshare`` (clone flags), ``landlock`` (``None`` or ``handled``, ``size``,
    ``rules``, ``file_rights``), ``uid``, ``seccomp_fd`` (an inherited fd holding the filter, or
    ``None``), ``argv``, ``env``)."""
    return [sys.executable, "-I", "-S", "-c", BOOTSTRAP, json.dumps(cfg)]
