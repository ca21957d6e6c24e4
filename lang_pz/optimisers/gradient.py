"""Language gradients and policy updates: the data the textual optimiser reads and writes.

A :class:`Gradient` is LangMARL's *language policy gradient* for one agent: an edit direction in
words (keep / change / drop) with the trajectory steps it rests on; a :class:`PolicyUpdate` is
one optimiser step's candidate policy. The reply models are the JSON schemas the LLM stages are
constrained to.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, create_model

from lang_pz.backends.base import Generation
from lang_pz.critics.base import CriticReport
from lang_pz.critics.counterfactual import NOT_ACTIONS
from lang_pz.optimisers.adherence import Adherence
from lang_pz.optimisers.directions import PLAIN_WORD, direction_word, evidence_changes  # noqa: F401  (re-exported)
from lang_pz.structured import repeated_phrase

#: Longest text of one part of an edit direction (characters); also the schema's ``maxLength``.
DIRECTION_MAX_CHARS = 100
#: Most evidence steps one gradient may cite.
MAX_EVIDENCE_STEPS = 3
#: Schema hints (not enforced on parsing) for text written by the model: printable ASCII
#: without quotes or backslashes. Directions exclude digits (measured: SmolLM2-135M otherwise
#: fills strings with "1.0.0.0..." up to maxLength); policies may contain numbers.
DIRECTION_PATTERN = r"^([A-Za-z][A-Za-z ,.;:'!?()-]{0,%d})?$"
POLICY_PATTERN = r"^[A-Za-z][A-Za-z0-9 ,.;:'!?()%%+<>=/-]{0,%d}$"
#: Default limit of one update: the share of the policy text it may rewrite (1 - difflib ratio).
MAX_REWRITE = 0.75

#: Worked example of the gradient stage (toy agent and task).
GRADIENT_EXAMPLE = """Agent: robot_b
Current policy: Always wait.
Critic's credits for robot_b (from -1 = hurt the team to 1 = helped it):
- episode 0: credit -0.5, steps [1, 2]: only waited, so the box moved slowly
- episode 1: credit -1, steps [0]: blocked the door by waiting
Computed re-runs of robot_b's episodes:
- if robot_b had played push at every step: team return 6.0 (+4.0)
- if robot_b had played pull at every step: team return -3.0 (-5.0)
Edit direction as JSON:
{"keep": "", "change": "push instead of waiting", "drop": "waiting", "evidence_steps": [1, 0]}"""

#: Worked example of the aggregation stage (toy agent and task).
AGGREGATE_EXAMPLE = """Agent: robot_b
Current policy: Always wait.
Edit directions from this batch:
- keep: ; change: push instead of waiting; drop: waiting; steps [1]
- keep: ; change: pull the box; drop: ; steps [0]
Earlier directions (momentum; weight 1 = last iteration):
- weight 0.5: keep: ; change: push the box; drop: waiting
Edit direction as JSON:
{"keep": "", "change": "push instead of waiting", "drop": "waiting", "evidence_steps": [1]}"""

#: Worked example of the update stage (toy agent and task).
APPLY_EXAMPLE = """Current policy: Always wait.
Keep: 
Change: push instead of waiting
Drop: waiting
New policy as JSON:
{"policy": "Always push."}"""

#: Worked example of the update stage when the change is a supported action word
#: (:func:`direction_word`): the instruction names the word.
APPLY_SUPPORTED_EXAMPLE = """Current policy: Always wait.
Keep: 
Change: play push at every step
Drop: 
New policy as JSON:
{"policy": "Always play push."}"""


class Gradient(BaseModel):
    """A language gradient: how one agent's policy text should change, and why.

    Attributes:
        agent: the agent id.
        keep: what the policy should keep (may be empty).
        change: what to change, in words (non-empty).
        drop: what to remove (may be empty).
        evidence_steps: trajectory steps supporting it (among the steps its credits cite).
        supported: the change is one the computed re-runs support (chosen among
            :func:`evidence_changes`), not free text.
        words: the action words the evidence names for this agent (what it played and what its
            re-runs played instead, :func:`action_words`); an update along a supported change
            may name only the change's word among them.
    """

    model_config = ConfigDict(frozen=True)

    agent: str
    keep: str = Field("", max_length=DIRECTION_MAX_CHARS)
    change: str = Field(min_length=1, max_length=DIRECTION_MAX_CHARS)
    drop: str = Field("", max_length=DIRECTION_MAX_CHARS)
    evidence_steps: list[int] = Field(default_factory=list, max_length=MAX_EVIDENCE_STEPS)
    supported: bool = False
    words: list[str] = Field(default_factory=list)

    @property
    def direction(self) -> str:
        """The three parts on one line: ``keep: ...; change: ...; drop: ...``."""
        return f"keep: {self.keep}; change: {self.change}; drop: {self.drop}"


class PolicyUpdate(BaseModel):
    """One optimiser step on one agent's policy.

    Attributes:
        agent: the agent id.
        old: the policy text before the step.
        new: the candidate policy text after it (may equal ``old``).
        gradient: the aggregated :class:`Gradient` the step followed.
        gradients: the per-trajectory gradients that were aggregated.
        generations: the LLM calls of every stage, oldest first.
        adherence: how the agent's actor played ``new`` on the recorded decisions the direction
            cites (:mod:`lang_pz.optimisers.adherence`); ``None`` when it was not checked (no
            supported word, no recorded decision or no actor given to the optimiser).
        rejected: candidate texts the update stage measured and dropped because the actor did not
            play the direction's word at enough of those decisions, oldest first. When every
            attempt was dropped the update is *refused*: ``new == old`` (:attr:`refused`).
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    agent: str
    old: str
    new: str
    gradient: Gradient
    gradients: list[Gradient] = Field(default_factory=list)
    generations: list[Generation] = Field(default_factory=list)
    adherence: Adherence | None = None
    rejected: list[Adherence] = Field(default_factory=list)

    @property
    def changed(self) -> bool:
        """Whether the policy text changed."""
        return self.new != self.old

    @property
    def refused(self) -> bool:
        """Whether every candidate was dropped for its adherence (the policy is kept)."""
        return bool(self.rejected) and self.adherence is None


def _fmt(x: float) -> str:
    return f"{x:.2f}".rstrip("0").rstrip(".") if x != int(x) else str(int(x))


def _printable_ascii(text: str) -> bool:
    return all(32 <= ord(ch) < 127 for ch in text)


def _text_field() -> tuple[Any, Any]:
    return (
        str,
        Field(
            max_length=DIRECTION_MAX_CHARS,
            json_schema_extra={"pattern": DIRECTION_PATTERN % (DIRECTION_MAX_CHARS - 1)},
        ),
    )


def gradient_reply_model(cited_steps: Sequence[int], changes: Sequence[str] | None = None) -> type[BaseModel]:
    """The JSON reply of the gradient and aggregation stages:
    ``{"keep": str, "change": str, "drop": str, "evidence_steps": [int]}``.

    ``evidence_steps`` is hinted to an enum of the cited steps (empty list if none); with
    ``changes``, ``change`` is one of them (an enum: the directions the evidence supports).
    """
    cited = sorted(set(cited_steps))
    if cited:
        steps_field: Any = (
            list[Annotated[int, Field(json_schema_extra={"enum": cited})]],
            Field(max_length=MAX_EVIDENCE_STEPS),
        )
    else:
        steps_field = (list[int], Field(max_length=0))
    return create_model(
        "GradientReply",
        __config__=ConfigDict(extra="forbid"),
        keep=_text_field(),
        change=(str, Field(json_schema_extra={"enum": list(changes)})) if changes else _text_field(),
        drop=_text_field(),
        evidence_steps=steps_field,
    )


#: The characters of a policy text after its first letter (the class of :data:`POLICY_PATTERN`).
_POLICY_CHARS = "[A-Za-z0-9 ,.;:'!?()%+<>=/-]"


#: A supported word must start within this many characters of a new policy (so a decoder cannot
#: fill the text with something else first, measured: "Stay. Stay. ..." then "up" at character 147).
_WORD_WITHIN = 40
#: An action word a policy text can hold (and a decoding pattern can require).


def policy_pattern(max_policy_chars: int, word: str | None = None) -> str:
    """The schema pattern (a decoding hint) of a new policy: printable ASCII, at most
    ``max_policy_chars`` characters; with ``word`` (letters, digits, spaces, ``_`` or ``-``) and room
    for it (``max_policy_chars >= len(word) + 42``), the text must contain it within its first 40
    characters, after a space or at the start, followed by punctuation, a space or the end, so a
    constrained decoder cannot leave a supported word out."""
    if word is None or not PLAIN_WORD.fullmatch(word) or max_policy_chars < len(word) + _WORD_WITHIN + 2:
        return POLICY_PATTERN % (max_policy_chars - 1)
    before, after = _WORD_WITHIN, max_policy_chars - len(word) - _WORD_WITHIN - 1
    return f"^([A-Za-z]{_POLICY_CHARS}{{0,{before - 1}}} )?{word}([ ,.;:!?]{_POLICY_CHARS}{{0,{after - 1}}})?$"


def policy_reply_model(max_policy_chars: int, word: str | None = None) -> type[BaseModel]:
    """The JSON reply of the update stage: ``{"policy": str}`` (bounded, printable ASCII; naming
    ``word`` when given, see :func:`policy_pattern`)."""
    return create_model(
        "PolicyReply",
        __config__=ConfigDict(extra="forbid"),
        policy=(
            str,
            Field(
                min_length=1,
                max_length=max_policy_chars,
                json_schema_extra={"pattern": policy_pattern(max_policy_chars, word)},
            ),
        ),
    )


def rewrite_fraction(old: str, new: str) -> float:
    """Share of ``old`` an update rewrote: ``1 - difflib.SequenceMatcher(old, new).ratio()`` in [0, 1]."""
    return 1.0 - difflib.SequenceMatcher(None, old, new).ratio()


def names_word(text: str, word: str) -> bool:
    """Whether ``text`` contains ``word`` (a word or phrase) as whole words, ignoring case."""
    return re.search(rf"(?<![A-Za-z0-9]){re.escape(word)}(?![A-Za-z0-9])", text, re.IGNORECASE) is not None


def other_words(gradient: Gradient) -> list[str]:
    """The action words of ``gradient.words`` an update along its supported word must not name
    (every other one; a word inside the supported one, "up" in "pick up onion", is not another)."""
    word = direction_word(gradient)
    return [] if word is None else [w for w in gradient.words if w != word and not names_word(word, w)]


def action_words(agent: str, report: CriticReport) -> list[str]:
    """The action words ``report``'s evidence names for ``agent``: those it played
    (``report.evidence``) and those its single-agent re-runs played instead, sorted."""
    played = report.evidence[agent].action_counts if agent in report.evidence else {}
    probed = {c.replacement for c in report.counterfactuals if c.agents == (agent,) and c.replacement not in NOT_ACTIONS}
    return sorted(set(played) | probed)


def text_problem(policy: str, text: str, gradient: Gradient, max_rewrite: float) -> str | None:
    """Why ``text`` is not a valid update of ``policy`` along ``gradient`` (``None``: it is).

    Non-empty printable ASCII without a phrase repeated three times, rewriting at most
    ``max_rewrite`` of ``policy`` (:func:`rewrite_fraction`); along a supported word W
    (:func:`direction_word`) it must name W, no other action word of :attr:`Gradient.words`, and
    must not keep the current text whole around it (measured with SmolLM2-135M: told "play up",
    it rewrote "Always stay." as "Always stay. stay" or "Never push, always stay" in 10 of 10
    such updates). The message is written for the model's retry.
    """
    if not text:
        return "policy is empty: write one short instruction"
    if not _printable_ascii(text):
        bad = sorted({repr(ch) for ch in text if not 32 <= ord(ch) < 127})
        return f"policy has characters that are not printable ASCII: {', '.join(bad)}"
    rep = repeated_phrase(text)
    if rep:
        return f"policy repeats {rep!r}: write one short instruction, once"
    frac = rewrite_fraction(policy, text)
    if frac > max_rewrite:
        return (
            f"the new policy rewrites {frac:.0%} of the current one; change at most "
            f"{max_rewrite:.0%}: keep more of the current wording"
        )
    word = direction_word(gradient)
    if word is None:
        return None
    if not names_word(text, word):
        return (
            f"the re-runs support playing {word!r} and the new policy does not say {word!r}: "
            f"write an instruction to play it, e.g. 'Always play {word}.'"
        )
    named = [w for w in other_words(gradient) if names_word(text, w)]
    if named:
        return (
            f"the new policy names {', '.join(map(repr, named))} besides {word!r}: an "
            f"instruction to play {word!r} names no other action"
        )
    current = " ".join(policy.split())
    if current and not names_word(current, word) and current in text:
        return f"the new policy keeps the current one ({current!r}) whole: replace it by an instruction to play {word!r}"
    return None


def evidence_for(agent: str, report: CriticReport) -> list[str]:
    """The counterfactual lines of ``report`` that concern ``agent`` (probes that replaced it)."""
    agents = list(report.credits)
    return [c.describe(agents) for c in report.counterfactuals if agent in c.agents]
