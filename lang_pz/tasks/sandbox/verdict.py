"""Verdicts on model code that the code cannot set: the benchmark's hidden tests and the tester's asserts.

The model's code runs in a sandboxed process that is given only the inputs of the tests; what its
functions return comes back as plain data (:mod:`.plain`) and is judged elsewhere, so ending the
process early, patching what reports, returning an object whose ``__eq__`` always says yes or
printing "passed" lines decide nothing (an early exit is a failure). The expected values never
enter the code's process. Two ways, per item (:func:`cast`):

==========  ========================================================================================
static      every assert is ``f(<literals>) == <literal>`` (or ``!=``, ``is True/False/None``,
            ``abs(f(...) - <literal>) < <tol>`` with the benchmark's own tolerance, ``f(...)`` /
            ``not f(...)``): the code's process makes the calls, this process compares. MBPP tests
            whose inputs are not plain data but whose checks are (MBPP/367 builds a tree of the
            solution's ``Node`` class; 533 passes ``int``) are static too: the code's process
            builds the inputs and evaluates the call expression, the expected value stays here
replay      other tests (inputs built in loops, from seeded random numbers or helpers; checks that
            are not an equality, e.g. HumanEval/32's ``abs(poly(xs, x)) < 1e-4``): the test is run
            once on the reference to record its calls (:func:`~.harness.record_calls`), the code's
            process makes them, and the benchmark's test is replayed on its answers
            (:func:`~.harness.replay`) in a process without model code
==========  ========================================================================================

HumanEval (164 items): 147 static, 17 replay. MBPP (974): 971 static (4 of them on inputs the
code's process builds: MBPP/367, 533, 601, 927), 3 replay. An item that fits neither way (a
dataset of one's own) is refused with :class:`~lang_pz.error.LangPZError`: running its asserts
beside the code would let the code report them passed.
"""

from __future__ import annotations

import ast
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from lang_pz.error import LangPZError
from lang_pz.tasks.datasets import CodeItem
from lang_pz.tasks.sandbox import plain
from lang_pz.tasks.sandbox.config import ExecutionResult, SandboxConfig, clip
from lang_pz.tasks.sandbox.harness import CallsResult, Outcome, call_functions, record_calls, replay

__all__ = ["PARSE_LOCK", "Cast", "Check", "Verdict", "cast", "hidden_verdict", "solution_program"]

#: One lock around every ``ast.parse`` / ``compile`` of model text in lang_pz.tasks: CPython
#: 3.11's AST construction keeps its recursion depth in per-interpreter state, so two threads
#: parsing at once can fail with ``SystemError: AST constructor recursion depth mismatch``
#: (seen with environments stepped from a thread pool). Parsing is fast; serialising it is cheap.
PARSE_LOCK = threading.RLock()

_MISSING = object()


@dataclass(frozen=True)
class Check:
    """How one static call's return value is judged: ``op`` is ``"eq"``, ``"ne"``, ``"is"``,
    ``"truth"`` (``expected`` is the truth value wanted) or ``"close"`` (``abs(value - expected)``
    below ``tol``; ``strict``: ``<`` rather than ``<=``)."""

    op: Literal["eq", "ne", "is", "truth", "close"]
    expected: Any
    tol: float = 0.0
    strict: bool = True

    def passes(self, out: Outcome) -> bool:
        """Whether ``out`` passes (builtin operations on plain data only)."""
        if out.kind != "value":
            return False
        v = out.value
        try:
            if self.op == "eq":
                return bool(v == self.expected)
            if self.op == "ne":
                return bool(v != self.expected)
            if self.op == "is":
                return v is self.expected
            if self.op == "truth":
                return bool(v) is self.expected
            d = abs(v - self.expected)
            return bool(d < self.tol if self.strict else d <= self.tol)
        except (TypeError, ValueError, OverflowError, ArithmeticError):
            return False


@dataclass(frozen=True)
class Cast:
    """An item's hidden tests as the code's process will see them (see the module docstring).

    Attributes:
        way: ``"static"`` or ``"replay"``.
        calls: the calls the code's process makes (static and replay).
        checks: one :class:`Check` per call (static).
        setup, targets, test: the reference, the names under test and the test (replay).
    """

    way: Literal["static", "replay"]
    calls: tuple[dict[str, str], ...] = ()
    checks: tuple[Check, ...] = ()
    setup: str = ""
    targets: tuple[str, ...] = ()
    test: str = ""


@dataclass(frozen=True)
class Verdict:
    """Whether code passed an item's hidden tests.

    Attributes:
        passed: all tests passed.
        status: ``"ok"`` (passed), ``"error"`` (a test failed), the sandbox status of the code's
            run when it went wrong (``"timeout"``, ``"memory"``, ...), or ``"early_exit"`` when it
            ended without handing back every answer.
        error: why it failed (``""`` when it passed): a fixed sentence and at most
            :data:`~.config.MAX_ERROR_CHARS` characters of text the code controls
            (:func:`~.config.clip`), so a 1.5 M-character exception name cannot fill ``info`` and logs.
        runs: every sandboxed run this verdict took (for timing).
    """

    passed: bool
    status: str
    error: str
    runs: tuple[ExecutionResult, ...]


def solution_program(item: CodeItem, code: str) -> str:
    """The code as the tests see it: HumanEval: the prompt (its imports and helpers; its stub is
    redefined by ``code``) then the code; MBPP: the code then ``test_setup_code``."""
    if item.entry_point:
        return f"{item.prompt}\n{code}\n"
    return f"{code}\n\n{item.test_setup}\n"


def _literal(node: ast.expr) -> Any:
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return _MISSING


def _static_call(node: ast.expr, targets: Sequence[str], built: bool = False) -> dict[str, str] | None:
    """``{"name", "args", "kwargs"}`` of ``f(<literals>)`` with ``f`` in ``targets``, else ``None``;
    with ``built``, ``{"expr": source}`` of ``f(<any expressions>)`` (inputs the code's process builds,
    e.g. a tree of its own ``Node`` class), whose value is still judged outside that process."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in targets):
        return None
    if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
        return None
    args = [_literal(a) for a in node.args]
    kwargs = {k.arg: _literal(k.value) for k in node.keywords if k.arg is not None}
    if any(v is _MISSING for v in [*args, *kwargs.values()]):
        return {"expr": ast.unparse(node)} if built else None
    try:
        return {"name": node.func.id, "args": plain.dumps(args), "kwargs": plain.dumps(kwargs)}
    except plain.NotPlain:
        return None


def _static_assert(
    node: ast.Assert, targets: Sequence[str], built: bool = False
) -> tuple[dict[str, str], Check] | bool | None:
    """The call and check of a static assert; ``True`` for ``assert <truthy literal>`` (no call);
    ``None`` if it is not static."""
    e = node.test
    if isinstance(e, ast.Constant):
        return True if e.value else None
    if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.Not):
        call = _static_call(e.operand, targets, built)
        return (call, Check("truth", False)) if call else None
    call = _static_call(e, targets, built)
    if call:
        return call, Check("truth", True)
    if not (isinstance(e, ast.Compare) and len(e.ops) == 1):
        return None
    left, op, right = e.left, e.ops[0], e.comparators[0]
    if isinstance(op, (ast.Eq, ast.NotEq, ast.Is)):
        for a, b in ((left, right), (right, left)):
            call, want = _static_call(a, targets, built), _literal(b)
            if call and want is not _MISSING:
                if isinstance(op, ast.Is):
                    return (call, Check("is", want)) if want in (True, False, None) and type(want) is not int else None
                return call, Check("eq" if isinstance(op, ast.Eq) else "ne", want)
        return None
    if (
        isinstance(op, (ast.Lt, ast.LtE))
        and isinstance(left, ast.Call)
        and isinstance(left.func, ast.Name)
        and left.func.id == "abs"
        and len(left.args) == 1
        and isinstance(left.args[0], ast.BinOp)
        and isinstance(left.args[0].op, ast.Sub)
    ):
        tol, diff = _literal(right), left.args[0]
        for a, b in ((diff.left, diff.right), (diff.right, diff.left)):
            call, want = _static_call(a, targets, built), _literal(b)
            if call and want is not _MISSING and isinstance(tol, (int, float)) and isinstance(want, (int, float)):
                return call, Check("close", want, float(tol), isinstance(op, ast.Lt))
    return None


def _static(
    statements: Sequence[ast.stmt], targets: Sequence[str], built: bool = False
) -> tuple[list[dict[str, str]], list[Check]] | None:
    calls, checks = [], []
    for s in statements:
        if isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant):  # a docstring or comment string
            continue
        if not isinstance(s, ast.Assert):
            return None
        got = _static_assert(s, targets, built)
        if got is None:
            return None
        if got is not True:
            calls.append(got[0])  # type: ignore[index]
            checks.append(got[1])  # type: ignore[index]
    return (calls, checks) if calls else None


def _defined_names(source: str) -> set[str]:
    tree = ast.parse(source)
    return {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}


def _static_cast(item: CodeItem, targets: Sequence[str], built: bool = False) -> Cast | None:
    """The static cast of ``item``, ``None`` if its tests are not static; with ``built`` (MBPP only),
    calls on inputs the code's process builds count too (:func:`_static_call`), setup included."""
    with PARSE_LOCK:
        if item.entry_point:
            tree = ast.parse(item.tests[0])
            checks = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "check"]
            rest = [n for n in tree.body if n not in checks]
            fine = all(
                (isinstance(n, ast.Assign) and _literal(n.value) is not _MISSING)
                or (isinstance(n, ast.Expr) and ast.unparse(n) == f"check({item.entry_point})")
                for n in rest
            )
            if len(checks) != 1 or not fine or [a.arg for a in checks[0].args.args] != ["candidate"]:
                return None
            got = _static(checks[0].body, ("candidate",))
            if got is None:
                return None
            calls = [{**c, "name": item.entry_point} for c in got[0]]
            return Cast("static", tuple(calls), tuple(got[1]))
        if item.test_setup.strip() and not built:
            return None
        got = _static([s for t in item.tests for s in ast.parse(t).body], targets, built)
        return Cast("static", tuple(got[0]), tuple(got[1])) if got else None


def _built_cast(item: CodeItem, targets: Sequence[str]) -> Cast:
    """MBPP tests whose inputs only the code's process can build (the solution's own classes, type
    objects): static checks on ``{"expr": ...}`` calls.

    Raises:
        LangPZError: the tests fit no way of the module docstring.
    """
    found = None if item.entry_point else _static_cast(item, targets, built=True)
    if found is not None:
        return found
    raise LangPZError(
        f"{item.task_id}: its tests fit no verdict the code cannot set: their inputs are not plain data "
        "(so they cannot be recorded and replayed) and not every assert is `f(...) == <literal>` (or !=, "
        "is, abs(f(...) - x) < tol). Write each assert in that form; running them beside the code would "
        "let the code report them passed (see lang_pz.tasks.sandbox.verdict)"
    )


_casts: dict[tuple[str, str, str], Cast] = {}
_casts_lock = threading.Lock()


def cast(item: CodeItem, config: SandboxConfig) -> Cast:
    """How ``item``'s hidden tests are run (cached per item and process; a replay cast records the
    reference's calls once, in the sandbox).

    Raises:
        LangPZError: the tests fit no way of the module docstring.
    """
    key = (item.task_id, item.canonical_solution, "\n".join(item.tests))
    with _casts_lock:
        if key in _casts:
            return _casts[key]
    if item.entry_point:
        targets: tuple[str, ...] = (item.entry_point,)
        setup, test = item.canonical_solution, item.tests[0]
    else:
        with PARSE_LOCK:
            called = {
                n.func.id
                for t in item.tests
                for n in ast.walk(ast.parse(t))
                if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
            }
            targets = tuple(sorted(called & _defined_names(item.canonical_solution)))
        setup, test = f"{item.canonical_solution}\n\n{item.test_setup}\n", "\n".join(item.tests) + "\n"
    found = _static_cast(item, targets)
    if found is None:
        calls, _ = record_calls(setup, targets, test, config)
        found = _built_cast(item, targets) if calls is None else Cast("replay", tuple(calls), (), setup, targets, test)
    with _casts_lock:
        _casts[key] = found
    return found


def _failed(cr: CallsResult) -> Verdict | None:
    """The verdict when the code's process did not answer every call."""
    if cr.solution_error is not None:
        status = "memory" if cr.solution_error.startswith("MemoryError") else _failing(cr.result.status)
        return Verdict(False, status, f"the code failed before any test: {cr.solution_error}", (cr.result,))
    if cr.outcomes is None:
        why = cr.result.status if cr.result.status != "ok" else "early_exit"
        return Verdict(
            False,
            why,
            "the code's process did not hand back every answer (ended early, or "
            f"printed an answer of its own): {clip(cr.result.stderr, tail=True)}",
            (cr.result,),
        )
    return None


def hidden_verdict(item: CodeItem, code: str, config: SandboxConfig) -> Verdict:
    """Whether ``code`` passes ``item``'s hidden tests, judged outside its process (module docstring).

    Raises:
        LangPZError: the sandbox cannot be set up (see :func:`~lang_pz.tasks.sandbox.run_python`),
            or the item's tests fit no way of the module docstring.
    """
    c = cast(item, config)
    cr = call_functions(solution_program(item, code), c.calls, config)
    failed = _failed(cr)
    if failed is not None:
        return failed
    assert cr.outcomes is not None
    if c.way == "static":
        bad = [i for i, (chk, out) in enumerate(zip(c.checks, cr.outcomes)) if not chk.passes(out)]
        if not bad:
            return Verdict(True, cr.result.status, "", (cr.result,))
        out = cr.outcomes[bad[0]]
        got = {"value": "returned", "raised": "raised", "not_plain": "returned a non-plain"}[out.kind]
        return Verdict(
            False,
            _failing(cr.result.status),
            f"{len(bad)} of {len(c.calls)} tests failed; first: {_shown(c.calls[bad[0]])} {got} {clip(out.text, 200)}",
            (cr.result,),
        )
    r = replay(c.setup, c.targets, c.test, c.calls, cr.raw, config)
    return Verdict(
        r.ok,
        cr.result.status if r.ok else _failing(cr.result.status),
        "" if r.ok else clip(r.stderr, tail=True),
        (cr.result, r),
    )


def _shown(call: dict[str, str]) -> str:
    """``f(1, 'a', k=2)``: a static call as the test wrote it."""
    if "expr" in call:
        return call["expr"][:250]
    args, kwargs = plain.loads(call["args"]), plain.loads(call["kwargs"])
    assert isinstance(args, list) and isinstance(kwargs, dict)  # dumps of a list and a dict (_static_call, record_calls)
    text = ", ".join([*map(repr, args), *(f"{k}={v!r}" for k, v in kwargs.items())])
    return f"{call['name']}({text[:200]})"


def _failing(status: str) -> str:
    """The status of failed tests: the code's own run's if it went wrong, else ``"error"`` (as an
    ``AssertionError`` gives)."""
    return "error" if status == "ok" else status
