"""Tutorial: TorchRL multi-agent PPO (shared parameters) on a lang_pz language env.

A language env's observations are text and its actions are words; TorchRL's ``PettingZooWrapper``
needs tensors. ``lang_pz.interop.torchrl_env`` encodes each observation text as a hashed
bag-of-words vector, turns the action words into ``Discrete`` indices and keeps only numeric
infos. The rest is TorchRL's own multi-agent PPO recipe (``MultiAgentMLP``, ``ClipPPOLoss``, GAE).

    pip install 'lang_pz[torchrl]'
    python examples/interop_torchrl.py --frames 600      # about half a minute on 2 cores
"""

from __future__ import annotations

import argparse

import torch
from tensordict.nn import TensorDictModule
from torch import nn
from torchrl.collectors import Collector
from torchrl.modules import MultiAgentMLP, ProbabilisticActor
from torchrl.objectives import ClipPPOLoss, ValueEstimators

import lang_pz
from lang_pz.interop import torchrl_env


def train(frames: int = 600, frames_per_batch: int = 100, seed: int = 0) -> list[float]:
    """Train for ``frames`` env steps; returns the mean reward of every batch."""
    torch.manual_seed(seed)
    env = torchrl_env(lang_pz.make("butterfly/pistonball-v0", n_pistons=3, hold=5, max_cycles=75), seed=seed)
    group = next(iter(env.group_map))  # "piston"
    n_agents = len(env.group_map[group])
    obs_dim = env.observation_spec[group, "observation"].shape[-1]
    n_actions = env.full_action_spec[group, "action"].space.n

    def mlp(out: int, centralised: bool) -> MultiAgentMLP:
        return MultiAgentMLP(
            n_agent_inputs=obs_dim,
            n_agent_outputs=out,
            n_agents=n_agents,
            centralised=centralised,
            share_params=True,
            depth=1,
            num_cells=64,
            activation_class=nn.Tanh,
        )

    actor = ProbabilisticActor(
        TensorDictModule(mlp(n_actions, False), in_keys=[(group, "observation")], out_keys=[(group, "logits")]),
        in_keys=[(group, "logits")],
        out_keys=[(group, "action")],
        spec=env.full_action_spec[group, "action"],
        distribution_class=torch.distributions.Categorical,
        return_log_prob=True,
        log_prob_key=(group, "sample_log_prob"),
    )
    critic = TensorDictModule(mlp(1, True), in_keys=[(group, "observation")], out_keys=[(group, "state_value")])
    loss = ClipPPOLoss(actor_network=actor, critic_network=critic, entropy_coeff=0.01, normalize_advantage=False)
    loss.set_keys(
        reward=(group, "reward"),
        action=(group, "action"),
        value=(group, "state_value"),
        sample_log_prob=(group, "sample_log_prob"),
        done=(group, "done"),
        terminated=(group, "terminated"),
    )
    loss.make_value_estimator(ValueEstimators.GAE, gamma=0.99, lmbda=0.95)
    optim = torch.optim.Adam(loss.parameters(), lr=3e-4)
    collector = Collector(env, actor, frames_per_batch=frames_per_batch, total_frames=frames)
    rewards = []
    for batch in collector:
        # the group's done flags, from the env-level ones (TorchRL's MARL recipe)
        for key in ("done", "terminated"):
            batch.set(
                ("next", group, key),
                batch.get(("next", key)).unsqueeze(-1).expand(batch.get_item_shape(("next", group, "reward"))),
            )
        with torch.no_grad():
            loss.value_estimator(batch, params=loss.critic_network_params, target_params=loss.target_critic_network_params)
        out = loss(batch.reshape(-1))
        total = out["loss_objective"] + out["loss_critic"] + out["loss_entropy"]
        optim.zero_grad()
        total.backward()
        optim.step()
        collector.update_policy_weights_()
        rewards.append(float(batch.get(("next", group, "reward")).mean()))
    collector.shutdown()
    return rewards


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--frames", type=int, default=600)
    args = ap.parse_args()
    for i, r in enumerate(train(args.frames)):
        print(f"batch {i}: mean reward per agent-step {r:.3f}")
