"""Rollouts and trajectory files on real Pistonball, with scripted (non-LLM) policies."""

from __future__ import annotations

import json

import pytest

import lang_pz
from lang_pz.policies.random import RandomPolicy
from lang_pz.policies.scripted import PistonballHeuristic
from lang_pz.rollout import rollout
from lang_pz.trajectory import TrajectoryWriter, read_trajectories

KW = {"n_pistons": 5, "hold": 5}


def _team(env, cls=PistonballHeuristic):
    return {a: cls() for a in env.possible_agents}


def test_parallel_and_aec_rollouts_agree():
    par = lang_pz.make("butterfly/pistonball-v0", **KW)
    aec = lang_pz.make("butterfly/pistonball-v0", api="aec", **KW)
    t1 = rollout(par, _team(par), seed=3)
    t2 = rollout(aec, _team(aec), seed=3)
    assert t1.returns == pytest.approx(t2.returns)
    assert [s.action for s in t1.steps] == [s.action for s in t2.steps]


def test_heuristic_beats_identical_up_policy():
    env = lang_pz.make("butterfly/pistonball-v0", **KW)
    heuristic = [rollout(env, _team(env), seed=s).team_return for s in range(3)]
    assert min(heuristic) > 400  # the ball reaches the left wall on every seed


def test_trajectory_is_flushed_as_it_is_written(tmp_path):
    env = lang_pz.make("butterfly/pistonball-v0", **KW)
    path = tmp_path / "t.jsonl"
    seen: list[int] = []
    with TrajectoryWriter(path) as w:
        rollout(env, _team(env), seed=0, writer=w, on_step=lambda: seen.append(len(path.read_text().splitlines())))
    assert seen[0] >= 1 + 5  # one state line and 5 agent steps on disk after the first step
    assert seen == sorted(seen) and len(set(seen)) == len(seen)
    kinds = [json.loads(line)["type"] for line in path.read_text().splitlines()]
    assert kinds[-1] == "episode_end" and kinds.count("state") == seen.__len__()


def test_read_trajectories_survives_a_cut_last_line(tmp_path):
    env = lang_pz.make("butterfly/pistonball-v0", **KW)
    path = tmp_path / "t.jsonl"
    with TrajectoryWriter(path) as w:
        full = rollout(env, {a: RandomPolicy(seed=i) for i, a in enumerate(env.possible_agents)}, seed=1, writer=w)
    text = path.read_text()
    path.write_text(text[: len(text) - 10])  # a kill in the middle of the last write
    (traj,) = read_trajectories(path)
    assert len(traj.steps) == len(full.steps)
    assert traj.returns == {}  # the episode_end record was the cut line


def test_policies_see_only_their_own_observation():
    env = lang_pz.make("butterfly/pistonball-v0", **KW)
    traj = rollout(env, _team(env), seed=0)
    for s in traj.steps:
        assert s.observation.startswith(f"You are {s.agent} ")
        assert s.observation != traj.states[s.step]
        assert "Piston heights" not in s.observation  # global state is for the critic only


def test_missing_policy_names_the_agent():
    env = lang_pz.make("butterfly/pistonball-v0", **KW)
    team = _team(env)
    del team["piston_3"]
    with pytest.raises(KeyError, match="piston_3"):
        rollout(env, team, seed=0)


def test_garbage_output_is_recorded_not_fatal():
    from lang_pz.policies.base import Decision, Policy

    class Babbler(Policy):
        def decide(self, observation, info=None):
            return Decision(action="I think... maybe left?", raw_output="I think... maybe left?")

    env = lang_pz.make("butterfly/pistonball-v0", **KW)
    traj = rollout(env, {a: Babbler() for a in env.possible_agents}, seed=0)
    assert all(s.parse_error and "no action word" in s.parse_error for s in traj.steps)
    assert all(s.action == 1 for s in traj.steps)  # the documented fallback: stay


@pytest.mark.parametrize("api", ["parallel", "aec"])
@pytest.mark.parametrize(("returned", "shown"), [("up", "returned 'up' (a str)"), (None, "returned None (a NoneType)")])
def test_a_decide_that_returns_no_decision_names_the_agent_the_value_and_the_fix(api, returned, shown):
    from lang_pz.error import LangPZError
    from lang_pz.policies.base import Policy

    class Bare(Policy):
        def decide(self, observation, info=None):
            return returned

    env = lang_pz.make("butterfly/pistonball-v0", api=api, **KW)
    team = _team(env)
    team["piston_2"] = Bare()
    with pytest.raises(LangPZError, match="Bare.decide\\(\\) " + shown.replace("(", "\\(").replace(")", "\\)")) as exc:
        rollout(env, team, seed=0)
    assert "agent 'piston_2'" in str(exc.value) and "return lang_pz.policies.Decision(action=" in str(exc.value)


def test_a_plain_function_as_a_policy_is_refused_naming_it():
    from lang_pz.error import LangPZError

    def push_up(observation, info=None):
        return "up"

    env = lang_pz.make("butterfly/pistonball-v0", **KW)
    team = _team(env)
    team["piston_1"] = push_up
    with pytest.raises(LangPZError, match="agent 'piston_1' is the function push_up .*subclass lang_pz.policies.Policy"):
        rollout(env, team, seed=0)
    team["piston_1"] = "up"
    with pytest.raises(LangPZError, match="agent 'piston_1' is 'up' \\(a str\\), not a lang_pz Policy"):
        rollout(env, team, seed=0)


# -- the episode lifecycle: same seed, same episode ---------------------------------------------


def test_a_reused_random_team_replays_the_same_seed_exactly():
    """Policies carry no random state across episodes: rollout resets them from the episode seed."""
    env = lang_pz.make("butterfly/pistonball-v0", **KW)
    team = {a: RandomPolicy() for a in env.possible_agents}  # no construction seed at all
    first = rollout(env, team, seed=7)
    rollout(env, team, seed=8)  # another episode in between advances nothing that matters
    again = rollout(env, team, seed=7)
    assert [s.raw_output for s in first.steps] == [s.raw_output for s in again.steps]
    assert first.returns == again.returns
    other = rollout(env, team, seed=8)
    assert [s.raw_output for s in other.steps] != [s.raw_output for s in first.steps]


def test_agents_of_one_episode_get_different_streams():
    env = lang_pz.make("butterfly/pistonball-v0", **KW)
    traj = rollout(env, {a: RandomPolicy() for a in env.possible_agents}, seed=0)
    per_agent = {a: [s.raw_output for s in traj.agent_steps(a)] for a in env.possible_agents}
    assert len({tuple(v) for v in per_agent.values()}) > 1


def test_reset_is_called_with_a_seed_derived_from_the_episode_seed():
    from lang_pz.policies.base import agent_seed

    class Recorder(PistonballHeuristic):
        def __init__(self):
            self.seeds = []

        def reset(self, seed=None):
            self.seeds.append(seed)

    env = lang_pz.make("butterfly/pistonball-v0", **KW)
    team = {a: Recorder() for a in env.possible_agents}
    rollout(env, team, seed=5)
    rollout(env, team, seed=None)
    for a, p in team.items():
        assert p.seeds == [agent_seed(5, a), None]


def test_aec_records_are_written_in_time_order(tmp_path):
    """An AEC step waits for its reward, but is never written before an earlier step."""
    from lang_pz.policies.oracle import MathOracle

    env = lang_pz.make("tasks/gsm8k-v0", source="demo")
    team = {a: MathOracle(env, a) for a in env.possible_agents}
    path = tmp_path / "t.jsonl"
    with TrajectoryWriter(path) as w:
        traj = rollout(env, team, seed=0, writer=w)
    steps = [json.loads(line)["step"] for line in path.read_text().splitlines() if json.loads(line)["type"] == "agent_step"]
    assert steps == sorted(steps) and len(steps) == len(traj.steps) >= 2
    assert [s.step for s in traj.steps] == sorted(s.step for s in traj.steps)


def test_raw_observation_is_an_explicit_recorded_opt_in():
    from lang_pz.policies.base import Decision, Policy

    class ReadsRaw(Policy):
        reads_raw_observation = True

        def decide(self, observation, info=None):
            raw = info["raw_observation"]
            return Decision(action="up", raw_output=f"shape {getattr(raw, 'shape', None)}")

    env = lang_pz.make("butterfly/pistonball-v0", **KW)
    team = {**_team(env), "piston_0": ReadsRaw()}
    traj = rollout(env, team, seed=0)
    raw_steps = traj.agent_steps("piston_0")
    assert raw_steps[0].raw_output.startswith("shape (")  # the image observation underneath
    assert all(s.meta.get("raw_observation") is True for s in raw_steps)
    assert not any(s.meta for s in traj.agent_steps("piston_1"))  # text policies: nothing recorded


def test_decision_threads_follow_what_the_backends_serve():
    from lang_pz.policies import LLMPolicy
    from lang_pz.rollout import decision_threads
    from lang_pz.test import ScriptedBackend

    free = ScriptedBackend(lambda r: "up")
    serial = ScriptedBackend(lambda r: "up")
    serial.max_concurrency = 1  # like the embedded model: one request at a time
    assert decision_threads({f"a{i}": LLMPolicy("Always push up.", free) for i in range(5)}) == 5
    assert decision_threads({"a": LLMPolicy("Always push up.", serial), "b": PistonballHeuristic()}) == 1
