"""A local ``benchbot compare`` says a check only where one was asked for (issue 37): without
``--fail-on`` nothing fails, so its report says "check: none", not "check: success" over a
slower row. Measured by ``PlantedNap`` on a fake clock (the ``planted`` fixture): nap.sh's
10x slowdown, decided without waiting."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from benchbot import cli
from tests.conftest import MakeRepo
from tests.ghenv import CONFIG, FAST, SLOW, unconfined


def _compare(repo: Path, tmp_path: Path, *extra: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(["compare", "--repo", str(repo), "--base", "base", "--head", "HEAD",
                     "--html", str(tmp_path / "report.html"), *extra], out=out, err=err)
    return code, out.getvalue(), (tmp_path / "report.html").read_text()


def test_no_fail_on_no_check(make_repo: MakeRepo, tmp_path: Path, planted: Any) -> None:
    repo = make_repo({"benchbot.yml": unconfined(CONFIG), "nap.sh": FAST}, {"nap.sh": SLOW})
    code, md, html = _compare(repo, tmp_path)
    assert code == 0
    row = next(line for line in md.splitlines() if "`nap`" in line)
    assert "**slower +" in row
    assert "check: none (no `--fail-on` given)" in md
    assert "check: **" not in md and "success" not in md
    assert "check: none (no <code>--fail-on</code> given)" in html and "<strong>success" not in html


def test_fail_on_asks_for_the_check(make_repo: MakeRepo, tmp_path: Path, planted: Any) -> None:
    repo = make_repo({"benchbot.yml": unconfined(CONFIG), "nap.sh": FAST}, {"nap.sh": SLOW})
    code, md, _ = _compare(repo, tmp_path, "--fail-on", "slower")
    assert code == cli.EXIT_VERDICT
    assert "check: **failure** (fails on slower)" in md
    code, md, _ = _compare(repo, tmp_path, "--fail-on", "invalid")
    assert code == 0 and "check: **success** (fails on invalid)" in md


def test_a_call_that_could_not_be_profiled_says_why_once(
        make_repo: MakeRepo, tmp_path: Path, planted: Any, monkeypatch: Any) -> None:
    """Where valgrind is missing, the slower row's note says that it was not profiled and
    why, once, and the time line claims no profiled runs."""
    from benchbot.sandbox import counting

    monkeypatch.setattr(counting, "means", lambda env, **_: counting.Means(
        perf_problem="no hardware counters (a test)",
        valgrind_problem="valgrind is not installed (a test)"))
    repo = make_repo({"benchbot.yml": unconfined(CONFIG), "nap.sh": FAST}, {"nap.sh": SLOW})
    _, md, _ = _compare(repo, tmp_path)
    assert "**slower +" in next(line for line in md.splitlines() if "`nap`" in line)
    assert md.count("Not profiled: valgrind is not installed (a test).") == 1
    assert "not profiled: not profiled" not in md.lower() and "profiled: 0 runs" not in md
