"""The syscall filter under bubblewrap: every syscall of ``REFUSED`` fails with EPERM inside the sandbox,
the filter is installed (``Seccomp: 2``), and ordinary programs still run; the rlimits mode installs it
too, refusing Unix sockets besides."""

from __future__ import annotations

import ctypes
import errno
import json
import os
import warnings

import pytest
from support import requires_bwrap

from lang_pz.tasks.sandbox import SandboxConfig, run_python
from lang_pz.tasks.sandbox.seccomp import REFUSED, filter_bpf

pyseccomp = pytest.importorskip("pyseccomp")

pytestmark = pytest.mark.skipif(filter_bpf() is None, reason="libseccomp unavailable (apt-get install libseccomp2)")
NUMBERS = {}
for _name in REFUSED:
    try:
        NUMBERS[_name] = pyseccomp.resolve_syscall(pyseccomp.Arch.NATIVE, _name)
    except (ValueError, RuntimeError):
        pass
NUMBERS = {k: v for k, v in NUMBERS.items() if v >= 0}

_PROBE = """
import ctypes, json
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
out = {}
for name, nr in NUMBERS.items():
    ctypes.set_errno(0)
    rc = libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(0)] * 6)
    out[name] = [rc, ctypes.get_errno()]
status = open("/proc/self/status").read()
print(json.dumps({"calls": out, "seccomp": [l.split()[1] for l in status.splitlines() if l.startswith("Seccomp:")]}))
"""


@requires_bwrap
def test_every_refused_syscall_fails_with_eperm_inside_the_sandbox():
    assert len(NUMBERS) >= 45  # nearly all of REFUSED exist on this architecture
    r = run_python(f"NUMBERS = {NUMBERS!r}\n" + _PROBE, SandboxConfig(timeout_s=5.0))
    assert r.ok and r.isolation["seccomp"] is True, r
    got = json.loads(r.stdout)
    assert got["seccomp"] == ["2"]  # a filter is installed
    refused = {name: rc_err for name, rc_err in got["calls"].items() if rc_err != [-1, errno.EPERM]}
    assert refused == {}


def test_the_filter_is_what_refuses_them():
    """Outside the sandbox the same bogus calls fail otherwise (bad address, bad argument), so the EPERM
    above comes from the filter (only calls that are harmless with zero arguments are tried here)."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    host = {}
    for name in ("io_uring_setup", "userfaultfd", "perf_event_open", "bpf", "keyctl", "process_vm_readv"):
        if name in NUMBERS:
            ctypes.set_errno(0)
            rc = libc.syscall(ctypes.c_long(NUMBERS[name]), *[ctypes.c_long(0)] * 6)
            host[name] = ctypes.get_errno() if rc == -1 else 0
            if rc >= 0 and name in ("userfaultfd", "io_uring_setup"):
                os.close(rc)
    assert any(e != errno.EPERM for e in host.values()), host


@requires_bwrap
def test_ordinary_programs_run_under_the_filter():
    src = (
        "import json, subprocess, sys, threading, tempfile\n"
        "t = threading.Thread(target=print, args=('thread',)); t.start(); t.join()\n"
        "print(subprocess.run([sys.executable, '-c', 'print(6 * 7)'], capture_output=True, text=True).stdout.strip())\n"
        "with tempfile.TemporaryFile() as f: f.write(b'x'); f.seek(0); print(f.read())\n"
    )
    r = run_python(src, SandboxConfig(timeout_s=5.0))
    assert r.ok and r.stdout == "thread\n42\nb'x'\n", r


def test_the_rlimits_mode_installs_the_filter_and_refuses_unix_sockets():
    src = (
        f"NUMBERS = {NUMBERS!r}\n"
        "import ctypes, socket\nlibc = ctypes.CDLL(None, use_errno=True)\nlibc.syscall.restype = ctypes.c_long\n"
        "for name in ('unshare', 'mount', 'ptrace', 'io_uring_setup'):\n"
        "    ctypes.set_errno(0)\n"
        "    print(name, libc.syscall(ctypes.c_long(NUMBERS[name]), *[ctypes.c_long(0)] * 6), ctypes.get_errno())\n"
        "try:\n    socket.socket(socket.AF_UNIX)\n    print('unix socket')\nexcept OSError as e:\n    print('unix', e.errno)\n"
        "a, b = socket.socketpair()\na.send(b'x')\nprint('pair', b.recv(1))\n"
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = run_python(src, SandboxConfig(timeout_s=5.0, bubblewrap=False))
    assert r.ok and r.isolation["seccomp"] is True, r
    assert r.stdout.splitlines() == [
        f"{name} -1 {errno.EPERM}" for name in ("unshare", "mount", "ptrace", "io_uring_setup")
    ] + [f"unix {errno.EPERM}", "pair b'x'"]
