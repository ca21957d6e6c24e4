"""Per-team summaries of benchmark episodes: the mean objective with a 95 % bootstrap interval.

The interval is ``scipy.stats.bootstrap`` (Efron & Tibshirani, "An Introduction to the Bootstrap",
1993, ch. 14: the bias-corrected and accelerated (BCa) interval) over the episodes' objective
values, 9,999 resamples from a fixed seed, so the same episodes give the same interval. With
one episode there is no interval (NaN); when every episode has the same value the interval is
that value (BCa is undefined there).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np

CONFIDENCE = 0.95
N_RESAMPLES = 9999
BOOTSTRAP_SEED = 0


def bootstrap_interval(values: Sequence[float], confidence: float = CONFIDENCE) -> tuple[float, float]:
    """The BCa bootstrap interval of the mean of ``values`` (NaNs for fewer than 2 values).

    Raises:
        ValueError: ``confidence`` outside (0, 1).
    """
    from scipy.stats import bootstrap

    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    x = np.asarray(values, dtype=float)
    if x.size < 2:
        return math.nan, math.nan
    if np.all(x == x[0]):
        return float(x[0]), float(x[0])
    for method in ("BCa", "percentile"):  # percentile where BCa degenerates (e.g. two distinct values)
        res = bootstrap(
            (x,),
            np.mean,
            confidence_level=confidence,
            n_resamples=N_RESAMPLES,
            method=method,
            rng=np.random.default_rng(BOOTSTRAP_SEED),
        )
        low, high = float(res.confidence_interval.low), float(res.confidence_interval.high)
        if math.isfinite(low) and math.isfinite(high):
            break
    return low, high


@dataclass(frozen=True)
class Summary:
    """One row of the results table: a team on an env.

    Attributes:
        env: the env label (id, plus kwargs that differ from the defaults).
        team: the team's name; ``spec`` its team spec.
        objective: the objective spec (:mod:`lang_pz.objectives`).
        episodes: episodes summarised.
        mean / ci_low / ci_high: the objective's mean and 95 % bootstrap interval.
        parse_failures: the share (0..1) of the team's decisions whose reply did not parse, so
            the env played its fallback action (a score earned by fallbacks is no policy's);
            NaN when no record counts decisions (episodes written before this was recorded).
        llm_calls / cached_calls / prompt_tokens / completion_tokens: LLM usage, summed.
        cost_usd: summed cost of uncached calls at the bench's prices.
        seconds: summed wall-clock seconds of the episodes.
        failed: seeds of the team whose episode failed (the LLM failed it for good) and was never
            played to its end: not in ``episodes`` nor in the mean, which is then over the
            episodes that did not fail (a share of failures can bias it: read them together).
    """

    env: str
    team: str
    spec: str
    objective: str
    episodes: int
    mean: float
    ci_low: float
    ci_high: float
    parse_failures: float
    llm_calls: int
    cached_calls: int
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float
    seconds: float
    failed: int = 0

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def summarise(env: str, team: str, spec: str, objective: str, records: Sequence[dict], failed: int = 0) -> Summary:
    """The :class:`Summary` of one team's episode records (as written by :mod:`lang_pz.bench.runner`)
    and the number of its episodes that ``failed`` (without records: the mean is NaN).

    Raises:
        ValueError: no records and no failed episode.
    """
    if not records and not failed:
        raise ValueError(f"no episodes of team {team!r} on {env}")
    values = [float(r["value"]) for r in records]
    low, high = bootstrap_interval(values)
    counted = [r for r in records if "decisions" in r and "parse_failed" in r]
    decisions = sum(int(r["decisions"]) for r in counted)
    unparsed = sum(int(r["parse_failed"]) for r in counted)
    return Summary(
        env=env,
        team=team,
        spec=spec,
        objective=objective,
        episodes=len(records),
        mean=float(np.mean(values)) if values else math.nan,
        ci_low=low,
        ci_high=high,
        parse_failures=round(unparsed / decisions, 4) if decisions else (0.0 if counted else math.nan),
        llm_calls=sum(int(r.get("llm_calls", 0)) for r in records),
        cached_calls=sum(int(r.get("cached_calls", 0)) for r in records),
        prompt_tokens=sum(int(r.get("prompt_tokens", 0)) for r in records),
        completion_tokens=sum(int(r.get("completion_tokens", 0)) for r in records),
        cost_usd=round(sum(float(r.get("cost_usd", 0.0)) for r in records), 6),
        seconds=round(sum(float(r.get("seconds", 0.0)) for r in records), 2),
        failed=failed,
    )
