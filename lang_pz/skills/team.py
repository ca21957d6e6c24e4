"""Who plays in a skill-library run: :class:`SkillPolicy` agents on one library, next to fixed partners.

:class:`SkillTeamSpec` is the skills counterpart of :class:`lang_pz.training.team.TeamSpec`:
``env -> team`` building fresh policy objects for one environment instance (so concurrent
episodes share nothing), and *data* a remote worker can unpickle (the library travels with it;
a model or an HTTP client never does: the worker builds its actor backend from the config, as
for text policies). :meth:`SkillTeamSpec.without` is the team of a withheld-skill re-run.

:class:`RoleRouter` sends requests to backends by :attr:`GenerationRequest.role
<lang_pz.backends.base.GenerationRequest.role>`. A skill decision makes two requests with
different prompts (choose, then act); on one llama.cpp instance each request evicts the other's
prompt prefix from the model's KV cache, so every call re-reads its whole prompt. Measured with
SmolLM2-135M on a shared 2-core machine (5 pistons, 430-token choose prompts): 4.5-5.3 s a
choose call alternating on one instance, 0.7-2.3 s with the choose requests on a second instance.
:meth:`lang_pz.methods.maskills.MASkills.build` therefore gives the embedded actor two instances.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from lang_pz.backends.base import Generation, GenerationRequest, LLMBackend
from lang_pz.policies.base import Policy
from lang_pz.policies.llm import LLMPolicy
from lang_pz.skills.library import Scoping, SkillLibrary
from lang_pz.skills.policy import CHOOSE_ROLE, SkillPolicy
from lang_pz.training.team import TeamSpec, worker_backend


@dataclass
class SkillTeamSpec(TeamSpec):
    """``env -> team``: every skilled agent a :class:`SkillPolicy` on ``library``, other text agents an
    :class:`~lang_pz.policies.llm.LLMPolicy`, fixed partners as in :class:`TeamSpec`.

    Attributes:
        policies: agent -> base instruction (used when the agent invokes no skill).
        config: the run's config (env, partners, backend specs).
        backend: the actor backend here; on a remote worker it is rebuilt from ``config``.
        library: the skill library every skilled agent plays from.
        scoping: which scopes each agent sees.
        skilled: the agents that use skills (``None``: every agent in ``policies``).
        withheld: agent -> names of skills it is not offered (a withheld-skill re-run).
    """

    library: SkillLibrary = field(default_factory=SkillLibrary)
    scoping: Scoping = field(default_factory=Scoping)
    skilled: tuple[str, ...] | None = None
    withheld: Mapping[str, frozenset[str]] = field(default_factory=dict)

    def __call__(self, env: Any) -> dict[str, Policy]:
        backend = self.backend if self.backend is not None else worker_backend(self.config)
        team: dict[str, Policy] = {}
        for agent, text in self.policies.items():
            if self.skilled is None or agent in self.skilled:
                team[agent] = SkillPolicy(
                    text,
                    backend,
                    self.library,
                    agent=agent,
                    scoping=self.scoping,
                    withheld=self.withheld.get(agent, ()),
                    temperature=self.config.actor_temperature,
                    seed=self.config.seed,
                )
            else:
                team[agent] = LLMPolicy(text, backend, temperature=self.config.actor_temperature, seed=self.config.seed)
        return {**team, **self.partners(env)}

    def without(self, agent: str, skill: str) -> SkillTeamSpec:
        """The same team with ``skill`` withheld from ``agent`` (it acts without it, or picks its next choice)."""
        withheld = {**self.withheld, agent: frozenset(self.withheld.get(agent, frozenset())) | {skill}}
        return replace(self, withheld=withheld)

    def with_library(self, library: SkillLibrary) -> SkillTeamSpec:
        """The same team playing from another library (e.g. a candidate version)."""
        return replace(self, library=library, withheld={})

    def __getstate__(self) -> dict[str, Any]:  # a model or a client never leaves this process
        return {
            **super().__getstate__(),
            "library": self.library,
            "scoping": self.scoping,
            "skilled": self.skilled,
            "withheld": dict(self.withheld),
        }


class RoleRouter(LLMBackend):
    """Forwards each request to ``routes[request.role]``, else to ``default`` (module docstring).

    Each inner backend keeps its own response cache and usage; this one adds every reply to its
    own usage too (wrap it in a :class:`~lang_pz.backends.meter.RoleMeter` for per-role accounting).

    Args:
        default: the backend of every request whose role has no route (its model, prompt form,
            context window and token counts are this backend's).
        routes: role -> backend, e.g. ``{"actor.skill": second_instance}``.
    """

    def __init__(self, default: LLMBackend, routes: Mapping[str, LLMBackend]) -> None:
        super().__init__()
        self.default = default
        self.routes = dict(routes)
        self.model = default.model
        self.prompt_format = default.prompt_format
        self.max_concurrency = default.max_concurrency

    def generate(self, request: GenerationRequest) -> Generation:
        """The reply of the backend ``request.role`` is routed to."""
        gen = self.routes.get(request.role, self.default).generate(request)
        self.usage.add(gen)
        return gen

    def _generate(self, request: GenerationRequest) -> Generation:  # pragma: no cover - generate overrides
        return self.generate(request)

    @property
    def context_window(self) -> int | None:
        return self.default.context_window

    def count_tokens(self, request: GenerationRequest) -> int | None:
        return self.routes.get(request.role, self.default).count_tokens(request)

    def close(self) -> None:
        """Close every inner backend."""
        for b in {id(b): b for b in (self.default, *self.routes.values())}.values():
            b.close()


def embedded_actor(spec: str, options: Mapping[str, Any]) -> RoleRouter:
    """The actor backend of a skills run on ``spec``: one instance for skill choices, one for actions."""
    from lang_pz.backends import make_backend

    return RoleRouter(make_backend(spec, **options), {CHOOSE_ROLE: make_backend(spec, **options)})
