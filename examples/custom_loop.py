"""A training loop of your own, composed of lang_pz's public steps (TorchRL-style).

It writes the same run folder as ``lang-pz train`` for the same config (a test checks that),
so ``lang-pz report RUN_DIR`` works on it. Change any line: skip the critic, gate differently,
validate on other seeds. Run it (embedded model, about 2 minutes on 2 cores)::

    python examples/custom_loop.py --run-dir runs/custom
"""

from __future__ import annotations

import argparse
from dataclasses import asdict

import lang_pz.training as T
from lang_pz.critics import best_gain
from lang_pz.optimisers import Momentum
from lang_pz.runs import RunFolder


def custom_train(cfg: T.TrainConfig, backends=None) -> T.TrainState:
    parts = T.build(cfg, backends=backends)  # env, role backends, critic, optimiser, objective, partners
    run = RunFolder(cfg.run_dir)
    run.create(cfg.model_dump_json(indent=2))
    state = T.TrainState(T.initial_policies(cfg, parts), momentum=Momentum(beta=cfg.momentum, min_weight=0.2))
    for it in range(cfg.iterations):
        log = run.begin(it)
        meter = T.UsageMeter(parts.meters, log)  # usage per role, saved with every record the log writes
        log.write_policies(state.policies)

        envs, ex = parts.envs, parts.executor  # environment instances; concurrent tasks (cfg.workers)
        val = T.validator(parts, log)  # (policies, label) -> the objective on the validation seeds (T.validate)

        value = state.value if state.value is not None else val(state.policies, "current")
        actors = parts.actors(state.policies)  # env -> a fresh team for that environment instance
        trajs = T.collect(envs, actors, cfg.training_seeds(it), cfg.episode_numbers(it), log=log, executor=ex)
        evidence = T.gather_evidence(envs, actors, trajs, [[a] for a in parts.trainable], cfg.counterfactual,
                                     objective=parts.objective, seed=cfg.seed + it, log=log, executor=ex)
        reports, critic_failures = T.assess(parts.critic, trajs, state.policies, evidence, log=log, executor=ex)
        gated = T.evidence_gate(parts.trainable, evidence, log=log) if cfg.counterfactual else {}
        updates, optimiser_failures = T.propose(parts.optimiser, state.policies,
                                                [a for a in parts.trainable if a not in gated], reports,
                                                state.momentum, log=log, executor=ex)
        changed = [a for a, u in updates.items() if u.changed]
        groups = T.acceptance_groups(changed, "per_agent", {a: best_gain(a, evidence) for a in changed})
        decision = T.accept(state.policies, {a: updates[a].new for a in changed}, value, val, groups=groups,
                            tolerance=cfg.tolerance, log=log)
        T.commit_momentum(state.momentum, updates, decision.accepted_agents)
        metrics = T.iteration_metrics(it, trajs, value, decision, changed, gated, critic_failures,
                                      optimiser_failures, meter)
        state = T.TrainState(decision.policies, decision.value, state.momentum, state.calls + metrics.spent_calls,
                             state.uncached_calls + metrics.spent_uncached_calls)
        log.done({"metrics": asdict(metrics), **state.to_json()})
        print(f"iteration {it}: train {metrics.train_return:.1f}, accepted {decision.accepted_agents}")
    run.finish(state.policies)
    return state


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run-dir", default="runs/custom-loop")
    parser.add_argument("--backend", default="embedded", help="'embedded' or 'openai:<model>'")
    args = parser.parse_args()
    config = T.TrainConfig(env_kwargs={"n_pistons": 5, "hold": 25}, iterations=1, validation_seeds=[1000],
                           counterfactual=["alternatives"], initial_policy="Always push up.",
                           actor_backend=args.backend, run_dir=args.run_dir)
    custom_train(config)
