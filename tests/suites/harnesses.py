"""Small real projects for the suite tests: one per harness, a git repository with a base
and a head commit in which exactly one of three benchmarks does half as much work again.

Each generator writes the project with ``make_repo`` (``tests/conftest.py``): the
benchmark source, and a ``benchbot.yml`` whose ``build:`` compiles it and whose one suite
runs it with options that keep one run of the harness short (well under a second where
the harness allows it: libtest's own loop takes about a second). It returns a ``Project``:
the repository, the suite, and what a comparison should find for each benchmark, keyed
by the harness's own name for it (Go's without the ``-<GOMAXPROCS>`` suffix).

``missing(fmt)`` says why a harness's toolchain is not here (None where it is), for a
test to skip with; ``build_and_run`` builds one revision by hand and runs its harness
once, without benchbot, to check a generator or to save a real output.

The planted change is 1.5 times the work in one benchmark; the others run the same code
at both revisions. Tests judge them with ``parity: 0.1``: a change of code elsewhere in
a binary moves functions and their alignment, which can shift an untouched benchmark by
a few per cent for real, and that is not what these tests are about.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from tests.conftest import MakeRepo

Expected = Literal["slower", "unchanged"]  # unchanged: level or inconclusive, never called

BASE_WORK = 20000  # xorshift rounds of a benchmark's one operation, at both revisions
PLANTED_WORK = 30000  # the planted benchmark's at the head: 1.5 times the work
PY_BASE_WORK = 2000  # the same for the Python harnesses, whose rounds are slower
# Twice the work there: a Python harness's values spread far more on a loaded machine (a
# CI run of pyperf's read +31% for 1.5x in its confirmation, with an interval too wide to
# call it), and a test's planted change must be certain whatever the load.
PY_PLANTED_WORK = 4000

# Suite settings the tests start from: a planted 1.5x is far outside parity 0.1, and 10
# fixed pairs a phase (A/A, A/B, then the confirmation of what A/B called) are enough to
# call it. Measuring sequentially would take more: a change is called from 51 pairs on.
SETTINGS: Mapping[str, str] = {"parity": "0.1", "runs": "10", "timeout": "60s"}
# For the harnesses whose run takes a tenth of a second or less: 30 pairs a phase cost
# seconds, and keep the interval narrow enough to call 1.5x when other processes keep the
# two cores busy (at load 5-7, 20 pairs left the planted benchmark inconclusive).
FAST_SETTINGS: Mapping[str, str] = {**SETTINGS, "runs": "30"}
# Top-level keys every generated config starts from: the A/A check runs and is reported,
# but a false reading of one benchmark on a machine loaded by others does not abort the
# comparison (abort_fraction 1, as in test_compare.py): these tests are about the A/B
# phase.
TOP: Mapping[str, str] = {"aa": "{abort_fraction: 1}"}


@dataclass(frozen=True, slots=True, kw_only=True)
class Project:
    """A generated repository (tag ``base``, head at ``HEAD``) and what comparing its two
    revisions should find."""

    repo: Path
    suite: str  # the suite's name in benchbot.yml
    fmt: str  # its format
    build: str  # the build command, as benchbot.yml has it
    run: tuple[str, ...]  # the suite's run argv, ``{output}`` not yet replaced
    expected: Mapping[str, Expected]  # the harness's own name of each benchmark -> outcome

    @property
    def planted(self) -> str:
        """The one benchmark the head makes slower."""
        return next(name for name, outcome in self.expected.items() if outcome == "slower")


def _yaml_list(items: tuple[str, ...] | list[str]) -> str:
    """A flow list of single-quoted YAML strings (a quote is doubled)."""
    return "[" + ", ".join("'" + item.replace("'", "''") + "'" for item in items) + "]"


def config(*, suite: str, fmt: str, build: str, run: tuple[str, ...], filter_: tuple[str, ...] = (),
           settings: Mapping[str, str] = SETTINGS, top: Mapping[str, str] | None = None) -> str:
    """A benchbot.yml with one suite; ``settings`` are the suite's own keys (parity,
    max_runs, env, ...), ``top`` top-level keys (budget, aa, sandbox, ...), both as YAML
    text."""
    lines = ["version: 1", f"build: {_yaml_list([build])[1:-1]}"]
    lines += [f"{key}: {value}" for key, value in {**TOP, **(top or {})}.items()]
    lines += ["suites:", f"  - name: {suite}", f"    run: {_yaml_list(run)}", f"    format: {fmt}"]
    if filter_:
        lines.append(f"    filter: {_yaml_list(filter_)}")
    lines += [f"    {key}: {value}" for key, value in settings.items()]
    return "\n".join(lines) + "\n"


def _project(make_repo: MakeRepo, *, suite: str, fmt: str, build: str, run: tuple[str, ...],
             filter_: tuple[str, ...], base: Mapping[str, str], head: Mapping[str, str],
             expected: Mapping[str, Expected], settings: Mapping[str, str] | None,
             top: Mapping[str, str] | None, name: str) -> Project:
    text = config(suite=suite, fmt=fmt, build=build, run=run, filter_=filter_,
                  settings=SETTINGS if settings is None else settings, top=top)
    repo = make_repo({"benchbot.yml": text, **base}, head, name=name)
    return Project(repo=repo, suite=suite, fmt=fmt, build=build, run=run, expected=expected)


# --- google-benchmark (C++, Debian's libbenchmark-dev) ---------------------------------

GB_SOURCE = """\
// Three benchmarks for benchbot's tests: the same kernel, run WORK rounds per operation.
#include <benchmark/benchmark.h>
#include <cstdint>
#include <cstring>
#include <vector>

static std::uint64_t mix(std::uint64_t seed, long rounds) {
  std::uint64_t x = seed | 1;
  for (long i = 0; i < rounds; ++i) {
    x ^= x << 13; x ^= x >> 7; x ^= x << 17;
    benchmark::DoNotOptimize(x);
  }
  return x;
}

static void BM_Hash(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(mix(3, HASH_WORK));
}
BENCHMARK(BM_Hash);

static void BM_Sum(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(mix(5, BASE_WORK));
}
BENCHMARK(BM_Sum);

// An argument: its name is "BM_Fill/64", a "/" for the filter to escape.
static void BM_Fill(benchmark::State& state) {
  std::vector<std::uint64_t> v(state.range(0));
  for (auto _ : state) {
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = mix(i, BASE_WORK / 64);
    benchmark::DoNotOptimize(v.data());
  }
}
BENCHMARK(BM_Fill)->Arg(64);

BENCHMARK_MAIN();
"""


# A project's own main, as many have: it parses benchbot's flags but does not call
# ReportUnrecognizedArguments, so google-benchmark 1.7 exits 0 on a flag it cannot parse
# (--benchmark_min_time=2x) and runs by time instead.
GB_OWN_MAIN = """\
int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
"""


def _gb_source(hash_work: int, *, own_main: bool = False) -> str:
    defines = f"#define BASE_WORK {BASE_WORK}\n#define HASH_WORK {hash_work}\n"
    source = GB_SOURCE.replace("#include <benchmark/benchmark.h>", defines + "#include <benchmark/benchmark.h>")
    return source.replace("BENCHMARK_MAIN();\n", GB_OWN_MAIN) if own_main else source


def google_benchmark(make_repo: MakeRepo, *, settings: Mapping[str, str] | None = None,
                     top: Mapping[str, str] | None = None, name: str = "gbench",
                     own_main: bool = False) -> Project:
    """A C++ program on google-benchmark: ``BM_Hash`` (planted), ``BM_Sum``, ``BM_Fill/64``;
    about 10 ms a benchmark (``--benchmark_min_time=0.01``: seconds, the number alone,
    as libbenchmark 1.7 takes it; 1.8 also takes ``0.01s``). ``own_main``: the project's
    own main (``GB_OWN_MAIN``) instead of BENCHMARK_MAIN."""
    return _project(
        make_repo, suite="core", fmt="google-benchmark",
        build="g++ -O2 -o bench bench.cc -lbenchmark -lpthread",
        run=("./bench", "--benchmark_format=json", "--benchmark_min_time=0.01"),
        filter_=("--benchmark_filter={regex}",),
        base={"bench.cc": _gb_source(BASE_WORK, own_main=own_main)},
        head={"bench.cc": _gb_source(PLANTED_WORK, own_main=own_main)},
        expected={"BM_Hash": "slower", "BM_Sum": "unchanged", "BM_Fill/64": "unchanged"},
        settings=FAST_SETTINGS if settings is None else settings, top=top, name=name,
    )  # fmt: skip


# --- Go (go test -bench, Debian's golang-go) --------------------------------------------

GO_MOD = "module example.com/work\n\ngo 1.19\n"
GO_SOURCE = """\
// Package work holds three small kernels for benchbot's tests.
package work

// Mix scrambles a seed with rounds of xorshift.
func Mix(seed uint64, rounds int) uint64 {
	x := seed | 1
	for i := 0; i < rounds; i++ {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	return x
}

// Hash is one operation of BenchmarkHash.
func Hash(seed uint64) uint64 { return Mix(seed, HASH_WORK) }

// Sum is one operation of BenchmarkSum.
func Sum(seed uint64) uint64 { return Mix(seed, BASE_WORK) }

// Fill returns n mixed values: one allocation an operation, for -benchmem.
func Fill(n int) []uint64 {
	out := make([]uint64, n)
	for i := range out {
		out[i] = Mix(uint64(i), BASE_WORK/n)
	}
	return out
}
"""
GO_TEST = """\
package work

import "testing"

var sink uint64

func BenchmarkHash(b *testing.B) {
	for i := 0; i < b.N; i++ {
		sink += Hash(uint64(i))
	}
}

func BenchmarkSum(b *testing.B) {
	for i := 0; i < b.N; i++ {
		sink += Sum(uint64(i))
	}
}

func BenchmarkFill(b *testing.B) {
	for i := 0; i < b.N; i++ {
		sink += Fill(100)[7]
	}
}
"""
# The build runs with an empty HOME and no network: Go's caches go inside the worktree,
# the module needs nothing from outside, and a newer go.mod must not fetch a toolchain.
GO_BUILD = ('GOCACHE="$PWD/.cache/go-build" GOPATH="$PWD/.cache/go" GOFLAGS=-mod=mod '
            "GOTOOLCHAIN=local GOPROXY=off go test -c -o pkg.test .")


def _go_source(hash_work: int) -> str:
    return GO_SOURCE.replace("HASH_WORK", str(hash_work)).replace("BASE_WORK", str(BASE_WORK))


def go(make_repo: MakeRepo, *, settings: Mapping[str, str] | None = None,
       top: Mapping[str, str] | None = None, name: str = "gobench") -> Project:
    """A Go package: ``BenchmarkHash`` (planted), ``BenchmarkSum``, ``BenchmarkFill``;
    compiled once by the build (``go test -c``), run as ``pkg.test`` with 50 iterations a
    benchmark (about 1.5 ms each)."""
    return _project(
        make_repo, suite="pkg", fmt="go", build=GO_BUILD,
        run=("./pkg.test", "-test.run", "^$", "-test.bench", ".", "-test.benchmem",
             "-test.benchtime", "50x"),
        filter_=("-test.bench={regex}",),
        base={"go.mod": GO_MOD, "work.go": _go_source(BASE_WORK), "work_test.go": GO_TEST},
        head={"work.go": _go_source(PLANTED_WORK)},
        expected={"BenchmarkHash": "slower", "BenchmarkSum": "unchanged", "BenchmarkFill": "unchanged"},
        settings=FAST_SETTINGS if settings is None else settings, top=top, name=name,
    )  # fmt: skip


# --- pytest-benchmark ----------------------------------------------------------------------

PY_KERNEL = """\
def mix(seed, rounds):
    x = seed | 1
    for _ in range(rounds):
        x ^= (x << 13) & 0xFFFFFFFFFFFFFFFF
        x ^= x >> 7
        x ^= (x << 17) & 0xFFFFFFFFFFFFFFFF
    return x
"""
PYTEST_SOURCE = '''\
"""Three benchmarks for benchbot's tests."""

{kernel}

def test_hash(benchmark):
    benchmark(mix, 3, {hash_work})


def test_sum(benchmark):
    benchmark(mix, 5, {base_work})


def test_fill(benchmark):
    benchmark(lambda: [mix(i, {base_work} // 100) for i in range(100)])
'''


def _pytest_source(hash_work: int) -> str:
    return PYTEST_SOURCE.format(kernel=PY_KERNEL, hash_work=hash_work, base_work=PY_BASE_WORK)


def pytest_benchmark(make_repo: MakeRepo, *, settings: Mapping[str, str] | None = None,
                     top: Mapping[str, str] | None = None, name: str = "pybench",
                     python: str = sys.executable) -> Project:
    """``tests/bench_x.py`` on pytest-benchmark: ``test_hash`` (planted), ``test_sum``,
    ``test_fill``, about 0.3 ms an operation, each timed for 10 ms at most (5 rounds at
    least), no warm-up: about 0.8 s a run, most of it pytest starting. The file is found
    through ``testpaths`` and ``python_files`` rather than named, so that the filter's
    node ids (``tests/bench_x.py::test_hash``, one argument each) select alone.

    ``python`` is this interpreter, whose environment has pytest-benchmark: the sandbox
    shows benchbot's own interpreter and its prefix (a venv's packages included), so no
    ``sandbox.read_only`` is needed. Plugins are not auto-loaded
    (``PYTEST_DISABLE_PLUGIN_AUTOLOAD``; the one needed is named with ``-p``): the test
    extra's other plugins would only slow each start down."""
    env = "{PYTEST_DISABLE_PLUGIN_AUTOLOAD: '1', PYTHONDONTWRITEBYTECODE: '1'}"
    return _project(
        make_repo, suite="py", fmt="pytest-benchmark", build="true",
        run=(python, "-m", "pytest", "--rootdir=.", "-o", "testpaths=tests", "-o", "python_files=bench_*.py",
             "-p", "pytest_benchmark.plugin", "-p", "no:cacheprovider", "-q", "--benchmark-json={output}",
             "--benchmark-min-rounds=5", "--benchmark-max-time=0.01", "--benchmark-warmup=off"),
        filter_=("{name}",),
        base={"tests/bench_x.py": _pytest_source(PY_BASE_WORK)},
        head={"tests/bench_x.py": _pytest_source(PY_PLANTED_WORK)},
        expected={"test_hash": "slower", "test_sum": "unchanged", "test_fill": "unchanged"},
        settings={**SETTINGS, "env": env} if settings is None else settings, top=top, name=name,
    )  # fmt: skip


# --- libtest's bencher lines (rustc, no cargo) ----------------------------------------------

RUST_SOURCE = """\
#![feature(test)]
extern crate test;

pub fn mix(seed: u64, rounds: u64) -> u64 {
    let mut x = seed | 1;
    for _ in 0..rounds {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x = test::black_box(x);
    }
    x
}

#[cfg(test)]
mod benches {
    use super::mix;
    use test::{black_box, Bencher};

    #[bench]
    fn hash(b: &mut Bencher) {
        b.iter(|| mix(black_box(3), HASH_WORK));
    }

    #[bench]
    fn sum(b: &mut Bencher) {
        b.iter(|| mix(black_box(5), BASE_WORK));
    }

    #[bench]
    fn copy(b: &mut Bencher) {
        let v = vec![7u8; 1 << 20];
        b.bytes = 1 << 20;
        b.iter(|| black_box(v.clone()));
    }
}
"""


def _rust_source(hash_work: int) -> str:
    return RUST_SOURCE.replace("HASH_WORK", str(hash_work)).replace("BASE_WORK", str(BASE_WORK))


@functools.cache
def rust_sysroot() -> str | None:
    """The stable toolchain's directory, where the real ``bin/rustc`` is (``rustc`` on
    PATH is often rustup's proxy, which needs ``~/.rustup``, hidden in the sandbox)."""
    rustc = shutil.which("rustc")
    if rustc is None:
        return None
    got = subprocess.run([rustc, "--print", "sysroot"], capture_output=True, text=True, check=False)
    root = got.stdout.strip()
    return root if got.returncode == 0 and os.path.isfile(os.path.join(root, "bin", "rustc")) else None


def bencher(make_repo: MakeRepo, *, settings: Mapping[str, str] | None = None,
            top: Mapping[str, str] | None = None, name: str = "rsbench") -> Project:
    """A Rust file of libtest benches compiled by rustc alone (stable, ``RUSTC_BOOTSTRAP=1``
    for ``#![feature(test)]``; no cargo, no registry): ``benches::hash`` (planted),
    ``benches::sum``, ``benches::copy`` (a throughput too: ``b.bytes``; 1 MiB, tens of µs, above
    the reported metric's floor). libtest times
    each bench until its estimate settles, at least 0.3 s: about 1-1.5 s a run. The
    toolchain's directory is listed under ``sandbox.read_only``."""
    root = rust_sysroot() or "/nonexistent"
    return _project(
        make_repo, suite="rs", fmt="bencher",
        build=f"RUSTC_BOOTSTRAP=1 {root}/bin/rustc --edition 2021 -O --test b.rs -o b",
        run=("./b", "--bench"), filter_=("--exact", "{name}"),
        base={"b.rs": _rust_source(BASE_WORK)}, head={"b.rs": _rust_source(PLANTED_WORK)},
        expected={"benches::hash": "slower", "benches::sum": "unchanged", "benches::copy": "unchanged"},
        settings=settings, top={"sandbox": f"{{read_only: ['{root}']}}", **(top or {})}, name=name,
    )  # fmt: skip


# --- pyperf ----------------------------------------------------------------------------

PYPERF_SOURCE = '''\
"""Three pyperf benchmarks for benchbot's tests."""

import pyperf

{kernel}

runner = pyperf.Runner()
runner.bench_func("hash", mix, 3, {hash_work})
runner.bench_func("sum", mix, 5, {base_work})
runner.bench_func("fill", lambda: [mix(i, {base_work} // 100) for i in range(100)])
'''


def _pyperf_source(hash_work: int) -> str:
    return PYPERF_SOURCE.format(kernel=PY_KERNEL, hash_work=hash_work, base_work=PY_BASE_WORK)


def pyperf(make_repo: MakeRepo, *, settings: Mapping[str, str] | None = None,
           top: Mapping[str, str] | None = None, name: str = "pyperfbench",
           python: str = sys.executable) -> Project:
    """A pyperf script: ``hash`` (planted), ``sum``, ``fill``. ``--fast`` still takes 20 s
    on two cores (10 worker processes, loops calibrated); one worker (``-p 1``) of 40
    values of 2 loops after 2 warm-ups takes 0.5-1 s. Many short values rather than a few
    long ones: pyperf's median then shrugs off the moments a loaded machine takes the CPU
    away (3 values of 16 loops read the same build 30% apart from one run to the next).
    pyperf refuses an ``-o`` file that exists already."""
    return _project(
        make_repo, suite="perf", fmt="pyperf", build="true",
        run=(python, "bench.py", "-o", "{output}", "-q", "-p", "1", "-n", "40", "-w", "2", "-l", "2"),
        filter_=(),
        base={"bench.py": _pyperf_source(PY_BASE_WORK)}, head={"bench.py": _pyperf_source(PY_PLANTED_WORK)},
        expected={"hash": "slower", "sum": "unchanged", "fill": "unchanged"},
        settings=settings, top=top, name=name,
    )  # fmt: skip


GENERATORS = {
    "google-benchmark": google_benchmark,
    "go": go,
    "pytest-benchmark": pytest_benchmark,
    "bencher": bencher,
    "pyperf": pyperf,
}


def missing(fmt: str) -> str | None:
    """Why the toolchain of ``fmt``'s generated project is not here, or None."""
    if fmt == "google-benchmark":
        if shutil.which("g++") is None:
            return "no g++ on PATH"
        if not Path("/usr/include/benchmark/benchmark.h").is_file():
            return "google-benchmark is not installed (Debian: libbenchmark-dev)"
        return None
    if fmt == "go":
        return None if shutil.which("go") else "no go on PATH (Debian: golang-go)"
    if fmt == "bencher":
        return None if rust_sysroot() else "no rustc toolchain (rustc --print sysroot)"
    module = {"pytest-benchmark": "pytest_benchmark", "pyperf": "pyperf"}[fmt]
    if importlib.util.find_spec(module) is None:
        return f"{fmt} is not installed in this interpreter (pip install {fmt})"
    return None


def build_and_run(project: Project, rev: str, workdir: Path) -> str:
    """Check out ``rev`` of the project into ``workdir``, build it and run its suite once,
    without benchbot (and without its sandbox); return what the harness wrote: its
    ``{output}`` file, else its stdout."""
    subprocess.run(["git", "worktree", "add", "-q", "--detach", str(workdir), rev],
                   cwd=project.repo, check=True, capture_output=True)
    try:
        subprocess.run(["/bin/sh", "-c", project.build], cwd=workdir, check=True, capture_output=True)
        with tempfile.TemporaryDirectory() as scratch:
            output = os.path.join(scratch, "output")
            argv = [arg.replace("{output}", output) for arg in project.run]
            env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PYTHONDONTWRITEBYTECODE": "1"}
            done = subprocess.run(argv, cwd=workdir, capture_output=True, text=True, env=env, check=False)
            if done.returncode != 0:
                raise RuntimeError(f"{argv[0]} exited with {done.returncode}: {done.stdout[-2000:]}{done.stderr[-2000:]}")
            return Path(output).read_text() if any("{output}" in a for a in project.run) else done.stdout
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(workdir)], cwd=project.repo,
                       check=False, capture_output=True)
