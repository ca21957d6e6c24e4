"""A policy made faulty on purpose, at known decisions: ground truth for critic benchmarks.

:class:`FaultyPolicy` wraps a base policy and replaces its action at chosen decisions with a
faulty one, recording at every decision what the base policy chose, what was played and
whether the two differ. A critic's credit assignment can then be scored against the agent and
the steps that really were faulty (fault injection, as in software fault-injection testing;
here it gives the "who and when" labels that Who&When, Zhang et al. 2025, "Which Agent Causes
Task Failures and When?", ICML, obtains by hand).

Faults:

- ``"idle"``: the no-op action. ``action`` if given; else the first of :data:`NOOP_WORDS`
  among ``info["legal_actions"]`` (e.g. Pistonball's ``stay``, Overcooked skills' ``wait 1``);
  else the empty text ``""``, which no language environment parses, so the environment
  applies its own documented fallback action (and records a parse error). In free-text
  environments (no ``legal_actions``, e.g. the task environments) the idle reply is ``""``.
- ``"harmful"``: ``action``, either one fixed action text or a mapping *base action -> faulty
  action* (e.g. Pistonball ``{"up": "down", "down": "up", "stay": "down"}``). In free-text
  environments use a fixed text, e.g. a wrong GSM8K answer ``"#### 0"``.
- ``"random"``: a uniformly random legal action (own seeded :class:`numpy.random.Generator`),
  which may equal the base action: such a decision is *replaced* but not *faulty*. It needs
  a finite action set (``info["legal_actions"]``) and refuses free-text environments.
- ``"misplay"``: an action *the base policy also plays*, in the wrong state. ``action`` is the
  repertoire (a collection of action words, e.g. what the base team played in the unfaulted
  episode of the same seed); at each replaced decision the fault plays a uniformly random
  (seeded) word of the repertoire that is legal now (``info["legal_actions"]``, when given)
  and differs from the base action; with no such word the base action is kept (replaced, not
  faulty). Unlike ``"idle"`` (Pistonball's heuristic never plays ``stay``, so "blame whoever
  played stay" finds an idle agent without any credit assignment), it adds no action word the
  base team does not use, so per-agent action counts do not give the faulty agent away.
- ``"lag"``: the base policy's own action of ``action`` decisions earlier (default 1; before
  the first decisions, the base action itself): the agent reacts late, as if it acted on a
  stale observation. It plays only the base policy's actions, each as often, with as many
  changes of action as the base sequence (a change arrives late instead of on time), so
  neither action counts nor action switches give it away (``"misplay"`` inserts a short run
  of another action, two extra switches). It is faulty only where the base action changed
  within the lag.

:class:`SplicedPolicy` is the converse tool: it plays one policy, except at chosen decisions
where it plays another's choice (e.g. a reference policy's, for counterfactual re-runs).

The base policy is asked at *every* decision, also where its action is replaced, so any
randomness it uses stays in step with an unfaulted run of the same seed.
"""

from __future__ import annotations

import time
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from lang_pz.error import LangPZError
from lang_pz.policies.base import Decision, Policy, legal_actions, mixed_rng

if TYPE_CHECKING:
    from lang_pz.trajectory import AgentStep

Fault = Literal["idle", "harmful", "random", "misplay", "lag"]
FAULTS: tuple[str, ...] = ("lag", "misplay", "harmful", "idle", "random")
#: Action words taken as "do nothing" by the ``idle`` fault, in order of preference.
NOOP_WORDS: tuple[str, ...] = ("stay", "noop", "no-op", "no_op", "none", "wait", "wait 1", "idle", "pass")


@dataclass(frozen=True)
class FaultRecord:
    """What happened at one decision of a :class:`FaultyPolicy`.

    Attributes:
        decision: index of the decision (0-based, counted since construction or :meth:`FaultyPolicy.reset`).
        base_action: the action the base policy chose.
        action: the action played.
        replaced: whether the decision lay in the fault window (its action was replaced).
        faulty: ``replaced`` and ``action != base_action`` — the ground truth of a fault.
    """

    decision: int
    base_action: str
    action: str
    replaced: bool

    @property
    def faulty(self) -> bool:
        return self.replaced and self.action != self.base_action


class FaultyPolicy(Policy):
    """Play ``base``, but replace its action at the decisions ``steps`` with a fault.

    Args:
        base: the policy to corrupt.
        fault: ``"lag"``, ``"misplay"``, ``"harmful"``, ``"idle"`` or ``"random"`` (see the module docstring).
        steps: decision indices to replace (0-based, this policy's own decisions: in a parallel
            environment decision ``k`` is environment step ``k``; in an AEC environment map it
            through the trajectory, see :func:`lang_pz.evaluation.cases.fault_truth`).
        action: the faulty action: required for ``"harmful"`` (a word, or a mapping from the
            base action to the faulty one) and for ``"misplay"`` (the repertoire: a list, tuple
            or set of action words); for ``"lag"`` the lag in decisions (int >= 1, default 1);
            optional for ``"idle"``; not allowed for ``"random"``.
        seed: seed of the generator of the ``"random"`` and ``"misplay"`` faults.

    Attributes:
        log: one :class:`FaultRecord` per decision, in order.

    Raises:
        LangPZError: an unknown fault, a negative step, a missing ``action`` for ``"harmful"``,
            a ``"misplay"`` without a non-empty repertoire, or an ``action`` given to ``"random"``.
    """

    def __init__(
        self,
        base: Policy,
        fault: Fault,
        steps: Iterable[int],
        *,
        action: str | Mapping[str, str] | Collection[str] | int | None = None,
        seed: int | None = None,
    ) -> None:
        if fault not in FAULTS:
            raise LangPZError(f"unknown fault {fault!r}; choose one of {', '.join(FAULTS)}")
        self.steps = frozenset(int(s) for s in steps)
        bad = sorted(s for s in self.steps if s < 0)
        if bad:
            raise LangPZError(f"fault steps must be decision indices >= 0, got {bad}")
        if fault == "harmful" and action is None:
            raise LangPZError(
                "the 'harmful' fault needs action= (the word that hurts, or a mapping base action -> "
                "faulty action, e.g. {'up': 'down', 'down': 'up'} for Pistonball)"
            )
        if fault == "misplay":
            if isinstance(action, (str, Mapping, int)) or not action:
                raise LangPZError(
                    f"the 'misplay' fault needs action= a non-empty collection of action words (the base "
                    f"policy's repertoire, e.g. ['down', 'up']), got {action!r}"
                )
            action = tuple(dict.fromkeys(str(a) for a in action))
        if fault == "lag":
            action = 1 if action is None else action
            if isinstance(action, bool) or not isinstance(action, int) or action < 1:
                raise LangPZError(f"the 'lag' fault needs action= a lag in decisions (int >= 1), got {action!r}")
        if fault == "random" and action is not None:
            raise LangPZError(f"the 'random' fault draws legal actions itself; got action={action!r}, drop it")
        self.base = base
        self.fault = fault
        self.action = action
        self.seed = seed
        self.rng = np.random.default_rng(seed)
        self.log: list[FaultRecord] = []

    def reset(self, seed: int | None = None) -> None:
        """A new episode: count decisions from 0 again, clear :attr:`log`, reseed the ``"random"``
        fault's generator from the construction seed and ``seed``, and reset the base policy."""
        self.log = []
        self.rng = mixed_rng(self.seed, seed)
        self.base.reset(seed)

    def faulty_action(self, base_action: str, info: Mapping[str, Any] | None) -> str:
        """The action played instead of ``base_action`` inside the fault window.

        Raises:
            LangPZError: ``"random"`` without ``info["legal_actions"]``; a ``"harmful"`` mapping
                without an entry for ``base_action``.
        """
        legal = legal_actions(info)
        if self.fault == "lag":
            k = len(self.log) - int(self.action)  # type: ignore[arg-type]
            return self.log[k].base_action if k >= 0 else base_action
        if self.fault == "misplay":
            options = [w for w in self.action if w != base_action and (legal is None or w in legal)]  # type: ignore[union-attr]
            return options[int(self.rng.integers(len(options)))] if options else base_action
        if self.fault == "random":
            if legal is None:
                raise LangPZError(
                    "the 'random' fault needs a finite action set (info['legal_actions']); "
                    "use fault='idle' or 'harmful' with action= for free-text environments"
                )
            return legal[int(self.rng.integers(len(legal)))]
        if self.fault == "idle":
            if isinstance(self.action, str):
                return self.action
            return next((w for w in NOOP_WORDS if legal and w in legal), "")
        if isinstance(self.action, Mapping):
            if base_action not in self.action:
                raise LangPZError(
                    f"the 'harmful' mapping has no entry for base action {base_action!r}; it covers {sorted(self.action)}"
                )
            return self.action[base_action]
        return str(self.action)

    def decide(self, observation: Mapping[str, Any] | str, info: Mapping[str, Any] | None = None) -> Decision:
        """Ask the base policy, then replace its action if this decision is in the window."""
        t0 = time.perf_counter()
        k = len(self.log)
        d = self.base.decide(observation, info)
        if k not in self.steps:
            self.log.append(FaultRecord(k, d.action, d.action, replaced=False))
            return d
        action = self.faulty_action(d.action, info)
        self.log.append(FaultRecord(k, d.action, action, replaced=True))
        return Decision(
            action=action,
            raw_output=action,
            prompt_tokens=d.prompt_tokens,
            completion_tokens=d.completion_tokens,
            latency_s=time.perf_counter() - t0,
        )

    def waits(self, observation: Mapping[str, Any] | str, info: Mapping[str, Any] | None = None) -> bool:
        """As the base policy (asked at every decision)."""
        return self.base.waits(observation, info)

    def fast_forward(self, steps: Sequence[AgentStep]) -> bool:
        """Skip ``steps`` if the base policy can and no random draw is skipped (a ``"random"`` or
        ``"misplay"`` fault draws at each replaced decision). :attr:`log` gets one record per
        skipped decision, its base action taken to be the action played."""
        n = len(self.log)
        draws = self.fault in ("random", "misplay") and any(k in self.steps for k in range(n, n + len(steps)))
        if draws or not self.base.fast_forward(steps):
            return False
        for k, s in enumerate(steps, n):
            played = s.raw_output.strip()
            self.log.append(FaultRecord(k, played, played, replaced=k in self.steps))
        return True

    @property
    def replaced_decisions(self) -> list[int]:
        """Decisions whose action was replaced."""
        return [r.decision for r in self.log if r.replaced]

    @property
    def faulty_decisions(self) -> list[int]:
        """Decisions whose action was replaced *and* differs from the base policy's."""
        return [r.decision for r in self.log if r.faulty]


class SplicedPolicy(Policy):
    """Play ``policy``, except at the decisions ``decisions``, where ``other``'s choice is played.

    Both policies are asked at *every* decision (and both are reset together), so each stays in
    step with an episode it played alone: e.g. ``SplicedPolicy(current, reference, [3, 4])``
    is "the current policy, with decisions 3 and 4 as the reference policy would have made
    them" (a counterfactual re-run's replacement, see :mod:`lang_pz.critics.difference`).

    Args:
        policy: the policy played outside ``decisions``.
        other: the policy whose choice is played at ``decisions``.
        decisions: 0-based decision indices (as for :class:`FaultyPolicy`).

    Raises:
        LangPZError: a negative decision index.
    """

    def __init__(self, policy: Policy, other: Policy, decisions: Iterable[int]) -> None:
        self.policy, self.other = policy, other
        self.decisions = frozenset(int(k) for k in decisions)
        if any(k < 0 for k in self.decisions):
            raise LangPZError(f"decisions must be indices >= 0, got {sorted(self.decisions)}")
        self.reads_raw_observation = policy.reads_raw_observation or other.reads_raw_observation
        self._k = 0

    def reset(self, seed: int | None = None) -> None:
        """A new episode for both policies (same seed), decisions counted from 0 again."""
        self._k = 0
        self.policy.reset(seed)
        self.other.reset(seed)

    def decide(self, observation: Mapping[str, Any] | str, info: Mapping[str, Any] | None = None) -> Decision:
        """Ask both policies; return ``other``'s decision at the spliced decisions, else ``policy``'s."""
        k, self._k = self._k, self._k + 1
        own = self.policy.decide(observation, info)
        alt = self.other.decide(observation, info)
        return alt if k in self.decisions else own
