"""Parsing model text in the code tasks is safe from many threads at once.

CPython 3.11's ``ast.parse`` keeps the AST constructor's recursion depth in per-interpreter
state: two threads converting ASTs at once fail with ``SystemError: AST constructor recursion
depth mismatch`` (seen in tests/test_task_envs.py's threaded canonical-solution run). A thread
switch inside the conversion needs Python code to run there, which garbage collection of objects
with ``__del__`` provides; the hammer below makes that happen often (without the lock in
lang_pz.tasks.code_replies, the test failed in 2 s on each of two runs on the development machine).
"""

from __future__ import annotations

import gc
import sys
from concurrent.futures import ThreadPoolExecutor

from lang_pz.tasks.code_env import extract_code, extract_tests


class _Finalised:
    """Cyclic garbage whose ``__del__`` runs Python code (a thread switch point) during GC."""

    def __del__(self) -> None:
        total = 0
        for i in range(20):
            total += i


_CODE = "def f(x):\n    return " + "(" * 40 + "x" + ")" * 40 + "\n"
_TESTS = "\n".join(f"assert f({i}) == [{i}, {{'a': ({i},)}}]" for i in range(40))


def _hammer(_: int) -> int:
    done = 0
    for _ in range(40):
        a, b = _Finalised(), _Finalised()
        a.other, b.other = b, a
        del a, b
        assert extract_code(_CODE) == _CODE
        assert len(extract_tests(_TESTS, max_tests=50)[1]) == 40
        done += 1
    return done


def test_extract_code_and_tests_are_safe_from_many_threads():
    interval, thresholds = sys.getswitchinterval(), gc.get_threshold()
    sys.setswitchinterval(1e-5)
    gc.set_threshold(50, 5, 5)
    try:
        with ThreadPoolExecutor(8) as pool:
            assert list(pool.map(_hammer, range(8))) == [40] * 8
    finally:
        sys.setswitchinterval(interval)
        gc.set_threshold(*thresholds)
