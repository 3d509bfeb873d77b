"""The engine with real processes and real git worktrees on a temporary repository."""

from __future__ import annotations

import io
import json
import re
import subprocess
from pathlib import Path

import pytest

from benchbot import cli
from benchbot.config.settings import Overrides
from benchbot.core.errors import GitError
from benchbot.core.model import Environment
from benchbot.git import gitops
from benchbot.measure import engine
from benchbot.results.resultsdir import to_json as as_json
from benchbot.run import machine
from benchbot.sandbox import bwrap
from tests.conftest import MakeRepo, git

# Programs that log their own starts: each appends "<arm> <argv1>" to $LOG.
LOGGER = '#!/bin/sh\necho "{arm} $1" >> "$LOG"\n'


def _config(log: Path, **extra: str) -> str:
    lines = [
        "version: 1",
        # The programs log outside the worktrees, which the sandbox must be told.
        f"sandbox: {{writable: ['{log.parent}']}}",
        "defaults:",
        "  runs: 10",
        f"  env: {{LOG: '{log}'}}",
    ]
    lines += [f"  {k}: {v}" for k, v in extra.items()]
    lines += [
        "workloads:",
        "  - name: one",
        "    run: ['./prog.sh', 'one']",
        "  - name: two",
        "    run: ./prog.sh two",
    ]
    return "\n".join(lines) + "\n"


def _log(log: Path) -> list[tuple[str, str]]:
    return [tuple(line.split()) for line in log.read_text().splitlines()]  # type: ignore[misc]


@pytest.mark.real_runs("which runs are made, and in what order: not their times")
def test_alternation_and_warmups_happen_as_configured(make_repo: MakeRepo, tmp_path: Path) -> None:
    log = tmp_path / "starts.log"
    repo = make_repo(
        {"benchbot.yml": _config(log, warmup="2"), "prog.sh": LOGGER.format(arm="base")},
        {"prog.sh": LOGGER.format(arm="head")},
    )
    doc = as_json(engine.compare(engine.Request(repo=repo, base="base", head="HEAD", overrides=Overrides(aa=False, confirm=False))))
    starts = _log(log)
    one = [arm for arm, name in starts if name == "one"]
    # 2 warm-ups per arm first (discarded), then 10 pairs alternating AB, BA, AB, ...
    assert one[:4] == ["base", "head", "base", "head"]
    pairs = [tuple(one[i:i + 2]) for i in range(4, len(one), 2)]
    assert pairs == [("base", "head"), ("head", "base")] * 5
    # rounds are the outer loop: workloads take turns pair by pair
    measured = [name for _, name in starts[8:]]
    assert measured[:8] == ["one", "one", "two", "two", "one", "one", "two", "two"]
    bench = {b["name"]: b for b in doc["benchmarks"]}
    assert len(bench["one"]["arms"]["base"]["samples_ns"]) == 10
    assert bench["one"]["phases"]["ab"]["order"] == "ABBA" * 5
    assert doc["aa"]["status"] == "skipped"


@pytest.mark.real_runs("which runs are made, and in what order: not their times")
def test_first_execution_is_discarded_even_without_warmup(make_repo: MakeRepo, tmp_path: Path) -> None:
    log = tmp_path / "starts.log"
    # abort_fraction 1: a false A/A reading of a 1 ms script under load must not stop the
    # run before the A/B phase, whose runs this test counts.
    config = _config(log, warmup="0").replace("version: 1\n", "version: 1\naa: {abort_fraction: 1}\n")
    repo = make_repo({"benchbot.yml": config, "prog.sh": LOGGER.format(arm="base")},
                     {"prog.sh": LOGGER.format(arm="head")})
    doc = as_json(engine.compare(engine.Request(repo=repo, base="base", head="HEAD", overrides=Overrides(confirm=False))))
    one = [arm for arm, name in _log(log) if name == "one"]
    # A/A: one discarded first run of base's copy (base again's place) and one of base,
    # 10 pairs of base; A/B: one discarded first run of head
    assert len(one) == 1 + 1 + 20 + 1 + 20
    bench = {b["name"]: b for b in doc["benchmarks"]}
    assert len(bench["one"]["phases"]["aa"]["arms"]["base_again"]["samples_ns"]) == 10


@pytest.mark.real_runs("which runs are made, and in what order: not their times")
def test_random_order_is_reproducible_from_the_seed(make_repo: MakeRepo, tmp_path: Path) -> None:
    log = tmp_path / "starts.log"
    repo = make_repo({"benchbot.yml": _config(log, order="random"), "prog.sh": LOGGER.format(arm="base")},
                     {"prog.sh": LOGGER.format(arm="head")})
    req = engine.Request(repo=repo, base="base", head="HEAD", overrides=Overrides(aa=False, confirm=False, seed=7))
    orders = [as_json(engine.compare(req))["benchmarks"][0]["phases"]["ab"]["order"] for _ in range(2)]
    assert orders[0] == orders[1]
    assert set(orders[0][i:i + 2] for i in range(0, 20, 2)) == {"AB", "BA"}


@pytest.mark.real_runs("failures, outputs and timeouts of real processes: invalid whatever the times")
def test_failing_workload_is_invalid_while_others_are_judged(make_repo: MakeRepo, tmp_path: Path, validate) -> None:
    config = """version: 1
defaults: {runs: 10}
workloads:
  - name: good
    run: [sleep, "0.002"]
  - name: crashes
    run: ./crash.sh
"""
    crash = '#!/bin/sh\nif [ -f head-marker ]; then echo "boom: bad input" >&2; exit 3; fi\n'
    repo = make_repo({"benchbot.yml": config, "crash.sh": crash}, {"head-marker": "x\n"})
    # aa=False: a false A/A reading of a 1 ms script under load would abort the run
    # before the head is ever run (the rule for one workload); this test is about the head.
    doc = as_json(engine.compare(engine.Request(repo=repo, base="base", head="HEAD", overrides=Overrides(aa=False))))
    validate(doc)
    bench = {b["name"]: b for b in doc["benchmarks"]}
    assert bench["crashes"]["verdict"]["outcome"] == "invalid"
    assert "exited with status 3" in bench["crashes"]["verdict"]["reason"]
    assert "boom: bad input" in bench["crashes"]["verdict"]["reason"]
    assert bench["good"]["verdict"]["outcome"] != "invalid"
    assert len(bench["good"]["arms"]["head"]["samples_ns"]) >= 10


@pytest.mark.real_runs("failures, outputs and timeouts of real processes: invalid whatever the times")
def test_mismatched_expect_is_invalid(make_repo: MakeRepo, validate) -> None:
    config = """version: 1
defaults: {runs: 10}
workloads:
  - name: answer
    run: ./answer.sh
    expect: 'checksum=(\\S+)'
"""
    repo = make_repo({"benchbot.yml": config, "answer.sh": "#!/bin/sh\necho checksum=42\n"},
                     {"answer.sh": "#!/bin/sh\necho checksum=43\n"})
    # aa=False: a false A/A reading of a 1 ms script under load would abort the run
    # before the head is ever run (the rule for one workload); this test is about the head.
    doc = as_json(engine.compare(engine.Request(repo=repo, base="base", head="HEAD", overrides=Overrides(aa=False))))
    validate(doc)
    verdict = doc["benchmarks"][0]["verdict"]
    assert verdict["outcome"] == "invalid"
    assert "'42'" in verdict["reason"] and "'43'" in verdict["reason"]


@pytest.mark.real_runs("failures, outputs and timeouts of real processes: invalid whatever the times")
def test_timeout_is_invalid(make_repo: MakeRepo) -> None:
    config = """version: 1
defaults: {runs: 10, timeout: 200ms}
workloads:
  - name: hangs
    run: ./hang.sh
"""
    hang = '#!/bin/sh\nif [ -f head-marker ]; then exec sleep 30; fi\n'
    repo = make_repo({"benchbot.yml": config, "hang.sh": hang}, {"head-marker": "x\n"})
    # aa=False: a false A/A reading of a 1 ms script under load would abort the run
    # before the head is ever run (the rule for one workload); this test is about the head.
    doc = as_json(engine.compare(engine.Request(repo=repo, base="base", head="HEAD", overrides=Overrides(aa=False))))
    verdict = doc["benchmarks"][0]["verdict"]
    assert verdict["outcome"] == "invalid"
    assert "timed out after 0.2 s" in verdict["reason"]


@pytest.mark.real_runs("worktrees and the config the runs are made from: not their times")
def test_worktrees_are_gone_and_user_tree_untouched(make_repo: MakeRepo, tmp_path: Path) -> None:
    log = tmp_path / "starts.log"
    repo = make_repo({"benchbot.yml": _config(log), "prog.sh": LOGGER.format(arm="base")},
                     {"prog.sh": LOGGER.format(arm="head")})
    (repo / "untracked.txt").write_text("mine\n")
    (repo / "prog.sh").write_text(LOGGER.format(arm="dirty"))  # an uncommitted edit
    status_before = git(repo, "status", "--porcelain")
    branches_before = git(repo, "branch", "-a")
    as_json(engine.compare(engine.Request(repo=repo, base="base", head="HEAD", overrides=Overrides(aa=False, confirm=False))))
    assert git(repo, "worktree", "list").count("\n") == 0  # only the main worktree
    assert git(repo, "status", "--porcelain") == status_before
    assert git(repo, "branch", "-a") == branches_before
    assert "dirty" not in log.read_text()


def test_worktrees_are_removed_when_the_build_fails(make_repo: MakeRepo, capsys) -> None:
    config = "version: 1\nbuild: ./build.sh\nworkloads:\n  - {name: x, run: [true]}\n"
    repo = make_repo({"benchbot.yml": config, "build.sh": "#!/bin/sh\necho compiling\n"},
                     {"build.sh": "#!/bin/sh\necho 'error: missing semicolon' >&2\nexit 2\n"})
    err = io.StringIO()
    code = cli.main(["compare", "--repo", str(repo), "--base", "base", "--head", "HEAD"], out=io.StringIO(), err=err)
    assert code == 1
    assert "build of head" in err.getvalue()
    assert "error: missing semicolon" in err.getvalue()
    assert git(repo, "worktree", "list").count("\n") == 0


def test_each_checkout_is_at_its_revision_and_gone_after(make_repo: MakeRepo) -> None:
    repo = make_repo({"side.txt": "base\n"}, {"side.txt": "head\n"})
    base, head = gitops.resolve_all(repo, ["base", "HEAD"])
    assert base != head and len(base) == len(head) == 40
    for _ in range(10):
        with gitops.worktrees(repo, {"base": base, "head": head}) as co:
            assert (co["base"].path / "side.txt").read_text() == "base\n"
            assert (co["head"].path / "side.txt").read_text() == "head\n"
            assert git(repo, "worktree", "list").count("\n") == 2
        assert git(repo, "worktree", "list").count("\n") == 0
        assert not co["base"].path.exists() and not co["head"].path.exists()
    with pytest.raises(GitError, match="worktree add"):
        with gitops.worktrees(repo, {"base": base, "head": "0" * 40}):
            pass
    assert git(repo, "worktree", "list").count("\n") == 0


def test_revisions_and_files_are_read_in_one_git_each(make_repo: MakeRepo) -> None:
    data = b"line one\n\x00binary\r\n\nno newline at the end"
    repo = make_repo({"benchbot.yml": "version: 1\ncounts: off\n", "dir/x": "x"})
    (repo / "blob.bin").write_bytes(data)
    git(repo, "add", "blob.bin")
    git(repo, "commit", "-q", "-m", "a binary file")
    base, sha = gitops.resolve_all(repo, ["base", "HEAD"])
    assert gitops.resolve_all(repo, ["HEAD", "HEAD~1"]) == [sha, base]
    assert gitops.show_files(repo, sha, [".github/benchbot.yml", "benchbot.yml", "blob.bin",
                                         "dir", "dir/x"]) == [None, b"version: 1\ncounts: off\n",
                                                              data, None, b"x"]
    for bad in ("nope", "HEAD^{tree}", "base~5"):
        with pytest.raises(GitError, match=re.escape(f"revision {bad!r} does not name a commit")):
            gitops.resolve_all(repo, ["base", bad])
    for bad in ("--output=x", "a\nb"):
        with pytest.raises(GitError, match="is not a revision name"):
            gitops.resolve_all(repo, [bad])
    top, git_dir = gitops.locate(repo / "dir")
    assert top == repo.resolve() and git_dir == (repo / ".git").resolve()


@pytest.mark.slow
@pytest.mark.parametrize("parallel", [True, False])
def test_builds_run_at_once_unless_told_not_to(make_repo: MakeRepo, tmp_path: Path,
                                               parallel: bool) -> None:
    log = tmp_path / "builds.log"
    # Each build logs its start, waits long enough for the other to start if it runs at
    # once, and logs its end; the log then reads start start end end, or start end twice.
    build = f"#!/bin/sh\necho start >> '{log}'\nsleep 1\necho end >> '{log}'\n"
    config = (f"version: 1\nsandbox: {{writable: ['{tmp_path}']}}\nbuild: ./build.sh\n"
              f"parallel_builds: {'true' if parallel else 'false'}\n"
              "workloads:\n  - {name: x, run: [true]}\n")
    repo = make_repo({"benchbot.yml": config, "build.sh": build})
    doc = as_json(engine.compare(engine.Request(
        repo=repo, base="base", head="HEAD", overrides=Overrides(aa=False, confirm=False, runs=10))))
    assert doc["benchmarks"][0]["verdict"]["outcome"] != "invalid"
    expected = ["start", "start", "end", "end"] if parallel else ["start", "end", "start", "end"]
    assert log.read_text().split() == expected


def test_a_failed_build_is_named_when_both_run_at_once(make_repo: MakeRepo) -> None:
    # The head's build fails at once while the base's is still running: the error names
    # the head, and waits for the base's build rather than leaving it running.
    config = "version: 1\nbuild: ./build.sh\nworkloads:\n  - {name: x, run: [true]}\n"
    repo = make_repo({"benchbot.yml": config, "build.sh": "#!/bin/sh\nsleep 1\necho built\n"},
                     {"build.sh": "#!/bin/sh\necho 'error: no such file' >&2\nexit 3\n"})
    err = io.StringIO()
    code = cli.main(["compare", "--repo", str(repo), "--base", "base", "--head", "HEAD"],
                    out=io.StringIO(), err=err)
    assert code == 1
    assert "build of head" in err.getvalue() and "(exit 3)" in err.getvalue()
    assert "error: no such file" in err.getvalue()
    assert git(repo, "worktree", "list").count("\n") == 0


def test_bad_config_exits_1_naming_the_line(make_repo: MakeRepo, tmp_path: Path) -> None:
    config = "version: 1\nworkloads:\n  - name: x\n    run: [true]\n    rusn: 20\n"
    repo = make_repo({"benchbot.yml": config})
    err = io.StringIO()
    code = cli.main(["compare", "--repo", str(repo), "--base", "base", "--head", "HEAD"], out=io.StringIO(), err=err)
    assert code == 1
    line = err.getvalue().splitlines()[0]
    assert "benchbot.yml:5" in line and "rusn" in line


def test_unknown_revision_exits_1_naming_it(make_repo: MakeRepo) -> None:
    repo = make_repo({"benchbot.yml": "version: 1\nworkloads: [{name: x, run: [true]}]\n"})
    err = io.StringIO()
    code = cli.main(["compare", "--repo", str(repo), "--base", "nope", "--head", "HEAD"], out=io.StringIO(), err=err)
    assert code == 1
    assert "'nope'" in err.getvalue()


@pytest.mark.real_runs("worktrees and the config the runs are made from: not their times")
def test_config_is_read_from_the_base_revision(make_repo: MakeRepo, tmp_path: Path) -> None:
    base_cfg = "version: 1\ndefaults: {runs: 10}\nworkloads:\n  - {name: fromhead, run: [true]}\n"
    head_cfg = base_cfg.replace("fromhead", "sneaky")
    repo = make_repo({"benchbot.yml": base_cfg}, {"benchbot.yml": head_cfg})
    doc = as_json(engine.compare(engine.Request(repo=repo, base="base", head="HEAD", overrides=Overrides(aa=False, confirm=False))))
    assert [b["name"] for b in doc["benchmarks"]] == ["fromhead"]


PLANTED = r"""
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 1000000;
    n = n * WORK / 100;
    volatile unsigned long long acc = 0;
    unsigned long long x = 88172645463325252ULL;
    for (long i = 0; i < n; i++) { x ^= x << 13; x ^= x >> 7; x ^= x << 17; acc += x; }
    printf("done=1 acc=%llu\n", (unsigned long long)acc % 1000);
    return 0;
}
"""


@pytest.mark.slow
def test_planted_difference_is_slower_end_to_end(make_repo: MakeRepo, tmp_path: Path, validate) -> None:
    config = r"""version: 1
build: cc -O2 -DWORK=$(cat work.txt) -o prog prog.c
defaults: {runs: 15}
workloads:
  - name: planted
    run: ['./prog', '4000000']
    expect: 'done=(\d)'
"""
    # Twice the work: large enough to be certain on a loaded 2-core machine, where bursts
    # of load shorter than a pair spread single pair ratios by ±30% (seen at load 4).
    repo = make_repo({"benchbot.yml": config, "prog.c": PLANTED, "work.txt": "100\n"}, {"work.txt": "200\n"})
    out, err = io.StringIO(), io.StringIO()
    results = tmp_path / "out" / "results.json"
    code = cli.main(["compare", "--repo", str(repo), "--base", "base", "--head", "HEAD", "--json", str(results),
                     "--html", str(tmp_path / "report.html"), "--fail-on", "slower"], out=out, err=err)
    assert code == 3, err.getvalue()
    doc = json.loads(results.read_text())
    validate(doc)
    verdict = doc["benchmarks"][0]["verdict"]
    assert verdict["outcome"] == "slower", verdict
    assert 1.5 < verdict["ratio"] < 2.6
    assert doc["benchmarks"][0]["confirmation"]["verdict"]["outcome"] == "slower"
    assert doc["summary"]["conclusion"] == "failure"
    assert "slower" in out.getvalue() and "`planted`" in out.getvalue()
    assert "<table>" in (tmp_path / "report.html").read_text()


@pytest.mark.slow
def test_cancellation_removes_worktrees_and_writes_no_results(make_repo: MakeRepo, tmp_path: Path) -> None:
    import os
    import signal
    import sys
    import time

    started = tmp_path / "started"
    config = f"""version: 1
sandbox: {{writable: ['{tmp_path}']}}
defaults: {{runs: 10}}
workloads:
  - name: slow
    run: ['./slow.sh']
    env: {{MARK: '{started}'}}
"""
    slow = '#!/bin/sh\ntouch "$MARK"\nexec sleep 31.4159\n'
    repo = make_repo({"benchbot.yml": config, "slow.sh": slow})
    results = tmp_path / "results.json"
    proc = subprocess.Popen(
        [sys.executable, "-m", "benchbot", "compare", "--repo", str(repo), "--base", "base",
         "--head", "HEAD", "--json", str(results)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    deadline = time.monotonic() + 60
    while not started.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert started.exists(), "the workload never started"
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "interrupted" in err
    assert not results.exists()
    assert git(repo, "worktree", "list").count("\n") == 0
    # the workload's own process was killed too
    time.sleep(0.2)
    assert not [pid for pid in os.listdir("/proc") if pid.isdigit() and "31.4159" in _cmdline(pid)]


def _cmdline(pid: str) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return fh.read().decode(errors="replace")
    except OSError:
        return ""


@pytest.mark.real_runs("worktrees and the config the runs are made from: not their times")
def test_the_working_tree_is_compared_without_touching_it(make_repo: MakeRepo, tmp_path: Path) -> None:
    """--head WORKTREE: uncommitted edits and new files are measured; nothing of the
    user's changes (index, HEAD, branches, files, stash)."""
    log = tmp_path / "starts.log"
    repo = make_repo({"benchbot.yml": _config(log), "prog.sh": LOGGER.format(arm="base"),
                      ".gitignore": "ignored.txt\n"})
    (repo / "prog.sh").write_text(LOGGER.format(arm="edited"))  # an uncommitted edit
    (repo / "new.txt").write_text("untracked\n")
    (repo / "ignored.txt").write_text("ignored\n")
    git(repo, "add", "new.txt")  # something staged, too
    before = {
        "status": git(repo, "status", "--porcelain"), "head": git(repo, "rev-parse", "HEAD"),
        "branches": git(repo, "branch", "-a"), "index": (repo / ".git" / "index").read_bytes(),
        "refs": git(repo, "for-each-ref"), "stash": git(repo, "stash", "list"),
    }
    out = io.StringIO()
    code = cli.main(["compare", "--repo", str(repo), "--base", "HEAD", "--head", "WORKTREE",
                     "--no-aa", "--no-confirm", "--quiet", "--json", str(tmp_path / "r.json")],
                    out=out, err=io.StringIO())
    assert code == 0
    assert {arm for arm, _ in _log(log)} == {"base", "edited"}
    after = {
        "status": git(repo, "status", "--porcelain"), "head": git(repo, "rev-parse", "HEAD"),
        "branches": git(repo, "branch", "-a"), "index": (repo / ".git" / "index").read_bytes(),
        "refs": git(repo, "for-each-ref"), "stash": git(repo, "stash", "list"),
    }
    assert after == before
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["head"]["ref"] == "WORKTREE"
    head = doc["head"]["sha"]
    assert git(repo, "rev-parse", f"{head}^") == before["head"]  # a commit on top of HEAD
    files = git(repo, "ls-tree", "-r", "--name-only", head).split()
    assert "new.txt" in files and "ignored.txt" not in files
    assert "WORKTREE" in out.getvalue()
    assert as_json(engine.compare(engine.Request(repo=repo, base="HEAD", head=".",
                                                 overrides=Overrides(aa=False, confirm=False))))["head"]["ref"] == "WORKTREE"


@pytest.mark.slow
@pytest.mark.skipif(not bwrap.probe().works, reason="bubblewrap cannot make a sandbox here")
def test_the_sandboxed_runs_are_benchbot_s_own_work_not_other_processes(
        make_repo: MakeRepo, monkeypatch: pytest.MonkeyPatch) -> None:
    """The runs keep one core busy inside the sandbox's PID namespace: their CPU time must
    count as benchbot's own, or every sandboxed comparison warns of a busy machine. What
    ``machine.finish`` counts as benchbot's (its own and its reaped children's CPU time,
    plus what the workers say reaping did not pass up) must cover the runs' own CPU time
    (CPU time, not the machine's load: other processes cannot move it)."""
    burn = "#!/bin/sh\ni=0\nwhile [ $i -lt 30000 ]; do i=$((i+1)); done\n"
    config = ("version: 1\nsandbox: {mode: on}\ndefaults: {runs: 10, warmup: 0}\n"
              "aa: {enabled: false}\nworkloads:\n  - name: burn\n    run: ./burn.sh\n")
    repo = make_repo({"benchbot.yml": config, "burn.sh": burn}, {"burn.sh": burn + "# head\n"})
    handed: list[float] = []
    finish = machine.finish

    def spy(before: machine.Before, unreaped_s: float = 0.0, *,
            maxrss_floor_kib: int | None = None) -> Environment:
        # benchbot's own CPU time: its process and reaped children, and what reaping did
        # not pass up (with the worker as the namespace's PID 1, bubblewrap reaps it and
        # passes the runs' time up: then nothing is left unreaped)
        handed.append(machine.own_cpu_seconds() - before.own_s + unreaped_s)
        return finish(before, unreaped_s, maxrss_floor_kib=maxrss_floor_kib)

    monkeypatch.setattr(machine, "finish", spy)
    doc = engine.compare(engine.Request(repo=repo, base="base", head="HEAD",
                                        overrides=Overrides(confirm=False)))
    assert doc.sandbox is not None and doc.sandbox.kind == "bubblewrap"
    runs_cpu_s = sum(sum(arm.cpu_ns) for b in doc.benchmarks for arm in b.arms.values()) / 1e9
    assert runs_cpu_s > 0.2, runs_cpu_s  # the burn did burn
    assert handed and handed[0] >= 0.9 * runs_cpu_s, (handed, runs_cpu_s)
