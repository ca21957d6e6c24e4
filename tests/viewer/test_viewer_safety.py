"""``lang-pz view`` on a folder received from someone else (an attacker's pass): links already in
its ``view/`` folder are never written through, links in the run that leave it are never read
into the page, and ``--serve`` answers only with regular files inside the view folder, to
requests whose Host names this machine (DNS rebinding)."""

from __future__ import annotations

import http.client
import json
import os
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner
from viewer_runs import small_run

from lang_pz.cli import app
from lang_pz.error import RunDirError
from lang_pz.runs import RunFolder
from lang_pz.viewer import make_server, write_view

runner = CliRunner()
PRECIOUS = "the user's own file: must stay as it is\n"
SECRET = "SECRET-4f2a-not-for-the-page"


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory) -> Path:
    return small_run(tmp_path_factory.mktemp("viewer") / "run")


@pytest.fixture
def received(run_dir, tmp_path) -> Path:
    """A copy of the run, as if unpacked from someone else's archive."""
    return Path(shutil.copytree(run_dir, tmp_path / "received"))


@pytest.fixture
def outside(tmp_path) -> Path:
    """A folder of the user's, outside the run: one file they can write."""
    home = tmp_path / "home"
    home.mkdir()
    (home / ".bashrc").write_text(PRECIOUS)
    return home


def _listing(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): p.read_text() for p in sorted(folder.rglob("*")) if p.is_file()}


def _view(run: Path) -> tuple[int, str]:
    res = runner.invoke(app, ["view", str(run)])
    return res.exit_code, " ".join(res.output.split())


# -- writing the page: links already in RUN/view ------------------------------------------------


@pytest.mark.parametrize("name", ["index.html", "viewer.js", "viewer.css"])
def test_a_link_in_the_view_folder_is_replaced_not_written_through(received, outside, name):
    view = received / "view"
    (view / "data").mkdir(parents=True)
    (view / "data" / "view.js").write_text("LPZ.view({});\n")  # looks like an earlier view
    (view / name).symlink_to(outside / ".bashrc")
    code, out = _view(received)
    assert code == 0, out
    assert (outside / ".bashrc").read_text() == PRECIOUS
    assert not (view / name).is_symlink() and (view / name).is_file()


def test_a_data_folder_that_is_a_link_is_replaced_not_written_into(received, outside):
    (outside / "view.js").write_text(PRECIOUS)  # makes RUN/view look like an earlier view
    view = received / "view"
    view.mkdir()
    (view / "data").symlink_to(outside, target_is_directory=True)
    before = _listing(outside)
    code, out = _view(received)
    assert code == 0, out
    assert _listing(outside) == before
    assert not (view / "data").is_symlink() and (view / "data" / "view.js").is_file()


def test_a_view_folder_that_is_a_link_is_refused(received, outside):
    (outside / "data").mkdir()
    (outside / "data" / "view.js").write_text(PRECIOUS)
    (received / "view").symlink_to(outside, target_is_directory=True)
    before = _listing(outside)
    code, out = _view(received)
    assert code == 2 and "is a symbolic link" in out and "Traceback" not in out, out
    assert _listing(outside) == before
    with pytest.raises(RunDirError, match="symbolic link"):
        write_view(received, received / "view")


# -- reading the run: links that leave it -------------------------------------------------------


def test_a_run_file_linked_outside_the_run_is_refused_not_copied_into_the_page(received, tmp_path):
    secret = tmp_path / "shadow"
    record = {"episode": 0, "mode": "central_credit", "credits": {"piston_0": {"credit": 1.0, "explanation": SECRET}}}
    secret.write_text(json.dumps(record) + "\n")
    credits = RunFolder(received).iteration(0).log("credits")
    credits.unlink()
    credits.symlink_to(secret)
    code, out = _view(received)
    assert code == 2 and "credits.jsonl" in out and "outside" in out and "Traceback" not in out, out
    pages = received / "view"
    assert not pages.exists() or all(SECRET not in text for text in _listing(pages).values())


def test_a_run_folder_linked_outside_the_run_is_refused(received, tmp_path):
    it = RunFolder(received).iteration(1).root
    elsewhere = Path(shutil.move(str(it), str(tmp_path / "elsewhere")))
    it.symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(RunDirError, match="outside"):
        write_view(received)


def test_a_link_that_stays_inside_the_run_is_read(received):
    metrics = RunFolder(received).metrics
    shutil.move(str(metrics), str(received / "metrics-copy.jsonl"))
    metrics.symlink_to("metrics-copy.jsonl")
    assert write_view(received).is_file()


def test_a_fifo_in_the_folder_is_refused_without_waiting_on_it(tmp_path):
    bench = tmp_path / "bench"
    bench.mkdir()
    row = {"env": "e", "team": "t", "seed": 0, "objective": "team_return", "value": 1.0}
    (bench / "episodes.jsonl").write_text(json.dumps(row) + "\n")
    os.mkfifo(bench / "summary.json")
    errors: list[BaseException] = []

    def view() -> None:
        try:
            write_view(bench)
        except BaseException as exc:
            errors.append(exc)

    thread = threading.Thread(target=view, daemon=True)
    thread.start()
    thread.join(20)
    if thread.is_alive():  # blocked opening the FIFO: release it before failing
        os.close(os.open(bench / "summary.json", os.O_WRONLY | os.O_NONBLOCK))
    assert not thread.is_alive(), "lang-pz view waited on a FIFO in the folder"
    assert len(errors) == 1 and isinstance(errors[0], RunDirError) and "summary.json" in str(errors[0])


# -- serving the page ---------------------------------------------------------------------------


@pytest.fixture
def served(run_dir, tmp_path, outside) -> Iterator[tuple[Path, int]]:
    """The page of the run on a free port, with links to the user's files planted in it."""
    (outside / "secret.txt").write_text(SECRET)
    page = write_view(run_dir, tmp_path / "page").parent
    (page / "secret.txt").symlink_to(outside / "secret.txt")
    (page / "data" / "home").symlink_to(outside, target_is_directory=True)
    os.mkfifo(page / "data" / "pipe.js")
    server = make_server(page, port=0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield page, server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


def _get(port: int, path: str, host: str | None = None) -> tuple[int, bytes]:
    """A GET of ``path`` sent as is (no client-side normalisation), with ``host`` as its Host."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.putrequest("GET", path, skip_host=True, skip_accept_encoding=True)
        conn.putheader("Host", host if host is not None else f"127.0.0.1:{port}")
        conn.endheaders()
        r = conn.getresponse()
        return r.status, r.read()
    finally:
        conn.close()


def test_the_page_and_its_data_are_served(served):
    page, port = served
    for path in ("/", "/index.html", "/viewer.js", "/data/view.js"):
        status, body = _get(port, path)
        assert status == 200 and body == (page / (path.strip("/") or "index.html")).read_bytes(), path
    assert _get(port, "/data/view.js?v=1", host=f"localhost:{port}")[0] == 200


@pytest.mark.parametrize(
    "path",
    [
        "/secret.txt",  # a link in the view folder to a file outside it
        "/data/home/secret.txt",  # through a linked folder
        "/data/home/.bashrc",
        "/../home/secret.txt",  # traversal, raw and encoded
        "/%2e%2e/home/secret.txt",
        "/data/..%2f..%2fhome/secret.txt",
        "/data/%2e%2e/%2e%2e/home/secret.txt",
        "/data/",  # a folder: no listing
        "/data",
        "/data/episodes/",
        "/data/pipe.js",  # not a regular file (opening it would wait for a writer)
    ],
)
def test_links_traversal_folders_and_special_files_are_not_served(served, path):
    status, body = _get(served[1], path)
    assert status == 404, (path, status, body[:200])
    assert SECRET.encode() not in body and PRECIOUS.encode() not in body and b"episodes" not in body


@pytest.mark.parametrize("host", ["evil.example", "evil.example:{port}", "localhost.evil.example:{port}", ""])
def test_a_request_for_another_host_is_refused(served, host):
    status, body = _get(served[1], "/data/view.js", host=host.format(port=served[1]))
    assert status in (400, 421) and b"LPZ.view" not in body


@pytest.mark.parametrize("host", ["localhost:{port}", "127.0.0.1:{port}", "LOCALHOST", "localhost:9999", "[::1]:{port}"])
def test_this_machine_by_name_or_address_is_served_on_any_port(served, host):
    # any port: an SSH tunnel (ssh -L 9999:localhost:PORT) makes the browser send its own local port
    assert _get(served[1], "/index.html", host=host.format(port=served[1]))[0] == 200


def test_serve_says_what_it_binds_and_serves(run_dir, tmp_path, monkeypatch):
    from http.server import ThreadingHTTPServer

    def stop(self, *a, **kw):
        raise KeyboardInterrupt

    monkeypatch.setattr(ThreadingHTTPServer, "serve_forever", stop)
    res = runner.invoke(app, ["view", str(run_dir), "--out", str(tmp_path / "page"), "--serve", "--port", "0"])
    out = " ".join(res.output.split())
    assert res.exit_code == 0, out
    assert "on 127.0.0.1:" in out and "only this machine can connect" in out and "regular files" in out
    assert "open http://127.0.0.1:" in out and "ssh -N -L" in out
