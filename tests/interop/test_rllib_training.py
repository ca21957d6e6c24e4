"""RLlib PPO trains on a lang_pz language env through :func:`lang_pz.interop.register_rllib_env`,
in the same venv as everything else (numpy 2, gymnasium 1.4; the ``rllib`` extra): two short
iterations of 5-piston Pistonball text on a local Ray cluster (1 CPU, no dashboard,
``RAY_AUTH_MODE=disabled``), one policy shared by every piston. Skipped, with the install command,
only when the extra is missing."""

from __future__ import annotations

import importlib.util
import os
import sys

import numpy as np
import pytest

import lang_pz.interop
from lang_pz.error import DependencyNotInstalled, LangPZError

PISTONS = [f"piston_{i}" for i in range(5)]
ITERATIONS, BATCH = 2, 100  # env steps per PPO iteration (each steps all 5 pistons)


def _has_rllib() -> bool:
    try:
        return importlib.util.find_spec("ray.rllib") is not None
    except ImportError:  # ray core without RLlib's own dependencies
        return False


needs_rllib = pytest.mark.skipif(not _has_rllib(), reason="RLlib not installed: pip install 'lang_pz[rllib]'")


@pytest.fixture(scope="module")
def ray_cluster():
    import ray

    saved = os.environ.get("RAY_AUTH_MODE")
    os.environ["RAY_AUTH_MODE"] = "disabled"  # no ~/.ray/auth_token
    ray.init(address="local", num_cpus=1, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()
    if saved is None:
        os.environ.pop("RAY_AUTH_MODE", None)
    else:
        os.environ["RAY_AUTH_MODE"] = saved


@needs_rllib
def test_rllib_ppo_trains_on_pistonball_text(ray_cluster, tmp_path, monkeypatch):
    import ray.tune.trainable.trainable as trainable
    from ray.rllib.algorithms.ppo import PPOConfig

    monkeypatch.setattr(trainable, "DEFAULT_STORAGE_PATH", str(tmp_path))  # not ~/ray_results
    name = lang_pz.interop.register_rllib_env(
        "lang_pz_test_pistonball", "butterfly/pistonball-v0", n_pistons=5, hold=5, max_cycles=50
    )
    assert name == "lang_pz_test_pistonball"
    config = (
        PPOConfig()
        .environment(name)
        .env_runners(num_env_runners=0)
        .multi_agent(policies={"shared"}, policy_mapping_fn=lambda agent_id, *a, **k: "shared")
        .training(train_batch_size_per_learner=BATCH, minibatch_size=50, num_epochs=1)
        .rl_module(model_config={"fcnet_hiddens": [32]})
        .debugging(seed=0)
    )
    algo = config.build_algo()
    try:
        module = algo.get_module("shared")
        assert module.observation_space.shape == (256,) and module.action_space.n == 3  # to_vector_env's spaces
        before = {k: np.array(v, copy=True) for k, v in module.get_state().items()}
        results = [algo.train() for _ in range(ITERATIONS)]
        after = algo.get_module("shared").get_state()
    finally:
        algo.stop()
    runners, learner = results[-1]["env_runners"], results[-1]["learners"]["shared"]
    assert results[-1]["num_env_steps_sampled_lifetime"] >= ITERATIONS * BATCH
    # every piston acts at every env step of the parallel env, all through the one shared policy
    assert sorted(runners["num_agent_steps_sampled_lifetime"]) == PISTONS
    assert all(n == runners["num_env_steps_sampled_lifetime"] for n in runners["num_agent_steps_sampled_lifetime"].values())
    assert runners["num_module_steps_sampled_lifetime"] == {"shared": 5 * runners["num_env_steps_sampled_lifetime"]}
    # whole episodes of at most 10 decisions (max_cycles 50 / hold 5) were played and scored
    assert runners["num_episodes_lifetime"] >= 1 and 1 <= runners["episode_len_max"] <= 10
    assert np.isfinite(runners["episode_return_mean"]) and sorted(runners["agent_episode_returns_mean"]) == PISTONS
    # the learner took gradient steps on that data: the policy's weights moved
    assert learner["num_module_steps_trained_lifetime"] > 0 and np.isfinite(learner["total_loss"])
    assert any(not np.array_equal(before[k], np.asarray(after[k])) for k in before)


def test_missing_rllib_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray.rllib.env.wrappers.pettingzoo_env", None)  # as if not installed
    with pytest.raises(DependencyNotInstalled, match=r"pip install 'lang_pz\[rllib\]'.*gymnasium"):
        lang_pz.interop.register_rllib_env("x", "butterfly/pistonball-v0")


@needs_rllib
def test_rllib_ppo_trains_on_a_turn_based_game_with_action_masks(ray_cluster, tmp_path, monkeypatch):
    """Leduc poker (AEC) through ``register_rllib_env(api="aec")`` and RLlib's own
    ``ActionMaskingTorchRLModule`` (the current API stack), one policy for both seats: PPO samples
    both players' turns and updates, and every index it plays is legal (folding before a bet is
    not: an unmasked policy would play it about a third of the time at a round's first move)."""
    pytest.importorskip("pyspiel")
    import ray.tune.trainable.trainable as trainable
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule

    from lang_pz.interop.aec import MaskedAECEnv

    monkeypatch.setattr(trainable, "DEFAULT_STORAGE_PATH", str(tmp_path))
    decoded = []
    decode = MaskedAECEnv._decode
    monkeypatch.setattr(
        MaskedAECEnv, "_decode", lambda self, agent, i: decoded.append(decode(self, agent, i)) or decoded[-1]
    )
    name = lang_pz.interop.register_rllib_env("lang_pz_test_leduc", "openspiel/leduc_poker-v0", api="aec", observation="raw")
    config = (
        PPOConfig()
        .environment(name)
        .env_runners(num_env_runners=0)
        .multi_agent(policies={"shared"}, policy_mapping_fn=lambda agent_id, *a, **k: "shared")
        .rl_module(
            rl_module_spec=MultiRLModuleSpec(
                rl_module_specs={
                    "shared": RLModuleSpec(
                        module_class=ActionMaskingTorchRLModule, model_config={"head_fcnet_hiddens": [32]}
                    )
                }
            )
        )
        .training(train_batch_size_per_learner=200, minibatch_size=50, num_epochs=1)
        .debugging(seed=0)
    )
    algo = config.build_algo()
    decoded.clear()  # RLlib's env check at build steps a random action (illegal 1/3 of the time): not the policy's
    try:
        before = {k: np.array(v, copy=True) for k, v in algo.get_module("shared").get_state().items()}
        results = [algo.train() for _ in range(2)]
        after = algo.get_module("shared").get_state()
    finally:
        algo.stop()
    runners = results[-1]["env_runners"]
    assert sorted(runners["num_agent_steps_sampled_lifetime"]) == ["player_0", "player_1"]
    assert runners["num_episodes_lifetime"] >= 10
    assert len(decoded) >= 400 and not any(fallback for _, fallback, _ in decoded)  # the mask was respected
    assert any(not np.array_equal(before[k], np.asarray(after[k])) for k in before)


def test_rllib_masks_refuse_text_observations():
    from lang_pz.interop.rllib import RLlibMasks

    with pytest.raises(LangPZError, match="observation='vector' or 'raw'.*observing text"):
        RLlibMasks(lang_pz.interop.to_masked_aec_env(lang_pz.make("classic/tictactoe-v0"), keep_text=True))


@needs_rllib
def test_rllib_pistonball_image_tutorial_ported_to_ray_2_60(ray_cluster, tmp_path, monkeypatch):
    """docs/interop.md's port of PettingZoo's rllib_pistonball.py (SuperSuit image wrappers, RLlib's
    default CNN with the tutorial's filters, continuous pushes), shortened: 5 pistons, 10 cycles,
    one small PPO iteration."""
    import ray.tune.trainable.trainable as trainable
    import supersuit as ss
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig
    from ray.rllib.env.wrappers.pettingzoo_env import ParallelPettingZooEnv
    from ray.tune.registry import register_env

    monkeypatch.setattr(trainable, "DEFAULT_STORAGE_PATH", str(tmp_path))

    def env_creator(args):
        env = lang_pz.make(
            "butterfly/pistonball-v0", api="parallel", n_pistons=5, time_penalty=-0.1, continuous=True,
            random_drop=True, random_rotate=True, ball_mass=0.75, ball_friction=0.3, ball_elasticity=1.5,
            max_cycles=10,
        )  # fmt: skip
        env = lang_pz.interop.to_vector_env(env, observation="raw")
        env = ss.color_reduction_v0(env, mode="B")
        env = ss.dtype_v0(env, "float32")
        env = ss.resize_v1(env, x_size=84, y_size=84)
        env = ss.normalize_obs_v0(env, env_min=0, env_max=1)
        env = ss.frame_stack_v1(env, 3)
        return ParallelPettingZooEnv(env)

    register_env("lang_pz_test_pistonball_images", env_creator)
    config = (
        PPOConfig()
        .environment("lang_pz_test_pistonball_images", clip_actions=True, disable_env_checking=True)
        .env_runners(num_env_runners=0)
        .multi_agent(policies={"shared"}, policy_mapping_fn=lambda agent_id, *args, **kwargs: "shared")
        .rl_module(model_config=DefaultModelConfig(conv_filters=[[32, [8, 8], 4], [64, [4, 4], 2], [64, [3, 3], 1]]))
        .training(
            train_batch_size_per_learner=20,
            minibatch_size=10,
            num_epochs=1,
            lr=2e-5,
            gamma=0.99,
            lambda_=0.9,
            clip_param=0.4,
        )
        .debugging(seed=0)
    )
    algo = config.build_algo()
    try:
        module = algo.get_module("shared")
        assert module.observation_space.shape == (84, 84, 3) and module.action_space.shape == (1,)
        result = algo.train()
    finally:
        algo.stop()
    runners = result["env_runners"]
    assert sorted(runners["num_agent_steps_sampled_lifetime"]) == PISTONS
    assert result["learners"]["shared"]["num_module_steps_trained_lifetime"] > 0
