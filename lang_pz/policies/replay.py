"""Replay: an LLM policy that answers a re-run from the episode it re-runs, where nothing changed.

A counterfactual re-run replays a factual episode's seed with a few agents' decisions replaced
(:mod:`lang_pz.critics.counterfactual`), and a candidate's validation episode replays the current
team's seed with one agent's policy text replaced (:mod:`lang_pz.training.accept`). The other
agents keep their policies. Until the change reaches an agent's observation, that agent sees
what it saw in the episode being re-run, and an :class:`~lang_pz.policies.llm.LLMPolicy` is a
function of its request (its text, the observation, the offered actions, a fixed seed: it keeps
no state between decisions), so it would send the request it sent there. :class:`ReplayPolicy`
answers such a request with the reply recorded in that episode's trajectory instead of sending it
again; any other request goes to the model. A sampled request (``temperature > 0``) is seeded
from the episode and the decision's number (:meth:`~lang_pz.policies.llm.LLMPolicy.request_seed`),
so it matches the record only at the same decision; a replayed decision counts in the policy's
numbering as an asked one does.

For a deterministic backend (greedy decoding, a seeded sampler, a response cache: the default)
the replayed reply is the one the model would give, so the re-run's result is unchanged and only
the calls are saved. For replies sampled afresh on every call it makes the re-run use the same
random draws as the factual episode wherever nothing changed, the *common random numbers*
variance reduction (Glasserman & Yao 1992, "Some guidelines and guarantees for common random
numbers", Management Science 38(6), Sec. 1): the difference between the two episodes is then
caused by the replacement, not by resampling the unchanged agents.

With 20 Pistonball agents a re-run of one agent's decisions asks all 20 again, so re-runs cost
N^2 calls per episode; most pistons are far from the change (their observation is local) and
are now answered from the record (``benchmarks/results/scale.md``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from lang_pz.backends.cache import cache_key
from lang_pz.policies.base import Decision, Policy
from lang_pz.policies.llm import LLMPolicy
from lang_pz.trajectory import AgentStep, Trajectory


def _key(
    policy: LLMPolicy, observation: Mapping[str, Any] | str, info: Mapping[str, Any] | None, decision: int
) -> tuple[str, int | None]:
    """A request's key: the request, and for a sampled one (its seed is the decision's,
    :meth:`LLMPolicy.request_seed`) the constructor's seed and the decision's number instead of
    the seed, which depends on the policy's state when the request is built."""
    request = policy.build_request(observation, info)
    if policy.temperature == 0:
        return cache_key({}, request), None
    return cache_key({"seed": policy.seed}, dataclasses.replace(request, seed=None)), decision


class ReplayPolicy(Policy):
    """``policy``, answering the requests it sent in a recorded episode with the recorded replies.

    A replayed decision is the recorded one (reply, token counts, latency, meta), as a response
    cache hit is, so an episode's records are the same whether a decision was replayed or asked:
    the calls saved show in the run's usage (``llm_calls``), not in the trajectories.

    Args:
        policy: the LLM policy that plays now.
        steps: the recorded decisions of one agent (:meth:`Trajectory.agent_steps`); a step's request
            is rebuilt from its ``observation`` and ``legal_actions`` (a step recorded without
            ``legal_actions`` is keyed as a free-text or continuous request; one that does not
            match is sent to the model, never answered wrongly).
        played: the LLM policy that made ``steps`` (default ``policy``); the requests are rebuilt
            with it, so a ``policy`` of another text (a candidate) matches none of them and is asked.

    Attributes:
        replayed: decisions answered from the record this episode.
        asked: decisions sent to the model this episode.
        decisions: decisions made or skipped this episode (a sampled request matches the record
            only at the decision of the same number: its seed is that decision's).
    """

    def __init__(self, policy: LLMPolicy, steps: list[AgentStep], played: LLMPolicy | None = None) -> None:
        self.policy = policy
        self.memo: dict[tuple[str, int | None], AgentStep] = {}
        for k, s in enumerate(steps):
            info = None if s.legal_actions is None else {"legal_actions": s.legal_actions}
            self.memo.setdefault(_key(played or policy, s.observation, info, k), s)
        self.replayed = self.asked = self.decisions = 0
        self._looked_up: tuple[Any, Any, tuple[str, int | None]] | None = None  # (observation, info, key) of waits()

    @property
    def backend(self) -> Any:
        """The wrapped policy's backend (a rollout bounds its decision threads by it)."""
        return self.policy.backend

    def reset(self, seed: int | None = None) -> None:
        """A new episode of the wrapped policy; the counters start again."""
        self.replayed = self.asked = self.decisions = 0
        self.policy.reset(seed)

    def waits(self, observation: Mapping[str, Any] | str, info: Mapping[str, Any] | None = None) -> bool:
        """``False`` for a request the record answers, else as the wrapped policy."""
        key = _key(self.policy, observation, info, self.decisions)
        self._looked_up = (observation, info, key)
        return key not in self.memo and self.policy.waits(observation, info)

    def fast_forward(self, steps: Sequence[AgentStep]) -> bool:
        """As the wrapped policy (the record answers nothing it would not be asked again)."""
        if not self.policy.fast_forward(steps):
            return False
        self.decisions += len(steps)
        return True

    def decide(self, observation: Mapping[str, Any] | str, info: Mapping[str, Any] | None = None) -> Decision:
        """The recorded decision for the same request, else the wrapped policy's (errors as there)."""
        seen, self._looked_up = self._looked_up, None
        known = seen is not None and seen[0] is observation and seen[1] is info  # waits() just keyed it
        step = self.memo.get(seen[2] if known else _key(self.policy, observation, info, self.decisions))  # type: ignore[index]
        self.decisions += 1
        if step is None:
            self.asked += 1
            return self.policy.decide(observation, info)
        self.replayed += 1
        self.policy.fast_forward([step])  # the wrapped policy counts it (its next sampling seed)
        return Decision(
            action=step.raw_output.strip(),
            raw_output=step.raw_output,
            prompt_tokens=step.prompt_tokens,
            completion_tokens=step.completion_tokens,
            latency_s=step.latency_s,
            meta=dict(step.meta),
        )


def replaying(
    policies: Mapping[str, Policy], recorded: Trajectory | None, played: Mapping[str, Policy] | None = None
) -> dict[str, Policy]:
    """``policies`` with every :class:`LLMPolicy` answering from ``recorded`` where it asks what the
    policy that played there asked (:class:`ReplayPolicy`); other policies (scripted, random, skill
    libraries) unchanged.

    Args:
        policies: the team that plays now.
        recorded: an episode of the same seed (``None``: the policies as they are).
        played: the team that played ``recorded`` (default: ``policies``); an agent whose player
            there was not an LLM policy on the same backend object is not replayed.
    """
    if recorded is None:
        return dict(policies)
    played = policies if played is None else played

    def same_model(p: Policy, q: Policy | None) -> bool:
        return type(p) is LLMPolicy and type(q) is LLMPolicy and p.backend is q.backend

    return {
        a: ReplayPolicy(p, recorded.agent_steps(a), played[a]) if same_model(p, played.get(a)) else p  # type: ignore[arg-type]
        for a, p in policies.items()
    }
