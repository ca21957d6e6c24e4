"""The four library operators of MASkills: refine, induce, consolidate, prune.

Each takes a library and explicit inputs and returns a *candidate* :class:`SkillEdit`; nothing is
applied in place (:meth:`SkillLibrary.apply` applies, :meth:`SkillLibrary.rollback` undoes).

- :func:`refine`: rewrite one skill's description and body along edit directions (an LLM call);
- :func:`induce`: write a new skill for capabilities agents lacked (residuals; an LLM call);
- :func:`consolidate`: merge redundant skills of one scope into one (an LLM call);
- :func:`prune`: remove skills that are unused (from invocation counts) or harmful (from
  *measured* utility; the critic's verdict alone never removes a skill). No LLM call.

:func:`propose_edits` reads a :class:`~lang_pz.skills.aggregate.SkillMemory` and decides which
operator to run on which skill (:class:`ProposalRules`), each skill touched by at most one
edit, within :class:`~lang_pz.skills.library.SkillLimits`. The skill texts are written by
:class:`~lang_pz.skills.writer.SkillWriter` (schema-constrained, validated, retried).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from lang_pz.error import LangPZError, SkillLibraryError
from lang_pz.skills.aggregate import SkillMemory
from lang_pz.skills.library import Scoping, SkillEdit, SkillLibrary
from lang_pz.skills.skill import Skill
from lang_pz.skills.writer import SkillText, SkillWriter

__all__ = [
    "ProposalRules",
    "Proposals",
    "SkillText",
    "SkillWriter",
    "consolidate",
    "induce",
    "propose_edits",
    "prune",
    "refine",
]


def _card(s: Skill) -> str:
    return f"Skill {s.name}: {' '.join(s.description.split())} Body: {' '.join(s.body.split())}"


def refine(
    library: SkillLibrary,
    scope: str,
    name: str,
    directions: Sequence[str],
    writer: SkillWriter,
    *,
    reason: str = "",
    evidence: dict[str, Any] | None = None,
) -> SkillEdit:
    """A candidate edit rewriting skill ``scope/name`` along ``directions`` (suggested edits).

    Raises:
        SkillLibraryError: no such skill, or no directions.
        SchemaValidationError: the writer gave no valid text.
    """
    old = library.get(scope, name)
    if not any(d.strip() for d in directions):
        raise SkillLibraryError(f"refine {scope}/{name}: no edit directions given")
    task = (
        "Task: rewrite the skill along the directions.\n"
        + _card(old)
        + "\nDirections:\n"
        + "\n".join(f"- {' '.join(d.split())}" for d in directions if d.strip())
    )
    text = writer.write(task, with_name=False, unchanged=old)
    new = old.evolve(description=text.description, body=text.body)
    return SkillEdit("refine", scope, (old,), (new,), reason or f"directions: {'; '.join(directions)}", evidence or {})


def induce(
    library: SkillLibrary,
    scope: str,
    capabilities: Sequence[str],
    writer: SkillWriter,
    *,
    agents: Sequence[str] = (),
    reason: str = "",
    evidence: dict[str, Any] | None = None,
) -> SkillEdit:
    """A candidate edit adding a new skill to ``scope`` for ``capabilities`` agents lacked.

    Raises:
        SkillLibraryError: no capabilities.
        SchemaValidationError: the writer gave no valid text.
    """
    caps = [" ".join(c.split()) for c in capabilities if c.strip()]
    if not caps:
        raise SkillLibraryError(f"induce in {scope!r}: no capability given")
    have = library.scopes.get(scope, {})
    who = f" by {', '.join(agents)}" if agents else ""
    task = (
        "Task: write a new skill for what the agents lacked.\n"
        + ("Existing skills: " + "; ".join(f"{n}: {s.description}" for n, s in have.items()) + "\n" if have else "")
        + f"Capabilities needed{who}:\n"
        + "\n".join(f"- {c}" for c in caps)
    )
    text = writer.write(task, with_name=True, taken=[s.name for _, s in library])  # no shadowing either
    assert text.name is not None
    skill = Skill(text.name, text.description, text.body)
    return SkillEdit("induce", scope, (), (skill,), reason or f"needed: {'; '.join(caps)}", evidence or {})


def consolidate(
    library: SkillLibrary,
    scope: str,
    names: Sequence[str],
    writer: SkillWriter,
    *,
    reason: str = "",
    evidence: dict[str, Any] | None = None,
) -> SkillEdit:
    """A candidate edit merging skills ``names`` of ``scope`` into one (it may keep one of their names).

    Raises:
        SkillLibraryError: fewer than two distinct skills, or one is missing.
        SchemaValidationError: the writer gave no valid text.
    """
    names = list(dict.fromkeys(names))
    if len(names) < 2:
        raise SkillLibraryError(f"consolidate in {scope!r} needs at least two skills, got {names}")
    olds = tuple(library.get(scope, n) for n in names)
    others = [s.name for sc, s in library if not (sc == scope and s.name in names)]
    task = "Task: merge these skills into one skill that does what each did.\n" + "\n".join(map(_card, olds))
    text = writer.write(task, with_name=True, taken=others)
    assert text.name is not None
    merged = Skill(text.name, text.description, text.body)
    return SkillEdit("consolidate", scope, olds, (merged,), reason or f"redundant: {', '.join(names)}", evidence or {})


def prune(
    library: SkillLibrary,
    memory: SkillMemory,
    *,
    min_offered: float = 10.0,
    harm_margin: float = 0.0,
    min_measured: float = 1.0,
) -> list[SkillEdit]:
    """Candidate edits removing unused or harmful skills (computed evidence only; no LLM call).

    Args:
        library: the library.
        memory: the aggregated evidence.
        min_offered: a skill offered at least this often (decayed count) and never invoked is unused.
        harm_margin: a skill whose mean measured utility is below ``-harm_margin`` is harmful.
        min_measured: ... if measured at least this often (decayed weight).

    Returns:
        One prune edit per skill, its evidence holding the counts, the measured utility and
        the critic's harmful share (shown, never decisive): the harmful ones first, most harmful
        first, then the unused ones (a skill that hurts matters more than one that is idle).
    """
    harmful, unused = [], []
    for scope, s in library:
        rec = memory.record(scope, s.name)
        ev = {
            "offered": rec.offered,
            "invoked": rec.invoked,
            "measured_utility": rec.measured,
            "measured_n": rec.measured_n,
            "critic_harmful_share": rec.share("harmful"),
        }
        if rec.version != s.version:
            continue
        if rec.offered >= min_offered and rec.invoked == 0:
            unused.append(SkillEdit("prune", scope, (s,), (), f"unused: offered {rec.offered:g} times, never invoked", ev))
        elif rec.measured is not None and rec.measured_n >= min_measured and rec.measured < -harm_margin:
            harmful.append(
                (
                    rec.measured,
                    SkillEdit(
                        "prune",
                        scope,
                        (s,),
                        (),
                        f"harmful: measured utility {rec.measured:+.3g} over {rec.measured_n:g} re-run(s)",
                        ev,
                    ),
                )
            )
    return [e for _, e in sorted(harmful, key=lambda x: x[0])] + unused


@dataclass(frozen=True)
class ProposalRules:
    """When :func:`propose_edits` runs each operator.

    Attributes:
        min_offered, harm_margin, min_measured: :func:`prune`'s thresholds.
        refine_share: refine a skill whose critic verdicts are at least this share harmful or
            neutral, or whose measured utility is <= 0, when it has suggested edits.
        redundant_share: consolidate two skills of a scope that are each at least this share redundant.
        need_share: induce for an agent that the critic said lacked a skill in at least this
            share of its episodes (with the capabilities it named).
        max_edits: most edits proposed at once.
    """

    min_offered: float = 10.0
    harm_margin: float = 0.0
    min_measured: float = 1.0
    refine_share: float = 0.5
    redundant_share: float = 0.5
    need_share: float = 0.5
    max_edits: int = 2


@dataclass
class Proposals:
    """What :func:`propose_edits` returns: candidate edits (each touching distinct skills), and
    the planned edits whose writer failed (``(plan, error)``), so that nothing goes unreported."""

    edits: list[SkillEdit] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)


def propose_edits(
    library: SkillLibrary,
    memory: SkillMemory,
    writer: SkillWriter,
    *,
    scoping: Scoping | None = None,
    rules: ProposalRules | None = None,
) -> Proposals:
    """Candidate edits from the aggregated evidence: prune, then refine, consolidate, induce.

    Args:
        library: the current library.
        memory: evidence aggregated over the batch (and earlier ones, decayed).
        writer: the LLM writer (its ``limits`` bound induced skills).
        scoping: where induced skills go (default: shared by the team).
        rules: the thresholds.

    Returns:
        :class:`Proposals` (at most ``rules.max_edits`` edits, each against ``library``).
    """
    rules = rules or ProposalRules()
    scoping = scoping or Scoping()
    props = Proposals()
    touched: set[tuple[str, str]] = set()

    def room() -> bool:
        return len(props.edits) < rules.max_edits

    def attempt(plan: str, make: Any) -> None:
        try:
            edit = make()
        except LangPZError as exc:  # a reply that never validated, a failed backend call, a bad edit
            props.failed.append((plan, str(exc)))
            return
        props.edits.append(edit)
        touched.update((edit.scope, s.name) for s in edit.before)

    for edit in prune(
        library, memory, min_offered=rules.min_offered, harm_margin=rules.harm_margin, min_measured=rules.min_measured
    ):
        if room():
            props.edits.append(edit)
            touched.add((edit.scope, edit.before[0].name))
    for scope, s in library:
        rec = memory.record(scope, s.name)
        bad = rec.share("harmful") + rec.share("neutral") >= rules.refine_share or (
            rec.measured is not None and rec.measured <= 0
        )
        if room() and (scope, s.name) not in touched and rec.invoked > 0 and bad and rec.edits:
            attempt(
                f"refine {scope}/{s.name}",
                lambda scope=scope, s=s, rec=rec: refine(
                    library,
                    scope,
                    s.name,
                    [t for _, t in rec.edits[:3]],
                    writer,
                    evidence={"contributions": rec.contributions, "measured_utility": rec.measured},
                ),
            )
    for scope, skills in library.scopes.items():
        red = [
            n
            for n in skills
            if (scope, n) not in touched and memory.record(scope, n).share("redundant") >= rules.redundant_share
        ]
        if room() and len(red) >= 2:
            pair = sorted(red, key=lambda n: -memory.record(scope, n).contributions.get("redundant", 0.0))[:2]
            attempt(
                f"consolidate {scope}/{'+'.join(pair)}",
                lambda scope=scope, pair=pair: consolidate(
                    library,
                    scope,
                    pair,
                    writer,
                    evidence={"redundant_share": {n: memory.record(scope, n).share("redundant") for n in pair}},
                ),
            )
    sizes = {sc: len(sk) for sc, sk in library.scopes.items()}
    for agent, arec in sorted(memory.agents.items()):
        home = scoping.home(agent)
        full = len(library) + 1 > writer.limits.max_skills or sizes.get(home, 0) + 1 > writer.limits.max_skills_per_scope
        if room() and not full and arec.need_share >= rules.need_share and arec.capabilities:
            sizes[home] = sizes.get(home, 0) + 1
            attempt(
                f"induce {home} for {agent}",
                lambda home=home, agent=agent, arec=arec: induce(
                    library,
                    home,
                    [t for _, t in arec.capabilities[:3]],
                    writer,
                    agents=[agent],
                    evidence={"need_share": arec.need_share, "agents": [agent]},
                ),
            )
    return props
