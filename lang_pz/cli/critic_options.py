"""Checks of ``lang-pz eval-critic``'s options that need the environment, made before anything
is written (``--out``) or loaded (the critic's model): each error names the option, the value
and what it may be."""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from typing import Any

from lang_pz.cli.common import fail

#: --evidence values that are not action words (the counterfactual critic's window replacements).
SPECIAL_EVIDENCE = ("alternatives", "reference", "default", "random")


def _hint(value: str, choices: Sequence[str]) -> str:
    close = difflib.get_close_matches(value, list(choices), n=1, cutoff=0.75)
    return f"; did you mean {close[0]!r}?" if close else ""


def _listing(words: Sequence[str], most: int = 20) -> str:
    shown = ", ".join(words[:most])
    return shown + (f", ... ({len(words)} in all)" if len(words) > most else "")


def check_evidence(evidence: Sequence[str] | None, modes: Sequence[str], window: int | None = None) -> None:
    """What ``--evidence`` (and ``--evidence-window``) can be checked against without the
    environment (exits with code 2).

    Refused: an empty value; ``--evidence`` or ``--evidence-window`` when no ``--critic-mode`` uses
    it (a mode that re-runs episodes: :func:`lang_pz.critics.modes.critic_modes`); ``reference``
    with a searching mode (decisive, coalition: they work without the base team's reference).
    """
    from lang_pz.critics.modes import critic_modes

    rerunning, searching_modes = critic_modes("reruns", "search"), critic_modes("search")
    users = [m for m in modes if m in rerunning]
    if window is not None and not users:
        fail(
            ValueError(
                f"--evidence-window {window} is used only by --critic-mode {', '.join(rerunning)}; none of them "
                f"is among --critic-mode {', '.join(modes)}: add --critic-mode counterfactual or drop --evidence-window"
            )
        )
    if not evidence:
        return
    if not users:
        fail(
            ValueError(
                f"--evidence {' '.join(evidence)} is used only by --critic-mode {', '.join(rerunning)}; "
                f"none of them is among --critic-mode {', '.join(modes)}: add --critic-mode counterfactual or drop --evidence"
            )
        )
    for word in evidence:
        if not word.strip():
            fail(ValueError(f"--evidence {word!r} is empty; choose {', '.join(SPECIAL_EVIDENCE)} or an action word"))
    searching = [m for m in users if m in searching_modes]
    if "reference" in evidence and searching:
        fail(
            ValueError(
                f"--evidence reference cannot be used with --critic-mode {', '.join(searching)}: its search replaces "
                "decisions by choices the agent had, not by 'previous'/'reference' (whole policies); use "
                "alternatives, default, random or action words, or run reference with --critic-mode counterfactual alone"
            )
        )


def _vocabulary(env: Any, agents: Sequence[str], seed: int) -> list[str] | None:
    """Every action word any agent of ``env`` has (its action words and the legal words at a reset
    with ``seed``), or ``None`` for a free-text environment (any text is an action)."""
    from lang_pz.error import LangPZError
    from lang_pz.interop.wrappers import action_words
    from lang_pz.policies.base import legal_actions

    words: dict[str, None] = {}
    for agent in agents:
        try:
            words.update(dict.fromkeys(action_words(env, agent)))
        except LangPZError:
            pass
    reset = env.reset(seed=seed)
    infos = reset[1] if isinstance(reset, tuple) else getattr(env, "infos", {})
    for agent in agents:
        words.update(dict.fromkeys(legal_actions(infos.get(agent)) or ()))
    return list(words) or None


def check_env(
    env_id: str,
    env_kwargs: Mapping[str, Any],
    *,
    fault: str | None,
    base: str | None,
    fault_action: str | None,
    evidence: Sequence[str] | None,
    seed: int,
) -> str | list[str] | None:
    """Check ``--fault``, ``--base``, ``--fault-action`` and ``--evidence`` against the environment
    ``env_id`` (made once, as the benchmark will make it); exits with code 2 naming the option.

    Returns:
        The fault's action for the benchmark: ``fault_action``, or for ``--fault misplay`` its
        comma-separated words as a list (the repertoire the faulty agent misplays from).
    """
    from lang_pz.error import LangPZError
    from lang_pz.evaluation.bases import default_fault
    from lang_pz.evaluation.faults import prepare

    chosen = fault or default_fault(env_id)
    action: str | list[str] | None = fault_action
    if fault_action is not None and chosen == "random":
        fail(
            ValueError(
                f"--fault-action {fault_action!r} is not used by --fault random (it draws among the legal actions); "
                "drop it, or use --fault harmful or idle with it"
            )
        )
    if fault_action is not None and chosen == "misplay":
        action = [w.strip() for w in fault_action.split(",") if w.strip()]
        if not action:
            fail(ValueError(f"--fault-action {fault_action!r} names no word; --fault misplay takes WORD[,WORD...]"))
    try:
        setup = prepare(env_id, fault=fault, env_kwargs=env_kwargs, base=base, fault_action=action, seed=seed)
        vocabulary = _vocabulary(setup["env"], setup["agents"], seed)
    except LangPZError as exc:
        fail(ValueError(f"--env {env_id}: {exc}"))
        return None
    if vocabulary is None:  # free text: any --fault-action / --evidence word is an action
        return action
    given = action if isinstance(action, list) else [action] if action is not None else []
    for word in given:
        if word not in vocabulary:
            fail(
                ValueError(
                    f"--fault-action {word!r} is not an action of {env_id}{_hint(word, vocabulary)} "
                    f"(its actions: {_listing(vocabulary)})"
                )
            )
    for word in evidence or []:
        if word not in SPECIAL_EVIDENCE and word not in vocabulary:
            fail(
                ValueError(
                    f"--evidence {word!r} is neither {', '.join(SPECIAL_EVIDENCE)} nor an action of {env_id}"
                    f"{_hint(word, [*SPECIAL_EVIDENCE, *vocabulary])} (its actions: {_listing(vocabulary)})"
                )
            )
    return action
