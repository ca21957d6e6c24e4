"""Tutorial: RLlib PPO on a lang_pz language env through lang_pz.interop (pip install 'lang_pz[rllib]').

Trains PPO with one policy shared by every piston of 5-piston Pistonball (hold 5) for a few hundred
environment steps and prints the steps sampled, the time and the mean episode return. RLlib writes
its logs to ~/ray_results, as it always does.
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("RAY_AUTH_MODE", "disabled")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--iterations", type=int, default=2)
    ap.add_argument("--batch", type=int, default=200, help="env steps per PPO iteration")
    args = ap.parse_args()

    import ray
    from ray.rllib.algorithms.ppo import PPOConfig

    from lang_pz.interop import register_rllib_env

    name = register_rllib_env("lang_pz_pistonball", "butterfly/pistonball-v0", n_pistons=5, hold=5, max_cycles=75)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    config = (
        PPOConfig()
        .environment(name)
        .env_runners(num_env_runners=0)
        .multi_agent(policies={"shared"}, policy_mapping_fn=lambda agent_id, *a, **k: "shared")
        .training(train_batch_size_per_learner=args.batch, minibatch_size=50, num_epochs=1)
        .debugging(seed=0)
    )
    algo = config.build_algo()
    t0 = time.perf_counter()
    for i in range(args.iterations):
        result = algo.train()
        env_runners = result.get("env_runners", {})
        print(
            f"iteration {i}: env steps sampled {result.get('num_env_steps_sampled_lifetime', env_runners.get('num_env_steps_sampled_lifetime'))}, "
            f"episode return mean {env_runners.get('episode_return_mean')}"
        )
    print(f"RLlib PPO trained {args.iterations} iterations in {time.perf_counter() - t0:.1f} s")
    algo.stop()
    ray.shutdown()


if __name__ == "__main__":
    main()
