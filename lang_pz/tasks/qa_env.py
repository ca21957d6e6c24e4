"""Multi-hop question answering (HotpotQA, distractor setting) as a finder/answerer team.

==================  ==============================================================================
Agents              ``finder`` (names the evidence), ``answerer``; the order is the ``turns``
                    argument, default ``("finder", "answerer")``; ``("answerer",)`` is the plain
                    benchmark (the answerer then reads the paragraphs itself)
API                 AEC; observation ``{"text": str}``, action ``str`` (free text, at most 4,096
                    characters; the longest gold answer has 104)
finder sees         the question and the context paragraphs, each sentence labelled ``[p.s]``
                    (paragraph ``p`` and sentence ``s``, both from 1), and the transcript
finder delivers     sentence labels, e.g. ``Evidence: 2.1, 5.3`` (every ``p.s`` in the reply that
                    exists in the context). The env posts the named sentences. Fallback: none
answerer sees       the question and the transcript (the finder's reply and the named sentences);
                    the paragraphs too when no finder speaks before it, or with
                    ``answerer_sees_context=True``
answerer delivers   the text after the last ``Answer:`` (to the end of that line). Fallback: the
                    whole reply is taken as the answer
reply format        each role's reply as a grammar and a regex (:meth:`QATaskEnv.reply_format`):
                    a policy's backend can constrain decoding to it
Reward              shared, at the end: the answer's token F1 against the gold answer, with the
                    official HotpotQA normalisation (and F1 0 for a yes/no mismatch, and for an
                    answer naming both options of an "X or Y?" question:
                    :func:`~lang_pz.tasks.scoring.names_both_options`; naming both scored mean F1
                    0.116 on the test split without reading a paragraph, 0.04 after)
info["score"]       ``f1``, ``em``, ``answer``, ``gold_answer``, ``names_both_options``; with a
                    finder: ``sp_precision``,
                    ``sp_recall``, ``sp_f1`` of the named sentences against the gold supporting
                    facts, ``evidence`` and ``gold_evidence`` (as ``p.s`` labels)
==================  ==============================================================================

Observations and actions are Unicode text (:class:`lang_pz.spaces.UnicodeText`): names such as
'Jānis Strazdiņš' are shown and can be written back exactly (only control characters and
characters beyond the Basic Multilingual Plane show as ``?``, see
:func:`~lang_pz.tasks.base.visible_text`); answers are scored on the raw reply text. ``max_paragraphs`` shortens the context for small
models: the gold paragraphs are kept with the first distractors, in the original order (this
makes the task easier; the default keeps all ten paragraphs). Sources: HotpotQA (Yang et al.,
2018, sections 2 and 5: distractor setting, answer EM/F1 and supporting-fact EM/F1).
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from typing import Any

from lang_pz.envs.checks import check_api, check_bool, check_choice, check_int
from lang_pz.error import ActionParseError, InvalidKwargError
from lang_pz.registration import Api
from lang_pz.tasks.base import TaskEnv, cut, visible_text
from lang_pz.tasks.datasets import HotpotQAItem, load_items
from lang_pz.tasks.scoring import exact_match, names_both_options, supporting_fact_scores, token_f1
from lang_pz.text import replies
from lang_pz.text.replies import ReplyFormat

__all__ = ["QATaskEnv", "make_hotpotqa"]

_LABEL = re.compile(r"(?<![\d.])(\d{1,2})\.(\d{1,3})(?![\d])")
_ANSWER = re.compile(r"answer\s*:\s*(.*)", re.IGNORECASE)


class QATaskEnv(TaskEnv[HotpotQAItem]):
    """Finder and answerer on HotpotQA items (see the module docstring).

    The keyword arguments not listed here are :class:`~lang_pz.tasks.base.TaskEnv`'s.

    Args:
        items: the questions.
        max_paragraphs: keep at most this many context paragraphs (gold ones first chosen),
            ``None`` for all.
        answerer_sees_context: show the paragraphs to the answerer even after a finder.
    """

    metadata = {"name": "hotpotqa_v0", "render_modes": ["human", "ansi"], "is_parallelizable": False}
    ROLES = {
        "finder": "Reply with the labels of the sentences that answer the question, e.g. 'Evidence: 2.1, 5.3'.",
        "answerer": "Reply with 'Answer: ' and the short answer (a name, a number, yes or no).",
    }
    DEFAULT_TURNS = ("finder", "answerer")
    REQUIRED_ROLES = ("answerer",)

    def __init__(
        self,
        items: Sequence[HotpotQAItem],
        *,
        max_paragraphs: int | None = None,
        answerer_sees_context: bool = False,
        **kwargs: Any,
    ) -> None:
        check_int("max_paragraphs", max_paragraphs, 2, optional=True)
        check_bool("answerer_sees_context", answerer_sees_context)
        self.max_paragraphs = max_paragraphs
        self.answerer_sees_context = answerer_sees_context
        self._views: dict[str, tuple[list[tuple[str, tuple[str, ...]]], str]] = {}
        turns = tuple(kwargs.get("turns") or self.DEFAULT_TURNS)
        first_answer = turns.index("answerer") if "answerer" in turns else 0
        self._answerer_reads = answerer_sees_context or "finder" not in turns[:first_answer]
        super().__init__(items, **kwargs)

    # -- the context as shown -----------------------------------------------------------------------

    def _view(self, item: HotpotQAItem) -> tuple[list[tuple[str, tuple[str, ...]]], str]:
        """``(paragraphs shown, their text)``; paragraphs are ``(title, sentences)``."""
        if item.id not in self._views:
            paragraphs = list(item.context)
            if self.max_paragraphs is not None and len(paragraphs) > self.max_paragraphs:
                gold = {t for t, _ in item.supporting_facts}
                keep = {i for i, (t, _) in enumerate(paragraphs) if t in gold}
                for i in range(len(paragraphs)):
                    if len(keep) >= self.max_paragraphs:
                        break
                    keep.add(i)
                paragraphs = [p for i, p in enumerate(paragraphs) if i in keep]
            lines = []
            for p, (title, sentences) in enumerate(paragraphs, 1):
                lines.append(f"({p}) {title}:")
                lines.extend(f" [{p}.{s}] {sent.strip()}" for s, sent in enumerate(sentences, 1))
            self._views[item.id] = (paragraphs, visible_text("\n".join(lines)))
        return self._views[item.id]

    def _task_text(self, item: HotpotQAItem, role: str) -> str:
        question = visible_text(f"Question: {item.question.strip()}")
        if role == "finder" or self._answerer_reads:
            return f"{question}\nParagraphs:\n{self._view(item)[1]}"
        return question

    def _label(self, title: str, sent_id: int) -> str | None:
        for p, (t, sentences) in enumerate(self._view(self.item)[0], 1):
            if t == title and 0 <= sent_id < len(sentences):
                return f"{p}.{sent_id + 1}"
        return None

    # -- the reply format (info["reply_format"]) --------------------------------------------------------

    def reply_format(self, role: str) -> ReplyFormat:
        """What a reply of ``role`` that parses looks like (see :mod:`lang_pz.text.replies`): the
        finder's ``Evidence:`` and one to four labels of the shown sentences, the answerer's
        ``Answer:`` and a short answer (at most 60 characters)."""
        if role == "finder":
            labels = [
                f"{p}.{s}"
                for p, (_, sentences) in enumerate(self._view(self.item)[0], 1)
                for s in range(1, len(sentences) + 1)
            ]
            label = replies.one_of(labels)
            more = replies.repeat(replies.sequence(replies.literal(", "), label), 0, 3)
            reply = replies.sequence(replies.literal("Evidence: "), label, more)
            return ReplyFormat.of(reply, f"Evidence: {labels[0]}")
        first = replies.chars('"' + replies.WHITESPACE, 1, 1)  # the answer is not blank
        answer = replies.sequence(replies.literal("Answer: "), first, replies.chars('"', 0, 59))
        return ReplyFormat.of(answer, "Answer: yes")

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        super().reset(seed=seed, options=options)
        for agent in self.agents:
            self.infos[agent][replies.INFO_KEY] = self.reply_format(agent).as_info()

    # -- turns ----------------------------------------------------------------------------------------

    def _start(self) -> None:
        self.evidence: list[tuple[str, int]] | None = None
        self.answer: str | None = None

    def _task_id(self) -> str:
        return self.item.id

    def _parse(self, role: str, text: str) -> Any:
        if role == "finder":
            paragraphs = self._view(self.item)[0]
            found: list[tuple[str, int]] = []
            for p, s in _LABEL.findall(text):
                p_i, s_i = int(p), int(s)
                if 1 <= p_i <= len(paragraphs) and 1 <= s_i <= len(paragraphs[p_i - 1][1]):
                    fact = (paragraphs[p_i - 1][0], s_i - 1)
                    if fact not in found:
                        found.append(fact)
            if not found:
                raise ActionParseError(text, "names no sentence label of the context (e.g. 'Evidence: 2.1, 5.3')")
            return found
        matches = _ANSWER.findall(text)
        answer = matches[-1].strip() if matches else ""
        if not answer:
            raise ActionParseError(text, "no 'Answer: ...' line")
        return answer

    def _fallback(self, role: str, text: str) -> Any:
        return [] if role == "finder" else " ".join(text.split())

    def _jsonable(self, role: str, value: Any) -> Any:
        return [list(f) for f in value] if role == "finder" else value

    def _apply(self, role: str, value: Any) -> list[str]:
        if role == "answerer":
            self.answer = value
            return []
        self.evidence = value
        if not value:
            return ["The finder named no sentence."]
        sentences = dict(self.item.context)
        lines = ["Evidence sentences:"]
        for title, s in value:
            lines.append(f"[{self._label(title, s)}] {title}: {sentences[title][s].strip()}")
        return [cut("\n".join(lines), self.max_message_chars)]

    def _score(self) -> tuple[float, dict[str, Any]]:
        answer = self.answer or ""
        hedged = names_both_options(answer, self.item.question)  # chooses nothing: no credit
        f1 = 0.0 if hedged else token_f1(answer, self.item.answer)
        score: dict[str, Any] = {
            "f1": f1,
            "em": 0.0 if hedged else exact_match(answer, self.item.answer),
            "names_both_options": hedged,
            "answer": answer,
            "gold_answer": self.item.answer,
        }
        if "finder" in self.turns:
            predicted = set(self.evidence or [])
            sp = supporting_fact_scores(predicted, set(self.item.supporting_facts))
            score.update(
                sp_precision=sp["precision"],
                sp_recall=sp["recall"],
                sp_f1=sp["f1"],
                evidence=[self._label(t, s) for t, s in self.evidence or []],
                gold_evidence=[self._label(t, s) for t, s in self.item.supporting_facts],
            )
        return f1, score

    def gold_labels(self) -> list[str]:
        """The gold supporting facts of the current item as ``p.s`` labels (for tests/demos).

        A fact whose sentence is not shown (a context shorter than the fact index, as happens in
        a few HotpotQA items) has no label and is left out."""
        labels = [self._label(t, s) for t, s in self.item.supporting_facts]
        return [x for x in labels if x is not None]

    def _describe(self) -> list[str]:
        lines = [visible_text(f"Question: {self.item.question.strip()}")]
        if self.evidence is not None:
            lines.append(f"Named evidence: {[self._label(t, s) for t, s in self.evidence]}")
        if self.answer is not None:
            lines.append(visible_text(f"Current answer: {cut(self.answer, 200)}"))
        if self.score is not None:
            lines.append(visible_text(f"Gold answer: {self.item.answer}; gold evidence: {self.gold_labels()}"))
        return lines


def make_hotpotqa(
    api: Api = "aec",
    *,
    turns: Sequence[str] = QATaskEnv.DEFAULT_TURNS,
    split: str = "dev",
    split_seed: int = 0,
    index: int | None = None,
    source: str = "local",
    data_dir: str | None = None,
    path: str | None = None,
    max_paragraphs: int | None = None,
    answerer_sees_context: bool = False,
    strict: bool = False,
    max_message_chars: int = 1500,
    render_mode: str | None = None,
) -> QATaskEnv:
    """HotpotQA (distractor) as a finder/answerer team.

    Args:
        api: ``"aec"`` only.
        turns: the topology (see the module docstring).
        split: the phases ``"train"`` (``<data_dir>/hotpotqa/train_300.jsonl``),
            ``"validation"`` and ``"test"`` (the two disjoint halves of ``dev_300.jsonl``, by a
            hash of the question id: 150 each); ``"dev"`` (the whole dev file), or the name of
            any other file of Hugging Face ``hotpot_qa`` rows in ``<data_dir>/hotpotqa/`` (with
            or without ``.jsonl``). With ``source="hub"``: ``train`` is the hub's train split,
            ``dev`` its ``validation`` (halved for the phases), any other name a hub split
            expression. With ``path``: the phases are a 60/20/20 partition of that file.
        split_seed: seed of the partitions (0: the documented one).
        index: always play this item (``None``: seed ``s`` plays position ``s % n`` of a fixed
            permutation, so consecutive seeds play distinct items).
        source: ``"local"``, ``"hub"`` or ``"demo"`` (2 toy items).
        data_dir: the data folder (default ``$LANG_PZ_DATA_DIR``).
        path: read this JSONL file of Hugging Face ``hotpot_qa`` rows instead (``split`` and
            ``data_dir`` are then not used).
        max_paragraphs: see :class:`QATaskEnv`.
        answerer_sees_context: see :class:`QATaskEnv`.
        strict: see :class:`~lang_pz.tasks.base.TaskEnv`.
        max_message_chars: see :class:`~lang_pz.tasks.base.TaskEnv`.
        render_mode: see :class:`~lang_pz.tasks.base.TaskEnv`.
    """
    check_api("tasks/hotpotqa-v0", api, ("aec",))
    if not isinstance(split, str) or not split:
        raise InvalidKwargError(f"split must be a non-empty str ('dev', 'train' or a file name), got {split!r}")
    check_int("split_seed", split_seed, 0)
    check_choice("source", source, ("local", "hub", "demo"))
    if path is not None and not isinstance(path, (str, os.PathLike)):
        raise InvalidKwargError(f"path must be None or a file path, got {path!r}")
    items = load_items("hotpotqa", split=split, source=source, data_dir=data_dir, path=path, split_seed=split_seed)
    return QATaskEnv(
        items,
        turns=turns,
        index=index,
        max_paragraphs=max_paragraphs,
        answerer_sees_context=answerer_sees_context,
        strict=strict,
        max_message_chars=max_message_chars,
        render_mode=render_mode,
    )
