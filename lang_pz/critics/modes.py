"""Critic modes by name: what ``critic_mode`` names (a config's ``langmarl.critic_mode``,
``lang-pz train --critic-mode``, ``lang-pz eval-critic --critic-mode``), each a
:class:`CriticMode`: a factory, the model of its own options, and what a run needs to know of it.

=================  =====================================================================
``central_credit``  one LLM call per episode, a credit per agent (:class:`CentralCritic`)
``central_global``  one shared critique for the team, validated as one update
``independent``     one LLM call per agent, each judged on its own play
``counterfactual``  COMA's difference reward computed by re-runs; the LLM only words it
                    (:class:`~lang_pz.critics.difference.DifferenceCritic`)
``decisive``        the earliest decision whose change recovers the loss, searched by re-runs
                    (Who&When; :class:`~lang_pz.critics.decisive.DecisiveCritic`)
``coalition``       Shapley values of replacing agents' decisive windows together
                    (:class:`~lang_pz.critics.coalition.CoalitionCritic`)
``own_policy``      an agent's deviations from its own policy text that, undone, recover the
                    loss (:class:`~lang_pz.critics.own.OwnPolicyCritic`)
=================  =====================================================================

:func:`register_critic_mode` adds one (a critic of yours, selectable by name in a config or on
the command line once registered: ``imports:`` in a config imports the module that registers
it); :func:`make_critic` is the one factory of a config's critic (``lang-pz train`` and
``lang-pz eval-critic`` both build through it, so their defaults are the config's).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel

from lang_pz.error import InvalidKwargError

if TYPE_CHECKING:
    from lang_pz.backends.base import LLMBackend
    from lang_pz.critics.base import Critic

#: What a mode's critic needs of the environment: nothing (``none``: an LLM reads the episode),
#: the configured re-runs shown with each episode (``reruns``), or re-runs it searches itself
#: (``search``: a :class:`~lang_pz.critics.decisive.SearchingCritic`).
Evidence = Literal["none", "reruns", "search"]
#: Whose decisions LangMARL's counterfactual re-runs replace for the mode: the trainable agents
#: one by one, every agent (partners too), or the whole team at once.
Probes = Literal["trainable", "every", "team"]


@dataclass(frozen=True)
class CriticMode:
    """One critic mode (module docstring).

    Attributes:
        name: what ``critic_mode`` names.
        build: ``(backend, config) -> critic``: the critic of a
            :class:`~lang_pz.training.config.TrainConfig` (its method's section,
            :func:`critic_settings`, and the common ``critic_*`` settings) on the critic role's backend.
        description: a few words for help texts.
        evidence: see :data:`Evidence`.
        probes: see :data:`Probes`.
        joint: its candidates are validated as one team update by default (``acceptance``).
        settings: the model of ``langmarl.critic_options`` for this mode (``None``: it takes none);
            :func:`mode_options` gives them validated.
    """

    name: str
    build: Callable[[LLMBackend, Any], Critic[Any, Any]]
    description: str
    evidence: Evidence = "none"
    probes: Probes = "trainable"
    joint: bool = False
    settings: type[BaseModel] | None = None


_MODES: dict[str, CriticMode] = {}


def register_critic_mode(mode: CriticMode) -> CriticMode:
    """Make ``mode`` selectable by its name (in registration order in every listing).

    Raises:
        InvalidKwargError: another mode is registered under that name.
    """
    have = _MODES.get(mode.name)
    if have is not None and have != mode:
        raise InvalidKwargError(f"critic mode {mode.name!r} is already registered; give yours another name")
    _MODES[mode.name] = mode
    return mode


def critic_mode(name: str) -> CriticMode:
    """The mode registered as ``name``.

    Raises:
        InvalidKwargError: no mode has that name (the message lists the registered ones).
    """
    if name not in _MODES:
        raise InvalidKwargError(f"unknown critic mode {name!r}; registered: {', '.join(_MODES)}")
    return _MODES[name]


def critic_modes(*evidence: Evidence) -> list[str]:
    """The registered mode names, in registration order (only those of these ``evidence`` kinds,
    if any are given: ``critic_modes("reruns", "search")`` are the modes that re-run episodes)."""
    return [n for n, m in _MODES.items() if not evidence or m.evidence in evidence]


def critic_settings(config: Any) -> Any:
    """The section of a config that holds its critic mode: its method's (``langmarl``, or a
    method of yours whose settings extend :class:`~lang_pz.training.sections.LangMARLConfig`).

    Raises:
        InvalidKwargError: the config's method has no settings.
    """
    return config.settings_of(config.method)


def mode_options(config: Any) -> BaseModel | None:
    """A config's ``critic_options``, validated by its mode's settings model (``None`` for a mode
    without one).

    Raises:
        pydantic.ValidationError: the options do not fit the model.
    """
    s = critic_settings(config)
    model = critic_mode(s.critic_mode).settings
    return None if model is None else model.model_validate(s.critic_options)


def make_critic(config: Any, backend: LLMBackend) -> Critic[Any, Any]:
    """The critic of the config's ``critic_mode`` (:func:`critic_settings`) on ``backend`` (its
    mode's ``build``).

    Raises:
        InvalidKwargError: the mode is not registered; and whatever its factory raises.
    """
    return critic_mode(critic_settings(config).critic_mode).build(backend, config)


# -- the built-in modes ----------------------------------------------------------------------------


def _sampling(config: Any) -> dict[str, Any]:
    return {
        "max_attempts": config.critic_max_attempts,
        "temperature": config.critic_temperature,
        "retry_temperature": config.retry_temperature,
    }


def _central(mode: str) -> Callable[[LLMBackend, Any], Critic[Any, Any]]:
    def build(backend: LLMBackend, config: Any) -> Critic[Any, Any]:
        from lang_pz.critics.central import CentralCritic

        return CentralCritic(
            backend,
            mode=mode,  # type: ignore[arg-type]  # one of CentralCritic's modes (registered below)
            max_prompt_steps=config.critic_max_prompt_steps,
            max_prompt_chars=config.critic_max_prompt_chars,
            credit_levels=critic_settings(config).critic_credit_levels,
            **_sampling(config),
        )

    return build


def _difference(backend: LLMBackend, config: Any) -> Critic[Any, Any]:
    from lang_pz.critics.difference import DifferenceCritic

    return DifferenceCritic(backend, **_sampling(config))


def _search(backend: LLMBackend, config: Any, coalition: bool = False) -> Critic[Any, Any]:
    from lang_pz.critics.coalition import CoalitionCritic
    from lang_pz.critics.decisive import DecisiveCritic

    s = critic_settings(config)
    common: dict[str, Any] = {
        "replacements": s.counterfactual,
        "window": s.decisive_window,
        "share": s.decisive_share,
        "max_reruns": s.decisive_max_reruns,
        "seed": config.seed,
        **_sampling(config),
    }
    if coalition:
        return CoalitionCritic(
            backend, permutations=s.coalition_permutations, coalition_reruns=s.coalition_max_reruns, **common
        )
    return DecisiveCritic(backend, **common)


def _coalition(backend: LLMBackend, config: Any) -> Critic[Any, Any]:
    return _search(backend, config, coalition=True)


def _own_policy(backend: LLMBackend, config: Any) -> Critic[Any, Any]:
    from lang_pz.critics.own import make_own_policy_critic

    return make_own_policy_critic(backend, seed=config.seed, **_sampling(config))


for _mode in (
    CriticMode("central_credit", _central("central_credit"), "an LLM critic: one call per episode, a credit per agent"),
    CriticMode("central_global", _central("central_global"), "one shared critique for the team", probes="team", joint=True),
    CriticMode("independent", _central("independent"), "one LLM call per agent, each judged on its own play"),
    CriticMode(
        "counterfactual",
        _difference,
        "credit from re-runs of the same seed, the LLM only words it (needs counterfactual replacements)",
        evidence="reruns",
        probes="every",
    ),
    CriticMode(
        "decisive",
        _search,
        "blame the earliest decision whose change recovers the loss, searched by re-runs (Who&When)",
        evidence="search",
        probes="every",
    ),
    CriticMode(
        "coalition",
        _coalition,
        "Shapley values of replacing agents' decisive windows together (joint faults)",
        evidence="search",
        probes="every",
    ),
    CriticMode(
        "own_policy",
        _own_policy,
        "blame an agent that did not play what its own policy text says, if playing it recovers the loss",
        evidence="search",
        probes="every",
    ),
):
    register_critic_mode(_mode)


def described(names: list[str] | None = None) -> str:
    """``name (description), ...`` of the registered modes (or of ``names``), for help texts."""
    return ", ".join(f"{n} ({critic_mode(n).description})" for n in (critic_modes() if names is None else names))
