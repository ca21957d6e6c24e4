"""LLMPolicy's sampling seed (the ``actor_temperature`` setting): greedy requests keep the
constructor's seed; sampled ones are seeded from the episode seed and the decision number."""

from __future__ import annotations

from lang_pz.policies import LLMPolicy
from lang_pz.test import ScriptedBackend
from lang_pz.training import TrainConfig
from lang_pz.training.team import TeamSpec

INFO = {"legal_actions": ["down", "stay", "up"]}


def _seeds(policy: LLMPolicy, episode_seed: int, decisions: int = 3) -> list[int]:
    policy.reset(episode_seed)
    out = []
    for _ in range(decisions):
        out.append(policy.build_request({"text": "obs"}, INFO).seed)
        policy.decide({"text": "obs"}, INFO)
    return out


def test_sampled_decisions_are_seeded_from_the_episode_and_greedy_ones_are_not():
    backend = ScriptedBackend(["up"] * 100)  # a scripted stand-in: the replies do not matter here
    sampled = LLMPolicy("Always push up.", backend, temperature=0.7, seed=3)
    a, b, c = _seeds(sampled, 0), _seeds(sampled, 0), _seeds(sampled, 1)
    assert a == b  # same episode seed, same samples
    assert a != c and len(set(a)) == 3  # another episode, and each decision, samples anew
    greedy = LLMPolicy("Always push up.", backend, seed=3)
    assert _seeds(greedy, 0) == _seeds(greedy, 1) == [3, 3, 3]


def test_actor_temperature_reaches_the_team():
    cfg = TrainConfig(env_kwargs={"n_pistons": 5}, actor_temperature=0.5, seed=7)
    team = TeamSpec({"piston_0": "Always push up."}, cfg, ScriptedBackend(["up"])).llm_team()
    assert team["piston_0"].temperature == 0.5 and team["piston_0"].seed == 7


def test_a_fast_forward_counts_the_skipped_decisions_in_the_sampling_seed():
    backend = ScriptedBackend(["up"] * 100)
    whole = _seeds(LLMPolicy("Always push up.", backend, temperature=0.7, seed=3), 4, decisions=5)
    skipping = LLMPolicy("Always push up.", backend, temperature=0.7, seed=3)
    skipping.reset(4)
    assert skipping.fast_forward([None, None, None])  # type: ignore[list-item]  # only counted
    assert skipping.build_request({"text": "obs"}, INFO).seed == whole[3]
    skipping.decide({"text": "obs"}, INFO)
    assert skipping.build_request({"text": "obs"}, INFO).seed == whole[4]
