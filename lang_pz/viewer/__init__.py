"""See what happened: a run, bench or eval-critic folder as an offline web page (``lang-pz view``).

:func:`write_view` writes the page as static files (:mod:`lang_pz.viewer.page`); the data comes from
:mod:`lang_pz.viewer.run` (training runs, MASkills included) and :mod:`lang_pz.viewer.bench` (bench
and eval-critic folders); :func:`make_server` serves it on localhost. A folder from someone else
cannot make it read or write a file of yours, nor serve one (:mod:`lang_pz.viewer.safety`,
:mod:`lang_pz.viewer.serve`, docs/viewer.md).
"""

from lang_pz.viewer.page import write_view
from lang_pz.viewer.serve import make_server
from lang_pz.viewer.source import kind_of

__all__ = ["kind_of", "make_server", "write_view"]
