"""See what happened: a run, bench or eval-critic folder as an offline web page (``lang-pz view``).

:func:`write_view` writes the page as static files (:mod:`lang_pz.viewer.page`); the data comes from
:mod:`lang_pz.viewer.run` (training runs, MASkills included) and :mod:`lang_pz.viewer.bench` (bench
and eval-critic folders); :func:`make_server` serves it on localhost. A folder from someone else
cannot make it read or write a file of yours, nor serve one (:mod:`lang_pz.viewer.safety`,
:mod:`lang_pz.viewer.serve`, docs/viewer.md).
"""

from typing import TYPE_CHECKING

from lang_pz._moved import moved_getattr
from lang_pz.viewer.page import write_view
from lang_pz.viewer.serve import make_server

__all__ = ["make_server", "write_view"]


#: Names this package no longer exports -> where to import them from (a DeprecationWarning
#: until the next release: :mod:`lang_pz._moved`).
_MOVED = {"kind_of": "lang_pz.viewer.source.kind_of"}
if not TYPE_CHECKING:
    __getattr__ = moved_getattr(__name__, _MOVED)
