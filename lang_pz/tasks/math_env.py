"""Math word problems (MATH-500, GSM8K) as a team of a solver and a verifier.

==================  ==============================================================================
Agents              ``solver``, ``verifier``; the order is the ``turns`` argument, default
                    ``("solver", "verifier")``; e.g. ``("solver", "verifier", "solver")`` lets the
                    solver answer the verifier, ``("solver",)`` is the plain benchmark
API                 AEC; observation ``{"text": str}``, action ``str`` (free text, at most 8,192
                    characters: more than twice MATH-500's longest worked solution, 3,356)
solver sees         the problem and the transcript (the verifier's replies)
solver delivers     MATH: a final answer in ``\\boxed{...}`` (the last box, by brace matching);
                    GSM8K: the one number on the line after ``####``. Fallback: no answer
                    (scores 0): a reply without its final answer in the stated form is not
                    graded, so echoing the problem (whose last number or words may be the answer)
                    cannot score; neither can a box of prose, a box around one of the problem's
                    own formulas (math-verify would evaluate it), or a ``####`` line of several
                    numbers (:mod:`lang_pz.tasks.scoring`)
reply format        each role's reply as a grammar and a regex (:meth:`MathTaskEnv.reply_format`)
verifier sees       the problem, the transcript (the solver's reply) and the extracted answer
verifier delivers   a confirmation (a reply starting with *correct*, *yes*, *agree*, *confirmed*
                    or *verified*) keeps the answer; a new answer (as the solver's: a box for
                    MATH, ``####`` for GSM8K) replaces it. Fallback: keep the answer
Reward              shared, at the end: 1.0 if the team's final answer equals the gold answer
                    (MATH: ``math-verify`` symbolic equality; GSM8K: exact rational equality of
                    the numbers), else 0.0
info["score"]       ``correct``, ``answer``, ``gold_answer``, ``solver_answer``,
                    ``solver_correct`` (the solver's last own answer), ``changed_by_verifier``,
                    ``check`` (``"ok"``, ``"too_long"``, ``"timeout"``, ``"no_answer"`` or
                    ``"copied_problem"``)
==================  ==============================================================================

Bounded scoring: every MATH check runs in a worker interpreter, cut after ``check_timeout_s``
seconds of its CPU time (hostile short answers such as ``2^{2^{30}}`` run for minutes in sympy);
see :mod:`lang_pz.tasks.math_check`. The worker never imports the caller's ``__main__``, so a
plain script without an ``if __name__ == "__main__":`` guard works. Answers longer than
:data:`MAX_ANSWER_CHARS` are not parsed at all (they score 0). GSM8K checks are plain rational
arithmetic and need no bound.

Sources: MATH (Hendrycks et al., 2021, section 3: the answer is the last ``\\boxed{}``,
checked for equivalence), MATH-500 (Lightman et al., 2023, "Let's Verify Step by Step"),
GSM8K (Cobbe et al., 2021, section 2: the final answer follows ``####``); the solver/verifier
split follows the verifier idea of Cobbe et al., section 4, done here by an agent.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from lang_pz.envs.checks import check_api, check_choice, check_int, check_number
from lang_pz.error import ActionParseError, InvalidKwargError
from lang_pz.registration import Api
from lang_pz.tasks.base import TaskEnv, cut, visible_text
from lang_pz.tasks.datasets import GSM8KItem, load_items
from lang_pz.tasks.math_check import MAX_ANSWER_CHARS, bounded_math_equal
from lang_pz.tasks.scoring import copies_problem, gsm8k_equal, gsm8k_final_answer, gsm8k_number, last_boxed
from lang_pz.text import replies
from lang_pz.text.replies import ReplyFormat

__all__ = ["MAX_ANSWER_CHARS", "MathTaskEnv", "bounded_math_equal", "make_gsm8k", "make_math500"]

_CONFIRM = re.compile(r"^\W*(correct|yes|agreed?|confirm(?:ed)?|verified)\b", re.IGNORECASE)


class MathTaskEnv(TaskEnv[Any]):
    """Solver and verifier on MATH-500 or GSM8K items (see the module docstring).

    The keyword arguments not listed here are :class:`~lang_pz.tasks.base.TaskEnv`'s.

    Args:
        items: :class:`MathItem` (MATH) or :class:`GSM8KItem` (GSM8K) objects, one kind.
        check_timeout_s: bound on one MATH answer check (> 0).
    """

    metadata = {"name": "math_v0", "render_modes": ["human", "ansi"], "is_parallelizable": False}
    ROLES = {"solver": "", "verifier": ""}
    DEFAULT_TURNS = ("solver", "verifier")
    ACTION_MAX_LENGTH = 8192
    REQUIRED_ROLES = ("solver",)

    def __init__(self, items: Sequence[Any], *, check_timeout_s: float = 5.0, **kwargs: Any) -> None:
        check_number("check_timeout_s", check_timeout_s)
        if not check_timeout_s > 0:
            raise InvalidKwargError(f"check_timeout_s must be > 0 seconds, got {check_timeout_s!r}")
        self.gsm8k = bool(items) and isinstance(items[0], GSM8KItem)
        self.check_timeout_s = float(check_timeout_s)
        fmt = "end with '#### <number>'" if self.gsm8k else "put the final answer in \\boxed{...}"
        self.ROLES = {
            "solver": f"Reply with a short solution; {fmt}.",
            "verifier": f"Check the solver's answer. Reply 'Correct' if it is right, else {fmt}.",
        }
        super().__init__(items, **kwargs)

    def reply_format(self, role: str) -> ReplyFormat:
        """What a reply of ``role`` that parses looks like (see :mod:`lang_pz.text.replies`):
        GSM8K ``#### <integer>``, MATH ``\\boxed{<answer of at most 40 characters>}``; the
        verifier may also reply ``Correct``."""
        if self.gsm8k:
            answer = replies.sequence(
                replies.literal("#### "), replies.repeat(replies.literal("-"), 0, 1), replies.digits(1, 12)
            )
            example = "#### 42"
        else:
            answer = replies.sequence(
                replies.literal("\\boxed{"),
                replies.chars('"{}' + replies.WHITESPACE, 1, 1),
                replies.chars('"{}', 0, 39),
                replies.literal("}"),
            )
            example = "\\boxed{42}"
        if role == "verifier":
            answer = replies.either(replies.literal("Correct"), answer)
        return ReplyFormat.of(answer, example)

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        super().reset(seed=seed, options=options)
        for agent in self.agents:
            self.infos[agent][replies.INFO_KEY] = self.reply_format(agent).as_info()

    def _task_id(self) -> str:
        return f"gsm8k/{self.item.index}" if self.gsm8k else self.item.unique_id

    def _task_text(self, item: Any, role: str) -> str:
        problem = item.question if self.gsm8k else item.problem
        return visible_text(f"Problem: {problem.strip()}")

    def _start(self) -> None:
        self.answer: str | None = None
        self.solver_answer: str | None = None

    def _extract(self, text: str) -> str | None:
        if self.gsm8k:
            found = gsm8k_final_answer(text)  # the exact digits (a fraction as a/b), as scored
            return found if found is not None and gsm8k_number(found) is not None else None
        return last_boxed(text) or None

    def _parse(self, role: str, text: str) -> Any:
        found = self._extract(text)
        if role == "verifier":
            if found is not None:
                return {"verdict": "corrected", "answer": found}
            if _CONFIRM.match(text):
                return {"verdict": "confirmed", "answer": self.answer}
            raise ActionParseError(text, "neither a confirmation ('Correct') nor a new answer")
        if found is None:
            need = "'#### <number>'" if self.gsm8k else "a \\boxed{...} answer"
            raise ActionParseError(text, f"no final answer: write {need}")
        return found

    def _fallback(self, role: str, text: str) -> Any:
        if role == "verifier":
            return {"verdict": "kept (no verdict)", "answer": self.answer}
        return None

    def _apply(self, role: str, value: Any) -> list[str]:
        if role == "solver":
            self.answer = self.solver_answer = value
            shown = "none" if value is None else cut(value, 200)
            return [f"The solver's final answer: {shown}"]
        self.answer = value["answer"]
        return []

    def _is_correct(self, answer: str | None) -> tuple[bool, str]:
        if answer is None:
            return False, "no_answer"
        if self.gsm8k:
            return gsm8k_equal(answer, self.item.answer), "ok"
        if copies_problem(answer, self.item.problem, self.item.answer):
            return False, "copied_problem"
        return bounded_math_equal(answer, self.item.answer, self.check_timeout_s)

    def _score(self) -> tuple[float, dict[str, Any]]:
        correct, check = self._is_correct(self.answer)
        if self.solver_answer == self.answer:
            solver_correct = correct
        else:
            solver_correct, _ = self._is_correct(self.solver_answer)
        return float(correct), {
            "correct": correct,
            "answer": self.answer,
            "gold_answer": self.item.answer,
            "solver_answer": self.solver_answer,
            "solver_correct": solver_correct,
            "changed_by_verifier": self.answer != self.solver_answer,
            "check": check,
        }

    def _describe(self) -> list[str]:
        lines = [self._task_text(self.item, "solver")]
        if self.answer is not None:
            lines.append(f"Current answer: {cut(visible_text(self.answer), 200)}")
        if self.score is not None:
            lines.append(f"Gold answer: {visible_text(self.item.answer)}")
        return lines


def _make(
    benchmark: str,
    env_id: str,
    api: Api,
    turns: Sequence[str],
    split: str,
    split_seed: int,
    index: int | None,
    source: str,
    data_dir: str | None,
    check_timeout_s: float,
    strict: bool,
    max_message_chars: int,
    render_mode: str | None,
) -> MathTaskEnv:
    check_api(env_id, api, ("aec",))
    check_int("split_seed", split_seed, 0)
    check_choice("source", source, ("local", "hub", "demo"))
    items = load_items(benchmark, split=split, source=source, data_dir=data_dir, split_seed=split_seed)
    return MathTaskEnv(
        items,
        turns=turns,
        index=index,
        check_timeout_s=check_timeout_s,
        strict=strict,
        max_message_chars=max_message_chars,
        render_mode=render_mode,
    )


def make_math500(
    api: Api = "aec",
    *,
    turns: Sequence[str] = MathTaskEnv.DEFAULT_TURNS,
    split: str = "all",
    split_seed: int = 0,
    index: int | None = None,
    source: str = "local",
    data_dir: str | None = None,
    check_timeout_s: float = 5.0,
    strict: bool = False,
    max_message_chars: int = 1500,
    render_mode: str | None = None,
) -> MathTaskEnv:
    """MATH-500 as a solver/verifier team.

    Args:
        api: ``"aec"`` only.
        turns: the topology (see the module docstring).
        split: ``"all"`` (500 problems) or the phases ``"train"`` / ``"validation"`` /
            ``"test"``: disjoint 60/20/20 parts of the 500, by a hash of ``unique_id``
            (:func:`lang_pz.tasks.datasets.split`; 300 / 100 / 100 problems).
        split_seed: seed of that partition (0: the documented one).
        index: always play this item of the split (``None``: seed ``s`` plays position
            ``s % n`` of a fixed permutation, so consecutive seeds play distinct items).
        source: ``"local"`` (``<data_dir>/math500/test.jsonl``), ``"hub"`` or ``"demo"``.
        data_dir: the data folder (default ``$LANG_PZ_DATA_DIR``).
        check_timeout_s: bound on one answer check.
        strict: see :class:`MathTaskEnv`.
        max_message_chars: see :class:`MathTaskEnv`.
        render_mode: see :class:`MathTaskEnv`.
    """
    return _make(
        "math500",
        "tasks/math500-v0",
        api,
        turns,
        split,
        split_seed,
        index,
        source,
        data_dir,
        check_timeout_s,
        strict,
        max_message_chars,
        render_mode,
    )


def make_gsm8k(
    api: Api = "aec",
    *,
    turns: Sequence[str] = MathTaskEnv.DEFAULT_TURNS,
    split: str = "all",
    split_seed: int = 0,
    index: int | None = None,
    source: str = "local",
    data_dir: str | None = None,
    strict: bool = False,
    max_message_chars: int = 1500,
    render_mode: str | None = None,
) -> MathTaskEnv:
    """GSM8K (the 1319 test problems) as a solver/verifier team.

    Args: as :func:`make_math500` (``<data_dir>/gsm8k/test.jsonl``; no answer-check timeout
    is needed: GSM8K answers are compared as exact rationals). The phases ``"train"`` /
    ``"validation"`` / ``"test"`` are disjoint 60/20/20 parts of the 1,319 test problems, by a
    hash of the question text (791 / 264 / 264): GSM8K's own 7,473-problem train split is not
    among the data files, so ``"test"`` is a fifth of the official test set (not comparable
    with published full-test-set numbers).
    """
    return _make(
        "gsm8k",
        "tasks/gsm8k-v0",
        api,
        turns,
        split,
        split_seed,
        index,
        source,
        data_dir,
        5.0,
        strict,
        max_message_chars,
        render_mode,
    )
