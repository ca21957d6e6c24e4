"""The tester role's asserts, run on the coder's code so that the code cannot report them passed.

Each assert is split at its calls of the code's functions (the outermost calls of a name the code
defines at top level): the code's process (:func:`~.harness.call_functions`) evaluates those calls
and hands back plain data; a second process, which holds the tester's asserts and set-up but none
of the coder's code, evaluates each assert with the calls replaced by those values. Ending the
code's process early leaves every test "not run"; printing report lines from it decides nothing.
A call inside a ``lambda`` or a comprehension (its arguments bound inside the assert) cannot be
taken out of the assert: such a test is reported as not checked, never as passed.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Sequence
from dataclasses import dataclass

from lang_pz.tasks.sandbox.config import ExecutionResult, SandboxConfig, clip
from lang_pz.tasks.sandbox.harness import call_functions, plain_program, wide_output
from lang_pz.tasks.sandbox.run import run_python
from lang_pz.tasks.sandbox.verdict import PARSE_LOCK

__all__ = ["TesterRun", "run_tester_tests"]

_SCOPES = (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
#: Why a test was not checked (its call of the code sits inside a lambda or comprehension).
NOT_CHECKED = (
    "not checked: a call of the code inside a lambda or comprehension cannot be run apart from "
    "the test; write it as assert f(args) == expected"
)

_JUDGE = """
class CodeRaised(Exception):
    "The code under test raised this (in its own process)."
_answers = json.loads(ANSWERS)
def _answer(j):
    a = _answers[j]
    if "value" in a:
        return loads(a["value"])
    raise CodeRaised(a.get("raised") or "returned a " + a["not_plain"] + ", which is not plain data")
import sys as _sys
_g = {"__name__": "__main__", "_answer": _answer}
def _report(obj):
    _sys.stdout.write("\\n" + NONCE + json.dumps(obj) + "\\n")
    _sys.stdout.flush()
try:
    exec(compile(SETUP, "test_setup.py", "exec"), _g)
except BaseException as _e:
    _report({"setup_error": clip(type(_e).__name__ + ": " + str(_e))})
else:
    for _i, _t in TESTS:
        try:
            exec(compile(_t, "test_%d.py" % (_i + 1), "exec"), _g)
            _report({"test": _i, "error": None})
        except BaseException as _e:
            _report({"test": _i, "error": clip(type(_e).__name__ + (": " + str(_e) if str(_e) else ""))})
"""


@dataclass(frozen=True)
class TesterRun:
    """What running the tester's asserts found.

    Attributes:
        outcome: test index -> ``None`` (passed) or why it failed (at most
            :data:`~.config.MAX_ERROR_CHARS` characters); a test missing here was not run.
        solution_error: the code failed on import (no test ran).
        status: the sandbox status of the code's run (``"early_exit"`` when it did not answer).
        runs: the sandboxed runs (for timing).
    """

    outcome: dict[int, str | None]
    solution_error: str | None
    status: str
    runs: tuple[ExecutionResult, ...]


class _Split(ast.NodeTransformer):
    """Replaces the outermost calls of ``names`` by ``_answer(j)``, collecting their sources."""

    def __init__(self, names: set[str], first: int) -> None:
        self.calls: list[str]
        self.names, self.calls, self.first, self.scoped, self.depth = names, [], first, False, 0

    def visit_Call(self, node: ast.Call) -> ast.AST:
        if isinstance(node.func, ast.Name) and node.func.id in self.names:
            if self.depth:
                self.scoped = True
                return node
            self.calls.append(ast.unparse(node))
            return ast.Call(ast.Name("_answer", ast.Load()), [ast.Constant(self.first + len(self.calls) - 1)], [])
        return self.generic_visit(node)

    def _scope(self, node: ast.AST) -> ast.AST:
        self.depth += 1
        try:
            return self.generic_visit(node)
        finally:
            self.depth -= 1

    visit_Lambda = visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _scope


def run_tester_tests(code: str, setup: str, tests: Sequence[str], config: SandboxConfig) -> TesterRun:
    """Run ``tests`` (assert statements) on ``code`` (see the module docstring).

    Args:
        code: the coder's code (untrusted).
        setup: the tester's import lines, run before the tests (in both processes).
        tests: the tester's asserts, each a statement.
        config: the sandbox limits.
    """
    with PARSE_LOCK:
        try:  # code that does not parse fails in its own process (solution_error)
            body = ast.parse(code).body
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            body = []
        names = {n.name for n in body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
        calls: list[dict[str, str]] = []
        judged: list[tuple[int, str]] = []
        outcome: dict[int, str | None] = {}
        for i, t in enumerate(tests):
            split = _Split(names, len(calls))
            tree = ast.fix_missing_locations(split.visit(ast.parse(t)))
            if split.scoped:
                outcome[i] = NOT_CHECKED
                continue
            calls += [{"expr": c} for c in split.calls]
            judged.append((i, ast.unparse(tree)))
    cr = call_functions(f"{code}\n{setup}\n", calls, config)
    runs, status = [cr.result], cr.result.status
    if cr.solution_error is not None:
        return TesterRun(outcome, cr.solution_error, status, tuple(runs))
    if cr.outcomes is None:
        return TesterRun(outcome, None, status if status != "ok" else "early_exit", tuple(runs))
    program, nonce = plain_program(_JUDGE, SETUP=setup, TESTS=judged, ANSWERS=cr.raw)
    r = run_python(program, wide_output(config))
    runs.append(r)
    for line in r.stdout.splitlines():
        if line.startswith(nonce):
            try:
                rec = json.loads(line[len(nonce) :])
            except ValueError:
                continue
            if isinstance(rec, dict) and isinstance(rec.get("test"), int) and rec["test"] not in outcome:
                error = rec.get("error")
                outcome[rec["test"]] = None if error is None else clip(str(error))
    return TesterRun(outcome, None, status, tuple(runs))
