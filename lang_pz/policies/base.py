"""The policy interface: an observation (and its ``info``) in, one action string out.

A policy acts from its *own* observation only (decentralised execution, as in CTDE; see
LangMARL, "centralised language critic, decentralised language policies"). A plain
PettingZoo loop can therefore do::

    actions = {a: policies[a](obs[a], infos[a]) for a in env.agents}
"""

from __future__ import annotations

import zlib
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from lang_pz.error import LangPZError

if TYPE_CHECKING:
    from lang_pz.trajectory import AgentStep


@dataclass(frozen=True)
class Decision:
    """One decision of a policy.

    Attributes:
        action: the action text handed to the environment (its action wrapper parses it).
        raw_output: what the model produced, verbatim (for the trajectory record).
        prompt_tokens: prompt tokens spent on this decision (0 for non-LLM policies).
        completion_tokens: generated tokens.
        latency_s: wall-clock seconds of the decision.
        meta: JSON-able facts about the decision that the trajectory records with the step
            (e.g. the skill a skill-library policy invoked and its version); empty by default.
    """

    action: str
    raw_output: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    meta: Mapping[str, Any] = field(default_factory=dict)


def agent_seed(episode_seed: int | None, agent: str) -> int | None:
    """The seed of ``agent``'s policy in the episode played from ``episode_seed``.

    Derived from both (``numpy.random.SeedSequence`` over the episode seed and a CRC-32 of the
    agent id), so every agent gets its own stream and the same episode seed gives the same
    streams in training episodes, counterfactual re-runs, validation and resumed runs.
    ``None`` when ``episode_seed`` is ``None`` (an unseeded episode).
    """
    if episode_seed is None:
        return None
    return int(np.random.SeedSequence([int(episode_seed), zlib.crc32(agent.encode())]).generate_state(1)[0])


def mixed_rng(own_seed: int | None, episode_seed: int | None) -> np.random.Generator:
    """A generator seeded from a policy's construction seed and an episode seed (either may be
    ``None``; both ``None``: fresh OS entropy). Used by the stochastic policies' :meth:`Policy.reset`."""
    parts = [s for s in (episode_seed, own_seed) if s is not None]
    return np.random.default_rng(parts or None)


class Policy(ABC):
    """Base class of every policy.

    Subclasses implement :meth:`decide`; calling the policy returns ``decide(...).action``.
    Stochastic or stateful policies also implement :meth:`reset`, which
    :func:`lang_pz.rollout.rollout` calls at the start of every episode with a seed derived
    from the episode seed (:func:`agent_seed`): same episode seed, same episode.

    Attributes:
        reads_raw_observation: ``False`` for every text policy. A policy that sets it to
            ``True`` (an explicit opt-in, e.g. a learned RL policy or a scripted one that reads
            the game state) gets the underlying environment's own observation for its agent as
            ``info["raw_observation"]``; this breaks the text-only contract, so the trajectory
            records it on every step of that agent (``meta["raw_observation"] = True``).
    """

    reads_raw_observation: bool = False

    def reset(self, seed: int | None = None) -> None:  # noqa: B027 - optional hook
        """Start a new episode; ``seed`` seeds any randomness of this episode (``None``: unseeded).

        The default does nothing (a stateless, deterministic policy).
        """

    def waits(self, observation: Mapping[str, Any] | str, info: Mapping[str, Any] | None = None) -> bool:
        """Whether deciding ``observation`` may wait on something outside the process (a model's
        reply). A parallel rollout decides such observations of one step in threads, at once, and
        the others in its own thread (a thread per decision costs more than a scripted decision).
        The default: ``True``."""
        return True

    def fast_forward(self, steps: Sequence[AgentStep]) -> bool:
        """Go on with the episode after ``steps`` (this agent's decisions so far, as recorded)
        without being asked them: leave the policy as deciding them would have.

        A counterfactual re-run continues from the step where it first differs from the
        factual episode instead of replaying the episode's start (:mod:`lang_pz.snapshots`);
        every policy of the re-run's team must skip its decisions before that step.

        Returns:
            ``True`` if done; ``False`` (the default, nothing changed) if the policy cannot, e.g.
            one that draws random numbers or keeps a plan from decision to decision: the re-run
            then plays the episode from its start. A policy whose decision depends only on the
            observation and info in front of it returns ``True``.
        """
        return False

    @abstractmethod
    def decide(self, observation: Mapping[str, Any] | str, info: Mapping[str, Any] | None = None) -> Decision:
        """Choose an action.

        Args:
            observation: the agent's own observation, ``{"text": str}`` or the text itself.
            info: the agent's ``info`` dict; ``"legal_actions"`` (list of str) for a finite
                action set, ``"action_range"`` (``[low, high]``) for a 1-D continuous one.

        Returns:
            The :class:`Decision`.
        """

    def __call__(self, observation: Mapping[str, Any] | str, info: Mapping[str, Any] | None = None) -> str:
        """Return ``self.decide(observation, info).action``."""
        return self.decide(observation, info).action


def observation_text(observation: Mapping[str, Any] | str) -> str:
    """The text of an observation given as ``{"text": str}`` or as a plain string.

    Raises:
        LangPZError: the observation is neither a string nor a mapping with a ``"text"`` str.
    """
    if isinstance(observation, str):
        return observation
    if isinstance(observation, Mapping) and isinstance(observation.get("text"), str):
        return observation["text"]
    shown = repr(observation)
    shown = shown if len(shown) <= 120 else shown[:117] + "..."
    raise LangPZError(
        f"observation must be a str or a mapping with a 'text' str, got {shown}; "
        "wrap the environment with lang_pz's text observation wrapper"
    )


def legal_actions(info: Mapping[str, Any] | None) -> tuple[str, ...] | None:
    """``info["legal_actions"]`` as a tuple of str, or ``None`` when absent.

    Raises:
        LangPZError: ``legal_actions`` is present but empty.
    """
    if not info or info.get("legal_actions") is None:
        return None
    acts = tuple(str(a) for a in info["legal_actions"])
    if not acts:
        raise LangPZError("info['legal_actions'] is empty: the agent has no action to take")
    return acts


def action_range(info: Mapping[str, Any] | None) -> tuple[float, float] | None:
    """``info["action_range"]`` as ``(low, high)`` floats, or ``None`` when absent.

    Raises:
        LangPZError: the range is not two numbers with ``low <= high``.
    """
    if not info or info.get("action_range") is None:
        return None
    rng = info["action_range"]
    try:
        low, high = (float(x) for x in rng)
    except (TypeError, ValueError) as e:
        raise LangPZError(f"info['action_range'] must be [low, high], got {rng!r}") from e
    if not low <= high:
        raise LangPZError(f"info['action_range'] must have low <= high, got {rng!r}")
    return low, high


def action_components(info: Mapping[str, Any] | None) -> list[tuple[str, float, float]] | None:
    """``info["action_components"]`` (named numbers of a continuous action, see
    :mod:`lang_pz.text.components`) as ``(name, low, high)`` tuples, or ``None`` when absent.

    Raises:
        LangPZError: the entry is not a non-empty list of ``[name, low, high]``.
    """
    if not info or info.get("action_components") is None:
        return None
    raw = info["action_components"]
    try:
        parts = [(str(n), float(lo), float(hi)) for n, lo, hi in raw]
    except (TypeError, ValueError) as e:
        raise LangPZError(f"info['action_components'] must be [[name, low, high], ...], got {raw!r}") from e
    if not parts:
        raise LangPZError("info['action_components'] is empty")
    return parts
