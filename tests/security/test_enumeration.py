"""Everything the code under test can reach in the sandbox, enumerated and held to an
allow-list (``tests/security/reach.py``).

A comparison whose build and workload are ``reach.py``: each walks every process and
descriptor it can see, every mount, every directory it can write, the keyrings and every
socket, inside the real sandbox through ``engine.compare``, and fails on anything the
allow-list does not name. The test reads their reports and checks that they enumerated
something (a walk that saw nothing would pass any rule).
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from benchbot.measure import engine
from benchbot.results.resultsdir import to_json as as_json
from benchbot.sandbox import bwrap, counting
from tests.conftest import MakeRepo

pytestmark = pytest.mark.slow  # real sandboxes, and a walk of the whole visible file system

needs_bwrap = pytest.mark.skipif(
    not bwrap.probe().works,
    reason=f"bubblewrap cannot make a sandbox here: {bwrap.probe().problem} "
    "(.ci/run installs the bubblewrap package)",
)
REACH = Path(__file__).with_name("reach.py")


def enumerated(make_repo: MakeRepo, tmp_path: Path, files: dict[str, str] | None = None,
               workload: str = "", **sandbox_keys: str) -> list[dict]:
    """The reports of a comparison whose build and workload are reach.py (with ``files``
    in its repository besides; ``workload``: more of the workload's keys)."""
    reports = tmp_path / "reach"
    reports.mkdir()
    keys = "".join(f", {k}: {v}" for k, v in sandbox_keys.items())
    python = sys.executable
    config = (f"version: 1\naa: off\nconfirm: off\n"
              f"sandbox: {{mode: on, writable: ['{reports}']{keys}}}\n"
              f"build: ['{python}', reach.py, build, '{reports}']\n"
              "defaults: {runs: 10, warmup: 0}\n"
              f"workloads:\n  - {{name: reach, run: ['{python}', reach.py, run, '{reports}']"
              f"{workload}}}\n")
    declared = json.dumps({"writable": [str(reports)]})
    repo = make_repo({"benchbot.yml": config, "reach.py": REACH.read_text(),
                      ".reach.json": declared, **(files or {})})
    doc = as_json(engine.compare(engine.Request(repo=repo, base="base", head="HEAD")))
    verdict = doc["benchmarks"][0]["verdict"]
    found = [json.loads(p.read_text()) for p in sorted(reports.glob("*.json"))]
    failures = [v for r in found for v in r["violations"]]
    assert failures == [], "\n".join(failures)
    assert verdict["outcome"] != "invalid", verdict
    return found


@needs_bwrap
@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind not installed "
                    "(.ci/run installs it for the slow tier)")
def test_a_counted_run_reaches_nothing_outside_the_allow_list(make_repo: MakeRepo,
                                                              tmp_path: Path) -> None:
    """The same walk as valgrind's guest (``counts: valgrind``): each place's first run
    reports, and one of them is a counted run. It holds valgrind's descriptors and its
    log, which the rules name (``reach._valgrinds``); it can see and write its own
    directory for valgrind's files, which the worker watches (``counting.ValgrindPlace``),
    and nothing else more than an uncounted run."""
    reports = enumerated(make_repo, tmp_path, workload=", counts: valgrind, timeout: 120s")
    runs = [r for r in reports if r["kind"] == "run"]
    counted = [r for r in runs if r["valgrind"]]
    assert counted, [r.get("valgrind") for r in runs]
    for run in counted:
        assert {p["pid"] for p in run["processes"]} >= {1, run["pid"]}
        assert run["dirs_walked"] >= 1000, run["dirs_walked"]
        # Its valgrind log is among what it inherited, inside the worker's own mount for
        # valgrind's directories.
        logs = [t for t in run["inherited"].values() if "/vg.benchbot." in t]
        assert logs and all(f"/{counting.VALGRIND_ROOT}/run-" in t for t in logs), run["inherited"]
        assert any(m["point"].endswith(f"/{counting.VALGRIND_ROOT}") for m in run["mounts"]), (
            [m["point"] for m in run["mounts"]])


@needs_bwrap
def test_nothing_outside_the_allow_list_is_in_reach(make_repo: MakeRepo, tmp_path: Path) -> None:
    reports = enumerated(make_repo, tmp_path)
    kinds = sorted(r["kind"] for r in reports)
    assert kinds == ["build", "build", "run", "run"], kinds  # each arm's build and first run
    for report in reports:
        # It looked: processes (PID 1 among them), mounts, thousands of directories, the
        # keyrings of this machine, the network tables.
        assert {p["pid"] for p in report["processes"]} >= {1, report["pid"]}
        assert len(report["mounts"]) >= 10 and report["dirs_walked"] >= 1000, report["dirs_walked"]
        assert report["keyrings"]["@s"] == "ENOSYS" and "error" not in report["keyrings"]
        assert report["sockets"]["interfaces"] == ["lo"]
        assert report["writable"], "not even its own worktree was writable"
    runs = [r for r in reports if r["kind"] == "run"]
    for run in runs:
        (worker,) = [p for p in run["processes"] if p["pid"] == 1]
        assert "benchbot.sandbox.worker" in worker["cmdline"]  # the worker is PID 1, no reaper beside it
        assert set(worker["fds"].values()) <= {"!EACCES"} and worker["fds"], worker["fds"]


@needs_bwrap
def test_build_only_s_covers_add_nothing_to_reach_and_take_git_away(
        make_repo: MakeRepo, tmp_path: Path) -> None:
    """``sandbox.build_only``: the runs' sandboxes gain only the covers (a /dev/null over
    a file, an empty directory over one that holds nothing else) and lose the repository's
    .git; the builds keep it."""
    files = {"notes.c": "int a;\n", "src/one.c": "int b;\n", "src/two.c": "int c;\n"}
    reports = enumerated(make_repo, tmp_path, files, build_only="['*.c']")
    for report in reports:
        points = {m["point"]: m for m in report["mounts"]}
        top = report["cwd"]
        if report["kind"] == "run":
            assert report["git_dir"]["sections"] and report["git_dir"]["sections"][0].startswith("!")
            assert points[f"{top}/notes.c"]["root"] == "/null"
            assert points[f"{top}/src"]["fstype"] == "tmpfs"
        else:
            assert not report["git_dir"]["sections"][0].startswith("!")
            assert f"{top}/notes.c" not in points and f"{top}/src" not in points
