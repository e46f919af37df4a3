"""`python -m course collect`: any folder name, skipped extras, duplicates, archive, report.

Quick: no nbgrader run. The notebooks are the real solution and exercise of 01_attention; the
course root is a temporary folder with the repository's solutions/ linked in (collect learns
the assignments and their notebooks' names there).
"""

from __future__ import annotations

import csv
import hashlib
import json
import re
import unicodedata
import warnings
import zipfile
from pathlib import Path

import pytest

from course.cli import main
from course.collect import collect
from course.config import STUDENT_ID, Course, CourseError, load_settings
from course.students import student_key, student_slug

REPO = Path(__file__).resolve().parents[2]


A1 = "01_attention"
NB = "attention.ipynb"
GOOD = (REPO / "solutions" / A1 / NB).read_bytes()
OTHER = (REPO / "exercises" / A1 / NB).read_bytes()  # also a valid notebook, different bytes
STAMP = re.compile(r"^\d{8}T\d{6}Z(-\d+)?$")


def course_root(root: Path) -> Path:
    """``root``, created, with the repository's solutions/ linked in: a course root."""
    root.mkdir(parents=True)
    (root / "solutions").symlink_to(REPO / "solutions")
    return root


def make_zip(path: Path, members: list[tuple[str, bytes]]) -> Path:
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Duplicate name", category=UserWarning)
        with zipfile.ZipFile(path, "w") as zf:
            for name, data in members:
                zf.writestr(name, data)
    return path


def make_folder(base: Path, files: dict[str, bytes]) -> Path:
    for rel, data in files.items():
        (base / rel).parent.mkdir(parents=True, exist_ok=True)
        (base / rel).write_bytes(data)
    return base


def report(root: Path, name: str = "collect.csv") -> list[dict[str, str]]:
    with (root / "reports" / name).open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def students(root: Path) -> list[tuple[str, str]]:
    with (root / "students.csv").open(newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    assert rows[0] == ["student_id", "name"]
    return [tuple(r) for r in rows[1:]]


def submitted(root: Path, student: str) -> bytes:
    return (root / "submitted" / student / A1 / NB).read_bytes()


# ---------------------------------------------------------------------------------------
# names -> ids
# ---------------------------------------------------------------------------------------
def test_display_names_map_to_safe_ids():
    sha = hashlib.sha1("张伟".encode()).hexdigest()[:8]
    cases = {
        "José García": "jose_garcia",
        "bad name": "bad_name",
        "张伟": f"s_{sha}",
        "alice": "alice",
        "mistake1": "mistake1",
        "bob.smith": "bob.smith",
        "E_case": "e_case",
        "Bob.Smith": "bob.smith",
        "  Zoë  O'Neil (2) ": "zoe_o_neil_2",
        "Łukasz Øster": "lukasz_oster",
        "Straße": "strasse",
    }
    for name, sid in cases.items():
        assert student_slug(name) == sid, name
        assert STUDENT_ID.match(sid), sid
    # macOS writes decomposed (NFD) names: the same student as the composed form.
    nfd = unicodedata.normalize("NFD", "José García")
    assert nfd != "José García"
    assert student_key(nfd) == student_key("JOSÉ GARCÍA")
    assert student_key("Jose Garcia") != student_key("José García")
    assert not STUDENT_ID.match("Alice") and not STUDENT_ID.match("bad name")


def test_collect_accepts_any_folder_name_and_records_the_ids(tmp_path):
    root = course_root(tmp_path / "course")
    src = make_folder(
        tmp_path / "export",
        {f"José García/{A1}/{NB}": GOOD, f"bad name/{A1}/{NB}": OTHER, f"张伟/{A1}/{NB}": GOOD},
    )
    zhang = "s_" + hashlib.sha1("张伟".encode()).hexdigest()[:8]
    assert collect(src, Course(root)) == []
    assert submitted(root, "jose_garcia") == GOOD
    assert submitted(root, "bad_name") == OTHER
    assert submitted(root, zhang) == GOOD
    assert sorted(p.name for p in (root / "submitted").iterdir()) == sorted(
        ["bad_name", "jose_garcia", zhang]
    )
    assert sorted(students(root)) == sorted(
        [("jose_garcia", "José García"), ("bad_name", "bad name"), (zhang, "张伟")]
    )
    rows = {r["name"]: r for r in report(root)}
    assert rows["张伟"]["student_id"] == zhang and rows["张伟"]["outcome"] == "accepted"
    assert rows["José García"]["kept_as"] == f"submitted/jose_garcia/{A1}/{NB}"


def test_zip_names_without_the_utf8_flag_are_read_as_utf8(tmp_path):
    """Zips from macOS and many tools store UTF-8 names without setting the UTF-8 flag."""
    name = f"José García/{A1}/{NB}".encode()
    zpath = make_zip(tmp_path / "mac.zip", [(name.decode(), GOOD)])
    raw = bytearray(zpath.read_bytes())
    for sig, flag_at in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        pos = raw.index(sig)
        assert raw.count(sig) == 1 and raw[pos + flag_at + 1] & 0x08  # bit 11 was set
        raw[pos + flag_at + 1] &= ~0x08 & 0xFF
    zpath.write_bytes(bytes(raw))
    with zipfile.ZipFile(zpath) as zf:
        assert zf.namelist()[0] != name.decode()  # zipfile alone reads it as cp437
    root = course_root(tmp_path / "course")
    assert collect(zpath, Course(root)) == []
    assert submitted(root, "jose_garcia") == GOOD
    assert students(root) == [("jose_garcia", "José García")]


def test_mapping_is_persisted_and_stable_across_collects(tmp_path):
    root = course_root(tmp_path / "course")
    # An instructor's own row is honoured.
    (root / "students.csv").write_text("student_id,name\nzoe_w,Zoë Winter\n", encoding="utf-8")
    src1 = make_folder(
        tmp_path / "w1", {f"José García/{A1}/{NB}": GOOD, f"Zoë Winter/{A1}/{NB}": GOOD}
    )
    collect(src1, Course(root))
    assert submitted(root, "zoe_w") == GOOD and not (root / "submitted/zoe_winter").exists()
    # Another name with the same slug gets _2; another spelling of the first name is reported
    # (not merged into José García's submission).
    src2 = make_folder(
        tmp_path / "w2", {f"Jose Garcia/{A1}/{NB}": OTHER, f"JOSÉ GARCÍA/{A1}/{NB}": OTHER}
    )
    collect(src2, Course(root))
    assert submitted(root, "jose_garcia_2") == OTHER
    assert submitted(root, "jose_garcia") == GOOD  # the first collect's, untouched
    rows = {r["name"]: r for r in report(root)}
    assert rows["Jose Garcia"]["student_id"] == "jose_garcia_2"
    assert rows["JOSÉ GARCÍA"]["outcome"] == "rejected"
    assert "two spellings" in rows["JOSÉ GARCÍA"]["reason"]
    assert students(root) == [
        ("zoe_w", "Zoë Winter"),
        ("jose_garcia", "José García"),
        ("jose_garcia_2", "Jose Garcia"),
    ]
    collect(src2, Course(root))  # nothing new: students.csv unchanged
    assert len(students(root)) == 3


def test_a_valid_id_keeps_itself_before_a_derived_one_takes_it(tmp_path):
    root = course_root(tmp_path / "course")
    # "Bad Name" sorts first but must not take "bad_name" from the folder called bad_name.
    src = make_folder(tmp_path / "src", {f"Bad Name/{A1}/{NB}": GOOD, f"bad_name/{A1}/{NB}": OTHER})
    collect(src, Course(root))
    assert submitted(root, "bad_name") == OTHER
    assert submitted(root, "bad_name_2") == GOOD


# ---------------------------------------------------------------------------------------
# case variants and duplicates
# ---------------------------------------------------------------------------------------
def test_case_variants_in_one_zip_are_refused_as_two_files_and_both_kept(tmp_path, capsys):
    root = course_root(tmp_path / "course")
    zpath = make_zip(
        tmp_path / "batch.zip",
        [
            (f"batch/E_case/{A1}/{NB}", GOOD),
            (f"batch/e_case/{A1}/{NB}", OTHER),
            (f"batch/alice/{A1}/{NB}", GOOD),
        ],
    )
    rejected = collect(zpath, Course(root))
    assert submitted(root, "alice") == GOOD
    assert not (root / "submitted/e_case").exists()
    assert [r.student for r in rejected] == ["e_case", "e_case"]
    for r in rejected:
        assert r.reason.startswith("two files for student e_case, assignment 01_attention")
        assert f"E_case/{A1}/{NB}" in r.reason and f"e_case/{A1}/{NB}" in r.reason
        assert "keep one and collect again" in r.reason
    kept = {(root / r.kept_as).read_bytes() for r in rejected}
    assert kept == {GOOD, OTHER} and len({r.kept_as for r in rejected}) == 2
    assert all(r.kept_as.startswith(f"rejected/e_case/{A1}/") for r in rejected)
    assert sorted(students(root)) == [("alice", "alice"), ("e_case", "E_case")]
    out = capsys.readouterr().out
    assert out.count("REJECTED") == 2 and "collected 1 file(s)" in out and "2 rejected" in out


def test_case_variants_in_two_collects_are_reported_not_merged(tmp_path):
    root = course_root(tmp_path / "course")
    collect(make_zip(tmp_path / "1.zip", [(f"E_case/{A1}/{NB}", GOOD)]), Course(root))
    (r,) = collect(make_zip(tmp_path / "2.zip", [(f"e_case/{A1}/{NB}", OTHER)]), Course(root))
    assert "two spellings" in r.reason and "rename the folder to 'E_case'" in r.reason
    assert [p.name for p in (root / "submitted").iterdir()] == ["e_case"]
    assert submitted(root, "e_case") == GOOD  # not replaced
    assert not (root / "archive").exists()
    assert (root / r.kept_as).read_bytes() == OTHER
    assert students(root) == [("e_case", "E_case")]


def test_the_same_member_twice_in_a_zip_is_refused_and_both_copies_kept(tmp_path):
    root = course_root(tmp_path / "course")
    name = f"alice/{A1}/{NB}"
    zpath = make_zip(tmp_path / "dup.zip", [(name, GOOD), (name, OTHER), (f"bob/{A1}/{NB}", GOOD)])
    rejected = collect(zpath, Course(root))
    assert not (root / "submitted/alice").exists()
    assert submitted(root, "bob") == GOOD
    assert [(r.student, r.kept_as) for r in rejected] == [
        ("alice", f"rejected/alice/{A1}/1-{NB}"),
        ("alice", f"rejected/alice/{A1}/2-{NB}"),
    ]
    # In the zip's order: the first copy is 1-, the later one 2-.
    assert (root / rejected[0].kept_as).read_bytes() == GOOD
    assert (root / rejected[1].kept_as).read_bytes() == OTHER
    assert "two files for student alice, assignment 01_attention" in rejected[0].reason
    assert "same name more than once" in rejected[0].reason


def test_a_duplicate_leaves_the_earlier_submission_alone(tmp_path):
    root = course_root(tmp_path / "course")
    collect(make_folder(tmp_path / "w1", {f"alice/{A1}/{NB}": GOOD}), Course(root))
    name = f"alice/{A1}/{NB}"
    collect(make_zip(tmp_path / "dup.zip", [(name, OTHER), (name, OTHER)]), Course(root))
    assert submitted(root, "alice") == GOOD
    assert not (root / "archive").exists()
    kept = sorted(p.name for p in (root / "rejected/alice" / A1).iterdir())
    assert kept == [f"1-{NB}", f"2-{NB}"]


def test_a_later_rejection_does_not_overwrite_an_earlier_kept_file(tmp_path):
    root = course_root(tmp_path / "course")
    collect(make_folder(tmp_path / "w1", {f"bob/{A1}/{NB}": b"{ first"}), Course(root))
    collect(make_folder(tmp_path / "w2", {f"bob/{A1}/{NB}": b"{ second"}), Course(root))
    collect(make_folder(tmp_path / "w3", {f"bob/{A1}/{NB}": b"{ second"}), Course(root))  # again
    folder = root / "rejected/bob" / A1
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == {
        NB: b"{ first",
        f"2-{NB}": b"{ second",
    }


# ---------------------------------------------------------------------------------------
# skipped files
# ---------------------------------------------------------------------------------------
def test_extra_folders_other_files_and_unknown_assignments_are_skipped(tmp_path, capsys):
    root = course_root(tmp_path / "course")
    src = make_folder(
        tmp_path / "export",
        {
            f"alice/{A1}/{NB}": GOOD,
            f"alice/{A1}/old/{NB}": OTHER,  # an extra sub-folder
            f"alice/{A1}/notes.txt": b"hello",  # not a notebook
            f"alice/99_bonus/{NB}": OTHER,  # unknown assignment folder
            f"bob/{NB}": OTHER,  # a folder missing
            "README.txt": b"export of week 1",
            f"__MACOSX/alice/{A1}/._{NB}": b"\0",
            f"alice/{A1}/.ipynb_checkpoints/attention-checkpoint.ipynb": OTHER,
            ".DS_Store": b"\0",
        },
    )
    assert collect(src, Course(root)) == []
    assert submitted(root, "alice") == GOOD
    assert [p.name for p in (root / "submitted").iterdir()] == ["alice"]
    assert [p.name for p in (root / "submitted/alice").iterdir()] == [A1]
    assert [p.name for p in (root / "submitted/alice" / A1).iterdir()] == [NB]
    rows = {r["source_path"].removeprefix(f"{src}/"): r for r in report(root)}
    assert len(rows) == 9
    assert rows[f"alice/{A1}/{NB}"]["outcome"] == "accepted"
    assert {k for k, r in rows.items() if r["outcome"] == "skipped"} == set(rows) - {
        f"alice/{A1}/{NB}"
    }
    assert "extra folder" in rows[f"alice/{A1}/old/{NB}"]["reason"]
    assert rows[f"alice/{A1}/old/{NB}"]["student_id"] == "alice"
    assert "not a notebook" in rows[f"alice/{A1}/notes.txt"]["reason"]
    unknown = rows[f"alice/99_bonus/{NB}"]
    assert "unknown assignment folder '99_bonus'" in unknown["reason"]
    assert all(a in unknown["reason"] for a in Course(REPO).assignments())
    assert "not in a student folder" in rows["README.txt"]["reason"]
    assert rows[".DS_Store"]["reason"] == "system file, ignored"
    out = capsys.readouterr().out
    assert out.count("SKIPPED") == 5  # system files are listed in the report only
    assert "SKIPPED" in out and "99_bonus" in out and "02_multi_head" in out
    assert "collected 1 file(s)" in out and "0 rejected, 5 skipped, 0 archived" in out
    assert "3 system file(s) ignored" in out
    # nothing written to the rejected report
    assert report(root, "collect_rejected.csv") == []


def test_with_assignment_a_deeper_layout_is_skipped_not_fatal(tmp_path):
    root = course_root(tmp_path / "course")
    src = make_folder(
        tmp_path / "dl", {f"erin/{NB}": GOOD, f"frank/{A1}/{NB}": OTHER, f"gus/{NB}": OTHER}
    )
    assert collect(src, Course(root), assignment=A1) == []
    assert submitted(root, "erin") == GOOD and submitted(root, "gus") == OTHER
    assert not (root / "submitted/frank").exists()
    (frank,) = [r for r in report(root) if r["name"] == "frank"]
    assert frank["outcome"] == "skipped" and "<student>/<notebook>.ipynb" in frank["reason"]


def test_nothing_usable_raises_and_says_the_layout(tmp_path):
    root = course_root(tmp_path / "course")
    src = make_folder(tmp_path / "src", {"notes.txt": b"x", f"alice/deep/er/{NB}": GOOD})
    with pytest.raises(CourseError, match=r"<student>/<assignment>/<notebook>\.ipynb"):
        collect(src, Course(root))
    assert len(report(root)) == 2  # the report says what was skipped
    with pytest.raises(CourseError, match=r"empty\.zip is empty: it holds no file"):
        collect(make_zip(tmp_path / "empty.zip", []), Course(root))
    with pytest.raises(CourseError, match="does not exist"):
        collect(tmp_path / "missing.zip", Course(root))
    (tmp_path / "plain.txt").write_text("x")
    with pytest.raises(CourseError, match="neither a folder nor a .zip"):
        collect(tmp_path / "plain.txt", Course(root))
    with pytest.raises(CourseError, match="unknown assignment"):
        collect(src, Course(root), assignment="99_nothing")


def test_only_rejections_is_not_an_error(tmp_path, capsys):
    root = course_root(tmp_path / "course")
    src = make_folder(tmp_path / "src", {f"bob/{A1}/{NB}": b"{ oops"})
    assert main(["--root", str(root), "collect", str(src)]) == 0
    out = capsys.readouterr().out
    assert "REJECTED" in out and "not valid JSON" in out and "collected 0 file(s)" in out
    assert main(["--root", str(root), "collect", str(src), "--assignment", "99_x"]) == 2


# ---------------------------------------------------------------------------------------
# unsafe and oversized zip members
# ---------------------------------------------------------------------------------------
def test_an_unsafe_member_is_rejected_alone(tmp_path):
    root = course_root(tmp_path / "course")
    zpath = make_zip(
        tmp_path / "evil.zip",
        [
            (f"alice/{A1}/{NB}", GOOD),
            (f"../{A1}/{NB}", OTHER),
            (f"/tmp/{A1}/{NB}", OTHER),
            (f"bob/{A1}/../../../escaped.ipynb", OTHER),
        ],
    )
    rejected = collect(zpath, Course(root))
    assert submitted(root, "alice") == GOOD
    assert len(rejected) == 3
    assert all("unsafe path" in r.reason and r.kept_as == "" for r in rejected)
    assert not list(tmp_path.glob("*.ipynb")) and not (tmp_path / A1).exists()
    assert sorted(p.name for p in (root / "submitted").iterdir()) == ["alice"]
    assert not (root / "rejected").exists()


def test_an_oversized_member_is_refused_without_extracting_it(tmp_path):
    root = course_root(tmp_path / "course")
    (root / "grading.toml").write_text(f"max_notebook_mb = {len(GOOD) / 2**20 + 0.001}\n")
    big = GOOD + b" " * 4096  # still valid JSON, just over the limit
    zpath = tmp_path / "bomb.zip"
    with zipfile.ZipFile(zpath, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(f"alice/{A1}/{NB}", GOOD)
        zf.writestr(f"mallory/{A1}/{NB}", big)
    (r,) = collect(zpath, Course(root))
    assert r.student == "mallory" and "larger than" in r.reason and "max_notebook_mb" in r.reason
    assert r.kept_as == "" and not (root / "rejected").exists()
    assert not (root / "submitted/mallory").exists() and submitted(root, "alice") == GOOD
    (root / "grading.toml").write_text('max_notebook_mb = "lots"\n')
    with pytest.raises(CourseError, match="grading.toml: max_notebook_mb = 'lots' is not a number"):
        collect(zpath, Course(root))


# ---------------------------------------------------------------------------------------
# archive and unchanged
# ---------------------------------------------------------------------------------------
def test_a_second_collect_archives_the_first(tmp_path, capsys):
    root = course_root(tmp_path / "course")
    collect(make_folder(tmp_path / "w1", {f"alice/{A1}/{NB}": GOOD}), Course(root))
    assert collect(make_folder(tmp_path / "w2", {f"alice/{A1}/{NB}": OTHER}), Course(root)) == []
    assert submitted(root, "alice") == OTHER
    (stamp,) = (root / "archive/alice" / A1).iterdir()
    assert STAMP.match(stamp.name), stamp.name
    assert [p.name for p in stamp.iterdir()] == [NB]
    assert (stamp / NB).read_bytes() == GOOD
    out = capsys.readouterr().out
    assert f"ARCHIVED submitted/alice/{A1}/ -> archive/alice/{A1}/{stamp.name}/" in out
    assert "1 archived" in out
    (row,) = report(root)
    assert row["outcome"] == "accepted" and f"archive/alice/{A1}/{stamp.name}" in row["reason"]
    # A third version in the same second gets its own archive folder too.
    collect(make_folder(tmp_path / "w3", {f"alice/{A1}/{NB}": GOOD}), Course(root))
    versions = sorted((root / "archive/alice" / A1).iterdir())
    assert len(versions) == 2 and all(STAMP.match(v.name) for v in versions)
    assert {(v / NB).read_bytes() for v in versions} == {GOOD, OTHER}
    assert submitted(root, "alice") == GOOD


def test_an_identical_recollect_is_unchanged(tmp_path, capsys):
    root = course_root(tmp_path / "course")
    src = make_folder(tmp_path / "w1", {f"alice/{A1}/{NB}": GOOD, f"bob/{A1}/{NB}": GOOD})
    collect(src, Course(root))
    (src / "bob" / A1 / NB).write_bytes(OTHER)
    capsys.readouterr()
    collect(src, Course(root))
    outcomes = {r["student_id"]: r["outcome"] for r in report(root)}
    assert outcomes == {"alice": "unchanged", "bob": "accepted"}
    assert [p.name for p in (root / "archive").iterdir()] == ["bob"]
    assert submitted(root, "alice") == GOOD and submitted(root, "bob") == OTHER
    out = capsys.readouterr().out
    assert "collected 1 file(s)" in out and "(1 unchanged)" in out and "1 archived" in out


# ---------------------------------------------------------------------------------------
# the reports
# ---------------------------------------------------------------------------------------
def test_report_lists_every_file_and_history_keeps_every_collect(tmp_path):
    root = course_root(tmp_path / "course")
    zpath = make_zip(
        tmp_path / "batch.zip",
        [
            (f"batch/Ana Lía/{A1}/{NB}", GOOD),
            (f"batch/bob/{A1}/attention (1).ipynb", GOOD),
            (f"batch/carol/{A1}/{NB}", b'{"nbformat": 4}'),
            (f"batch/dave/{A1}/slides.pdf", b"%PDF"),
        ],
    )
    collect(zpath, Course(root))
    with (root / "reports/collect.csv").open(encoding="utf-8") as f:
        assert f.readline().strip() == (
            "source_path,name,student_id,assignment,file,outcome,reason,kept_as"
        )
    rows = report(root)
    assert [
        (r["name"], r["student_id"], r["assignment"], r["file"], r["outcome"]) for r in rows
    ] == [
        ("Ana Lía", "ana_lia", A1, NB, "accepted"),
        ("bob", "bob", A1, "attention (1).ipynb", "rejected"),
        ("carol", "carol", A1, NB, "rejected"),
        ("dave", "", A1, "slides.pdf", "skipped"),
    ]
    assert rows[0]["source_path"] == f"{zpath}/batch/Ana Lía/{A1}/{NB}"
    assert "misnamed" in rows[1]["reason"] and "not a Jupyter notebook" in rows[2]["reason"]
    assert rows[1]["kept_as"] == f"rejected/bob/{A1}/attention (1).ipynb"
    assert (root / rows[1]["kept_as"]).read_bytes() == GOOD
    assert [r["student"] for r in report(root, "collect_rejected.csv")] == ["bob", "carol"]
    collect(make_folder(tmp_path / "w2", {f"erin/{A1}/{NB}": GOOD}), Course(root))
    assert [r["name"] for r in report(root)] == ["erin"]  # collect.csv: this collect only
    history = report(root, "collect_history.csv")
    assert [r["name"] for r in history] == ["Ana Lía", "bob", "carol", "dave", "erin"]
    assert all(re.match(r"^\d{8}T\d{6}Z$", r["collected_at"]) for r in history)
    assert report(root, "collect_rejected.csv") == []


# ---------------------------------------------------------------------------------------
# links in a folder, and JSON nested too deeply to read
# ---------------------------------------------------------------------------------------
def test_links_are_never_followed_nor_kept(tmp_path, capsys):
    """A link to the solution (or to a system file) is not the student's work: eve's link to
    the solution notebook and mallory's linked assignment folder are rejected, nothing they
    point at is copied, and the honest student beside them is collected."""
    root = course_root(tmp_path / "course")
    src = make_folder(tmp_path / "src", {f"alice/{A1}/{NB}": OTHER})
    (src / "eve" / A1).mkdir(parents=True)
    (src / "eve" / A1 / NB).symlink_to(REPO / "solutions" / A1 / NB)
    (src / "mallory").mkdir()
    (src / "mallory" / A1).symlink_to(REPO / "solutions" / A1)
    (src / "trudy" / A1).mkdir(parents=True)
    (src / "trudy" / A1 / NB).symlink_to("/etc/passwd")
    rejected = collect(src, Course(root))
    assert submitted(root, "alice") == OTHER
    assert sorted(p.name for p in (root / "submitted").iterdir()) == ["alice"]
    assert not (root / "rejected").exists()  # nothing of what the links point at is kept
    assert len(rejected) == 3 and all(r.kept_as == "" for r in rejected)
    assert all("a link (to " in r.reason and "not followed" in r.reason for r in rejected)
    rows = {r["source_path"].split("/src/")[1]: r for r in report(root)}
    assert rows[f"eve/{A1}/{NB}"]["outcome"] == "rejected"
    assert rows[f"mallory/{A1}"]["outcome"] == "rejected"
    assert str(REPO / "solutions" / A1) in rows[f"mallory/{A1}"]["reason"]
    assert "REJECTED" in capsys.readouterr().out


def test_a_notebook_nested_too_deeply_is_rejected_by_name_and_the_rest_collected(tmp_path):
    root = course_root(tmp_path / "course")
    deep = b'{"cells": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"  # 200 kB of brackets
    src = make_folder(
        tmp_path / "src",
        {f"aaron/{A1}/{NB}": deep, f"bob/{A1}/{NB}": GOOD, f"zoe/{A1}/{NB}": OTHER},
    )
    (r,) = collect(src, Course(root))
    assert r.student == "aaron" and "JSON nested 100001 levels deep" in r.reason
    assert submitted(root, "bob") == GOOD and submitted(root, "zoe") == OTHER


@pytest.mark.parametrize(
    "data, why",
    [
        # valid JSON, a valid notebook to nbformat, and gigabytes in every process reading it
        (b'{"cells": [], "x": [' + b",".join([b"[]"] * 300_000) + b"]}", "JSON lists"),
        (b'{"cells": [], "x": ' + b"[" * 200 + b"]" * 200 + b"}", "nested 201 levels"),
        # 3.5 MB: 600,000 short strings, each a Python object of its own (8 million: 1.8 GB)
        (b'{"cells": [], "x": [' + b",".join([b'"ab"'] * 600_000) + b"]}", "JSON values"),
    ],
    ids=["many", "deep", "strings"],
)
def test_notebooks_too_big_in_elements_are_rejected_before_anything_reads_them(tmp_path, data, why):
    from course.entries import check_notebook

    assert why in (check_notebook(data) or "")
    root = course_root(tmp_path / "course")
    src = make_folder(tmp_path / "src", {f"aaron/{A1}/{NB}": data, f"bob/{A1}/{NB}": GOOD})
    (r,) = collect(src, Course(root))
    assert r.student == "aaron" and why in r.reason
    assert submitted(root, "bob") == GOOD


@pytest.mark.parametrize(
    "limit, why",
    [
        (["collect_memory_mb=100"], "needs more than 100 MiB to read"),
        # the swollen notebook takes 0.8 s to read on an idle 2-core machine, 5 s under load
        # (a limit of 1 s was passed on an idle one); bob's takes 0.02 s idle and up to 0.08 s
        # at a load average of 7 (a limit of 0.1 s rejected it under make check beside make test)
        (["collect_timeout=0.3"], "took longer than 0.3 s to read"),
    ],
    ids=["memory", "time"],
)
def test_reading_a_notebook_has_memory_and_time_limits_of_its_own(tmp_path, limit, why):
    """A notebook within the counted limits (480,000 lines of markdown, 46 MB) takes 0.8 s
    (idle) to 5 s (busy) and 450 MiB to read; under lower limits it is rejected by name, and
    collect goes on."""
    nb = json.loads(GOOD)
    lines = [f"{'a' * 90}{i}" for i in range(480_000)]
    nb["cells"].append({"cell_type": "markdown", "id": "notes", "metadata": {}, "source": lines})
    swollen = json.dumps(nb).encode()
    root = course_root(tmp_path / "course")
    src = make_folder(tmp_path / "src", {f"aaron/{A1}/{NB}": swollen, f"bob/{A1}/{NB}": GOOD})
    (r,) = collect(src, Course(root, load_settings(root, limit)))
    assert r.student == "aaron" and why in r.reason, r.reason
    assert submitted(root, "bob") == GOOD


def test_collect_limits_must_be_positive_numbers(tmp_path, capsys):
    """A wrong setting stops the command before any file is moved, and says where it was set."""
    root = course_root(tmp_path / "course")
    src = make_folder(tmp_path / "src", {f"bob/{A1}/{NB}": GOOD})
    assert main(["--root", str(root), "--set", "collect_timeout=soon", "collect", str(src)]) == 2
    err = capsys.readouterr().err
    assert "--set collect_timeout: collect_timeout = 'soon' is not a number of seconds" in err
    (root / "grading.toml").write_text("collect_timeout = -1\n")
    assert main(["--root", str(root), "collect", str(src)]) == 2
    assert "grading.toml: collect_timeout = -1 must be above 0 (seconds)" in capsys.readouterr().err
    assert not (root / "submitted").exists() or not any((root / "submitted").iterdir())


def test_brackets_inside_strings_do_not_count():
    from course.entries import shape_problem

    text = json.dumps(
        {"cells": [{"source": "[" * 500_000 + "," * 600_000, "outputs": [{"text": "{" * 9}]}]}
    )
    assert shape_problem(text.encode()) is None


def test_names_that_look_like_formulas_are_written_as_text(tmp_path):
    """A folder named ``=HYPERLINK(...)`` is kept as text in every CSV the instructor opens in
    a spreadsheet, and students.csv still gives it the same id on the next collect."""
    from course.students import assign_ids, load_students, save_students

    name = '=HYPERLINK("http://x","click")'
    ids: dict[str, str] = {}
    new = assign_ids([name, "+1", "alice"], ids)
    save_students(tmp_path, new)
    text = (tmp_path / "students.csv").read_text(encoding="utf-8")
    assert "'=HYPERLINK" in text and "'+1" in text and ",alice" in text
    assert load_students(tmp_path) == ids


def test_two_spellings_of_one_name_are_reported_not_merged(tmp_path, capsys):
    """alice is collected; a later ALICE (and a second spelling in the same download) is
    rejected with a message, and alice's submission stays as it was."""
    root = course_root(tmp_path / "course")
    collect(make_folder(tmp_path / "first", {f"alice/{A1}/{NB}": GOOD}), Course(root))
    later = make_folder(tmp_path / "later", {f"ALICE/{A1}/{NB}": OTHER, f"bob/{A1}/{NB}": GOOD})
    (r,) = collect(later, Course(root))
    assert "two spellings" in r.reason and "'alice'" in r.reason, r
    assert submitted(root, "alice") == GOOD and submitted(root, "bob") == GOOD
    assert r.kept_as and (root / r.kept_as).read_bytes() == OTHER  # nothing is lost
    both = make_folder(tmp_path / "both", {f"carol/{A1}/{NB}": GOOD, f"Carol/{A1}/{NB}": OTHER})
    rejected = collect(both, Course(root))  # two spellings in one download: two files, none
    assert len(rejected) == 2 and all("two files for student carol" in r.reason for r in rejected)
    assert not (root / "submitted" / "carol").exists()


def test_rejected_copies_are_private_and_names_are_printed_safely(tmp_path, capsys):
    root = course_root(tmp_path / "course")
    name = "eve\x1b]2;pwned\x07\x1b[2J"
    src = make_folder(tmp_path / "src", {f"{name}/{A1}/{NB}": b"not json"})
    (r,) = collect(src, Course(root))
    kept = root / r.kept_as
    assert kept.stat().st_mode & 0o777 == 0o600
    assert (root / "rejected").stat().st_mode & 0o777 == 0o700
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out and "\\x1b" in out
