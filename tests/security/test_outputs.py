"""Files benchbot writes, and files it reads, through the real command line.

Writing never replaces a symlink or a device with a new file, keeps the mode a user
would expect, and a failed write is one line after the report was printed. Reading a
file that is not a results file is one line too, never a traceback.
"""

from __future__ import annotations

import io
import json
import os
import stat
from pathlib import Path

import pytest

from benchbot import cli
from benchbot.results import resultsdir
from tests.conftest import MakeRepo
from tests.golden.scenarios import aa_off

CONFIG = "version: 1\naa: off\nconfirm: off\ndefaults: {runs: 10}\nworkloads:\n  - {name: t, run: [true]}\n"


def compare(repo: Path, *extra: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(["compare", "--repo", str(repo), "--base", "base", "--head", "HEAD",
                     "--quiet", *extra], out=out, err=err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def repo(make_repo: MakeRepo) -> Path:
    return make_repo({"benchbot.yml": CONFIG})


@pytest.fixture
def results_file(tmp_path: Path) -> Path:
    """A good results file, as ``compare --json`` writes it (a golden scenario's: reading
    it needs no comparison measured first)."""
    path = tmp_path / "results.json"
    path.write_text(resultsdir.dumps(aa_off()))
    return path


@pytest.mark.real_runs("the output files a comparison writes: not its times")
def test_a_symlink_stays_a_symlink(repo: Path, tmp_path: Path) -> None:
    target = tmp_path / "reports" / "latest.md"
    target.parent.mkdir()
    target.write_text("old\n")
    link = tmp_path / "report.md"
    link.symlink_to(target)
    code, out, err = compare(repo, "--markdown", str(link))
    assert code == 0, err
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_text() == out and "benchbot" in out


@pytest.mark.real_runs("the output files a comparison writes: not its times")
def test_a_device_is_written_into_not_replaced(repo: Path) -> None:
    before = os.stat("/dev/null")
    code, _, err = compare(repo, "--json", "/dev/null", "--html", "/dev/null")
    assert code == 0, err
    after = os.stat("/dev/null")
    assert stat.S_ISCHR(after.st_mode) and after.st_rdev == before.st_rdev
    assert not list(Path("/dev").glob(".null.*.tmp"))


@pytest.mark.real_runs("the output files a comparison writes: not its times")
def test_new_files_get_the_mode_of_any_new_file(repo: Path, tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        code, _, err = compare(repo, "--json", str(tmp_path / "r.json"), "--markdown",
                               str(tmp_path / "r.md"), "--html", str(tmp_path / "r.html"))
    finally:
        os.umask(old)
    assert code == 0, err
    for name in ("r.json", "r.md", "r.html"):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o644, name
    kept = tmp_path / "kept.md"
    kept.write_text("x")
    kept.chmod(0o600)  # a file the user made private stays private
    assert compare(repo, "--markdown", str(kept))[0] == 0
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600


@pytest.mark.real_runs("the output files a comparison writes: not its times")
def test_a_full_disk_is_one_line_after_the_report(repo: Path, tmp_path: Path) -> None:
    code, out, err = compare(repo, "--json", str(tmp_path / "r.json"), "--markdown", "/dev/full")
    assert code == 1
    assert "### benchbot" in out  # the report was printed all the same
    (line,) = err.strip().splitlines()[-1:]
    assert line == "benchbot: error: cannot write /dev/full: No space left on device"
    assert "Traceback" not in err
    assert json.loads((tmp_path / "r.json").read_text())["schema_version"] == 3


@pytest.mark.real_runs("the output files a comparison writes: not its times")
def test_an_output_that_is_a_directory_is_one_line(repo: Path, tmp_path: Path,
                                                   results_file: Path) -> None:
    err = io.StringIO()
    code = cli.main(["report", str(results_file), "-o", str(tmp_path)], out=io.StringIO(), err=err)
    assert code == 1
    assert err.getvalue() == f"benchbot: error: cannot write {tmp_path}: it is a directory; name a file\n"
    code, out, err2 = compare(repo, "--json", str(tmp_path))
    assert code == 1 and "### benchbot" in out and "it is a directory" in err2


def _broken(results_file: Path, tmp_path: Path, change) -> Path:
    doc = json.loads(results_file.read_text())
    change(doc)
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(doc))
    return path


@pytest.mark.parametrize("name, make, message", [
    ("binary", lambda p, t: _write(t / "x.json", b"\x89PNG\r\n\x1a\n\x00\xff"), "not UTF-8"),
    ("garbage", lambda p, t: _write(t / "x.json", b"{ not json"), "not valid JSON"),
    ("list", lambda p, t: _write(t / "x.json", b"[1, 2]"), "no schema_version"),
    ("deep", lambda p, t: _write(t / "x.json", b"[" * 100_000 + b"]" * 100_000), "not a results file"),
    ("newer", lambda p, t: _broken(p, t, lambda d: d.update(schema_version=4)), "schema_version 4"),
    ("missing key", lambda p, t: _broken(p, t, lambda d: d["benchmarks"][0]["verdict"].pop("outcome")),
     "benchmarks[0].verdict: 'outcome' is a required property"),
    ("bad outcome", lambda p, t: _broken(p, t, lambda d: d["benchmarks"][0]["verdict"].update(outcome="great")),
     "benchmarks[0].verdict.outcome"),
    ("hostile name", lambda p, t: _broken(p, t, lambda d: d["benchmarks"][0].update(name="<img src=x>")),
     "benchmarks[0].name"),
    ("missing file", lambda p, t: t / "nope.json", "cannot read: No such file or directory"),
    ("directory", lambda p, t: t, "is a directory"),
])
def test_report_on_what_is_not_a_results_file_is_one_line(results_file: Path, tmp_path: Path,
                                                          name: str, make, message: str) -> None:
    path = make(results_file, tmp_path)
    for fmt in ("markdown", "html"):
        err = io.StringIO()
        code = cli.main(["report", str(path), "--format", fmt], out=io.StringIO(), err=err)
        assert code == 1, name
        (line,) = err.getvalue().splitlines()
        assert line.startswith(f"benchbot: error: {path}") and message in line, line
        assert len(line) < 400


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path
