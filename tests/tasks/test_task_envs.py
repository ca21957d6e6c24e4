"""The task environments (HotpotQA, MATH-500, GSM8K, HumanEval, MBPP) score references and wrong
answers correctly through the environment, run their topologies, and play with real models.

Figures (asserted below; development machine, 2 shared cores):
* HumanEval: all 164 canonical solutions pass the hidden tests through the env (about 6 s with
  4 threads); MBPP: all 974 (about 40 s; MBPP/123 alone takes ~2.2 s; timeout_s=10 is CPU time, so load
  does not fail it).
* MATH-500: all 500 gold answers verify through the env; GSM8K: all 1319 gold solutions.
* HotpotQA: all 600 gold answers (dev + train) give EM = F1 = 1, and the gold supporting-fact
  labels give supporting-fact F1 = 1.
* Wrong answers score 0 (code: a stub returning None; math: a number no item has; GSM8K: gold + 1;
  HotpotQA: the next item's different answer has EM 0).
"""

from __future__ import annotations

import sys
import threading
import time
import types
from concurrent.futures import ThreadPoolExecutor
from decimal import Decimal

import numpy as np
import pytest
from support import DATA, requires_bwrap

import lang_pz
from lang_pz.error import (
    ActionParseError,
    DependencyNotInstalled,
    InvalidKwargError,
    LangPZError,
)
from lang_pz.policies import LLMPolicy
from lang_pz.rollout import rollout
from lang_pz.tasks.code_env import (
    extract_code,
    extract_tests,
    make_humaneval,
    make_mbpp,
)
from lang_pz.tasks.datasets import demo_items, load_from_hub
from lang_pz.tasks.math_env import bounded_math_equal, make_gsm8k, make_math500
from lang_pz.tasks.qa_env import make_hotpotqa
from lang_pz.tasks.scoring import normalize_answer
from lang_pz.test import ScriptedBackend

needs_data = pytest.mark.skipif(not DATA.is_dir(), reason="benchmark data folder not available")


def _play(env, texts, *, index=None, seed=None):
    """Reset (to ``index`` or by ``seed``) and send ``texts`` in turn order; return the env."""
    env.reset(seed=seed, options=None if index is None else {"index": index})
    for text in texts:
        env.step(text)
    return env


def _team_reward(env):
    rewards = {a: env.rewards[a] for a in env.agents}
    assert len(set(rewards.values())) == 1, f"the team reward is not shared: {rewards}"
    return next(iter(rewards.values()))


# -- code -------------------------------------------------------------------------------------------


def _canonical_rewards(make, workers=4):
    """Play every item's canonical solution through the env (``workers`` threads, one env each)."""
    envs = [make() for _ in range(workers)]
    n = len(envs[0].items)

    def work(w):
        out = []
        for i in range(w, n, workers):
            env = _play(envs[w], [envs[w].items[i].canonical_solution], index=i)
            out.append((env.item.task_id, _team_reward(env), env.score["status"], env.score["error"][-200:]))
        return out

    with ThreadPoolExecutor(workers) as pool:
        return [r for rs in pool.map(work, range(workers)) for r in rs]


@requires_bwrap
def test_all_humaneval_canonical_solutions_pass_through_the_env():
    t0 = time.perf_counter()
    results = _canonical_rewards(lambda: make_humaneval(turns=("coder",)))
    failed = [r for r in results if r[1] != 1.0]
    assert len(results) == 164 and failed == []
    print(f"\nHumanEval: 164/164 canonical solutions pass in {time.perf_counter() - t0:.1f} s")


@needs_data
@requires_bwrap
def test_all_mbpp_canonical_solutions_pass_through_the_env():
    t0 = time.perf_counter()
    results = _canonical_rewards(lambda: make_mbpp(turns=("coder",), split="all", data_dir=str(DATA)))
    failed = [r for r in results if r[1] != 1.0]
    assert len(results) == 974 and failed == []
    print(f"\nMBPP: 974/974 canonical solutions pass in {time.perf_counter() - t0:.1f} s")


def _stub(item):
    name = item.entry_point or item.tests[0].split("assert", 1)[1].strip().split("(")[0].strip()
    return f"def {name}(*args, **kwargs):\n    return None\n"


@needs_data
@requires_bwrap
@pytest.mark.parametrize(
    "make",
    [
        lambda: make_humaneval(turns=("coder",)),
        lambda: make_mbpp(turns=("coder",), data_dir=str(DATA)),
    ],
)
def test_wrong_code_scores_zero(make):
    env = make()
    for i in range(0, len(env.items), len(env.items) // 12):
        _play(env, [_stub(env.items[i])], index=i)
        assert _team_reward(env) == 0.0 and env.score["passed"] is False, env.item.task_id
        assert env.score["status"] == "error"


@requires_bwrap
def test_coder_tester_coder_loop_runs_the_testers_asserts():
    env = make_mbpp(source="demo", index=0)  # sum_squares
    env.reset()
    assert env.agent_selection == "coder"
    env.step("Here it is:\n```python\ndef sum_squares(xs):\n    return sum(xs)\n```")
    assert env.infos["coder"]["parse_error"] is None
    env.step("assert sum_squares([1, 2]) == 5\nassert sum_squares([]) == 0\nassert sum_squares([3]) == 9")
    report = env.transcript[-1]
    assert report.speaker == "env" and "Test run: 1 of 3 tests passed." in report.text
    assert "assert sum_squares([1, 2]) == 5 -> AssertionError" in report.text
    assert env.tester_runs[0]["passed"] == 1
    obs = env.observe("coder")["text"]
    assert "1 of 3 tests passed" in obs and "Your turn (3 of 3)" in obs
    env.step("def sum_squares(xs):\n    return sum(x * x for x in xs)")
    assert _team_reward(env) == 1.0 and env.score["passed"] is True
    assert all(env.terminations.values())
    assert env.infos["tester"]["score"] == env.score


@requires_bwrap
def test_tester_report_names_a_broken_solution():
    env = make_mbpp(source="demo", index=0)
    _play(env, ["def sum_squares(xs):\n    return undefined_name", "assert sum_squares([1]) == 1"])
    assert "NameError" in env.transcript[-1].text and "0 of 1 tests passed" in env.transcript[-1].text
    env = make_mbpp(source="demo", index=0)
    _play(env, ["def sum_squares(xs) return", "assert sum_squares([1]) == 1"])
    assert "the code itself failed" in env.transcript[-1].text and "SyntaxError" in env.transcript[-1].text


@requires_bwrap
def test_coder_fallback_keeps_the_previous_code():
    env = make_mbpp(source="demo", index=0)
    _play(env, ["def sum_squares(xs):\n    return sum(x * x for x in xs)", "no tests today", "I am done."])
    assert env.infos["tester"]["parse_error"] and env.infos["tester"]["fallback"] is True
    assert env.infos["coder"]["fallback"] is True and "def sum_squares" in env.infos["coder"]["action"]
    assert _team_reward(env) == 1.0


@requires_bwrap
@pytest.mark.parametrize(
    ("code", "status"),
    [
        ("def sum_squares(xs):\n    while True:\n        pass", "timeout"),
        (
            "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\ndef sum_squares(xs):\n    return 0",
            "timeout",
        ),
        ("x = bytearray(10 ** 10)\ndef sum_squares(xs):\n    return 0", "memory"),
        (
            "import os\ndef sum_squares(xs):\n    return sum(x * x for x in xs) if os.environ.get('OPENAI_API_KEY') else -1",
            "error",
        ),
    ],
)
def test_hostile_code_costs_only_its_episode(code, status, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-lang-pz-test")
    env = make_mbpp(source="demo", index=0, turns=("coder",), timeout_s=2.0)
    _play(env, [code])
    assert _team_reward(env) == 0.0 and env.score["status"] == status
    _play(env, [demo_items("mbpp")[0].canonical_solution])
    assert _team_reward(env) == 1.0


def test_extract_code_and_tests():
    assert extract_code("Sure!\n```python\ndef f(x):\n    return x\n```\nDone.") == "def f(x):\n    return x\n"
    assert extract_code("def f(x): return x + 1") == "def f(x): return x + 1\n"
    assert extract_code("R = 3\ndef f():\n    return R") == "R = 3\ndef f():\n    return R\n"
    assert extract_code("Here:\nimport math\ndef f(): return math.pi\nThat is all").startswith("import math\ndef f()")
    assert extract_code("x = 1") is None and extract_code("qwzx vbnm") is None
    setup, tests = extract_tests("import math\nassert f(1) == 2; assert f(2) == 3\nprint('hi')")
    assert setup == "import math" and tests == ("assert f(1) == 2", "assert f(2) == 3")
    _, tests = extract_tests("Tests:\nassert f(1) == 2\nthis is not python\nassert f(\n", max_tests=5)
    assert tests == ("assert f(1) == 2",)
    assert extract_tests("\n".join(f"assert f({i})" for i in range(30)), max_tests=4)[1][-1] == "assert f(3)"


# -- math -------------------------------------------------------------------------------------------


@needs_data
def test_all_math500_gold_answers_verify_and_a_wrong_one_does_not():
    env = make_math500(data_dir=str(DATA), turns=("solver",))
    right = wrong = 0
    for i, item in enumerate(env.items):
        assert normalize_answer(item.answer) != "123456789"
        right += _team_reward(_play(env, [f"So the answer is $\\boxed{{{item.answer}}}$."], index=i)) == 1.0
        wrong += _team_reward(_play(env, ["So the answer is $\\boxed{123456789}$."], index=i)) == 1.0
    assert (right, wrong) == (500, 0)


@needs_data
def test_all_gsm8k_gold_solutions_verify_and_off_by_one_does_not():
    env = make_gsm8k(data_dir=str(DATA))
    right = wrong = 0
    for i, item in enumerate(env.items):
        right += _team_reward(_play(env, [item.solution, "Correct."], index=i)) == 1.0
        wrong += _team_reward(_play(env, [f"#### {Decimal(item.answer) + 1}", "Correct."], index=i)) == 1.0
    assert (right, wrong) == (1319, 0)


def test_verifier_corrects_confirms_or_falls_back():
    env = make_math500(source="demo", index=1)  # 1/2 + 1/3
    _play(env, ["It is $\\boxed{\\frac{2}{5}}$.", "No: $\\boxed{\\frac{5}{6}}$"])
    assert _team_reward(env) == 1.0
    assert env.score["solver_correct"] is False and env.score["changed_by_verifier"] is True
    _play(env, ["It is $\\boxed{5/6}$.", "Correct, well done."])
    assert _team_reward(env) == 1.0 and env.infos["verifier"]["action"]["verdict"] == "confirmed"
    _play(env, ["It is $\\boxed{2/5}$.", "hmm"])
    assert _team_reward(env) == 0.0 and env.infos["verifier"]["fallback"] is True
    assert env.score["answer"] == "2/5"
    env = make_gsm8k(source="demo", index=0)  # 26
    _play(env, ["36 - 10 = 26\n#### 26", "Correct"])
    assert _team_reward(env) == 1.0 and env.infos["solver"]["parse_error"] is None
    _play(env, ["no idea", "I think it is #### 26"])
    assert env.infos["solver"]["fallback"] is True and _team_reward(env) == 1.0
    assert env.score["solver_answer"] is None and env.score["check"] == "ok"


def test_a_reply_without_its_final_answer_form_is_not_graded():
    """Echoing the problem scored on MATH-500 (the whole reply was the answer: 4 of 100 test items,
    e.g. 'Write $\\frac{3}{20}$ as a decimal.') and on GSM8K (its last number)."""
    env = make_math500(source="demo", index=1, turns=("solver",))  # gold 5/6
    _play(env, ["5/6"])
    assert _team_reward(env) == 0.0 and env.infos["solver"]["fallback"] is True
    assert env.score["answer"] is None and env.score["check"] == "no_answer"
    env = make_gsm8k(source="demo", index=0, turns=("solver",))  # gold 26
    _play(env, ["36 - 10 = 26"])
    assert _team_reward(env) == 0.0 and env.score["check"] == "no_answer"


def test_math_checks_from_threads_are_bounded():
    env = make_math500(source="demo", index=1, turns=("solver",))
    with ThreadPoolExecutor(1) as pool:
        r = pool.submit(lambda: _team_reward(_play(env, ["$\\boxed{\\frac{10}{12}}$"]))).result()
        assert r == 1.0 and env.score["check"] == "ok"
        # a short answer that makes sympy compute a 2^30-bit number: abandoned after 1 s of CPU time
        # (the bound is CPU time, so no wall-clock assertion here: a busy machine only slows it)
        assert pool.submit(bounded_math_equal, "2^{2^{30}}", "1", 1.0).result() == (False, "timeout")
        # the killed worker is replaced
        assert pool.submit(bounded_math_equal, "\\frac{5}{6}", "\\frac{10}{12}", 30.0).result() == (True, "ok")
    assert threading.current_thread() is threading.main_thread()
    assert bounded_math_equal("x" * 500, "1") == (False, "too_long")


# -- QA ---------------------------------------------------------------------------------------------


@needs_data
@pytest.mark.parametrize("split", ["dev", "train"])
def test_all_hotpotqa_gold_answers_and_evidence_score_one(split):
    env = make_hotpotqa(data_dir=str(DATA), split=split)
    n_items = len(env.items)
    for i in range(n_items):
        env.reset(options={"index": i})
        env.step("Evidence: " + ", ".join(env.gold_labels()))
        env.step(f"Answer: {env.item.answer}")
        s = env.score
        assert (s["em"], s["f1"], _team_reward(env)) == (1.0, 1.0, 1.0), env.item.id
        assert (s["sp_precision"], s["sp_recall"], s["sp_f1"]) == (1.0, 1.0, 1.0), env.item.id
        other = next(
            it
            for it in env.items[i + 1 :] + env.items[:i]
            if normalize_answer(it.answer) != normalize_answer(env.item.answer)
        )
        _play(env, ["Evidence: 1.1", f"Answer: {other.answer}"], index=i)
        assert env.score["em"] == 0.0 and env.score["f1"] < 1.0


def test_qa_roles_see_what_the_table_says():
    env = make_hotpotqa(source="demo", index=0)
    env.reset()
    finder = env.observe("finder")["text"]
    assert "[2.2] The river Vell flows through Ostmark." in finder and "Your turn (1 of 2)" in finder
    assert "Paragraphs" not in env.observe("answerer")["text"]
    assert "Vell" not in env.observe("answerer")["text"]
    env.step("Evidence: 1.1 and 2.2, also 9.9")
    answerer = env.observe("answerer")["text"]
    assert "[2.2] Ostmark: The river Vell flows through Ostmark." in answerer
    assert env.infos["finder"]["action"] == [["Blue Lantern Museum", 0], ["Ostmark", 1]]
    env.step("The river is the Vell.\nAnswer: the Vell")
    assert _team_reward(env) == 1.0 and env.score["sp_f1"] == 1.0
    assert "Gold answer: Vell" in env.state_text()
    solo = make_hotpotqa(source="demo", index=0, turns=("answerer",))
    solo.reset()
    assert "[2.2]" in solo.observe("answerer")["text"]
    _play(solo, ["Vell"])  # no 'Answer:' line: the whole reply is the answer
    assert solo.infos["answerer"]["fallback"] is True and _team_reward(solo) == 1.0
    assert "sp_f1" not in solo.score


@needs_data
def test_max_paragraphs_keeps_the_gold_paragraphs():
    env = make_hotpotqa(data_dir=str(DATA), max_paragraphs=3)
    for i in range(0, 300, 17):
        env.reset(options={"index": i})
        shown = env.observe("finder")["text"]
        assert "(4) " not in shown
        for title, _ in env.item.supporting_facts:
            assert f") {title}:"[:40] in shown


# -- shared behaviour -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "env_id",
    [
        "tasks/hotpotqa-v0",
        "tasks/math500-v0",
        "tasks/gsm8k-v0",
        pytest.param("tasks/humaneval-v0", marks=requires_bwrap),
        pytest.param("tasks/mbpp-v0", marks=requires_bwrap),
    ],
)
def test_seeded_reset_is_deterministic_and_strict_raises(env_id):
    a = lang_pz.make(env_id, source="demo")
    b = lang_pz.make(env_id, source="demo")
    picks = []
    for seed in range(8):
        a.reset(seed=seed)
        b.reset(seed=seed)
        assert a.item == b.item and a.observe(a.agent_selection) == b.observe(b.agent_selection)
        picks.append(a.item_index)
    assert len(set(picks)) == 2  # both demo items get drawn
    s = lang_pz.make(env_id, source="demo", strict=True)
    s.reset(seed=0)
    first = s.agent_selection
    with pytest.raises(ActionParseError) as exc:
        s.step("qwzx vbnm")
    assert exc.value.text == "qwzx vbnm" and s.agent_selection == first and s.turn == 0
    with pytest.raises(ActionParseError, match="must be a str"):
        s.step(42)


def test_bad_kwargs_are_rejected_with_the_fix():
    with pytest.raises(InvalidKwargError, match=r"got unknown roles \['reviewer'\] in \['coder', 'reviewer'\]"):
        make_mbpp(source="demo", turns=("coder", "reviewer"))
    # a string (--kw turns=nosuch) is named as written, not as a tuple of its letters, with the fix
    with pytest.raises(InvalidKwargError, match=r"got 'nosuch'; e\.g\. turns=\['solver', 'verifier'\]") as exc:
        make_math500(source="demo", turns="nosuch")
    assert "--kw 'turns=[solver, verifier]'" in str(exc.value) and "'n', 'o'" not in str(exc.value)
    with pytest.raises(InvalidKwargError, match="got an empty list"):
        make_math500(source="demo", turns=[])
    with pytest.raises(InvalidKwargError, match=r"turns must include \['answerer'\]"):
        make_hotpotqa(source="demo", turns=("finder",))
    with pytest.raises(InvalidKwargError, match="index must be None or an integer from 0 to 1"):
        make_math500(source="demo", index=2)
    with pytest.raises(InvalidKwargError, match="split must be one of"):
        make_gsm8k(source="demo", split="dev")
    with pytest.raises(InvalidKwargError, match="source must be one of"):
        make_humaneval(source="web")
    with pytest.raises(InvalidKwargError, match="supports api"):
        lang_pz.make("tasks/mbpp-v0", api="parallel", source="demo")


def test_missing_data_says_where_to_put_it(tmp_path, monkeypatch):
    monkeypatch.delenv("LANG_PZ_DATA_DIR", raising=False)
    with pytest.raises(LangPZError, match="LANG_PZ_DATA_DIR"):
        make_gsm8k()
    with pytest.raises(LangPZError, match=r"gsm8k/test.jsonl\. Put it there"):
        make_gsm8k(data_dir=str(tmp_path))


def test_load_from_hub_converts_rows_and_names_the_extra(monkeypatch):
    calls = []

    def load_dataset(path, name=None, split=None, **kwargs):
        calls.append((path, name, split))
        return [{"question": "2 + 2?", "answer": "2 + 2 = 4\n#### 4"}]

    monkeypatch.setitem(sys.modules, "datasets", types.SimpleNamespace(load_dataset=load_dataset))
    items = load_from_hub("gsm8k")
    assert calls == [("openai/gsm8k", "main", "test")] and items[0].answer == "4"
    monkeypatch.setitem(sys.modules, "datasets", None)
    with pytest.raises(DependencyNotInstalled, match=r"lang_pz\[hub\]"):
        load_from_hub("gsm8k")


def test_gold_is_hidden_until_the_end_and_state_text_shows_everything():
    env = make_gsm8k(source="demo", index=0)
    env.reset()
    for agent in env.agents:
        assert "#### 26" not in env.observe(agent)["text"] and "26" not in str(env.infos[agent])
    env.step("#### 25")
    assert "Gold" not in env.state_text() and "The solver's final answer: 25" in env.state_text()
    env.step("Correct")
    text = env.state_text()
    assert "Gold answer: 26" in text and "Team reward: 0" in text and "[turn 2, verifier] Correct" in text


@requires_bwrap
def test_rollout_with_scripted_policies_records_the_team_reward():
    env = make_mbpp(source="demo", index=1)  # is_palindrome
    replies = {
        "coder": ["def is_palindrome(s):\n    return s == s[::-1]", "def is_palindrome(s):\n    return s == s[::-1]"],
        "tester": ["assert is_palindrome('aba')\nassert not is_palindrome('ab')"],
    }
    policies = {a: LLMPolicy("Write good code.", ScriptedBackend(replies[a]), max_tokens=64) for a in env.possible_agents}
    traj = rollout(env, policies, seed=0)
    assert traj.returns == {"coder": 1.0, "tester": 1.0}
    assert [s.agent for s in sorted(traj.steps, key=lambda s: s.step)] == ["coder", "tester", "coder"]
    assert "2 of 2 tests passed" in traj.states[2]


# -- real models ------------------------------------------------------------------------------------

#: Unconditional policies in each role's reply format: the 135M model follows unconditional
#: policies (GUIDE.md), so these show the formats being extracted, not task skill.
ROLE_POLICIES = {
    "finder": "Always reply 'Evidence: 1.1, 2.1'.",
    "answerer": "Always reply 'Answer: yes'.",
    "solver": "Always reply 'The answer is \\boxed{2}'.",
    "verifier": "Always reply 'Correct'.",
    "coder": "Always reply 'def f(x): return x'.",
    "tester": "Always reply 'assert f(1) == 1'.",
}


@pytest.mark.integration
@pytest.mark.parametrize(
    ("env_id", "kwargs"),
    [
        ("tasks/hotpotqa-v0", {"max_paragraphs": 3}),
        ("tasks/math500-v0", {}),
        ("tasks/gsm8k-v0", {}),
        pytest.param("tasks/humaneval-v0", {}, marks=requires_bwrap),
        pytest.param("tasks/mbpp-v0", {}, marks=requires_bwrap),
    ],
)
def test_embedded_model_plays_one_episode(env_id, kwargs, embedded, monkeypatch):
    if env_id != "tasks/humaneval-v0":
        if not DATA.is_dir():
            pytest.skip("benchmark data folder not available")
        kwargs = {**kwargs, "data_dir": str(DATA)}
    env = lang_pz.make(env_id, **kwargs)
    policies = {a: LLMPolicy(ROLE_POLICIES[a], embedded, max_tokens=48) for a in env.possible_agents}
    traj = rollout(env, policies, seed=1)
    assert len(traj.steps) == len(env.turns)
    assert len(set(traj.returns.values())) == 1 and 0.0 <= next(iter(traj.returns.values())) <= 1.0
    assert all(s.raw_output is not None for s in traj.steps)
    print(f"\n=== {env_id} (task {env._task_id()}) team reward {next(iter(traj.returns.values())):g}")
    for s in traj.steps:
        print(f"[{s.agent}] obs tail: {s.observation[-160:]!r}\n  -> reply {s.raw_output!r} (parse_error={s.parse_error})")
    print(f"score: {env.score}")


@pytest.mark.parametrize("seed", [-1, 1.5, "3", True])
def test_a_seed_that_is_not_a_non_negative_integer_is_refused(seed):
    env = make_gsm8k(source="demo")
    with pytest.raises(InvalidKwargError, match=f"seed must be None or an integer >= 0, got {seed!r}"):
        env.reset(seed=seed)
    env.reset(seed=np.int64(3))  # RL libraries pass numpy integers: the item of seed 3
    other = make_gsm8k(source="demo")
    other.reset(seed=3)
    assert env.item_index == other.item_index
