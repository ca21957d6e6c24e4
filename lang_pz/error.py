"""Every error lang_pz raises on purpose.

One module, one base class (:class:`LangPZError`), modelled on ``gymnasium.error``: each
message names the offending value and says how to fix it.
"""

from __future__ import annotations

from typing import Any


class LangPZError(Exception):
    """Base class of every error lang_pz raises on purpose."""


class UnknownEnvironmentError(LangPZError, KeyError):
    """``lang_pz.make`` was given an id that is not registered."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class InvalidKwargError(LangPZError, TypeError):
    """An environment constructor was given a keyword argument it does not accept, or a bad value."""


class DependencyNotInstalled(LangPZError, ImportError):
    """An optional dependency is missing; the message names the extra to install."""


class ActionParseError(LangPZError, ValueError):
    """Text could not be parsed into an action of the environment's action space.

    Attributes:
        text: the raw text that failed to parse (may be any string).
        reason: a short, human-readable reason.
    """

    def __init__(self, text: Any, reason: str) -> None:
        self.text = text
        self.reason = reason
        shown = repr(text) if len(repr(text)) <= 200 else repr(text)[:197] + "..."
        super().__init__(f"could not parse action from {shown}: {reason}")


class BackendError(LangPZError, RuntimeError):
    """An LLM backend failed (unreachable endpoint, bad reply, exhausted retries)."""


class BackendUnavailableError(BackendError, ConnectionError):
    """The LLM endpoint could not be reached after the configured retries."""


class InvalidReplyError(BackendError):
    """The LLM endpoint answered, but no reply could be used after the configured attempts: a
    body that is not JSON, no ``choices`` in it, or a reply outside the request's choices."""


class PromptTooLongError(BackendError):
    """A prompt does not fit the model's context window (it is never sent cut silently).

    Attributes:
        prompt_tokens: tokens in the prompt, when known.
        context_window: the model's context window in tokens, when known.
        max_tokens: tokens the request reserved for the reply.
    """

    def __init__(
        self,
        message: str,
        *,
        prompt_tokens: int | None = None,
        context_window: int | None = None,
        max_tokens: int | None = None,
    ) -> None:
        super().__init__(message)
        self.prompt_tokens = prompt_tokens
        self.context_window = context_window
        self.max_tokens = max_tokens


class SchemaValidationError(LangPZError, ValueError):
    """An LLM reply did not validate against the schema it was asked for, after all retries.

    Attributes:
        raw: the last raw reply text.
        errors: the validation error messages of each attempt, oldest first.
    """

    def __init__(self, what: str, raw: str, errors: list[str]) -> None:
        self.raw = raw
        self.errors = errors
        super().__init__(
            f"{what}: reply did not validate after {len(errors)} attempt(s); "
            f"last error: {errors[-1] if errors else '?'}; last reply: {raw[:300]!r}"
        )


class RunDirError(LangPZError, FileExistsError):
    """A run folder cannot be used (e.g. it already holds another run)."""


class SkillFormatError(LangPZError, ValueError):
    """A skill folder or ``SKILL.md`` breaks the Agent Skills format (or lang_pz's limits).

    Attributes:
        path: the offending file or folder (``"<text>"`` when parsed from a string).
        field: the offending front matter field (e.g. ``"name"``), or ``None`` for the file as a whole.
    """

    def __init__(self, path: Any, field: str | None, problem: str) -> None:
        self.path = str(path)
        self.field = field
        where = f"{self.path}: field '{field}'" if field else self.path
        super().__init__(f"{where}: {problem}")


class SkillLibraryError(LangPZError, ValueError):
    """A skill library operation cannot be done: a stale or conflicting edit, a broken limit,
    a rollback of an edit that is not the library's latest, or an unreadable library folder."""


class StageError(LangPZError, RuntimeError):
    """A stage of a training iteration failed (a critic report, an optimiser step, a skill edit
    the writer could not write, a validation or rollout that raised), so the iteration was left
    unfinished: nothing of it is marked done, and ``lang-pz train --resume RUN_DIR`` redoes it,
    that stage included (``on_stage_failure: continue`` goes on without the failed calls instead).

    Attributes:
        stage: the stage, e.g. ``critic``, ``optimiser``, ``skill writer``, ``validation``.
        iteration: the iteration it stopped in.
        run_dir: the run folder to resume.
        cause: what failed, in words.
    """

    def __init__(self, stage: str, iteration: int, run_dir: str, cause: str) -> None:
        self.stage, self.iteration, self.run_dir, self.cause = stage, iteration, run_dir, cause
        end = "" if cause.rstrip().endswith((".", "!", "?")) else "."  # a cause that ends a sentence itself
        super().__init__(
            f"iteration {iteration} stopped in its {stage} stage: {cause.rstrip()}{end} Nothing of iteration {iteration} is "
            f"marked done; `lang-pz train --resume {run_dir}` redoes it from the start (its finished training "
            f"episodes are kept), {stage} stage included; or set on_stage_failure: continue to go on without "
            "the failed calls"
        )


#: What a failed *episode* raises (``lang-pz play``, ``lang-pz bench``): the LLM failed it, for
#: good after its retries: an endpoint that went down, a prompt that cannot fit the model's
#: context, replies that never validated. The episode is not scored and the command goes on.
#: Any other error is the command's (an env or policy refusing its configuration fails every
#: episode alike): it stops the command.
EPISODE_ERRORS: tuple[type[Exception], ...] = (BackendError, SchemaValidationError)


def error_text(exc: BaseException) -> str:
    """``Type: message`` of ``exc`` on one line (a multi-line message joined with `` / ``), as
    failed episodes are recorded and reported."""
    text = " / ".join(line.strip() for line in str(exc).splitlines() if line.strip())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
