"""When to retry a remote LLM request, and how long to wait: a ``tenacity`` wait strategy.

The wait before attempt ``n + 1`` (after ``n`` failures) is exponential backoff with seeded
jitter, lengthened to what the server asked for in ``Retry-After``:

    backoff = min(max_backoff_s, backoff_s * 2 ** (n - 1)) * (1 + jitter * (2u - 1))
    wait    = max(backoff, min(retry_after, max_retry_after_s) * (1 + jitter * u))

with ``u`` uniform in [0, 1) from ``random.Random(seed)``: the same seed gives the same waits in
the same order (tests are deterministic), and clients with different seeds spread out instead
of retrying in lockstep (the "thundering herd" that plain exponential backoff causes). A
server's ``Retry-After`` is never cut short, only capped at ``max_retry_after_s`` (a server
asking for an hour gets ``max_retry_after_s``, then the next attempt tells again).
``Retry-After`` is read in its three forms: ``retry-after-ms`` (OpenAI's, milliseconds),
``Retry-After: <seconds>`` and ``Retry-After: <HTTP-date>`` (RFC 9110, section 10.2.3).
"""

from __future__ import annotations

import email.utils
import math
import random
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from tenacity import RetryCallState


def retry_after_s(headers: Mapping[str, str] | None, now: float | None = None) -> float | None:
    """Seconds the server asked the client to wait, or ``None`` (no or unreadable header).

    Args:
        headers: response headers (case-insensitive mapping, e.g. ``httpx.Headers``, or a dict
            with lower-case keys).
        now: the current time as a Unix timestamp, for HTTP-date values (default: now).

    Returns:
        A finite number of seconds >= 0 (a date in the past gives 0).
    """
    if headers is None:
        return None
    get = headers.get
    for name, scale in (("retry-after-ms", 1e-3), ("retry-after", 1.0)):
        value = get(name) or get(name.title())
        if value is None:
            continue
        try:
            seconds = float(value) * scale
        except ValueError:
            if name == "retry-after-ms":
                continue
            try:
                when = email.utils.parsedate_to_datetime(value.strip())
            except (TypeError, ValueError, IndexError):
                return None
            seconds = when.timestamp() - (time.time() if now is None else now)
        return max(0.0, seconds) if math.isfinite(seconds) else None
    return None


def number_in_range(name: str, value: Any, low: float, high: float = math.inf) -> float:
    """``value`` as a float if it is a real number (not a bool, not NaN) in [low, high].

    Raises:
        ValueError: otherwise; the message names ``name`` and the bound.
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
        bound = f"in [{low:g}, {high:g}]" if math.isfinite(high) else f">= {low:g}"
        raise ValueError(f"{name} must be a number {bound}, got {value!r}")
    return float(value)


@dataclass(frozen=True)
class RetrySchedule:
    """How many attempts a request gets and how long to wait between them.

    Attributes:
        max_attempts: attempts in all, the first included (>= 1).
        backoff_s: wait after the first failure, in seconds; doubles after each failure.
        max_backoff_s: cap of the exponential part, in seconds.
        jitter: relative spread in [0, 1] of each wait (0: none; 0.5: +-50 %).
        max_retry_after_s: cap on a server's ``Retry-After``, in seconds.
        seed: seeds the jitter.

    Raises:
        ValueError: a value out of range (the message names it).
    """

    max_attempts: int = 8
    backoff_s: float = 0.5
    max_backoff_s: float = 30.0
    jitter: float = 0.5
    max_retry_after_s: float = 60.0
    seed: int = 0

    def __post_init__(self) -> None:
        if isinstance(self.max_attempts, bool) or not isinstance(self.max_attempts, int) or self.max_attempts < 1:
            raise ValueError(
                f"max_attempts counts attempts, the first included, and must be an int >= 1, got {self.max_attempts!r}"
            )
        number_in_range("backoff_s", self.backoff_s, 0.0)
        number_in_range("max_backoff_s", self.max_backoff_s, 0.0)
        number_in_range("jitter", self.jitter, 0.0, 1.0)
        number_in_range("max_retry_after_s", self.max_retry_after_s, 0.0)
        if isinstance(self.seed, bool) or not isinstance(self.seed, int):
            raise ValueError(f"the retry seed must be an int, got {self.seed!r}")


class Backoff:
    """A tenacity ``wait=`` strategy implementing :class:`RetrySchedule` (thread-safe).

    Args:
        schedule: the schedule.
        retry_after: ``exception -> seconds or None``: what the failed attempt's server asked.
    """

    def __init__(self, schedule: RetrySchedule, retry_after: Callable[[BaseException], float | None]) -> None:
        self.schedule = schedule
        self._retry_after = retry_after
        self._rng = random.Random(schedule.seed)
        self._lock = threading.Lock()

    def delay(self, failures: int, retry_after: float | None = None) -> float:
        """The wait in seconds after ``failures`` (>= 1) failed attempts (draws one jitter)."""
        s = self.schedule
        with self._lock:
            u = self._rng.random()
        base = min(s.max_backoff_s, s.backoff_s * 2.0 ** min(failures - 1, 64))
        wait = base * (1.0 + s.jitter * (2.0 * u - 1.0))
        if retry_after is not None:
            wait = max(wait, min(retry_after, s.max_retry_after_s) * (1.0 + s.jitter * u))
        return max(0.0, wait)

    def __call__(self, state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome is not None else None
        return self.delay(state.attempt_number, None if exc is None else self._retry_after(exc))
