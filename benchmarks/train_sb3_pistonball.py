"""Train the learned baseline: Stable-Baselines3 PPO on Pistonball, one network shared by every piston.

The env is lang_pz's ``butterfly/pistonball-v0`` (``n_pistons`` 5, each decision held ``hold`` = 5
physics cycles, 125 cycles) or the pistonball_v6 underneath it with the same arguments. Two inputs:

- ``--obs text`` (default): the observation text an LLM reads, encoded by
  ``lang_pz.interop.to_vector_env`` with ``HashedBagOfWordsV1`` (the committed baseline's encoder,
  which the bench seat ``learned-text:PATH`` loads with: retraining it on the order-keeping
  ``HashedBagOfWords`` is open, issue 22), ``MlpPolicy``, rewards normalised by SB3's
  ``VecNormalize``. Load it with that seat or ``SB3Policy.load(path, HashedBagOfWordsV1(), observation="text")``.
- ``--obs pixels``: raw pistonball_v6 pixels through SuperSuit's ``color_reduction_v0("B")``,
  ``resize_v1(42, 42)``, ``frame_stack_v1(3)`` (:class:`lang_pz.policies.learned.SuperSuitPixels`,
  which the lang_pz policy applies to the raw observation in the same way), ``CnnPolicy``. Load it
  with the seat ``learned:PATH`` or ``SB3Policy.load(path, SuperSuitPixels())``.

    pip install 'lang_pz[sb3]'
    python benchmarks/train_sb3_pistonball.py --timesteps 80000     # about 15 min on 2 cores

Weights go outside the repository by default (``~/.cache/lang_pz/sb3/pistonball5_<obs>.zip``,
0.6 MB text / 1.5 MB pixels), with a JSON of the settings and the training time next to them.
Measured (shared 2-core machine): text, 80,000 agent-steps, 871 s, 491 mean team return on 20
held-out seeds (random 243); pixels, 100,000 agent-steps, 1383 s, no better than random (its
policy stayed near uniform, entropy about ln 3, and its greedy action is always ``up``).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path


def make_train_env(obs: str, n_pistons: int, hold: int, max_cycles: int, n_envs: int):
    """The VecEnv (SB3) the policy trains on: raw pistonball_v6 pixels, or lang_pz's text encoded
    by HashedBagOfWordsV1 (rewards normalised by SB3's VecNormalize)."""
    from pettingzoo.butterfly import pistonball_v6
    from supersuit import frame_skip_v0

    import lang_pz
    from lang_pz.interop import sb3_vec_env, to_vector_env
    from lang_pz.interop.encoders import HashedBagOfWordsV1
    from lang_pz.policies.learned import SuperSuitPixels

    if obs == "text":
        from stable_baselines3.common.vec_env import VecNormalize

        env = to_vector_env(
            lang_pz.make("butterfly/pistonball-v0", n_pistons=n_pistons, hold=hold, max_cycles=max_cycles),
            HashedBagOfWordsV1(),
        )
        return VecNormalize(sb3_vec_env(env, n_envs), norm_obs=False, norm_reward=True, gamma=0.95)
    env = pistonball_v6.parallel_env(n_pistons=n_pistons, continuous=False, max_cycles=max_cycles)
    if hold > 1:
        env = frame_skip_v0(env, hold)
    return sb3_vec_env(SuperSuitPixels().wrap(env), n_envs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--obs",
        choices=("text", "pixels"),
        default="text",
        help="text: lang_pz's observation text, hashed bag of words, MlpPolicy (seat learned-text:PATH); "
        "pixels: raw pistonball_v6 pixels, CnnPolicy (seat learned:PATH)",
    )
    ap.add_argument("--out", type=Path, default=None, help="default ~/.cache/lang_pz/sb3/pistonball5_<obs>.zip")
    ap.add_argument("--timesteps", type=int, default=100_000, help="agent-steps (one piston's decision each)")
    ap.add_argument("--n-pistons", type=int, default=5)
    ap.add_argument("--hold", type=int, default=5)
    ap.add_argument("--max-cycles", type=int, default=125)
    ap.add_argument("--n-envs", type=int, default=2, help="copies of the env (each gives n_pistons sub-envs)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=1, help="torch threads (the machine is shared)")
    args = ap.parse_args()

    import torch
    from stable_baselines3 import PPO

    torch.set_num_threads(args.threads)
    if args.out is None:
        args.out = Path.home() / f".cache/lang_pz/sb3/pistonball5_{args.obs}.zip"
    venv = make_train_env(args.obs, args.n_pistons, args.hold, args.max_cycles, args.n_envs)
    policy = "MlpPolicy" if args.obs == "text" else "CnnPolicy"
    model = PPO(
        policy,
        venv,
        n_steps=128,
        batch_size=320,
        n_epochs=4,
        learning_rate=3e-4,
        gamma=0.95,
        gae_lambda=0.9,
        ent_coef=0.01,
        clip_range=0.2,
        vf_coef=0.5,
        seed=args.seed,
        verbose=1,
        device="cpu",
    )
    t0 = time.perf_counter()
    model.learn(total_timesteps=args.timesteps)
    seconds = time.perf_counter() - t0
    args.out.parent.mkdir(parents=True, exist_ok=True)
    model.save(str(args.out))
    path = args.out if args.out.suffix == ".zip" else args.out.with_suffix(".zip")
    meta = {
        "obs": args.obs,
        "policy": policy,
        "env": "pistonball_v6 (raw pixels)" if args.obs == "pixels" else "lang_pz text, HashedBagOfWords()",
        "lang_pz_env": "butterfly/pistonball-v0",
        "env_kwargs": {"n_pistons": args.n_pistons, "hold": args.hold, "max_cycles": args.max_cycles},
        "preprocess": "SuperSuitPixels(size=42, color='B', stack=3)" if args.obs == "pixels" else "HashedBagOfWords()",
        "timesteps": args.timesteps,
        "n_envs": args.n_envs,
        "seed": args.seed,
        "train_seconds": round(seconds, 1),
        "agent_steps_per_second": round(args.timesteps / seconds, 1),
        "size_bytes": path.stat().st_size,
    }
    path.with_suffix(".json").write_text(json.dumps(meta, indent=2) + "\n")
    print(json.dumps(meta))
    print(f"weights: {path}")


if __name__ == "__main__":
    main()
