"""The gallery page lists every registered environment (it is written by tools/gallery.py, so an env
registered later is missing until someone runs it again: this test says so)."""

from __future__ import annotations

from pathlib import Path

import lang_pz

GALLERY = Path(__file__).resolve().parents[2] / "docs" / "gallery.md"


def test_every_registered_env_is_in_the_gallery():
    page = GALLERY.read_text(encoding="utf-8")
    missing = [env_id for env_id in lang_pz.registry if env_id not in page]
    assert not missing, f"{missing} are not in docs/gallery.md: run `python tools/gallery.py`"


def test_every_picture_the_gallery_shows_exists():
    page = GALLERY.read_text(encoding="utf-8")
    pictures = [part.split(")")[0] for part in page.split("](")[1:] if part.split(")")[0].endswith(".png")]
    assert pictures, "the gallery shows no picture"
    assert all((GALLERY.parent / p).is_file() for p in pictures), pictures
