"""``lang-pz view``: a run, bench or eval-critic folder as a web page that works offline."""

from __future__ import annotations

import ipaddress
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
    serve: Annotated[
        bool,
        typer.Option(help="also serve the page on 127.0.0.1 (this machine only) until Ctrl-C: its regular files only"),
    ] = False,
    port: Annotated[int, typer.Option(min=0, max=65535, help="--serve: the port (0: a free one)")] = 8000,
) -> None:
    """Write FOLDER's page (index.html, its script, style and data files; no network needed): the
    learning curve, LLM usage per role, each agent's policy per iteration with diffs and credit,
    each episode as a step x agent grid with observations, replies and counterfactual re-runs.

    Safe on a folder from someone else: a link in it that leads out of it, or a named pipe, is
    refused before anything is read; no page file is written through a link (FOLDER/view itself
    being a link is refused); --serve answers only with the view folder's regular files, to requests
    for localhost or an IP address (docs/viewer.md)."""
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
    who = "only this machine can connect" if ipaddress.ip_address(str(host)).is_loopback else "other machines can connect"
    typer.echo(
        f"serving {index.parent} on {host!s}:{bound} ({who}; only the folder's regular files, to a Host of "
        f"localhost or an IP address)\nopen http://{host!s}:{bound}/ (from another machine: "
        f"ssh -N -L {bound}:{host!s}:{bound} THIS_MACHINE, then the same address); Ctrl-C stops"
    )
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
