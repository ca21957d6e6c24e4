"""Each supported RL library trains for a few hundred steps on a lang_pz language env through
lang_pz.interop (skipped, with the install command, only when the library's extra is missing)."""

from __future__ import annotations

import importlib.util
import runpy
from pathlib import Path

import numpy as np
import pytest

import lang_pz
import lang_pz.interop

ROOT = Path(__file__).resolve().parents[2]


def _missing(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is None
    except ImportError:  # e.g. ray core without rllib's dependencies: ray.rllib cannot import
        return True


needs_sb3 = pytest.mark.skipif(
    _missing("stable_baselines3"), reason="stable-baselines3 not installed: pip install 'lang_pz[sb3]'"
)
needs_torchrl = pytest.mark.skipif(_missing("torchrl"), reason="torchrl not installed: pip install 'lang_pz[torchrl]'")


def _sb3_ppo(seed: int, steps: int = 240):
    from stable_baselines3 import PPO

    from lang_pz.interop import sb3_vec_env, to_vector_env

    env = to_vector_env(lang_pz.make("butterfly/pistonball-v0", n_pistons=3, hold=5, max_cycles=50))
    model = PPO(
        "MlpPolicy",
        sb3_vec_env(env, n_envs=2),
        n_steps=40,
        batch_size=60,
        n_epochs=2,
        seed=seed,
        policy_kwargs={"net_arch": [32]},
        device="cpu",
    )
    return model.learn(steps)


@needs_sb3
def test_sb3_ppo_trains_on_a_text_env_and_is_seedable():
    import torch

    a, b = _sb3_ppo(seed=3), _sb3_ppo(seed=3)
    assert a.num_timesteps >= 240
    pa, pb = a.policy.state_dict(), b.policy.state_dict()
    assert all(torch.equal(pa[k], pb[k]) for k in pa)  # PPO(seed=) reached the env: same run twice
    x = lang_pz.interop.HashedBagOfWords()("You are piston_0. Ball: out of view.")
    action, _ = a.predict(x, deterministic=True)
    assert int(action) in (0, 1, 2)


@needs_sb3
def test_sb3_ppo_on_a_gymnasium_text_env():
    from stable_baselines3 import PPO

    from lang_pz.interop.gym import GymDiscreteActions, GymEncodeObservations

    env = GymDiscreteActions(GymEncodeObservations(lang_pz.make("classic_control/cartpole-v0")))
    model = PPO("MlpPolicy", env, n_steps=64, batch_size=32, n_epochs=1, seed=0, device="cpu").learn(200)
    assert model.num_timesteps >= 200


@needs_torchrl
def test_torchrl_multi_agent_ppo_tutorial_trains():
    train = runpy.run_path(str(ROOT / "examples" / "interop_torchrl.py"), run_name="tutorial")["train"]
    rewards = train(frames=300, frames_per_batch=100)
    assert len(rewards) == 3 and all(np.isfinite(rewards))


@needs_torchrl
def test_torchrl_env_specs_and_rollout():
    from lang_pz.interop import torchrl_env

    env = torchrl_env(lang_pz.make("butterfly/pistonball-v0", n_pistons=3, hold=5, max_cycles=50), seed=0)
    td = env.rollout(4)
    assert td["piston", "observation"].shape == (4, 3, 256)
    assert td["piston", "action"].max() < 3
    assert td["next", "piston", "info", "fallback"].sum() == 0


# -- Box actions (continuous) ------------------------------------------------------------------
@needs_sb3
def test_sb3_ppo_trains_with_box_actions_on_continuous_pistonball():
    import torch
    from stable_baselines3 import PPO

    from lang_pz.interop import sb3_vec_env, to_vector_env

    def run():
        env = to_vector_env(lang_pz.make("butterfly/pistonball-v0", n_pistons=5, continuous=True, hold=5, max_cycles=50))
        model = PPO(
            "MlpPolicy",
            sb3_vec_env(env),
            n_steps=40,
            batch_size=100,
            n_epochs=1,
            seed=0,
            policy_kwargs={"net_arch": [32]},
            device="cpu",
        )
        return model, model.learn(200)

    (model, _), (again, _) = run(), run()
    assert model.action_space.shape == (1,) and model.num_timesteps >= 200
    assert all(torch.equal(a, b) for a, b in zip(model.policy.parameters(), again.policy.parameters()))
    action, _ = model.predict(lang_pz.interop.HashedBagOfWords()("You are piston_0."), deterministic=True)
    assert action.shape == (1,) and -1 <= float(action[0]) <= 1


@needs_sb3
def test_sb3_sac_on_a_gymnasium_box_text_env():
    import gymnasium as gym
    from stable_baselines3 import SAC

    from lang_pz.interop.gym import GymBoxActions, GymEncodeObservations
    from lang_pz.wrappers import LanguageGymWrapper

    env = GymBoxActions(GymEncodeObservations(LanguageGymWrapper(gym.make("Pendulum-v1"))))
    seen: list[dict] = []

    class Record(gym.Wrapper):
        def step(self, action):
            out = super().step(action)
            seen.append(out[-1])
            return out

    model = SAC(
        "MlpPolicy", Record(env), learning_starts=60, batch_size=32, seed=0, device="cpu", policy_kwargs={"net_arch": [32]}
    ).learn(100)
    assert model.num_timesteps >= 100 and len(seen) >= 100
    assert not any(i["fallback"] for i in seen)  # every vector reached Pendulum as a parsed number
    assert len({i["action_text"] for i in seen}) > 40


@needs_torchrl
def test_torchrl_rollout_with_box_actions():
    from lang_pz.interop import torchrl_env

    env = torchrl_env(lang_pz.make("butterfly/pistonball-v0", n_pistons=5, continuous=True, max_cycles=50), seed=0)
    td = env.rollout(4)
    assert td["piston", "action"].shape == (4, 5, 1) and td["piston", "action"].dtype.is_floating_point
    assert td["next", "piston", "info", "fallback"].sum() == 0
