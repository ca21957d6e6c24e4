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

register(EnvSpec(
    id="classic/tictactoe-v0",
    entry_point="lang_pz.envs.classic:make_tictactoe",
    description="Tic-tac-toe: a drawn 3x3 board; moves are square numbers 1-9 or names like top-left.",
    apis=("aec",),
))

register(EnvSpec(
    id="classic/connect_four-v0",
    entry_point="lang_pz.envs.classic:make_connect_four",
    description="Connect four: a 6x7 board with column numbers; moves are columns 1-7.",
    apis=("aec",),
))

register(EnvSpec(
    id="classic/rps-v0",
    entry_point="lang_pz.envs.classic:make_rps",
    description="Rock-paper-scissors over several rounds; you see the opponent's last move.",
    apis=("parallel", "aec"),
    test_kwargs={"max_cycles": 5},
))

register(EnvSpec(
    id="classic_control/cartpole-v0",
    entry_point="lang_pz.envs.gym:make_cartpole",
    description="CartPole (single agent): named state variables with units; push left or right.",
    apis=("gymnasium",),
    test_kwargs={"max_episode_steps": 50},
))

register(EnvSpec(
    id="toy_text/frozen_lake-v0",
    entry_point="lang_pz.envs.gym:make_frozen_lake",
    description="FrozenLake (single agent): a grid map with your position; walk left/down/right/up.",
    apis=("gymnasium",),
))
