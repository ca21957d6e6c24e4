"""Any action gives a step or a documented error in every task environment.

Model text may be deeply nested (the parser's recursion or stack limits), not a ``str`` at
all, or longer than the action space's bound: each of these is a parse error, handled like text
without the role's deliverable (the documented fallback, recorded in ``info``) or, in strict
mode, an :class:`~lang_pz.error.ActionParseError` carrying the raw action. Found by hand and by
``benchmarks/fuzz_actions.py``.
"""

from __future__ import annotations

import math
import sys

import numpy as np
import pytest
from support import requires_bwrap

import lang_pz
from lang_pz.error import ActionParseError
from lang_pz.tasks.code_env import extract_code, extract_tests
from lang_pz.tasks.datasets import demo_items, load_humaneval

#: The code envs run in the default sandbox: bubblewrap.
TASK_IDS = [
    "tasks/hotpotqa-v0",
    "tasks/math500-v0",
    "tasks/gsm8k-v0",
    pytest.param("tasks/humaneval-v0", marks=requires_bwrap),
    pytest.param("tasks/mbpp-v0", marks=requires_bwrap),
]
DEEP_RETURN = "def f(x):\n    return " + "-" * 3000 + "1"  # RecursionError in ast.parse
DEEP_ASSERT = "assert " + "-" * 3000 + "1 == 1"  # RecursionError in compile
DEEPER_ASSERT = "assert " + "-" * 100000 + "1 == 1"  # MemoryError (parser stack)


@pytest.fixture(autouse=True)
def _default_recursion_limit():
    """The inputs above overflow the parser and compiler at Python's default recursion limit (1000);
    a library imported earlier in the same process may have raised it (then they compile)."""
    before = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)
    yield
    sys.setrecursionlimit(before)


@pytest.mark.parametrize(
    "text", [DEEP_RETURN, DEEP_ASSERT, DEEPER_ASSERT, "x = 1" + " + 1" * 5000, "```python\n" + DEEP_RETURN + "\n```"]
)
def test_extraction_of_deeply_nested_text_never_raises(text):
    code = extract_code(text)
    assert code is None or code.startswith("def f")
    assert extract_tests(text) == ("", ())


@requires_bwrap
def test_deeply_nested_code_and_tests_are_played_or_refused_not_crashed():
    env = lang_pz.make("tasks/mbpp-v0", source="demo")
    env.reset(seed=0)
    env.step(DEEP_RETURN)  # delivered as code (it starts with def); it fails in the sandbox
    assert env.infos["coder"]["parse_error"] is None
    env.step(DEEP_ASSERT)  # no assert that compiles: the tester's fallback (no tests)
    assert env.infos["tester"]["fallback"] is True and "no assert" in env.infos["tester"]["parse_error"]
    assert "No tests were run" in env.transcript[-1].text
    env.step(DEEPER_ASSERT)  # longer than the action bound: the coder's fallback (previous code)
    assert env.infos["coder"]["fallback"] is True and "max_length" in env.infos["coder"]["parse_error"]
    assert env.score["status"] == "error" and env.rewards["coder"] == 0.0
    strict = lang_pz.make("tasks/mbpp-v0", source="demo", strict=True, turns=("tester", "coder"))
    strict.reset(seed=0)
    for text in (DEEP_ASSERT, DEEPER_ASSERT):
        with pytest.raises(ActionParseError) as exc:
            strict.step(text)
        assert exc.value.text == text and strict.turn == 0


NON_STR = [None, 42, math.nan, b"Answer: Vell", ["def f(): pass"], {"text": "Correct"}, np.int64(3), object()]


@pytest.mark.parametrize("env_id", TASK_IDS)
def test_a_non_str_action_is_a_parse_error_with_the_fallback(env_id):
    env = lang_pz.make(env_id, source="demo")
    for action in NON_STR:
        env.reset(seed=0)
        agent = env.agent_selection
        env.step(action)
        info = env.infos[agent]
        assert info["fallback"] is True and "must be a str" in info["parse_error"], action
        assert info["action_text"] == repr(action) and env.turn == 1
    strict = lang_pz.make(env_id, source="demo", strict=True)
    strict.reset(seed=0)
    for action in NON_STR:
        with pytest.raises(ActionParseError, match="must be a str") as exc:
            strict.step(action)
        assert exc.value.text is action and strict.turn == 0


@pytest.mark.parametrize(
    ("env_id", "bound"),
    [
        ("tasks/hotpotqa-v0", 4096),
        ("tasks/math500-v0", 8192),
        ("tasks/gsm8k-v0", 8192),
        pytest.param("tasks/humaneval-v0", 8192, marks=requires_bwrap),
        pytest.param("tasks/mbpp-v0", 8192, marks=requires_bwrap),
    ],
)
def test_the_declared_action_bound_is_the_enforced_one(env_id, bound):
    env = lang_pz.make(env_id, source="demo")
    env.reset(seed=0)
    for agent in env.possible_agents:
        assert env.action_space(agent).max_length == bound
    valid = {
        "finder": "Evidence: 1.1",
        "solver": "#### 26" if "gsm8k" in env_id else "\\boxed{5}",
        "coder": "def f(x):\n    return x\n",
    }[env.agent_selection]
    padded = valid + " " * (bound - len(valid))
    assert len(padded) == bound and env.action_space(env.agent_selection).contains(padded)
    agent = env.agent_selection
    env.step(padded)
    assert env.infos[agent]["parse_error"] is None
    env.reset(seed=0)
    env.step(padded + " ")
    assert env.infos[agent]["fallback"] is True and f"max_length={bound}" in env.infos[agent]["parse_error"]
    assert env.infos[agent]["action"] in (None, [], "")  # the over-long text was not read


@requires_bwrap
def test_every_canonical_solution_fits_the_code_bound():
    bound = lang_pz.make("tasks/humaneval-v0", source="demo").action_space("coder").max_length
    longest = max(len(it.canonical_solution) for it in load_humaneval() + demo_items("mbpp"))
    assert longest * 4 <= bound
