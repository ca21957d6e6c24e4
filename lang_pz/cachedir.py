"""lang_pz's cache folders: where they are, and the rule that each is private to its user.

A cache holds results a run reads back as if it had computed them (LLM replies, solved game
strategies), so whoever can write a cache folder decides those results. Every cache folder is
therefore created mode 0700 and its files 0600, and a folder another user owns, or that group
or others may write, is refused (:class:`~lang_pz.error.LangPZError`) rather than used.
(An existing folder that others may only read is made 0700.) Caches hold JSON text only:
nothing lang_pz reads from one is unpickled.

Root: ``$LANG_PZ_CACHE_DIR`` if that environment variable is set, else
``platformdirs.user_cache_dir("lang_pz")`` (``~/.cache/lang_pz`` on Linux); each cache is a
subfolder (``llm``, ``cfr``).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
from pathlib import Path

from lang_pz.error import LangPZError

CACHE_DIR_ENV = "LANG_PZ_CACHE_DIR"


def cache_root() -> Path:
    """``$LANG_PZ_CACHE_DIR`` if set, else the user cache directory of ``lang_pz``."""
    import platformdirs

    return Path(os.environ.get(CACHE_DIR_ENV) or platformdirs.user_cache_dir("lang_pz")).expanduser()


def _fix() -> str:
    return (
        f"use a folder of your own: set {CACHE_DIR_ENV} to one (now {os.environ.get(CACHE_DIR_ENV)!r}), "
        "or pass another cache folder"
    )


def private_folder(folder: str | Path, what: str) -> Path:
    """``folder``, created mode 0700 (with any missing parents) if it does not exist, after
    checking that only its user can write it; an existing one that others may read or enter
    is made 0700. One that others may write is refused rather than fixed: it may already hold
    what they wrote.

    Args:
        folder: the cache folder.
        what: what it holds, for messages (e.g. ``"LLM response cache"``).

    Raises:
        LangPZError: ``folder`` cannot be created (a file is in the way, a read-only parent),
            is owned by another user, or may be written by its group or others; the message
            names the folder and the fix (``chmod 700 <folder>``, or another folder).
    """
    folder = Path(folder).expanduser()
    try:
        if not folder.is_dir():
            for missing in reversed([folder, *folder.parents]):
                if not missing.is_dir():
                    with contextlib.suppress(FileExistsError):  # another process made it meanwhile
                        missing.mkdir(mode=0o700)
        if not folder.is_dir():
            raise NotADirectoryError(errno.ENOTDIR, "not a folder", str(folder))
        info = folder.stat()
    except OSError as exc:
        raise LangPZError(f"cannot keep the {what} in {folder} ({exc.strerror or exc}: {exc.filename}); {_fix()}") from exc
    if os.name != "posix":
        return folder
    if info.st_uid != os.geteuid():
        raise LangPZError(
            f"the {what} folder {folder} is owned by user {info.st_uid}, not by you (user {os.geteuid()}): "
            f"whoever owns it decides what a run reads back from it, so it is not used; {_fix()}"
        )
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise LangPZError(
            f"the {what} folder {folder} is writable by {'group' if info.st_mode & stat.S_IWGRP else 'others'} "
            f"(mode {stat.S_IMODE(info.st_mode):04o}): whoever can write it decides what a run reads back from "
            f"it, so it is not used; run `chmod 700 {folder}`, or {_fix()}"
        )
    if stat.S_IMODE(info.st_mode) & 0o077:
        os.chmod(folder, 0o700)
    return folder


def make_private(*files: Path) -> None:
    """Set each of ``files`` that exists and is its user's to mode 0600 (others are left alone)."""
    for path in files:
        with contextlib.suppress(OSError):  # missing, or another user's (then chmod fails)
            if path.stat().st_uid == os.geteuid() and stat.S_IMODE(path.stat().st_mode) != 0o600:
                os.chmod(path, 0o600)


def write_private_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` (mode 0600) atomically: readers never see half a file."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")  # 0600
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)  # left only when the write or the rename failed
