"""Built-in language environments, registered on import of :mod:`lang_pz`.

Entry points are import strings, so ``import lang_pz`` does not import any environment.
"""

from lang_pz.registration import EnvSpec, register, register_family

register(
    EnvSpec(
        id="butterfly/pistonball-v0",
        entry_point="lang_pz.envs.pistonball:make_env",
        description="Pistonball: 3-20 pistons push a ball to the left wall; each sees only its window.",
        apis=("parallel", "aec"),
        test_kwargs={"max_cycles": 40},
    )
)

register(
    EnvSpec(
        id="classic/tictactoe-v0",
        entry_point="lang_pz.envs.classic.tictactoe:make_tictactoe",
        description="Tic-tac-toe: a drawn 3x3 board; moves are square numbers 1-9 or names like top-left.",
        apis=("aec",),
    )
)

register(
    EnvSpec(
        id="classic/connect_four-v0",
        entry_point="lang_pz.envs.classic.connect_four:make_connect_four",
        description="Connect four: a 6x7 board with column numbers; moves are columns 1-7.",
        apis=("aec",),
    )
)

register(
    EnvSpec(
        id="classic/rps-v0",
        entry_point="lang_pz.envs.classic.rps:make_rps",
        description="Rock-paper-scissors over several rounds; you see the opponent's last move.",
        apis=("parallel", "aec"),
        test_kwargs={"max_cycles": 5},
    )
)

register(
    EnvSpec(
        id="classic_control/cartpole-v0",
        entry_point="lang_pz.envs.gym:make_cartpole",
        description="CartPole (single agent): named state variables with units; push left or right.",
        apis=("gymnasium",),
        test_kwargs={"max_episode_steps": 50},
    )
)

register(
    EnvSpec(
        id="toy_text/frozen_lake-v0",
        entry_point="lang_pz.envs.gym:make_frozen_lake",
        description="FrozenLake (single agent): a grid map with your position; walk left/down/right/up.",
        apis=("gymnasium",),
    )
)

# -- benchmark tasks (lang_pz.tasks): one episode = one task, agents are roles; test_kwargs use
# the two hand-written demo items of each benchmark so compliance tests need no data files.
for _name, _entry_point, _what in (
    (
        "hotpotqa",
        "lang_pz.tasks.qa_env:make_hotpotqa",
        "HotpotQA (distractor): a finder names evidence sentences, an answerer answers; reward = F1.",
    ),
    (
        "math500",
        "lang_pz.tasks.math_env:make_math500",
        "MATH-500: a solver boxes an answer, a verifier confirms or corrects; math-verify scores it.",
    ),
    (
        "gsm8k",
        "lang_pz.tasks.math_env:make_gsm8k",
        "GSM8K: a solver answers '#### n', a verifier confirms or corrects; exact number match.",
    ),
    (
        "humaneval",
        "lang_pz.tasks.code_env:make_humaneval",
        "HumanEval: coder writes, tester's asserts run in a sandbox, coder revises; hidden tests score.",
    ),
    (
        "mbpp",
        "lang_pz.tasks.code_env:make_mbpp",
        "MBPP: coder writes, tester's asserts run in a sandbox, coder revises; hidden tests score.",
    ),
):
    register(
        EnvSpec(
            id=f"tasks/{_name}-v0",
            entry_point=_entry_point,
            description=_what,
            apis=("aec",),
            extra="tasks",
            test_kwargs={"source": "demo"},
        )
    )
del _name, _entry_point, _what

# Overcooked-AI (overcooked_ai_py 1.1.0): one id per layout, both action levels via `actions=`.
for _layout, _what in (
    ("cramped_room", "a small shared room: one pot, close quarters"),
    ("asymmetric_advantages", "two separate kitchens sharing two pots in the middle"),
    ("coordination_ring", "a ring around a central counter; players must not block each other"),
    ("forced_coordination", "one player has the onions and dishes, the other the pots and the window"),
    ("counter_circuit", "a long loop around a counter; passing items over it saves time"),
):
    register(
        EnvSpec(
            id=f"overcooked/{_layout}-v0",
            entry_point=f"lang_pz.envs.overcooked.make:make_{_layout}",
            description=f"Overcooked-AI, {_what}. Cook and serve onion soups as a team of two.",
            apis=("parallel", "aec"),
            extra="overcooked",
            test_kwargs={"horizon": 30},
        )
    )
del _layout, _what

# OpenSpiel (open-spiel 2.0.2 through Shimmy 2.0.1): the games' own strings as text.
for _game, _what, _test in (
    ("hanabi", "Hanabi (cooperative, 2 players, 2 colours x 3 ranks): play cards in order, hint your partner.", {}),
    ("kuhn_poker", "Kuhn poker: one card each from Jack, Queen, King; pass or bet.", {}),
    ("leduc_poker", "Leduc poker: six cards, two betting rounds, a public card in the second.", {}),
    ("goofspiel", "Goofspiel: bid a card of your hand for each point card, both players at once.", {"num_cards": 3}),
    (
        "breakthrough",
        "Breakthrough on 6x6: move pieces forward, reach the far row or capture them all.",
        {"rows": 5, "columns": 4},
    ),
):
    register(
        EnvSpec(
            id=f"openspiel/{_game}-v0",
            entry_point=f"lang_pz.envs.openspiel.games:make_{_game}",
            description=_what,
            apis=("aec",),
            extra="openspiel",
            test_kwargs=_test,
        )
    )
del _game, _what, _test
register_family(
    EnvSpec(
        id="openspiel",
        entry_point="lang_pz.envs.openspiel.games:make_openspiel",
        description="Any OpenSpiel game by its short name (pyspiel.registered_names()), with its own parameters.",
        apis=("aec",),
        extra="openspiel",
    ),
    versioned=True,
)

# MPE2 1.1.1 (the particle worlds that left PettingZoo): positions and messages in words.
for _name, _what in (
    ("simple_spread", "MPE simple_spread: agents cover landmarks together; where each landmark and teammate is."),
    ("simple_speaker_listener", "MPE speaker-listener: the speaker names a colour, the listener goes there."),
    ("simple_reference", "MPE simple_reference: two agents each tell the other which landmark is its goal."),
):
    register(
        EnvSpec(
            id=f"mpe/{_name}-v0",
            entry_point=f"lang_pz.envs.mpe.make:make_{_name}",
            description=_what,
            apis=("parallel", "aec"),
            extra="mpe",
            test_kwargs={"max_cycles": 10},
        )
    )
del _name, _what

# TextArena 0.7.4 through lang_pz's AEC bridge: two games with listed moves, one without.
for _name, _game, _what in (
    ("tictactoe", "TicTacToe-v0", "TextArena Tic Tac Toe: the game's own board text; moves are listed squares like [4]."),
    ("kuhn_poker", "KuhnPoker-v0", "TextArena Kuhn poker over 3 rounds: the game's text, listed actions [check], [bet] ..."),
    ("nim", "Nim-v0", "TextArena Nim: remove objects from a pile, written [pile quantity]; no moves listed."),
):
    register(
        EnvSpec(
            id=f"textarena/{_name}-v0",
            entry_point="lang_pz.envs.textarena.make:make_textarena",
            description=_what,
            apis=("aec",),
            extra="textarena",
            kwargs={"game": _game},
            test_kwargs={"max_turns": 30},
        )
    )
del _name, _game, _what
register_family(
    EnvSpec(
        id="textarena",
        entry_point="lang_pz.envs.textarena.make:make_textarena",
        description="Any TextArena game by its id (textarena.envs.registration.ENV_REGISTRY), e.g. textarena/Chess-v0.",
        apis=("aec",),
        extra="textarena",
    )
)
