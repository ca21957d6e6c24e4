"""The single checks of :func:`lang_pz.test.language_api_test`, usable alone on one step: an
observation (:func:`check_observation`), its text more than a summary (:func:`check_not_summary`),
the legal action words (:func:`check_legal_actions`), every legal action expressible as text
(:func:`check_actions_expressible`) and the info a language wrapper sets after an action
(:func:`check_decoded`); and the :data:`GARBAGE` texts the test sends. Each raises
``AssertionError`` naming ``where``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from gymnasium import spaces as gym_spaces

from lang_pz.error import ActionParseError

__all__ = [
    "GARBAGE",
    "check_actions_expressible",
    "check_decoded",
    "check_legal_actions",
    "check_not_summary",
    "check_observation",
]

#: Text actions that no language environment should accept (no action word, no number).
GARBAGE: tuple[str, ...] = (
    "",
    "   \n\t",
    "qwzx vbnm",
    "\x00\x01\x02\x7f",
    "\u00ff\u20ac\U0001f600 " * 20,
    "{" * 300,
    '{"action": null}',
    "zq" * 3000,
)


def check_observation(space: gym_spaces.Space[Any], obs: Any, where: str) -> None:
    """``obs`` is ``{"text": str}`` and inside ``space``."""
    assert isinstance(obs, Mapping) and isinstance(obs.get("text"), str), (
        f"{where}: observation must be {{'text': str}}, got {type(obs).__name__}: {obs!r:.200}"
    )
    if not space.contains(obs):
        text = obs["text"]
        inner = space["text"] if isinstance(space, gym_spaces.Dict) and "text" in space.spaces else None
        bounds, bad = "", []
        if isinstance(inner, gym_spaces.Text):
            bounds = f"{inner.min_length} to {inner.max_length} characters, "
            bad = sorted({c for c in text if c not in inner.character_set})
        raise AssertionError(
            f"{where}: observation text is outside its space ({bounds}length {len(text)}, "
            f"characters outside the charset: {bad[:10]}): {text[:200]!r}"
        )


def check_legal_actions(
    wrapper: Any, agent: str | None, raw_obs: Any, raw_info: Mapping[str, Any], legal: Sequence[str], where: str
) -> None:
    """Every legal word parses to a legal inner action, and that action's text parses back to it."""
    adapter, inner = wrapper.adapter, wrapper.env
    mask = adapter.action_mask(inner, agent, raw_obs, raw_info)
    space = adapter.action_space(inner, agent)
    for word in legal:
        try:
            action = adapter.parse(inner, agent, word, raw_obs, raw_info)
        except ActionParseError as exc:
            raise AssertionError(f"{where}: legal action {word!r} does not parse: {exc.reason}") from exc
        if mask is not None and isinstance(space, gym_spaces.Discrete):
            assert mask[int(action) - int(space.start)], (
                f"{where}: legal action {word!r} parses to {action}, which the mask forbids"
            )
        again = adapter.parse(inner, agent, adapter.action_text(inner, agent, action), raw_obs, raw_info)
        assert np.array_equal(np.asarray(again), np.asarray(action)), (
            f"{where}: action_text({action!r}) parses to {again!r}, not back to {action!r}"
        )


def check_decoded(info: Mapping[str, Any], text: str, garbage: bool, where: str) -> None:
    """The info keys a language wrapper sets after an action."""
    for key in ("action_text", "action", "parse_error", "fallback"):
        assert key in info, f"{where}: info lacks {key!r} after an action; info keys: {sorted(info)}"
    stored = info["action_text"]
    if info.get("action_text_truncated"):  # a text over the bound is stored cut, with its length
        assert isinstance(text, str) and text.startswith(stored) and info.get("action_text_chars") == len(text), (
            f"{where}: info['action_text'] {stored!r:.80} ({info.get('action_text_chars')} chars) is not the text "
            f"sent cut ({len(text)} chars)"
        )
    else:
        assert stored == text, f"{where}: info['action_text'] is {stored!r:.80}, not the text sent"
    if garbage:
        assert isinstance(info["parse_error"], str) and info["parse_error"], (
            f"{where}: garbage {text!r:.80} did not set info['parse_error'] (it parsed to {info['action']!r})"
        )
        assert info["fallback"] is True, f"{where}: garbage {text!r:.80} did not set info['fallback']"
    else:
        assert info["parse_error"] is None, f"{where}: valid text {text!r} was rejected: {info['parse_error']}"
        assert info["fallback"] is False, f"{where}: valid text {text!r} applied the fallback"


def _numbers_of(raw_obs: Any) -> tuple[np.ndarray, Callable[[np.ndarray], Any]] | None:
    """The numeric array of an observation (itself, or its ``"observation"`` entry) and how to put
    a changed copy back; ``None`` for other observations (text, an image the adapter never reads)."""
    if isinstance(raw_obs, Mapping) and "observation" in raw_obs:
        inner = _numbers_of(raw_obs["observation"])
        if inner is None:
            return None
        arr, put = inner
        return arr, lambda changed: {**raw_obs, "observation": put(changed)}
    if isinstance(raw_obs, np.ndarray) and raw_obs.dtype.kind in "biuf" and raw_obs.size >= 4:
        return raw_obs, lambda changed: changed.astype(raw_obs.dtype)
    return None


def check_not_summary(wrapper: Any, agent: str | None, raw_obs: Any, where: str, samples: int = 8) -> None:
    """The observation text says which number is where, not only statistics of the numbers.

    For a numeric observation the adapter reads: if changing single numbers changes the text (it
    is rendered from the observation) but swapping two numbers of clearly different values never
    does, the text is only a summary (shape, min, mean, max: an agent cannot play from it), and
    the check fails. Text rendered from the environment's state (it ignores the numbers) and
    observations whose numbers are all equal pass. Up to ``samples`` changes and swaps are tried
    (seeded: the same observation gives the same verdict).
    """
    adapter, inner = wrapper.adapter, wrapper.env
    found = _numbers_of(raw_obs) if getattr(adapter, "reads_observation", True) else None
    if found is None:
        return
    arr, put = found
    flat = np.asarray(arr, dtype=float).ravel()
    finite = np.isfinite(flat)
    if finite.sum() < 4:
        return
    span = float(np.ptp(flat[finite])) or 1.0

    def text_of(values: np.ndarray) -> str | None:
        try:
            return str(adapter.observation_text(inner, agent, put(values.reshape(np.shape(arr)))))
        except Exception:  # an adapter may refuse an observation the env never makes: no verdict from it
            return None

    base = text_of(flat.copy())
    rng = np.random.default_rng(0)
    picks = rng.choice(np.flatnonzero(finite), size=min(samples, int(finite.sum())), replace=False)
    bumped = []
    for i in picks:
        changed = flat.copy()
        changed[i] += span
        bumped.append(text_of(changed))
    if base is None or all(t in (None, base) for t in bumped):
        return  # the text does not depend on these numbers: rendered from the state
    distinct = [(int(i), int(j)) for i in picks for j in np.flatnonzero(finite) if abs(flat[i] - flat[j]) > 0.05 * span]
    if not distinct:
        return
    swaps = [distinct[k] for k in rng.choice(len(distinct), size=min(samples, len(distinct)), replace=False)]
    for i, j in swaps:
        changed = flat.copy()
        changed[i], changed[j] = flat[j], flat[i]
        if text_of(changed) not in (None, base):
            return
    raise AssertionError(
        f"{where}: the observation text is only a summary: it changes with the numbers of the observation "
        f"but not when two of them swap places, so it does not say which number is where. Give the adapter "
        f"labels (LanguageAdapter.observation_labels) or a family adapter (lang_pz.text.families). "
        f"Text: {base[:300]!r}"
    )


def check_actions_expressible(
    wrapper: Any, agent: str | None, raw_obs: Any, raw_info: Mapping[str, Any], where: str
) -> None:
    """Every legal action has a text that parses back to it (``action_text``, then ``parse``).

    The legal actions: a Discrete space's actions under the environment's mask, or all of them
    where the adapter's legal actions never change (no mask); three sampled actions of a Box or
    MultiDiscrete space (a Box action parses back within 0.1 % or 1e-6). Legal sets the adapter
    itself defines from the state (its listed words, no mask) are checked word by word by
    :func:`check_legal_actions`; text action spaces have nothing to express.
    """
    adapter, inner = wrapper.adapter, wrapper.env
    space = adapter.action_space(inner, agent)
    actions: list[Any]
    if isinstance(space, gym_spaces.Discrete):
        mask = adapter.action_mask(inner, agent, raw_obs, raw_info)
        if mask is not None:
            actions = [int(space.start) + int(i) for i in np.flatnonzero(mask)]
        elif adapter.legal_actions_fixed(inner, agent):
            actions = [int(space.start) + i for i in range(int(space.n))]
        else:
            return
    elif isinstance(space, (gym_spaces.Box, gym_spaces.MultiDiscrete)):
        space.seed(0)
        actions = [space.sample() for _ in range(3)]
    else:
        return
    for action in actions:
        text = adapter.action_text(inner, agent, action)
        try:
            back = adapter.parse(inner, agent, text, raw_obs, raw_info)
        except ActionParseError as exc:
            raise AssertionError(
                f"{where}: legal action {action!r} cannot be expressed: its text {text!r:.80} does not parse ({exc.reason})"
            ) from exc
        same = (
            np.allclose(np.asarray(back, dtype=float), np.asarray(action, dtype=float), rtol=1e-3, atol=1e-6)
            if isinstance(space, gym_spaces.Box)
            else np.array_equal(np.asarray(back), np.asarray(action))
        )
        assert same, f"{where}: legal action {action!r} cannot be expressed: its text {text!r:.80} parses to {back!r}"
