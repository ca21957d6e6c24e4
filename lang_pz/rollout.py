"""Run episodes of a language environment with one policy per agent, recording trajectories.

Execution is decentralised: each policy gets only its own agent's observation and info.
The global state text (``env.state_text()``) is recorded for the centralised critic only.
Every policy is reset at the start of an episode with a seed derived from the episode seed
(:func:`lang_pz.policies.base.agent_seed`), so the same seed replays the same episode.

An episode can also continue from a step where another one paused (:class:`Paused`), the
environment restored to that step: how counterfactual re-runs skip the prefix they share with
the factual episode (:mod:`lang_pz.snapshots`).
"""

from __future__ import annotations

import dataclasses
import functools
import os
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from pettingzoo import AECEnv, ParallelEnv

from lang_pz.error import LangPZError
from lang_pz.policies.base import Decision, Policy, agent_seed
from lang_pz.trajectory import AgentStep, Trajectory, TrajectoryWriter


@dataclass(frozen=True)
class Paused:
    """An episode stopped at the start of step ``t``, before its decisions: what :func:`rollout`
    needs (``start=``) to continue it in an environment in the state it had then.

    Attributes:
        t: the step (AEC: the turn) the episode continues from.
        steps: the steps made before ``t``, in time order; in an AEC env a step whose reward
            arrives at its agent's next turn (at or after ``t``) has reward 0 so far (``open``).
        states: step -> global state text, for the steps before ``t``.
        returns: per agent, the rewards received so far.
        observations: parallel: every live agent's observation at ``t``; AEC: the observation of
            the agent whose turn ``t`` is (one entry).
        infos: the same agents' infos.
        open: AEC: agent -> index in ``steps`` of its step whose reward is not known yet.
        waiting: AEC: index in ``steps`` of the first step not recorded yet (a step is recorded
            once every earlier one has its reward); ``None``: every step is recorded.
    """

    t: int
    steps: tuple[AgentStep, ...]
    states: dict[int, str]
    returns: dict[str, float]
    observations: dict[str, Any]
    infos: dict[str, Any]
    open: dict[str, int] = field(default_factory=dict)
    waiting: int | None = None


def _state_text(env: Any) -> str | None:
    fn = getattr(env, "state_text", None)
    return fn() if callable(fn) else None


def _check_policies(env: Any, policies: Mapping[str, Policy]) -> None:
    missing = [a for a in env.possible_agents if a not in policies]
    if missing:
        raise KeyError(
            f"no policy for agent(s) {missing}; policies were given for {sorted(policies)} "
            "(agent ids must match env.possible_agents)"
        )
    for a in env.possible_agents:
        p = policies[a]
        if not callable(getattr(p, "decide", None)) or not callable(getattr(p, "reset", None)):
            kind = f"the function {p.__name__}" if callable(p) and hasattr(p, "__name__") else _shown(p)
            raise LangPZError(
                f"the policy of agent {a!r} is {kind} (a {type(p).__name__}), not a lang_pz Policy with "
                f"decide() and reset(); {_FIX}"
            )


_FIX = (
    "subclass lang_pz.policies.Policy and return lang_pz.policies.Decision(action=text, raw_output=text) "
    "from its decide(observation, info)"
)


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 120 else text[:117] + "..."


def _checked(d: Any, policy: Any, agent: str) -> Decision:
    if not isinstance(d, Decision):
        raise LangPZError(
            f"{type(policy).__name__}.decide() returned {_shown(d)} (a {type(d).__name__}) for agent {agent!r}, "
            "not a Decision; return lang_pz.policies.Decision(action=text, raw_output=text) from decide()"
        )
    return d


def raw_observation(env: Any, agent: str) -> Any:
    """The environment's own (non-text) observation of ``agent``, for policies that opt in with
    :attr:`~lang_pz.policies.base.Policy.reads_raw_observation`.

    Uses ``env.raw_observation(agent)`` (the lang_pz wrappers), else ``env.unwrapped.observe``.

    Raises:
        LangPZError: the environment exposes no raw observation.
    """
    fn = getattr(env, "raw_observation", None)
    if callable(fn):
        return fn(agent)
    observe = getattr(getattr(env, "unwrapped", None), "observe", None)
    if callable(observe):
        return observe(agent)
    raise LangPZError(
        f"{type(env).__name__} exposes no raw observation for {agent}; a policy with "
        "reads_raw_observation=True needs a lang_pz language wrapper or an env with observe()"
    )


def _decide(env: Any, policy: Policy, agent: str, obs: Any, info: Any) -> Decision:
    if getattr(policy, "reads_raw_observation", False):
        d = _checked(policy.decide(obs, {**(info or {}), "raw_observation": raw_observation(env, agent)}), policy, agent)
        return Decision(
            d.action, d.raw_output, d.prompt_tokens, d.completion_tokens, d.latency_s, {**d.meta, "raw_observation": True}
        )
    return _checked(policy.decide(obs, info), policy, agent)


def _step(traj: Trajectory, t: int, agent: str, text: str, info: Any, d: Decision, applied: Any, reward: float) -> AgentStep:
    legal = (info or {}).get("legal_actions")
    return AgentStep(
        episode=traj.episode,
        step=t,
        agent=agent,
        observation=text,
        raw_output=d.raw_output,
        action=applied.get("action", d.action),
        parse_error=applied.get("parse_error"),
        reward=reward,
        prompt_tokens=d.prompt_tokens,
        completion_tokens=d.completion_tokens,
        latency_s=round(d.latency_s, 4),
        meta=dict(d.meta),
        legal_actions=None if legal is None else [str(w) for w in legal],
    )


def rollout(
    env: ParallelEnv | AECEnv,
    policies: Mapping[str, Policy],
    *,
    seed: int | None,
    episode: int = 0,
    writer: TrajectoryWriter | None = None,
    max_workers: int | None = None,
    on_step: Callable[[], None] | None = None,
    start: Paused | None = None,
) -> Trajectory:
    """Play one episode and return its trajectory (also appended to ``writer`` as it happens).

    Args:
        env: a language environment (parallel or AEC) from :func:`lang_pz.make` or a wrapper.
        policies: agent id -> policy; must cover ``env.possible_agents``.
        seed: the ``reset`` seed.
        episode: index written into every record.
        writer: if given, every record is written and flushed as soon as it is known.
        max_workers: threads for concurrent decisions in parallel envs (default:
            :func:`decision_threads`: one per agent, bounded by what the backends serve at once).
        on_step: called after every environment step (e.g. to advance a progress bar).
        start: continue an episode of ``seed`` paused at a step (:class:`Paused`; ``env`` is in
            the state it had then) instead of resetting: each policy skips its agent's decisions
            before that step (:meth:`~lang_pz.policies.base.Policy.fast_forward`). Used by
            counterfactual re-runs (:mod:`lang_pz.snapshots`).

    Returns:
        The :class:`lang_pz.trajectory.Trajectory`, ``returns`` summed per agent.

    Raises:
        KeyError: a possible agent has no policy.
        LangPZError: a policy has no ``decide()``/``reset()`` (e.g. a plain function), or its
            ``decide()`` returned something other than a :class:`~lang_pz.policies.base.Decision`
            (the message names the agent and the value); with ``start``: a ``writer`` (a resumed
            episode is not written), or a policy that cannot skip its decisions before the step.
    """
    _check_policies(env, policies)
    for a in env.possible_agents:  # a new episode for every policy, seeded from the episode seed
        policies[a].reset(agent_seed(seed, a))
    traj = Trajectory(episode=episode, seed=seed, returns=dict.fromkeys(env.possible_agents, 0.0))
    if start is not None:
        _resume(traj, policies, start, writer)
    if isinstance(env, ParallelEnv):
        obs, infos = (start.observations, start.infos) if start is not None else env.reset(seed=seed)
        _rollout_parallel(env, policies, traj, writer, max_workers, on_step, obs, infos, start.t if start else 0)
    else:
        loop = _AECLoop(env, traj, writer, on_step)
        if start is None:
            env.reset(seed=seed)
        else:
            loop.resume(start)
        loop.run(functools.partial(_decide_with, env, policies))
    traj.finished = True
    if writer is not None:
        writer.episode_end(episode, seed, traj.returns, len(traj.states) or len(traj.steps))
    return traj


def _resume(traj: Trajectory, policies: Mapping[str, Policy], start: Paused, writer: TrajectoryWriter | None) -> None:
    if writer is not None:
        raise LangPZError("a rollout continued from a paused step writes no records: pass writer=None with start=")
    for a, p in policies.items():
        if not skips(p, [s for s in start.steps if s.agent == a]):
            raise LangPZError(
                f"the policy of {a} ({type(p).__name__}) cannot skip its decisions before step {start.t} "
                "(Policy.fast_forward returned False): play the episode from its start instead"
            )
    traj.steps = [dataclasses.replace(s) for s in start.steps]  # the open AEC steps get their rewards later
    traj.states = dict(start.states)
    traj.returns.update(start.returns)


def _record(traj: Trajectory, writer: TrajectoryWriter | None, step: AgentStep) -> None:
    traj.steps.append(step)
    traj.returns[step.agent] = traj.returns.get(step.agent, 0.0) + step.reward
    if writer is not None:
        writer.agent_step(step)


def _state(traj: Trajectory, writer: TrajectoryWriter | None, t: int, env: Any) -> None:
    text = _state_text(env)
    if text is not None:
        traj.states[t] = text
        if writer is not None:
            writer.state(traj.episode, t, text)


#: Parallel-env steps running at once in this process: at most one per core. Simulation steps are
#: CPU that threads cannot share beyond the cores (and mostly hold the GIL): a step waiting here
#: sleeps instead of contending for the GIL. Measured with 256 concurrent re-runs of 20-piston
#: Pistonball: 11-12 s of CPU to 10 s, re-run stage 13-17 s of wall to 11.5 s
#: (``benchmarks/results/scale.md``). AEC steps are not limited (a task env's step may wait on a
#: sandbox).
_STEPPING = threading.BoundedSemaphore(max(1, os.cpu_count() or 1))


def decision_threads(policies: Mapping[str, Policy]) -> int:
    """Threads for the concurrent decisions of one parallel step: one per agent, but no more
    than the LLM backends serve at once (``backend.max_concurrency``; the embedded model serves
    one request at a time, so more threads would only wait on its lock and cost memory)."""
    bounds = [
        b.max_concurrency
        for p in policies.values()
        if (b := getattr(p, "backend", None)) is not None and getattr(b, "max_concurrency", None)
    ]
    return max(1, min([len(policies), *bounds]))


def _rollout_parallel(
    env: ParallelEnv,
    policies: Mapping[str, Policy],
    traj: Trajectory,
    writer: TrajectoryWriter | None,
    max_workers: int | None,
    on_step: Callable[[], None] | None,
    obs: dict[str, Any],
    infos: dict[str, Any],
    t: int,
) -> None:
    pool: ThreadPoolExecutor | None = None  # made when a decision first waits (Policy.waits)
    try:
        while env.agents:
            _state(traj, writer, t, env)
            agents = list(env.agents)
            waiting = [a for a in agents if _waits(policies[a], obs[a], infos[a])]
            if waiting and pool is None:
                pool = ThreadPoolExecutor(max_workers=max_workers or decision_threads(policies))
            futures = {a: pool.submit(_decide, env, policies[a], a, obs[a], infos[a]) for a in waiting if pool}
            now = {a: _decide(env, policies[a], a, obs[a], infos[a]) for a in agents if a not in futures}
            decisions: dict[str, Decision] = {a: futures[a].result() if a in futures else now[a] for a in agents}
            with _STEPPING:
                next_obs, rewards, _, _, next_infos = env.step({a: d.action for a, d in decisions.items()})
            for a in agents:
                _record(
                    traj,
                    writer,
                    _step(
                        traj, t, a, obs[a]["text"], infos[a], decisions[a], next_infos.get(a, {}), float(rewards.get(a, 0.0))
                    ),
                )
            obs, infos = next_obs, next_infos
            t += 1
            if on_step is not None:
                on_step()
    finally:
        if pool is not None:
            pool.shutdown()


def _waits(policy: Any, obs: Any, info: Any) -> bool:
    fn = getattr(policy, "waits", None)  # a policy need only have decide() and reset()
    return True if fn is None else bool(fn(obs, info))


def skips(policy: Any, steps: list[AgentStep]) -> bool:
    """``policy.fast_forward(steps)`` (:meth:`~lang_pz.policies.base.Policy.fast_forward`);
    ``False`` for a policy without it (a policy need only have ``decide()`` and ``reset()``)."""
    fn = getattr(policy, "fast_forward", None)
    return fn is not None and bool(fn(steps))


def _decide_with(env: Any, policies: Mapping[str, Policy], agent: str, obs: Any, info: Any) -> tuple[Decision, str]:
    return _decide(env, policies[agent], agent, obs, info), obs["text"]


#: What an AEC loop asks at each turn: ``(agent, observation, info) -> (decision, observation text)``.
Decide = Callable[[str, Any, Any], tuple[Decision, str]]


class _AECLoop:
    """The AEC episode loop. An agent's reward for its action arrives by its next turn: its step
    waits until then, and steps are recorded in time order (a step waits for every earlier one).
    It can stop at a turn (:meth:`run` with ``until``) and go on from there (:meth:`resume`)."""

    def __init__(self, env: AECEnv, traj: Trajectory, writer: TrajectoryWriter | None, on_step: Callable[[], None] | None):
        self.env, self.traj, self.writer, self.on_step = env, traj, writer, on_step
        self.waiting: list[AgentStep] = []  # unrecorded steps, oldest first
        self.open: dict[str, AgentStep] = {}  # agent -> its step whose reward is not known yet
        self.t = 0
        self.pending: tuple[str, Any, Any] | None = None  # a turn reached by run(until=...), not played
        self.record_states = True  # False: no global state text (a prefix replayed from its record)

    def flush(self) -> None:
        while self.waiting and self.open.get(self.waiting[0].agent) is not self.waiting[0]:
            _record(self.traj, self.writer, self.waiting.pop(0))

    def resume(self, start: Paused) -> None:
        """Continue from ``start`` (the trajectory already holds its steps, copied)."""
        steps, first = self.traj.steps, len(start.steps) if start.waiting is None else start.waiting
        self.waiting = steps[first:]
        del steps[first:]
        self.open = {a: self.waiting[i - first] for a, i in start.open.items()}
        self.t = start.t
        ((agent, obs),) = start.observations.items()
        self.pending = (agent, obs, start.infos[agent])

    def run(self, decide: Decide, until: int | None = None, observe: bool = True) -> Paused | None:
        """Play turns to the end of the episode (``None``) or until turn ``until`` comes: then the
        loop's state, that turn not yet played (its observation is rendered even if ``observe`` is
        False, which skips rendering the others)."""
        env, traj = self.env, self.traj
        if self.pending is not None:
            self.play(decide, *self.pending)
            self.pending = None
        for agent in env.agent_iter():
            obs, reward, terminated, truncated, info = env.last(observe)
            if agent in self.open:
                self.open.pop(agent).reward = float(reward)
                self.flush()
            else:
                traj.returns[agent] = traj.returns.get(agent, 0.0) + float(reward)
            if terminated or truncated:
                env.step(None)
                continue
            if self.t == until:
                return self.paused(agent, obs if observe else env.observe(agent), info)
            self.play(decide, agent, obs, info)
        self.open.clear()  # agents removed without a final last(): their steps keep reward 0
        self.flush()
        return None

    def play(self, decide: Decide, agent: str, obs: Any, info: Any) -> None:
        if self.record_states:
            _state(self.traj, self.writer, self.t, self.env)
        d, text = decide(agent, obs, info)
        self.env.step(d.action)
        step = _step(self.traj, self.t, agent, text, info, d, self.env.infos.get(agent, {}), 0.0)
        self.open[agent] = step
        self.waiting.append(step)
        self.t += 1
        if self.on_step is not None:
            self.on_step()

    def paused(self, agent: str, obs: Any, info: Any) -> Paused:
        steps = self.traj.steps + self.waiting
        n = len(self.traj.steps)
        return Paused(
            t=self.t,
            steps=tuple(dataclasses.replace(s) for s in steps),
            states=dict(self.traj.states),
            returns=dict(self.traj.returns),
            observations={agent: obs},
            infos={agent: info},
            open={a: n + next(i for i, w in enumerate(self.waiting) if w is s) for a, s in self.open.items()},
            waiting=n,
        )
