"""How ``lang-pz view`` touches a folder that may come from someone else.

A run folder can be shared (an archive, a copy from a cluster), and whoever made it chose what is
in it, symbolic links and named pipes included. The viewer keeps three promises:

- **Reading** (:func:`check_source`): before any file is read, every entry of the folder must be
  a regular file or a folder once links are followed, and every link must lead to a place inside
  the folder. Otherwise nothing is read and :class:`~lang_pz.error.RunDirError` names the entries:
  a link such as ``iterations/0/credits.jsonl -> /etc/shadow`` is never copied into the page, and
  a named pipe never makes the command wait.
- **Writing** (:class:`ViewFolder`): the output folder itself must not be a link (refused: it may
  be the user's own, and what it points to is not the viewer's to replace). Inside it, every file
  is written to a new temporary file (``O_CREAT | O_EXCL | O_NOFOLLOW``) that then replaces the
  name, and ``data/`` is removed and made anew; both go through the folder's open descriptor, so a
  link already at a name is replaced as a link (its target is never written) and a swapped folder
  is never followed.
- **Serving**: :mod:`lang_pz.viewer.serve`.

POSIX only (``O_NOFOLLOW`` and ``dir_fd``), like the rest of lang_pz's file handling.
"""

from __future__ import annotations

import os
import secrets
import shutil
import stat
import sys
from pathlib import Path

from lang_pz.error import RunDirError

_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
_SHOWN = 5  # offending entries named in a message


def _problem(root: Path, path: str) -> str | None:
    """Why the entry at ``path`` (inside ``root``, a resolved folder) may not be read, or ``None``
    (also when it is gone: a run still going replaces its files)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    if stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode):
        return None
    if not stat.S_ISLNK(st.st_mode):
        return "is not a regular file or folder (a named pipe, socket or device)"
    target = Path(os.path.realpath(path))
    if not target.is_relative_to(root):
        return f"is a symbolic link to {target}, outside the folder"
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        return f"is a symbolic link that leads nowhere ({exc.strerror})"
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        return f"is a symbolic link to {target}, which is not a regular file or folder"
    return None


def check_source(folder: str | Path, skip: str | Path | None = None) -> None:
    """Refuse a folder to view whose entries could make the viewer read what is not in it.

    Every entry (walked without following links) must be a regular file, a folder, or a link to a
    regular file or folder inside ``folder``; ``skip`` (the page's own output folder, rewritten
    by :class:`ViewFolder`) is not walked. A missing ``folder`` passes (its reader says so).

    Raises:
        lang_pz.error.RunDirError: names up to five offending entries and how to fix them.
    """
    root = Path(os.path.realpath(folder))
    if not root.is_dir():
        return
    skipped = os.path.join(os.path.realpath(Path(skip).parent), Path(skip).name) if skip is not None else None
    bad: list[str] = []
    for parent, dirs, files in os.walk(root):  # links to folders are listed in dirs, never entered
        dirs[:] = [d for d in dirs if os.path.join(parent, d) != skipped]
        for name in dirs + files:
            path = os.path.join(parent, name)
            problem = _problem(root, path)
            if problem is not None:
                bad.append(f"{os.path.relpath(path, root)} {problem}")
    if bad:
        more = f"; and {len(bad) - _SHOWN} more" if len(bad) > _SHOWN else ""
        raise RunDirError(
            f"{folder}: {'; '.join(bad[:_SHOWN])}{more}. lang-pz view reads only regular files inside the folder "
            "(a folder from someone else could point it at your files); remove these entries, or if you trust "
            "the folder, view a copy with the links' files copied in (cp -rL FOLDER COPY)"
        )


def check_out(dest: Path) -> None:
    """Refuse an output folder the page may not be written to, before anything is read or written.

    ``dest`` may be missing, an empty folder, or an earlier view's (it has ``data/view.js``); never a
    link (:class:`ViewFolder` would refuse it too).

    Raises:
        lang_pz.error.RunDirError: ``dest`` is a link, a file, or a folder holding other files.
    """
    try:
        st = os.lstat(dest)
    except FileNotFoundError:
        return
    if stat.S_ISLNK(st.st_mode):
        raise _link_refused(dest)
    if not stat.S_ISDIR(st.st_mode):
        raise RunDirError(f"--out {dest} is a file; give a folder for the page (index.html and its data)")
    earlier = (dest / "data" / "view.js").is_file()  # a look only: links in it are replaced, not written through
    if not earlier and any(os.scandir(dest)):
        raise RunDirError(
            f"--out {dest} holds other files (its data/ would be replaced); give a new or empty "
            "folder, or the folder of an earlier view"
        )


def _link_refused(dest: Path) -> RunDirError:
    return RunDirError(
        f"--out {dest} is a symbolic link (to {os.path.realpath(dest)}); the page is never written through a "
        "link (a shared run folder could point it at your files): remove the link, or give --out a real folder"
    )


class ViewFolder:
    """The output folder of a page, written without following links (see the module docstring).

    Use as a context manager (``with ViewFolder(dest) as out: out.write("index.html", text)``);
    :meth:`fresh` gives a sub-folder made anew, itself a :class:`ViewFolder` to close.

    Raises:
        lang_pz.error.RunDirError: ``path`` is a link or not a folder.
        OSError: the folder cannot be made or opened.
    """

    def __init__(self, path: str | Path, *, _fd: int | None = None) -> None:
        self.path = Path(path)
        if _fd is not None:
            self.fd = _fd
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.mkdir(self.path)
        except FileExistsError:
            pass
        try:
            self.fd = os.open(self.path, _DIR)
        except OSError as exc:
            if os.path.islink(self.path):
                raise _link_refused(self.path) from exc
            raise RunDirError(f"--out {self.path} is not a folder the page can be written to ({exc.strerror})") from exc

    def __enter__(self) -> ViewFolder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the folder's descriptor (the files written stay)."""
        os.close(self.fd)

    @staticmethod
    def _name(name: str) -> str:
        if not name or name.startswith(".") or "/" in name or "\0" in name:
            raise ValueError(f"{name!r} is not a file name the viewer writes (no '/', no leading '.')")
        return name

    def write(self, name: str, text: str) -> None:
        """Write ``text`` (UTF-8) as the file ``name`` of this folder, replacing what is there
        (a link is replaced, its target untouched); a reader sees the old file or the new one.

        Raises:
            OSError: the file cannot be written (e.g. ``name`` is a folder).
        """
        self._name(name)
        tmp = f".{name}.{secrets.token_hex(6)}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o666, dir_fd=self.fd)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(text.encode("utf-8"))
            os.replace(tmp, name, src_dir_fd=self.fd, dst_dir_fd=self.fd)
        except BaseException:
            try:
                os.unlink(tmp, dir_fd=self.fd)
            except OSError:
                pass
            raise

    def fresh(self, name: str) -> ViewFolder:
        """The sub-folder ``name`` made anew: whatever was there (a folder and its files, a file,
        a link) is removed first, never followed.

        Raises:
            OSError: it cannot be removed or made.
        """
        self._name(name)
        try:
            st = os.stat(name, dir_fd=self.fd, follow_symlinks=False)
        except FileNotFoundError:
            pass
        else:
            if not stat.S_ISDIR(st.st_mode):
                os.unlink(name, dir_fd=self.fd)
            elif sys.version_info >= (3, 11):
                shutil.rmtree(name, dir_fd=self.fd)
            else:  # pragma: no cover - Python 3.10: by path (rmtree refuses a link and does not follow those inside)
                shutil.rmtree(self.path / name)
        os.mkdir(name, dir_fd=self.fd)
        return ViewFolder(self.path / name, _fd=os.open(name, _DIR, dir_fd=self.fd))
