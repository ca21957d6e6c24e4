"""PettingZoo's Pistonball image tutorials (SB3's ``sb3_pistonball_vector.py``, CleanRL's
``cleanrl.py``), shortened, with the diffs docs/interop.md shows: lang_pz's Pistonball through
``to_vector_env(..., observation="raw")`` gives PettingZoo's own images, so SuperSuit's image
wrappers and the tutorials' CNNs run unchanged (fewer pistons, cycles and steps here)."""

from __future__ import annotations

import importlib.util
import warnings

import numpy as np
import pytest

import lang_pz
from lang_pz.interop import to_vector_env

needs_sb3 = pytest.mark.skipif(importlib.util.find_spec("stable_baselines3") is None, reason="pip install 'lang_pz[sb3]'")

#: the SB3 tutorial's env_kwargs, n_pistons and max_cycles shortened
ENV_KWARGS = {
    "n_pistons": 5,
    "time_penalty": -0.1,
    "continuous": True,
    "random_drop": True,
    "random_rotate": True,
    "ball_mass": 0.75,
    "ball_friction": 0.3,
    "ball_elasticity": 1.5,
    "max_cycles": 25,
}


def test_raw_observations_are_pettingzoos_images_with_the_text_beside():
    from pettingzoo.butterfly import pistonball_v6

    env = to_vector_env(lang_pz.make("butterfly/pistonball-v0", api="parallel", **ENV_KWARGS), observation="raw")
    native = pistonball_v6.parallel_env(**ENV_KWARGS)
    obs, _ = env.reset(seed=3)
    raw, _ = native.reset(seed=3)
    assert env.observation_space("piston_0") == native.observation_space("piston_0")
    for _ in range(3):
        assert all(np.array_equal(obs[a], raw[a]) for a in raw)  # the same images, step by step
        actions = {a: np.array([0.5], dtype=np.float32) for a in env.agents}
        obs, *_ = env.step(actions)
        raw, *_ = native.step(actions)
    assert env.text("piston_0").startswith("You are piston_0")


@pytest.fixture
def one_torch_thread():
    """One intra-op thread: on a shared 2-core machine torch's threads otherwise wait on each other."""
    torch = pytest.importorskip("torch")
    saved = torch.get_num_threads()
    torch.set_num_threads(1)
    yield torch
    torch.set_num_threads(saved)


@needs_sb3
def test_sb3_pistonball_vector_tutorial(one_torch_thread):
    import supersuit as ss
    from pettingzoo.utils.conversions import parallel_to_aec
    from stable_baselines3 import PPO
    from stable_baselines3.ppo import CnnPolicy

    env_id = "butterfly/pistonball-v0"
    env = to_vector_env(lang_pz.make(env_id, api="parallel", **ENV_KWARGS), observation="raw")  # the diff
    env = ss.color_reduction_v0(env, mode="B")
    env = ss.resize_v1(env, x_size=84, y_size=84)
    env = ss.frame_stack_v1(env, 3)
    env.reset(seed=0)
    env = ss.pettingzoo_env_to_vec_env_v1(env)
    env = ss.concat_vec_envs_v1(env, 2, num_cpus=1, base_class="stable_baselines3")  # tutorial: 4 copies, 2 CPUs
    model = PPO(CnnPolicy, env, gamma=0.95, n_steps=16, batch_size=32, n_epochs=1, device="cpu")
    model.learn(total_timesteps=160)
    assert model.num_timesteps >= 160
    env.close()

    # the tutorial's evaluation, in the AEC API
    short = {**ENV_KWARGS, "max_cycles": 10}
    env = parallel_to_aec(to_vector_env(lang_pz.make(env_id, api="parallel", **short), observation="raw"))  # the diff
    env = ss.color_reduction_v0(env, mode="B")
    env = ss.resize_v1(env, x_size=84, y_size=84)
    env = ss.frame_stack_v1(env, 3)
    rewards = dict.fromkeys(env.possible_agents, 0)
    steps = 0
    for i in range(1):
        env.reset(seed=i)
        for _agent in env.agent_iter():
            obs, reward, termination, truncation, info = env.last()
            if termination or truncation:
                for a in env.agents:
                    rewards[a] += env.rewards[a]
                break
            env.step(model.predict(obs, deterministic=True)[0])
            steps += 1
            assert info == {"fallback": False}
    assert steps >= 5 and all(np.isfinite(list(rewards.values())))


def test_cleanrl_pistonball_tutorial(one_torch_thread):
    """The tutorial's env setup, its CNN agent, one episode collected and one PPO update."""
    torch = one_torch_thread
    import torch.nn as nn
    from supersuit import color_reduction_v0, frame_stack_v1, resize_v1
    from torch.distributions.categorical import Categorical

    class Agent(nn.Module):  # the tutorial's
        def __init__(self, num_actions):
            super().__init__()
            self.network = nn.Sequential(
                nn.Conv2d(4, 32, 3, padding=1),
                nn.MaxPool2d(2),
                nn.ReLU(),
                nn.Conv2d(32, 64, 3, padding=1),
                nn.MaxPool2d(2),
                nn.ReLU(),
                nn.Conv2d(64, 128, 3, padding=1),
                nn.MaxPool2d(2),
                nn.ReLU(),
                nn.Flatten(),
                nn.Linear(128 * 8 * 8, 512),
                nn.ReLU(),
            )
            self.actor = nn.Linear(512, num_actions)
            self.critic = nn.Linear(512, 1)

        def get_action_and_value(self, x, action=None):
            hidden = self.network(x / 255.0)
            probs = Categorical(logits=self.actor(hidden))
            if action is None:
                action = probs.sample()
            return action, probs.log_prob(action), probs.entropy(), self.critic(hidden)

    def batchify_obs(obs):
        return torch.tensor(np.stack([obs[a] for a in obs], axis=0).transpose(0, -1, 1, 2))

    torch.manual_seed(0)
    max_cycles, stack_size, frame_size = 10, 4, (64, 64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        env = to_vector_env(  # the diff (n_pistons shortened)
            lang_pz.make(
                "butterfly/pistonball-v0",
                api="parallel",
                n_pistons=5,
                render_mode="rgb_array",
                continuous=False,
                max_cycles=max_cycles,
            ),
            observation="raw",
        )
    env = color_reduction_v0(env)
    env = resize_v1(env, frame_size[0], frame_size[1])
    env = frame_stack_v1(env, stack_size=stack_size)
    num_actions = env.action_space(env.possible_agents[0]).n
    assert env.observation_space(env.possible_agents[0]).shape == (64, 64, 4)
    agent = Agent(num_actions)
    optimizer = torch.optim.Adam(agent.parameters(), lr=0.001, eps=1e-5)
    next_obs, info = env.reset(seed=None)
    observations, actions, logprobs, returns = [], [], [], []
    with torch.no_grad():
        for _step in range(max_cycles):
            obs = batchify_obs(next_obs)
            action, logprob, _, _ = agent.get_action_and_value(obs)
            next_obs, rewards, terms, truncs, infos = env.step(
                {a: action[i].item() for i, a in enumerate(env.possible_agents)}
            )
            observations.append(obs)
            actions.append(action)
            logprobs.append(logprob)
            returns.append(torch.tensor([rewards[a] for a in env.possible_agents]))
            if any(terms.values()) or any(truncs.values()):
                break
    b_obs, b_actions = torch.cat(observations), torch.cat(actions)
    advantages = torch.cat(returns).float()
    _, newlogprob, entropy, value = agent.get_action_and_value(b_obs, b_actions)
    loss = -(advantages * (newlogprob - torch.cat(logprobs)).exp()).mean() - 0.1 * entropy.mean() + value.pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    before = agent.actor.weight.detach().clone()
    optimizer.step()
    assert len(observations) >= 5 and torch.isfinite(loss) and not torch.equal(before, agent.actor.weight)
