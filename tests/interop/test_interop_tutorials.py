"""PettingZoo's own turn-based tutorials, shortened, on lang_pz's language games through
lang_pz.interop.to_masked_aec_env, each with the diff docs/interop.md shows: the loops use the
real libraries (sb3-contrib's MaskablePPO, Tianshou 0.5's PettingZooEnv/Collector/DQN, the
LangChain tutorial's env loop with a scripted "LLM" that reads the text, the env calls of
AgileRL's connect-four curriculum) and index the env exactly as the tutorials do."""

from __future__ import annotations

import importlib.util
import re

import gymnasium as gym
import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test
from pettingzoo.utils import BaseWrapper

import lang_pz
from lang_pz.error import LangPZError
from lang_pz.interop import to_masked_aec_env

GAMES = ["classic/connect_four-v0", "classic/tictactoe-v0"]


def _missing(module: str) -> bool:
    return importlib.util.find_spec(module) is None


@pytest.mark.parametrize("env_id", GAMES)
def test_masked_env_passes_pettingzoo_api_and_seed_tests(env_id):
    env = to_masked_aec_env(lang_pz.make(env_id))
    api_test(env, num_cycles=30)
    seed_test(lambda: to_masked_aec_env(lang_pz.make(env_id)), num_cycles=30)
    space = env.observation_space(env.possible_agents[0])
    assert set(space.spaces) == {"observation", "action_mask"}
    assert isinstance(space["action_mask"], gym.spaces.MultiBinary)


def test_masked_env_mask_and_fallback_follow_the_game():
    env = to_masked_aec_env(lang_pz.make("classic/connect_four-v0"))
    env.reset(seed=0)
    obs, _, _, _, info = env.last()
    assert obs["action_mask"].tolist() == [1] * 7 and info == {"fallback": False}
    assert env.observe("player_1")["action_mask"].tolist() == [0] * 7  # not its turn, as in PettingZoo
    for _ in range(6):  # fill column 1 (index 0), the players alternating
        env.step(0)
    obs, _, _, _, _ = env.last()
    assert obs["action_mask"].tolist() == [0, 1, 1, 1, 1, 1, 1]
    env.step(0)  # a full column: the game's fallback plays the leftmost legal column
    assert env.infos["player_0"]["fallback"] is True
    with pytest.raises(LangPZError, match=r"index in 0\.\.6, got 7"):
        env.step(7)
    text = to_masked_aec_env(lang_pz.make("classic/tictactoe-v0"), keep_text=True)
    text.reset(seed=0)
    assert "Legal moves" in text.observe("player_1")["observation"]


# -- SB3 (sb3-contrib MaskablePPO): PettingZoo's tutorials/SB3/connect_four ---------------------------
class MaskedSelfPlay(BaseWrapper, gym.Env):
    """The tutorial's adapter of a PettingZoo AEC env to SB3: one Gymnasium env in which the
    current player acts, the mask read from ``observe(agent)["action_mask"]``."""

    def reset(self, seed=None, options=None):
        super().reset(seed, options)
        self.observation_space = super().observation_space(self.possible_agents[0])["observation"]
        self.action_space = super().action_space(self.possible_agents[0])
        return self.observe(self.agent_selection), {}

    def step(self, action):
        mover = self.agent_selection
        super().step(action)
        return (
            self.observe(self.agent_selection),
            self._cumulative_rewards[mover],
            self.terminations[mover],
            self.truncations[mover],
            self.infos[mover],
        )

    def observe(self, agent):
        return super().observe(agent)["observation"]

    def action_mask(self):
        return super().observe(self.agent_selection)["action_mask"]


@pytest.mark.skipif(_missing("sb3_contrib"), reason="sb3-contrib not installed: pip install 'lang_pz[sb3]'")
def test_sb3_maskable_ppo_connect_four_tutorial():
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
    from sb3_contrib.common.wrappers import ActionMasker

    env = MaskedSelfPlay(to_masked_aec_env(lang_pz.make("classic/connect_four-v0"), observation="raw"))  # the diff
    env.reset(seed=0)
    env = ActionMasker(env, lambda e: e.action_mask())
    model = MaskablePPO(MaskableActorCriticPolicy, env, n_steps=64, batch_size=32, n_epochs=1, seed=0, device="cpu")
    model.learn(total_timesteps=128)
    assert model.num_timesteps >= 128

    game = to_masked_aec_env(lang_pz.make("classic/connect_four-v0"), observation="raw")  # evaluation vs random
    outcomes, moves = [], 0
    for i in range(3):
        game.reset(seed=i)
        game.action_space(game.possible_agents[0]).seed(i)
        for agent in game.agent_iter():
            obs, _, termination, truncation, info = game.last()
            observation, action_mask = obs.values()
            assert info["fallback"] is False  # every move made was legal
            if termination or truncation:
                outcomes.append(dict(game.rewards))
                break
            if agent == game.possible_agents[0]:
                act = game.action_space(agent).sample(action_mask)
            else:
                act = int(model.predict(observation, action_masks=action_mask, deterministic=True)[0])
            assert action_mask[act] == 1
            game.step(act)
            moves += 1
    assert len(outcomes) == 3 and moves >= 3 * 7  # a connect-four game takes at least 7 moves
    assert all(sum(o.values()) == 0 for o in outcomes)


# -- Tianshou 0.5: PettingZoo's tutorials/Tianshou ---------------------------------------------------
needs_tianshou = pytest.mark.skipif(_missing("tianshou"), reason="tianshou not installed: pip install 'lang_pz[tianshou]'")


@needs_tianshou
@pytest.mark.parametrize("env_id", GAMES)
def test_tianshou_random_policies_collect_episodes(env_id):
    from tianshou.data import Collector
    from tianshou.env import DummyVectorEnv, PettingZooEnv
    from tianshou.policy import MultiAgentPolicyManager
    from tianshou.policy import RandomPolicy as TianshouRandom

    env = PettingZooEnv(to_masked_aec_env(lang_pz.make(env_id), observation="raw"))
    policies = MultiAgentPolicyManager([TianshouRandom(), TianshouRandom()], env)
    result = Collector(policies, DummyVectorEnv([lambda: env])).collect(n_episode=3)
    assert result["n/ep"] == 3
    least = 7 if "connect_four" in env_id else 5
    assert all(n >= least for n in result["lens"])
    assert all(sorted(r) in ([-1.0, 1.0], [0.0, 0.0]) for r in result["rews"].tolist())


@needs_tianshou
def test_tianshou_dqn_trains_on_tictactoe():
    import torch
    from tianshou.data import Collector, VectorReplayBuffer
    from tianshou.env import DummyVectorEnv, PettingZooEnv
    from tianshou.policy import DQNPolicy, MultiAgentPolicyManager
    from tianshou.policy import RandomPolicy as TianshouRandom
    from tianshou.trainer import offpolicy_trainer
    from tianshou.utils.net.common import Net

    def make_env():
        return PettingZooEnv(to_masked_aec_env(lang_pz.make("classic/tictactoe-v0"), observation="raw"))  # the diff

    env = make_env()
    torch.manual_seed(0)
    net = Net(
        state_shape=env.observation_space["observation"].shape,
        action_shape=env.action_space.n,
        hidden_sizes=[64, 64],
        device="cpu",
    )
    learner = DQNPolicy(
        model=net,
        optim=torch.optim.Adam(net.parameters(), lr=1e-3),
        discount_factor=0.9,
        estimation_step=3,
        target_update_freq=50,
    )
    policy = MultiAgentPolicyManager([TianshouRandom(), learner], env)
    train_envs, test_envs = DummyVectorEnv([make_env] * 2), DummyVectorEnv([make_env] * 2)
    train_envs.seed(1)
    test_envs.seed(1)
    train = Collector(policy, train_envs, VectorReplayBuffer(2_000, 2), exploration_noise=True)
    train.collect(n_step=64)
    before = [p.detach().clone() for p in net.parameters()]
    result = offpolicy_trainer(
        policy=policy,
        train_collector=train,
        test_collector=Collector(policy, test_envs),
        max_epoch=1,
        step_per_epoch=100,
        step_per_collect=20,
        episode_per_test=2,
        batch_size=32,
        update_per_step=0.2,
        test_in_train=False,
        reward_metric=lambda rews: rews[:, 1],
    )
    assert result["train_step"] >= 100
    assert any(not torch.equal(a, b) for a, b in zip(before, net.parameters()))  # DQN really updated


# -- LangChain: PettingZoo's tutorials/LangChain, the env loop without an LLM API -------------------
def _scripted_llm(text: str) -> str:
    """An "LLM" that follows the text: it wants the centre, else the first square listed, and
    answers in the tutorial's format with the index the text gives for that square."""
    moves = dict(re.findall(r"(\d+): (square \d)", text.rsplit("\n", 1)[-1]))
    wanted = next((i for i, m in moves.items() if m == "square 5"), next(iter(moves)))
    return f"Action: {wanted}"


def test_langchain_tutorial_loop_plays_the_moves_its_text_names():
    """The tutorial's ``main`` loop with its ``ActionMaskAgent``: the "LLM" reads the board's text
    in the observation and answers ``Action: <int>``; player_1 (X) wants the centre, so the centre
    must be where X lands; player_2 is the tutorial's fallback ``action_space(name).sample(mask)``."""
    env = to_masked_aec_env(lang_pz.make("classic/tictactoe-v0"), keep_text=True)  # the diff
    for episode in range(3):
        env.reset(seed=episode)
        env.action_space("player_2").seed(episode)
        moves = 0
        for agent_name in env.agent_iter():
            observation, reward, termination, truncation, info = env.last()
            message = f"Observation: {observation}\nReward: {reward}"  # what the tutorial sends the LLM
            if termination or truncation:
                action = None
            elif agent_name == "player_1":
                action = int(re.match(r"Action: (.*)", _scripted_llm(observation["observation"])).group(1))
            else:
                action = env.action_space(agent_name).sample(observation["action_mask"])
            if action is not None:
                assert observation["action_mask"][action] == 1 and not info["fallback"] and "Legal moves" in message
                moves += 1
            env.step(action)
            if moves == 1:
                assert env.unwrapped.board.squares[4] == 1  # X took the centre: square 5 of the text
        assert 5 <= moves <= 9 and sum(env.rewards.values()) == 0


# -- AgileRL: tutorials/AgileRL/agilerl_dqn_curriculum.py, the env calls it makes ---------------------
def test_agilerl_curriculum_env_calls_work():
    """AgileRL 2.2.1 itself needs NumPy 1 and torch 2.5 (not in lang_pz's venv); what its connect-four
    curriculum does with the env runs here as written: spaces per agent, ``observation["observation"]``
    flipped as PettingZoo's 6x7x2 planes (``transform_and_flip``), masks sampled, the opponent reading
    ``env.env.board``."""
    env = to_masked_aec_env(lang_pz.make("classic/connect_four-v0"), observation="raw")  # the diff
    env.reset()
    observation_spaces = [env.observation_space(agent) for agent in env.agents]
    assert observation_spaces[0]["observation"].shape == (6, 7, 2)
    assert [env.action_space(agent).n for agent in env.agents] == [7, 7]
    rng = np.random.default_rng(0)
    for game in range(3):
        env.reset(seed=game)
        final = {}
        for agent in env.agent_iter():
            observation, reward, done, truncation, _ = env.last()
            if done or truncation:
                final[agent] = reward
                env.step(None)
                continue
            state = np.moveaxis(observation["observation"], [-1], [-3])  # transform_and_flip's first line
            state_flipped = np.expand_dims(np.flip(state, 2), 0)
            assert state.shape == (2, 6, 7) and state_flipped.shape == (1, 2, 6, 7)
            board = np.array(env.env.board).reshape(6, 7)  # the tutorial's Opponent
            assert int((board != 0).sum()) == int(observation["observation"].sum())
            mask = observation["action_mask"]
            env.step(int(rng.choice(np.flatnonzero(mask))))
        assert sorted(final.values()) in ([-1, 1], [0, 0])
