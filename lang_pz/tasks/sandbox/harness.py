"""The three sandboxed programs a verdict is built from, and reading their plain-data answers.

* :func:`call_functions` (**untrusted**: the model's code) imports the code, calls its functions
  on given inputs and writes what they returned as plain data (:mod:`.plain`). It is never told
  what the answers should be, and nothing it prints is believed except as those return values.
* :func:`record_calls` (**trusted**: the benchmark's reference and tests, no model code) runs the
  benchmark's test with the reference behind a recorder and writes down the inputs of every call
  (tests that build their inputs in loops, from seeded random numbers or from helper functions).
* :func:`replay` (**trusted**) runs the benchmark's own test again with the function under test
  replaced by a replayer that answers each call with the recorded return value of the model's
  code; the test's exit status is the verdict. No model code runs in it: only its data.

``random`` is seeded identically (0) before the test in :func:`record_calls` and :func:`replay`,
so tests that draw inputs at random draw the same ones; a replayed call whose inputs differ from
the recorded ones fails the test.
"""

from __future__ import annotations

import inspect
import json
import secrets
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from lang_pz.tasks.sandbox import plain
from lang_pz.tasks.sandbox.config import MAX_ERROR_CHARS, ExecutionResult, SandboxConfig, clip
from lang_pz.tasks.sandbox.run import run_python

__all__ = [
    "CallsResult",
    "Outcome",
    "answer_line",
    "call_functions",
    "plain_program",
    "record_calls",
    "replay",
    "wide_output",
]

#: The source of :mod:`.plain` and of :func:`~.config.clip`, put at the top of every sandboxed
#: program of this module (``clip`` cuts what the programs report of an exception as the parent does).
PLAIN_SOURCE = (
    Path(plain.__file__).read_text(encoding="utf-8")
    + f"\n\nMAX_ERROR_CHARS = {MAX_ERROR_CHARS}\n\n\n"
    + inspect.getsource(clip)
)
#: Characters of stdout kept for the answers (the plain data of every call).
ANSWER_CHARS = 2_000_000

_CALL = """
import sys as _sys
def _why(e):
    try:
        text = str(e)
    except BaseException:
        text = "(its str() raised)"
    return clip(type(e).__name__ + (": " + text if text else ""))
_g = {"__name__": "__main__"}
_out = []
try:
    exec(compile(CODE, "solution.py", "exec"), _g)
except BaseException as _e:
    _out = {"solution_error": _why(_e)}
else:
    for _c in CALLS:
        try:
            if "expr" in _c:
                _v = eval(compile(_c["expr"], "test.py", "eval"), _g)
            else:
                if _c["name"] not in _g:
                    raise NameError("name %r is not defined" % _c["name"])
                _v = _g[_c["name"]](*loads(_c["args"]), **loads(_c["kwargs"]))
        except BaseException as _e:
            _out.append({"raised": _why(_e)})
            continue
        try:
            _out.append({"value": dumps(_v)})
        except BaseException:
            _out.append({"not_plain": clip(type(_v).__name__)})
_sys.stdout.write("\\n" + NONCE + json.dumps(_out) + "\\n")
_sys.stdout.flush()
"""

_RECORD = """
import random as _random, sys as _sys
_g = {"__name__": "__main__"}
exec(compile(SETUP, "reference.py", "exec"), _g)
_calls, _bad = [], []
def _recorder(name, fn):
    def call(*args, **kwargs):
        try:
            _calls.append({"name": name, "args": dumps(list(args)), "kwargs": dumps(dict(kwargs))})
        except NotPlain as e:
            _bad.append(str(e))
        return fn(*args, **kwargs)
    return call
for _n in TARGETS:
    _g[_n] = _recorder(_n, _g[_n])
_random.seed(0)
exec(compile(TEST, "test.py", "exec"), _g)
_sys.stdout.write("\\n" + NONCE + json.dumps({"calls": _calls, "not_plain": _bad[:1]}) + "\\n")
"""

_REPLAY = """
import random as _random
_g = {"__name__": "__main__"}
exec(compile(SETUP, "reference.py", "exec"), _g)
class CodeRaised(Exception):
    "The code under test raised this (in its own process)."
class ReplayMismatch(Exception):
    "The test made a call the code's process was not asked (other inputs, or more calls)."
_answers = iter(zip(CALLS, json.loads(ANSWERS)))
def _replayer(name):
    def call(*args, **kwargs):
        c, a = next(_answers, (None, None))
        if c is None or c["name"] != name or c["args"] != dumps(list(args)) or c["kwargs"] != dumps(dict(kwargs)):
            raise ReplayMismatch(name)
        if "value" in a:
            return loads(a["value"])
        raise CodeRaised(a.get("raised") or "returned a " + a["not_plain"] + ", which is not plain data")
    return call
for _n in TARGETS:
    _g[_n] = _replayer(_n)
_random.seed(0)
exec(compile(TEST, "test.py", "exec"), _g)
"""


def plain_program(template: str, **values: object) -> tuple[str, str]:
    """``(program, nonce)``: :data:`PLAIN_SOURCE`, the values as literals, then ``template``."""
    nonce = "@@lang_pz-" + secrets.token_hex(8) + "@@"
    head = "".join(f"{k} = {v!r}\n" for k, v in {"NONCE": nonce, **values}.items())
    return PLAIN_SOURCE + "\n" + head + template, nonce


def answer_line(result: ExecutionResult, nonce: str) -> Any:
    """The JSON value of the one line starting with ``nonce``; ``None`` if there is not exactly one
    or it is not strict JSON."""
    lines = [ln for ln in result.stdout.splitlines() if ln.startswith(nonce)]
    if len(lines) != 1 or result.stdout_truncated:
        return None
    try:
        return json.loads(lines[0][len(nonce) :], parse_constant=_refuse)
    except (ValueError, RecursionError):
        return None


def _refuse(name: str) -> None:
    raise ValueError(f"bare {name} in an answer")


def wide_output(config: SandboxConfig) -> SandboxConfig:
    return replace(config, max_output_chars=max(config.max_output_chars, ANSWER_CHARS))


@dataclass(frozen=True)
class Outcome:
    """What one call of the code under test did, as its process reported it.

    Attributes:
        kind: ``"value"`` (it returned plain data), ``"raised"`` or ``"not_plain"``.
        value: the decoded return value (``kind == "value"``), else ``None``.
        text: the JSON of the value, or the exception or the type that was not plain data (cut to
            :data:`~.config.MAX_ERROR_CHARS`).
    """

    kind: str
    value: Any
    text: str


@dataclass(frozen=True)
class CallsResult:
    """What :func:`call_functions` got back.

    Attributes:
        outcomes: one :class:`Outcome` per call, in order; ``None`` when the process did not
            hand back exactly one well-formed answer for every call (it ended early, printed a
            second answer, or its output was cut): then every call counts as failed.
        solution_error: the code failed on import (``outcomes`` is then ``None``): the exception,
            cut to :data:`~.config.MAX_ERROR_CHARS` (:func:`~.config.clip`).
        raw: the answers as JSON text (what :func:`replay` replays), ``""`` if none.
        result: the sandbox run.
    """

    outcomes: list[Outcome] | None
    solution_error: str | None
    raw: str
    result: ExecutionResult


def call_functions(code: str, calls: Sequence[dict[str, str]], config: SandboxConfig) -> CallsResult:
    """Run ``code`` in the sandbox and make ``calls`` in its namespace, in order.

    Args:
        code: the program defining the functions (model code: untrusted).
        calls: each ``{"expr": source}`` (an expression evaluated in the code's namespace) or
            ``{"name": n, "args": plain JSON of a list, "kwargs": plain JSON of a dict}``.
        config: the sandbox limits (the output limit is raised to :data:`ANSWER_CHARS`).
    """
    program, nonce = plain_program(_CALL, CODE=code, CALLS=list(calls))
    result = run_python(program, wide_output(config))
    answer = answer_line(result, nonce)
    if isinstance(answer, dict) and set(answer) == {"solution_error"} and isinstance(answer["solution_error"], str):
        return CallsResult(None, clip(answer["solution_error"]), "", result)
    outcomes = _outcomes(answer, len(calls))
    if outcomes is None:
        return CallsResult(None, None, "", result)
    return CallsResult(outcomes, None, json.dumps(answer), result)


def _outcomes(answer: Any, n: int) -> list[Outcome] | None:
    if not isinstance(answer, list) or len(answer) != n:
        return None
    out = []
    for a in answer:
        if not isinstance(a, dict) or len(a) != 1 or not isinstance(next(iter(a.values())), str):
            return None
        ((kind, text),) = a.items()
        if kind == "value":
            try:
                out.append(Outcome(kind, plain.loads(text), text))
            except plain.NotPlain:
                return None
        elif kind in ("raised", "not_plain"):
            out.append(Outcome(kind, None, clip(text)))
        else:
            return None
    return out


def record_calls(
    setup: str, targets: Sequence[str], test: str, config: SandboxConfig
) -> tuple[list[dict[str, str]] | None, ExecutionResult]:
    """The calls ``test`` makes to ``targets`` when they are the reference (``setup`` defines them).

    Returns ``(calls, result)``; ``calls`` is ``None`` when the test does not pass on the reference
    or passes some input that is not plain data (it cannot be replayed).
    """
    program, nonce = plain_program(_RECORD, SETUP=setup, TARGETS=list(targets), TEST=test)
    result = run_python(program, wide_output(config))
    answer = answer_line(result, nonce)
    if not result.ok or not isinstance(answer, dict) or answer.get("not_plain"):
        return None, result
    return answer["calls"], result


def replay(
    setup: str, targets: Sequence[str], test: str, calls: Sequence[dict[str, str]], answers: str, config: SandboxConfig
) -> ExecutionResult:
    """Run ``test`` with ``targets`` answering ``calls`` from ``answers`` (:attr:`CallsResult.raw`);
    ``result.ok`` is the verdict. Trusted code only: ``setup`` and ``test`` come from the benchmark."""
    program, _ = plain_program(_REPLAY, SETUP=setup, TARGETS=list(targets), TEST=test, CALLS=list(calls), ANSWERS=answers)
    return run_python(program, config)
