"""What the code under test prints stays text wherever benchbot shows it.

A workload that fails with a hostile stderr, a build that fails with a hostile log, and a
branch name full of markup go through `benchbot github` into the sticky comment, the
check run and the job log. The comment and the check are rendered with cmark-gfm, GitHub's
own markdown renderer, with raw HTML *allowed*: whatever HTML comes out was written by
benchbot, not by the code under test.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.fakegithub import FakeGitHub
from tests.ghenv import CONFIG, Env, make_workspace, sticky

cmarkgfm = pytest.importorskip("cmarkgfm", reason="cmarkgfm (GitHub's renderer) is a test dependency")

HOSTILE = (
    "@alice <img src=x onerror=alert(1)> </details> ``` "
    "[click](https://evil.example/login) https://evil.example/phish #1 "
    "<script>steal()</script> &#64;bob | broken | cell"
)
COMMANDS = ["::add-mask::ghs_x", "::set-output name=conclusion::success", "  ::error::forged",
            "##[set-output name=x;]y", "::stop-commands::abc"]


def render(markdown: str) -> str:
    from cmarkgfm.cmark import Options

    return str(cmarkgfm.github_flavored_markdown_to_html(markdown, options=Options.CMARK_OPT_UNSAFE))


def assert_inert(markdown: str) -> None:
    """No live HTML, link, mention or broken cell made from the hostile text."""
    html = render(markdown)
    assert "<img" not in html and "<script" not in html
    assert 'href="https://evil.example' not in html
    assert not re.search(r"(?<![\w\u2060])@alice", markdown), "an @mention that would notify"
    assert "&#64;bob" not in html  # the entity shows as text, not as "@bob"


def assert_log_inert(log: str) -> None:
    for line in log.splitlines():
        assert not line.lstrip().startswith("::"), line
        assert "##[" not in line, line


@pytest.fixture
def hostile_env(tmp_path: Path, fake: FakeGitHub) -> Env:
    fails = "#!/bin/sh\n" + "".join(f"echo '{c}' >&2\n" for c in COMMANDS) + \
        f"printf '%s\\n' '{HOSTILE}' >&2\nexit 3\n"
    config = CONFIG.replace("workloads:", "workloads:\n  - {name: hostile, run: ['./hostile.sh']}")
    ws = make_workspace(tmp_path, config=config, files={"hostile.sh": "#!/bin/sh\nexit 0\n"})
    from tests.conftest import git

    git(ws.path, "checkout", "-q", "feature")
    (ws.path / "hostile.sh").write_text(fails)
    git(ws.path, "commit", "-q", "-am", "fail with a hostile message")
    ws.head_sha = git(ws.path, "rev-parse", "HEAD")
    git(ws.path, "checkout", "-q", "main")
    return Env(tmp_path, fake, ws)


@pytest.mark.slow
def test_a_failing_run_s_stderr_stays_text(hostile_env: Env, fake: FakeGitHub) -> None:
    payload = hostile_env.pull_request_event()
    payload["pull_request"]["head"]["ref"] = "x`<b>y</b>`@alice[z](https://evil.example)"
    run = hostile_env.run("pull_request", payload, process=True)
    assert run.returncode == 0, run.stderr
    (comment,) = sticky(fake)
    assert "invalid" in comment["body"] and "exited with status 3" in comment["body"]
    assert "evil.example/login" in comment["body"].replace("\\", "")  # shown, as text
    assert_inert(comment["body"])
    (check,) = fake.check_runs.values()
    assert_inert(check["output"]["summary"])
    assert_inert(run.summary)
    assert_log_inert(run.stderr)
    assert "<b>" not in render(comment["body"])


@pytest.mark.slow
def test_a_failing_build_s_log_stays_text(tmp_path: Path, fake: FakeGitHub) -> None:
    lines = [*COMMANDS, "```", "</details>", HOSTILE, "~~~", "````"]
    build = "".join(f"printf '%s\\n' '{line}'; " for line in lines) + "exit 1"
    ws = make_workspace(tmp_path, config=CONFIG + f"build: \"{build}\"\n")
    env = Env(tmp_path, fake, ws)
    run = env.run("issue_comment", env.comment_event("/bench"), process=True)
    assert run.returncode == 1
    assert "build of base" in run.stderr
    assert_log_inert(run.stderr)
    (comment,) = sticky(fake)
    html = render(comment["body"])
    # the whole log is inside one code block, and the text after it is benchbot's own
    assert html.count("<pre") == 1 and "Nothing was measured." in html.split("</pre>")[1]
    assert_inert(comment["body"].split("```", 1)[0])  # nothing live before the block
    assert "<img" not in html and "<script" not in html
    (check,) = fake.check_runs.values()
    assert check["conclusion"] == "failure"
    assert "<img" not in render(check["output"]["summary"])


@pytest.mark.slow
def test_compare_in_an_actions_job_prints_no_workflow_command(tmp_path: Path, hostile_env: Env) -> None:
    import os
    import subprocess
    import sys

    env = {**os.environ, "GITHUB_ACTIONS": "true"}
    proc = subprocess.run(
        [sys.executable, "-m", "benchbot", "compare", "--repo", str(hostile_env.ws.path),
         "--base", hostile_env.ws.base_sha, "--head", hostile_env.ws.head_sha],
        capture_output=True, text=True, env=env, timeout=300, check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "exited with status 3" in proc.stdout
    assert_log_inert(proc.stdout)
    assert_log_inert(proc.stderr)
