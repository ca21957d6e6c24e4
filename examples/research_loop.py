"""A LangMARL run written as a deep-RL pipeline: actor, critic, loss.backward(), optimizer.step().

The loop below is the research's presentation of LangMARL (TensorDict -> State,
ProbabilisticActor -> LLMActor, ValueOperator -> LLMCritic, Adam -> LanguagePolicyOptimizer) in
``lang_pz.modules``, a thin layer over the code ``train()`` runs: it makes the same decisions and
writes the same run folder (a test checks it on a scripted stand-in backend), so ``lang-pz report
RUN_DIR`` reads it. Run it (embedded model, about 2 minutes on 2 cores)::

    python examples/research_loop.py --run-dir runs/research
"""

from __future__ import annotations

import argparse

from lang_pz.methods import LangMARL
from lang_pz.modules import LanguagePolicyOptimizer, LLMActor, LLMCritic, TextParameters
from lang_pz.runs import RunFolder
from lang_pz.training import TrainConfig


def research_train(config: TrainConfig, backends=None) -> TextParameters:
    """``config``'s iterations as a pipeline of modules; the final parameters."""
    params = TextParameters(LangMARL.build(config, backends=backends))  # the policies and momentum
    actor, critic = LLMActor(params), LLMCritic(params)
    optimizer = LanguagePolicyOptimizer(params)
    run = RunFolder(config.run_dir)
    run.create(config.model_dump_json(indent=2), params.method.parts.items)  # config, held-out items
    try:
        for it in range(config.iterations):
            state = actor(run.begin(it))  # rollouts, current validation (TorchRL's collector)
            loss = critic(state)  # counterfactual re-runs and per-agent credits
            optimizer.zero_grad()
            loss.backward()  # a language gradient per agent, aggregated with momentum
            metrics = optimizer.step()  # candidate texts, kept if held-out validation allows
            print(f"iteration {it}: accepted {metrics.accepted_agents or 'none'}")
        run.finish(params.state.policies)
    finally:
        params.method.close()
    return params


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run-dir", default="runs/research-loop")
    parser.add_argument("--backend", default="embedded", help="'embedded' or 'openai:<model>'")
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
    final = research_train(config)
    print(f"final policies: {final.named_parameters()}")
