"""The configuration of a training run: every setting, with its default and description.

:class:`TrainConfig` is also the schema of ``lang-pz train --config`` YAML/JSON files and of
``--set KEY=VALUE``; ``lang-pz train --help`` lists every field. The run's method (any
registered one: :mod:`lang_pz.training.registry`) has its own settings in a section named after
it (``langmarl:``, ``maskills:``, ``mymethod:``), checked by that method's settings model; a
method's setting given flat is deprecated (:mod:`lang_pz.training.layout`).
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from lang_pz.critics.modes import critic_mode
from lang_pz.error import InvalidKwargError
from lang_pz.training.layout import import_modules as import_modules  # its former home (lang-pz train, plugins)
from lang_pz.training.layout import split_sections
from lang_pz.training.registry import described, registered, sections
from lang_pz.training.sections import LangMARLConfig, MASkillsConfig, one_of

__all__ = [
    "ROLES",
    "SECRET_WORDS",
    "LangMARLConfig",
    "MASkillsConfig",
    "PartnerKind",
    "TrainConfig",
    "setting_names",
]

#: The roles of a run, each with its own backend spec and usage meter.
ROLES = ("actor", "critic", "optimiser")
PartnerKind = Literal["random", "heuristic", "greedy"]
#: Option names refused in ``backend_options`` (the config is written to disk).
SECRET_WORDS = ("key", "secret", "password", "token", "auth", "credential")


class TrainConfig(BaseModel):
    """Configuration of a training run (also the schema of ``--config`` YAML/JSON files)."""

    # no NaN/inf anywhere: JSON has no such numbers (config.json would hold null and --resume fail);
    # extra: the run's method section, checked by its own model in _sections (nothing else is let in)
    model_config = ConfigDict(extra="allow", allow_inf_nan=False)

    env_id: str = Field("butterfly/pistonball-v0", description="registered environment id")
    env_kwargs: dict[str, Any] = Field(default_factory=dict, description="keyword arguments for lang_pz.make")
    phase_env_kwargs: dict[Literal["train", "validation", "test"], dict[str, Any]] = Field(
        default_factory=dict,
        description="phase -> keyword arguments that replace env_kwargs' for that phase (default: split=<phase> "
        "for envs with held-out splits, lang_pz.training.phases)",
    )
    iterations: int = Field(2, ge=1, description="training iterations")
    episodes_per_iteration: int = Field(1, ge=1, description="training episodes per iteration")
    seed: int = Field(0, ge=0, description="seed of the first training episode; episode k uses seed + k")
    objective: str | None = Field(
        None,
        description="what validation, re-runs and the gate compare: team_return, return:AGENT, win:AGENT "
        "or soups (default: soups on Overcooked, else team_return; zero-sum games must name a seat)",
    )
    validation_seeds: list[int] = Field(
        default_factory=lambda: [1000, 1001],
        description="held-out episode seeds that gate each update ([] accepts every update unchecked)",
    )
    test_seeds: list[int] = Field(
        default_factory=list,
        description="held-out seeds on which each iteration's starting policies and the final ones are measured "
        "(the learning curve); never used for a decision",
    )
    tolerance: float = Field(
        0.0, description="accept a candidate unless validation return falls by more (negative: require a gain)"
    )
    acceptance: Literal["joint", "per_agent"] | None = Field(
        None,
        description="validate all candidates at once (joint) or each agent's in turn (per_agent); "
        "default: joint for central_global (one team update), per_agent otherwise",
    )
    initial_policy: str = Field(
        "Choose the action that helps your team most.", min_length=1, description="every agent's starting policy"
    )
    initial_policies: dict[str, str] = Field(default_factory=dict, description="per-agent starting policies")
    trainable_agents: list[str] | None = Field(
        None, min_length=1, description="agents the optimiser updates (default: all LLM agents)"
    )
    partners: dict[str, PartnerKind] = Field(
        default_factory=dict,
        description="agent -> fixed classical policy (random; heuristic: Pistonball; greedy: Overcooked)",
    )
    actor_backend: str = Field("embedded", description="backend spec of the agents' LLM")
    critic_backend: str | None = Field(None, description="backend spec of the critic (default: actor's)")
    optimiser_backend: str | None = Field(None, description="backend spec of the optimiser (default: actor's)")
    backend_options: dict[str, dict[str, Any]] = Field(
        default_factory=dict,
        description="backend spec -> constructor options, e.g. {'openai:m': {timeout_s: 20}} "
        "or {embedded: {n_threads: 1, instances: 2}}",
    )
    prices: dict[str, tuple[float, float]] = Field(
        default_factory=dict, description="backend spec -> [input, output] USD per million tokens"
    )
    critic_max_attempts: int = Field(3, ge=1, description="critic LLM calls per report before it fails")
    critic_max_prompt_steps: int = Field(40, ge=1, description="most trajectory steps shown to the critic")
    critic_max_prompt_chars: int = Field(5000, ge=1000, description="budget of the critic's trajectory text")
    actor_temperature: float = Field(
        0.0,
        ge=0,
        description="sampling temperature of the agents' decisions (0: greedy; > 0 samples with the run's seed, so "
        "validation of a deterministic env sees other episodes than training)",
    )
    critic_temperature: float = Field(0.0, ge=0, description="sampling temperature of the critic's first attempt")
    optimiser_max_attempts: int = Field(3, ge=1, description="LLM calls per optimiser stage before it fails")
    optimiser_temperature: float = Field(0.0, ge=0, description="sampling temperature of first optimiser attempts")
    retry_temperature: float = Field(0.7, ge=0, description="temperature of critic and optimiser retries")
    max_policy_chars: int = Field(300, ge=20, description="longest policy text an update may write")
    momentum: float = Field(0.5, ge=0, lt=1, description="decay of earlier iterations' directions (0: none)")
    workers: int | None = Field(
        None,
        ge=1,
        description="tasks at once: episodes, re-runs, critic and optimiser calls (default: 1 when every "
        "role uses the embedded model, which serves one request at a time; else 8)",
    )
    executor: Literal["local", "ray"] = Field(
        "local",
        description="where episodes run: local (threads here) or ray (Ray tasks on $RAY_ADDRESS's cluster, "
        "else a local one; pip install 'lang_pz[ray]')",
    )
    max_concurrent_requests: int | None = Field(
        None, ge=1, description="LLM requests in flight at once, over every role (default: workers)"
    )
    max_llm_calls: int | None = Field(
        None,
        ge=1,
        description="budget: no new iteration once this many uncached LLM calls were made "
        "(replies from the response cache cost nothing and are not counted)",
    )
    on_stage_failure: Literal["stop", "continue"] = Field(
        "stop",
        description="a failed critic report, optimiser step or skill edit stops the run before the iteration is "
        "done, naming the stage (--resume redoes it); continue: log it, go on without it and say so in the "
        "iteration's progress line",
    )
    run_dir: str | None = Field(None, description="run folder (default: runs/<time>)")
    imports: list[str] = Field(
        default_factory=list,
        description="Python modules imported before the rest is checked, e.g. [my_methods]: their "
        "register_method / register_critic_mode calls make a method or critic mode of yours selectable "
        "by name (kept in config.json, so --resume imports them too)",
    )
    method: str = Field(
        "langmarl",
        description=f"what is trained, a registered method: {described()}; its settings are the section "
        "named after it; with maskills, initial_policy is each agent's instruction when it invokes no skill",
    )

    @model_validator(mode="wrap")
    @classmethod
    def _sections(cls, data: Any, handler: Callable[[Any], TrainConfig]) -> TrainConfig:
        """The run's method's section (``langmarl:``), checked by its settings model; a flat method
        setting is moved there with a DeprecationWarning (:mod:`lang_pz.training.layout`)."""
        return split_sections(cls, data, handler)

    @field_validator("method")
    @classmethod
    def _registered_method(cls, method: str) -> str:
        if method not in registered():
            raise one_of(registered())
        return method

    @field_validator("validation_seeds", "test_seeds")
    @classmethod
    def _non_negative_seeds(cls, seeds: list[int], info: Any) -> list[int]:
        negative = [s for s in seeds if s < 0]
        if negative:
            raise ValueError(
                f"{info.field_name} {negative} are negative; episode seeds are non-negative integers "
                "(numpy's rule): choose seeds >= 0"
            )
        repeated = sorted({s for s in seeds if seeds.count(s) > 1})
        if repeated:
            raise ValueError(
                f"{info.field_name} repeats {repeated}: a seed replays the same episode, so a repeat "
                "only counts it twice; give distinct seeds"
            )
        return seeds

    @field_validator("env_kwargs", "phase_env_kwargs", "backend_options")
    @classmethod
    def _finite_options(cls, options: dict[str, Any], info: Any) -> dict[str, Any]:
        bad = _non_finite(options, info.field_name)
        if bad:
            raise ValueError(
                f"{bad[0]} is {bad[1]!r}: the config is saved as JSON, which has no NaN or infinity "
                "(--resume could not read it back); give a finite number"
            )
        return options

    @model_validator(mode="after")
    def _no_secrets(self) -> TrainConfig:
        for spec, options in self.backend_options.items():
            bad = sorted(k for k in options if any(w in str(k).lower() for w in SECRET_WORDS))
            if bad:
                raise ValueError(
                    f"backend_options[{spec!r}] holds {bad}: the config is written to the run folder, "
                    "so credentials must come from the environment (e.g. OPENAI_API_KEY), never a config"
                )
        return self

    @model_validator(mode="after")
    def _options_of_used_backends(self) -> TrainConfig:
        used = sorted({self.backend_spec(r) for r in ROLES})
        for spec in self.backend_options:
            if spec not in used:
                close = difflib.get_close_matches(spec, used, n=1)
                hint = f"did you mean {close[0]!r}? " if close else ""
                raise ValueError(
                    f"backend_options names {spec!r}, which no role uses: {hint}the run's backend "
                    f"specs are {used} (actor_backend, critic_backend, optimiser_backend)"
                )
        return self

    @model_validator(mode="after")
    def _disjoint_seeds(self) -> TrainConfig:
        train = set(range(self.seed, self.seed + self.iterations * self.episodes_per_iteration))
        clash = sorted(train & set(self.validation_seeds))
        if clash:
            raise ValueError(
                f"validation_seeds {clash} are also training seeds (seed {self.seed} + 0..."
                f"{self.iterations * self.episodes_per_iteration - 1}); validation must be held out: "
                "choose other validation_seeds"
            )
        clash = sorted(set(self.test_seeds) & (train | set(self.validation_seeds)))
        if clash:
            raise ValueError(
                f"test_seeds {clash} are also training or validation seeds; the test must be "
                "held out from every decision: choose other test_seeds"
            )
        return self

    def section(self, method: str) -> Any:
        """The ``method`` section (e.g. a :class:`LangMARLConfig`), ``None`` unless it is this run's
        method's (also as ``config.langmarl``, ``config.maskills``, ...)."""
        return (self.__pydantic_extra__ or {}).get(method)

    def settings_of(self, method: str) -> Any:
        """The ``method`` section (:meth:`section`).

        Raises:
            InvalidKwargError: the config's method is another one (it has no such section).
        """
        found = self.section(method)
        if found is None:
            raise InvalidKwargError(f"this config's method is {self.method!r}, not {method!r}: it has no {method} settings")
        return found

    if not TYPE_CHECKING:

        def __getattr__(self, name: str) -> Any:
            try:
                return super().__getattr__(name)
            except AttributeError:
                if name in sections():  # another registered method's section: this run has none
                    return None
                raise

    def training_seeds(self, iteration: int) -> list[int]:
        """The seeds of one iteration's training episodes (episode ``k`` uses ``seed + k``)."""
        first = iteration * self.episodes_per_iteration
        return [self.seed + first + k for k in range(self.episodes_per_iteration)]

    def episode_numbers(self, iteration: int) -> list[int]:
        """The episode numbers of one iteration's training episodes."""
        first = iteration * self.episodes_per_iteration
        return list(range(first, first + self.episodes_per_iteration))

    @property
    def acceptance_rule(self) -> Literal["joint", "per_agent"]:
        """``acceptance``, or its default: joint for a critic mode that says so (``central_global``:
        one team update), per-agent otherwise."""
        mode = getattr(self.section(self.method), "critic_mode", None)
        joint = mode is not None and critic_mode(mode).joint
        return self.acceptance or ("joint" if joint else "per_agent")

    def backend_spec(self, role: str) -> str:
        """The backend spec of ``role`` (``actor``, ``critic`` or ``optimiser``)."""
        spec = {"actor": self.actor_backend, "critic": self.critic_backend, "optimiser": self.optimiser_backend}[role]
        return spec or self.actor_backend

    def worker_count(self) -> int:
        """``workers``, or its default: for an all-embedded run the model instances the config's
        ``backend_options`` give it (``instances``, default 1: one instance serves one request at a
        time), else 8."""
        if self.workers is not None:
            return self.workers
        if not all(self.backend_spec(r) == "embedded" for r in ROLES):
            return 8
        return self.embedded_instances()

    def embedded_instances(self) -> int:
        """The embedded actors' model instances, ``backend_options.embedded.instances`` (default 1;
        a value that is not an int >= 1 counts as 1 here: the backend refuses it when built)."""
        instances = self.backend_options.get("embedded", {}).get("instances", 1)
        return instances if isinstance(instances, int) and not isinstance(instances, bool) and instances >= 1 else 1


def setting_names() -> dict[str, str]:
    """Every key a config file or ``--set`` may name -> where it lives: the common settings
    (``""``), and each registered method's settings, flat (``skills``) or dotted
    (``maskills.skills``) -> the method."""
    out = dict.fromkeys(TrainConfig.model_fields, "")
    for method, model in sections().items():
        for name in model.model_fields:
            out.setdefault(name, method)
            out[f"{method}.{name}"] = method
    return out


def _non_finite(value: Any, where: str) -> tuple[str, float] | None:
    """The first NaN or infinite float nested in ``value`` (dicts, lists, tuples), as ``(path, value)``."""
    if isinstance(value, float) and not math.isfinite(value):
        return where, value
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list | tuple) else ()
    for k, v in items:
        found = _non_finite(v, f"{where}[{k!r}]")
        if found:
            return found
    return None
