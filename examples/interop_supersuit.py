"""Tutorial: Gymnasium and SuperSuit vector envs over lang_pz's text envs.

Gymnasium's vector utilities know nothing of ``Text`` spaces: SuperSuit's vector envs fail
("Space of type Text doesn't have an registered iterate function") and ``AsyncVectorEnv`` with its
default ``shared_memory=True`` silently returns '000...' for every text observation.
``lang_pz.interop.register_text_spaces()`` registers what is missing and makes the shared-memory
case fail loudly with the fix; with ``shared_memory=False`` the async env is correct.

    python examples/interop_supersuit.py                # a few seconds
"""

from __future__ import annotations

import gymnasium
import supersuit as ss

import lang_pz
from lang_pz.interop import register_text_spaces


def main() -> None:
    register_text_spaces()

    # SuperSuit: every piston of two Pistonball copies is one sub-env; observations stay text.
    vec = ss.concat_vec_envs_v1(
        ss.pettingzoo_env_to_vec_env_v1(lang_pz.make("butterfly/pistonball-v0", n_pistons=5, hold=5)), 2, num_cpus=0
    )
    obs, _ = vec.reset(seed=0)
    for _ in range(20):
        obs, rewards, terms, truncs, _ = vec.step(("down", "down", "stay", "up", "up") * 2)
    print(f"SuperSuit: {len(obs['text'])} text observations, e.g. {obs['text'][0][:70]!r}")

    # Gymnasium AsyncVectorEnv: shared memory is refused with the fix, copies work.
    make = lambda: lang_pz.make("classic_control/cartpole-v0")  # noqa: E731
    try:
        gymnasium.vector.AsyncVectorEnv([make, make])
    except ValueError as exc:
        print(f"AsyncVectorEnv(shared_memory=True): {exc.__cause__}")
    env = gymnasium.vector.AsyncVectorEnv([make, make], shared_memory=False)
    obs, _ = env.reset(seed=0)
    obs, *_ = env.step(("push left", "push right"))
    print(f"AsyncVectorEnv(shared_memory=False): {obs['text'][1][:70]!r}")
    env.close()


if __name__ == "__main__":
    import argparse

    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()  # --help; no options
    main()
