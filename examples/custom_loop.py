"""Your own variant of a method: LangMARL with one stage changed (here, a stricter evidence gate).

A user's loop is the method's own iteration with one stage overridden; ``train()`` still runs the
outer loop, so the run folder is the one ``lang-pz train`` writes (a test checks that at
``margin=0``, where this gate decides as the stock one) and ``lang-pz report RUN_DIR`` works on
it. Override any other stage the same way: ``evidence``, ``assess``, ``gradients``, ``propose``,
``order``, ``accept``, ``commit``, ``probe_groups`` (see ``lang_pz/methods/base.py`` and
``lang_pz/methods/langmarl/method.py``). Run it (embedded model, about 2 minutes on 2 cores)::

    python examples/custom_loop.py --run-dir runs/custom
"""

from __future__ import annotations

import argparse

from lang_pz.critics.counterfactual import best_gain
from lang_pz.methods import LangMARL
from lang_pz.training import TrainConfig, TrainResult, train


class MarginGate(LangMARL):
    """LangMARL whose gate also leaves alone every agent no re-run beat by more than ``margin``."""

    margin = 1.0  # team-return units

    def gate(self, evidence, reports, ctx):
        gated = super().gate(evidence, reports, ctx)  # the stock gate: no re-run beat the agent at all
        for agent in self.parts.trainable:
            gain = best_gain(agent, evidence)
            if agent not in gated and gain is not None and gain <= self.margin:
                gated[agent] = gain
                ctx.record("gated", {"agent": agent, "best_gain": gain, "reason": f"gain within margin {self.margin}"})
        return gated


def custom_train(cfg: TrainConfig, backends=None, margin: float = 1.0) -> TrainResult:
    return train(cfg, method=type("MarginGate", (MarginGate,), {"margin": margin}), backends=backends)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run-dir", default="runs/custom-loop")
    parser.add_argument("--backend", default="embedded", help="'embedded' or 'openai:<model>'")
    parser.add_argument("--margin", type=float, default=1.0, help="least re-run gain that earns an edit")
    args = parser.parse_args()
    config = TrainConfig(
        env_kwargs={"n_pistons": 5, "hold": 25},
        iterations=1,
        validation_seeds=[1000],
        langmarl={"counterfactual": ["alternatives"]},
        initial_policy="Always push up.",
        actor_backend=args.backend,
        run_dir=args.run_dir,
    )
    result = custom_train(config, margin=args.margin)
    print(f"accepted per iteration: {[m.accepted_agents for m in result.metrics]}")
