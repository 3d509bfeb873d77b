"""benchbot bisect on generated histories of a small C program (tests/bisectrepo.py): real
worktrees, real builds in the sandbox the machine allows, real measuring.

The program reports the fastest of 15 calls of its loop, as a benchmark harness does, so
the changes the issue names (+8% at one commit; +4% and +5% at two) are found as they are
on a loaded 2-core machine: the tests use them unchanged. No innocent commit may be named
in any of them."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from benchbot import cli
from benchbot.bisect import bisectdoc, search
from benchbot.measure import engine
from tests.bisectrepo import make_history
from tests.conftest import git


def _bisect(repo: Path, tmp_path: Path, *extra: str) -> tuple[int, dict[str, Any], str, str]:
    out, err = io.StringIO(), io.StringIO()
    path = tmp_path / "bisect.json"
    status = cli.main(["bisect", "--repo", str(repo), "--good", "good", "--bad", "HEAD",
                       "--only", "work", "--json", str(path), "--seed", "5", "--quiet", *extra],
                      out=out, err=err)
    data = json.loads(path.read_text()) if path.exists() else {}
    if data:
        jsonschema.validate(data, bisectdoc.schema())
    return status, data, out.getvalue(), err.getvalue()


def _index(data: dict[str, Any], sha: str) -> int:
    return [c["sha"] for c in data["commits"]].index(sha)


def _culprits(data: dict[str, Any]) -> list[int]:
    return [_index(data, c["sha"]) for c in data["answer"]["culprits"]]


def _no_worktrees_left(repo: Path) -> None:
    listed = git(repo, "worktree", "list", "--porcelain")
    assert listed.count("worktree ") == 1, listed


# --- fast: nothing to measure, or nothing measured ------------------------------------------


def test_a_range_that_comes_back_to_good_s_tree_is_not_measured_and_a_tree_is_built_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = make_history(tmp_path / "repo", commits=2, readme_only=frozenset({1}))
    git(repo, "revert", "--no-edit", "HEAD")  # back to commit 0's tree
    built: list[Path] = []
    real = engine.build_checkout
    monkeypatch.setattr(engine, "build_checkout",
                        lambda where, config, co: (built.append(co.path), real(where, config, co)))
    html = tmp_path / "bisect.html"
    status, data, out, _ = _bisect(repo, tmp_path, "--html", str(html), "--markdown",
                                   str(tmp_path / "bisect.md"))
    assert status == 0 and data["answer"]["kind"] == "no_change"
    assert data["answer"]["culprits"] == [] and "identical build output" in data["answer"]["sentence"]
    [step] = data["steps"]
    assert step["measured"] is False and step["reason"] == search.IDENTICAL
    assert len(built) == 1  # good and bad: one tree, one build
    assert "No commit carries a change" in out and (tmp_path / "bisect.md").read_text() == out
    assert "<svg" in html.read_text()
    _no_worktrees_left(repo)


def test_worktrees_are_removed_when_the_bisect_is_interrupted(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = make_history(tmp_path / "repo", commits=3)

    def interrupted(*args: Any, **kwargs: Any) -> Any:
        raise KeyboardInterrupt

    monkeypatch.setattr(engine, "compare_built", interrupted)
    status, data, _, err = _bisect(repo, tmp_path)
    assert status == 130 and not data and "interrupted" in err
    _no_worktrees_left(repo)


def test_a_good_commit_that_does_not_build_is_an_error_of_one_line(tmp_path: Path) -> None:
    repo = make_history(tmp_path / "repo", commits=3, broken=frozenset({0}))
    status, data, out, err = _bisect(repo, tmp_path)
    assert status == 1 and not data and out == ""
    assert err.startswith("benchbot: error: good (") and "build failed" in err
    assert len(err.splitlines()) == 1
    _no_worktrees_left(repo)


def test_bisect_follows_one_workload(tmp_path: Path) -> None:
    repo = make_history(tmp_path / "repo", commits=2)
    err = io.StringIO()
    assert cli.main(["bisect", "--repo", str(repo), "--good", "good", "--bad", "HEAD",
                     "--only", "work,other"], out=io.StringIO(), err=err) == 2
    assert "--only names one workload" in err.getvalue()


def test_good_must_be_an_ancestor_of_bad(tmp_path: Path) -> None:
    repo = make_history(tmp_path / "repo", commits=2)
    err = io.StringIO()
    assert cli.main(["bisect", "--repo", str(repo), "--good", "HEAD", "--bad", "good",
                     "--only", "work"], out=io.StringIO(), err=err) == 1
    assert "is not an ancestor" in err.getvalue()


# --- slow: real changes found by real measuring ---------------------------------------------


@pytest.mark.slow
def test_eight_percent_at_one_commit_names_that_commit_only(tmp_path: Path) -> None:
    repo = make_history(tmp_path / "repo", factors={6: 1.08})
    status, data, out, _ = _bisect(repo, tmp_path)
    assert status == 0 and _culprits(data) == [6], out
    assert data["answer"]["kind"] == "culprits" and data["answer"]["ranges"] == []
    [culprit] = data["answer"]["culprits"]
    assert culprit["parent"] == data["commits"][5]["sha"]
    assert culprit["ratio"] == pytest.approx(1.08, abs=0.03)
    _no_worktrees_left(repo)


@pytest.mark.slow
def test_four_and_five_percent_at_two_commits_names_both_and_nothing_else(tmp_path: Path) -> None:
    repo = make_history(tmp_path / "repo", factors={3: 1.04, 7: 1.05})
    status, data, out, _ = _bisect(repo, tmp_path)
    assert status == 0 and _culprits(data) == [3, 7], out
    assert "spread over several commits" in data["answer"]["sentence"]
    assert [round(c["ratio"], 2) for c in data["answer"]["culprits"]] == pytest.approx([1.04, 1.05], abs=0.02)


@pytest.mark.slow
def test_a_commit_that_does_not_build_next_to_the_culprit_is_skipped_and_named(tmp_path: Path) -> None:
    repo = make_history(tmp_path / "repo", factors={6: 1.08}, broken=frozenset({5}))
    status, data, out, _ = _bisect(repo, tmp_path)
    assert status == 0 and _culprits(data) == [6], out
    [culprit] = data["answer"]["culprits"]
    assert culprit["skipped"] == [data["commits"][5]["sha"]]
    assert data["commits"][5]["build"] == "skipped" and "build failed" in data["commits"][5]["why"]
    assert "or at the skipped" in data["answer"]["sentence"] and "or at the skipped" in out


@pytest.mark.slow
def test_a_commit_whose_program_fails_is_skipped_and_its_neighbours_searched(tmp_path: Path) -> None:
    repo = make_history(tmp_path / "repo", factors={6: 1.08}, failing=frozenset({4}))
    status, data, out, _ = _bisect(repo, tmp_path)
    assert status == 0 and _culprits(data) == [6], out
    assert data["commits"][4]["build"] == "skipped"
    assert "runs failed" in data["commits"][4]["why"] and "status 3" in data["commits"][4]["why"]
    assert any(s["runs_failed"] for s in data["steps"])


@pytest.mark.slow
def test_no_change_at_all_names_no_commit(tmp_path: Path) -> None:
    repo = make_history(tmp_path / "repo")
    status, data, out, _ = _bisect(repo, tmp_path)
    assert status == 0 and data["answer"]["kind"] == "no_change", out
    assert data["answer"]["culprits"] == [] and data["steps"][0]["measured"] is True
    assert "No commit carries a change" in out


@pytest.mark.slow
def test_identical_build_output_between_commits_is_not_measured(tmp_path: Path) -> None:
    empty = frozenset(range(1, 10)) - {6}
    repo = make_history(tmp_path / "repo", factors={6: 1.08}, empty=empty)
    status, data, out, _ = _bisect(repo, tmp_path)
    assert status == 0 and _culprits(data) == [6], out
    unmeasured = [s for s in data["steps"] if not s["measured"]]
    assert unmeasured and all(s["outcome"] == "level" and s["alpha"] == 0 for s in unmeasured)
    hashes = {c["sha"]: c["output_hash"] for c in data["commits"]}
    assert all(hashes[s["left"]] != hashes[s["right"]] for s in data["steps"] if s["measured"])
    assert "not measured (identical build output)" in out
