"""A text policy that uses a skill library, with progressive disclosure and explicit invocation.

Each decision is two requests to the backend:

1. **Choose** (the skill cards only): the prompt lists the names and descriptions of the skills
   the agent sees (:meth:`~lang_pz.skills.library.SkillLibrary.visible`) and the observation;
   the reply is a ``choices`` request over those names plus ``"none"`` (a grammar on llama.cpp,
   an enum on OpenAI-compatible servers), so the agent *names* the skill it invokes.
2. **Act**: the invoked skill's body is disclosed and becomes the instruction of an
   :class:`~lang_pz.policies.llm.LLMPolicy` request (same prompt forms, worked examples and
   action grammar; :meth:`SkillPolicy.acting_policy`), which picks the action. With ``"none"``
   the agent acts from its base policy alone.

Every decision records in :attr:`Decision.meta` ``["skills"]``: the agent, the decision's index
in the episode, the library version, the skills offered and the invoked one (name, scope,
version) or ``None``; :func:`lang_pz.rollout.rollout` writes it into each trajectory step. An
invocation is only ever what the agent chose: no credit is inferred from a skill merely being
shown (the flaw the MASkills issue names in the reference code). :func:`invocations` reads them
back from a trajectory, with the trajectory's step numbers.

For the embedded SmolLM2-135M, the choose prompt is a completion prompt with three worked
examples in a toy situation (a robot in a hallway) that pick a skill by its description, one of
them ``none``; the act prompt is :class:`~lang_pz.policies.llm.LLMPolicy`'s, where an
unconditional instruction is followed (measured there). A skill whose body is an unconditional
instruction and whose description states when to use it lets the *choice* carry the condition.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from lang_pz.backends.base import GenerationRequest, LLMBackend, Message, PromptFormat
from lang_pz.error import BackendError
from lang_pz.policies.base import Decision, observation_text
from lang_pz.policies.llm import LLMPolicy, fit_to_context
from lang_pz.skills.library import Scoping, SkillLibrary
from lang_pz.skills.skill import Skill
from lang_pz.trajectory import Trajectory

#: The choice meaning "no skill fits".
NONE = "none"
#: ``Decision.meta`` key of the skill record.
META_KEY = "skills"
#: Longest description shown per skill card in the choose prompt (characters).
CARD_CHARS = 160
#: ``GenerationRequest.role`` of the choose request (the act request is an ``LLMPolicy``'s: ``"actor"``).
CHOOSE_ROLE = "actor.skill"

#: Worked examples of the choose prompt: toy skills, three situations, the skill that fits.
CHOOSE_SKILLS: tuple[tuple[str, str], ...] = (
    ("open-door", "Open a closed door. Use when a door is in front of you."),
    ("carry-box", "Pick up a box and carry it. Use when a box is near you."),
)
CHOOSE_EXAMPLES: tuple[tuple[str, str], ...] = (
    ("You are a robot in a hallway. A box is 1 m ahead of you. The lamp is on.", "carry-box"),
    ("You are a robot in a hallway. The lamp is off. Nothing is near you.", NONE),
    ("You are a robot in a hallway. A closed door is in front of you.", "open-door"),
)


def skill_list(cards: Sequence[tuple[str, str]]) -> str:
    """The ``Skills:`` block: one ``- name: description`` line per skill, then ``- none``."""
    lines = [f"- {n}: {_clip(d, CARD_CHARS)}" for n, d in cards] + [f"- {NONE}: no skill fits."]
    return "Skills:\n" + "\n".join(lines)


def _clip(text: str, n: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 3] + "..."


def _choose_block(cards: Sequence[tuple[str, str]], observation: str, pick: str | None = None) -> str:
    head = f'{skill_list(cards)}\nObservation: {observation}\nSkill = "'
    return head if pick is None else f'{head}{pick}"\n\n'


@dataclass(frozen=True)
class Invocation:
    """One skill invocation read from a trajectory.

    Attributes:
        agent: who invoked it.
        step: the trajectory step (``AgentStep.step``).
        decision: the agent's decision index in the episode (0-based).
        skill: the skill's name.
        scope: the scope it came from.
        version: the skill's version.
        library_version: the library's version.
    """

    agent: str
    step: int
    decision: int
    skill: str
    scope: str
    version: int
    library_version: int


def invocations(trajectory: Trajectory) -> list[Invocation]:
    """Every skill invocation recorded in ``trajectory`` (steps without a record are skipped)."""
    out = []
    for s in trajectory.steps:
        rec = (s.meta or {}).get(META_KEY)
        if not isinstance(rec, Mapping):
            continue
        inv = rec.get("invoked")
        if inv:
            out.append(
                Invocation(
                    s.agent,
                    s.step,
                    int(rec["decision"]),
                    inv["name"],
                    inv["scope"],
                    int(inv["version"]),
                    int(rec["library_version"]),
                )
            )
    return out


def usage_counts(trajectories: Iterable[Trajectory]) -> tuple[Counter[tuple[str, str]], Counter[tuple[str, str]]]:
    """``(invoked, offered)``: per ``(scope, name)``, how many decisions invoked it and how many
    offered it (a skill offered often and never invoked is unused)."""
    invoked: Counter[tuple[str, str]] = Counter()
    offered: Counter[tuple[str, str]] = Counter()
    for t in trajectories:
        for s in t.steps:
            rec = (s.meta or {}).get(META_KEY)
            if not isinstance(rec, Mapping):
                continue
            offered.update((sc, n) for sc, n in rec.get("offered", []))
            if rec.get("invoked"):
                invoked[(rec["invoked"]["scope"], rec["invoked"]["name"])] += 1
    return invoked, offered


class SkillPolicy(LLMPolicy):
    """An :class:`~lang_pz.policies.llm.LLMPolicy` that invokes skills from a library (module docstring).

    Args:
        policy: the base instruction (used with and without a skill; ``policy.policy`` as in LLMPolicy).
        backend: the LLM backend (both requests).
        library: the skill library.
        agent: the agent this policy plays (which skills it sees, and the record).
        scoping: which scopes the agent sees (default: its own, its role's = itself, the team's).
        withheld: names of skills hidden from this agent (see :meth:`without`).
        prompt_format: as :class:`~lang_pz.policies.llm.LLMPolicy`.
        max_tokens: as :class:`~lang_pz.policies.llm.LLMPolicy`.
        temperature: as :class:`~lang_pz.policies.llm.LLMPolicy`.
        seed: as :class:`~lang_pz.policies.llm.LLMPolicy`.
    """

    def __init__(
        self,
        policy: str,
        backend: LLMBackend,
        library: SkillLibrary,
        *,
        agent: str,
        scoping: Scoping | None = None,
        withheld: Iterable[str] = (),
        prompt_format: PromptFormat | None = None,
        max_tokens: int = 16,
        temperature: float = 0.0,
        seed: int = 0,
    ) -> None:
        super().__init__(
            policy, backend, prompt_format=prompt_format, max_tokens=max_tokens, temperature=temperature, seed=seed
        )
        if not isinstance(library, SkillLibrary):
            raise TypeError(
                f"library must be a SkillLibrary, got {library!r}; read one with lang_pz.skills.read_library(folder)"
            )
        self.library = library
        self.agent = agent
        self.scoping = scoping or Scoping()
        self.withheld = frozenset(withheld)
        self._decision = 0

    def __repr__(self) -> str:
        return (
            f"SkillPolicy(agent={self.agent!r}, skills={list(self.skills())}, library_version="
            f"{self.library.version}, withheld={sorted(self.withheld)})"
        )

    def skills(self) -> dict[str, tuple[str, Skill]]:
        """The skills this agent is offered: name -> ``(scope, skill)`` (withheld ones removed)."""
        return {n: v for n, v in self.library.visible(self.agent, self.scoping).items() if n not in self.withheld}

    def _copy(self, **changes: Any) -> SkillPolicy:
        kw: dict[str, Any] = dict(
            policy=self.policy,
            backend=self.backend,
            library=self.library,
            agent=self.agent,
            scoping=self.scoping,
            withheld=self.withheld,
            prompt_format=self._prompt_format,
            max_tokens=self.max_tokens,
            temperature=self.temperature,
            seed=self.seed,
        )
        kw.update(changes)
        return SkillPolicy(**kw)

    def without(self, *names: str) -> SkillPolicy:
        """A copy that is not offered the skills ``names`` (it acts without them, or picks its
        next choice): the counterfactual of :mod:`lang_pz.skills.evidence`."""
        return self._copy(withheld=self.withheld | set(names))

    def with_library(self, library: SkillLibrary) -> SkillPolicy:
        """A copy playing from another library (e.g. a candidate version)."""
        return self._copy(library=library)

    def reset(self, seed: int | None = None) -> None:
        """Start an episode: decisions are counted from 0 again."""
        self._decision = 0

    # -- requests --------------------------------------------------------------------------

    def choose_request(self, observation: Mapping[str, Any] | str) -> GenerationRequest:
        """The request that picks a skill: a ``choices`` request over the offered names and
        ``"none"``, with the whole observation (:meth:`fit_choose_request` fits it to the context)."""
        return self._choose(" ".join(observation_text(observation).split()))

    def fit_choose_request(self, observation: Mapping[str, Any] | str) -> GenerationRequest:
        """The choose request :meth:`decide` sends: the whole observation if the prompt leaves
        ``max_tokens`` (+ :data:`~lang_pz.policies.llm.FIT_MARGIN_TOKENS`) free in the backend's
        context window (or the backend cannot count tokens), else the longest
        :func:`~lang_pz.policies.llm.shorten_middle` of it that does
        (:func:`~lang_pz.policies.llm.fit_to_context`, which fits ``LLMPolicy``'s prompt too).

        Raises:
            PromptTooLongError: the skill list alone does not fit.
        """

        def too_long(n_ctx: int) -> str:
            return (
                f"SkillPolicy ({self.agent}): the skill choice does not fit the model's context window ({n_ctx} "
                f"tokens) even with the observation left out: {len(self.skills())} skill cards are too many or "
                "too long; offer fewer skills (SkillLimits.max_skills_per_scope) or shorten their descriptions"
            )

        return fit_to_context(self._choose, " ".join(observation_text(observation).split()), self.backend, too_long)[0]

    def _choose(self, text: str) -> GenerationRequest:
        cards = [(n, s.description) for n, (_, s) in self.skills().items()]
        names = tuple(n for n, _ in cards) + (NONE,)
        common: dict[str, Any] = {
            "choices": names,
            "max_tokens": max(len(n) for n in names) + 2,
            "temperature": self.temperature,
            "seed": self.seed,
            "role": CHOOSE_ROLE,
        }
        if self.prompt_format == "chat":
            system = (
                f"You control one agent. {skill_list(cards)}\nReply with the name of the one skill that fits "
                f"the observation, or {NONE}, and nothing else."
            )
            return GenerationRequest(messages=(Message("system", system), Message("user", text)), **common)
        prompt = "Pick the skill that fits the observation, or none.\n\n"
        prompt += "".join(_choose_block(CHOOSE_SKILLS, o, p) for o, p in CHOOSE_EXAMPLES)
        return GenerationRequest(prompt=prompt + _choose_block(cards, text), **common)

    def acting_policy(self, skill: Skill | None) -> str:
        """The instruction the act request uses: the invoked skill's body (tagged with its name),
        or the base policy when no skill is invoked.

        The body *replaces* the base policy while the skill is invoked. Measured with
        SmolLM2-135M (8 Pistonball observations, bodies "Always push up." / "Always go down." /
        "Always stay."): the body alone, as ``"<body> (skill <name>)"``, gave the body's action
        24/24 times; with the base policy before it ("Follow the skill. Skill push-up: Always
        push up.") "push up" gave 0/8 ups, and with it after the body in parentheses 4/8 (base
        "Follow the skill.") or 0/8 (base "Always stay.").
        """
        if skill is None:
            return self.policy
        return f"{' '.join(skill.body.split())} (skill {skill.name})"

    # -- acting ----------------------------------------------------------------------------

    def decide(self, observation: Mapping[str, Any] | str, info: Mapping[str, Any] | None = None) -> Decision:
        """Choose a skill (or none), see its body, act; the invocation is in ``meta["skills"]``.

        Raises:
            BackendError: a choice reply outside the offered names.
            PromptTooLongError: the skill list does not fit the context (:meth:`fit_choose_request`).
        """
        offered = self.skills()
        decision, self._decision = self._decision, self._decision + 1
        chosen: tuple[str, Skill] | None = None
        p_tok = c_tok = 0
        latency = 0.0
        if offered:
            req = self.fit_choose_request(observation)
            gen = self.backend.generate(req)
            name = gen.text.strip()
            if name not in req.choices:  # type: ignore[operator]
                raise BackendError(
                    f"{type(self.backend).__name__} answered {gen.text!r} to the skill choice; "
                    f"expected one of {list(req.choices or ())}"
                )
            p_tok, c_tok, latency = gen.prompt_tokens, gen.completion_tokens, gen.latency_s
            chosen = offered.get(name)
        actor = LLMPolicy(
            self.acting_policy(chosen[1] if chosen else None),
            self.backend,
            prompt_format=self._prompt_format,
            max_tokens=self.max_tokens,
            temperature=self.temperature,
            seed=self.seed,
        )
        act = actor.decide(observation, info)
        record = {
            "agent": self.agent,
            "decision": decision,
            "library_version": self.library.version,
            "offered": [[sc, n] for n, (sc, _) in offered.items()],
            "invoked": None
            if chosen is None
            else {"name": chosen[1].name, "scope": chosen[0], "version": chosen[1].version},
        }
        return Decision(
            action=act.action,
            raw_output=act.raw_output,
            prompt_tokens=p_tok + act.prompt_tokens,
            completion_tokens=c_tok + act.completion_tokens,
            latency_s=latency + act.latency_s,
            meta={**act.meta, META_KEY: record},
        )


def skill_policies(
    library: SkillLibrary,
    agents: Sequence[str],
    backend: LLMBackend,
    policy: str | Mapping[str, str],
    *,
    scoping: Scoping | None = None,
    **kwargs: Any,
) -> dict[str, SkillPolicy]:
    """One :class:`SkillPolicy` per agent on one library.

    Args:
        library: the library.
        agents: the env's ``possible_agents``.
        backend: the LLM backend.
        policy: the base instruction, one for all or agent -> instruction.
        scoping: who sees which scope.
        **kwargs: passed to :class:`SkillPolicy`.
    """
    texts = dict.fromkeys(agents, policy) if isinstance(policy, str) else dict(policy)
    return {a: SkillPolicy(texts[a], backend, library, agent=a, scoping=scoping, **kwargs) for a in agents}
