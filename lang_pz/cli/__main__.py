"""``python -m lang_pz.cli``: the ``lang-pz`` command."""

from lang_pz.cli import app

app()
