"""Compliance tests for language environments, shipped so users can check their own.

Like ``pettingzoo.test``: call :func:`language_api_test` with a registered id or a
constructor::

    from lang_pz.test import language_api_test
    language_api_test("classic/tictactoe-v0")
    language_api_test(lambda: LanguageAECWrapper(my_aec_env(), MyAdapter()))
"""

from lang_pz.test.checks import (
    GARBAGE,
    check_actions_expressible,
    check_decoded,
    check_legal_actions,
    check_not_summary,
    check_observation,
)
from lang_pz.test.language_test import language_api_test

__all__ = [
    "GARBAGE",
    "check_actions_expressible",
    "check_decoded",
    "check_legal_actions",
    "check_not_summary",
    "check_observation",
    "language_api_test",
]
