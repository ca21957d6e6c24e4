"""The benchmark items (small frozen dataclasses) and the converters from each benchmark's
public row layout (the Hugging Face datasets' columns), shared by the file, hub and demo loaders."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = [
    "CodeItem",
    "GSM8KItem",
    "HotpotQAItem",
    "MathItem",
    "gsm8k_item",
    "hotpotqa_item",
    "humaneval_item",
    "math_item",
    "mbpp_item",
]


@dataclass(frozen=True)
class HotpotQAItem:
    """One HotpotQA (distractor) question.

    Attributes:
        id: the HotpotQA ``_id``.
        question: the question text.
        answer: the gold answer (a span, or ``yes``/``no``).
        type: ``bridge`` or ``comparison``.
        level: ``easy``, ``medium`` or ``hard``.
        supporting_facts: gold ``(title, sentence index)`` pairs, in file order.
        context: the 10 paragraphs as ``(title, (sentence, ...))``; sentence indices of
            ``supporting_facts`` index into these sentence tuples.
    """

    id: str
    question: str
    answer: str
    type: str
    level: str
    supporting_facts: tuple[tuple[str, int], ...]
    context: tuple[tuple[str, tuple[str, ...]], ...]


@dataclass(frozen=True)
class MathItem:
    """One MATH-500 problem: ``problem``, worked ``solution`` (ends with a ``\\boxed{}``),
    bare gold ``answer`` (LaTeX), ``subject``, ``level`` (1-5) and ``unique_id`` (source path)."""

    unique_id: str
    problem: str
    solution: str
    answer: str
    subject: str
    level: int


@dataclass(frozen=True)
class GSM8KItem:
    """One GSM8K problem: ``question``, the worked ``solution`` (the raw ``answer`` field, ending
    in ``#### <number>``), and ``answer``, the gold number as a string (commas removed)."""

    index: int
    question: str
    solution: str
    answer: str


@dataclass(frozen=True)
class CodeItem:
    """One code-generation task (MBPP or HumanEval).

    Attributes:
        task_id: ``"MBPP/<n>"`` or ``"HumanEval/<n>"``.
        prompt: the task statement (MBPP ``text``/``prompt``; HumanEval: the signature + docstring).
        canonical_solution: reference code (MBPP ``code``; HumanEval ``prompt`` +
            ``canonical_solution``, i.e. a complete function).
        tests: MBPP: the assert statements of ``test_list``; HumanEval: one string, the
            ``check`` function source followed by ``check(<entry_point>)``.
        test_setup: code to run before the tests (MBPP ``test_setup_code``/``test_imports``).
        entry_point: name of the function under test (HumanEval; ``""`` for MBPP).
    """

    task_id: str
    prompt: str
    canonical_solution: str
    tests: tuple[str, ...]
    test_setup: str = ""
    entry_point: str = ""


def hotpotqa_item(r: dict[str, Any]) -> HotpotQAItem:
    """A :class:`HotpotQAItem` from one row in the Hugging Face ``hotpot_qa`` layout."""
    sf = r["supporting_facts"]
    ctx = r["context"]
    return HotpotQAItem(
        id=str(r.get("id", r.get("_id", ""))),
        question=r["question"],
        answer=r["answer"],
        type=r.get("type", ""),
        level=r.get("level", ""),
        supporting_facts=tuple((str(t), int(i)) for t, i in zip(sf["title"], sf["sent_id"])),
        context=tuple((str(t), tuple(s)) for t, s in zip(ctx["title"], ctx["sentences"])),
    )


def math_item(r: dict[str, Any]) -> MathItem:
    """A :class:`MathItem` from one row in the ``HuggingFaceH4/MATH-500`` layout."""
    return MathItem(
        unique_id=r["unique_id"],
        problem=r["problem"],
        solution=r["solution"],
        answer=r["answer"],
        subject=r.get("subject", ""),
        level=int(r.get("level", 0)),
    )


def gsm8k_item(index: int, r: dict[str, Any]) -> GSM8KItem:
    """A :class:`GSM8KItem` from one row (``question``, ``answer``) of ``openai/gsm8k``."""
    from lang_pz.tasks.scoring import gsm8k_gold

    return GSM8KItem(index=index, question=r["question"], solution=r["answer"], answer=gsm8k_gold(r["answer"]))


def mbpp_item(r: dict[str, Any]) -> CodeItem:
    """A :class:`CodeItem` from one MBPP row (full or sanitized layout)."""
    setup = r.get("test_setup_code")
    if setup is None:
        setup = "\n".join(r.get("test_imports") or [])
    return CodeItem(
        task_id=f"MBPP/{r['task_id']}",
        prompt=r.get("text", r.get("prompt", "")),
        canonical_solution=r["code"],
        tests=tuple(r["test_list"]),
        test_setup=setup,
    )


def humaneval_item(r: dict[str, Any]) -> CodeItem:
    """A :class:`CodeItem` from one HumanEval row (``task_id, prompt, canonical_solution,
    test, entry_point``)."""
    return CodeItem(
        task_id=r["task_id"],
        prompt=r["prompt"],
        canonical_solution=r["prompt"] + r["canonical_solution"],
        tests=(r["test"] + f"\n\ncheck({r['entry_point']})\n",),
        entry_point=r["entry_point"],
    )
