"""Run episodes of a language environment with one policy per agent, recording trajectories.

Execution is decentralised: each policy gets only its own agent's observation and info.
The global state text (``env.state_text()``) is recorded for the centralised critic only.
Every policy is reset at the start of an episode with a seed derived from the episode seed
(:func:`lang_pz.policies.base.agent_seed`), so the same seed replays the same episode.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from pettingzoo import AECEnv, ParallelEnv

from lang_pz.error import LangPZError
from lang_pz.policies.base import Decision, Policy, agent_seed
from lang_pz.trajectory import AgentStep, Trajectory, TrajectoryWriter


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


def _step(traj: Trajectory, t: int, agent: str, obs: Any, info: Any, d: Decision, applied: Any, reward: float) -> AgentStep:
    legal = (info or {}).get("legal_actions")
    return AgentStep(
        episode=traj.episode,
        step=t,
        agent=agent,
        observation=obs["text"],
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

    Returns:
        The :class:`lang_pz.trajectory.Trajectory`, ``returns`` summed per agent.

    Raises:
        KeyError: a possible agent has no policy.
        LangPZError: a policy has no ``decide()``/``reset()`` (e.g. a plain function), or its
            ``decide()`` returned something other than a :class:`~lang_pz.policies.base.Decision`
            (the message names the agent and the value).
    """
    _check_policies(env, policies)
    for a in env.possible_agents:  # a new episode for every policy, seeded from the episode seed
        policies[a].reset(agent_seed(seed, a))
    traj = Trajectory(episode=episode, seed=seed, returns=dict.fromkeys(env.possible_agents, 0.0))
    if isinstance(env, ParallelEnv):
        _rollout_parallel(env, policies, traj, writer, max_workers, on_step)
    else:
        _rollout_aec(env, policies, traj, writer, on_step)
    traj.finished = True
    if writer is not None:
        writer.episode_end(episode, seed, traj.returns, len(traj.states) or len(traj.steps))
    return traj


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
) -> None:
    obs, infos = env.reset(seed=traj.seed)
    t = 0
    with ThreadPoolExecutor(max_workers=max_workers or decision_threads(policies)) as pool:
        while env.agents:
            _state(traj, writer, t, env)
            agents = list(env.agents)
            futures = {a: pool.submit(_decide, env, policies[a], a, obs[a], infos[a]) for a in agents}
            decisions: dict[str, Decision] = {a: f.result() for a, f in futures.items()}
            next_obs, rewards, _, _, next_infos = env.step({a: d.action for a, d in decisions.items()})
            for a in agents:
                _record(
                    traj,
                    writer,
                    _step(traj, t, a, obs[a], infos[a], decisions[a], next_infos.get(a, {}), float(rewards.get(a, 0.0))),
                )
            obs, infos = next_obs, next_infos
            t += 1
            if on_step is not None:
                on_step()


def _rollout_aec(
    env: AECEnv,
    policies: Mapping[str, Policy],
    traj: Trajectory,
    writer: TrajectoryWriter | None,
    on_step: Callable[[], None] | None,
) -> None:
    env.reset(seed=traj.seed)
    # An AEC agent's reward for its action arrives by its next turn: its step waits until then,
    # and steps are recorded in time order (a step waits for every earlier one).
    waiting: list[AgentStep] = []  # unrecorded steps, oldest first
    open_: dict[str, AgentStep] = {}  # agent -> its step whose reward is not known yet
    t = 0

    def flush() -> None:
        while waiting and open_.get(waiting[0].agent) is not waiting[0]:
            _record(traj, writer, waiting.pop(0))

    for agent in env.agent_iter():
        obs, reward, terminated, truncated, info = env.last()
        if agent in open_:
            open_.pop(agent).reward = float(reward)
            flush()
        else:
            traj.returns[agent] = traj.returns.get(agent, 0.0) + float(reward)
        if terminated or truncated:
            env.step(None)
            continue
        _state(traj, writer, t, env)
        d = _decide(env, policies[agent], agent, obs, info)
        env.step(d.action)
        step = _step(traj, t, agent, obs, info, d, env.infos.get(agent, {}), 0.0)
        open_[agent] = step
        waiting.append(step)
        t += 1
        if on_step is not None:
            on_step()
    open_.clear()  # agents removed without a final last(): their steps keep reward 0
    flush()
