"""Instruction counts with real processes: perf's plumbing (a software event standing in for
the hardware counters this VM lacks) and valgrind's cachegrind, in this process and in the
sandbox's worker."""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from benchbot.sandbox import bwrap, counting
from benchbot.sandbox.spawn import ProcessSpawner, SpawnRequest

pytestmark = pytest.mark.real_runs("counting instructions and page faults of real processes: not times")

needs_cc = pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler")
needs_valgrind = pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind not installed")

# Touches argv[1] pages (one page fault each), then does argv[1] * argv[2] units of work.
PROGRAM = r"""
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
    long pages = atol(argv[1]), work = argc > 2 ? atol(argv[2]) : 0;
    volatile char *p = malloc(pages * 4096 + 1);
    for (long i = 0; i < pages; i++) p[i * 4096] = 1;
    unsigned long s = 0;
    for (long i = 0; i < pages * work; i++) s = s * 31 + (unsigned long)i;
    printf("%lu\n", s);
    return argc > 3 ? atoi(argv[3]) : 0;
}
"""


@pytest.fixture(scope="module")
def program(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if shutil.which("cc") is None:
        pytest.skip("no C compiler")
    where = tmp_path_factory.mktemp("counting")
    (where / "p.c").write_text(PROGRAM)
    subprocess.run(["cc", "-O1", "-o", str(where / "p"), str(where / "p.c")], check=True)
    return where / "p"


def req(cwd: Path, *argv: str, count: str | None = None) -> SpawnRequest:
    env = bwrap.clean_env(os.environ)
    return SpawnRequest(argv=argv, cwd=str(cwd), env=tuple(env.items()), timeout_s=60,
                        count=count)


def test_perf_says_in_words_why_it_cannot_count() -> None:
    assert "no hardware counters" in counting.why_not(errno.ENOENT)
    assert "ENOENT" in counting.why_not(errno.ENOENT)
    assert "seccomp" in counting.why_not(errno.EPERM)
    assert "perf_event_open" in counting.why_not(errno.EACCES)
    found = counting.perf_probe()
    assert found is None or "perf_event_open" in found  # this VM: no PMU, ENOENT


def test_the_perf_counter_counts_each_run_and_its_children(tmp_path: Path, program: Path) -> None:
    """The software event standing in: page faults, about one per page touched, of the
    run and of a child it started (through sh), in the order the runs were made."""
    spawner = ProcessSpawner(tmp_path, perf_events=counting.SOFTWARE_TEST)
    try:
        counts = []
        for pages in (2000, 4000, 2000, 1000, 4000):
            run = spawner.spawn(req(tmp_path, "sh", "-c", f"{program} {pages}", count="perf"))
            assert run.returncode == 0 and run.count_error is None
            assert run.instructions is not None and not run.counts_scaled
            counts.append(run.instructions)
        for pages, count in zip((2000, 4000, 2000, 1000, 4000), counts, strict=True):
            assert pages <= count <= pages + 1000, counts
        plain = spawner.spawn(req(tmp_path, str(program), "10"))
        assert plain.instructions is None  # not asked to be counted
    finally:
        spawner.close()


def test_perf_that_cannot_open_says_why_and_the_run_still_counts_as_time(tmp_path: Path) -> None:
    if counting.perf_probe() is None:
        pytest.skip("this machine has hardware counters")
    spawner = ProcessSpawner(tmp_path)
    try:
        run = spawner.spawn(req(tmp_path, "true", count="perf"))
        assert run.returncode == 0 and run.wall_ns > 0 and run.instructions is None
        assert run.count_error is not None and run.count_error.startswith("perf: ")
    finally:
        spawner.close()


@pytest.mark.slow  # valgrind: about 0.4 s a counted run
@needs_valgrind
def test_valgrind_counts_are_exact_and_twice_the_work_reads_twice(tmp_path: Path,
                                                                  program: Path) -> None:
    spawner = ProcessSpawner(tmp_path)
    try:
        once = [spawner.spawn(req(tmp_path, str(program), "50", "40000", count="valgrind"))
                for _ in range(2)]
        twice = spawner.spawn(req(tmp_path, "sh", "-c", f"{program} 100 40000; true",
                                  count="valgrind"))  # sh forks the program, then execs it
    finally:
        spawner.close()
    assert once[0].instructions is not None and once[0].instructions == once[1].instructions
    assert twice.instructions is not None
    assert 1.9 < twice.instructions / once[0].instructions < 2.1  # sh counted too, and small
    assert not list(tmp_path.rglob(f"{counting.VALGRIND_OUT}.*"))  # out files removed
    assert not list((tmp_path / counting.VALGRIND_ROOT).iterdir())  # and their directories


@needs_valgrind
def test_a_failing_counted_run_fails_like_any_run(tmp_path: Path, program: Path) -> None:
    spawner = ProcessSpawner(tmp_path)
    try:
        run = spawner.spawn(req(tmp_path, str(program), "1", "1", "3", count="valgrind"))
    finally:
        spawner.close()
    assert run.returncode == 3 and run.failed and run.instructions is None


@pytest.mark.skipif(not bwrap.probe().works, reason="bubblewrap cannot make a sandbox here")
def test_counting_in_the_sandbox_s_worker(tmp_path: Path, program: Path) -> None:
    """The real worker in bubblewrap: its counter follows a run started inside the sandbox,
    and valgrind is visible there and counts."""
    place = tmp_path / "place"
    place.mkdir()
    shutil.copy(program, place / "p")
    spawner = bwrap.WorkerSpawner(bwrap.choose("on"), tmp_path, bwrap.clean_env(os.environ),
                                    places=[place], perf_events="software-test")
    try:
        runs = spawner.spawn_many([req(place, "sh", "-c", f"./p {pages}", count="perf")
                                   for pages in (3000, 1000)])
        assert [r.count_error for r in runs] == [None, None]
        assert 3000 <= (runs[0].instructions or 0) <= 4000
        assert 1000 <= (runs[1].instructions or 0) <= 2000
        if shutil.which("valgrind"):
            counted = spawner.spawn(req(place, "./p", "20", "100", count="valgrind"))
            assert counted.returncode == 0, counted.stderr_tail
            assert counted.instructions and counted.instructions > 20 * 100
    finally:
        spawner.close()


def test_the_method_chosen_and_why_in_words() -> None:
    none = "this machine has no hardware counters (perf_event_open: ENOENT)"
    both = counting.Means(perf_problem=None, valgrind_problem=None)
    no_perf = counting.Means(perf_problem=none, valgrind_problem=None)
    nothing = counting.Means(perf_problem=none, valgrind_problem="valgrind is not installed")
    assert counting.choose("auto", both)[0] == "perf"
    assert counting.choose("auto", no_perf, run_s=0.2) == ("valgrind", f"valgrind: {none}")
    method, why = counting.choose("auto", no_perf, run_s=1.5)
    assert method is None and "1.50 s, longer than valgrind's limit of 1 s" in why
    assert counting.choose("valgrind", no_perf, run_s=30)[0] == "valgrind"  # asked: no limit
    assert counting.choose("perf", no_perf) == (None, f"perf was asked for, but {none}")
    assert counting.choose("valgrind", nothing) == (
        None, "valgrind was asked for, but valgrind is not installed")
    assert counting.choose("auto", nothing) == (
        None, f"not counted: {none}, and valgrind is not installed")
    assert counting.choose("off", both) == (None, "off in the config")
    assert counting.asked_and_impossible("perf", None)
    assert not counting.asked_and_impossible("auto", None)


# --- the record of valgrind's directory (counting.audit_valgrind) -------------------------

C = counting
CREATE, OPEN, MODIFY, CLOSE_WRITE = C.IN_CREATE, C.IN_OPEN, C.IN_MODIFY, C.IN_CLOSE_WRITE


def _process(pid: int, *logs: int) -> list[tuple[int, str]]:
    """What valgrind alone leaves for one process: its logs (numbered), its out file."""
    events = []
    for n in logs or (1,):
        events += [(CREATE, f"vg.benchbot.{pid}.{n}"), (OPEN, f"vg.benchbot.{pid}.{n}"),
                   (MODIFY, f"vg.benchbot.{pid}.{n}")]
    out = f"cg.benchbot.{pid}"
    last = f"vg.benchbot.{pid}.{logs[-1] if logs else 1}"
    return [*events, (CREATE, out), (OPEN, out), (MODIFY, out), (CLOSE_WRITE, out),
            (CLOSE_WRITE, last)]


def _audit(tmp_path: Path, events: list[tuple[int, str]]) -> tuple[frozenset[int], str | None]:
    for _, name in events:
        if name.startswith("cg.") and not (tmp_path / name).exists():
            (tmp_path / name).write_text("summary: 1\n")
    return counting.audit_valgrind(events, tmp_path)


def test_what_valgrind_alone_makes_is_accepted(tmp_path: Path) -> None:
    # The first process, a forked child, and a forked child that exec'd (a second log).
    events = _process(10) + _process(11) + _process(12, 1, 2)
    assert _audit(tmp_path, events) == (frozenset({10, 11, 12}), None)


def test_a_whole_count_refuses_a_forked_child_s_exec(tmp_path: Path) -> None:
    # metric: instructions and a suite's counted runs: what a forked child ran before its
    # exec is lost to valgrind, so its exec leaves the run with no count at all
    exec_d = _process(10) + _process(11) + _process(12, 1, 2)
    pids, problem = _audit(tmp_path, exec_d)
    assert pids == frozenset({10, 11, 12}) and problem is None  # beside time: accepted
    pids, problem = counting.audit_valgrind(exec_d, tmp_path, whole=True)
    assert pids == frozenset() and problem is not None
    assert "process 12 exec'd after a fork" in problem
    (tmp_path / "cg.benchbot.12").unlink()
    assert counting.audit_valgrind(_process(10) + _process(11), tmp_path, whole=True) == (
        frozenset({10, 11}), None)  # a fork without an exec is whole


def test_only_a_count_that_settles_alone_is_asked_to_be_whole() -> None:
    from benchbot.config import load as cfg
    from benchbot.run import runner
    from benchbot.suites import fixedwork

    doc = cfg.parse_config_bytes(b"version: 1\nworkloads:\n  - {name: a, run: ./a}\n"
                                 b"  - {name: b, run: ./b, metric: instructions}\n", "x.yml")
    target = runner.Target(argv=("./a",), cwd=Path("/w"))
    by = {w.name: w for w in doc.workloads}
    assert not runner.request(target, by["a"], {}, "valgrind").whole
    assert runner.request(target, by["b"], {}, "valgrind").whole
    assert not runner.request(target, by["b"], {}, "perf").whole
    suite = fixedwork.request(("./s",), "/w", {}, recipe=fixedwork.GO, bench="BenchmarkX",
                              select="BenchmarkX", n=10, task=0, filter_=None, timeout_s=10.0,
                              method="valgrind")
    assert suite.whole and SpawnRequest.from_json(suite.to_json()).whole


@pytest.mark.parametrize(("events", "says"), [
    ([*_process(10), (OPEN, "cg.benchbot.10"), (MODIFY, "cg.benchbot.10"),
      (CLOSE_WRITE, "cg.benchbot.10")], "not made, written and closed once"),
    ([*_process(10), (MODIFY, "cg.benchbot.10")], "written after valgrind closed it"),
    ([*_process(10), (OPEN, "cg.benchbot.10"), (C.IN_CLOSE_NOWRITE, "cg.benchbot.10")],
     "not made, written and closed once"),
    ([*_process(10), (CREATE, "vg.benchbot.11.1"), (OPEN, "vg.benchbot.11.1")],
     "process 11 never reached its end"),
    ([(CREATE, "vg.benchbot.10.1"), (OPEN, "vg.benchbot.10.1"), (MODIFY, "vg.benchbot.10.1"),
      (OPEN, "vg.benchbot.10.1"), *_process(10)[3:]], "process 10 exec'd"),
    (_process(10) + _process(11)[3:-1], "made for no process valgrind started"),
    ([*_process(10), (CREATE, "answers")], "made 'answers'"),
    ([*_process(10), (CREATE, "cg.benchbot.10.1")], "made 'cg.benchbot.10.1'"),
    ([*_process(10), (C.IN_DELETE, "cg.benchbot.10")], "deleted during the run"),
    ([*_process(10), (C.IN_MOVED_TO, "cg.benchbot.10")], "renamed in during the run"),
    ([*_process(10), (C.IN_ATTRIB, "cg.benchbot.10")], "changed (attributes)"),
    ([*_process(10), (CREATE, "../own")], "next to valgrind's directory (own created)"),
    ([*_process(10), (C.IN_ATTRIB, "..")], "the directory holding it changed"),
    ([*_process(10), (C.IN_Q_OVERFLOW, "")], "too many events"),
    ([*_process(10), (C.IN_DELETE_SELF, "")], "valgrind's directory was deleted"),
    ([], "valgrind started no process"),
])
def test_anything_else_on_the_record_is_no_count(tmp_path: Path, events: list[tuple[int, str]],
                                                  says: str) -> None:
    pids, problem = _audit(tmp_path, events)
    assert pids == frozenset() and problem is not None and says in problem, problem


def test_an_out_file_with_a_second_name_is_no_count(tmp_path: Path) -> None:
    (tmp_path / "cg.benchbot.10").write_text("summary: 1\n")
    os.link(tmp_path / "cg.benchbot.10", tmp_path.parent / f"{tmp_path.name}-elsewhere")
    _pids, problem = counting.audit_valgrind(_process(10), tmp_path)
    assert problem is not None and "not a file of its own" in problem


def test_read_valgrind_takes_exactly_the_processes_on_the_record(tmp_path: Path) -> None:
    for pid, n in ((10, 5), (11, 7)):
        (tmp_path / f"cg.benchbot.{pid}").write_text(f"events: Ir\nsummary: {n}\n")
    assert counting.read_valgrind(tmp_path, frozenset({10, 11})) == counting.Count(instructions=12, ll_misses=None)
    for pid in (10, 11):
        (tmp_path / f"cg.benchbot.{pid}").write_text("events: Ir\nsummary: 1\n")
    assert counting.read_valgrind(tmp_path, frozenset({10})) is None  # one more on disk


def test_what_valgrind_said_leaves_out_its_preamble_and_its_counts(tmp_path: Path) -> None:
    (tmp_path / "vg.benchbot.7.1").write_text(
        "==7== Cachegrind, a cache and branch-prediction profiler\n"
        "==7== Copyright (C) 2002-2017, and GNU GPL'd, by Nicholas Nethercote et al.\n"
        "==7== Using Valgrind-3.19.0 and LibVEX; rerun with -h for copyright info\n"
        "==7== Command: ./p\n==7== \n"
        "--7-- warning: L3 cache found, using its data for the LL simulation.\n"
        "==7== Warning: Can't execute setuid/setgid/setcap executable: /usr/bin/su\n"
        "==7== \n==7== I   refs:      180,108,493\n")
    assert counting.valgrind_said(tmp_path) == (
        "Warning: Can't execute setuid/setgid/setcap executable: /usr/bin/su")
    (tmp_path / "vg.benchbot.7.1").write_text("==7== Command: ./p\n==7== I   refs:      12\n")
    assert counting.valgrind_said(tmp_path) == ""


# --- a profiled run (callgrind: its out file made as the process starts) -------------------


def _profiled(pid: int) -> list[tuple[int, str]]:
    """What callgrind alone leaves for one process: its log; its out file created and
    closed unwritten as it starts, then opened, written and closed as it ends."""
    log, out = f"vg.benchbot.{pid}.1", f"cg.benchbot.{pid}"
    return [(CREATE, log), (OPEN, log), (MODIFY, log), (CREATE, out), (OPEN, out),
            (CLOSE_WRITE, out), (MODIFY, log), (OPEN, out), (MODIFY, out), (CLOSE_WRITE, out),
            (CLOSE_WRITE, log)]


def test_callgrind_s_way_of_making_its_file_is_accepted_for_callgrind_only(
        tmp_path: Path) -> None:
    for pid in (10, 11):
        (tmp_path / f"cg.benchbot.{pid}").write_text("summary: 1\n")
    events = _profiled(10) + _profiled(11)
    assert counting.audit_valgrind(events, tmp_path, whole=True, tool="callgrind") == (
        frozenset({10, 11}), None)
    _pids, problem = counting.audit_valgrind(events, tmp_path)  # not cachegrind's way
    assert problem is not None and "not made, written and closed once" in problem
    # and cachegrind's way is not callgrind's
    _pids, problem = counting.audit_valgrind(_process(10), tmp_path, tool="callgrind")
    assert problem is not None and "not made, written and closed once" in problem


@pytest.mark.parametrize("events", [
    # written by another process between callgrind's two openings (its own is overwritten
    # at the end, but the record shows a writer that is not callgrind's)
    [*_profiled(10)[:6], (OPEN, "cg.benchbot.10"), (MODIFY, "cg.benchbot.10"), (CLOSE_WRITE, "cg.benchbot.10"), *_profiled(10)[6:]],
    # written before callgrind's first close, within its first opening
    [*_profiled(10)[:5], (MODIFY, "cg.benchbot.10"), *_profiled(10)[5:]],
    # opened again after callgrind wrote it
    [*_profiled(10), (OPEN, "cg.benchbot.10"), (MODIFY, "cg.benchbot.10"),
     (CLOSE_WRITE, "cg.benchbot.10")],
    # killed before callgrind wrote it: created at the start, never written
    [*_profiled(10)[:7], (CLOSE_WRITE, "vg.benchbot.10.1")],
])
def test_a_profiled_run_s_record_otherwise_is_no_profile(
        tmp_path: Path, events: list[tuple[int, str]]) -> None:
    (tmp_path / "cg.benchbot.10").write_text("summary: 1\n")
    pids, problem = counting.audit_valgrind(events, tmp_path, whole=True, tool="callgrind")
    assert pids == frozenset() and problem is not None, events
