"""GSM8K scoring reads a fraction ``a/b`` as one number, its value: ``#### 6/1`` is 6 and scores for
gold 6, while ``#### 1/6`` is 1/6 and does not (it was read as its denominator, 6, before).
Checked on the real GSM8K test golds (lang_pz.tasks.scoring, lang_pz.tasks.math_env)."""

from __future__ import annotations

from fractions import Fraction

import pytest
from support import DATA

from lang_pz.tasks.datasets import load_gsm8k
from lang_pz.tasks.math_env import make_gsm8k
from lang_pz.tasks.scoring import gsm8k_equal, gsm8k_number, gsm8k_number_text

needs_data = pytest.mark.skipif(not DATA.is_dir(), reason="benchmark data folder not available")


def test_a_fraction_is_its_value():
    assert gsm8k_number("#### 6/1") == 6 and gsm8k_number("so 3 / 4.") == Fraction(3, 4)
    assert gsm8k_number("-6/-1") == 6 and gsm8k_number("1,200/4") == 300
    assert gsm8k_number("6/0") is None and gsm8k_number("$12/hour") == 12
    assert gsm8k_number_text("it is 6 / 1.") == "6/1" and gsm8k_number_text("no number") is None
    assert gsm8k_equal("#### 6/1", "6") and gsm8k_equal("#### 12/2", "6") and gsm8k_equal("#### 6", "6")
    assert not gsm8k_equal("#### 1/6", "6") and not gsm8k_equal("#### 6/1", "1")
    assert not gsm8k_equal("#### 13/2", "6") and not gsm8k_equal("#### 6/0", "6")


@needs_data
def test_every_real_gold_scores_as_a_fraction_and_its_inverse_does_not():
    golds = [Fraction(it.answer) for it in load_gsm8k(DATA)]
    assert len(golds) == 1319
    for g in golds:
        gold = str(g) if g.denominator == 1 else f"{float(g)}"
        assert gsm8k_equal(f"#### {g.numerator * 3}/{g.denominator * 3}", gold)
        assert gsm8k_equal(f"#### {g}/1", gold) if g.denominator == 1 else True
        if g not in (0, 1, -1):
            assert not gsm8k_equal(f"#### 1/{g}", gold), g  # read as the denominator before
            assert not gsm8k_equal(f"#### {g}/2", gold), g


def test_the_env_scores_a_fraction_answer_by_its_value():
    env = make_gsm8k(source="demo", index=0)  # gold 26
    for reply, reward in [("#### 26/1", 1.0), ("#### 52 / 2", 1.0), ("#### 1/26", 0.0), ("#### 26/0", 0.0)]:
        env.reset(options={"index": 0})
        env.step(reply)
        parse_error = env.infos["solver"]["parse_error"]
        env.step("Correct")
        assert {env.rewards[a] for a in env.agents} == {reward}, reply
        if reply.endswith("/0"):  # no number: a parse failure (the solver's fallback: no answer)
            assert parse_error is not None and env.score["solver_answer"] is None
        else:
            assert parse_error is None and env.score["solver_answer"] == reply.removeprefix("#### ").replace(" ", "")
