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

The base policy is asked at *every* decision, also where its action is replaced, so any
randomness it uses stays in step with an unfaulted run of the same seed.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from lang_pz.error import LangPZError
from lang_pz.policies.base import Decision, Policy, legal_actions, mixed_rng

Fault = Literal["idle", "harmful", "random"]
FAULTS: tuple[str, ...] = ("idle", "harmful", "random")
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
        fault: ``"idle"``, ``"harmful"`` or ``"random"`` (see the module docstring).
        steps: decision indices to replace (0-based, this policy's own decisions: in a parallel
            environment decision ``k`` is environment step ``k``; in an AEC environment map it
            through the trajectory, see :func:`lang_pz.evaluation.faults.fault_truth`).
        action: the faulty action: required for ``"harmful"`` (a word, or a mapping from the
            base action to the faulty one); optional for ``"idle"``; not allowed for ``"random"``.
        seed: seed of the generator of the ``"random"`` fault.

    Attributes:
        log: one :class:`FaultRecord` per decision, in order.

    Raises:
        LangPZError: an unknown fault, a negative step, a missing ``action`` for ``"harmful"``
            or an ``action`` given to ``"random"``.
    """

    def __init__(
        self,
        base: Policy,
        fault: Fault,
        steps: Iterable[int],
        *,
        action: str | Mapping[str, str] | None = None,
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
                    f"the 'harmful' mapping has no entry for base action {base_action!r}; "
                    f"it covers {sorted(self.action)}"
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
            action=action, raw_output=action, prompt_tokens=d.prompt_tokens,
            completion_tokens=d.completion_tokens, latency_s=time.perf_counter() - t0,
        )

    @property
    def replaced_decisions(self) -> list[int]:
        """Decisions whose action was replaced."""
        return [r.decision for r in self.log if r.replaced]

    @property
    def faulty_decisions(self) -> list[int]:
        """Decisions whose action was replaced *and* differs from the base policy's."""
        return [r.decision for r in self.log if r.faulty]
