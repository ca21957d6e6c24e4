"""Seeded start states of Overcooked, split into disjoint train / validation / test sets.

overcooked_ai starts every episode of a layout from the same state (the layout file's player
positions, both facing up, nothing held, pots empty), and the game has no randomness: with
greedy players, two seeds play the same episode decision for decision, so a "validation" seed
replays a training one. With ``split=`` (:func:`lang_pz.envs.overcooked.make_env`), a reset
seed picks the start instead:

- a start is both players' cells and facing directions (4 each); objects stay as in the standard
  start (nothing held, pots empty), so the task is the same, only where it begins differs;
- each player starts in the floor region (cells connected by floor) of its standard start: on
  asymmetric_advantages and forced_coordination, where a counter separates the two players,
  each stays on its own side, so who can reach what is the layout's;
- the *cell pairs* are partitioned 60/20/20 into ``train`` / ``validation`` / ``test`` by
  :func:`lang_pz.tasks.datasets.split` (a hash of the pair; ``"all"``: every pair), so a
  validation or test start never puts the players on a pair of cells a training start used;
- a phase's starts are its pairs times the 16 facing combinations, and seed ``s`` plays
  position ``s % n`` of their fixed permutation (:func:`lang_pz.tasks.datasets.partition.seed_order`):
  ``n`` consecutive seeds play ``n`` distinct starts.

Start states per layout (cell pairs train / validation / test, times 16 facings):
cramped_room 30 pairs (18 / 6 / 6), asymmetric_advantages 49 (29 / 10 / 10),
coordination_ring 56 (34 / 11 / 11), forced_coordination 9 (5 / 2 / 2),
counter_circuit 182 (109 / 36 / 37).
"""

from __future__ import annotations

from typing import Any

from lang_pz.error import InvalidKwargError
from lang_pz.tasks.datasets.partition import PHASE_FRACTIONS, PHASES, seed_order, split

__all__ = ["START_SPLITS", "Start", "describe_start", "start_states"]

#: The ``split`` values of Overcooked (``None``, the default, is the layout's fixed start).
START_SPLITS: tuple[str, ...] = ("all", *PHASES)
#: Facing directions in overcooked_ai's order (``Direction.ALL_DIRECTIONS``) and their words.
_FACING: dict[tuple[int, int], str] = {(0, -1): "up", (0, 1): "down", (1, 0): "right", (-1, 0): "left"}

Cell = tuple[int, int]
#: ``((cell, facing) of player_0, (cell, facing) of player_1)``.
Start = tuple[tuple[Cell, Cell], tuple[Cell, Cell]]


def _region(floor: set[Cell], cell: Cell) -> list[Cell]:
    """The floor cells connected to ``cell`` by floor (4-neighbourhood), sorted."""
    seen, todo = {cell}, [cell]
    while todo:
        x, y = todo.pop()
        for nxt in ((x + 1, y), (x - 1, y), (x, y + 1), (x, y - 1)):
            if nxt in floor and nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return sorted(seen)


def start_states(mdp: Any, part: str) -> tuple[list[Start], tuple[int, ...]]:
    """The start states of ``part`` of the layout ``mdp`` and the order seeds play them in.

    Args:
        mdp: an ``OvercookedGridworld`` (two players).
        part: one of :data:`START_SPLITS`.

    Returns:
        ``(starts, order)``: seed ``s`` plays ``starts[order[s % len(starts)]]``.

    Raises:
        InvalidKwargError: ``part`` is not one of :data:`START_SPLITS`, or the layout's cell
            pairs leave ``part`` empty (the message says how many pairs there are).
    """
    if part not in START_SPLITS:
        raise InvalidKwargError(
            f"split must be None (the layout's fixed start) or one of {list(START_SPLITS)}, got {part!r}"
        )
    floor = set(mdp.get_valid_player_positions())
    regions = [_region(floor, tuple(cell)) for cell in mdp.start_player_positions]
    pairs = [(a, b) for a in regions[0] for b in regions[1] if a != b]
    if part != "all":
        pairs = split(pairs, 0, PHASE_FRACTIONS, key=lambda pair: f"{pair[0]}|{pair[1]}")[PHASES.index(part)]
    if not pairs:
        raise InvalidKwargError(
            f"Overcooked layout {mdp.layout_name!r} has too few start cells for a {part!r} part "
            f"(player regions of {len(regions[0])} and {len(regions[1])} cells): use split=None, "
            "its fixed start, and know that its seeds then all play the same episode"
        )
    starts: list[Start] = [((a, fa), (b, fb)) for a, b in pairs for fa in _FACING for fb in _FACING]
    return starts, seed_order([describe_start(s) for s in starts])


def describe_start(start: Start) -> str:
    """A start state in words, e.g. ``player_0 (1,2) up, player_1 (3,1) left`` (its id)."""
    return ", ".join(
        f"player_{i} ({cell[0]},{cell[1]}) {_FACING[tuple(facing)]}"  # type: ignore[index]
        for i, (cell, facing) in enumerate(start)
    )
