"""The job summary (GITHUB_STEP_SUMMARY): what benchbot appends stays well under GitHub's
1024 KiB a step, cut like the comment and the check, with a pointer to the artifact."""

from __future__ import annotations

import dataclasses
import io
from pathlib import Path

import pytest

from benchbot.core.model import Revision
from benchbot.github import measure, publish
from benchbot.github.env import ActionEnv
from benchbot.github.event import Side
from benchbot.github.job import Job
from benchbot.github.output import STEP_SUMMARY_LIMIT, Log, append_summary
from benchbot.report.escape import Markdown
from tests.github.test_post import MemoryApi, details_balance, publisher
from tests.golden.scenarios import many

BASE, HEAD = "b" * 40, "c" * 40
RUN_URL = "https://github.com/o/r/actions/runs/1"
# about 2 MB of UTF-8, as a report of thousands of workloads would be
HUGE = Markdown("### benchbot\n\n<details><summary>The runs</summary>\n\n"
        + "| `w` | ▁▂▃▅▇ | 1.2 µs × 1.05 | −3% |\n" * 40_000 + "\n</details>\n")


def test_a_huge_report_is_cut_well_under_github_s_limit(tmp_path: Path) -> None:
    path = tmp_path / "summary.md"
    append_summary(path, HUGE, artifact="benchbot-results-shard-1-of-2", run_url=RUN_URL)
    data = path.read_bytes()
    assert len(HUGE.encode()) > 2_000_000
    assert STEP_SUMMARY_LIMIT - 200 < len(data) <= STEP_SUMMARY_LIMIT < 1000 * 1024
    text = data.decode()  # cut between characters
    assert "a job summary allows (1,000,000 bytes) and was cut here" in text
    assert "`benchbot-results-shard-1-of-2`" in text and RUN_URL in text
    assert text.endswith(").\n") and details_balance(text) == 0


def test_what_the_summary_holds_already_counts(tmp_path: Path) -> None:
    path = tmp_path / "summary.md"
    path.write_text("x" * 700_000 + "\n")
    append_summary(path, HUGE)
    assert len(path.read_bytes()) <= STEP_SUMMARY_LIMIT
    assert "`benchbot-results`" in path.read_text()  # the default artifact


def test_a_report_that_fits_is_appended_whole(tmp_path: Path) -> None:
    path = tmp_path / "summary.md"
    append_summary(path, Markdown("### one"))
    append_summary(path, Markdown("### two\n"))
    append_summary(None, HUGE)  # outside Actions: nothing
    assert path.read_text() == "### one\n### two\n"


def action_env(tmp_path: Path, **over: object) -> ActionEnv:
    options: dict[str, object] = {
        "event_name": "issue_comment", "event_path": tmp_path / "event.json",
        "repository": "o/r", "token": None, "run_id": "1", "server_url": "https://github.com",
        "step_summary": tmp_path / "summary.md", "results_dir": tmp_path / "results",
    }
    options.update(over)
    (tmp_path / "results").mkdir(exist_ok=True)
    return ActionEnv(**options)  # type: ignore[arg-type]


def test_the_measure_step_cuts_the_summary_naming_its_shard_s_artifact(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(measure, "render_results", lambda *a, **k: HUGE)
    measure.write_results(action_env(tmp_path, mode="measure"), many(3),
                          artifact="benchbot-results-shard-2-of-2")
    summary = (tmp_path / "summary.md").read_text()
    assert len(summary.encode()) <= STEP_SUMMARY_LIMIT and "was cut here" in summary
    assert "`benchbot-results-shard-2-of-2`" in summary
    assert (tmp_path / "results" / measure.REPORT).read_text() == HUGE  # the whole report


def test_the_publish_step_cuts_the_summary(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(publish, "render_results", lambda *a, **k: HUGE)
    doc = dataclasses.replace(many(3), base=Revision(ref="main", sha=BASE),
                              head=Revision(ref="feature", sha=HEAD))
    job = Job(number=7, base=Side(ref="main", sha=BASE, repo="o/r"),
              head=Side(ref="feature", sha=HEAD, repo="o/r"),
              config_sha=BASE)
    api = MemoryApi()
    code = publish.run(action_env(tmp_path, mode="publish", artifact="my-results"), job,
                        publisher(api), Log(io.StringIO()), publish.Measured(doc))
    assert code == 0 and api.checks[1]["status"] == "completed"
    summary = (tmp_path / "summary.md").read_text()
    assert len(summary.encode()) <= STEP_SUMMARY_LIMIT and "was cut here" in summary
    assert "`my-results`" in summary and RUN_URL in summary
