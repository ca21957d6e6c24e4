"""Built-in language environments, registered on import of :mod:`lang_pz`.

Entry points are import strings, so ``import lang_pz`` does not import any environment.
"""

from lang_pz.registration import EnvSpec, register

register(EnvSpec(
    id="butterfly/pistonball-v0",
    entry_point="lang_pz.envs.pistonball:make_env",
    description="Pistonball: 2-20 pistons push a ball to the left wall; each sees only its window.",
    apis=("parallel", "aec"),
    test_kwargs={"max_cycles": 40},
))
