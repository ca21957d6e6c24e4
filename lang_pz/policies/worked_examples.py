"""The worked examples of :class:`lang_pz.policies.llm.LLMPolicy`'s prompt: toy situations,
unrelated to any task, that show a small model how a policy text maps onto an action of the
request's kind (a word of the environment's own action set, a number, name=value pairs, free
text). Kept apart from the prompt's assembly so each can be read alone."""

from __future__ import annotations

from collections.abc import Sequence

#: Toy situations of the worked examples for a finite action set: a robot in a hallway,
#: unrelated to any real task, each mentioning things that suggest no particular action.
CHOICE_SITUATIONS: tuple[str, ...] = (
    "You are a robot in a hallway. A door is on your left, 3 m away. A cat is on your right, moving away. The lamp is off.",
    "You are a robot in a hallway. A wall is 1 m to your right. Someone calls you from far away.",
    "You are a robot in a hallway. The floor is wet. A box is 2 m ahead of you.",
)
#: Policy phrasings of the worked examples (``{}`` is an action word).
CHOICE_PHRASINGS: tuple[str, ...] = (
    "Always choose {}.",
    "Pick {} every time.",
    "Your action is always {}.",
    "Keep doing {}.",
    "Move: {}, every step.",
    "Do {} at each step.",
)


def choice_examples(actions: Sequence[str]) -> tuple[tuple[str, str, str], ...]:
    """Worked examples for a finite action set, built from *the environment's own action words*.

    Two rounds of up to three ``(policy, observation, action)`` examples in the toy hallway
    situations of :data:`CHOICE_SITUATIONS` (the first round picks the last, the first, then a
    middle one of ``actions``; the second the first, the last, then the middle one), each in its
    own phrasing of :data:`CHOICE_PHRASINGS`, each observation ending with the real ``Actions:``
    line. So each word is shown twice, and the same situation is shown with two policies and two
    actions: the policy, not the situation, decides.

    Showing the real action words is what makes a small model map a policy onto them (measured
    with SmolLM2-135M on 15 Pistonball policies in free phrasing x 8 real observations: 119/120
    actions as the policy says, against 91/120 with fixed examples whose actions were other
    words). Showing each twice is what makes it follow texts phrased unlike the examples: with
    one round (three examples) it played the optimiser's "Always play up." as down at 7 of 8
    observations (and 1,310 of 1,311 validation decisions in training runs): its scores of the
    three words were within 0.3 logits of each other, and "down" won. With two rounds the same
    text plays up at 8 of 8, and 21 texts x 8 observations are followed at 167/168 against 151/168
    with one round; 9 phrasings written afterwards x 4 observations at 36/36 against 30/36
    (``benchmarks/results/actor_adherence.md``). The prompt grows from 294 to 489 tokens, a shared
    prefix llama.cpp reuses: about 3 % more time per decision.

    Args:
        actions: the legal action words, in the order the observation lists them (>= 1).
    """
    acts = list(dict.fromkeys(actions))
    if not acts:
        raise ValueError("actions is empty: a choice needs at least one action word")
    middle = acts[len(acts) // 2]
    picks = list(dict.fromkeys([acts[-1], acts[0], middle])) + list(dict.fromkeys([acts[0], acts[-1], middle]))
    line = "\nActions: " + ", ".join(acts)
    return tuple(
        (CHOICE_PHRASINGS[i].format(a), CHOICE_SITUATIONS[i % len(CHOICE_SITUATIONS)] + line, a) for i, a in enumerate(picks)
    )


#: Worked examples for a 1-D continuous action (a number in a range).
NUMBER_EXAMPLES: tuple[tuple[str, str, str], ...] = (
    (
        "Always set the dial to 7.",
        "You are a robot next to a dial. The dial shows 2. A lamp is on your right.\nActions: a number from 0 to 10",
        "7",
    ),
    (
        "Always turn the dial to the lowest value.",
        "You are a robot next to a dial. The dial shows 9. A cat is behind you.\nActions: a number from 0 to 10",
        "0",
    ),
)

#: Worked examples for a continuous action of several named numbers (name=value pairs).
COMPONENT_EXAMPLES: tuple[tuple[str, str, str], ...] = (
    (
        "Always push right at full strength.",
        "You are a robot on a table. The edge is to your right.\n"
        "Action: Write name=value for each of left (0 to 1), right (0 to 1)",
        "left=0 right=1",
    ),
    (
        "Always push left gently.",
        "You are a robot on a table. A wall is to your right.\n"
        "Action: Write name=value for each of left (0 to 1), right (0 to 1)",
        "left=0.3 right=0",
    ),
)

#: Worked examples for free-text actions.
TEXT_EXAMPLES: tuple[tuple[str, str, str], ...] = (
    (
        "Always say hello.",
        "You are a robot at a door. A visitor is waiting.",
        "hello",
    ),
    (
        "Always answer with the colour of the lamp.",
        "You are a robot in a hallway. The lamp is green.",
        "green",
    ),
)
