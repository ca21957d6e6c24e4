"""Run untrusted Python (model-written code and tests) in a separate, limited process.

The code-task environments execute what a language model wrote. :func:`run_python` runs one
program in a fresh interpreter (``python -I -B``: no ``PYTHON*`` variables, no user
site-packages) and returns an :class:`ExecutionResult`; a program that loops forever, sleeps,
forks, allocates without bound, floods its output, writes files or looks for secrets costs its
own result. There are two isolation modes (``SandboxConfig.bubblewrap``; ``result.isolation``
says which ran): **bubblewrap** (the default, and required: where ``bwrap``, Debian/Ubuntu
package ``bubblewrap``, is missing or user namespaces are off, model code is refused with an
error saying how to install it) and **rlimits** (resource limits only: the opt-in
``bubblewrap=False``, warned about once with what it does not contain).

Limits in both modes (:class:`SandboxConfig`):

==================  =========================================================================
CPU time            ``timeout_s`` CPU seconds per process (``RLIMIT_CPU``, rounded up to whole
                    seconds) and for all its processes together (:mod:`.monitor`: a fork bomb's
                    processes share one budget). This is *the* time limit: CPU time does not
                    grow while the machine is busy, so a correct program gets the same verdict
                    on an idle and a loaded machine
idle time           ``idle_timeout_s`` (default 2 s): seconds in which none of its threads runs
                    or waits for a CPU (sleeping, blocked on a pipe, a lock or the disk). A
                    sleeping program costs about 2 s whatever ``timeout_s`` (it cost
                    ``10 * timeout_s`` before); a busy machine makes a program wait for a CPU,
                    not idle (waiting counts up to 20 times what it ran)
wall-clock time     ``wall_timeout_s`` (default ``10 * timeout_s``): a backstop that only a
                    machine overloaded 20-fold reaches. All three limits give status
                    ``"timeout"`` and kill the whole process tree
memory              ``RLIMIT_AS`` = ``memory_mb`` (a huge allocation raises ``MemoryError``)
processes           ``RLIMIT_NPROC``: ``max_processes`` tasks for the sandbox user
files               ``RLIMIT_FSIZE`` = ``max_file_mb``, ``RLIMIT_NOFILE`` = 64, no core dumps
output              stdout/stderr go to unnamed temporary files (never pipes), read back cut to
                    ``max_output_chars``; the program's folder is shown as ``/sandbox``; what a
                    program controls in a verdict's or a tester's error text (an exception's
                    name and message) is cut to :data:`~.config.MAX_ERROR_CHARS` (300) with a
                    note of the cut (:func:`~.config.clip`)
environment         built from scratch (``PATH``, ``LANG``, ``HOME`` = ``TMPDIR`` = its own
                    folder, ``PYTHONHASHSEED=0``, one BLAS thread): nothing of ``os.environ``
                    (API keys, tokens) is passed on
==================  =========================================================================

What is contained, by mode and by who runs the parent (each claim is tested with a hostile
snippet in ``tests/tasks/sandbox/test_sandbox.py``, ``test_sandbox_containment.py``,
``test_sandbox_rlimits_leaks.py`` (both ways for each rlimits row: closed here, open without the
feature it rests on), ``test_sandbox_seccomp.py``, ``test_sandbox_limits.py`` and
``test_sandbox_uids.py``). The rlimits mode rests on three
features of the machine: **Landlock** (Linux >= 5.13, :mod:`.landlock`; ABI 4, Linux 6.7, for
TCP; ABI 6, Linux 6.12, for signals and abstract sockets), the **seccomp filter** (PyPI
``pyseccomp`` and ``libseccomp2``, :mod:`.seccomp`) and, as root, **namespaces**
(``unshare``; refused in a container without ``CAP_SYS_ADMIN``, e.g. Docker's default);
``result.isolation`` says which it got (``landlock``: the ABI, 0 = none; ``seccomp``; ``ipc``;
``network``):

============================  ========================  ============================  ==============================
claim                         bubblewrap (any user)     rlimits, root                 rlimits, normal user
============================  ========================  ============================  ==============================
runs as                       a pool uid (root) / the   a pool uid (held across       the parent's user
                              user's uid                processes by a lock file)
files it can read             read-only ``/usr``,       Landlock: the system          Landlock: the same. **Without
                              ``/bin``, ``/lib*``,      folders, loader files and     Landlock: all the user may
                              ``ld.so`` files, the      the interpreter's prefix, no  read** (the project, data
                              interpreter; package      package folder's files; no    sets, the answer key)
                              folders shown empty; no   project, data, home,
                              ``/home``, ``/root``,     ``/tmp``, ``/run``,
                              ``/tmp``, repository or   ``/proc``. **Without
                              data folders              Landlock: all its uid may
                                                        read**
where it can write            ``/sandbox`` and          Landlock: its folder only.    Landlock: its folder only.
                              ``/dev/shm`` (tmpfs of    Without: also world-writable  **Without: any place the user
                              ``max_file_mb`` each,     folders (what it leaves in    may write (files stay)**
                              gone after the run)       ``/tmp``, ``/var/tmp``,
                                                        ``/dev/shm``, ``/run/lock``
                                                        is removed)
state left for a later run    none                      none (Landlock or the sweep   **SysV shared memory,
                                                        above; an IPC namespace of    semaphores, message queues**
                                                        its own)                      (no IPC namespace without
                                                                                      root)
the parent's secrets          not in its env; no other  not in its env; Landlock: no  not in its env; Landlock: no
                              process is visible (own   ``/proc``. **Without:         ``/proc``. **Without: the
                              pid namespace)            ``/proc/<parent>/cmdline``    parent's ``cmdline`` and
                                                        readable**                    ``environ`` readable**
network                       none (empty netns)        none (empty netns)            **shared**; TCP refused with
                                                                                      Landlock ABI >= 4
host Unix sockets             none visible (no host     the filter refuses            the filter: the same.
                              folder; abstract ones     ``socket(AF_UNIX)``           **Without it: by path;
                              are per netns)            (``socketpair`` stays).       abstract ones unless Landlock
                                                        **Without it: sockets by      ABI >= 6**
                                                        path**
signals to other processes    own pid namespace         other uids: refused           Landlock ABI >= 6: refused;
                                                                                      **else it can kill its
                                                                                      parent**
new user namespaces, mounts   refused                   refused by the filter;        refused by the filter;
                              (``--disable-userns``,    **without it: allowed**       **without it: allowed** where
                              no caps)                  where the kernel allows them  the kernel allows them
processes after the run       all killed (the pid       all of its uid killed         its tree (at a limit) and
                              namespace ends)                                         group; **double-forked
                                                                                      setsid() escapees survive**
syscalls                      the seccomp filter        the same filter and           the same filter and
                              refuses io_uring,         ``socket(AF_UNIX)`` (with     ``socket(AF_UNIX)`` (with
                              userfaultfd, perf         ``pyseccomp``)                ``pyseccomp``)
                              events, bpf, keyrings,
                              mounts, namespaces,
                              ptrace, modules, ...
============================  ========================  ============================  ==============================

bubblewrap is the default and is required: where it is missing or user namespaces are off,
:func:`resolve` refuses with the install command; ``bubblewrap=False`` opts in to rlimits and
warns once with what that machine's rlimits mode does not contain. What the reward of a code
task is immune to (the verdict is computed outside the code's process, :mod:`.verdict`), by
attack and mode, with the tests that hold each line (in ``tests/tasks/sandbox/``: ``A`` =
``test_reward_attacks.py``, ``C`` = ``test_sandbox_containment.py`` and
``test_sandbox_rlimits_leaks.py``; counts over the items: ``benchmarks/results/reward_attacks.md``):

==================================  ==========  ========================  ==========================================
attack                              bubblewrap  rlimits                   which attacks; tests
==================================  ==========  ========================  ==========================================
early exit                          contained   contained                 ``os._exit``/``sys.exit`` at import or in
                                                                          the function, ``excepthook``, atexit,
                                                                          ``__del__``, threads, signals; A:
                                                                          ``test_no_attack_scores_under_*`` (each
                                                                          attack a parameter, both modes)
values that are not what they seem  contained   contained                 always-equal objects, patched builtins,
                                                                          subclasses of int and str, NaN:
                                                                          ``always_equal``, ``patch_builtins``,
                                                                          ``int_subclass``, ``str_subclass``,
                                                                          ``nan_result``; A;
                                                                          ``test_reward_plain.py``
reading the program or frame        contained   contained                 ``read_program``, ``frame_peek``; A
a forged answer line                contained   contained                 ``forged_answer_line`` (it claims no more
                                                                          than ``return True`` does); A
reading the answer key              contained   Landlock: contained;      by path or by walking the whole file
                                                **without: no**           system: ``answer_key``,
                                                                          ``fs_walk_answer_key``; A and C:
                                                                          ``test_without_landlock_*``; C:
                                                                          ``test_the_answer_key_cannot_be_read_*``
what an earlier episode left        contained   Landlock and root:        in ``/tmp``, ``/run/lock``, ``/dev/shm``,
                                                contained; **without      SysV shared memory: ``carry_tmp``,
                                                Landlock (files) or as a  ``carry_run_lock``, ``carry_dev_shm``,
                                                normal user (SysV): no**  ``carry_sysv_shm``; A; C:
                                                                          ``test_files_carry_*``,
                                                                          ``test_sysv_shared_memory_*``
sleeping, fork, memory, disk bombs  0, bounded  0, bounded                A: ``test_attacks_on_the_cost_*``;
                                                                          ``test_sandbox_limits.py``
forged tester reports               contained   contained                 A: ``test_the_team_is_never_told_*``;
                                                                          ``test_reward_tester.py``
killing the parent                  contained   root: contained; user:    ``kill_parent``; A
                                                Landlock ABI >= 6
another run of the same uid (root)  contained   contained                 ``test_sandbox_uids.py``
kernel interfaces (io_uring, ...)   refused     refused (with the         ``test_sandbox_seccomp.py``
                                                filter)
==================================  ==========  ========================  ==========================================

Not contained in any mode: memory is bounded per process, not for the whole group (a fork
bomb's processes each get ``memory_mb``, up to ``max_processes``); under bubblewrap the program
is its pid namespace's init, so it cannot be killed by signals it sends itself, and SIGXCPU is
ignored (the hard CPU limit, SIGKILL, ends it instead); UDP (the rlimits mode as a normal user).
For hostile code beyond benchmark answers, run the whole process in a container or VM. Linux
only (``resource``, ``/proc``).

==================  ===========================================================================
Module              Concept
==================  ===========================================================================
``config``          :class:`SandboxConfig` (the limits) and :class:`ExecutionResult`
``isolation``       bubblewrap's arguments, the bootstrap's configuration, probing the
                    strongest mode
``bootstrap``       the trusted program that sets the limits and ``exec``s the command
``landlock``        the rlimits mode's file-system rules (Landlock)
``monitor``         the CPU, idle and wall-clock limits of the whole process tree
``uids``            the uid pool of a root parent, process and file sweeping
``run``             :func:`run_python`, :func:`run_python_many`
``seccomp``         the syscall filter (installed by bubblewrap, or by the rlimits bootstrap)
``plain``           plain data across the sandbox boundary (encoding, strict decoding)
``harness``         the programs a verdict is built from: calling the code, recording, replaying
``verdict``         the hidden tests' verdict outside the code's process
``tester``          the tester role's asserts judged apart from the coder's code
==================  ===========================================================================
"""

from typing import TYPE_CHECKING

from lang_pz._moved import moved_getattr
from lang_pz.tasks.sandbox.config import ExecutionResult, SandboxConfig, Status
from lang_pz.tasks.sandbox.run import run_python, run_python_many

__all__ = ["ExecutionResult", "SandboxConfig", "Status", "run_python", "run_python_many"]


#: Names this package no longer exports -> where to import them from (a DeprecationWarning
#: until the next release: :mod:`lang_pz._moved`).
_MOVED = {
    "IDLE_TIMEOUT_S": "lang_pz.tasks.sandbox.config.IDLE_TIMEOUT_S",
    "MAX_ERROR_CHARS": "lang_pz.tasks.sandbox.config.MAX_ERROR_CHARS",
    "Plan": "lang_pz.tasks.sandbox.isolation.Plan",
    "TIMING_KEYS": "lang_pz.tasks.sandbox.config.TIMING_KEYS",
    "UID_POOL_SIZE": "lang_pz.tasks.sandbox.uids.UID_POOL_SIZE",
    "WORKDIR": "lang_pz.tasks.sandbox.isolation.WORKDIR",
    "resolve": "lang_pz.tasks.sandbox.isolation.resolve",
}
if not TYPE_CHECKING:
    __getattr__ = moved_getattr(__name__, _MOVED)
