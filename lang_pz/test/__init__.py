"""Tools for testing: compliance tests for language environments and stand-ins for an LLM.

Shipped so users can check their own envs and clients, and kept out of the core packages:

- :func:`language_api_test`: compliance of a language env (the ``check_*`` functions it runs, one
  by one: :mod:`lang_pz.test.checks`);
- :class:`ScriptedBackend`: an LLM backend that replays scripted replies (a stand-in for unit
  tests, never evidence that a policy works);
- :class:`~lang_pz.test.fake_server.FakeOpenAIServer`: a local OpenAI-compatible endpoint that
  answers validly and injects faults (timeouts, 429/5xx, resets, truncated or malformed replies),
  for testing clients of OpenAI-compatible servers.

Like ``pettingzoo.test``: call :func:`language_api_test` with a registered id or a
constructor::

    from lang_pz.test import language_api_test
    language_api_test("classic/tictactoe-v0")
    language_api_test(lambda: LanguageAECWrapper(my_aec_env(), MyAdapter()))
"""

from typing import TYPE_CHECKING

from lang_pz._moved import moved_getattr
from lang_pz.test.fake_server import FakeOpenAIServer
from lang_pz.test.language_test import language_api_test
from lang_pz.test.scripted_backend import ScriptedBackend

__all__ = ["FakeOpenAIServer", "ScriptedBackend", "language_api_test"]


#: Names this package no longer exports -> where to import them from (a DeprecationWarning
#: until the next release: :mod:`lang_pz._moved`).
_MOVED = {
    "GARBAGE": "lang_pz.test.checks.GARBAGE",
    "check_actions_expressible": "lang_pz.test.checks.check_actions_expressible",
    "check_decoded": "lang_pz.test.checks.check_decoded",
    "check_legal_actions": "lang_pz.test.checks.check_legal_actions",
    "check_not_summary": "lang_pz.test.checks.check_not_summary",
    "check_observation": "lang_pz.test.checks.check_observation",
}
if not TYPE_CHECKING:
    __getattr__ = moved_getattr(__name__, _MOVED)
