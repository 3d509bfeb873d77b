"""``sandbox.build_only``: the files it names cannot be read by a measured run, however it
tries (benchbot.sandbox.hidden). bisect and history skip a commit whose built worktree differs
from its neighbour's in those files alone, so a way to read one would make that skip
unsound. Each test goes through ``engine.compare`` on a throwaway repository with real
bubblewrap; the control shows the same probe reads the file where nothing hides it."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchbot.measure import engine
from benchbot.sandbox import bwrap
from tests.conftest import MakeRepo, git

pytestmark = pytest.mark.slow  # real sandboxes and runs

needs_bwrap = pytest.mark.skipif(
    not bwrap.probe().works,
    reason=f"bubblewrap cannot make a sandbox here: {bwrap.probe().problem} "
    "(.ci/run installs the bubblewrap package)",
)

SECRET = "BUILD-ONLY-TEXT-4b1d"
# Every way a run might read a hidden file: directly, by another path to it, through
# /proc, through git (the worktree's .git names the repository, whose objects hold the
# file), by a copy or a link, and by looking for its text wherever a copy could be (the
# worktrees' directory, /tmp, the home, the repository's own directory), once in each
# place. Two files: src/hidden.c, alone in its directory (covered by an empty directory),
# and top.c beside the probe (covered by /dev/null). What each way yields is appended to
# the log; the run itself always succeeds.
PROBE = r"""#!/bin/sh
log='{log}'
echo "run in $(pwd)" >> "$log/tries"
{{
  for f in src/hidden.c top.c; do
    cat "$f"
    cat "./src/../$f"
    cat "$(pwd)/$f"
    cat "/proc/self/cwd/$f"
    cat "/proc/$$/root$(pwd)/$f"
    head -c 100 "$f"
    dd if="$f" bs=1 count=100
    cp "$f" "$log/copy.$$" && cat "$log/copy.$$"
    ln "$f" "link.$$" && cat "link.$$"
    ln -s "$f" "sym.$$" && cat "sym.$$"
    rm -f "link.$$" "sym.$$"
    git show "HEAD:$f"
    git cat-file -p "HEAD:$f"
    git --git-dir='{git_dir}' show "HEAD:$f"
  done
  git --git-dir='{git_dir}' grep -h {secret} HEAD
  if [ ! -e "$log/searched.$(basename "$(pwd)")" ]; then
    : > "$log/searched.$(basename "$(pwd)")"
    grep -r -l {secret} "$(dirname "$(pwd)")" /tmp "$HOME" '{repo}' 2>/dev/null | head -5
  fi
}} >> "$log/read" 2>> "$log/errors"
exit 0
"""


def _repo(make_repo: MakeRepo, tmp_path: Path, extra: str) -> tuple[Path, Path]:
    log = tmp_path / "log"
    log.mkdir()
    config = (f"version: 1\naa: off\nconfirm: off\ncounts: off\n"
              f"sandbox: {{mode: on, writable: ['{log}']{extra}}}\n"
              "budget: 10s\ndefaults: {max_runs: 12, warmup: 0}\n"
              "workloads:\n  - {name: w, run: ['./probe.sh']}\n")
    repo_dir = tmp_path / "repo"
    probe = PROBE.format(log=log, git_dir=repo_dir / ".git", secret=SECRET, repo=repo_dir)
    repo = make_repo({"benchbot.yml": config, "probe.sh": probe,
                      "src/hidden.c": f"/* {SECRET} */\nint x;\n",
                      "top.c": f"/* {SECRET} */\nint y;\n"}, {"README.md": "head\n"})
    assert repo == repo_dir
    return repo, log


@needs_bwrap
def test_no_run_can_read_a_build_only_file(make_repo: MakeRepo, tmp_path: Path) -> None:
    repo, log = _repo(make_repo, tmp_path, ", build_only: ['*.c']")
    doc = engine.compare(engine.Request(repo=repo, base="base", head="HEAD"))
    assert doc.benchmarks[0].verdict.outcome != "invalid", doc.benchmarks[0].verdict
    places = {line.split(" ", 2)[2] for line in (log / "tries").read_text().splitlines()}
    assert len(places) == 3, places  # base, head and base again's copy (triplets) were probed
    assert SECRET not in (log / "read").read_text()
    assert not list(log.glob("copy.*")) or SECRET not in "".join(
        p.read_text() for p in log.glob("copy.*"))
    errors = (log / "errors").read_text()
    assert "Permission denied" in errors, errors  # top.c: /dev/null, which cannot be opened
    assert "src/hidden.c: No such file" in errors, errors  # src: an empty directory
    assert "not a git repository" in errors, errors


@needs_bwrap
def test_the_probe_reads_the_file_where_nothing_hides_it(make_repo: MakeRepo, tmp_path: Path) -> None:
    repo, log = _repo(make_repo, tmp_path, "")
    engine.compare(engine.Request(repo=repo, base="base", head="HEAD"))
    read = (log / "read").read_text()
    places = {line.split(" ", 2)[2] for line in (log / "tries").read_text().splitlines()}
    runs = len((log / "tries").read_text().splitlines())
    assert len(places) == 3 and read.count(SECRET) >= runs * 2 * 10, read[:2000]  # most ways


@needs_bwrap
def test_build_only_is_refused_where_the_sandbox_would_show_the_repository_s_git(
        make_repo: MakeRepo, tmp_path: Path) -> None:
    """A writable (or read-only) directory holding the repository would show its objects,
    which hold the hidden files: the comparison stops with one line saying so."""
    repo, _ = _repo(make_repo, tmp_path, ", build_only: ['*.c']")
    config = (repo / "benchbot.yml").read_text().replace(
        "writable: [", f"writable: ['{repo}', ")
    (repo / "benchbot.yml").write_text(config)
    git(repo, "commit", "-q", "-am", "writable repository")
    git(repo, "tag", "-f", "base")
    with pytest.raises(bwrap.SandboxError, match=r"shows .*repository's .*whose objects hold"):
        engine.compare(engine.Request(repo=repo, base="base", head="HEAD"))
