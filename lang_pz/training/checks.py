"""Checks a run's config against its environment before anything is built or written.

Each raises :class:`~lang_pz.error.InvalidKwargError` with a message naming the bad value and
the fix; :func:`lang_pz.training.build` calls them first, so a bad config never leaves a
half-made run folder.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Any

from pettingzoo import ParallelEnv

from lang_pz.backends import LLMBackend
from lang_pz.error import InvalidKwargError
from lang_pz.training.config import ROLES, TrainConfig

#: Counterfactual replacements a training run understands besides the env's action words.
REPLACEMENT_KEYWORDS = ("alternatives", "default", "random")


def check_agents(config: TrainConfig, env: Any) -> list[str]:
    """The env's agents, after checking that every agent the config names is one of them.

    Raises:
        InvalidKwargError: a single-agent env, an unknown agent, or an agent both trainable and
            a fixed partner.
    """
    if not hasattr(env, "possible_agents"):
        raise InvalidKwargError(
            f"{config.env_id} is a single-agent Gymnasium env; training needs a "
            "PettingZoo env (see `lang-pz envs` for the [parallel/aec] ones)"
        )
    agents = list(env.possible_agents)
    named = set(config.initial_policies) | set(config.trainable_agents or []) | set(config.partners)
    unknown = sorted(named - set(agents))
    if unknown:
        raise InvalidKwargError(
            f"initial_policies/trainable_agents/partners name {unknown}, which are not "
            f"agents of {config.env_id}; its agents are {agents}"
        )
    both = sorted(set(config.trainable_agents or []) & set(config.partners))
    if both:
        raise InvalidKwargError(f"{both} are both trainable and fixed partners; a partner's policy is not text")
    return agents


def check_counterfactual(config: TrainConfig, env: Any) -> None:
    """Every ``config.langmarl.counterfactual`` entry is a replacement keyword or an action word of the env
    (a typo would be re-run as an action word, and written into policies). Envs whose actions are
    free text (no ``legal_actions``) accept any word. Resets ``env`` with ``config.seed``.

    Raises:
        InvalidKwargError: an unknown entry (with the valid ones and close matches).
    """
    replacements = getattr(config.section(config.method), "counterfactual", None) or []
    if not replacements:
        return
    infos = env.reset(seed=config.seed)[1] if isinstance(env, ParallelEnv) else (env.reset(seed=config.seed), env.infos)[1]
    words = list(dict.fromkeys(w for i in infos.values() for w in i.get("legal_actions") or ()))
    valid = [*REPLACEMENT_KEYWORDS, *words]
    for r in replacements:
        if r in valid or (not words and r != "previous"):
            continue
        close = difflib.get_close_matches(r, valid, n=2, cutoff=0.6)
        hint = f" Did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
        why = " ('previous' needs previous policies, which a training run does not have)" if r == "previous" else ""
        raise InvalidKwargError(
            f"counterfactual entry {r!r} is neither a replacement keyword nor an action of "
            f"{config.env_id}{why}. Valid: {', '.join(valid)}.{hint}"
        )


#: partner kind -> the env ids it plays (a prefix), and what it is
PARTNER_ENVS = {
    "heuristic": ("butterfly/pistonball", "the scripted Pistonball heuristic"),
    "greedy": ("overcooked/", "Overcooked-AI's greedy planner"),
}


def check_partners(config: TrainConfig) -> None:
    """Every fixed partner's kind fits the env (``random`` fits any).

    Raises:
        InvalidKwargError: names the agent, the kind, the env and the kinds that fit it.
    """
    fits = ["random", *(k for k, (prefix, _) in PARTNER_ENVS.items() if config.env_id.startswith(prefix))]
    for agent, kind in sorted(config.partners.items()):
        if kind not in fits:
            prefix, what = PARTNER_ENVS[kind]
            raise InvalidKwargError(
                f"partners: {agent} {kind!r} is {what}, for {prefix}* envs only; for {config.env_id} use {' or '.join(fits)}"
            )


def check_policies(config: TrainConfig) -> None:
    """Every ``initial_policies`` text is a non-empty string within ``max_policy_chars``.

    Raises:
        InvalidKwargError: an empty, non-text or too long policy.
    """
    for a, text in config.initial_policies.items():
        if not isinstance(text, str) or not text.strip():
            raise InvalidKwargError(f"initial_policies[{a!r}] must be a non-empty policy text, got {text!r}")
        if len(text) > config.max_policy_chars:
            raise InvalidKwargError(
                f"initial_policies[{a!r}] has {len(text)} characters, more than "
                f"max_policy_chars={config.max_policy_chars}; shorten it or raise the limit"
            )


def role_backends(backends: LLMBackend | Mapping[str, LLMBackend] | None) -> dict[str, LLMBackend]:
    """``train(backends=...)`` as role -> backend (one backend given: every role).

    Raises:
        InvalidKwargError: an unknown role, or something that is not an :class:`LLMBackend`
            (e.g. a spec string, which belongs in the config).
    """
    given = dict(backends) if isinstance(backends, Mapping) else {} if backends is None else dict.fromkeys(ROLES, backends)
    bad = sorted(set(given) - set(ROLES))
    if bad:
        raise InvalidKwargError(f"backends names unknown role(s) {bad}; roles are {list(ROLES)}")
    for role, b in given.items():
        if b is not None and not isinstance(b, LLMBackend):
            where = f"backends[{role!r}]" if isinstance(backends, Mapping) else "backends"
            raise InvalidKwargError(
                f"{where} must be an LLMBackend object (or backends a mapping role -> LLMBackend), got {b!r}; "
                "pass backend spec strings through the config instead: TrainConfig(actor_backend=..., "
                "critic_backend=..., optimiser_backend=...)"
            )
    return given
