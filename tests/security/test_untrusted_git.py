"""git on a pull request's commits runs nothing of the machine's, and reads what they
hold as data.

- A commit subject may hold any character but NUL: every line end ``str.splitlines``
  knows (a lone ``\\r``, ``\\x1c``, ``\\x85``, U+2028 …) used to split ``git log``'s output
  in the wrong place and crash ``benchbot bisect`` (``ValueError: not enough values to
  unpack``). Its output is read NUL-separated now.
- ``git worktree add`` of such a commit, and the fetch of its refs, run outside the
  sandbox: the runner's global and system config (git-lfs's filters, a hooks path, a
  fsmonitor) must not run there (``gitops.git_argv``, ``gitops.git_environment``).
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from benchbot import cli
from benchbot.git import gitops
from tests.conftest import GIT, git

# Every character str.splitlines ends a line at, and \r\n.
BOUNDARIES = ["\r\n", *sorted({chr(c) for c in range(sys.maxunicode + 1)
                               if len(f"a{chr(c)}b".splitlines()) == 2})]


def _commit(repo: Path, subject: str) -> str:
    """An empty commit whose message is ``subject`` exactly (no clean-up)."""
    subprocess.run([*GIT, "commit", "-q", "--allow-empty", "--cleanup=verbatim", "-F", "-"],
                   cwd=repo, input=subject.encode(), check=True, capture_output=True)
    return git(repo, "rev-parse", "HEAD")


def _subject(repo: Path, sha: str) -> str:
    """git's own %s of one commit, read NUL-terminated: the oracle."""
    out = subprocess.run([*GIT, "log", "-z", "-1", "--format=%s", sha], cwd=repo, check=True,
                         capture_output=True).stdout.decode()
    return out.removesuffix("\0")


def _history(repo: Path) -> list[str]:
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "prog.sh").write_text("#!/bin/sh\nexit 0\n")
    (repo / "prog.sh").chmod(0o755)
    (repo / "benchbot.yml").write_text("version: 1\nbuild: 'true'\ncounts: off\n"
                                       "workloads:\n  - {name: work, run: ./prog.sh}\n")
    git(repo, "add", "-A")
    shas = [_commit(repo, "good")]
    git(repo, "tag", "good")
    for i, end in enumerate(BOUNDARIES):
        shas.append(_commit(repo, f" lead{end}trail {i} \x1f\t"))
    return shas


def test_every_line_end_in_a_subject_is_read_as_part_of_it(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    shas = _history(repo)
    got = gitops.first_parent_commits(repo, shas[0], shas[-1])
    assert [c[0] for c in got] == shas  # one entry per commit, none split, none merged
    for sha, tree, subject in got:
        assert subject == _subject(repo, sha) and len(tree) == 40


def test_benchbot_bisect_reads_those_subjects(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    shas = _history(repo)
    path = tmp_path / "bisect.json"
    err = io.StringIO()
    # used to stop with "ValueError: not enough values to unpack (expected 3, got 1)"
    status = cli.main(["bisect", "--repo", str(repo), "--good", "good", "--bad", "HEAD",
                       "--only", "work", "--json", str(path), "--quiet", "--seed", "1"],
                      out=io.StringIO(), err=err)
    assert status == 0, err.getvalue()
    doc = json.loads(path.read_text())
    assert [c["sha"] for c in doc["commits"]] == shas
    assert [c["subject"] for c in doc["commits"]] == [_subject(repo, s) for s in shas]


# --- the runner's own git config -----------------------------------------------------------

FILTER = "#!/bin/sh\necho \"$0 $*\" >> {log}\ncat\n"
HOOK = "#!/bin/sh\necho \"$0 $*\" >> {log}\n"


@pytest.fixture
def runner_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A user (global) and a machine (system) git config as a runner may have them: git-lfs's
    filter, a filter of another name, a hooks path with post-checkout and
    reference-transaction hooks, a fsmonitor. Whatever any of them runs is logged."""
    log = tmp_path / "ran.log"
    tools = tmp_path / "tools"
    hooks = tmp_path / "hooks"
    for folder in (tools, hooks):
        folder.mkdir()
    for name, text in (("filter", FILTER), ("fsmonitor", HOOK)):
        (tools / name).write_text(text.format(log=log))
        (tools / name).chmod(0o755)
    for name in ("post-checkout", "reference-transaction", "post-merge"):
        (hooks / name).write_text(HOOK.format(log=log))
        (hooks / name).chmod(0o755)
    home = tmp_path / "home"
    home.mkdir()
    config = (f'[filter "lfs"]\n\tsmudge = {tools}/filter lfs-smudge\n\tclean = {tools}/filter\n'
              f'\tprocess = {tools}/filter lfs-process\n\trequired = true\n'
              f'[filter "evil"]\n\tsmudge = {tools}/filter evil-smudge\n\tclean = {tools}/filter evil-clean\n'
              f'[core]\n\thooksPath = {hooks}\n\tfsmonitor = {tools}/fsmonitor\n'
              f'[log]\n\tshowSignature = true\n')
    (home / ".gitconfig").write_text(config)
    system = tmp_path / "system.gitconfig"
    system.write_text(config)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_SYSTEM", str(system))
    monkeypatch.delenv("GIT_CONFIG_GLOBAL", raising=False)
    monkeypatch.delenv("GIT_CONFIG_NOSYSTEM", raising=False)
    return log


def _pull_request(root: Path) -> tuple[Path, str]:
    """A repository whose head commit's attributes ask for both filters."""
    repo = root / "repo"
    repo.mkdir()
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    run = lambda *a: subprocess.run([*GIT, *a], cwd=repo, env=env, check=True,  # noqa: E731
                                    capture_output=True, text=True).stdout.strip()
    run("init", "-q")
    (repo / ".gitattributes").write_text("*.bin filter=lfs diff=lfs merge=lfs\n*.txt filter=evil\n")
    (repo / "a.bin").write_text("payload\n")
    (repo / "b.txt").write_text("text\n")
    run("add", "-A")
    run("commit", "-q", "-m", "head")
    return repo, run("rev-parse", "HEAD")


def test_a_checkout_of_a_pull_request_runs_none_of_the_runner_s_config(
        tmp_path: Path, runner_config: Path) -> None:
    repo, head = _pull_request(tmp_path)
    with gitops.worktrees(repo, {"head": head}) as co:
        assert (co["head"].path / "a.bin").read_text() == "payload\n"  # as committed
        gitops.changed_files(repo, head, head)
        gitops.first_parent_commits(repo, head, head)
    # used to run the lfs process, the "evil" smudge and the post-checkout hook
    assert not runner_config.exists(), runner_config.read_text()


def test_fetching_a_pull_request_s_refs_runs_no_hook(tmp_path: Path, runner_config: Path) -> None:
    from benchbot.github.fetch import ensure_commits

    origin, head = _pull_request(tmp_path)
    clone = tmp_path / "clone"
    quiet = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    for cwd, args in ((tmp_path, ["init", "-q", str(clone)]),
                      (clone, ["remote", "add", "origin", str(origin)]),
                      (origin, ["update-ref", "refs/pull/2/head", head])):
        subprocess.run([*GIT, *args], cwd=cwd, check=True, capture_output=True, env=quiet)
    ensure_commits(clone, {head: ["+refs/pull/2/head"]})
    assert gitops.resolve(clone, head) == head
    # used to run the reference-transaction hook of the runner's hooksPath on the fetch
    assert not runner_config.exists(), runner_config.read_text()


def test_the_user_s_own_working_tree_keeps_their_config(tmp_path: Path, runner_config: Path) -> None:
    """``--head WORKTREE`` snapshots the user's own files with all of their config (their
    ignores, their filters): that is their code, not a pull request's."""
    repo, _ = _pull_request(tmp_path)
    (repo / ".gitattributes").write_text("*.txt filter=evil\n")  # not lfs: its process is a stand-in
    (repo / "a.bin").unlink()
    (repo / "c.txt").write_text("new\n")
    gitops.snapshot(repo)
    assert "filter" in runner_config.read_text()  # their clean filter ran, as git add runs it
