"""What the AEC, parallel and Gymnasium language wrappers share.

* :func:`decode_action`: the one path from an action to the inner env's action (the bound of
  :func:`lang_pz.spaces.check_action_text`, the adapter's parser, the fallback, strict mode);
* :func:`observation_dict` / :func:`agent_info`: the language observation and info of an agent;
* :class:`ForwardsAttributes`: how the PettingZoo wrappers forward attribute reads and writes.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator, Mapping
from typing import Any

from gymnasium import spaces
from pettingzoo import AECEnv, ParallelEnv
from pettingzoo.utils.wrappers import BaseParallelWrapper, BaseWrapper

from lang_pz.error import ActionParseError
from lang_pz.spaces import (
    check_action_text,
    stored_text,
    text_observation_space,
    text_space,
    to_charset,
)
from lang_pz.text.adapter import LanguageAdapter
from lang_pz.text.families import adapter_for
from lang_pz.text.replies import INFO_KEY as REPLY_FORMAT_KEY
from lang_pz.trajectory import to_jsonable

_MAX_REASON = 300
_PRINTABLE = bytes(range(0x20, 0x7F)) + b"\n"  # the ASCII part of the observation charset


def decode_action(
    adapter: LanguageAdapter,
    env: Any,
    agent: str | None,
    text: Any,
    observation: Any,
    info: Mapping[str, Any],
    *,
    strict: bool,
    max_length: int,
    warned: set[str] | None = None,
) -> tuple[Any, dict[str, Any], str | None]:
    """Turn ``text`` into an inner action, applying the fallback unless ``strict``.

    The action must first pass :func:`lang_pz.spaces.check_action_text` (a ``str`` of at most
    ``max_length`` characters, the action space's bound); then the adapter parses it
    (:meth:`~lang_pz.text.adapter.LanguageAdapter.parse_reply`: a bracketed move such as ``[7]``
    first, TextArena's convention, then the whole reply). A
    non-str action (an RL library's index ``3``) is never read as the word ``"3"``: it is
    refused like unreadable text (``parse_error`` names its type, while the text ``"3"`` parses)
    and a :class:`NonTextActionWarning` is issued once per ``warned`` set (one set per env).

    Returns:
        ``(action, action_info, note)``. ``action_info`` has ``action_text`` (the text, or the
        ``repr`` of a non-str action, cut to ``max_length`` characters: a longer one, refused,
        also gives ``action_text_chars`` and ``action_text_truncated``, see
        :func:`lang_pz.spaces.stored_text`), ``action`` (the applied inner action, JSON-able),
        ``parse_error`` (``None`` or the reason) and ``fallback`` (whether the fallback
        action was applied). ``note`` is the adapter's :meth:`~LanguageAdapter.fallback_text` after a
        fallback, for the agent's next observation, else ``None``.

    Raises:
        ActionParseError: in strict mode, when the action is refused; ``.text`` is the action
            as given (never shortened).
    """
    if not isinstance(text, str) and not strict and warned is not None and "non_text" not in warned:
        warned.add("non_text")
        warnings.warn(non_text_message(text), NonTextActionWarning, stacklevel=3)
    try:
        check_action_text(text, max_length)
        action, error = adapter.parse_reply(env, agent, text, observation, info), None
    except ActionParseError as exc:
        if strict:
            if exc.text is text:
                raise
            raise ActionParseError(text, exc.reason) from None
        action, error = adapter.fallback(env, agent, observation, info), exc.reason
    action_info = {
        **stored_text("action_text", text, max_length),
        "action": action if type(action) is int else to_jsonable(action),
        "parse_error": error,
        "fallback": error is not None,
    }
    note = None
    if error is not None:
        note = adapter.fallback_text(env, agent, action, error[:_MAX_REASON])
    return action, action_info, note


class NonTextActionWarning(UserWarning):
    """A language env was stepped with something that is not text (e.g. an RL library's index)."""


def non_text_message(action: Any) -> str:
    """Why a non-str action is refused, and the fix."""
    return (
        f"a language env takes action text, got {type(action).__name__} {action!r:.40}: it is refused "
        "(the fallback is played and info['parse_error'] names the type), never read as the word "
        f"{str(action)[:20]!r}. Send the action word, or give the RL library index actions with "
        "lang_pz.interop.to_vector_env / to_masked_aec_env; strict=True raises instead"
    )


def fit_charset(text: str, max_length: int) -> str:
    """``text`` as :func:`lang_pz.spaces.to_charset` returns it (Unicode kept; only controls and
    characters beyond the BMP become ``?``), with a fast check for the common case (printable ASCII
    and newlines, short enough).

    Raises:
        ValueError: ``text`` is longer than ``max_length`` (see ``to_charset``).
    """
    if len(text) <= max_length and text.isascii() and not text.encode("ascii").translate(None, _PRINTABLE):
        return text  # printable ASCII and newlines: inside the charset (the rest goes the long way)
    return to_charset(text, max_length)


def with_note(text: str, note: str | None) -> str:
    """``text`` with ``note`` on its own line before the last line (the action line)."""
    if not note:
        return text
    head, sep, last = text.rpartition("\n")
    return f"{head}\n{note}\n{last}" if sep else f"{text}\n{note}"


def observation_dict(
    adapter: LanguageAdapter,
    env: Any,
    agent: str | None,
    observation: Any,
    info: Mapping[str, Any],
    max_length: int,
    note: str | None = None,
) -> dict[str, str]:
    """The language observation ``{"text": ...}`` of one agent (``note``: see :func:`with_note`)."""
    return {"text": fit_charset(with_note(adapter.render(env, agent, observation, info), note), max_length)}


class FixedActions:
    """Per agent, the legal words and action range of an adapter whose
    :meth:`~lang_pz.text.adapter.LanguageAdapter.legal_actions_fixed` says they never change:
    computed once instead of at every step."""

    def __init__(self) -> None:
        self._adapter: LanguageAdapter | None = None
        self._known: dict[Any, tuple[list[str] | None, list[float] | None] | None] = {}

    def get(
        self, adapter: LanguageAdapter, env: Any, agent: str | None
    ) -> tuple[list[str] | None, list[float] | None] | None:
        """``(legal_actions, action_range)`` if fixed for ``agent`` under ``adapter``, else ``None``."""
        if adapter is not self._adapter:
            self._adapter, self._known = adapter, {}
        if agent not in self._known:
            self._known[agent] = (
                (adapter.legal_actions(env, agent, None, {}), adapter.action_range(env, agent))
                if adapter.legal_actions_fixed(env, agent)
                else None
            )
        return self._known[agent]


def agent_info(
    adapter: LanguageAdapter,
    env: Any,
    agent: str | None,
    observation: Any,
    info: Mapping[str, Any],
    action_info: Mapping[str, Any] | None,
    fixed: FixedActions | None = None,
) -> dict[str, Any]:
    """The inner info plus ``legal_actions`` / ``action_range`` and the last action's decoding.

    A numeric ``action_mask`` is removed from the info: a Text action space cannot be
    sampled with it (the legal actions are given as words in ``legal_actions`` instead).
    ``fixed`` supplies legal actions that never change (when the info has no mask).
    """
    out = dict(info)
    known = fixed.get(adapter, env, agent) if fixed is not None and "action_mask" not in info else None
    if known is not None:
        legal = list(known[0]) if known[0] is not None else None
        rng = list(known[1]) if known[1] is not None else None
    else:
        out.pop("action_mask", None)
        legal = adapter.legal_actions(env, agent, observation, info)
        rng = adapter.action_range(env, agent)
    if legal is not None:
        out["legal_actions"] = legal
    if rng is not None:
        out["action_range"] = rng
    components = adapter.action_components(env, agent)
    if components is not None:
        out["action_components"] = components.as_info()
    if legal is None and rng is None and components is None:
        reply = adapter.reply_format(env, agent, observation, info)
        if reply is not None:
            out[REPLY_FORMAT_KEY] = reply.as_info()
    if action_info:
        out.update(action_info)
    return out


# -- attribute forwarding -------------------------------------------------------------------

#: Attributes of the PettingZoo API itself: each layer answers for its own (as in PettingZoo).
API_ATTRIBUTES: frozenset[str] = (
    frozenset(AECEnv.__annotations__)
    | frozenset(ParallelEnv.__annotations__)
    | {
        "render_mode",
        "state_space",
        "num_agents",
        "max_num_agents",
        "unwrapped",
        "env",
        "aec_env",
    }
)


def wrapped_layers(env: Any) -> Iterator[Any]:
    """``env`` and every env it wraps, outermost first: through PettingZoo's and SuperSuit's
    wrappers (``.env``) and PettingZoo's conversion wrappers (``.env`` / ``.aec_env``)."""
    for _ in range(64):
        if env is None:
            return
        yield env
        own = getattr(env, "__dict__", {})
        env = own.get("env", own.get("aec_env"))


def _holder(env: Any, name: str) -> Any | None:
    """The first layer of ``env``'s chain that has attribute ``name`` (its own or its class's)."""
    for layer in wrapped_layers(env):
        if name in layer.__dict__ or any(name in vars(c) for c in type(layer).__mro__):
            return layer
    return None


_PER_STEP = ("agents", "agent_selection", "terminations", "truncations", "rewards", "_cumulative_rewards", "infos")


class ForwardsAttributes:
    """Attribute forwarding of the PettingZoo language wrappers (documented in their docstrings).

    * Reads of a name the wrapper lacks go to the wrapped env, exactly as
      ``pettingzoo.utils.wrappers.BaseWrapper`` does (private names refused, except
      ``_cumulative_rewards``); an environment-specific name (``max_cycles``, ``ball`` ...)
      that a PettingZoo conversion wrapper in between does not forward is read from the
      layer below that has it, down to ``env.unwrapped``.
    * Writes go where reads come from: a public name the wrapper does not own and that a
      wrapped layer has (``env.max_cycles = 50``) is set on that layer, so the environment
      sees it. The wrapper's own attributes (:attr:`local_attributes`, private names,
      properties) and the PettingZoo API attributes (``agents``, ``rewards`` ...) are set on
      the wrapper, as in PettingZoo. A name no layer has is set on the wrapper.
    """

    #: Public attributes set on the wrapper itself (subclasses that add some extend this).
    local_attributes: frozenset[str] = frozenset({"env", "adapter", "strict", "observation_max_length", "action_max_length"})

    def __getattr__(self, name: str) -> Any:
        fast = self.__dict__.get("_holders")
        if fast is not None and name in fast:
            return getattr(fast[name], name)
        if name.startswith("_") and name != "_cumulative_rewards":
            raise AttributeError(f"accessing private attribute '{name}' is prohibited")
        env = self.__dict__.get("env")
        if env is None:
            raise AttributeError(f"{type(self).__name__} has no attribute {name!r}")
        try:
            return getattr(env, name)
        except AttributeError:
            holder = None if name in API_ATTRIBUTES else _holder(env, name)
            if holder is None:
                raise
            return getattr(holder, name)

    def _find_holders(self) -> None:
        """After a reset: remember which wrapped layer holds each per-step API attribute, so
        reading it skips the hops through every wrapper in between. Only layers PettingZoo's
        own forwarding reaches count (``BaseWrapper`` / ``BaseParallelWrapper`` down to the first
        layer that has the attribute), so the value read is exactly the one ``self.env.<name>``
        gives once the env is reset."""
        inner = {}
        for name in _PER_STEP:
            layer = self.__dict__.get("env")
            for _ in range(64):
                if layer is None or name in layer.__dict__:
                    break
                if any(name in vars(c) for c in type(layer).__mro__) or not isinstance(
                    layer, (BaseWrapper, BaseParallelWrapper)
                ):
                    layer = None
                    break
                layer = layer.__dict__.get("env")
            if layer is not None and name in layer.__dict__:
                inner[name] = layer
        self.__dict__["_inner_holders"] = inner
        self.__dict__["_holders"] = {
            name: h
            for name, h in inner.items()
            if name not in self.__dict__ and not any(name in vars(c) for c in type(self).__mro__)
        }

    def _inner(self, name: str) -> Any:
        """``self.env.<name>`` for a per-step API attribute, read from the layer that holds it."""
        holder = self.__dict__.get("_inner_holders", {}).get(name)
        return getattr(holder, name) if holder is not None else getattr(self.env, name)

    def __setattr__(self, name: str, value: Any) -> None:
        if (
            name.startswith("_")
            or name in self.local_attributes
            or name in API_ATTRIBUTES
            or name in self.__dict__
            or any(name in vars(c) for c in type(self).__mro__)
        ):
            object.__setattr__(self, name, value)
            return
        holder = _holder(self.__dict__.get("env"), name)
        if holder is None:
            object.__setattr__(self, name, value)
        else:
            setattr(holder, name, value)


class MultiAgentTextSpaces(ForwardsAttributes):
    """Mixin of the PettingZoo language wrappers: per-agent Text spaces, cached (same object
    on every call, as PettingZoo requires for seeding), and attribute forwarding."""

    adapter: LanguageAdapter
    strict: bool
    observation_max_length: int
    action_max_length: int

    def _init_language(
        self,
        possible_agents: list[str],
        adapter: LanguageAdapter | None,
        strict: bool,
        observation_max_length: int,
        action_max_length: int,
    ) -> None:
        self.adapter = adapter if adapter is not None else adapter_for(self.env)
        self.strict = strict
        self.observation_max_length = observation_max_length
        self.action_max_length = action_max_length
        # made at an agent's first call (the same object on every later one): an env made for a
        # concurrent episode or re-run never asks, and 20 agents' spaces cost as much as the env
        self._spaced_agents = frozenset(possible_agents)
        self._observation_spaces: dict[str, spaces.Space[Any]] = {}
        self._action_spaces: dict[str, spaces.Space[Any]] = {}
        self._notes: dict[str, str] = {}
        self._fixed_actions = FixedActions()
        self._warned: set[str] = set()  # the warnings this env has issued (each once)

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        space = self._observation_spaces.get(agent)
        if space is None:
            self._spaced(agent)
            space = self._observation_spaces.setdefault(agent, text_observation_space(self.observation_max_length))
        return space

    def action_space(self, agent: str) -> spaces.Space[Any]:
        space = self._action_spaces.get(agent)
        if space is None:
            self._spaced(agent)
            space = self._action_spaces.setdefault(agent, text_space(self.action_max_length))
        return space

    def _spaced(self, agent: str) -> None:
        if agent not in self._spaced_agents:
            raise KeyError(agent)  # as the dict of every agent's space raised
