"""Adapters: how one environment's agents see and act in text.

A :class:`LanguageAdapter` holds every environment-specific choice of a language wrapper
(observation text, action words, parsing, fallback, the critic's global-state text). The
base class is generic: it works for any environment whose spaces :mod:`lang_pz.text.codec`
handles (Discrete, MultiDiscrete, Box, Dict), so wrapping a new environment needs no
adapter. Environment-specific adapters (``lang_pz.envs``) override single hooks to give
better text.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from gymnasium import spaces

from lang_pz.error import ActionParseError
from lang_pz.text import codec, render
from lang_pz.text.components import Components
from lang_pz.text.replies import ReplyFormat

#: Box actions with this many numbers or fewer (and more than one) get named components.
MAX_COMPONENTS = 64
#: A bracketed part of a reply, TextArena's move convention (``... so I play [7]``): one line,
#: 1 to 200 characters, no nested brackets.
BRACKETED = re.compile(r"\[[^\[\]\n]{1,200}\]")


def _space(space_or_fn: Any, agent: str | None) -> spaces.Space[Any]:
    # PettingZoo exposes spaces as methods of the agent; Gymnasium as attributes.
    return space_or_fn(agent) if callable(space_or_fn) else space_or_fn


class LanguageAdapter:
    """Generic text interface for an environment, built from its spaces.

    Args:
        action_names: words for the actions of a Discrete action space, index order
            (default: the integers). One list for every agent.
        describe_agent: whether observation text starts with ``"You are <agent>."``.

    Hooks take the wrapped (inner) environment ``env``, the ``agent`` id (``None`` for
    Gymnasium environments) and that agent's own raw ``observation`` and ``info`` only:
    execution is decentralised. Only :meth:`state_text` sees every agent.

    Attributes:
        reads_observation: whether the hooks read the ``observation`` argument. An adapter
            that renders from the environment's state instead sets it to ``False``: its hooks
            get ``observation=None`` and the wrappers never compute the inner observation for
            it (Pistonball skips its images this way; ``raw_observation`` still computes one).
    """

    reads_observation: bool = True

    def __init__(self, action_names: Sequence[str] | None = None, *, describe_agent: bool = True) -> None:
        self.action_names = list(action_names) if action_names is not None else None
        self.describe_agent = describe_agent

    # -- spaces -------------------------------------------------------------------------
    def action_space(self, env: Any, agent: str | None) -> spaces.Space[Any]:
        """The inner environment's action space for ``agent`` (looked up once per env and agent:
        PettingZoo requires the same space object on every call)."""
        memo = self.__dict__.setdefault("_action_spaces", {})
        hit = memo.get(agent)
        if hit is None or hit[0] is not env:
            hit = memo[agent] = (env, _space(env.action_space, agent))
        return hit[1]

    def vocabulary(self, space: spaces.Discrete) -> list[str]:
        """The action words of Discrete ``space``: :func:`lang_pz.text.codec.action_vocabulary`
        with :attr:`action_names`, built once per space and names (do not modify the list)."""
        names = tuple(self.action_names) if self.action_names is not None else None
        memo = self.__dict__.setdefault("_vocabularies", {})
        key = (int(space.n), int(space.start), names)
        if key not in memo:
            memo[key] = codec.action_vocabulary(space, names)
        return memo[key]

    def observation_space(self, env: Any, agent: str | None) -> spaces.Space[Any]:
        """The inner environment's observation space for ``agent``."""
        return _space(env.observation_space, agent)

    # -- observations -------------------------------------------------------------------
    def observation_text(self, env: Any, agent: str | None, observation: Any) -> str:
        """What the agent sees, as text (without the action line).

        Default: the observation rendered by :func:`lang_pz.text.render.describe` (every number up
        to :data:`lang_pz.text.render.MAX_NUMBERS_CHARS` characters, named by
        :meth:`observation_labels`); for the PettingZoo ``{"observation", "action_mask"}``
        convention, only ``"observation"``.
        """
        space = self.observation_space(env, agent)
        labels = self.observation_labels(env, agent)
        if isinstance(space, spaces.Dict) and "action_mask" in space.spaces and "observation" in space.spaces:
            body = render.describe(space["observation"], observation["observation"], labels)
        else:
            body = render.describe(space, observation, labels)
        prefix = f"You are {agent}.\n" if self.describe_agent and agent is not None else ""
        return f"{prefix}Observation{' ' if body.startswith('(') else ': '}{body}"

    def observation_labels(self, env: Any, agent: str | None) -> render.Labels | None:
        """Names of the numbers of ``agent``'s Box observation (:class:`lang_pz.text.render.Fields`
        for a vector, :class:`~lang_pz.text.render.Table` for a matrix), or ``None`` (laid out by
        shape). Override where the environment documents its layout (the family adapters of
        :mod:`lang_pz.text.families`)."""
        return None

    def render(self, env: Any, agent: str | None, observation: Any, info: Mapping[str, Any]) -> str:
        """The full observation text: :meth:`observation_text` then the action line."""
        line = self._fixed_line(env, agent) if "action_mask" not in info else None
        if line is None:
            line = self._action_line(env, agent, self.legal_actions(env, agent, observation, info))
        return f"{self.observation_text(env, agent, observation)}\n{line}"

    def _action_line(self, env: Any, agent: str | None, legal: list[str] | None) -> str:
        space = self.action_space(env, agent)
        components = self.action_components(env, agent)
        if components is not None:
            return components.describe()
        if isinstance(space, spaces.Discrete):
            return "Actions: " + ", ".join(legal if legal is not None else self.vocabulary(space))
        return codec.describe_action_space(space, self.action_names, legal)

    def _fixed_line(self, env: Any, agent: str | None) -> str | None:
        """The action line of ``agent`` if :meth:`legal_actions_fixed` (built once), else None."""
        memo = self.__dict__.setdefault("_fixed_lines", {})
        hit = memo.get(agent)
        if hit is None or hit[0] is not env or hit[1] != self.action_names:
            line = (
                self._action_line(env, agent, self.legal_actions(env, agent, None, {}))
                if self.legal_actions_fixed(env, agent)
                else None
            )
            hit = memo[agent] = (env, self.action_names and list(self.action_names), line)
        return hit[2]

    # -- actions ------------------------------------------------------------------------
    def action_mask(self, env: Any, agent: str | None, observation: Any, info: Mapping[str, Any]) -> np.ndarray | None:
        """The legal-action mask (PettingZoo convention: in the observation dict or in info)."""
        if isinstance(observation, Mapping) and "action_mask" in observation:
            return np.asarray(observation["action_mask"])
        if "action_mask" in info:
            return np.asarray(info["action_mask"])
        return None

    def uses_action_mask(self, env: Any, agent: str | None) -> bool:
        """Whether legal actions depend on the state (an ``action_mask`` in the observation)."""
        space = self.observation_space(env, agent)
        return isinstance(space, spaces.Dict) and "action_mask" in space.spaces

    def legal_actions(self, env: Any, agent: str | None, observation: Any, info: Mapping[str, Any]) -> list[str] | None:
        """Action words the agent may use now (Discrete spaces), else ``None``."""
        space = self.action_space(env, agent)
        if not isinstance(space, spaces.Discrete):
            return None
        vocab = self.vocabulary(space)
        mask = self.action_mask(env, agent, observation, info)
        if mask is None:
            return list(vocab)
        return [vocab[i] for i in np.flatnonzero(mask)]

    def legal_actions_fixed(self, env: Any, agent: str | None) -> bool:
        """Whether :meth:`legal_actions` and :meth:`action_range` of ``agent`` depend on its
        spaces only (not on the state or a mask), so a wrapper may reuse them from step to step.

        True when this class's own ``legal_actions``, ``action_mask`` and ``action_range`` are
        in use and the observation has no ``action_mask``; an adapter overriding any of them
        gets False unless it says otherwise.
        """
        cls = type(self)
        own = all(
            getattr(cls, name) is getattr(LanguageAdapter, name)
            for name in ("legal_actions", "action_mask", "action_range", "action_space", "action_components")
        )
        return own and not self.uses_action_mask(env, agent)

    def component_names(self, env: Any, agent: str | None) -> Sequence[str] | None:
        """Names of the numbers of ``agent``'s Box action (``None``: ``a0``, ``a1`` ...). Override
        where the environment documents them (e.g. MPE's ``left``, ``right``, ``down``, ``up``)."""
        return None

    def action_components(self, env: Any, agent: str | None) -> Components | None:
        """The named numbers of a Box action of 2 to :data:`MAX_COMPONENTS` numbers
        (:mod:`lang_pz.text.components`), else ``None``; built once per env and agent."""
        if self.action_names is not None:
            return None
        space = self.action_space(env, agent)
        if not isinstance(space, spaces.Box) or not 1 < int(np.prod(space.shape)) <= MAX_COMPONENTS:
            return None
        memo = self.__dict__.setdefault("_components", {})
        hit = memo.get(agent)
        if hit is None or hit[0] is not space:
            hit = memo[agent] = (space, Components.of_box(space, self.component_names(env, agent)))
        return hit[1]

    def reply_format(self, env: Any, agent: str | None, observation: Any, info: Mapping[str, Any]) -> ReplyFormat | None:
        """What a free-text reply of ``agent`` that parses looks like (:mod:`lang_pz.text.replies`),
        put in ``info["reply_format"]`` for policies to decode under; ``None`` (default) where the
        actions are listed words, a number or named numbers (those are constrained already) or no
        format is known. Override in an adapter whose free-text replies have a form."""
        return None

    def action_range(self, env: Any, agent: str | None) -> list[float] | None:
        """``[low, high]`` for a one-number Box action space, else ``None``."""
        if self.action_names is not None:  # named actions: a Discrete space
            return None
        space = self.action_space(env, agent)
        if isinstance(space, spaces.Box) and int(np.prod(space.shape)) == 1:
            return [float(np.ravel(space.low)[0]), float(np.ravel(space.high)[0])]
        return None

    def parse(self, env: Any, agent: str | None, text: str, observation: Any, info: Mapping[str, Any]) -> Any:
        """Parse ``text`` into an inner-environment action.

        Raises:
            ActionParseError: the text does not name a legal action.
        """
        mask = self.action_mask(env, agent, observation, info)
        space = self.action_space(env, agent)
        components = self.action_components(env, agent)
        if components is not None:
            assert isinstance(space, spaces.Box)  # action_components is None unless the (memoized) space is a Box
            values = components.parse(text).reshape(space.shape)
            action = values.astype(space.dtype)
            if not space.contains(action):
                raise ActionParseError(text, f"out of the range of {np.dtype(space.dtype).name}: {components.describe()}")
            return action
        if type(text) is str and isinstance(space, spaces.Discrete):  # a reply that is exactly a word
            hit = self._exact_words(space).get(text)
            if hit is not None and (mask is None or mask[hit[0]]):
                return hit[1]
        return codec.parse_action(space, text, names=self.action_names, mask=mask)

    def parse_reply(self, env: Any, agent: str | None, text: str, observation: Any, info: Mapping[str, Any]) -> Any:
        """The inner action a reply names, as the language wrappers decode it: a bracketed move
        first, else :meth:`parse` of the whole reply.

        TextArena's convention is a reply that reasons and then gives its move in square brackets
        (``"3 and 5 are taken, so [7]"``). Where ``agent`` has a finite set of moves now
        (:meth:`legal_actions` is not ``None``), the reply's bracketed parts (:data:`BRACKETED`)
        are tried alone through :meth:`parse`, from the last to the first, and the first that
        parses is the action, whatever else the reply mentions: the reasoning's other squares no
        longer make it ambiguous. A reply without a bracketed part that parses is parsed whole.
        Free-text actions (no legal list: TextArena games that list no moves, the benchmark tasks'
        code and answers) are always parsed whole, so a bracket inside them is never cut out.

        Raises:
            ActionParseError: from :meth:`parse` of the whole reply.
        """
        if isinstance(text, str) and "[" in text and self.legal_actions(env, agent, observation, info) is not None:
            for part in reversed(BRACKETED.findall(text)):
                if part.strip() == text.strip():
                    break
                try:
                    return self.parse(env, agent, part, observation, info)
                except ActionParseError:
                    continue
        return self.parse(env, agent, text, observation, info)

    def _exact_words(self, space: spaces.Discrete) -> dict[str, tuple[int, int]]:
        """Action word -> (index, action) as :func:`lang_pz.text.codec.parse_action` maps a reply
        that is exactly that word (built once per space and names)."""
        memo = self.__dict__.setdefault("_exact", {})
        hit = memo.get(id(space))
        if hit is None or hit[0] is not space or hit[1] != self.action_names:
            vocab = self.vocabulary(space)
            lowered = {w.lower(): i for i, w in enumerate(vocab)}
            words = {
                w: (lowered[w.lower()], int(space.start) + lowered[w.lower()])
                for w in vocab
                if w == w.strip(codec.STRIP_CHARS) and codec.unwrap_json(w) == w
            }
            hit = memo[id(space)] = (space, self.action_names and list(self.action_names), words)
        return hit[2]

    def fallback(self, env: Any, agent: str | None, observation: Any, info: Mapping[str, Any]) -> Any:
        """The action applied when text does not parse (see :func:`lang_pz.text.codec.fallback_action`)."""
        return codec.fallback_action(self.action_space(env, agent), self.action_mask(env, agent, observation, info))

    def fallback_text(self, env: Any, agent: str | None, action: Any, reason: str) -> str | None:
        """The note in the agent's next observation after its reply was refused and ``action``
        (the fallback) was applied instead; ``None`` for no note. ``reason`` is the parse error."""
        return (
            f"Your last reply could not be used ({reason}), so '{self.action_text(env, agent, action)}' was played for you."
        )

    def action_text(self, env: Any, agent: str | None, action: Any) -> str:
        """The text that :meth:`parse` maps back to ``action`` (for logs and scripted policies)."""
        space = self.action_space(env, agent)
        if isinstance(space, spaces.Discrete):
            return self.vocabulary(space)[int(action) - int(space.start)]
        components = self.action_components(env, agent)
        if components is not None:
            return components.text(np.ravel(action))
        return codec.render_value(space, action)

    # -- centralised critic only --------------------------------------------------------
    def state_text(self, env: Any, observations: Mapping[str, Any]) -> str:
        """Global state for the centralised critic. Default: every agent's observation text."""
        return "\n".join(f"[{agent}] {self.observation_text(env, agent, obs)}" for agent, obs in observations.items())
