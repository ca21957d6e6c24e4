"""The counterfactual critic: each agent's credit is a difference reward computed by re-runs.

COMA (Foerster et al. 2018, "Counterfactual Multi-Agent Policy Gradients", Sec. 4) credits an
agent with the *difference* between the team's return and what it would have been had that
agent acted otherwise, everyone else unchanged. COMA learns that counterfactual with a critic;
here it is simulated: the episode is re-run from the same seed with one agent's decisions
replaced (:func:`lang_pz.critics.counterfactual.counterfactuals`, which needs an environment
that is deterministic given the seed and the actions). :class:`DifferenceCritic` turns those
re-runs into credits, and a language model, if given, only puts the computed result into
words: its words cannot change a number.

**Credit.** For agent ``a`` with single-agent probes ``P_a`` (deltas ``d = counterfactual team
return - factual team return``):

- ``aggregate="max"`` (default): ``g_a = max_P d``, the most the team would have gained had
  ``a`` played otherwise in one probe (a regret: COMA's difference against the *best*
  alternative rather than the policy-weighted mean). It identifies the agent whose change
  would help most;
- ``aggregate="mean"``: ``g_a = mean_P d``, COMA's counterfactual baseline with uniform weights
  over the probes given: ``-g_a`` is how much better ``a``'s play was than its alternatives.

``credit_a = -g_a / max_b |g_b|`` (in [-1, 1]; all 0 when no probe changed anything, a tie),
then the verdict (:mod:`lang_pz.critics.significance`, on by default): only an agent whose gain
is significant keeps a negative credit; with none every credit is 0.0 ("no one").
Each credit cites the steps of its decisive probe, among its windowed probes when it has any
(a whole-episode probe says who, not when): the one with the largest ``d`` when some probe
helped, else the one with the most negative ``d`` (where its play mattered most).

The probes that identify a fault and when are built by
:func:`lang_pz.critics.windows.window_probes` (its module docstring says which evidence
identifies what).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import ConfigDict, Field, create_model

from lang_pz.backends.base import Generation, GenerationRequest, LLMBackend, Message
from lang_pz.critics.base import (
    EXPLANATION_MAX_CHARS,
    Credit,
    CriticReport,
    compute_evidence,
)
from lang_pz.critics.claims import UNCHANGED, checked_words
from lang_pz.critics.counterfactual import Counterfactual
from lang_pz.critics.significance import DEFAULT_SIGNIFICANCE, Significance, factual_value, gate, noise_of
from lang_pz.critics.windows import WINDOW_REPLACEMENTS, window_probes
from lang_pz.error import LangPZError
from lang_pz.structured import ask_structured, attempt_sampling, rejection_note
from lang_pz.trajectory import Trajectory

__all__ = [
    "EXAMPLE",
    "WINDOW_REPLACEMENTS",
    "WORDS_MAX_CHARS",
    "AgentDifference",
    "Aggregate",
    "DifferenceCritic",
    "differences",
    "fact_line",
    "window_probes",
]

Aggregate = Literal["max", "mean"]
#: Longest explanation words the model may write per agent (characters); the computed facts are
#: appended in brackets, within :data:`lang_pz.critics.central.EXPLANATION_MAX_CHARS`.
WORDS_MAX_CHARS = 30
_WORDS_PATTERN = r"^[A-Za-z][A-Za-z ,;'-]{0,%d}$" % (WORDS_MAX_CHARS - 1)

EXAMPLE = """Agents: robot_a, robot_b.
Computed from re-runs of the same episode:
- robot_a: credit -1.0 (blamed); wait at steps 2-3: team +6.0
- robot_b: credit 0.0; no re-run changed the return
Explanations as JSON:
{"robot_a": {"explanation": "pushing at the wrong time hurt"}, "robot_b": {"explanation": "its play did not matter"}}"""


@dataclasses.dataclass(frozen=True)
class AgentDifference:
    """What the probes of one agent show.

    Attributes:
        agent: the agent.
        gain: the aggregated delta ``g`` (see the module docstring; team-return units).
        probe: the decisive probe, preferring windowed ones (they say when): the largest delta
            if some helped, else the most negative.
        steps: ``probe``'s replaced decisions as trajectory steps (empty for whole-episode probes).
        probes: how many single-agent probes replaced this agent.
    """

    agent: str
    gain: float
    probe: Counterfactual
    steps: tuple[int, ...]
    probes: int


def differences(
    trajectory: Trajectory, probes: Sequence[Counterfactual], aggregate: Aggregate = "max"
) -> dict[str, AgentDifference]:
    """Per agent of ``trajectory``: its aggregated difference and decisive probe.

    Only probes that replaced a single agent count (a group probe cannot say which member
    mattered).

    Raises:
        LangPZError: an agent of the trajectory has no single-agent probe (the message names
            it and the fix), or an unknown ``aggregate``.
    """
    if aggregate not in ("max", "mean"):
        raise LangPZError(f"aggregate must be 'max' or 'mean', got {aggregate!r}")
    by_agent: dict[str, list[Counterfactual]] = {}
    for p in probes:
        if len(p.agents) == 1:
            by_agent.setdefault(p.agents[0], []).append(p)
    missing = [a for a in trajectory.agents if a not in by_agent]
    if missing:
        raise LangPZError(
            f"the counterfactual critic needs a re-run replacing each agent alone; none for {missing} "
            f"(episode {trajectory.episode}): pass counterfactuals(..., groups=[[a] for a in agents]) or "
            "window_probes(...)"
        )
    out = {}
    for a in trajectory.agents:
        ps = by_agent[a]
        gain = max(p.delta for p in ps) if aggregate == "max" else sum(p.delta for p in ps) / len(ps)
        local = [p for p in ps if p.at_steps is not None] or ps  # steps come from windowed probes
        if all(abs(p.delta) <= UNCHANGED for p in local):
            local = ps  # windows changed nothing: a whole-episode probe that did is the fact
        best = max(local, key=lambda p: p.delta)
        decisive = best if best.delta > 0 else min(local, key=lambda p: p.delta)
        own = sorted(s.step for s in trajectory.agent_steps(a))
        steps = tuple(own[k] for k in (decisive.at_steps or ()) if k < len(own))
        out[a] = AgentDifference(agent=a, gain=float(gain), probe=decisive, steps=steps, probes=len(ps))
    return out


def _span(steps: Sequence[int]) -> str:
    if not steps:
        return "every step"
    if len(steps) == 1:
        return f"step {steps[0]}"
    if list(steps) == list(range(steps[0], steps[-1] + 1)):
        return f"steps {steps[0]}-{steps[-1]}"
    return "steps " + ",".join(map(str, steps))


def fact_line(d: AgentDifference) -> str:
    """The computed fact of one agent, e.g. ``up at steps 4-5: team +12.3`` (the decisive probe's
    replacement, the steps it replaced, and the change of the team return)."""
    p = d.probe
    what = {"default": "default action", "random": "random actions"}.get(p.replacement, p.replacement)
    if abs(p.delta) <= UNCHANGED:
        return "no re-run changed the return"
    return f"{_clip(what, 24)} at {_span(d.steps)}: team {_delta(p.delta)}"


def _delta(x: float) -> str:
    """``x`` signed, to 1 decimal unless that would print a change as ``+0.0``."""
    return f"{x:+.1f}" if abs(x) >= 0.05 else f"{x:+.2g}"


class DifferenceCritic:
    """The counterfactual critic mode: credits from re-runs, words from an optional LLM.

    Implements :meth:`lang_pz.critics.CentralCritic.assess`'s interface; the evidence is the
    ``counterfactuals`` argument (see the module docstring for which probes identify what).

    Args:
        backend: writes each agent's explanation from the computed facts (``None``: the
            explanation is the computed fact alone). Its words are capped at
            :data:`WORDS_MAX_CHARS`, must contain no digit, and are followed by the computed
            fact in brackets; a reply that does not validate after ``max_attempts`` leaves
            the computed fact alone and is recorded in ``report.errors`` (those calls are not
            in ``report.generations``: :func:`lang_pz.structured.ask_structured` does not
            return the generations of a failed request); words contradicting the agent's re-runs
            are replaced by computed words (:mod:`lang_pz.critics.claims`), also noted there.
        aggregate: ``"max"`` or ``"mean"`` (module docstring).
        significance: when a verdict names an agent (:class:`~lang_pz.critics.significance.Significance`;
            ``None``: no verdict, every computed credit kept, as before the rule).
        max_attempts, temperature, retry_temperature, seed: the LLM calls' settings.

    Raises:
        ValueError: a bad setting.
    """

    mode = "counterfactual"
    #: Whether a whole-episode probe (``at_steps=None``) puts every decision of its agent in
    #: ``report.shown_steps``; the searching critics (:mod:`lang_pz.critics.decisive`) count only
    #: the decisions a probe names, so theirs adds none.
    whole_probes_shown = True

    def __init__(
        self,
        backend: LLMBackend | None = None,
        *,
        aggregate: Aggregate = "max",
        significance: Significance | None = DEFAULT_SIGNIFICANCE,
        max_attempts: int = 2,
        temperature: float = 0.0,
        retry_temperature: float = 0.7,
        seed: int = 0,
    ) -> None:
        if aggregate not in ("max", "mean"):
            raise ValueError(f"aggregate must be 'max' or 'mean', got {aggregate!r}")
        if max_attempts < 1:
            raise ValueError(f"max_attempts must be >= 1, got {max_attempts}")
        self.backend, self.aggregate, self.max_attempts = backend, aggregate, max_attempts
        self.significance = significance
        self.temperature, self.retry_temperature, self.seed = temperature, retry_temperature, seed

    def assess(
        self,
        trajectory: Trajectory,
        policies: Mapping[str, str] | None = None,
        counterfactuals: Sequence[Counterfactual] = (),
    ) -> CriticReport:
        """Credit every agent of ``trajectory`` from the single-agent ``counterfactuals``.

        Args:
            trajectory: the factual episode.
            policies: agent -> policy text, shown to the explaining LLM if given.
            counterfactuals: the re-runs (e.g. :func:`window_probes`).

        Returns:
            The :class:`~lang_pz.critics.central.CriticReport` (mode ``"counterfactual"``);
            ``shown_steps`` are the steps some probe replaced.

        Raises:
            LangPZError: no agent steps, or an agent without a single-agent probe.
            BackendError: the backend failed.
        """
        if not trajectory.agents:
            raise LangPZError(f"trajectory of episode {trajectory.episode} has no agent steps to assess")
        diffs = differences(trajectory, counterfactuals, self.aggregate)
        scale = max(abs(d.gain) for d in diffs.values())
        credit = {a: (-d.gain / scale if scale > 0 else 0.0) + 0.0 for a, d in diffs.items()}  # + 0.0: no -0.0
        facts = {a: fact_line(d) for a, d in diffs.items()}
        verdict = self.verdict(trajectory, counterfactuals, {a: d.gain for a, d in diffs.items()})
        if verdict is not None:
            credit = gate(credit, verdict)
            facts = {
                a: f + ("; not significant" if a not in verdict and diffs[a].gain > 0 else "") for a, f in facts.items()
            }
        cited = {a: d.steps for a, d in diffs.items()}
        return self.report(trajectory, policies, counterfactuals, credit, facts, cited, verdict=verdict)

    def verdict(
        self, trajectory: Trajectory, counterfactuals: Sequence[Counterfactual], gains: Mapping[str, float], most: int = 1
    ) -> list[str] | None:
        """The agents :attr:`significance` names from ``gains`` (``None`` without the rule), the
        noise and the factual objective read from ``counterfactuals``."""
        factual, noise = factual_value(counterfactuals, trajectory.team_return), noise_of(counterfactuals)
        return (
            None if self.significance is None else self.significance.blamed(gains, factual=factual, noise=noise, most=most)
        )

    def report(
        self,
        trajectory: Trajectory,
        policies: Mapping[str, str] | None,
        counterfactuals: Sequence[Counterfactual],
        credit: Mapping[str, float],
        facts: Mapping[str, str],
        cited: Mapping[str, Sequence[int]],
        *,
        verdict: Sequence[str] | None = None,
    ) -> CriticReport:
        """The report of computed ``credit`` (agent -> clipped to [-1, 1]), ``facts`` (agent -> the
        computed fact line) and ``cited`` steps (agent -> trajectory steps, the first three kept),
        with the backend's words, if any, before each fact, and the ``verdict`` (the agents
        blamed, ``[]`` no one, ``None`` no verdict). Words that contradict the agent's
        re-runs (:func:`lang_pz.critics.claims.checked_words`: "did not matter" next to a re-run
        that changed the return, or "hurt" when none did) are replaced by computed words, with a
        note in ``report.errors``.

        ``shown_steps`` are the steps some probe replaced (see :attr:`whole_probes_shown`).

        Raises:
            LangPZError: no agent steps.
            BackendError: the backend failed.
        """
        if not trajectory.agents:
            raise LangPZError(f"trajectory of episode {trajectory.episode} has no agent steps to assess")
        words, errors, gens = self._words(trajectory, credit, facts, policies)
        words, clashes = checked_words(words, counterfactuals)  # words that contradict the re-runs
        errors = errors + clashes
        credits = {
            a: Credit(
                agent=a,
                credit=max(-1.0, min(1.0, credit[a])) + 0.0,  # + 0.0: no -0.0
                explanation=_fit(f"{words[a]} ({facts[a]})" if a in words else facts[a]),
                steps=list(cited[a])[:3],
            )
            for a in trajectory.agents
        }
        own = {a: sorted(s.step for s in trajectory.agent_steps(a)) for a in trajectory.agents}
        shown: set[int] = set()
        for p in counterfactuals:
            for a in p.agents:
                whole = range(len(own.get(a, []))) if self.whole_probes_shown else ()
                ks = whole if p.at_steps is None else p.at_steps
                shown |= {own[a][k] for k in ks if a in own and k < len(own[a])}
        return CriticReport(
            episode=trajectory.episode,
            credits=credits,
            team_return=trajectory.team_return,
            mode=self.mode,
            counterfactuals=list(counterfactuals),
            evidence=compute_evidence(trajectory),
            shown_steps=sorted(shown),
            total_steps=len({s.step for s in trajectory.steps}),
            errors=errors,
            generations=gens,
            verdict=None if verdict is None else list(verdict),
        )

    # -- words -----------------------------------------------------------------------------

    def _words(
        self,
        trajectory: Trajectory,
        credit: Mapping[str, float],
        facts: Mapping[str, str],
        policies: Mapping[str, str] | None,
    ) -> tuple[dict[str, str], list[str], list[Generation]]:
        if self.backend is None:
            return {}, [], []
        from lang_pz.error import SchemaValidationError

        agents = list(credit)
        words_field = (str, Field(min_length=1, max_length=WORDS_MAX_CHARS, json_schema_extra={"pattern": _WORDS_PATTERN}))
        item = create_model("Words", __config__=ConfigDict(extra="forbid"), explanation=words_field)
        fields: dict[str, Any] = {f"agent_{i}": (item, Field(alias=a)) for i, a in enumerate(agents)}
        model = create_model("Explanations", __config__=ConfigDict(extra="forbid"), **fields)
        lines = [f"Agents: {', '.join(agents)}.", "Computed from re-runs of the same episode:"]
        for a in agents:
            tag = " (blamed)" if credit[a] == min(credit.values()) and credit[a] < 0 else ""
            lines.append(f"- {a}: credit {round(credit[a], 2)}{tag}; {facts[a]}")
        if policies:
            lines += ["Policies:"] + [f"- {a}: {' '.join(policies[a].split())[:160]}" for a in agents if a in policies]
        body = "\n".join(lines)
        instructions = (
            "You explain a computed credit assignment: re-runs of the same episode replaced one agent's "
            "decisions and the team return changed as listed. For each agent write a few words (no "
            f"numbers, at most {WORDS_MAX_CHARS} characters) saying what its re-runs show. Reply with JSON only."
        )
        seen: list[str] = []

        def build(errors: list[str]) -> GenerationRequest:
            seen[:] = errors
            common: dict[str, Any] = {
                "json_schema": model.model_json_schema(),
                "max_tokens": 16 + 24 * len(agents),
                "role": "critic.explain",
                **attempt_sampling(errors, self.temperature, self.retry_temperature, self.seed),
            }
            fix = rejection_note(errors)
            if getattr(self.backend, "prompt_format", "chat") == "chat":
                return GenerationRequest(
                    messages=(Message("system", f"{instructions}\n\nExample:\n{EXAMPLE}"), Message("user", body + fix)),
                    **common,
                )
            return GenerationRequest(
                prompt=f"{instructions}\n\nExample:\n{EXAMPLE}\n\nNow the real episode:\n"
                f"{body}{fix}\nExplanations as JSON:\n",
                **common,
            )

        def validate(reply: Any) -> None:
            for a, v in reply.model_dump(by_alias=True).items():
                if re.search(r"\d", v["explanation"]):
                    raise ValueError(f"{a}: the explanation has a number; write words only, the numbers are computed")

        try:
            reply, gens = ask_structured(
                self.backend,
                build,
                model,
                what=f"explanations for episode {trajectory.episode}",
                max_attempts=self.max_attempts,
                validate=validate,
            )
        except SchemaValidationError as exc:
            return {}, [str(e) for e in exc.errors], []
        data = reply.model_dump(by_alias=True)
        return {a: " ".join(data[a]["explanation"].split()) for a in agents}, list(seen), gens


def _clip(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 3] + "..."


def _fit(text: str) -> str:
    return _clip(text, EXPLANATION_MAX_CHARS)
