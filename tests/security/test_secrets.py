"""The code under test never gets the token.

A build and a workload that look for it everywhere a process of the runner's user could:
their environment, ``/proc/*/environ`` and ``/proc/*/cmdline`` of every process they can
see (benchbot's, the step's shell, the test harness), the runner's ``.credentials``, the
job's temporary directory, the home directory's git credentials, and the repository's git
config with the header actions/checkout leaves when it persists credentials. They write
what they saw to a directory the test reads afterwards.
"""

from __future__ import annotations

import base64
import secrets
from pathlib import Path

import pytest

from benchbot.sandbox import bwrap
from tests.fakegithub import FakeGitHub
from tests.ghenv import CONFIG, Env, Workspace, make_workspace, sticky

needs_bwrap = pytest.mark.skipif(
    not bwrap.probe().works,
    reason=f"bubblewrap cannot make a sandbox here: {bwrap.probe().problem} "
    "(.ci/run installs the bubblewrap package)",
)

MARK = "@@benchbot-spy:"

SPY = r"""#!/bin/sh
# Looks for secrets where a process of this user could, and writes down what it saw.
out="{out}/$1-$$"
{{
  echo "{mark}env"; env
  echo "{mark}environ"
  for f in /proc/[0-9]*/environ; do tr '\0' '\n' < "$f"; echo; done
  echo "{mark}cmdline"
  for f in /proc/[0-9]*/cmdline; do tr '\0' ' ' < "$f"; echo; done
  echo "{mark}files"
  cat {files}
  grep -rs . {dirs} | head -n 2000
  echo "{mark}git"
  cat .git/config "$(git rev-parse --git-common-dir)/config"
  echo "{mark}done"
}} > "$out" 2>&1
exit 0
"""


class Runner:
    """A self-hosted runner's layout with the token in the places a real one keeps secrets."""

    def __init__(self, tmp: Path, token: str) -> None:
        self.root = tmp / "actions-runner"
        self.work = self.root / "_work"
        self.temp = self.work / "_temp"
        self.home = tmp / "home"
        self.out = tmp / "spy"
        for d in (self.temp, self.home, self.out):
            d.mkdir(parents=True)
        (self.root / ".credentials").write_text(f'{{"token": "{token}"}}\n')
        (self.temp / "job-secret.txt").write_text(token + "\n")
        (self.home / ".git-credentials").write_text(f"https://x-access-token:{token}@github.com\n")
        self.files = " ".join(str(p) for p in (self.root / ".credentials",
                                               self.temp / "job-secret.txt",
                                               self.home / ".git-credentials"))
        self.dirs = f"{self.root} {self.home}"

    def spy(self) -> str:
        return SPY.format(out=self.out, files=self.files, dirs=self.dirs, mark=MARK)

    def seen(self) -> dict[str, str]:
        """What each spy run wrote, by "build-<pid>" / "run-<pid>"."""
        return {p.name: p.read_text(errors="replace") for p in sorted(self.out.iterdir())}

    def env(self) -> dict[str, str]:
        return {"RUNNER_TEMP": str(self.temp), "RUNNER_WORKSPACE": str(self.work / "Hello-World"),
                "HOME": str(self.home)}


def forms(token: str) -> list[str]:
    """The token as it can appear: itself, and in the Basic header git gets."""
    return [token, base64.b64encode(f"x-access-token:{token}".encode()).decode()]


def spy_workspace(tmp_path: Path, runner: Runner, mode: str, token: str) -> Workspace:
    config = CONFIG.replace("workloads:", (
        f"sandbox: {{mode: {mode}, writable: ['{runner.out}']}}\n"
        "build: ./spy.sh build\n"
        "workloads:\n  - name: spy\n    run: ['./spy.sh', 'run']\n"
    ))
    ws = make_workspace(runner.work / "Hello-World", config=config, files={"spy.sh": runner.spy()})
    # actions/checkout with persist-credentials: true leaves the token in .git/config
    header = base64.b64encode(f"x-access-token:{token}".encode()).decode()
    with open(ws.path / ".git" / "config", "a") as fh:
        fh.write(f'[http "https://github.com/"]\n\textraheader = AUTHORIZATION: basic {header}\n')
    return ws


def _parts(text: str) -> dict[str, str]:
    """The spy's output by section. The marker is a whole line of its own: what the spy
    reads (other processes' environments and command lines, grep's "path:line") can hold
    any text, but not a line that is exactly the marker."""
    parts: dict[str, str] = {}
    name = ""
    for line in text.split("\n"):
        if line.startswith(MARK) and line[len(MARK):].isalpha():
            name = line[len(MARK):]
            parts[name] = ""
        elif name:
            parts[name] += line + "\n"
    return parts


def _sections(text: str, *names: str) -> str:
    parts = _parts(text)
    return "\n".join(parts[n] for n in names if n in parts)


@pytest.mark.slow
@pytest.mark.parametrize("mode", [
    pytest.param("on", marks=needs_bwrap),
    "off",
])
def test_build_and_workload_cannot_find_the_token(tmp_path: Path, fake: FakeGitHub, mode: str) -> None:
    token = "ghs_" + secrets.token_hex(18)
    fake.token = token
    runner = Runner(tmp_path, token)
    ws = spy_workspace(tmp_path, runner, mode, token)
    env = Env(tmp_path, fake, ws)
    run = env.run("pull_request", env.pull_request_event(), process=True, GITHUB_TOKEN=token,
                  **runner.env())
    assert run.returncode == 0, run.stderr
    seen = runner.seen()
    assert any(k.startswith("build-") for k in seen) and any(k.startswith("run-") for k in seen)
    assert all("done" in _parts(text) for text in seen.values())
    # the spies did see processes: their own, and more (the sandbox's init, or everything)
    assert all(_sections(text, "cmdline").count("spy.sh") >= 1 for text in seen.values())
    where = ("env", "environ", "cmdline") if mode == "off" else ("env", "environ", "cmdline",
                                                                  "files", "git")
    for name, text in seen.items():
        looked = _sections(text, *where)
        for form in forms(token):
            assert form not in looked, f"{name} found the token ({mode}):\n{looked[:2000]}"
    if mode == "on":
        # inside the sandbox only the sandbox's own processes exist: not benchbot github,
        # not the test harness
        for text in seen.values():
            cmdlines = _sections(text, "cmdline")
            assert "benchbot github" not in cmdlines and "-m pytest" not in cmdlines
            assert "-m benchbot" not in cmdlines
    (comment,) = sticky(fake)  # and benchbot still published with the token it kept
    assert "spy" in comment["body"]


@pytest.mark.slow
def test_the_three_jobs_keep_the_write_token_off_the_measuring_machine(
        tmp_path: Path, fake: FakeGitHub) -> None:
    token = "ghs_" + secrets.token_hex(18)
    fake.token = token
    runner = Runner(tmp_path, token)
    mode = "on" if bwrap.probe().works else "off"
    ws = spy_workspace(tmp_path, runner, mode, token)
    env = Env(tmp_path, fake, ws)
    payload = env.comment_event("/bench runs=10")
    gate, measure, publish = env.run_split("issue_comment", payload, measure_token=fake.read_token,
                                           process=True, **runner.env())
    assert gate.returncode == 0, gate.stderr
    assert gate.outputs["run"] == "true" and token not in gate.outputs["job"]
    # the gate opened the check and the comment before anything ran on the runner
    assert measure is not None and publish is not None
    assert measure.returncode == 0, measure.stderr
    # measure made no API call at all, not even a read
    assert not [r for r in fake.requests if fake.read_token in (r.header("authorization") or "")]
    assert (measure.results_dir / "results.json").is_file()
    for name, text in runner.seen().items():
        looked = _sections(text, "env", "environ", "cmdline")
        for secret in (*forms(token), fake.read_token):
            assert secret not in looked, f"{name} found {secret[:8]}…"
    assert publish.returncode == 0, publish.stderr
    (comment,) = sticky(fake)
    assert "spy" in comment["body"] and "benchbot: measuring" not in comment["body"]
    (check,) = fake.check_runs.values()
    assert check["status"] == "completed" and check["head_sha"] == ws.head_sha
    assert publish.outputs["conclusion"] == check["conclusion"]
    writes = [r for r in fake.requests if r.method in ("POST", "PATCH")]
    assert writes and all(token in (r.header("authorization") or "") for r in writes)


def test_the_sandbox_s_git_config_keeps_core_keys_as_git_reads_them_and_nothing_else(
        tmp_path: Path) -> None:
    """The copy the build and the runs see: core.* and extensions.* exactly as git reads
    them in the original (quotes, backslashes, tabs, a bare key, a subsection), and none of
    the credentials that actions/checkout or a user may leave beside them."""
    import subprocess

    token = "ghs_" + secrets.token_hex(18)
    git_dir = tmp_path / "repo" / ".git"
    subprocess.run(["git", "init", "-q", str(tmp_path / "repo")], check=True)
    header = base64.b64encode(f"x-access-token:{token}".encode()).decode()
    with open(git_dir / "config", "a") as fh:
        fh.write(
            "[core]\n\tfsmonitor\n\tautocrlf = \"in put\"\n"
            '\tcommentChar = "a\\\\b\\"c\\td"\n'
            '[core "odd.sub"]\n\tname = x y ;not a comment"\n'
            "[extensions]\n\tworktreeConfig = true\n"
            f'[http "https://github.com/"]\n\textraheader = AUTHORIZATION: basic {header}\n'
            f'[remote "origin"]\n\turl = https://x-access-token:{token}@github.com/o/r\n'
            "[include]\n\tpath = /etc/passwd\n"
        )

    def listed(path: Path) -> list[str]:
        out = subprocess.run(["git", "config", "--file", str(path), "--list", "-z"],
                             capture_output=True, check=True).stdout.decode()
        return [e for e in out.split("\0") if e]

    copy = bwrap.sanitized_git_config(git_dir, tmp_path / "gitconfig")
    expected = [e for e in listed(git_dir / "config") if e.startswith(("core.", "extensions."))]
    assert "core.fsmonitor" in expected and 'core.commentchar\na\\b"c\td' in expected
    assert listed(copy) == expected
    text = copy.read_text()
    for form in forms(token):
        assert form not in text
    assert "remote" not in text and "include" not in text and "http" not in text
