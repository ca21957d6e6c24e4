"""Re-runs that start at their divergence (lang_pz.snapshots) equal re-runs played whole.

For every probe of a few seeded episodes per environment, the re-run from the factual episode's
state at the probe's divergence (a snapshot where the env copies its state exactly: Overcooked,
the task envs; the recorded actions replayed elsewhere: Pistonball) gives the same
observations, actions, parse errors, rewards, returns, state texts and objective as the same
team playing the whole episode from the seed (the prefix replay lang_pz did before). No LLM: the
LLM agents ask a :class:`ScriptedBackend` whose reply is a function of the request, and are
answered from the record where they ask what they asked there (lang_pz.policies.replay).
"""

from __future__ import annotations

import hashlib
import warnings
from unittest import mock

import pytest

import lang_pz
from lang_pz import snapshots
from lang_pz.critics.counterfactual import Probe, plan_probes, probe_team, run_probe
from lang_pz.objectives import make_objective
from lang_pz.policies.base import Decision, Policy
from lang_pz.policies.faulty import FaultyPolicy
from lang_pz.policies.llm import LLMPolicy
from lang_pz.policies.overcooked import greedy_skill
from lang_pz.policies.random import RandomPolicy
from lang_pz.policies.scripted import ConstantPolicy, PistonballHeuristic
from lang_pz.rollout import rollout
from lang_pz.snapshots import Prefixes, PrefixWarning, exact_snapshots, rerun
from lang_pz.test import ScriptedBackend
from lang_pz.trajectory import Trajectory

PISTONBALL = {"n_pistons": 5, "hold": 5, "max_cycles": 40}  # 8 decisions an episode
OVERCOOKED = {"horizon": 12, "split": "train"}


def _reply(request) -> str:
    """A deterministic stand-in model: a choice (or a text) picked by a hash of the prompt."""
    prompt = request.prompt if request.prompt is not None else request.messages[-1].content
    h = int(hashlib.sha256(prompt.encode()).hexdigest(), 16)
    if request.choices is not None:
        return request.choices[h % len(request.choices)]
    return ["Answer: Vell", "#### 25", "Evidence: 1.1, 2.2", "\\boxed{5}"][h % 4]


def llm_team(env) -> dict:
    backend = ScriptedBackend(_reply)
    return {a: LLMPolicy(f"Play well, {a}.", backend) for a in env.possible_agents}


def played_whole(env, team, factual: Trajectory) -> Trajectory:
    return rollout(env, team, seed=factual.seed, episode=factual.episode)


def record(traj: Trajectory) -> tuple:
    """What must be equal: every step but its latency (and the reply's surrounding spaces: a
    replaced agent's prefix is the recorded reply there, the replacement's word when played)."""
    steps = [
        (s.step, s.agent, s.observation, s.raw_output.strip(), s.action, s.parse_error, s.reward, s.legal_actions)
        for s in traj.steps
    ]
    return steps, traj.states, traj.returns


def check_probes(env, team_of, seeds, probes_of, objective=None) -> int:
    """Each probe's re-run from its divergence equals the same team's whole episode; returns how
    many re-runs started after step 0 (the ones this module serves), checking that they did."""
    objective = objective or make_objective("team_return", [])
    started = []
    real = snapshots.rollout

    def spy(*args, start=None, **kw):
        started.append(start is not None)
        return real(*args, start=start, **kw)

    later = 0
    for seed in seeds:
        factual = rollout(env, team_of(env), seed=seed, episode=seed)
        for probe in probes_of(factual):
            k = probe.divergence(factual)
            later += k > 0
            with warnings.catch_warnings(), mock.patch.object(snapshots, "rollout", spy):
                warnings.simplefilter("error", PrefixWarning)  # a silent fallback would prove nothing
                fast = run_probe(env, probe_team(team_of(env), probe, factual=factual), probe, factual, objective)
            assert started.pop() == (k > 0)
            whole = rollout(env, probe_team(team_of(env), probe, factual=factual), seed=seed, episode=seed)
            assert fast.value == round(objective(whole), 3), (seed, probe)
            assert record(snapshots.rerun(env, probe_team(team_of(env), probe, factual=factual), factual, k)) == record(
                whole
            ), (seed, probe)
    return later


def word_and_step_probes(factual: Trajectory) -> list[Probe]:
    """Every alternative word at each single decision, and every word at every decision."""
    groups = [[a] for a in factual.agents[:2]]
    probes = plan_probes(factual, groups, ["alternatives"])
    decisions = len(factual.agent_steps(factual.agents[0]))
    for k in range(1, decisions, 3):
        probes += plan_probes(factual, groups[:1], ["alternatives", "random", "default"], steps=[k])
    return probes


# -- the environments -----------------------------------------------------------------------


def test_pistonball_reruns_from_the_replayed_record_equal_whole_reruns():
    env = lang_pz.make("butterfly/pistonball-v0", **PISTONBALL)
    assert not exact_snapshots(env)  # pymunk's copy is not bit for bit: the record is replayed
    mixed = lambda e: {**llm_team(e), "piston_2": PistonballHeuristic()}  # noqa: E731
    assert (
        check_probes(env, mixed, [1], word_and_step_probes) > 0
    )  # how many depends on the stand-in episode (5 since the prompt shows each word twice)


def test_pistonball_aec_reruns_equal_whole_reruns():
    env = lang_pz.make("butterfly/pistonball-v0", api="aec", **PISTONBALL)
    probes = lambda t: plan_probes(t, [["piston_1"], ["piston_3"]], ["alternatives"], steps=[2])  # noqa: E731
    assert check_probes(env, llm_team, [0], probes) > 0


@pytest.mark.parametrize("api", ["parallel", "aec"])
def test_overcooked_reruns_from_snapshots_equal_whole_reruns(api):
    env = lang_pz.make("overcooked/cramped_room-v0", api=api, **OVERCOOKED)
    assert exact_snapshots(env) == (api == "parallel")  # AEC: PettingZoo's conversion has state of its own
    assert check_probes(env, llm_team, [3], word_and_step_probes) > 5


def sampled_team(env) -> dict:
    """LLM agents sampling at temperature 0.7 from a stand-in model whose reply depends on the
    request's seed too (a sampled decision's seed: the episode's and the decision's number)."""

    def reply(request) -> str:
        prompt = request.prompt if request.prompt is not None else request.messages[-1].content
        h = int(hashlib.sha256(f"{prompt}|{request.seed}".encode()).hexdigest(), 16)
        return request.choices[h % len(request.choices)]

    backend = ScriptedBackend(reply)
    return {a: LLMPolicy(f"Play well, {a}.", backend, temperature=0.7, seed=5) for a in env.possible_agents}


@pytest.mark.parametrize("env_id", ["butterfly/pistonball-v0", "overcooked/cramped_room-v0"])
def test_sampled_decisions_after_the_divergence_get_the_seeds_of_the_whole_rerun(env_id):
    kwargs = PISTONBALL if env_id.startswith("butterfly") else OVERCOOKED
    env = lang_pz.make(env_id, **kwargs)
    assert check_probes(env, sampled_team, [2], word_and_step_probes) > 5
    # the kept agents are answered from the record (a sampled request matches it at its own
    # decision), and each answer moves the policy's decision count on as an asked one would
    factual = rollout(env, sampled_team(env), seed=2, episode=2)
    probe = Probe((factual.agents[0],), "random", (3,))
    team = probe_team(sampled_team(env), probe, factual=factual)
    rerun(env, team, factual, probe.divergence(factual))
    kept = team[factual.agents[1]]
    assert kept.replayed > 0 and kept.policy._decisions == kept.decisions == len(factual.agent_steps(factual.agents[1]))


class GreedySkill(Policy):
    """overcooked_ai's greedy choice of skill, read from the state (no memory: it can skip)."""

    def __init__(self, env, agent: str) -> None:
        self.game, self.index = env.unwrapped, env.unwrapped.index(agent)

    def decide(self, observation, info=None) -> Decision:
        word = greedy_skill(self.game.mdp, self.game.game_state, self.index)
        word = word if word in info["legal_actions"] else "wait 1"
        return Decision(word, word)

    def fast_forward(self, steps) -> bool:
        return True


def test_overcooked_skills_reruns_from_snapshots_equal_whole_reruns():
    env = lang_pz.make("overcooked/cramped_room-v0", actions="macro", horizon=60, shaping_factor=1.0)
    team = lambda e: {**llm_team(e), "player_0": GreedySkill(e, "player_0")}  # noqa: E731
    factual = rollout(env, team(env), seed=0)
    assert factual.team_return > 20  # soups delivered: the score and the pots are in the state
    probes = lambda t: plan_probes(t, [["player_0"]], ["alternatives"], steps=[3])  # noqa: E731
    assert check_probes(env, team, [0], probes) > 0


@pytest.mark.parametrize("env_id", ["tasks/hotpotqa-v0", "tasks/gsm8k-v0", "tasks/math500-v0"])
def test_task_reruns_from_snapshots_equal_whole_reruns(env_id):
    env = lang_pz.make(env_id, source="demo")
    assert exact_snapshots(env)

    def probes(factual: Trajectory) -> list[Probe]:
        last = factual.steps[-1].agent  # the last speaker: the re-run starts at its turn
        return [Probe((last,), w, None) for w in ("Answer: Paris", "#### 7", "\\boxed{1}", "Correct")]

    assert check_probes(env, llm_team, [0, 1] if "math" not in env_id else [2], probes) > 0


# -- snapshots themselves ---------------------------------------------------------------------


def test_an_overcooked_snapshot_continues_exactly_and_can_be_restored_twice():
    env = lang_pz.make("overcooked/cramped_room-v0", **OVERCOOKED)
    other = lang_pz.make("overcooked/cramped_room-v0", **OVERCOOKED)
    factual = rollout(env, llm_team(env), seed=2)
    env.reset(seed=2)
    for t in range(4):
        env.step({s.agent: s.raw_output for s in factual.steps if s.step == t})
    snap = env.snapshot()
    for target in (env, other, other):  # another instance, and the same snapshot again
        target.restore(snap)
        team = llm_team(target)
        for t in range(4, 12):
            obs, rewards, *_ = target.step({s.agent: s.raw_output for s in factual.steps if s.step == t})
            assert [rewards[s.agent] for s in factual.steps if s.step == t] == [
                s.reward for s in factual.steps if s.step == t
            ]
            assert all(obs[s.agent]["text"] == s.observation for s in factual.steps if s.step == t + 1)
        assert team  # built for the restored env like any other


def test_prefixes_are_played_once_per_step_and_shared_by_the_probes_that_start_there(monkeypatch):
    import lang_pz.snapshots as snapshots

    env = lang_pz.make("overcooked/cramped_room-v0", **OVERCOOKED)
    factual = rollout(env, llm_team(env), seed=0)
    played = []
    original = snapshots.replay_prefix
    monkeypatch.setattr(
        snapshots, "replay_prefix", lambda e, f, k, s=None: played.append((k, s and s.t)) or original(e, f, k, s)
    )
    for k in (3, 3, 6, 3, 6, 9):
        probe = Probe(("player_0",), "random", (k,))
        run_probe(env, probe_team(llm_team(env), probe, factual=factual), probe, factual)
    assert played == [(3, None), (6, 3), (9, 6)]  # each step once, each from the nearest earlier snapshot
    assert len(Prefixes.of(factual).saved) == 3


def test_a_team_that_cannot_skip_its_decisions_plays_the_whole_episode():
    env = lang_pz.make("overcooked/cramped_room-v0", **OVERCOOKED)
    factual = rollout(env, {**llm_team(env), "player_1": RandomPolicy(seed=3)}, seed=1)
    probe = Probe(("player_0",), "random", (5,))
    team = probe_team({**llm_team(env), "player_1": RandomPolicy(seed=3)}, probe, factual=factual)
    assert not team["player_1"].fast_forward(factual.agent_steps("player_1")[:5])
    fast = rerun(env, team, factual, probe.divergence(factual))
    whole = played_whole(
        env, probe_team({**llm_team(env), "player_1": RandomPolicy(seed=3)}, probe, factual=factual), factual
    )
    assert record(fast) == record(whole)
    assert not Prefixes.of(factual).saved


def test_a_record_that_does_not_replay_falls_back_to_the_whole_episode_with_a_warning():
    env = lang_pz.make("butterfly/pistonball-v0", **PISTONBALL)
    factual = rollout(env, llm_team(env), seed=0)
    factual.steps[3].reward += 1.0  # not what the env gives
    probe = Probe(("piston_0",), "random", (4,))
    with pytest.warns(PrefixWarning, match="reward"):
        fast = rerun(env, probe_team(llm_team(env), probe, factual=factual), factual, probe.divergence(factual))
    assert record(fast) == record(played_whole(env, probe_team(llm_team(env), probe, factual=factual), factual))


def test_divergence_is_the_first_decision_that_may_change():
    factual = rollout(
        lang_pz.make("butterfly/pistonball-v0", **PISTONBALL),
        llm_team(lang_pz.make("butterfly/pistonball-v0", **PISTONBALL)),
        seed=0,
    )
    words = [s.raw_output.strip() for s in factual.agent_steps("piston_1")]
    first_other = next(k for k, w in enumerate(words) if w != words[0])
    assert Probe(("piston_1",), words[0], None).divergence(factual) == first_other
    assert Probe(("piston_1",), "random", (2, 5)).divergence(factual) == 2
    assert Probe(("piston_1",), "previous", None).divergence(factual) == 0
    assert Probe((), "no change", None).divergence(factual) == 0  # the null probe replays it all
    assert Probe(("piston_1",), "default", (3,)).divergence(factual) == 3


def test_a_faulty_policy_skips_its_decisions_and_keeps_its_log():
    base = ConstantPolicy("up")
    steps = rollout(
        lang_pz.make("butterfly/pistonball-v0", **PISTONBALL),
        {a: ConstantPolicy("up") for a in ("piston_0", "piston_1", "piston_2", "piston_3", "piston_4")},
        seed=0,
    ).agent_steps("piston_0")
    harmful = FaultyPolicy(base, "harmful", [1, 4], action="up")
    assert harmful.fast_forward(steps[:3])
    assert [(r.decision, r.action, r.replaced) for r in harmful.log] == [(0, "up", False), (1, "up", True), (2, "up", False)]
    assert not FaultyPolicy(base, "random", [1], seed=0).fast_forward(steps[:3])  # a draw would be skipped
    assert FaultyPolicy(base, "random", [5], seed=0).fast_forward(steps[:3])
