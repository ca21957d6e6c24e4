"""What ``lang-pz play`` and ``lang-pz bench`` say, and exit with, when episodes failed.

An episode *failed* when the LLM failed it for good, after its retries
(:data:`lang_pz.error.EPISODE_ERRORS`: a :class:`~lang_pz.error.BackendError` such as an
endpoint that went down after the start-up check, a prompt that cannot fit the model's context
or replies that could not be used; a :class:`~lang_pz.error.SchemaValidationError`). A failed
episode is not scored and the command goes on. Any other error stops the command: one the
command raises on purpose (an env or a policy refusing its configuration, which would fail
every episode alike) with exit code 2, a bug with its traceback.

Exit codes of both commands:

- 0: every episode was played and scored;
- 1 (:data:`EPISODES_FAILED`): the command ran to its end but episodes failed; the last line
  (stderr) says how many of how many and the first error, whose message names the fix where
  lang_pz knows it (e.g. "check that the server is running at base_url");
- 2: refused before any episode (a bad option, an unreachable endpoint at the start-up check);
- 130: interrupted (Ctrl-C).
"""

from __future__ import annotations

import typer

from lang_pz.error import EPISODE_ERRORS, error_text

__all__ = ["EPISODES_FAILED", "EPISODE_ERRORS", "error_text", "exit_failed", "failed_line"]

#: The exit code of a command whose episodes (some or all) failed.
EPISODES_FAILED = 1


def failed_line(failed: int, total: int, where: str, first_error: str, retry: str = "") -> str:
    """The last line of a command whose episodes failed: how many of how many (and the share),
    where the first failure was and its error, and ``retry`` (how to redo them) if given."""
    share = f" ({100 * failed / total:.3g} %)" if total else ""
    tail = f"; {retry}" if retry else ""
    return f"{failed} of {total} episode(s){share} failed and were not scored; first failure, {where}: {first_error}{tail}"


def exit_failed(line: str) -> None:
    """Print ``error: LINE`` (red, stderr) and exit with :data:`EPISODES_FAILED`."""
    typer.secho(f"error: {line}", fg=typer.colors.RED, err=True)
    raise typer.Exit(code=EPISODES_FAILED)
