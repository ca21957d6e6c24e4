"""Re-runs that start where they first differ: the shared prefix played once, from the record.

A counterfactual re-run (:mod:`lang_pz.critics.counterfactual`: COMA's difference reward by
simulation, Foerster et al. 2018, "Counterfactual Multi-Agent Policy Gradients", Sec. 4) plays a
factual episode's seed again with some agents' decisions changed. Until its first changed
decision (the probe's *divergence* step, :meth:`~lang_pz.critics.counterfactual.Probe.divergence`)
it is the factual episode again: the same actions in the same states, the same rewards. So
:func:`rerun` does not play that prefix with the team:

- **From a snapshot** where the environment copies its state exactly (``snapshots_exact``:
  Overcooked's ``OvercookedState``, the task envs' transcripts): the factual episode's prefix is
  played once per environment and distinct divergence step, its state kept
  (:class:`Prefixes`; a later step continues from the nearest earlier snapshot), and every
  re-run that diverges there restores it.
- **Prefix replay** elsewhere: the re-run's environment replays the recorded actions up to the
  divergence. Pistonball is such an env: pymunk's ``Space.copy()`` (pickling) and a deepcopy of
  the raw env do not continue bit for bit (the copy rebuilds the collision index, so contacts are
  solved in another order: the ball is ~1e-4 px off one cycle after the copy, and returns differ
  after tens; a deepcopy of PettingZoo's ``raw_env`` even rebuilds an unreset env from its
  constructor arguments), and an inexact copy would put that noise into every difference.

Either way the prefix renders no text (:meth:`lang_pz.wrappers.LanguageParallelWrapper.advance`;
AEC envs are not asked to observe) and asks no policy: each policy skips its decisions before
the divergence (:meth:`lang_pz.policies.base.Policy.fast_forward`). A team with a policy that
cannot skip (random draws, plans kept between decisions) plays the whole episode as before, and
so does a probe that diverges at the first step (e.g. "alternatives" over every decision).

The replayed prefix is checked against the record: every step's decoded action, parse error and
reward, and the observations at the divergence. If they differ (an environment not
deterministic given the seed and the actions, or a policy whose action is not its recorded reply
stripped) the re-run plays the whole episode with its team, with a :class:`PrefixWarning`.
``tests/test_snapshots.py`` checks that both ways give the same observations, rewards and
objective for every probe of a few episodes per environment.
"""

from __future__ import annotations

import dataclasses
import threading
import warnings
import weakref
from collections.abc import Mapping
from typing import Any

from pettingzoo import ParallelEnv

from lang_pz.error import LangPZError
from lang_pz.policies.base import Decision, Policy, agent_seed
from lang_pz.rollout import Paused, _AECLoop, rollout, skips
from lang_pz.trajectory import AgentStep, Trajectory


class PrefixMismatch(LangPZError):
    """Replaying a factual episode's recorded actions did not reproduce the episode."""


class PrefixWarning(RuntimeWarning):
    """A re-run played its whole episode because its prefix could not be replayed from the record."""


def exact_snapshots(env: Any) -> bool:
    """Whether ``env`` saves and restores its episode state exactly: its class (not a wrapped
    env's, which a wrapper's attribute forwarding would reach) has ``snapshots_exact`` and it is
    true (:meth:`lang_pz.wrappers.LanguageParallelWrapper.snapshot`, the task envs)."""
    return any("snapshots_exact" in vars(c) for c in type(env).__mro__) and bool(env.snapshots_exact)


def rerun(env: Any, team: Mapping[str, Policy], factual: Trajectory, divergence: int) -> Trajectory:
    """The episode of ``factual``'s seed played by ``team``, which plays as ``factual`` recorded
    before step ``divergence``: continued from that step (module docstring) where it can, else
    played whole. The result is the same either way.

    Args:
        env: a language environment of the factual episode's id and kwargs.
        team: the re-run's policies (every possible agent).
        factual: the factual episode (seeded).
        divergence: the first step (AEC: turn) at which ``team`` may act otherwise than recorded.
    """
    start = None
    if divergence > 0 and factual.seed is not None and _skips(team, factual, divergence):
        try:
            start = Prefixes.of(factual).start(env, divergence)
        except PrefixMismatch as exc:
            warnings.warn(f"{exc}; the re-run plays the whole episode instead", PrefixWarning, stacklevel=2)
    return rollout(env, team, seed=factual.seed, episode=factual.episode, start=start)


def _skips(team: Mapping[str, Policy], factual: Trajectory, divergence: int) -> bool:
    """Whether every policy can skip its decisions before ``divergence`` (asked of a new
    episode, as :func:`~lang_pz.rollout.rollout` asks after resetting it)."""
    before = [s for s in factual.steps if s.step < divergence]
    for a, p in team.items():
        p.reset(agent_seed(factual.seed, a))
        if not skips(p, [s for s in before if s.agent == a]):
            return False
    return True


class Prefixes:
    """One factual episode's prefixes, played once per environment kind and step and kept as
    snapshots (for environments with :func:`exact_snapshots`; elsewhere each re-run replays its
    own). Thread-safe: re-runs of one episode may run at once, each in its own environment. Kept
    as long as the trajectory object lives (:meth:`of`)."""

    _registry: dict[int, Prefixes] = {}
    _registry_lock = threading.Lock()

    def __init__(self, factual: Trajectory) -> None:
        self.factual = weakref.ref(factual)
        self.lock = threading.Lock()
        self.saved: dict[tuple[Any, int], tuple[Any, Paused]] = {}

    @classmethod
    def of(cls, factual: Trajectory) -> Prefixes:
        """The prefixes of ``factual``: the same object for the same trajectory object."""
        key = id(factual)
        with cls._registry_lock:
            found = cls._registry.get(key)
            if found is None or found.factual() is not factual:
                found = cls._registry[key] = cls(factual)
                weakref.finalize(factual, cls._registry.pop, key, None)
            return found

    def start(self, env: Any, step: int) -> Paused:
        """Put ``env`` in the factual episode's state at ``step`` and return the paused episode.

        Raises:
            PrefixMismatch: the record does not replay (module docstring).
        """
        factual = self.factual()
        assert factual is not None  # the caller holds it
        if not exact_snapshots(env):
            return replay_prefix(env, factual, step)
        kind = env.snapshot_key
        with self.lock:
            hit = self.saved.get((kind, step))
            if hit is not None:
                env.restore(hit[0])
                return hit[1]
            earlier = max((k for c, k in self.saved if c == kind and k < step), default=None)
            start = None
            if earlier is not None:
                snap, start = self.saved[(kind, earlier)]
                env.restore(snap)
            paused = replay_prefix(env, factual, step, start)
            self.saved[(kind, step)] = (env.snapshot(), paused)
            return paused


def replay_prefix(env: Any, factual: Trajectory, until: int, start: Paused | None = None) -> Paused:
    """Play ``factual``'s recorded actions from its seed (or from ``start``, ``env`` in that
    state) up to step ``until``, rendering no text but at ``until``, and check them against the
    record: the episode paused at ``until``.

    Raises:
        PrefixMismatch: a recorded action is missing or cut, or the environment does not give the
            recorded decoding, reward or observation (the message names the step and agent).
    """
    steps = {(s.step, s.agent): s for s in factual.steps}
    if isinstance(env, ParallelEnv):
        return _parallel(env, factual, steps, until, start)
    return _aec(env, factual, steps, until, start)


def _recorded(steps: Mapping[tuple[int, str], AgentStep], t: int, agent: str) -> AgentStep:
    s = steps.get((t, agent))
    if s is None or s.raw_output_chars is not None:
        why = "has no step" if s is None else "stored its reply cut"
        raise PrefixMismatch(f"the record {why} for {agent} at step {t}")
    return s


def _check(s: AgentStep, action: Any, error: str | None, reward: float | None) -> None:
    if (action, error) != (s.action, s.parse_error) or (reward is not None and reward != s.reward):
        raise PrefixMismatch(
            f"replaying {s.agent}'s recorded reply at step {s.step} gave action {action!r}, parse error "
            f"{error!r}, reward {reward!r}; the record has {s.action!r}, {s.parse_error!r}, {s.reward!r}"
        )


def _check_observations(steps: Mapping[tuple[int, str], AgentStep], t: int, observations: Mapping[str, Any]) -> None:
    for a, obs in observations.items():
        s = steps.get((t, a))
        if s is not None and obs["text"] != s.observation:
            raise PrefixMismatch(f"after replaying the record, {a}'s observation at step {t} is not the recorded one")


def _parallel(
    env: Any, factual: Trajectory, steps: Mapping[tuple[int, str], AgentStep], until: int, start: Paused | None
) -> Paused:
    advance = getattr(type(env), "advance", None)  # the language wrapper: steps without rendering
    if start is None:
        obs, infos = env.reset(seed=factual.seed)
        t, made, returns = 0, [], dict.fromkeys(env.possible_agents, 0.0)
    else:
        obs, infos = start.observations, start.infos
        t, made, returns = start.t, list(start.steps), dict(start.returns)
    while t < until:
        if not env.agents:
            raise PrefixMismatch(f"the replayed episode ended at step {t}; the record goes on")
        recorded = {a: _recorded(steps, t, a) for a in env.agents}
        actions = {a: s.raw_output.strip() for a, s in recorded.items()}
        if advance is not None:
            rewards, _, _, decoded = advance(env, actions)
        else:
            obs, rewards, _, _, infos = env.step(actions)
            decoded = infos
        for a, s in recorded.items():
            d, r = decoded.get(a, {}), float(rewards.get(a, 0.0))
            _check(s, d.get("action", actions[a]), d.get("parse_error"), r)
            made.append(s)
            returns[a] = returns.get(a, 0.0) + r
        t += 1
    if advance is not None and until > (start.t if start is not None else 0):
        obs, infos = env.current()
    _check_observations(steps, until, obs)
    states = {k: v for k, v in factual.states.items() if k < until}
    return Paused(t=until, steps=tuple(made), states=states, returns=returns, observations=obs, infos=infos)


def _aec(
    env: Any, factual: Trajectory, steps: Mapping[tuple[int, str], AgentStep], until: int, start: Paused | None
) -> Paused:
    traj = Trajectory(episode=factual.episode, seed=factual.seed, returns=dict.fromkeys(env.possible_agents, 0.0))
    loop = _AECLoop(env, traj, None, None)
    loop.record_states = False
    if start is None:
        env.reset(seed=factual.seed)
    else:
        traj.steps = [AgentStep(**vars(s)) for s in start.steps]
        traj.returns.update(start.returns)
        loop.resume(start)

    def decide(agent: str, obs: Any, info: Any) -> tuple[Decision, str]:
        s = _recorded(steps, loop.t, agent)
        reply = s.raw_output
        return Decision(reply.strip(), reply, s.prompt_tokens, s.completion_tokens, s.latency_s, dict(s.meta)), s.observation

    paused = loop.run(decide, until=until, observe=False)
    if paused is None:
        raise PrefixMismatch(f"the replayed episode ended before step {until}; the record goes on")
    settled = set(range(paused.waiting or 0)) | {
        i for i in range(paused.waiting or 0, len(paused.steps)) if i not in paused.open.values()
    }
    for i, s in enumerate(paused.steps):
        _check(_recorded(steps, s.step, s.agent), s.action, s.parse_error, s.reward if i in settled else None)
    _check_observations(steps, until, paused.observations)
    states = {k: v for k, v in factual.states.items() if k < until}
    return dataclasses.replace(paused, states=states)
