"""Skills as files: SKILL.md parsing and validation, library round trips, atomic writes, diff, CLI."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from lang_pz.cli import app
from lang_pz.error import SkillFormatError, SkillLibraryError
from lang_pz.skills import Skill, SkillEdit, SkillLibrary, read_library, write_library
from lang_pz.skills.diff import diff_libraries
from lang_pz.skills.files import MANIFEST, check_library, read_skill, write_skill
from lang_pz.skills.library import TEAM
from lang_pz.skills.skill import parse_skill_md, render_skill_md

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "skills"
runner = CliRunner()

GOOD = """---
name: check-units
description: Check that the answer has the unit the question asks for.
metadata:
  author: me
  version: "1.0"
---

Read the last sentence of the question.
"""


def write(path: Path, text: str) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    (path / "SKILL.md").write_text(text, encoding="utf-8")
    return path


def test_parse_good_skill_and_round_trip():
    s = parse_skill_md(GOOD, "x/SKILL.md", folder_name="check-units")
    assert s.name == "check-units" and s.metadata == {"author": "me", "version": "1.0"}
    assert s.body == "Read the last sentence of the question."
    assert parse_skill_md(render_skill_md(s)) == s


@pytest.mark.parametrize(
    "front, field, words",
    [
        ("name: Check_Units\ndescription: d", "name", "lowercase"),
        ("name: check--units\ndescription: d", "name", "single hyphens"),
        ("name: -check\ndescription: d", "name", "lowercase"),
        ("name: " + "a" * 65 + "\ndescription: d", "name", "at most 64"),
        ("description: d", "name", "missing"),
        ("name: check-units", "description", "required"),
        ("name: check-units\ndescription: '   '", "description", "empty"),
        ("name: check-units\ndescription: " + "x" * 1025, "description", "at most 1024"),
        ("name: check-units\ndescription: d\ncompatibility: " + "x" * 501, "compatibility", "at most 500"),
        ("name: check-units\ndescription: d\nmetadata:\n  version: 1.0", "metadata.version", "quote"),
        ("name: check-units\ndescription: d\nmetadata: [a, b]", "metadata", "map"),
        ("name: check-units\ndescription: d\nauthor: me", "author", "not an Agent Skills field"),
        ("name: check-units\ndescription: d\nallowed_tools: x", "allowed_tools", "allowed-tools"),
        ("name: check-units\ndescription: 5", "description", "must be a string"),
    ],
)
def test_bad_front_matter_names_file_and_field(tmp_path, front, field, words):
    folder = write(tmp_path / "check-units", f"---\n{front}\n---\nbody\n")
    with pytest.raises(SkillFormatError) as err:
        read_skill(folder)
    assert err.value.field == field
    assert err.value.path == str(folder / "SKILL.md")
    assert str(folder / "SKILL.md") in str(err.value) and f"field '{field}'" in str(err.value)
    assert words in str(err.value)


@pytest.mark.parametrize(
    "text, words",
    [
        ("no front matter\n", "must start with a line '---'"),
        ("---\nname: a\ndescription: d\n", "not closed"),
        ("---\nname: [unclosed\ndescription: d\n---\n", "not valid YAML"),
        ("---\nname: a\nname: b\ndescription: d\n---\n", "given twice"),
        ("---\n- a\n- b\n---\n", "YAML mapping"),
    ],
)
def test_bad_skill_md_file_errors(tmp_path, text, words):
    folder = write(tmp_path / "a", text)
    with pytest.raises(SkillFormatError, match=words) as err:
        read_skill(folder)
    assert err.value.field is None and str(folder / "SKILL.md") in str(err.value)


def test_name_must_equal_folder_and_file_must_exist(tmp_path):
    with pytest.raises(SkillFormatError, match="must equal the skill folder's name 'other'") as err:
        read_skill(write(tmp_path / "other", GOOD))
    assert err.value.field == "name"
    (tmp_path / "lower").mkdir()
    (tmp_path / "lower" / "skill.md").write_text(GOOD)
    with pytest.raises(SkillFormatError, match="must be named exactly SKILL.md"):
        read_skill(tmp_path / "lower")


def library_with_everything() -> SkillLibrary:
    a = Skill("show-work", "Write each step.", "Step by step.", license="MIT", resources={"references/x.md": b"ref\n"})
    b = Skill("check-units", "Check units.", "Look at units.", metadata={"k": "v"})
    c = Skill("solver", "A team skill whose name is also a scope's name.", "x")
    lib = SkillLibrary({TEAM: {a.name: a, c.name: c}, "solver": {b.name: b}})
    edit = SkillEdit("refine", "solver", (b,), (b.evolve(body="Look at the units twice."),), "clearer")
    return lib.apply(edit)


def test_library_round_trip_through_files(tmp_path):
    lib = library_with_everything()
    write_library(lib, tmp_path / "v1")
    back = read_library(tmp_path / "v1")
    assert back == lib  # skills, versions, resources and history
    assert back.get("solver", "check-units").version == 2 and back.version == 1
    assert (tmp_path / "v1" / "team" / "show-work" / "references" / "x.md").read_bytes() == b"ref\n"
    write_library(back, tmp_path / "v2")
    files = lambda d: {p.relative_to(d): p.read_bytes() for p in d.rglob("*") if p.is_file()}  # noqa: E731
    assert files(tmp_path / "v1") == files(tmp_path / "v2")
    # a rollback read back from files still restores the previous version
    assert back.rollback().get("solver", "check-units").version == 1


def test_snapshot_folder_has_the_usual_permissions(tmp_path):
    (tmp_path / "plain").mkdir()
    write_library(library_with_everything(), tmp_path / "snap")
    write_skill(Skill("x", "d", "b"), tmp_path / "x")
    mode = lambda p: p.stat().st_mode & 0o777  # noqa: E731
    assert mode(tmp_path / "snap") == mode(tmp_path / "plain") == mode(tmp_path / "x")


def test_hand_written_library_and_hand_edit_bumps_version(tmp_path):
    write(tmp_path / "lib" / "check-units", GOOD)
    write(tmp_path / "lib" / "verifier" / "recheck", GOOD.replace("check-units", "recheck"))
    (tmp_path / "lib" / "README.md").write_text("notes")
    lib = read_library(tmp_path / "lib")
    assert lib.version == 0 and sorted(lib.scopes) == [TEAM, "verifier"]
    assert all(s.version == 1 for _, s in lib)
    write_library(lib, tmp_path / "snap")
    md = tmp_path / "snap" / "verifier" / "recheck" / "SKILL.md"
    md.write_text(md.read_text().replace("Read the last", "Read the first"))
    again = read_library(tmp_path / "snap")
    assert again.get("verifier", "recheck").version == 2 and again.get(TEAM, "check-units").version == 1


def test_write_is_atomic_nothing_half_written(tmp_path):
    # the second resource cannot be written ("a" is a file), after SKILL.md and "a" were
    bad = Skill("bad", "d", "b", resources={"a": b"1", "a/b": b"2"})
    lib = SkillLibrary.of([Skill("good", "d", "b"), bad])
    with pytest.raises(OSError):
        write_library(lib, tmp_path / "snap")
    assert list(tmp_path.iterdir()) == []  # no folder, no temporary left behind
    write_library(SkillLibrary.of([Skill("good", "d", "b")]), tmp_path / "snap")
    with pytest.raises(OSError):
        write_library(lib, tmp_path / "snap", overwrite=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["snap"]
    assert read_library(tmp_path / "snap") == SkillLibrary.of([Skill("good", "d", "b")])  # untouched
    with pytest.raises(SkillLibraryError, match="already exists"):
        write_library(lib, tmp_path / "snap")
    with pytest.raises(OSError):
        write_skill(bad, tmp_path / "bad")
    assert not (tmp_path / "bad").exists()


def test_bad_library_reports_every_problem(tmp_path):
    write(tmp_path / "lib" / "Bad_Name", GOOD.replace("check-units", "Bad_Name"))
    write(tmp_path / "lib" / "solver" / "no-desc", "---\nname: no-desc\n---\nbody")
    (tmp_path / "lib" / "empty-skill").mkdir()
    lib, problems = check_library(tmp_path / "lib")
    assert lib is None and len(problems) == 3
    assert any("Bad_Name/SKILL.md: field 'name'" in p for p in problems)
    assert any("no-desc/SKILL.md: field 'description'" in p for p in problems)
    assert any("empty-skill" in p and "no SKILL.md" in p for p in problems)
    with pytest.raises(SkillFormatError):
        read_library(tmp_path / "lib")


def test_diff_added_removed_changed():
    old = SkillLibrary.of([Skill("a", "Old description.", "line 1\nline 2"), Skill("gone", "d", "x")])
    new = old.apply(
        SkillEdit(
            "refine",
            TEAM,
            (old.get(TEAM, "a"),),
            (old.get(TEAM, "a").evolve(description="New description.", body="line 1\nline 3"),),
        )
    )
    new = new.apply(SkillEdit("prune", TEAM, (new.get(TEAM, "gone"),)))
    new = new.apply(SkillEdit("induce", TEAM, (), (Skill("fresh", "Brand new.", "do it"),)))
    d = diff_libraries(old, new)
    assert [s.name for _, s in d.added] == ["fresh"] and [s.name for _, s in d.removed] == ["gone"]
    (c,) = d.changed
    assert (c.old_version, c.new_version) == (1, 2)
    assert "-Old description." in c.description_diff and "+New description." in c.description_diff
    assert "-line 2" in c.body_diff and "+line 3" in c.body_diff and "line 1" in c.body_diff
    text = d.render()
    assert "1 added, 1 removed, 1 changed" in text and "version 0) -> b (version 3)" in text
    assert diff_libraries(new, new).empty


def test_cli_check_and_diff(tmp_path):
    res = runner.invoke(app, ["skills", "check", str(EXAMPLES / "gsm8k")])
    assert res.exit_code == 0, res.output
    assert "solver/" in res.output and "verifier/" in res.output
    write(tmp_path / "bad" / "x", "---\nname: y\ndescription: d\n---\n")
    res = runner.invoke(app, ["skills", "check", str(tmp_path / "bad")])
    assert res.exit_code == 2 and "field 'name'" in res.output
    res = runner.invoke(app, ["skills", "check", str(EXAMPLES / "gsm8k"), "--max-body-chars", "10"])
    assert res.exit_code == 2 and "at most 10" in res.output
    lib = read_library(EXAMPLES / "gsm8k")
    write_library(lib, tmp_path / "a")
    scope, skill = next(iter(lib))
    write_library(lib.apply(SkillEdit("prune", scope, (skill,))), tmp_path / "b")
    res = runner.invoke(app, ["skills", "diff", str(tmp_path / "a"), str(tmp_path / "b")])
    assert res.exit_code == 0 and f"- removed {scope}/{skill.name}" in res.output
    res = runner.invoke(app, ["skills", "diff", str(tmp_path / "a"), str(tmp_path / "nowhere")])
    assert res.exit_code == 2 and "is not a folder" in res.output
    assert MANIFEST == "library.json"


_piece = st.text(
    st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="\ufeff"), max_size=8
) | st.sampled_from(["\n", "---", "\n---\n", ": ", "#", "'", '"', "- ", "{", "&", "*", "!", " ", "\t"])
_text_st = st.lists(_piece, min_size=1, max_size=8).map("".join)


@settings(max_examples=150, deadline=None)
@given(
    desc=_text_st.filter(lambda s: s.strip()),
    body=_text_st,
    meta=st.dictionaries(st.text("abc-_", min_size=1, max_size=5), _text_st, max_size=2),
)
def test_skill_md_round_trip_any_text(desc, body, meta):
    s = Skill("any-skill", desc, body, metadata=meta)
    assert parse_skill_md(render_skill_md(s), folder_name="any-skill") == s


def test_an_empty_body_and_one_skills_folder_given_as_a_library_are_refused(tmp_path):
    folder = write(tmp_path / "lib" / "check-units", GOOD.split("---\n\n")[0] + "---\n\n  \n")
    with pytest.raises(SkillFormatError, match="is empty: below the front matter") as err:
        read_skill(folder)
    assert err.value.field == "body"
    _, problems = check_library(tmp_path / "lib")
    assert len(problems) == 1 and "body" in problems[0]
    one = write(tmp_path / "lib2" / "check-units", GOOD)
    with pytest.raises(SkillLibraryError, match=f"is one skill.*e.g. {tmp_path / 'lib2'}"):
        read_library(one)
    assert check_library(one)[1] == [
        f"{one} is one skill (it holds SKILL.md), not a library: give the folder "
        f"that holds the skill folders, e.g. {tmp_path / 'lib2'}"
    ]
    result = runner.invoke(app, ["skills", "check", str(one)])
    assert result.exit_code == 2 and "is one skill" in result.output
