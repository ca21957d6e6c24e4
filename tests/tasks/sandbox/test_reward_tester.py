"""The tester role's asserts are judged apart from the coder's code (lang_pz.tasks.sandbox.tester): the code's
process only evaluates the calls of its functions, so it cannot report a test passed."""

from __future__ import annotations

import pytest
from support import requires_bwrap

from lang_pz.tasks.sandbox import SandboxConfig
from lang_pz.tasks.sandbox.tester import NOT_CHECKED, run_tester_tests

pytestmark = requires_bwrap
CFG = SandboxConfig(timeout_s=5.0)
TESTS = ["assert add(1, 2) == 3", "assert add(-1, 1) == 0", "assert add(add(1, 1), 1) == 3"]


def test_correct_code_passes_and_wrong_code_fails_with_the_reason():
    good = run_tester_tests("def add(a, b):\n    return a + b\n", "", TESTS, CFG)
    assert good.outcome == {0: None, 1: None, 2: None}
    bad = run_tester_tests("def add(a, b):\n    return a - b\n", "", TESTS, CFG)
    assert bad.outcome[0] == "AssertionError" and bad.outcome[1] == "AssertionError"


@pytest.mark.parametrize(
    "code",
    [
        # prints report lines in every format the harness ever used, with the nonce read from its own program
        "import __main__, json, os, re, sys\n"
        "n = getattr(__main__, 'NONCE', '')\n"
        "for i in range(3):\n    print('\\n' + n + json.dumps({'test': i, 'error': None}))\n"
        "sys.stdout.flush()\nos._exit(0)\ndef add(a, b):\n    return 0\n",
        "import os\ndef add(a, b):\n    os._exit(0)\n",
        "class Y:\n    def __eq__(self, o):\n        return True\ndef add(a, b):\n    return Y()\n",
    ],
)
def test_attack_code_is_never_reported_passed(code):
    run = run_tester_tests(code, "", TESTS, CFG)
    assert [e for e in run.outcome.values() if e is None] == []


def test_an_exception_in_the_code_is_the_tests_failure():
    run = run_tester_tests("def add(a, b):\n    raise KeyError('k')\n", "", TESTS[:1], CFG)
    assert "KeyError" in run.outcome[0]


def test_a_call_inside_a_comprehension_is_reported_not_checked_never_passed():
    run = run_tester_tests(
        "def add(a, b):\n    return a + b\n",
        "import math",
        ["assert [add(i, 1) for i in range(2)] == [1, 2]", "assert add(math.floor(1.5), 1) == 2"],
        CFG,
    )
    assert run.outcome == {0: NOT_CHECKED, 1: None}


def test_code_that_fails_on_import_is_reported():
    run = run_tester_tests("def add(a, b) return\n", "", TESTS, CFG)
    assert run.solution_error is not None and "SyntaxError" in run.solution_error and run.outcome == {}
