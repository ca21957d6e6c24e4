"""PettingZoo's turn-based tutorials at their own length on lang_pz's games, scored against random.

* SB3 (``tutorials/SB3/connect_four``): MaskablePPO self-play on connect four for the tutorial's
  20,480 steps, then 100 games as ``player_1`` against a random ``player_0`` (the tutorial's
  evaluation: winrate = wins / decided games), once on PettingZoo's own env and once on lang_pz's
  bridge (``to_masked_aec_env(..., observation="raw")`` and ``"vector"``).
* Tianshou (``tutorials/Tianshou/2_training_agents.py``): DQN as ``player_2`` of tic-tac-toe
  against a random ``player_1``, the tutorial's trainer (``--tianshou-epochs`` epochs of 1,000
  steps, its stop at a mean test reward of 0.6), then 100 test games' mean reward.

    python benchmarks/tutorials_vs_random.py [--sb3-steps 20480] [--tianshou-epochs 10] [--out FILE]
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import lang_pz
from lang_pz.interop import to_masked_aec_env

MAKERS = {
    "PettingZoo connect_four_v3": lambda: __import__(
        "pettingzoo.classic", fromlist=["connect_four_v3"]
    ).connect_four_v3.env(),
    "lang_pz raw": lambda: to_masked_aec_env(lang_pz.make("classic/connect_four-v0"), observation="raw"),
    "lang_pz vector": lambda: to_masked_aec_env(lang_pz.make("classic/connect_four-v0")),
}


def sb3(make: Any, steps: int, games: int = 100) -> tuple[float, float]:
    """(winrate of the trained player_1 against random, training seconds), as the tutorial."""
    import gymnasium as gym
    import pettingzoo.utils
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
    from sb3_contrib.common.wrappers import ActionMasker

    class SB3ActionMaskWrapper(pettingzoo.utils.BaseWrapper, gym.Env):  # the tutorial's, verbatim in effect
        def reset(self, seed=None, options=None):
            super().reset(seed, options)
            self.observation_space = super().observation_space(self.possible_agents[0])["observation"]
            self.action_space = super().action_space(self.possible_agents[0])
            return self.observe(self.agent_selection), {}

        def step(self, action):
            current = self.agent_selection
            super().step(action)
            return (
                self.observe(self.agent_selection),
                self._cumulative_rewards[current],
                self.terminations[current],
                self.truncations[current],
                self.infos[current],
            )

        def observe(self, agent):
            return super().observe(agent)["observation"]

        def action_mask(self):
            return super().observe(self.agent_selection)["action_mask"]

    env = SB3ActionMaskWrapper(make())
    env.reset(seed=0)
    env = ActionMasker(env, lambda e: e.action_mask())
    model = MaskablePPO(MaskableActorCriticPolicy, env, verbose=0, device="cpu")
    model.set_random_seed(0)
    t0 = time.perf_counter()
    if steps:
        model.learn(total_timesteps=steps)
    seconds = time.perf_counter() - t0
    env = make()
    scores = dict.fromkeys(env.possible_agents, 0)
    for i in range(games):
        env.reset(seed=i)
        env.action_space(env.possible_agents[0]).seed(i)
        for agent in env.agent_iter():
            obs, _, termination, truncation, _ = env.last()
            observation, action_mask = obs.values()
            if termination or truncation:
                if env.rewards[env.possible_agents[0]] != env.rewards[env.possible_agents[1]]:
                    scores[max(env.rewards, key=env.rewards.get)] += 1
                break
            if agent == env.possible_agents[0] or steps == 0:  # steps 0: random against random
                act = env.action_space(agent).sample(action_mask)
            else:
                act = int(model.predict(observation, action_masks=action_mask, deterministic=True)[0])
            env.step(act)
    decided = sum(scores.values())
    return (scores[env.possible_agents[1]] / decided if decided else 0.0), seconds


def tianshou(make: Any, epochs: int) -> tuple[float, float]:
    """(mean reward of DQN as player_2 over 100 test games against random, training seconds)."""
    import torch
    from tianshou.data import Collector, VectorReplayBuffer
    from tianshou.env import DummyVectorEnv, PettingZooEnv
    from tianshou.policy import DQNPolicy, MultiAgentPolicyManager, RandomPolicy
    from tianshou.trainer import offpolicy_trainer
    from tianshou.utils.net.common import Net

    def get_env():
        return PettingZooEnv(make())

    np.random.seed(1)
    torch.manual_seed(1)
    env = get_env()
    space = env.observation_space["observation"]
    net = Net(state_shape=space.shape or space.n, action_shape=env.action_space.n, hidden_sizes=[128] * 4, device="cpu")
    learner = DQNPolicy(
        model=net,
        optim=torch.optim.Adam(net.parameters(), lr=1e-4),
        discount_factor=0.9,
        estimation_step=3,
        target_update_freq=320,
    )
    policy = MultiAgentPolicyManager([RandomPolicy(), learner if epochs else RandomPolicy()], env)
    agents = env.agents
    train_envs, test_envs = DummyVectorEnv([get_env] * 10), DummyVectorEnv([get_env] * 10)
    train_envs.seed(1)
    test_envs.seed(1)
    train = Collector(policy, train_envs, VectorReplayBuffer(20_000, 10), exploration_noise=True)
    test = Collector(policy, test_envs, exploration_noise=True)
    t0 = time.perf_counter()
    if not epochs:  # random against random
        return float(np.mean(Collector(policy, test_envs).collect(n_episode=100)["rews"][:, 1])), 0.0
    train.collect(n_step=64 * 10)
    offpolicy_trainer(
        policy=policy,
        train_collector=train,
        test_collector=test,
        max_epoch=epochs,
        step_per_epoch=1000,
        step_per_collect=50,
        episode_per_test=10,
        batch_size=64,
        train_fn=lambda epoch, step: policy.policies[agents[1]].set_eps(0.1),
        test_fn=lambda epoch, step: policy.policies[agents[1]].set_eps(0.05),
        stop_fn=lambda mean: mean >= 0.6,
        update_per_step=0.1,
        test_in_train=False,
        reward_metric=lambda rews: rews[:, 1],
        verbose=False,
        show_progress=False,
    )
    seconds = time.perf_counter() - t0
    policy.policies[agents[1]].set_eps(0.0)
    result = Collector(policy, test_envs).collect(n_episode=100)
    return float(np.mean(result["rews"][:, 1])), seconds


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sb3-steps", type=int, default=20_480)
    ap.add_argument("--tianshou-epochs", type=int, default=10)
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--envs", nargs="*", default=None, help="only these env names (e.g. 'lang_pz raw'); baselines always")
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    lines = [
        "# PettingZoo's turn-based tutorials against random, PettingZoo's env and lang_pz's",
        "",
        f"`python benchmarks/tutorials_vs_random.py --sb3-steps {args.sb3_steps} --tianshou-epochs {args.tianshou_epochs}`",
        "",
        "| tutorial | env | result vs random | training s |",
        "|---|---|---|---|",
    ]
    winrate, _ = sb3(MAKERS["PettingZoo connect_four_v3"], 0)
    lines.append(
        f"| SB3 connect four: random as player_1 (baseline) | PettingZoo connect_four_v3 | winrate {winrate:.2f} | 0 |"
    )
    for name, make in MAKERS.items():
        if args.envs is not None and name not in args.envs:
            continue
        winrate, seconds = sb3(make, args.sb3_steps)
        lines.append(
            f"| SB3 MaskablePPO connect four, {args.sb3_steps} steps | {name} | winrate {winrate:.2f} | {seconds:.0f} |"
        )
        print(lines[-1], flush=True)
    ttt = lambda: __import__("pettingzoo.classic", fromlist=["tictactoe_v3"]).tictactoe_v3.env()  # noqa: E731
    reward, _ = tianshou(ttt, 0)
    lines.append(
        f"| Tianshou tic-tac-toe: random as player_2 (baseline) | PettingZoo tictactoe_v3 | mean reward {reward:+.2f} | 0 |"
    )
    for name, make in {
        "PettingZoo tictactoe_v3": lambda: __import__("pettingzoo.classic", fromlist=["tictactoe_v3"]).tictactoe_v3.env(),
        "lang_pz raw": lambda: to_masked_aec_env(lang_pz.make("classic/tictactoe-v0"), observation="raw"),
        "lang_pz vector": lambda: to_masked_aec_env(lang_pz.make("classic/tictactoe-v0")),
    }.items():
        if args.envs is not None and name not in args.envs:
            continue
        reward, seconds = tianshou(make, args.tianshou_epochs)
        lines.append(
            f"| Tianshou DQN tic-tac-toe, <= {args.tianshou_epochs} epochs | {name} | mean reward {reward:+.2f} | {seconds:.0f} |"
        )
        print(lines[-1], flush=True)
    text = "\n".join(lines) + "\n"
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
