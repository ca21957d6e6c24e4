"""Two hand-written items per benchmark, in the benchmark's format, for quick starts and fast API
tests without the data files (they are not benchmark items and say nothing about a model's skill)."""

from __future__ import annotations

from typing import Any

from lang_pz.error import LangPZError
from lang_pz.tasks.datasets.items import (
    gsm8k_item,
    hotpotqa_item,
    humaneval_item,
    math_item,
    mbpp_item,
)

__all__ = ["demo_items"]

_DEMO_HOTPOTQA = (
    {
        "id": "demo-1",
        "question": "Which river flows through the city where the Blue Lantern Museum stands?",
        "answer": "Vell",
        "type": "bridge",
        "level": "easy",
        "supporting_facts": {"title": ["Blue Lantern Museum", "Ostmark"], "sent_id": [0, 1]},
        "context": {
            "title": ["Blue Lantern Museum", "Ostmark", "Harbor Clock", "Glass Bridge"],
            "sentences": [
                ["The Blue Lantern Museum is a museum of lamps in Ostmark.", " It opened in 1921."],
                ["Ostmark is a small city in the hills.", " The river Vell flows through Ostmark."],
                ["The Harbor Clock is a tower in Westby.", " It strikes every hour."],
                ["The Glass Bridge crosses the river Sarn.", " It was built in 1990."],
            ],
        },
    },
    {
        "id": "demo-2",
        "question": "Are the Harbor Clock and the Glass Bridge in the same city?",
        "answer": "no",
        "type": "comparison",
        "level": "easy",
        "supporting_facts": {"title": ["Harbor Clock", "Glass Bridge"], "sent_id": [0, 1]},
        "context": {
            "title": ["Harbor Clock", "Glass Bridge", "Ostmark"],
            "sentences": [
                ["The Harbor Clock is a tower in Westby.", " It strikes every hour."],
                ["The Glass Bridge was built in 1990.", " It stands in Eastby."],
                ["Ostmark is a small city in the hills."],
            ],
        },
    },
)

_DEMO_MATH = (
    {
        "unique_id": "demo/algebra/1.json",
        "problem": "Solve for $x$: $3x + 4 = 19$.",
        "solution": "Subtract 4 and divide by 3: $x = \\boxed{5}$.",
        "answer": "5",
        "subject": "Algebra",
        "level": 1,
    },
    {
        "unique_id": "demo/prealgebra/2.json",
        "problem": "What is $\\frac{1}{2} + \\frac{1}{3}$?",
        "solution": "The common denominator is 6: $\\frac{3}{6} + \\frac{2}{6} = \\boxed{\\frac{5}{6}}$.",
        "answer": "\\frac{5}{6}",
        "subject": "Prealgebra",
        "level": 1,
    },
)

_DEMO_GSM8K = (
    {
        "question": "Ana has 3 boxes with 12 pencils each. She gives away 10 pencils. How many pencils does she have left?",
        "answer": "She had 3 * 12 = <<3*12=36>>36 pencils.\n36 - 10 = <<36-10=26>>26 are left.\n#### 26",
    },
    {
        "question": "A bus ticket costs $2.50. How much do 4 tickets cost, in dollars?",
        "answer": "4 * 2.50 = <<4*2.5=10>>10 dollars.\n#### 10",
    },
)

_DEMO_MBPP = (
    {
        "task_id": 9001,
        "text": "Write a function to return the sum of the squares of a list of numbers.",
        "code": "def sum_squares(xs):\n    return sum(x * x for x in xs)",
        "test_setup_code": "",
        "test_list": ["assert sum_squares([1, 2, 3]) == 14", "assert sum_squares([]) == 0", "assert sum_squares([-2]) == 4"],
    },
    {
        "task_id": 9002,
        "text": "Write a function to check whether a string reads the same backwards.",
        "code": "def is_palindrome(s):\n    return s == s[::-1]",
        "test_setup_code": "",
        "test_list": [
            "assert is_palindrome('level') == True",
            "assert is_palindrome('abc') == False",
            "assert is_palindrome('') == True",
        ],
    },
)

_DEMO_HUMANEVAL = (
    {
        "task_id": "Demo/0",
        "prompt": 'def add_one(xs: list) -> list:\n    """Return a new list with every number increased by 1.\n'
        '    >>> add_one([1, 2])\n    [2, 3]\n    """\n',
        "canonical_solution": "    return [x + 1 for x in xs]\n",
        "test": "def check(candidate):\n    assert candidate([1, 2]) == [2, 3]\n    assert candidate([]) == []\n",
        "entry_point": "add_one",
    },
    {
        "task_id": "Demo/1",
        "prompt": 'def count_vowels(s: str) -> int:\n    """Count the letters a, e, i, o, u in s (lower case only).\n'
        '    >>> count_vowels(\'banana\')\n    3\n    """\n',
        "canonical_solution": "    return sum(c in 'aeiou' for c in s)\n",
        "test": "def check(candidate):\n    assert candidate('banana') == 3\n    assert candidate('xyz') == 0\n",
        "entry_point": "count_vowels",
    },
)


def demo_items(benchmark: str) -> list[Any]:
    """Two hand-written items of ``benchmark`` (one of :data:`BENCHMARKS`), in its format.

    For examples and fast API tests without the data files; they are *not* benchmark items.
    """
    if benchmark == "hotpotqa":
        return [hotpotqa_item(r) for r in _DEMO_HOTPOTQA]
    if benchmark == "math500":
        return [math_item(r) for r in _DEMO_MATH]
    if benchmark == "gsm8k":
        return [gsm8k_item(i, r) for i, r in enumerate(_DEMO_GSM8K)]
    if benchmark == "humaneval":
        return [humaneval_item(r) for r in _DEMO_HUMANEVAL]
    if benchmark == "mbpp":
        return [mbpp_item(r) for r in _DEMO_MBPP]
    raise LangPZError(
        f"demo_items: benchmark must be one of ['hotpotqa', 'math500', 'gsm8k', 'humaneval', 'mbpp'], got {benchmark!r}"
    )
