"""Scoring functions for the language tasks (HotpotQA, MATH, GSM8K).

Pure functions, no I/O. The conventions follow the public benchmarks, re-implemented here from
their descriptions (each dataset's official conventions):

* HotpotQA (Yang et al., 2018, official ``hotpot_evaluate_v1.py``): answers are normalised by
  lower-casing, removing punctuation, removing the articles *a/an/the* and collapsing white
  space; exact match and token F1 are computed on the normalised strings, and when either side
  normalises to ``yes``/``no``/``noanswer`` and the two differ the F1 is 0. Supporting facts are
  scored as precision / recall / F1 of ``(title, sentence index)`` pairs.
* MATH (Hendrycks et al., 2021): the final answer is the content of the last ``\\boxed{...}`` (or
  ``\\fbox{...}``), found by brace matching; equality is checked symbolically with the PyPI
  package ``math-verify``.
* GSM8K (Cobbe et al., 2021): the gold answer is the number after ``####`` with thousands
  separators removed; a prediction is compared by its last number, exactly as a rational value.
  A fraction ``a/b`` is one number, its value (``6/1`` is 6; ``1/6`` is not 6, nor is it read
  as its denominator).
"""

from __future__ import annotations

import re
import string
import threading
from collections import Counter
from collections.abc import Set as AbstractSet
from fractions import Fraction

from lang_pz.error import DependencyNotInstalled

__all__ = [
    "MAX_ANSWER_WORDS",
    "copies_problem",
    "exact_match",
    "gsm8k_equal",
    "gsm8k_final_answer",
    "gsm8k_gold",
    "gsm8k_number",
    "gsm8k_number_text",
    "last_boxed",
    "math_equal",
    "names_both_options",
    "normalize_answer",
    "prose_words",
    "supporting_fact_scores",
    "token_f1",
]

# ----------------------------------------------------------------------------- HotpotQA

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = frozenset(string.punctuation)
_SPECIAL = ("yes", "no", "noanswer")


def normalize_answer(s: str) -> str:
    """HotpotQA/SQuAD answer normalisation.

    In this order: lower-case, remove every ASCII punctuation character, remove the whole
    words ``a``, ``an`` and ``the``, and collapse runs of white space to single spaces (leading
    and trailing white space removed).
    """
    s = s.lower()
    s = "".join(ch for ch in s if ch not in _PUNCT)
    s = _ARTICLES.sub(" ", s)
    return " ".join(s.split())


def exact_match(prediction: str, gold: str) -> float:
    """1.0 if the normalised prediction equals the normalised gold answer, else 0.0."""
    return float(normalize_answer(prediction) == normalize_answer(gold))


def token_f1(prediction: str, gold: str) -> float:
    """Token-level F1 between the normalised answers (HotpotQA official convention).

    If either normalised answer is ``yes``, ``no`` or ``noanswer`` and they differ, the score is
    0 (no partial credit for a wrong yes/no). No common token also gives 0.
    """
    pred_n = normalize_answer(prediction)
    gold_n = normalize_answer(gold)
    if (pred_n in _SPECIAL or gold_n in _SPECIAL) and pred_n != gold_n:
        return 0.0
    pred_toks = pred_n.split()
    gold_toks = gold_n.split()
    common = Counter(pred_toks) & Counter(gold_toks)
    same = sum(common.values())
    if same == 0:
        return 0.0
    precision = same / len(pred_toks)
    recall = same / len(gold_toks)
    return 2 * precision * recall / (precision + recall)


_OPTIONS_RE = re.compile(r"([^,:;?]+?)\s+or\s+([^,:;?]+?)\s*\?\s*$")


def names_both_options(prediction: str, question: str) -> bool:
    """Whether ``prediction`` names both options of a question that ends in a choice ("Which dog
    is native to France, the Basset Bleu de Gascogne or the Bulldog?"): its normalised tokens hold
    a word of the option before the final *or* that the other lacks, and a word of the option
    after it that the question has not used before it.
    Such an answer chooses nothing, yet token F1 gives it most of the credit (0.89 here); answer
    F1 is 0 for it (:class:`~lang_pz.tasks.qa_env.QATaskEnv`). A question of another form is never
    matched (the rule fails open)."""
    m = _OPTIONS_RE.search(question)
    if m is None:
        return False
    before = set(normalize_answer(question[: m.start(2)]).split())
    first, second = set(normalize_answer(m.group(1)).split()), set(normalize_answer(m.group(2)).split())
    said = set(normalize_answer(prediction).split())
    return bool(said & (first - second)) and bool(said & (second - before))


def supporting_fact_scores(predicted: AbstractSet[tuple[str, int]], gold: AbstractSet[tuple[str, int]]) -> dict[str, float]:
    """Precision, recall and F1 of predicted supporting facts, each a ``(title, sent_id)`` pair.

    As in the official HotpotQA script: an empty prediction has precision 0 (when there is
    gold), and F1 is 0 when precision + recall is 0. Two empty sets score 1.0 on all three.
    """
    predicted = set(predicted)
    gold = set(gold)
    if not predicted and not gold:
        return {"precision": 1.0, "recall": 1.0, "f1": 1.0}
    tp = len(predicted & gold)
    precision = tp / len(predicted) if predicted else 0.0
    recall = tp / len(gold) if gold else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    return {"precision": precision, "recall": recall, "f1": f1}


# ----------------------------------------------------------------------------- MATH

_BOX_RE = re.compile(r"\\(?:boxed|fbox)\s*\{")


def last_boxed(text: str) -> str | None:
    """Content of the last ``\\boxed{...}`` or ``\\fbox{...}`` in ``text``, by brace matching.

    Nested braces are handled (``\\boxed{\\frac{1}{2}}`` gives ``\\frac{1}{2}``); escaped braces
    ``\\{`` / ``\\}`` are not counted. Returns ``None`` if there is no box, or if the last box is
    never closed. The content is stripped of surrounding white space.
    """
    starts = [m.end() for m in _BOX_RE.finditer(text)]
    for start in reversed(starts):
        depth = 1
        i = start
        while i < len(text):
            ch = text[i]
            if ch == "\\":
                i += 2  # skip the escaped character (\{, \}, \\ ...)
                continue
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
                if depth == 0:
                    return text[start:i].strip()
            i += 1
        return None  # the last box is unbalanced
    return None


#: The most words of prose a final answer may hold. MATH-500's gold answers hold at most one
#: (``\\text{east}``, ``5\\text{ cents}``); a box around a sentence (the question echoed, a
#: derivation) is not a final answer, though math-verify would read a number out of it.
MAX_ANSWER_WORDS = 2
_LATEX_NAME_RE = re.compile(r"\\(?:begin|end)\s*\{[^}]*\}|\\[A-Za-z]+")
_WORD_RE = re.compile(r"[A-Za-z]{2,}")


def prose_words(answer: str) -> int:
    """The words of prose in a LaTeX answer: runs of two or more letters, LaTeX command and
    environment names (``\\frac``, ``\\begin{pmatrix}``) not counted."""
    return len(_WORD_RE.findall(_LATEX_NAME_RE.sub(" ", answer)))


_MATH_SPAN_RE = re.compile(r"\$\$(.+?)\$\$|\$(.+?)\$|\\\[(.+?)\\\]|\\\((.+?)\\\)", re.DOTALL)


def _squashed(latex: str) -> str:
    return re.sub(r"\s+", "", latex).rstrip(".,")


def copies_problem(answer: str, problem: str, gold: str) -> bool:
    """Whether ``answer`` is one of ``problem``'s own formulas (a whole ``$...$``, ``$$...$$``,
    ``\\[...\\]`` or ``\\(...\\)``, white space and a closing full stop ignored) other than
    the ``gold`` answer as written. math-verify evaluates what it is given, so a box around the
    question's expression (``\\dbinom{31}{28}`` for 4495) would score without solving anything:
    copied from MATH-500's problems, such boxes scored on 29 of 500 items. A formula that is the
    gold answer itself (``\\sqrt{53}`` "in simplest radical form") is not refused."""
    mine = _squashed(answer)
    if not mine or mine == _squashed(gold):
        return False
    spans = (next(g for g in m.groups() if g is not None) for m in _MATH_SPAN_RE.finditer(problem))
    return any(_squashed(span) == mine for span in spans)


def _as_boxed_latex(answer: str) -> str:
    """Wrap a bare answer so that math-verify's LaTeX extractor reads all of it."""
    return "$\\boxed{" + answer + "}$"


def math_equal(prediction: str, gold: str, *, timeout_seconds: int | None = 5) -> bool:
    """Whether ``prediction`` equals the MATH ``gold`` answer, checked with ``math-verify``.

    Args:
        prediction: either a bare answer (``"\\frac{1}{2}"``) or a whole solution text, in which
            case the content of its last ``\\boxed{}`` is used (see :func:`last_boxed`).
        gold: the bare gold answer (the ``answer`` field of MATH-500).
        timeout_seconds: per-step time limit passed to ``math_verify.parse`` and
            ``math_verify.verify``. Those limits are implemented with ``signal.alarm``, which
            only works in the main thread of the main interpreter; from any other thread this
            function therefore passes ``None`` (no time limit, as math-verify recommends for
            threaded use) and the caller is responsible for bounding the time (e.g. by running
            the check in a worker process).

    Returns:
        ``True`` if math-verify finds the two answers equal; ``False`` otherwise, including when
        either side cannot be parsed, the prediction is empty, or it holds more than
        :data:`MAX_ANSWER_WORDS` words of prose (:func:`prose_words`: a box around the question
        or a sentence is not a final answer, though math-verify reads a number out of it).
    """
    try:
        import math_verify
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise DependencyNotInstalled("math_equal needs the package math-verify: pip install math-verify") from e
    boxed = last_boxed(prediction)
    pred = (boxed if boxed is not None else prediction.strip()).rstrip(" .")  # a sentence's full stop
    if not pred or not gold.strip() or prose_words(pred) > MAX_ANSWER_WORDS:
        return False
    if threading.current_thread() is not threading.main_thread():
        timeout_seconds = None
    gold_parsed = math_verify.parse(_as_boxed_latex(gold.strip()), parsing_timeout=timeout_seconds)
    pred_parsed = math_verify.parse(_as_boxed_latex(pred), parsing_timeout=timeout_seconds)
    if not gold_parsed or not pred_parsed:
        return False
    return bool(math_verify.verify(gold_parsed, pred_parsed, timeout_seconds=timeout_seconds))


# ----------------------------------------------------------------------------- GSM8K

_PLAIN = r"-?\d[\d,]*(?:\.\d+)?|-?\.\d+"
#: A number, optionally a fraction ``a/b`` of two (spaces allowed around the slash).
_NUMBER_RE = re.compile(rf"(?:{_PLAIN})(?:\s*/\s*(?:{_PLAIN}))?")


def gsm8k_gold(answer_field: str) -> str:
    """The gold number of a GSM8K ``answer`` field: the text after ``####``, commas removed.

    Raises:
        ValueError: if the field has no ``####`` marker.
    """
    if "####" not in answer_field:
        raise ValueError(f"GSM8K answer has no '####' marker: {answer_field[-80:]!r}")
    return answer_field.rsplit("####", 1)[1].strip().replace(",", "")


def gsm8k_number_text(text: str) -> str | None:
    """The last number in ``text`` as written, commas and spaces removed (``"1,234"`` -> ``"1234"``,
    ``"6 / 1"`` -> ``"6/1"``), or ``None``; :func:`gsm8k_number` is its value."""
    found = _NUMBER_RE.findall(text)
    return re.sub(r"[,\s]", "", found[-1]) if found else None


def gsm8k_number(text: str) -> Fraction | None:
    """The value of the last number in ``text`` (commas removed, a trailing ``.`` ignored; a
    fraction ``a/b`` is ``a`` divided by ``b``), exactly, or None (also for a zero denominator)."""
    found = gsm8k_number_text(text)
    if found is None:
        return None
    num, _, den = found.partition("/")
    try:
        return Fraction(num) / Fraction(den) if den else Fraction(num)
    except (ValueError, ZeroDivisionError):
        return None


def gsm8k_final_answer(text: str) -> str | None:
    """The final answer of a GSM8K-formatted reply: the one number (as written, commas removed) on
    the line after its last ``####``; ``None`` when there is no marker, or that line holds no number
    or several (``#### 1, 600``, ``#### 6e2``, a sentence with the question's numbers: which one is
    the answer is not said)."""
    if "####" not in text:
        return None
    line = text.rsplit("####", 1)[1].strip().split("\n", 1)[0]
    if len(_NUMBER_RE.findall(line)) != 1:
        return None
    return gsm8k_number_text(line)


def gsm8k_equal(prediction_text: str, gold: str) -> bool:
    """Whether the last number in ``prediction_text`` equals the GSM8K ``gold`` number.

    ``gold`` is the output of :func:`gsm8k_gold`. The comparison is exact on rational values, so
    ``"18"``, ``"18.0"``, ``"18.00"`` and ``"36/2"`` all equal ``"18"`` (``"1/18"`` does not). If the prediction contains ``####``
    (a GSM8K-formatted solution), its answer is :func:`gsm8k_final_answer`'s, the rule the task
    env grades by: one number on the line after the last marker (``"#### 1, 600"`` equals nothing).
    """
    if "####" in prediction_text:
        prediction_text = gsm8k_final_answer(prediction_text) or ""
    pred = gsm8k_number(prediction_text)
    gold_n = gsm8k_number(gold)
    return pred is not None and gold_n is not None and pred == gold_n
