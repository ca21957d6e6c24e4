"""A text policy executed by an LLM: the policy's parameter is a string, ``policy.policy``.

In LangMARL each agent's policy is a natural-language instruction that the centralised
critic's credits and the optimiser's "language gradient" rewrite between episodes; at run
time each agent acts from its *own* observation only (centralised training, decentralised
execution).

How the instruction is shown to the model matters more than what it says for small models:
the embedded SmolLM2-135M ignores an instruction given as a chat system message, but follows
an *unconditional* one placed inline in a raw completion prompt after two worked examples
(measured with :func:`lang_pz.evaluation.adherence.measure_adherence`; ``lang-pz adherence``).
So the prompt form follows ``backend.prompt_format`` unless overridden:

- ``"chat"``: a system message holding the policy, a user message holding the observation.
- ``"completion"``: a raw prompt of ``Policy / Observation / Policy / Action = "..."`` blocks:
  worked examples from an unrelated toy situation (a robot in a hallway) that use the
  environment's own action words, each word twice (see
  :func:`~lang_pz.policies.worked_examples.choice_examples`), each picking the action its
  policy names, then the real policy and observation. Measured with SmolLM2-135M on 21
  Pistonball policies in free phrasing x 8 real observations: 167/168 actions as the policy
  says, against 151/168 with each word shown once (``benchmarks/results/actor_adherence.md``).

A prompt must leave the reply's ``max_tokens`` free in the model's context window. When the
backend knows its window and can count tokens (the embedded llama.cpp backend),
:meth:`LLMPolicy.fit_request` leaves out the middle of an over-long observation (its start and
its end, where the question and the ``Actions:`` line are, are kept) and puts a note in its
place saying how many characters were left out; ``Decision.meta["observation_chars_left_out"]``
records it. When only the server can count (an OpenAI-compatible endpoint), its
"context length exceeded" reply carries the counts and the observation is shortened from them
(up to three times). If even an empty observation does not fit (a huge policy text), the
decision raises :class:`~lang_pz.error.PromptTooLongError`.
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from lang_pz.backends.base import GenerationRequest, LLMBackend, Message, PromptFormat
from lang_pz.error import BackendError, PromptTooLongError
from lang_pz.policies.base import (
    Decision,
    Policy,
    action_components,
    action_range,
    legal_actions,
    observation_text,
)
from lang_pz.policies.worked_examples import (  # noqa: F401 - re-exported: their home was here
    CHOICE_PHRASINGS,
    CHOICE_SITUATIONS,
    COMPONENT_EXAMPLES,
    NUMBER_EXAMPLES,
    TEXT_EXAMPLES,
    choice_examples,
)
from lang_pz.text.replies import ReplyFormat

if TYPE_CHECKING:
    from lang_pz.trajectory import AgentStep


def completion_block(policy: str, observation: str, action: str | None = None) -> str:
    """One ``Policy / Observation / Policy / Action`` block of the completion prompt.

    The policy is repeated right before the action (measured: the 135M model copies the
    action named by the nearest policy line far more reliably), and the action is quoted
    (``Action = "up"``) so that the reply starts without a leading space, as the backend's
    choices grammar requires, and ends at the closing quote.
    """
    head = f'Policy: {policy}\nObservation: {observation}\nPolicy: {policy}\nAction = "'
    return head if action is None else f'{head}{action}"\n\n'


#: Tokens kept free besides the reply's ``max_tokens`` when a prompt is fitted to the context.
FIT_MARGIN_TOKENS = 8


def shorten_middle(text: str, keep: int) -> str:
    """``text`` with its middle left out so that ``keep`` of its characters remain (the first
    half and the last half of them), and a note in their place saying how many were left out.

    Args:
        text: the text.
        keep: characters of ``text`` to keep (>= 0); ``text`` is returned whole if it is no
            longer.
    """
    if keep >= len(text):
        return text
    head, tail = keep // 2, keep - keep // 2
    note = f"[... {len(text) - keep} characters of the observation left out to fit the model's context ...]"
    return f"{text[:head]}\n{note}\n{text[len(text) - tail :]}"


def fit_to_context(
    build: Callable[[str], GenerationRequest], text: str, backend: LLMBackend, too_long: Callable[[int], str]
) -> tuple[GenerationRequest, int]:
    """The request ``build(text)`` fitted to ``backend``'s context window, and how many characters
    of ``text`` it left out.

    ``build(text)`` whole if the backend cannot count tokens or the prompt leaves ``max_tokens``
    (+ :data:`FIT_MARGIN_TOKENS`) free in ``backend.context_window``; else ``build`` of the
    longest :func:`shorten_middle` of ``text`` that does (found by bisection).

    Raises:
        PromptTooLongError: the prompt does not fit even with ``text`` left out; its message is
            ``too_long(context_window)``.
    """
    request = build(text)
    n_ctx = backend.context_window
    n = None if n_ctx is None else backend.count_tokens(request)
    if n_ctx is None or n is None or n <= n_ctx - request.max_tokens - FIT_MARGIN_TOKENS:
        return request, 0

    def fits(keep: int) -> bool:
        r = build(shorten_middle(text, keep))
        return (backend.count_tokens(r) or 0) <= n_ctx - r.max_tokens - FIT_MARGIN_TOKENS

    if not fits(0):
        r = build(shorten_middle(text, 0))
        raise PromptTooLongError(
            too_long(n_ctx), prompt_tokens=backend.count_tokens(r), context_window=n_ctx, max_tokens=r.max_tokens
        )
    lo, hi = 0, len(text) - 1  # bisection: the most characters kept that fit
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if fits(mid) else (lo, mid - 1)
    return build(shorten_middle(text, lo)), len(text) - lo


def _prompt_chars(request: GenerationRequest) -> int:
    return len(request.prompt if request.prompt is not None else "".join(m.content for m in request.messages or ()))


def _fmt_number(x: float) -> str:
    return f"{x:g}"


class LLMPolicy(Policy):
    """A policy whose parameter is a natural-language instruction executed by an LLM.

    Args:
        policy: the instruction (public and editable: the optimiser rewrites it).
        backend: the LLM backend.
        prompt_format: ``"chat"`` or ``"completion"``; ``None`` uses ``backend.prompt_format``.
        max_tokens: bound on generated tokens (numbers and free text).
        temperature: sampling temperature (0 = greedy).
        seed: sampling seed.

    With ``info["legal_actions"]`` the request carries ``choices`` (the reply is exactly one
    of them); with ``info["action_range"]`` the model is asked for a number, with
    ``info["action_components"]`` for ``name=value`` pairs (:mod:`lang_pz.text.components`), and
    the text is returned for the environment's action wrapper to parse; otherwise free text (one
    line, bounded by ``max_tokens``), constrained to the env's ``info["reply_format"]`` when it
    states one (:mod:`lang_pz.text.replies`: the request's ``grammar`` and ``pattern``, and enough
    ``max_tokens`` for its longest reply).
    """

    def __init__(
        self,
        policy: str,
        backend: LLMBackend,
        *,
        prompt_format: PromptFormat | None = None,
        max_tokens: int = 16,
        temperature: float = 0.0,
        seed: int = 0,
    ) -> None:
        if not isinstance(policy, str) or not policy.strip():
            raise ValueError(f"policy must be a non-empty str (the instruction), got {policy!r}")
        if not isinstance(backend, LLMBackend):
            raise TypeError(
                f"backend must be an LLMBackend, got {backend!r}; build one with "
                "lang_pz.backends.make_backend('embedded') or LlamaCppBackend()"
            )
        if prompt_format not in (None, "chat", "completion"):
            raise ValueError(f"prompt_format must be 'chat', 'completion' or None, got {prompt_format!r}")
        if max_tokens <= 0:
            raise ValueError(f"max_tokens must be > 0, got {max_tokens}")
        self.policy = policy
        self.backend = backend
        self._prompt_format = prompt_format
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.seed = seed

    @property
    def prompt_format(self) -> PromptFormat:
        """The prompt form in use (the override, else the backend's)."""
        return self._prompt_format or self.backend.prompt_format

    def __repr__(self) -> str:
        return (
            f"LLMPolicy(policy={self.policy!r}, backend={type(self.backend).__name__}, prompt_format={self.prompt_format!r})"
        )

    # -- prompt building -------------------------------------------------------------------

    def build_request(
        self, observation: Mapping[str, Any] | str, info: Mapping[str, Any] | None = None
    ) -> GenerationRequest:
        """The request for this observation, whole (:meth:`fit_request` fits it to the context)."""
        return self._request(observation_text(observation).strip(), info)

    def fit_request(
        self, observation: Mapping[str, Any] | str, info: Mapping[str, Any] | None = None
    ) -> tuple[GenerationRequest, int]:
        """The request :meth:`decide` sends first, and how many observation characters it left out.

        The whole observation if the backend cannot count tokens or the prompt leaves
        ``max_tokens`` (+ :data:`FIT_MARGIN_TOKENS`) free in ``backend.context_window``; else
        the longest :func:`shorten_middle` of it that does (found by bisection).

        Raises:
            PromptTooLongError: the prompt does not fit even with the observation left out.
        """

        def build(text: str) -> GenerationRequest:
            return self._request(text, info)

        def too_long(n_ctx: int) -> str:
            return (
                f"LLMPolicy: the prompt does not fit the model's context window ({n_ctx} tokens) with "
                f"max_tokens={build('').max_tokens} even with the whole observation left out; the policy text "
                f"({len(self.policy)} characters) is too long: shorten it or use a larger context"
            )

        return fit_to_context(build, observation_text(observation).strip(), self.backend, too_long)

    def _request(self, text: str, info: Mapping[str, Any] | None) -> GenerationRequest:
        acts = legal_actions(info)
        rng = action_range(info) if acts is None else None
        if acts is not None:
            kind, examples, ask = "choice", _choice_examples(tuple(acts)), f"one of: {', '.join(acts)}"
            text = _ensure_action_line(text, f"Actions: {', '.join(acts)}")
        elif rng is not None:
            lo, hi = _fmt_number(rng[0]), _fmt_number(rng[1])
            kind, examples, ask = "number", NUMBER_EXAMPLES, f"a number from {lo} to {hi}"
            text = _ensure_action_line(text, f"Actions: a number from {lo} to {hi}")
        elif (components := action_components(info)) is not None:
            names = ", ".join(n for n, _, _ in components)
            kind, examples, ask = "text", COMPONENT_EXAMPLES, f"name=value for each of {names}"
        else:
            kind, examples, ask = "text", TEXT_EXAMPLES, "a short action"
        reply = ReplyFormat.from_info(info) if kind == "text" else None
        if reply is not None:
            ask = f"a reply of the form {reply.example}"
        common: dict[str, Any] = {
            "temperature": self.temperature,
            "seed": self.request_seed(),
        }
        common["role"] = "actor"
        if kind == "choice":
            assert acts is not None  # kind is "choice" exactly when the env listed legal actions
            common["choices"] = acts
            # a choice never needs more tokens than characters: never cut one short
            common["max_tokens"] = max(self.max_tokens, max(len(a) for a in acts) + 2)
        else:
            common["max_tokens"] = self.max_tokens
            common["stop"] = ('"', "\n")
        if reply is not None:  # the env's reply format: decoded under it where the backend can
            # the completion prompt's reply ends at a closing quote (a stop sequence): allowed after a reply
            common["grammar"] = reply.closed_by('"') if self.prompt_format == "completion" else reply.gbnf
            common["pattern"] = reply.regex
            common["max_tokens"] = max(self.max_tokens, reply.max_chars + 2)  # never cut a reply short
        if self.prompt_format == "chat":
            system = (
                f"You control one agent. Your policy: {self.policy}\nFollow your policy. Reply with {ask} and nothing else."
            )
            return GenerationRequest(messages=(Message("system", system), Message("user", text)), **common)
        prompt = _worked_prompt(examples)
        prompt += completion_block(" ".join(self.policy.split()), text)  # one line per block
        return GenerationRequest(prompt=prompt, **common)

    # -- acting ----------------------------------------------------------------------------

    def reset(self, seed: int | None = None) -> None:
        """Start an episode: with ``temperature > 0`` its samples are seeded from ``seed`` (the
        episode's, :func:`~lang_pz.policies.base.agent_seed`) and the decision's number, so the
        same episode seed replays the same episode and another seed samples anew; greedy
        decoding ignores it."""
        self._episode_seed, self._decisions = seed, 0

    def request_seed(self) -> int:
        """The sampling seed of the next request: the constructor's ``seed`` when greedy (or
        before any :meth:`reset`), else one derived from it, the episode seed and the decision."""
        episode = getattr(self, "_episode_seed", None)
        if self.temperature == 0 or episode is None:
            return self.seed
        return int(np.random.SeedSequence([self.seed, episode, self._decisions]).generate_state(1)[0])

    def fast_forward(self, steps: Sequence[AgentStep]) -> bool:
        """``True``: a decision is a function of its request (the text, the observation, the
        offered actions, the request's seed) and of nothing kept from earlier decisions but their
        count, which seeds a sampled request (:meth:`request_seed`): the count moves on by the
        skipped decisions, so the next one is sampled with the seed it has in the whole episode."""
        self._decisions = getattr(self, "_decisions", 0) + len(steps)
        return True

    def decide(self, observation: Mapping[str, Any] | str, info: Mapping[str, Any] | None = None) -> Decision:
        """Ask the backend for one action (the prompt fitted to the context: module docstring).

        Raises:
            PromptTooLongError: the prompt cannot be fitted to the model's context window.
            BackendError: the backend failed, or a ``choices`` request came back with text
                outside the choices.
        """
        t0 = time.perf_counter()
        text = observation_text(observation).strip()
        req, left_out = self.fit_request(text, info)
        for attempt in range(4):
            try:
                gen = self.backend.generate(req)
                break
            except PromptTooLongError as exc:  # only the server could count: shorten from its figures
                n, n_ctx, keep = exc.prompt_tokens, exc.context_window, len(text) - left_out
                if attempt == 3 or not n or n_ctx is None or keep <= 0:
                    raise
                excess = n - (n_ctx - req.max_tokens - FIT_MARGIN_TOKENS)
                drop = math.ceil(max(excess, 1) * _prompt_chars(req) / n * 1.2) + 16  # 20 % to spare
                keep = max(0, keep - drop)
                req, left_out = self._request(shorten_middle(text, keep), info), len(text) - keep
        latency = gen.latency_s if gen.latency_s else time.perf_counter() - t0
        self._decisions = getattr(self, "_decisions", 0) + 1
        action = gen.text.strip()
        if req.choices is not None and action not in req.choices:
            raise BackendError(
                f"{type(self.backend).__name__} answered {gen.text!r} to a choices request; "
                f"expected one of {list(req.choices)}"
            )
        return Decision(
            action=action,
            raw_output=gen.text,
            prompt_tokens=gen.prompt_tokens,
            completion_tokens=gen.completion_tokens,
            latency_s=latency,
            meta={"observation_chars_left_out": left_out} if left_out else {},
        )


# A policy builds the same worked examples for every request of an episode (and a re-run's
# replayed agents rebuild every recorded request to key it, :mod:`lang_pz.policies.replay`):
# both are pure functions of immutable arguments, made once per action set.
@functools.lru_cache(maxsize=256)
def _choice_examples(actions: tuple[str, ...]) -> tuple[tuple[str, str, str], ...]:
    return choice_examples(actions)


@functools.lru_cache(maxsize=256)
def _worked_prompt(examples: tuple[tuple[str, str, str], ...]) -> str:
    """The completion prompt's worked-example blocks."""
    return "".join(completion_block(p, o, a) for p, o, a in examples)


def _ensure_action_line(text: str, line: str) -> str:
    """Append ``line`` unless the observation already ends with an ``Actions:`` line."""
    last = text.rsplit("\n", 1)[-1].strip()
    if last.lower().startswith("actions:"):
        return text
    return f"{text}\n{line}"
