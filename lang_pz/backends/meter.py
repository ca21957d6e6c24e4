"""Per-role accounting over a shared backend: one :class:`RoleMeter` per role (actor, critic,
optimiser), all forwarding to the same model instance and response cache.

A run may use one model for every role (the embedded default) or a small local actor with a
larger remote critic; either way the run reports calls, tokens and cost *per role*.
"""

from __future__ import annotations

from typing import Any

from lang_pz.backends.base import Generation, GenerationRequest, LLMBackend, TokenUsage


class RoleMeter(LLMBackend):
    """A backend that forwards every request to ``inner`` and counts it as ``role``'s usage.

    Args:
        inner: the backend doing the work (its cache and its own usage totals still apply).
        role: a name for the reports, e.g. ``"critic"``.
        price_per_mtok: ``(input, output)`` US dollars per million prompt / completion tokens
            of uncached calls (default free, as for the embedded model).

    Raises:
        ValueError: a negative price.
    """

    def __init__(self, inner: LLMBackend, role: str, price_per_mtok: tuple[float, float] = (0.0, 0.0)) -> None:
        super().__init__()
        if min(price_per_mtok) < 0:
            raise ValueError(f"price_per_mtok must be >= 0 dollars per million tokens, got {price_per_mtok}")
        self.inner = inner
        self.role = role
        self.price_per_mtok = (float(price_per_mtok[0]), float(price_per_mtok[1]))
        self.model = inner.model
        self.prompt_format = inner.prompt_format
        self.max_concurrency = inner.max_concurrency
        self.cost_usd = 0.0

    def generate(self, request: GenerationRequest) -> Generation:
        """Forward to ``inner`` and add the reply to this role's usage (and cost, if uncached)."""
        gen = self.inner.generate(request)
        self.usage.add(gen)
        if not gen.cached:
            p_in, p_out = self.price_per_mtok
            self.cost_usd += (gen.prompt_tokens * p_in + gen.completion_tokens * p_out) / 1e6
        return gen

    def check(self) -> Any:
        """``inner``'s start-up check."""
        return self.inner.check()

    @property
    def context_window(self) -> int | None:
        """``inner``'s context window."""
        return self.inner.context_window

    def count_tokens(self, request: GenerationRequest) -> int | None:
        """``inner``'s token count (so policies fit their prompts through a meter too)."""
        return self.inner.count_tokens(request)

    def _generate(self, request: GenerationRequest) -> Generation:  # pragma: no cover - generate overrides
        return self.inner.generate(request)

    def add_usage(self, delta: dict[str, float]) -> None:
        """Count usage measured elsewhere (a remote worker's, the shape of :meth:`since`) as this role's."""
        self.usage.merge(delta)
        self.cost_usd += float(delta.get("cost_usd", 0.0))

    def report(self) -> dict[str, float]:
        """This role's totals: calls, cached_calls, prompt/completion tokens, latency_s, cost_usd."""
        return {**self.usage.as_dict(), "cost_usd": round(self.cost_usd, 6)}

    def snapshot(self) -> tuple[TokenUsage, float]:
        """A copy of the totals so far (to report one iteration's difference)."""
        u = self.usage
        return TokenUsage(
            u.calls, u.cached_calls, u.prompt_tokens, u.completion_tokens, u.latency_s, u.retries
        ), self.cost_usd

    def since(self, snap: tuple[TokenUsage, float]) -> dict[str, float]:
        """Usage since ``snap`` (from :meth:`snapshot`), in the shape of :meth:`report`."""
        u, cost = snap
        now = self.report()
        before = {**u.as_dict(), "cost_usd": cost}
        return {k: round(now[k] - before[k], 6) if isinstance(now[k], float) else now[k] - before[k] for k in now}
