"""No blame without significance: when re-run gains name an agent, and when they name no one.

A re-run that recovers a loss shows that the replaced agent *could have helped*; it does not
show that it *erred*. When the ball is simply hard to save (the scripted Pistonball team on its
lowest-return seeds: nobody misplays), some piston's other move still saves it, and a critic
that blames the largest gain singles that piston out (measured before this rule: 8, 9 and 10 of
10 such cases for the alternatives, decisive and coalition critics). Training on that blame
rewrites good policies. So a verdict must show more than "a change of this agent helped".

**The rule** (:meth:`Significance.blamed`). Per agent a gain ``g_a`` in objective units (the
critic's own measure: its best single re-run's gain, or its Shapley value), sorted
``g_(1) >= g_(2) >= ...``; ``n`` the noise (:func:`noise_of`); ``S`` the objective's scale,
``max(|v|, |v + g_(1)|)`` with ``v`` the factual objective. The verdict names the top ``k``
agents, for the smallest ``k <= most`` such that

1. ``g_(k) > n + floor * S``: a real change, not rounding (``floor`` 1 % of the episode's
   objective; the fault benchmark keeps faults costing at least 2 %, so a kept fault that its
   evidence fully recovers is above it), and
2. ``g_(k) - max(g_(k+1), 0) > separation * g_(k) + n_(k) + n_(k+1)`` (each gain's noise):
   the named agents stand out from every other agent's gain. With ``separation = 0.5`` a named agent's re-runs recover at least twice
   what any other agent's re-runs recover. When a teammate's change recovers about as much, the
   evidence says "several could have helped", which is not "this one erred", and the verdict is
   "no one".

No such ``k``: the verdict is empty, "no one". The variation of the same re-runs without a
change is measured, not assumed: a :func:`~lang_pz.critics.counterfactual.null_probe` plays
the factual team again, and its ``|delta|`` is ``n``. lang_pz's re-runs are deterministic given
the seed (replayed LLM replies, seeded policies), so ``n`` is 0 in every measured environment
and the stated margins (``floor``, ``separation``) carry the rule; a sampled Shapley value adds
twice its standard error to its own ``n``.

**Credits** (:func:`gate`): the named agents keep their computed (negative) credits; every other
agent's credit is at least 0, so the lowest credit is always a named agent's. With no one named
every credit is 0.0 (a tie: :func:`lang_pz.evaluation.scoring.blame` blames no one, and the
report's ``verdict`` is ``[]``).

Sources: difference rewards and COMA's counterfactual baseline (Wolpert & Tumer 2002, "Optimal
payoff functions for members of collectives"; Foerster et al. 2018, "Counterfactual Multi-Agent
Policy Gradients", Sec. 4) credit an agent by what a change of its action would gain; the
separation condition is the outlier reading of those gains across agents, which they do not
need because a learned critic averages over many episodes, and a single episode's re-runs do.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from lang_pz.critics.counterfactual import NO_CHANGE, Counterfactual
from lang_pz.error import InvalidKwargError

__all__ = ["DEFAULT_SIGNIFICANCE", "Significance", "factual_value", "gate", "noise_of"]


def noise_of(counterfactuals: Sequence[Counterfactual]) -> float:
    """The largest ``|delta|`` of the re-runs that changed nothing (:data:`NO_CHANGE`), 0.0 when
    there is none (the deterministic re-runs lang_pz assumes)."""
    return max((abs(c.delta) for c in counterfactuals if c.replacement == NO_CHANGE), default=0.0)


def factual_value(counterfactuals: Sequence[Counterfactual], default: float) -> float:
    """The factual episode's objective as the re-runs measured it (``value - delta`` of any of
    them), ``default`` (e.g. the team return) when there is none."""
    return next((c.value - c.delta for c in counterfactuals), default)


@dataclass(frozen=True)
class Significance:
    """When a verdict may name an agent (module docstring).

    Attributes:
        floor: the least gain that is a change, as a share of the objective's scale, in [0, 1).
        separation: how far a named agent's gain must stand above every other agent's, as a
            share of its own gain, in [0, 1).

    Raises:
        InvalidKwargError: a setting out of range.
    """

    floor: float = 0.01
    separation: float = 0.5

    def __post_init__(self) -> None:
        if not 0 <= self.floor < 1:
            raise InvalidKwargError(f"floor must be in [0, 1) (a share of the objective's scale), got {self.floor}")
        if not 0 <= self.separation < 1:
            raise InvalidKwargError(f"separation must be in [0, 1) (a share of the gain), got {self.separation}")

    def blamed(
        self,
        gains: Mapping[str, float],
        *,
        factual: float,
        noise: float | Mapping[str, float] = 0.0,
        most: int = 1,
    ) -> list[str]:
        """The agents a verdict names (module docstring), best gain first; ``[]``: no one.

        Args:
            gains: agent -> gain (objective units); agents absent from it are not named.
            factual: the factual episode's objective (:func:`factual_value`).
            noise: the noise, or agent -> its own noise (a sampled estimate's).
            most: the most agents one verdict may name (>= 1).

        Raises:
            InvalidKwargError: ``most < 1``.
        """
        if most < 1:
            raise InvalidKwargError(f"most must be >= 1 agent, got {most}")
        order = sorted(gains, key=lambda a: -gains[a])
        if not order:
            return []
        scale = max(abs(factual), abs(factual + gains[order[0]]))

        def n(a: str) -> float:
            return float(noise.get(a, 0.0)) if isinstance(noise, Mapping) else float(noise)

        for k in range(1, min(most, len(order)) + 1):
            g = gains[order[k - 1]]
            if g <= n(order[k - 1]) + self.floor * scale:
                return []  # the k-th gain is no change: neither is any later one
            rest = max(gains[order[k]], 0.0) if k < len(order) else 0.0
            pair_noise = n(order[k - 1]) + (n(order[k]) if k < len(order) else 0.0)
            if g - rest > self.separation * g + pair_noise:
                return order[:k]
        return []

    def each(self, gains: Mapping[str, float], *, factual: float, noise: float | Mapping[str, float] = 0.0) -> list[str]:
        """Every agent whose gain passes condition 1 alone (a real change), best gain first: the
        verdict of a critic whose candidates are already set apart from their teammates (the
        own-policy critic's agents that deviated from their texts, :mod:`lang_pz.critics.own`),
        where condition 2's question, "could a teammate have helped as much?", is not asked.
        Arguments as :meth:`blamed`."""
        if not gains:
            return []
        top = max(gains.values())
        scale = max(abs(factual), abs(factual + top))

        def n(a: str) -> float:
            return float(noise.get(a, 0.0)) if isinstance(noise, Mapping) else float(noise)

        return [a for a in sorted(gains, key=lambda a: -gains[a]) if gains[a] > n(a) + self.floor * scale]

    def describe(self) -> str:
        """The rule in one line, for reports and results."""
        return (
            f"a verdict names agents whose gain exceeds the noise + {self.floor:.0%} of the objective's scale "
            f"and beats every other agent's gain by {self.separation:.0%} of its own"
        )


#: The rule the re-run critics follow unless told otherwise: ``floor`` 1 %, ``separation`` 0.5.
DEFAULT_SIGNIFICANCE = Significance()


def gate(credit: Mapping[str, float], blamed: Sequence[str]) -> dict[str, float]:
    """Credits after a verdict (module docstring): named agents keep theirs, the others are
    raised to at least 0; all 0.0 when no one is named."""
    if not blamed:
        return dict.fromkeys(credit, 0.0)
    return {a: (c if a in blamed else max(0.0, c)) + 0.0 for a, c in credit.items()}
