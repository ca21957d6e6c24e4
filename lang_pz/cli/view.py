"""``lang-pz view``: a run, bench or eval-critic folder as a web page that works offline."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from lang_pz.cli.common import app, fail


@app.command()
def view(
    folder: Annotated[
        Path,
        typer.Argument(
            help="a folder `lang-pz train`, `bench` or `eval-critic` wrote (a run still going shows what is written)"
        ),
    ],
    out: Annotated[Path | None, typer.Option(help="folder for the page \\[default: FOLDER/view]")] = None,
    serve: Annotated[bool, typer.Option(help="also serve the page on localhost until Ctrl-C")] = False,
    port: Annotated[int, typer.Option(min=0, max=65535, help="--serve: the port (0: a free one)")] = 8000,
) -> None:
    """Write FOLDER's page (index.html, its script, style and data files; no network needed): the
    learning curve, LLM usage per role, each agent's policy per iteration with diffs and credit,
    each episode as a step x agent grid with observations, replies and counterfactual re-runs."""
    from lang_pz.error import LangPZError
    from lang_pz.viewer import make_server, write_view

    try:
        index = write_view(folder, out)
    except (LangPZError, OSError) as exc:
        fail(exc)
        return
    typer.echo(f"view: {index} (open it in a browser)")
    if not serve:
        return
    try:
        server = make_server(index.parent, port=port)
    except OSError as exc:
        fail(OSError(f"--port {port}: {exc}; choose another port or --port 0 for a free one"))
        return
    host, bound = server.server_address[:2]
    typer.echo(f"serving {index.parent} at http://{host!s}:{bound}/ (Ctrl-C stops)")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
