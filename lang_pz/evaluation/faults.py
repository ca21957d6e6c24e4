"""How well does a language critic assign credit? Scoring against known faults, and the
fault-injection benchmark that makes them.

**The benchmark.** For one environment, each *case* plays one episode with a good base team
in which one agent, drawn at random, is a :class:`~lang_pz.policies.faulty.FaultyPolicy`:
its action is replaced during a window of ``window`` consecutive decisions, drawn at random
inside the unfaulted episode of the same seed (which is also played, to record the fault's
effect on the team return). Ground truth: the faulty agent and its *faulty steps* — the
trajectory steps where its action was replaced **and** differs from what the base policy
chose (the replaced steps are recorded too). A case with no faulty step (e.g. the ``random``
fault drew the base action every time) has its window redrawn (the agent is kept, so the
faulty agent stays uniform over the agents), at most ``MAX_REDRAWS`` times, then skipped and
counted. The critic then reads the faulty trajectory. This is fault injection
used as labelling, after Who&When's "which agent, which step" task (Zhang et al. 2025,
"Which Agent Causes Task Failures and When?", ICML), with labels known by construction.

**Scoring** (shared with :mod:`lang_pz.evaluation.whowhen`):

- the *blamed agent* is the agent with the lowest credit. A tie for the lowest credit is a
  miss under the default ``tie="miss"`` (the critic did not single anyone out); ``"first"``
  blames the first tied agent in trajectory order, ``"random"`` a seeded uniform choice;
- the *blamed steps* are the steps the blamed agent's credit cites; the case is a step-level
  hit if any of them lies in the faulty window ``[first faulty step - tolerance, last faulty
  step + tolerance]`` (``tolerance=0`` by default). No blamed agent, no blamed steps;
- a critic that fails (no valid reply, backend error) scores a miss on that case, and the
  failure is counted (``critic_failures``).

**Baselines.** Analytic chance: agent ``1 / n_agents``; step: the fraction of the
trajectory's steps inside the window (the chance that one uniformly random step hits it),
both averaged over cases. Empirical: :class:`RandomCritic`, seeded, scored by the same code.
Note a critic may cite up to ``MAX_CITED_STEPS`` steps and scores if *any* hits, so its step
accuracy is advantaged against the one-step chance; the random critic cites one step.

Episode length matters: with ``n_pistons=5, hold=5`` the Pistonball heuristic wins in 2-4
decisions (measured, seeds 0-4), so a 2-decision window covers most of the episode and the step
chance is near 1; ``hold=1`` gives 7-14 decisions.

**Base teams** (``base=``, CLI ``--base``; default per environment family, :data:`DEFAULT_BASES`):

=================================  =========  ===============================================
Environments                       Default    Base team
=================================  =========  ===============================================
``butterfly/pistonball-v0``        heuristic  :class:`~lang_pz.policies.scripted.PistonballHeuristic`
``overcooked/<layout>-v0``         greedy     overcooked_ai's greedy agent for both cooks
                                              (centralised scripted: reads the game state)
``tasks/gsm8k-v0``,                oracle     :class:`~lang_pz.policies.oracle.MathOracle`:
``tasks/math500-v0``                          the solver writes the gold answer, the verifier
                                              confirms (centralised scripted: reads the item)
anything else                      random     :class:`~lang_pz.policies.random.RandomPolicy`
=================================  =========  ===============================================

Overcooked (measured, ``cramped_room``, ``actions="skills"``, seeds 0-19): the game is
deterministic, so every case replays the same clean episode and only the faulty agent and
window vary. The greedy team delivers its first soup at tick 37 and its second by tick 72 and
has slack: with ``horizon=40`` (31 skill steps, team return 40) a 2-decision ``idle`` or
``harmful`` fault lowered the return in 0-1 of 20 cases (the teammate covers, or the fault
falls while a soup cooks); with ``horizon=38`` (30 steps) in 3-5 of 20. ``require_effect=True``
keeps only draws that lower the team return; note it skews the labels there (player_1's faults
cost a soup far more often than player_0's: 9 vs 3 kept of 20 cases, 8 skipped), so compare
with the label frequencies, not only with ``1 / n_agents``. Skill-level ``idle`` plays ``wait 1``; ``harmful``
plays ``place on counter`` (:data:`OVERCOOKED_HARMFUL_SKILL`). Keep ``horizon`` small: the
critic shows at most ``max_prompt_steps`` (40) steps, subsampling longer episodes.

Math tasks (AEC, free-text actions, one reply per role with the default turns): the faulty
agent is the role whose reply was replaced (step 0: solver, step 1: verifier), so agent and
step chance are both 1/2. ``idle`` replies ``""`` (the solver then has no answer: return 0;
an idle verifier keeps the right answer: no effect), ``harmful`` a fixed wrong answer
(:data:`MATH_HARMFUL_TEXT`: return 0 whichever role). The ``random`` fault and base team need
``info["legal_actions"]`` and are refused here.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, Any, Literal, Protocol

import numpy as np

from lang_pz.critics.base import Credit, CriticReport, compute_evidence
from lang_pz.error import InvalidKwargError, LangPZError
from lang_pz.policies.base import Policy, action_range, legal_actions
from lang_pz.policies.faulty import FAULTS, Fault, FaultyPolicy
from lang_pz.trajectory import Trajectory, to_jsonable

TieRule = Literal["miss", "first", "random"]
TIE_RULES: tuple[str, ...] = ("miss", "first", "random")
#: Redraws of a case's faulty agent and window when a draw yields no faulty step.
MAX_REDRAWS = 10
#: ``(env, agent, seed) -> Policy``: builds one member of the base team for ``env``.
BaseFactory = Callable[[Any, str, int], Policy]
#: Base teams selectable by name (see :func:`base_factory`).
BASES: tuple[str, ...] = ("heuristic", "greedy", "random", "oracle")
#: The base team used per environment family when the caller names none (see :func:`env_family`).
DEFAULT_BASES: dict[str, str] = {"pistonball": "heuristic", "overcooked": "greedy", "math": "oracle",
                                 "other": "random"}
#: The ``harmful`` fault per environment id when the caller gives none (base action -> faulty).
#: Other families: see :func:`default_harmful_action`.
DEFAULT_HARMFUL_ACTIONS: dict[str, Mapping[str, str]] = {
    # Pistonball: the opposite of the slope-making move (a piston that should make room rises).
    "butterfly/pistonball-v0": {"up": "down", "down": "up", "stay": "down"},
}
#: Overcooked ``actions="primitive"``: the opposite move; ``interact`` and ``stay`` swapped.
OVERCOOKED_HARMFUL_PRIMITIVE: Mapping[str, str] = {
    "up": "down", "down": "up", "left": "right", "right": "left", "stay": "interact", "interact": "stay",
}
#: Overcooked ``actions="skills"``: put down whatever the cook carries (a lost tick if empty-handed).
OVERCOOKED_HARMFUL_SKILL = "place on counter"
#: Math task environments: a fixed wrong final answer, in the format the environment extracts.
#: (Wrong unless the gold answer is 0; ``team_return`` against ``clean_team_return`` shows it.)
MATH_HARMFUL_TEXT: dict[str, str] = {"gsm8k": "The answer is 0.\n#### 0", "math": "The answer is \\boxed{0}."}


def env_family(env_id: str) -> str:
    """The benchmark's family of ``env_id``: ``"pistonball"``, ``"overcooked"`` (``overcooked/*``),
    ``"math"`` (``tasks/gsm8k-v0``, ``tasks/math500-v0``) or ``"other"``."""
    if env_id == "butterfly/pistonball-v0":
        return "pistonball"
    if env_id.startswith("overcooked/"):
        return "overcooked"
    if env_id in ("tasks/gsm8k-v0", "tasks/math500-v0"):
        return "math"
    return "other"


def default_base(env_id: str) -> str:
    """The base team of ``env_id`` when none is named (:data:`DEFAULT_BASES` of its family)."""
    return DEFAULT_BASES[env_family(env_id)]


def base_factory(name: str, env_id: str) -> BaseFactory:
    """The named base team's factory ``(env, agent, seed) -> Policy``.

    - ``"heuristic"``: :class:`~lang_pz.policies.scripted.PistonballHeuristic` (Pistonball only);
    - ``"greedy"``: overcooked_ai's greedy planning agent for every cook,
      :class:`~lang_pz.policies.overcooked.OvercookedGreedyPolicy` (Overcooked only; a
      centralised scripted team: it reads the game state);
    - ``"oracle"``: :class:`~lang_pz.policies.oracle.MathOracle` per role, answering with the
      current item's gold answer (math task environments only; a centralised scripted team);
    - ``"random"``: :class:`~lang_pz.policies.random.RandomPolicy`, seeded per agent (any
      environment with ``info["legal_actions"]`` or ``info["action_range"]``).

    Raises:
        InvalidKwargError: an unknown name, or a scripted team made for another family.
    """
    if name not in BASES:
        raise InvalidKwargError(f"unknown base team {name!r}; choose one of {', '.join(BASES)}")
    family = env_family(env_id)
    need = {"heuristic": "pistonball", "greedy": "overcooked", "oracle": "math"}.get(name)
    if need is not None and family != need:
        where = {"pistonball": "butterfly/pistonball-v0", "overcooked": "overcooked/<layout>-v0",
                 "math": "tasks/gsm8k-v0 and tasks/math500-v0"}[need]
        raise InvalidKwargError(
            f"base team {name!r} exists only for {where}, not {env_id}; use --base {default_base(env_id)} "
            f"(the default there) or random"
        )
    if name == "heuristic":
        return _pistonball_heuristic
    if name == "greedy":
        return _overcooked_greedy
    if name == "oracle":
        return _math_oracle
    return random_base_policy


def _pistonball_heuristic(env: Any, agent: str, seed: int) -> Policy:
    from lang_pz.policies.scripted import PistonballHeuristic

    return PistonballHeuristic()


def _overcooked_greedy(env: Any, agent: str, seed: int) -> Policy:
    from lang_pz.policies.overcooked import overcooked_partner

    return overcooked_partner("greedy", env, agent, seed=seed)


def _math_oracle(env: Any, agent: str, seed: int) -> Policy:
    from lang_pz.policies.oracle import MathOracle

    return MathOracle(env, agent)


def random_base_policy(env: Any, agent: str, seed: int) -> Policy:
    """The generic base team: :class:`~lang_pz.policies.random.RandomPolicy` seeded per agent."""
    from lang_pz.policies.random import RandomPolicy

    return RandomPolicy(seed=seed)


def default_harmful_action(env_id: str, env: Any) -> str | Mapping[str, str] | None:
    """The ``harmful`` fault's action for ``env`` when the caller gives none, ``None`` if unknown.

    Pistonball: :data:`DEFAULT_HARMFUL_ACTIONS`; Overcooked: :data:`OVERCOOKED_HARMFUL_PRIMITIVE`
    or :data:`OVERCOOKED_HARMFUL_SKILL` per its ``actions`` level; math tasks:
    :data:`MATH_HARMFUL_TEXT` (a fixed wrong answer).
    """
    if env_id in DEFAULT_HARMFUL_ACTIONS:
        return DEFAULT_HARMFUL_ACTIONS[env_id]
    family = env_family(env_id)
    game = getattr(env, "unwrapped", env)
    if family == "overcooked":
        level = getattr(game, "action_level", "primitive")
        return OVERCOOKED_HARMFUL_SKILL if level == "skills" else OVERCOOKED_HARMFUL_PRIMITIVE
    if family == "math":
        return MATH_HARMFUL_TEXT["gsm8k" if getattr(game, "gsm8k", False) else "math"]
    return None


def _reset_infos(env: Any, seed: int) -> dict[str, Mapping[str, Any]]:
    """Every agent's ``info`` right after ``reset(seed=seed)`` (parallel or AEC)."""
    from pettingzoo import ParallelEnv

    if isinstance(env, ParallelEnv):
        _, infos = env.reset(seed=seed)
    else:
        env.reset(seed=seed)
        infos = env.infos
    return {a: dict(infos.get(a, {})) for a in env.possible_agents}


class Assessor(Protocol):
    """Anything that credits the agents of a trajectory, like :class:`CentralCritic`."""

    def assess(self, trajectory: Trajectory, policies: Mapping[str, str] | None = None) -> CriticReport: ...


# -- scoring -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Blame:
    """Whom and when a critic's report blames.

    Attributes:
        agent: the blamed agent, ``None`` when a tie was scored as a miss.
        steps: the steps its credit cites (empty without a blamed agent).
        tied: every agent sharing the lowest credit (one agent: no tie).
    """

    agent: str | None
    steps: tuple[int, ...]
    tied: tuple[str, ...]


def blame(report: CriticReport, *, tie: TieRule = "miss", rng: np.random.Generator | None = None) -> Blame:
    """The agent with the lowest credit and the steps it cites (ties per ``tie``, see the module).

    Raises:
        LangPZError: an unknown tie rule, ``tie="random"`` without ``rng``, or an empty report.
    """
    if tie not in TIE_RULES:
        raise LangPZError(f"unknown tie rule {tie!r}; choose one of {', '.join(TIE_RULES)}")
    if not report.credits:
        raise LangPZError(f"the report of episode {report.episode} credits no agent; nothing to blame")
    low = min(c.credit for c in report.credits.values())
    tied = tuple(a for a, c in report.credits.items() if c.credit == low)
    if len(tied) == 1 or tie == "first":
        agent: str | None = tied[0]
    elif tie == "random":
        if rng is None:
            raise LangPZError("tie='random' needs rng= (a numpy Generator)")
        agent = tied[int(rng.integers(len(tied)))]
    else:
        agent = None
    steps = tuple(report.credits[agent].steps) if agent is not None else ()
    return Blame(agent=agent, steps=steps, tied=tied)


def fault_window(truth_steps: Sequence[int], tolerance: int = 0) -> tuple[int, int]:
    """``(first - tolerance, last + tolerance)`` of the faulty steps, inclusive.

    Raises:
        LangPZError: no faulty step, or a negative tolerance.
    """
    if not truth_steps:
        raise LangPZError("no faulty step: a case needs at least one to be scored")
    if tolerance < 0:
        raise LangPZError(f"tolerance must be >= 0 steps, got {tolerance}")
    return min(truth_steps) - tolerance, max(truth_steps) + tolerance


def chance_step_hit(all_steps: Sequence[int], truth_steps: Sequence[int], tolerance: int = 0) -> float:
    """The chance that one uniformly random step of ``all_steps`` lies in the faulty window."""
    lo, hi = fault_window(truth_steps, tolerance)
    uniq = set(all_steps)
    if not uniq:
        return 0.0
    return sum(lo <= s <= hi for s in uniq) / len(uniq)


def score_report(
    report: CriticReport,
    truth_agent: str,
    truth_steps: Sequence[int],
    *,
    tolerance: int = 0,
    tie: TieRule = "miss",
    rng: np.random.Generator | None = None,
) -> dict[str, Any]:
    """Score one report: ``blamed``, ``tied``, ``cited`` (steps), ``credits``, ``agent_hit``,
    ``step_hit`` (a blamed step in the faulty window) and ``joint_hit`` (both)."""
    b = blame(report, tie=tie, rng=rng)
    lo, hi = fault_window(truth_steps, tolerance)
    agent_hit = b.agent == truth_agent
    step_hit = any(lo <= s <= hi for s in b.steps)
    return {
        "blamed": b.agent, "tied": list(b.tied), "cited": list(b.steps),
        "credits": {a: c.credit for a, c in report.credits.items()},
        "agent_hit": agent_hit, "step_hit": step_hit, "joint_hit": agent_hit and step_hit,
        "error": None,
    }


def failed_score(error: Exception) -> dict[str, Any]:
    """The score of a case whose critic failed: a miss, with the error."""
    return {"blamed": None, "tied": [], "cited": [], "credits": {}, "agent_hit": False,
            "step_hit": False, "joint_hit": False, "error": f"{type(error).__name__}: {error}"}


def assess_and_score(
    critic: Assessor,
    trajectory: Trajectory,
    truth_agent: str,
    truth_steps: Sequence[int],
    *,
    tolerance: int = 0,
    tie: TieRule = "miss",
    rng: np.random.Generator | None = None,
) -> dict[str, Any]:
    """Ask ``critic`` about ``trajectory`` and score it; a :class:`LangPZError` is a miss."""
    try:
        report = critic.assess(trajectory)
    except LangPZError as exc:
        return failed_score(exc)
    out = score_report(report, truth_agent, truth_steps, tolerance=tolerance, tie=tie, rng=rng)
    out["usage"] = report.usage
    out["explanations"] = {a: c.explanation for a, c in report.credits.items()}
    return out


def score_case(
    critic: Assessor,
    random_critic: Assessor,
    trajectory: Trajectory,
    truth_agent: str,
    truth_steps: Sequence[int],
    all_steps: Sequence[int],
    *,
    tolerance: int = 0,
    tie: TieRule = "miss",
    rng: np.random.Generator | None = None,
) -> dict[str, Any]:
    """The scored part of one benchmark record, the fields :func:`summarise` reads.

    Args:
        critic, random_critic: asked in this order (both draw ties from ``rng``).
        all_steps: the trajectory's step indices, for the chance of a step hit.

    Returns:
        ``chance_agent`` (1 / number of agents), ``chance_step`` (:func:`chance_step_hit`),
        and ``critic`` / ``random_critic``: each one's :func:`assess_and_score` result.
    """
    kw = {"tolerance": tolerance, "tie": tie, "rng": rng}
    return {
        "chance_agent": 1.0 / len(trajectory.agents),
        "chance_step": chance_step_hit(all_steps, truth_steps, tolerance),
        "critic": assess_and_score(critic, trajectory, truth_agent, truth_steps, **kw),
        "random_critic": assess_and_score(random_critic, trajectory, truth_agent, truth_steps, **kw),
    }


def blame_text(score: Mapping[str, Any]) -> str:
    """``blamed <agent> citing <steps>`` of an :func:`assess_and_score` result, plus
    `` (critic failed)`` when the critic raised; for progress lines."""
    return f"blamed {score['blamed']} citing {score['cited']}{' (critic failed)' if score['error'] else ''}"


class RandomCritic:
    """The empirical chance baseline: distinct uniform random credits in [-1, 1] and one
    uniformly random cited step (among the agent's own steps) per agent.

    Args:
        seed: seed of its :class:`numpy.random.Generator`.
    """

    def __init__(self, seed: int | None = 0) -> None:
        self.rng = np.random.default_rng(seed)

    def assess(self, trajectory: Trajectory, policies: Mapping[str, str] | None = None) -> CriticReport:
        agents = trajectory.agents
        if not agents:
            raise LangPZError(f"trajectory of episode {trajectory.episode} has no agent steps to assess")
        values = self.rng.uniform(-1.0, 1.0, size=len(agents))
        credits = {}
        for a, v in zip(agents, values):
            own = sorted({s.step for s in trajectory.agent_steps(a)})
            cited = [own[int(self.rng.integers(len(own)))]]
            credits[a] = Credit(agent=a, credit=float(v), explanation="random baseline", steps=cited)
        return CriticReport(
            episode=trajectory.episode, credits=credits, team_return=trajectory.team_return,
            evidence=compute_evidence(trajectory), total_steps=len({s.step for s in trajectory.steps}),
        )


# -- summary -------------------------------------------------------------------------------


def wilson_interval(hits: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """95% Wilson score interval of a binomial proportion (Wilson 1927, JASA 22:209)."""
    if n == 0:
        return 0.0, 1.0
    p = hits / n
    d = 1 + z * z / n
    mid = (p + z * z / (2 * n)) / d
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return max(0.0, mid - half), min(1.0, mid + half)


@dataclass
class Summary:
    """Accuracies of one source (an environment id or a Who&When folder) over its cases.

    Attributes:
        source: the environment id or data folder.
        cases: scored cases (skipped cases excluded).
        agent_acc / step_acc / joint_acc: the critic's hit rates (see the module docstring).
        agent_acc_ci95: Wilson 95% interval of ``agent_acc``.
        chance_agent_acc / chance_step_acc: analytic chance, averaged over cases.
        random_agent_acc / random_step_acc: :class:`RandomCritic` scored the same way.
        ties: cases where the lowest credit was shared by several agents.
        critic_failures: cases where the critic raised (scored as misses).
        skipped: cases dropped (no faulty step after redraws; malformed Who&When files).
        settings: the run's settings (seed, fault, window, tolerance, tie rule ...).
    """

    source: str
    cases: int
    agent_acc: float
    step_acc: float
    joint_acc: float
    agent_acc_ci95: tuple[float, float]
    chance_agent_acc: float
    chance_step_acc: float
    random_agent_acc: float
    random_step_acc: float
    ties: int
    critic_failures: int
    skipped: int = 0
    settings: dict[str, Any] = field(default_factory=dict)


def summarise(source: str, records: Sequence[Mapping[str, Any]], *, skipped: int = 0,
              settings: Mapping[str, Any] | None = None) -> Summary:
    """Aggregate per-case records (each with ``critic``, ``random_critic``, ``chance_agent``,
    ``chance_step``) into a :class:`Summary`."""
    n = len(records)

    def mean(values: list[float]) -> float:
        return float(np.mean(values)) if values else 0.0

    crit = [r["critic"] for r in records]
    rnd = [r["random_critic"] for r in records]
    hits = sum(c["agent_hit"] for c in crit)
    return Summary(
        source=source, cases=n,
        agent_acc=mean([c["agent_hit"] for c in crit]), step_acc=mean([c["step_hit"] for c in crit]),
        joint_acc=mean([c["joint_hit"] for c in crit]), agent_acc_ci95=wilson_interval(hits, n),
        chance_agent_acc=mean([r["chance_agent"] for r in records]),
        chance_step_acc=mean([r["chance_step"] for r in records]),
        random_agent_acc=mean([c["agent_hit"] for c in rnd]), random_step_acc=mean([c["step_hit"] for c in rnd]),
        ties=sum(len(c["tied"]) > 1 for c in crit), critic_failures=sum(c["error"] is not None for c in crit),
        skipped=skipped, settings=dict(settings or {}),
    )


class ResultsWriter:
    """Append per-case records to a JSONL file, one flushed line each (``None``: no file)."""

    def __init__(self, path: str | Path | None) -> None:
        self.path = Path(path) if path is not None else None
        self._f: IO[str] | None = None
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._f = self.path.open("a", encoding="utf-8")

    def write(self, record: Mapping[str, Any]) -> None:
        if self._f is not None:
            self._f.write(json.dumps(to_jsonable(dict(record))) + "\n")
            self._f.flush()

    def close(self) -> None:
        if self._f is not None:
            self._f.close()

    def __enter__(self) -> ResultsWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def summary_dict(summary: Summary) -> dict[str, Any]:
    """A :class:`Summary` as plain JSON-able data."""
    return to_jsonable(asdict(summary))


# -- fault injection -------------------------------------------------------------------------


def fault_truth(trajectory: Trajectory, policy: FaultyPolicy, agent: str) -> tuple[list[int], list[int]]:
    """``(replaced_steps, faulty_steps)``: the faulty policy's replaced / faulty decisions as
    trajectory steps (decision ``k`` is the agent's ``k``-th step in ``trajectory``)."""
    own = sorted(s.step for s in trajectory.agent_steps(agent))
    to_step = {k: own[k] for k in range(len(own))}
    replaced = [to_step[k] for k in policy.replaced_decisions if k in to_step]
    faulty = [to_step[k] for k in policy.faulty_decisions if k in to_step]
    return replaced, faulty


def _seed(*parts: int) -> int:
    return int(np.random.SeedSequence(list(parts)).generate_state(1)[0])


def run_fault_benchmark(
    env_id: str,
    critic: Assessor,
    *,
    cases: int = 20,
    seed: int = 0,
    fault: Fault = "idle",
    env_kwargs: Mapping[str, Any] | None = None,
    base: str | BaseFactory | None = None,
    fault_action: str | Mapping[str, str] | None = None,
    window: int = 2,
    tolerance: int = 0,
    tie: TieRule = "miss",
    require_effect: bool = False,
    out: str | Path | None = None,
    progress: Callable[[str], None] | None = None,
) -> Summary:
    """Run the fault-injection benchmark on one environment (see the module docstring).

    Args:
        env_id: a registered PettingZoo (multi-agent) environment id.
        critic: the critic under test, e.g. ``CentralCritic(backend)``.
        cases: scored cases wanted (>= 1).
        seed: master seed; case ``i`` resets the environment with ``seed + i`` and draws its
            faulty agent, window and policy seeds from ``SeedSequence([seed, i, ...])``.
        fault: ``"idle"``, ``"harmful"`` or ``"random"``.
        env_kwargs: keyword arguments of :func:`lang_pz.make`.
        base: the good team: a name of :data:`BASES` (see :func:`base_factory`) or a factory
            ``(env, agent, seed) -> Policy``; default :func:`default_base` of the id
            (Pistonball ``"heuristic"``, Overcooked ``"greedy"``, GSM8K/MATH ``"oracle"``,
            else ``"random"``).
        fault_action: the faulty action (see :class:`FaultyPolicy`); for ``"harmful"`` the
            default is :func:`default_harmful_action` for the environment.
        window: consecutive decisions replaced per case (>= 1).
        tolerance: steps of slack around the faulty window for a step-level hit (>= 0).
        tie: tie rule for the lowest credit: ``"miss"``, ``"first"`` or ``"random"``.
        require_effect: keep only draws whose faulty episode has a lower team return than the
            unfaulted one (redrawn like draws without a faulty step; then skipped).
        out: JSONL file the per-case records are appended to, one flushed line per case.
        progress: called with a one-line message per case.

    Returns:
        The :class:`Summary` (also the per-case records in ``out``).

    Raises:
        InvalidKwargError: bad ``cases``, ``window``, ``tolerance``, ``fault``, ``tie`` or
            ``base``; a single-agent environment; ``"harmful"`` with no action known for the
            id; the ``"random"`` fault or base team in a free-text environment (no
            ``info["legal_actions"]``).
        LangPZError: from the environment or the policies.
    """
    import lang_pz
    from lang_pz.rollout import rollout

    if cases < 1:
        raise InvalidKwargError(f"cases must be >= 1, got {cases}")
    if window < 1:
        raise InvalidKwargError(f"window must be >= 1 decision, got {window}")
    if tolerance < 0:
        raise InvalidKwargError(f"tolerance must be >= 0 steps, got {tolerance}")
    if fault not in FAULTS:
        raise InvalidKwargError(f"unknown fault {fault!r}; choose one of {', '.join(FAULTS)}")
    if tie not in TIE_RULES:
        raise InvalidKwargError(f"unknown tie rule {tie!r}; choose one of {', '.join(TIE_RULES)}")
    if base is None or isinstance(base, str):
        base_name = base or default_base(env_id)
        make_base = base_factory(base_name, env_id)
    else:
        base_name, make_base = "custom", base
    env = lang_pz.make(env_id, **dict(env_kwargs or {}))
    if not hasattr(env, "possible_agents"):
        raise InvalidKwargError(f"{env_id} is a single-agent Gymnasium env; the fault benchmark needs PettingZoo agents")
    if fault == "harmful" and fault_action is None:
        fault_action = default_harmful_action(env_id, env)
        if fault_action is None:
            raise InvalidKwargError(
                f"no harmful action is known for {env_id}; give fault_action= (CLI: --fault-action WORD)"
            )
    agents = list(env.possible_agents)
    infos = _reset_infos(env, seed)
    free_text = [a for a in agents if legal_actions(infos[a]) is None and action_range(infos[a]) is None]
    if free_text and (fault == "random" or base_name == "random"):
        what = "the 'random' fault" if fault == "random" else "the 'random' base team"
        raise InvalidKwargError(
            f"{what} draws from info['legal_actions'], which {env_id} does not give for {free_text} "
            f"(free-text actions); use fault 'idle' or 'harmful' (with a fixed text) and base "
            f"{default_base(env_id)!r}"
        )
    settings = {"env_kwargs": dict(env_kwargs or {}), "base": base_name, "fault": fault, "window": window,
                "tolerance": tolerance, "tie": tie, "seed": seed, "fault_action": fault_action,
                "require_effect": require_effect}

    def team(case: int) -> dict[str, Policy]:
        return {a: make_base(env, a, _seed(seed, case, 1, j)) for j, a in enumerate(agents)}

    tie_rng = np.random.default_rng(_seed(seed, 2))
    random_critic = RandomCritic(seed=_seed(seed, 3))
    records: list[dict[str, Any]] = []
    skipped = 0
    with ResultsWriter(out) as writer:
        for case in range(cases):
            ep_seed = seed + case
            rng = np.random.default_rng(_seed(seed, case, 0))
            clean = rollout(env, team(case), seed=ep_seed, episode=case)
            # the agent is drawn once (uniformly), only its window is redrawn: redrawing the
            # agent too would favour agents whose base actions differ more from the fault
            agent = agents[int(rng.integers(len(agents)))]
            n_dec = len(clean.agent_steps(agent))
            for _ in range(MAX_REDRAWS):
                start = int(rng.integers(max(1, n_dec - window + 1)))
                policies = team(case)
                faulty = FaultyPolicy(policies[agent], fault, range(start, start + window),
                                      action=fault_action, seed=_seed(seed, case, 2))
                policies[agent] = faulty
                traj = rollout(env, policies, seed=ep_seed, episode=case)
                replaced, truth = fault_truth(traj, faulty, agent)
                if truth and (not require_effect or traj.team_return < clean.team_return):
                    break
            else:
                skipped += 1
                if progress:
                    why = "no faulty step lowering the team return" if require_effect else "no faulty step"
                    progress(f"{env_id} case {case}: {why} after {MAX_REDRAWS} draws, skipped")
                continue
            all_steps = sorted({s.step for s in traj.steps})
            record = {
                "source": env_id, "case": case, "seed": ep_seed, "base": base_name, "fault": fault,
                "faulty_agent": agent,
                "decisions": [start, start + window - 1], "replaced_steps": replaced, "faulty_steps": truth,
                "base_actions": [r.base_action for r in faulty.log if r.replaced],
                "faulty_actions": [r.action for r in faulty.log if r.replaced],
                "n_agents": len(traj.agents), "n_steps": len(all_steps),
                "team_return": traj.team_return, "clean_team_return": clean.team_return,
                **score_case(critic, random_critic, traj, agent, truth, all_steps,
                             tolerance=tolerance, tie=tie, rng=tie_rng),
            }
            writer.write(record)
            records.append(record)
            if progress:
                progress(f"{env_id} case {case}: faulty {agent} at steps {truth}; {blame_text(record['critic'])}")
    return summarise(env_id, records, skipped=skipped, settings=settings)
