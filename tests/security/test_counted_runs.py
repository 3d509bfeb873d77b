"""No process of a counted run can make its count smaller than its work (docs/security.md,
"Counts").

A head that does ten times base's work tries each trick of ``tricks.c`` on valgrind's
counting: rewrite a forked child's out file after it exits (found through valgrind's log,
which a counted process holds), kill the child before valgrind writes it, exec after the
work (valgrind counts the new program from zero; with execve or execveat), exec a setuid
program after the work, remove valgrind's preload and exec, link
a file of its own in place of the child's out file (from the worker's scratch, or from
beside valgrind's directory). Each counted run comes out with no
count or with all of its work; each comparison, on the counts alone (``metric:
instructions``) or on time with the counts beside it, never reads ``faster`` or ``level``.
All of it for real: C programs built with cc, each arm's runs made by its own worker in
bubblewrap, counted by valgrind.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from benchbot.measure import engine
from benchbot.results.resultsdir import to_json as as_json
from benchbot.sandbox import bwrap
from benchbot.sandbox.spawn import SpawnRequest
from tests.conftest import MakeRepo

pytestmark = [
    pytest.mark.slow,  # valgrind: about a second a counted run of the 10x head
    pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler"),
    pytest.mark.skipif(shutil.which("valgrind") is None,
                       reason="valgrind not installed (.ci/run installs it for the slow tier)"),
    pytest.mark.skipif(not bwrap.probe().works,
                       reason=f"bubblewrap cannot make a sandbox here: {bwrap.probe().problem}"),
]

SOURCE = Path(__file__).with_name("tricks.c")
TRICKS = ["overwrite", "kill", "exec", "execveat", "setuid", "preload", "link", "linkbeside"]
# Caught by the record of valgrind's directory: no count (the others count all the work).
CAUGHT = ("overwrite", "kill", "exec", "execveat", "linkbeside")
# A count that settles a verdict by itself (metric: instructions, a suite's counted run) must
# be the whole run's: a forked child's exec, which loses what the child ran before it, is
# refused there too (SpawnRequest.whole).
WHOLE_CAUGHT = (*CAUGHT, "forkexec", "preload")
BASE_UNITS, HEAD_UNITS = 2000, 20000


def _run(cwd: Path, units: int, how: str, *, whole: bool = False) -> SpawnRequest:
    env = tuple(sorted(bwrap.clean_env(os.environ).items()))
    return SpawnRequest(argv=("./t", str(units), how), cwd=str(cwd), env=env, timeout_s=120.0,
                        count="valgrind", whole=whole)


def test_a_whole_count_is_none_where_a_forked_child_exec_d(tmp_path: Path) -> None:
    place = tmp_path / "place"
    place.mkdir()
    subprocess.run(["cc", "-O1", "-o", str(place / "t"), str(SOURCE)], check=True)
    (tmp_path / "scratch").mkdir()
    spawner = bwrap.WorkerSpawner(bwrap.choose("on"), tmp_path / "scratch",
                                    bwrap.clean_env(os.environ), places=[place])
    try:
        honest = spawner.spawn(_run(place, HEAD_UNITS, "plain", whole=True))
        loose = spawner.spawn(_run(place, HEAD_UNITS, "forkexec"))
        tried = {how: spawner.spawn(_run(place, HEAD_UNITS, how, whole=True))
                 for how in (*TRICKS, "forkexec")}
    finally:
        spawner.close()
    assert honest.instructions is not None and honest.instructions > HEAD_UNITS * 1000
    # beside time, the forked child's work before its exec is lost (docs/security.md)
    assert loose.instructions is not None and loose.instructions < 0.1 * honest.instructions
    for how, run in tried.items():
        assert run.instructions is None or run.instructions >= 0.99 * honest.instructions, (
            how, run.instructions, honest.instructions, run.count_error)
    assert tried["forkexec"].instructions is None
    assert "exec'd after a fork" in (tried["forkexec"].count_error or "")


def test_every_trick_in_the_sandbox_s_worker_gives_no_count_or_all_of_the_work(
        tmp_path: Path) -> None:
    place = tmp_path / "place"
    place.mkdir()
    subprocess.run(["cc", "-O1", "-o", str(place / "t"), str(SOURCE)], check=True)
    (tmp_path / "scratch").mkdir()
    spawner = bwrap.WorkerSpawner(bwrap.choose("on"), tmp_path / "scratch",
                                    bwrap.clean_env(os.environ), places=[place])
    try:
        honest = spawner.spawn(_run(place, HEAD_UNITS, "plain"))
        tried = {how: spawner.spawn(_run(place, HEAD_UNITS, how)) for how in TRICKS}
    finally:
        spawner.close()
    assert honest.instructions is not None and honest.instructions > HEAD_UNITS * 1000
    for how, run in tried.items():
        assert run.returncode == 0, (how, run)
        assert run.instructions is None or run.instructions >= 0.99 * honest.instructions, (
            how, run.instructions, honest.instructions, run.count_error)
    # The tricks the record catches say why; the others (a setuid program valgrind will not
    # exec, the preload's removal and an exec in a forked child before any work, a link
    # the sandbox's mount refuses) count it all.
    for how in CAUGHT:
        error = tried[how].count_error
        assert tried[how].instructions is None and error and error.startswith(
            "valgrind: not counted: "), (how, tried[how])
    assert "was not made, written and closed once" in (tried["overwrite"].count_error or "")
    assert "never reached its end" in (tried["kill"].count_error or "")
    assert "exec'd" in (tried["exec"].count_error or "")
    assert "next to valgrind's directory" in (tried["linkbeside"].count_error or "")


def _repo(make_repo: MakeRepo, how: str, metric: str) -> Path:
    config = ("version: 1\nbuild: make\naa: off\nconfirm: off\n"
              f"workloads:\n  - {{name: t, run: ./t, counts: valgrind{metric}}}\n")
    make = "t: t.c\n\tcc -O1 -DUNITS={units} -DHOW='\"{how}\"' -o t t.c\n"
    return make_repo({"benchbot.yml": config, "t.c": SOURCE.read_text(),
                      "Makefile": make.format(units=BASE_UNITS, how="plain")},
                     {"Makefile": make.format(units=HEAD_UNITS, how=how)})


@pytest.mark.parametrize("how", [*TRICKS, "forkexec"])
def test_a_ten_times_slower_head_is_never_faster_or_level_on_the_counts(
        make_repo: MakeRepo, how: str) -> None:
    repo = _repo(make_repo, how, ", metric: instructions")
    doc = as_json(engine.compare(engine.Request(repo=repo, base="base", head="HEAD")))
    (bench,) = doc["benchmarks"]
    outcome = bench["verdict"]["outcome"]
    assert outcome not in ("faster", "level"), bench["verdict"]
    # Where the trick is caught there is no count to call on (invalid); where it is not,
    # the count holds all the work (slower).
    assert outcome == ("invalid" if how in WHOLE_CAUGHT else "slower"), bench


@pytest.mark.parametrize("how", CAUGHT)
def test_a_ten_times_slower_head_is_never_faster_or_level_with_counts_beside_time(
        make_repo: MakeRepo, how: str) -> None:
    repo = _repo(make_repo, how, ", max_runs: 30")
    doc = as_json(engine.compare(engine.Request(repo=repo, base="base", head="HEAD")))
    (bench,) = doc["benchmarks"]
    assert bench["verdict"]["outcome"] not in ("faster", "level"), bench["verdict"]


# A run that tries to switch off the perf counters attached to it, and lists what it holds:
# exits 0 when the prctl is refused with EINVAL, another prctl works, and no descriptor is
# a perf counter.
PRCTL = r"""
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>
int main(void) {
    int off = prctl(PR_TASK_PERF_EVENTS_DISABLE, 0, 0, 0, 0), off_errno = errno;
    int on = prctl(PR_TASK_PERF_EVENTS_ENABLE, 0, 0, 0, 0), on_errno = errno;
    int named = prctl(PR_SET_NAME, "counted", 0, 0, 0);
    int counters = 0;
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    while (d && (e = readdir(d))) {
        char link[300], target[256];
        snprintf(link, sizeof link, "/proc/self/fd/%s", e->d_name);
        ssize_t n = readlink(link, target, sizeof target - 1);
        if (n > 0) { target[n] = 0; if (strstr(target, "perf_event")) counters++; }
    }
    printf("%d %d %d %d %d %d\n", off, off_errno, on, on_errno, named, counters);
    return off == -1 && off_errno == EINVAL && on == -1 && on_errno == EINVAL && named == 0
           && counters == 0 ? 0 : 1;
}
"""


def test_no_run_can_switch_off_the_perf_counter_nor_holds_one(tmp_path: Path) -> None:
    """The worker's counter counts each run through the kernel's inherited copy, which a
    process may switch off with prctl: the sandbox's seccomp filter refuses it. The
    software event stands in for the hardware counters a VM may not have."""
    place = tmp_path / "place"
    place.mkdir()
    (place / "p.c").write_text(PRCTL)
    subprocess.run(["cc", "-O1", "-o", str(place / "t"), str(place / "p.c")], check=True)
    (tmp_path / "scratch").mkdir()
    spawner = bwrap.WorkerSpawner(bwrap.choose("on"), tmp_path / "scratch",
                                    bwrap.clean_env(os.environ), places=[place],
                                    perf_events="software-test")
    env = tuple(sorted(bwrap.clean_env(os.environ).items()))
    try:
        runs = [spawner.spawn(SpawnRequest(argv=("./t",), cwd=str(place), env=env,
                                           timeout_s=30.0, count=count))
                for count in (None, "perf")]
    finally:
        spawner.close()
    for run in runs:
        assert run.returncode == 0, run
    assert runs[1].instructions is not None or runs[1].count_error, runs[1]


# --- a suite's counted runs --------------------------------------------------------------

# The head's main for the google-benchmark suite of tests/suites/harnesses.py: the
# benchmarks run in a forked child (or in this process, for exec), then the trick. The
# rewritten count is a twentieth of valgrind's, not a constant: a suite's counts are the
# difference of two counted runs of different lengths, which a constant would not pass.
SUITE_MAIN = r"""
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>

static void valgrind_dir(char *dir, size_t size) {
  dir[0] = 0;
  DIR *d = opendir("/proc/self/fd");
  while (struct dirent *e = d ? readdir(d) : nullptr) {
    char link[300], target[4096];
    snprintf(link, sizeof link, "/proc/self/fd/%s", e->d_name);
    ssize_t n = readlink(link, target, sizeof target - 1);
    if (n <= 0) continue;
    target[n] = 0;
    char *slash = strrchr(target, '/');
    if (slash && strncmp(slash + 1, "vg.benchbot.", 12) == 0) { *slash = 0; snprintf(dir, size, "%s", target); }
  }
  if (d) closedir(d);
}

int main(int argc, char **argv) {
  const char *how = HOW;
  if (strcmp(how, "exec") == 0) {
    benchmark::Initialize(&argc, argv);
    benchmark::RunSpecifiedBenchmarks();
    fflush(stdout);
    execl("/bin/true", "true", (char *)nullptr);
    return 9;
  }
  char dir[4096], path[4200];
  valgrind_dir(dir, sizeof dir);
  int ready[2];
  if (pipe(ready) != 0) return 9;
  pid_t child = fork();
  if (child == 0) {
    close(ready[0]);
    benchmark::Initialize(&argc, argv);
    benchmark::RunSpecifiedBenchmarks();
    fflush(stdout);
    if (write(ready[1], "x", 1) < 0) {}
    if (strcmp(how, "kill") == 0) pause();
    if (strcmp(how, "forkexec") == 0) execl("/bin/true", "true", (char *)nullptr);
    _exit(0);
  }
  close(ready[1]);
  char c;
  if (read(ready[0], &c, 1) < 0) {}
  if (strcmp(how, "kill") == 0) kill(child, SIGKILL);
  int status;
  waitpid(child, &status, 0);
  snprintf(path, sizeof path, "%s/cg.benchbot.%d", dir, (int)child);
  if (strcmp(how, "overwrite") == 0 && dir[0]) {
    // A twentieth of what valgrind counted: a count that still grows with the work.
    long counted = 0;
    char line[4096];
    if (FILE *in = fopen(path, "r")) {
      while (fgets(line, sizeof line, in))
        if (strncmp(line, "summary: ", 9) == 0) counted = atol(line + 9);
      fclose(in);
    }
    if (FILE *out = fopen(path, "w")) {
      fprintf(out, "events: Ir\nsummary: %ld\n", counted / 20);
      fclose(out);
    }
  }
  return 0;
}
"""


@pytest.mark.parametrize("how", ["overwrite", "kill", "exec", "forkexec"])
def test_a_suite_s_ten_times_slower_benchmark_is_never_faster_or_level(
        make_repo: MakeRepo, how: str) -> None:
    from tests.suites import harnesses

    why = harnesses.missing("google-benchmark")
    if why:
        pytest.skip(why)
    head = harnesses._gb_source(harnesses.BASE_WORK * 10).replace(
        "BENCHMARK_MAIN();", f'#define HOW "{how}"\n' + SUITE_MAIN)
    project = harnesses._project(
        make_repo, suite="core", fmt="google-benchmark",
        build="g++ -O2 -o bench bench.cc -lbenchmark -lpthread",
        run=("./bench", "--benchmark_format=json", "--benchmark_min_time=0.01"),
        filter_=("--benchmark_filter={regex}",),
        base={"bench.cc": harnesses._gb_source(harnesses.BASE_WORK)}, head={"bench.cc": head},
        expected={}, settings=harnesses.FAST_SETTINGS, top={"counts": "valgrind"},
        name=f"gbtrick-{how}")
    doc = as_json(engine.compare(engine.Request(repo=project.repo, base="base", head="HEAD")))
    got = {b["name"].removeprefix("core/"): b for b in doc["benchmarks"]}
    hashed = got["BM_Hash"]
    assert hashed["verdict"]["outcome"] not in ("faster", "level"), hashed["verdict"]
    # Its counts are refused (never read down), and time calls ten times the work.
    assert hashed["counts"]["method"] is None, hashed["counts"]
    assert hashed["verdict"]["outcome"] == "slower", hashed["verdict"]
