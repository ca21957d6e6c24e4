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
                    seconds). This is *the* time limit: CPU time does not grow while the
                    machine is busy, so a correct program gets the same verdict on an idle and
                    a loaded machine
wall-clock time     ``wall_timeout_s`` (default ``10 * timeout_s``): a backstop for programs
                    that sleep or block; then the whole process group is killed. Both limits
                    give status ``"timeout"``
memory              ``RLIMIT_AS`` = ``memory_mb`` (a huge allocation raises ``MemoryError``)
processes           ``RLIMIT_NPROC``: ``max_processes`` tasks for the sandbox user
files               ``RLIMIT_FSIZE`` = ``max_file_mb``, ``RLIMIT_NOFILE`` = 64, no core dumps
output              stdout/stderr go to unnamed temporary files (never pipes), read back cut to
                    ``max_output_chars``; the program's folder is shown as ``/sandbox``
environment         built from scratch (``PATH``, ``LANG``, ``HOME`` = ``TMPDIR`` = its own
                    folder, ``PYTHONHASHSEED=0``, one BLAS thread): nothing of ``os.environ``
                    (API keys, tokens) is passed on
==================  =========================================================================

What is contained, by mode and by who runs the parent (each claim is tested with a hostile
snippet in ``tests/tasks/sandbox/test_sandbox.py``, ``tests/tasks/sandbox/test_sandbox_containment.py``,
``tests/tasks/sandbox/test_sandbox_seccomp.py`` and ``tests/tasks/sandbox/test_sandbox_uids.py``):

=============================  =====================  ===============  =====================
claim                          bubblewrap (root or    rlimits, root    rlimits, normal user
                               normal user)
=============================  =====================  ===============  =====================
runs as                        a pool uid (root) /    a pool uid       the parent's user
                               the user's uid         (held across
                                                      processes by a
                                                      lock file)
file system it sees            read-only ``/usr``,    everything its   everything the user
                               ``/bin``, ``/lib*``,   uid may read     may read
                               ``ld.so`` files, the
                               interpreter; no
                               ``/home``, ``/root``,
                               ``/tmp``, repository
                               or data folders
where it can write             ``/sandbox`` and       its folder, and  its folder, and any
                               ``/dev/shm`` (tmpfs of world-writable  place the user may
                               ``max_file_mb`` each,  folders (files   write (files are
                               gone after the run)    it leaves in     left behind)
                                                      ``/tmp``,
                                                      ``/var/tmp``,
                                                      ``/dev/shm`` are
                                                      removed)
the parent's secrets           not in its env; no     not in its env;  not in its env, but
                               other process is       ``/proc/<pid>/   ``/proc/<parent>/
                               visible (own pid       environ`` of     environ`` is
                               namespace)             others: denied   readable
network                        none (empty netns)     none (empty      shared
                                                      netns)
new user namespaces, mounts    refused (``--disable-  allowed if the   allowed if the kernel
                               userns``, no caps)     kernel allows    allows unprivileged
                                                      unprivileged     user namespaces
                                                      user namespaces
processes after the run        all killed (the pid    all of its uid   its process group;
                               namespace ends)        killed           ``setsid`` escapees
                                                                       survive
syscalls                       a seccomp filter       all (no filter)  all (no filter)
                               refuses io_uring,
                               userfaultfd, perf
                               events, bpf, keyrings,
                               mounts, namespaces,
                               ptrace, modules, ...
                               (:mod:`.seccomp`)
=============================  =====================  ===============  =====================

bubblewrap is the default and is required: where it is missing or user namespaces are off,
:func:`resolve` refuses with the install command; ``bubblewrap=False`` opts in to rlimits and
warns once. What the reward of a code task is immune to (the verdict is computed outside the
code's process, :mod:`.verdict`), by attack and mode, with the tests that hold each line
(``A`` = ``tests/tasks/sandbox/test_reward_attacks.py``, ``C`` = ``tests/tasks/sandbox/test_sandbox_containment.py``; counts over every item:
``benchmarks/results/reward_attacks.md``):

==================================  ==========  =======  ================================================
attack                              bubblewrap  rlimits  tests
==================================  ==========  =======  ================================================
early exit: ``os._exit``/``sys.     contained   contai-  A::test_no_attack_scores_under_bubblewrap,
exit`` at import or in the                      ned      A::test_attacks_that_need_no_file_access_score_
function, ``excepthook``, atexit,                        nothing_under_rlimits_either (each attack a
``__del__``, threads, signals                            parameter)
always-equal results, patched       contained   contai-  the same, ``always_equal``, ``patch_builtins``;
builtins / assert machinery                     ned      tests/tasks/sandbox/test_reward_plain.py
reading the program or the caller's contained   contai-  the same, ``read_program``, ``frame_peek``
frame for the expected values                   ned
reading the benchmark's answer key  contained   **no**   A::test_no_attack_scores_under_bubblewrap
(package folders shown empty, any                        [answer_key], C::test_bubblewrap_shows_no_
interpreter)                                             installed_packages
forged tester reports               contained   contai-  A::test_the_team_is_never_told_tests_passed_
                                                ned      for_attack_code, tests/tasks/sandbox/test_reward_tester.py
killing the parent                  contained   root:    A::test_no_attack_scores_under_bubblewrap
                                                yes      [kill_parent]
another process's sandbox runs as   contained   contai-  tests/tasks/sandbox/test_sandbox_uids.py
the same uid (root)                             ned
kernel interfaces (io_uring, ...)   refused     **no**   tests/tasks/sandbox/test_sandbox_seccomp.py
==================================  ==========  =======  ================================================

Not contained in any mode: CPU and memory are
bounded per process, not for the whole group (a fork bomb's processes each get the limits, up
to ``max_processes``); under bubblewrap the program is its pid namespace's init, so it cannot
be killed by signals it sends itself, and SIGXCPU is ignored (the hard CPU limit, SIGKILL, ends
it instead). For hostile code beyond benchmark answers, run the whole process in a container or
VM. Linux only (``resource``, ``/proc``).

==================  ===========================================================================
Module              Concept
==================  ===========================================================================
``config``          :class:`SandboxConfig` (the limits) and :class:`ExecutionResult`
``isolation``       the bootstrap, bubblewrap's arguments, probing the strongest mode
``uids``            the uid pool of a root parent, process and file sweeping
``run``             :func:`run_python`, :func:`run_python_many`
``seccomp``         the syscall filter bubblewrap installs
``plain``           plain data across the sandbox boundary (encoding, strict decoding)
``harness``         the programs a verdict is built from: calling the code, recording, replaying
``verdict``         the hidden tests' verdict outside the code's process
``tester``          the tester role's asserts judged apart from the coder's code
==================  ===========================================================================
"""

from lang_pz.tasks.sandbox.config import (
    TIMING_KEYS,
    ExecutionResult,
    SandboxConfig,
    Status,
)
from lang_pz.tasks.sandbox.isolation import WORKDIR, Plan, resolve
from lang_pz.tasks.sandbox.run import run_python, run_python_many
from lang_pz.tasks.sandbox.uids import UID_POOL_SIZE

__all__ = [
    "TIMING_KEYS",
    "UID_POOL_SIZE",
    "WORKDIR",
    "ExecutionResult",
    "Plan",
    "SandboxConfig",
    "Status",
    "resolve",
    "run_python",
    "run_python_many",
]
