"""Teams for benchmarks: which policy plays each seat, from a short spec string.

A team spec is one seat spec for every agent, or ``;``-separated ``AGENT=SEAT`` pairs where
``*=SEAT`` covers the agents not named (mixed teams: LLM seats with classical partners)::

    "random"                              every agent random
    "piston_0=llm;*=heuristic"            one LLM piston among scripted ones
    "player_0=llm;player_1=greedy"        an LLM cook with overcooked_ai's greedy partner
    "run:runs/2026-01-01"                 a training run's final text policies, one per agent

Seat specs:

======================  ==========================================================================
``llm`` / ``llm:TEXT``  :class:`~lang_pz.policies.LLMPolicy` with the env's default instruction
                        (:data:`DEFAULT_INSTRUCTIONS`) or ``TEXT``, on the bench's backend
``run:DIR``             :class:`~lang_pz.policies.LLMPolicy` with the agent's policy text from a
                        training run, ``DIR/final/policies/AGENT.txt`` (:func:`lang_pz.runs.read_policies`)
``random``              :class:`~lang_pz.policies.RandomPolicy` (uniform over the legal action words)
``constant:WORD``       always ``WORD`` (e.g. ``constant:down``; for a task env a fixed reply)
``heuristic``           :class:`~lang_pz.policies.PistonballHeuristic` (Pistonball only)
``scripted``            :class:`~lang_pz.policies.mpe.MPEScriptedPolicy` (``mpe/*`` only: nearest free
                        landmark; the speaker names the goal colour)
``greedy``              :class:`~lang_pz.policies.OvercookedGreedyPolicy` (Overcooked only; a
                        centralised scripted partner that reads the game state)
``spiel:KIND[:N]``      :class:`~lang_pz.policies.openspiel.OpenSpielPlayer` (``openspiel/*`` only):
                        OpenSpiel's ``random``, ``cfr`` (CFR+ with N iterations, default 300) or
                        ``mcts`` (N simulations a move, default 100) player, e.g. ``spiel:cfr``
``oracle``              :class:`~lang_pz.policies.oracle.MathOracle` (math task envs; reads the gold
                        answer: an upper bound, not a policy)
``learned:PATH``        :class:`~lang_pz.policies.learned.SB3Policy` with SB3 PPO weights at PATH,
                        preprocessed by :class:`~lang_pz.policies.learned.SuperSuitPixels` (the
                        defaults of ``benchmarks/train_sb3_pistonball.py --obs pixels``); reads
                        the raw observation
``learned-text:PATH``   the same with SB3 PPO weights trained on the observation text through
                        :func:`lang_pz.interop.to_vector_env` (default
                        :class:`~lang_pz.interop.HashedBagOfWords`; ``--obs text``)
======================  ==========================================================================
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lang_pz.error import InvalidKwargError, LangPZError
from lang_pz.policies.base import Policy

SEAT_KINDS = (
    "llm",
    "run",
    "random",
    "constant",
    "heuristic",
    "greedy",
    "oracle",
    "learned",
    "learned-text",
    "spiel",
    "scripted",
)

#: The instruction an ``llm`` seat gets, by env id prefix (first match), unless ``llm:TEXT`` names one.
DEFAULT_INSTRUCTIONS: tuple[tuple[str, str], ...] = (
    ("butterfly/pistonball", "If the ball is to your right or out of view, go down; otherwise go up."),
    (
        "overcooked/",
        "Fetch onions, put three in the pot, start cooking, then take a dish, fill it with soup and deliver it.",
    ),
    ("tasks/gsm8k", "Solve the problem. End with '#### ' and the final number."),
    ("tasks/math500", "Solve the problem. Put the final answer in \\boxed{}."),
    ("openspiel/hanabi", "Play a card only when the hints show it fits a firework; otherwise give your partner a hint."),
    ("openspiel/", "Raise or bet with a strong card, call with a middling one, fold or pass with a weak one."),
    ("mpe/simple_spread", "Move towards the nearest landmark marked free."),
    ("mpe/", "Say the colour the other agent must reach; move towards the landmark whose colour you hear."),
    ("textarena/", "Play the move that wins, or blocks the opponent's win; otherwise a central move."),
    ("", "Choose the action that helps your team most."),
)


def default_instruction(env_id: str) -> str:
    """The :data:`DEFAULT_INSTRUCTIONS` entry of ``env_id``."""
    return next(text for prefix, text in DEFAULT_INSTRUCTIONS if env_id.startswith(prefix))


@dataclass(frozen=True)
class BenchTeam:
    """A named team: agent (or ``"*"``, every other agent) -> seat spec.

    Attributes:
        name: the row label in tables (default: the spec).
        seats: agent -> seat spec; ``"*"`` is the default seat.
    """

    name: str
    seats: Mapping[str, str] = field(default_factory=dict)

    @property
    def spec(self) -> str:
        """The team spec string (canonical: named seats in order, then ``*``)."""
        if set(self.seats) == {"*"}:
            return self.seats["*"]
        named = [f"{a}={s}" for a, s in self.seats.items() if a != "*"]
        return ";".join(named + ([f"*={self.seats['*']}"] if "*" in self.seats else []))

    def seat(self, agent: str) -> str:
        """The seat spec of ``agent``.

        Raises:
            InvalidKwargError: the team names no seat for ``agent`` and has no ``*``.
        """
        if agent in self.seats:
            return self.seats[agent]
        if "*" in self.seats:
            return self.seats["*"]
        raise InvalidKwargError(
            f"team {self.name!r} has no seat for {agent!r} (seats: {dict(self.seats)}); add '*=SEAT' or name every agent"
        )

    def uses_llm(self) -> bool:
        """Whether any seat needs the LLM backend."""
        return any(s.split(":", 1)[0] in ("llm", "run") for s in self.seats.values())


def parse_team(spec: str, name: str | None = None) -> BenchTeam:
    """A :class:`BenchTeam` from a team spec (module docstring).

    Raises:
        InvalidKwargError: an empty spec, an unknown seat kind (names the valid ones), or an agent
            given twice.
    """
    spec = str(spec).strip()
    if not spec:
        raise InvalidKwargError("empty team spec; e.g. 'random' or 'piston_0=llm;*=heuristic'")
    seats: dict[str, str] = {}
    for part in (p.strip() for p in spec.split(";")):
        agent, sep, seat = part.partition("=")
        if sep and agent.strip() and (agent.strip() == "*" or (":" not in agent and " " not in agent.strip())):
            agent, seat = agent.strip(), seat.strip()
        else:
            agent, seat = "*", part
        if agent in seats:
            raise InvalidKwargError(f"team spec {spec!r} gives {agent!r} two seats")
        kind = seat.split(":", 1)[0]
        if kind not in SEAT_KINDS:
            raise InvalidKwargError(
                f"unknown seat {seat!r} in team spec {spec!r}{_did_you_mean(kind, SEAT_KINDS)}; seat kinds: "
                f"{', '.join(SEAT_KINDS)}"
            )
        seats[agent] = seat
    return BenchTeam(name or spec, seats)


def build_seat(seat: str, env: Any, env_id: str, agent: str, llm: Callable[[], Any]) -> Policy:
    """The policy of one seat.

    Args:
        seat: a seat spec (module docstring).
        env: the language env the team plays (greedy and oracle partners are built on it).
        env_id: its registered id (for the default instruction and env-specific seats).
        agent: the seat's agent id.
        llm: returns the (metered) backend; called only by ``llm`` and ``run`` seats.

    Raises:
        InvalidKwargError: a seat that does not fit the env (e.g. ``heuristic`` off Pistonball).
        LangPZError: a run folder or weights file that does not exist or lacks the agent.
    """
    kind, _, arg = seat.partition(":")
    if kind == "llm":
        from lang_pz.policies.llm import LLMPolicy

        return LLMPolicy(arg or default_instruction(env_id), llm())
    if kind == "run":
        from lang_pz.policies.llm import LLMPolicy
        from lang_pz.runs import read_policies

        run = Path(arg).expanduser()
        folder = run / "final" / "policies"
        need = (
            f"a run folder (lang-pz train --run-dir) must contain final/policies/AGENT.txt, one policy text "
            f"per agent (here {folder / (agent + '.txt')}), written when the run finishes"
        )
        if not arg.strip() or not run.is_dir():
            what = "names no folder" if not arg.strip() else f"names {run}, which is not a folder"
            raise LangPZError(f"seat {seat!r} {what}; write run:RUN_DIR; {need}")
        texts = read_policies(folder) if folder.is_dir() else {}
        if agent not in texts:
            found = f"found {sorted(texts)}" if folder.is_dir() else f"{run} has no final/policies/"
            raise LangPZError(f"seat {seat!r}: no policy for {agent} ({found}); {need}")
        return LLMPolicy(texts[agent], llm())
    if kind == "random":
        from lang_pz.policies.random import RandomPolicy

        return RandomPolicy()
    if kind == "constant":
        from lang_pz.policies.scripted import ConstantPolicy

        if not arg.strip():
            raise InvalidKwargError(f"seat {seat!r} of {agent} names no word; write constant:WORD, e.g. constant:down")
        return ConstantPolicy(arg)
    if kind == "heuristic":
        if not env_id.startswith("butterfly/pistonball"):
            raise InvalidKwargError(f"seat 'heuristic' is the Pistonball heuristic; {env_id} is not Pistonball")
        from lang_pz.policies.scripted import PistonballHeuristic

        return PistonballHeuristic()
    if kind == "greedy":
        if not env_id.startswith("overcooked/"):
            raise InvalidKwargError(f"seat 'greedy' is overcooked_ai's greedy partner; {env_id} is not Overcooked")
        from lang_pz.policies.overcooked import OvercookedGreedyPolicy

        return OvercookedGreedyPolicy(env, agent)
    if kind == "spiel":
        return _spiel_seat(seat, env, env_id, agent)
    if kind == "scripted":
        if not env_id.startswith("mpe/"):
            raise InvalidKwargError(f"seat 'scripted' is the MPE scripted team; {env_id} is not an mpe/* env")
        from lang_pz.policies.mpe import MPEScriptedPolicy

        return MPEScriptedPolicy()
    if kind == "oracle":
        from lang_pz.policies.oracle import MathOracle

        return MathOracle(env, agent)
    if kind in ("learned", "learned-text"):
        from lang_pz.policies.learned import SB3Policy, SuperSuitPixels

        if not arg:
            raise InvalidKwargError(f"seat {kind!r} needs the weights: {kind}:PATH (an SB3 .zip)")
        if kind == "learned-text":
            from lang_pz.interop.encoders import HashedBagOfWordsV1  # what the committed text model was trained on

            return SB3Policy.load(Path(arg).expanduser(), HashedBagOfWordsV1(), observation="text")
        return SB3Policy.load(Path(arg).expanduser(), SuperSuitPixels())
    raise InvalidKwargError(f"unknown seat {seat!r}{_did_you_mean(kind, SEAT_KINDS)}; seat kinds: {', '.join(SEAT_KINDS)}")


def _did_you_mean(value: str, choices: Any) -> str:
    close = difflib.get_close_matches(value, list(choices), n=1, cutoff=0.7)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _spiel_seat(seat: str, env: Any, env_id: str, agent: str) -> Policy:
    """An OpenSpiel player from ``spiel:KIND[:N]`` (module docstring).

    Raises:
        InvalidKwargError: not an ``openspiel/*`` env, an unknown kind, or an N that is no positive int.
    """
    if not env_id.startswith("openspiel/"):
        raise InvalidKwargError(f"seat {seat!r} is an OpenSpiel player; {env_id} is not an openspiel/* env")
    from lang_pz.policies.openspiel import OpenSpielPlayer

    _, _, rest = seat.partition(":")
    kind, _, n = rest.partition(":")
    if n and not (n.isdigit() and int(n) > 0):
        raise InvalidKwargError(f"seat {seat!r}: N must be a positive integer, e.g. spiel:cfr:300")
    budget = {"iterations": int(n)} if n and kind == "cfr" else {"simulations": int(n)} if n else {}
    return OpenSpielPlayer(env, agent, kind or "random", **budget)


def build_team(team: BenchTeam, env: Any, env_id: str, llm: Callable[[], Any]) -> dict[str, Policy]:
    """Agent -> policy for every agent of ``env`` (see :func:`build_seat`).

    Raises:
        InvalidKwargError: the team names an agent ``env`` does not have (a typo would otherwise
            leave that seat to ``*``), or a seat does not fit (:func:`build_seat`).
    """
    unknown = sorted(set(team.seats) - {"*", *env.possible_agents})
    if unknown:
        raise InvalidKwargError(
            f"team {team.name!r} names {unknown}, not agents of {env_id} (agents: {', '.join(env.possible_agents)})"
        )
    return {a: build_seat(team.seat(a), env, env_id, a, llm) for a in env.possible_agents}
