"""A google-benchmark suite counted in one process per build, for real: the generated
suite of benchmarks/suitegen.py (25 benchmarks, the ``changed`` scenario: ten +5%, three
-5%) built with g++ against the installed libbenchmark, counted by suitecount under
valgrind with a real ProcessSpawner; and heads that try to move the split's counts
(writing an out file in valgrind's directory, running fewer repetitions than asked):
none gets a count from the split. Slow tier; skips without g++, libbenchmark or valgrind."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from benchbot.sandbox import counting
from benchbot.sandbox.spawn import ProcessSpawner
from benchbot.suites import suitecount
from benchmarks import suitegen
from tests.suites import harnesses

pytestmark = pytest.mark.slow

# A benchmark that, at the process's end (after callgrind's last dump, before its own
# out file is written), finds valgrind's directory through valgrind's own log descriptor
# and writes a part of its own there: "add", the next number, a copy of the last part
# (its header made to match); "rewrite", the first part written again.
FORGER = r'''
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>
static void Forge() {
  const char* how = std::getenv("TRICK");
  if (!how) return;
  std::string dir;
  for (int fd = 0; fd < 4096 && dir.empty(); ++fd) {
    char path[64], target[PATH_MAX];
    std::snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(path, target, sizeof target - 1);
    if (n <= 0) continue;
    target[n] = 0;
    std::string t(target);
    if (t.find("/vg.benchbot.") != std::string::npos) dir = t.substr(0, t.rfind('/'));
  }
  if (dir.empty()) return;
  std::string out = dir + "/cg.benchbot." + std::to_string(getpid());
  int last = 0;
  while (access((out + "." + std::to_string(last + 1)).c_str(), F_OK) == 0) ++last;
  if (last == 0) return;
  if (std::string(how) == "rewrite") {
    std::ofstream(out + ".1", std::ios::app) << "\n";
    return;
  }
  // a part as callgrind writes one (not read from its parts: reading one is on the record)
  std::ofstream(out + "." + std::to_string(last + 1))
      << "# callgrind format\nversion: 1\ncreator: callgrind-3.19.0\npid: " << getpid()
      << "\npart: " << last + 1 << "\n\ndesc: Timerange: Basic block 0 - 1000\n"
      << "desc: Trigger: --dump-before=benchmark::State::FinishKeepRunning()\n\n"
      << "positions: line\nevents: Ir\nsummary: 1000\n\nfn=(1) x\n0 1000\n\ntotals: 1000\n";
}
static int forging = std::atexit(Forge);
'''


def _need() -> None:
    why = harnesses.missing("google-benchmark")
    if why:
        pytest.skip(why)
    if shutil.which("valgrind") is None:
        pytest.skip("valgrind is not installed (the counted runs need it)")


def _build(root: Path, side: str, *, extra: str = "", text: str | None = None) -> Path:
    where = root / side
    where.mkdir(parents=True)
    source = text if text is not None else suitegen.cc_files("changed", "head" if side.startswith(
        "head") else "base")["bench.cc"]
    (where / "bench.cc").write_text(source.replace("BENCHMARK_MAIN();", extra + "BENCHMARK_MAIN();"))
    subprocess.run(["g++", "-O2", "-o", "bench", "bench.cc", "-lbenchmark", "-lpthread"],
                   cwd=where, check=True, capture_output=True)
    return where


def _count(root: Path, base: Path, head: Path, again: Path, env: dict[str, str],
           names: list[str]) -> suitecount.Counted:
    workloads = [SimpleNamespace(name=f"gbench/{n}", suite="gbench", bench=n, select=n, env=(),
                                 pin=None, timeout_s=30.0, counts="auto", parity=0.02)
                 for n in names]

    def target(where: Path) -> dict[str, SimpleNamespace]:
        return {"gbench": SimpleNamespace(argv=("./bench", "--benchmark_format=json"),
                                          cwd=str(where))}

    spawner = ProcessSpawner(root / "scratch")
    (root / "scratch").mkdir()
    try:
        setting = suitecount.Setting(
            config=SimpleNamespace(workloads=workloads),  # type: ignore[arg-type]
            base=target(base), head=target(head), again=target(again),  # type: ignore[arg-type]
            harnesses={"gbench": SimpleNamespace(format="google-benchmark", filter=None)},  # type: ignore[dict-item]
            figures={w.name: SimpleNamespace(ns=20_000.0, index=i, bytes_op=None)  # type: ignore[misc]
                     for i, w in enumerate(workloads)},
            spawner=spawner, env=env, clock=time.monotonic, seed=3,
            means=counting.Means(perf_problem="no counters (a test)", valgrind_problem=None))
        return suitecount.count_all(setting, [w.name for w in workloads], deadline=None)
    finally:
        spawner.close()


ENV = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}


def test_the_generated_suite_is_split_and_reads_what_its_head_did(tmp_path: Path) -> None:
    _need()
    base, head = _build(tmp_path, "base"), _build(tmp_path, "head")
    again = _build(tmp_path, "again")
    names = [f"BM_{n}" for n in suitegen.names("gbench", "changed")]
    started = time.monotonic()
    got = _count(tmp_path, base, head, again, ENV, names)
    took = time.monotonic() - started
    how, runs, _ = got.suites["gbench"]
    assert how.startswith("split: "), how
    assert "also counted one by one as a check, and agreed" in how
    split = [n for n, c in got.counts.items() if c.why.startswith("valgrind: one callgrind")]
    assert len(split) >= len(names) - 4, how  # two whose containers grow are one by one
    for name, c in got.counts.items():
        assert c.method == "valgrind", (name, c.why)
        change = c.head[0] / c.base[0] - 1
        truth = suitegen.expected(name.split("_", 1)[1], "changed")
        if truth == "more":
            assert 0.04 < change < 0.06, (name, change)
        elif truth == "less":
            assert -0.06 < change < -0.04, (name, change)
        else:
            assert abs(change) < 0.001, (name, change)
        if name in split:
            assert c.base_again == c.base  # one process per build: the same to the instruction
    # 3 processes and the check's 5 runs (and the few counted one by one) against 5 a
    # benchmark: well under half of it, whatever the load
    assert runs < 2 * len(names), runs
    print(f"counted {len(names)} benchmarks in {took:.1f} s, {runs} counted runs: {how}")
