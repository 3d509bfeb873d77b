"""Counts per benchmark through the real engine (issue 29), on a fake clock: a suite's
harness is answered by ``FakeGo``, which prints Go's benchmark lines for the timed runs
(noisy: single runs spread ±25%) and, for a counted run (valgrind asked for, one benchmark
selected, a fixed ``-test.benchtime Nx``), the instructions that many iterations take.
What is tested is the wiring: counted runs before the timed rounds, what they ask of the
harness, the counts per iteration, the joint rule's verdicts, Go's B/op as the memory
verdict, what counting cost, and the results file; the statistics have their own tests
(tests/verdict/test_benchsignals.py) and the real harnesses theirs (test_suites.py, slow)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from benchbot.config.settings import Overrides
from benchbot.core.model import Family, Results
from benchbot.harness import formats
from benchbot.measure import engine
from benchbot.results.resultsdir import to_json
from benchbot.run.runner import RawRun, SpawnRequest
from benchbot.sandbox import counting
from benchbot.suites import fixedwork, suitecount
from benchbot.verdict import signals
from tests.clock import FakeClock
from tests.conftest import MakeRepo

START = 2_000_000  # instructions of a counted run before its benchmark's first iteration


@dataclass(frozen=True)
class Spec:
    ns: float  # time per iteration, base
    instructions: float  # per iteration, base
    head_work: float = 1.0  # head's instructions and time, as factors
    head_time: float = 1.0
    bytes_op: tuple[int, int] = (0, 0)  # base, head
    # the work per iteration of each counted process, as factors, in the order made: base's
    # side (base, base again, base again once more) and head's; none: the same every time
    process: tuple[tuple[float, ...], tuple[float, ...]] = ((), ())


class FakeGo:
    """A go test binary and valgrind, as the engine sees them through its spawner."""

    def __init__(self, specs: Mapping[str, Spec], clock: FakeClock, *, seed: int = 3,
                 fail_counted: str | None = None, by_time: bool = False,
                 all_fail: bool = False, noise: float = 2000.0) -> None:
        self.specs, self.clock = specs, clock
        self.noise = noise  # a counted run's own noise, instructions (sd)
        self.rng = np.random.default_rng(seed)
        self.fail_counted = fail_counted
        # by_time: -test.benchtime Nx is ignored, every run runs by time (as google-benchmark
        # 1.7 does with --benchmark_min_time=Nx where its main reports no unknown flag);
        # all_fail: every counted run fails, the same way
        self.by_time, self.all_fail = by_time, all_fail
        self.uncounted: list[SpawnRequest] = []
        self.counted: list[SpawnRequest] = []
        self.made: dict[tuple[str, bool, str], int] = {}  # (benchmark, head, size): runs made

    def spawn(self, request: SpawnRequest) -> RawRun:
        head = Path(request.cwd).name == "head"
        if request.count == "valgrind":
            return self._counted(request, head)
        names = self._selected(request.argv)
        fixed = self._fixed(request.argv)
        if fixed is not None:
            self.uncounted.append(request)
        lines = []
        wall = 0.01
        for name in names:
            spec = self.specs[name]
            ns = spec.ns * (spec.head_time if head else 1.0) * self.rng.lognormal(0.0, 0.2)
            ops = spec.bytes_op[1 if head else 0]
            n = fixed or 1000
            lines.append(f"{name}-2 \t {n} \t {ns:.1f} ns/op \t {ops} B/op \t {ops // 64} allocs/op")
            wall += ns * n / 1e9
        self.clock.advance(wall)
        return RawRun(wall_ns=int(wall * 1e9), cpu_ns=int(wall * 1e9), maxrss_kib=1, returncode=0,
                      report=formats.parse("go", "\n".join(lines) + "\nPASS\n"))

    def _fixed(self, argv: tuple[str, ...]) -> int | None:
        """The iterations a run's -test.benchtime Nx asks for (None: by time, or ignored)."""
        asked = next((a[16:-1] for a in argv if a.startswith("-test.benchtime=") and a.endswith("x")),
                     None)
        return None if asked is None or self.by_time else int(asked)

    def _selected(self, argv: tuple[str, ...]) -> list[str]:
        """The benchmarks the run's last -test.bench pattern selects (the filter's or ours)."""
        pattern = next((a.split("=", 1)[1] for a in reversed(argv) if a.startswith("-test.bench=")),
                       ".")
        return [n for n in self.specs if re.search(pattern.split("/")[0], n)]

    def _counted(self, request: SpawnRequest, head: bool) -> RawRun:
        self.counted.append(request)
        [name] = self._selected(request.argv)
        n = int(next(a for a in request.argv if a.startswith("-test.benchtime="))[16:-1])
        spec = self.specs[name]
        wall = 0.4 + n * spec.ns * 40 / 1e9  # valgrind's start and its slowdown
        self.clock.advance(wall)
        if self.all_fail or (name == self.fail_counted and head):
            return RawRun(wall_ns=int(wall * 1e9), cpu_ns=0, maxrss_kib=1, returncode=2,
                          stderr_tail="panic: runtime error")
        per = spec.instructions * (spec.head_work if head else 1.0)
        factors = spec.process[1 if head else 0]
        key = (name, head, "small" if n == 2 else "large")
        k = self.made[key] = self.made.get(key, -1) + 1
        per *= factors[k] if k < len(factors) else 1.0
        instructions = int(START + per * n + self.rng.normal(0.0, self.noise))
        report = formats.parse("go", f"{name} \t {n} \t {spec.ns:.1f} ns/op\nPASS\n")
        return RawRun(wall_ns=int(wall * 1e9), cpu_ns=int(wall * 1e9), maxrss_kib=1, returncode=0,
                      report=report, instructions=instructions)


SPECS = {
    "BenchmarkHash": Spec(ns=20_000, instructions=60_000, head_work=1.05, head_time=1.05),
    "BenchmarkSort": Spec(ns=30_000, instructions=90_000),
    "BenchmarkParse": Spec(ns=15_000, instructions=40_000, bytes_op=(1000, 1000)),
    "BenchmarkAlloc": Spec(ns=25_000, instructions=70_000, head_work=1.05, head_time=1.05,
                           bytes_op=(64_000, 67_200)),
    "BenchmarkSearch": Spec(ns=10_000, instructions=30_000),
}
CONFIG = """version: 1
suites:
  - name: go
    run: [./suite.test, -test.run, '^$', -test.bench, ., -test.benchmem]
    format: go
    filter: ['-test.bench={regex}']
counts: auto
"""


@pytest.fixture(autouse=True)
def valgrind_here(monkeypatch: pytest.MonkeyPatch) -> None:
    """valgrind "installed" and no hardware counters, on any machine: the fake counts."""
    monkeypatch.setattr(counting, "means", lambda env, shown=None: counting.Means(
        perf_problem="no hardware counters (a test)", valgrind_problem=None))


def _compare(repo: Path, fake: FakeGo, clock: FakeClock, budget_s: float = 600.0) -> Results:
    return engine.compare(engine.Request(repo=repo, base="base", head="HEAD",
                                         overrides=Overrides(budget=budget_s, seed=5)),
                          spawner_factory=lambda _: fake, clock=clock)


def _by_name(doc: Results) -> dict[str, Any]:
    return {b.name.removeprefix("go/"): b for b in doc.benchmarks}


def test_counted_runs_settle_a_noisy_suite(make_repo: MakeRepo, validate: Any) -> None:
    clock = FakeClock()
    fake = FakeGo(SPECS, clock)
    doc = _compare(make_repo({"benchbot.yml": CONFIG}, {"README": "head\n"}), fake, clock)
    validate(to_json(doc))
    got = _by_name(doc)
    for name in ("Hash", "Alloc"):
        v = got[f"Benchmark{name}"].verdict
        assert v.outcome == "slower" and v.settled_by in ("instructions and time",
                                                          "time and instructions"), v.reason
        assert got[f"Benchmark{name}"].counts.ratio == pytest.approx(1.05, abs=0.002)
    for name in ("Sort", "Parse", "Search"):
        v = got[f"Benchmark{name}"].verdict
        assert v.outcome == "level" and v.settled_by == "instructions and time", v.reason
        assert "the same work per iteration" in (v.reason or "")
    # Go's B/op and allocs/op: the memory verdict of each benchmark
    assert got["BenchmarkAlloc"].memory.outcome == "slower"
    assert got["BenchmarkParse"].memory.outcome == "level"
    # five counted runs a benchmark, base's and head's at 2 and 2 + n iterations and base
    # again's at 2 + n, apart from the timed rounds, and two more where the counts read a
    # move (Hash, Alloc): base again and head again, each at 2 + n
    moved = ("BenchmarkHash", "BenchmarkAlloc")
    assert len(fake.counted) == 5 * len(SPECS) + 2 * len(moved)
    counts = got["BenchmarkSort"].counts
    assert counts.unit == "iteration" and counts.exact and counts.method == "valgrind"
    assert [r.units for r in counts.runs] == [2, 2 + counts.units] * 2 + [2 + counts.units]
    assert [r.arm for r in counts.runs] == ["base", "base", "head", "head", "base_again"]
    assert counts.base[0] == pytest.approx(90_000, rel=1e-3)
    assert counts.base_again[0] == pytest.approx(90_000, rel=1e-3)  # against base's small run
    for name in moved:
        c = got[name].counts
        assert len(c.head) == len(c.base_again) == 2 and len(c.base) == 1
        assert [(r.arm, r.units) for r in c.runs][5:] == [("base_again", 2 + c.units),
                                                          ("head", 2 + c.units)]
    # base again counted from its own place (base's build copied), which has a worker of
    # its own in the sandbox: base's, head's and base again's runs are made at once there
    again = [r for r in fake.counted if Path(r.cwd).name not in ("base", "head")]
    assert len(again) == len(SPECS) + len(moved)
    [suite] = doc.suites
    assert suite.counted_runs == 5 * len(SPECS) + 2 * len(moved) and suite.counting_s > 0
    # the error control spans the suite's benchmarks (known only after discovery): each
    # look spends alpha / (5 k (k + 1)), not alpha / (k (k + 1)) as if it were alone
    assert doc.settings.family == Family(sequential=len(SPECS), fixed=0)
    assert doc.spent is not None and doc.spent.counting_s == pytest.approx(suite.counting_s, abs=0.01)
    assert doc.spent.wall_s >= doc.spent.counting_s + doc.spent.timed_s - 1


def test_counts_that_vary_from_process_to_process_are_counted_again_and_not_called(
        make_repo: MakeRepo) -> None:
    # Go's map lookups, as recorded (benchmarks/README.md, section 12): the same code, each
    # process's hash seed its own; the first pair read +2.3%, a second -0.08% (base again)
    # and +0.3% (head again). Here every further process varies by 8%: sixteen a build
    # cannot tell that from parity. The suite's first five benchmarks vary by a few
    # instructions in millions (steady): the lookup, sixth, has no base again of its own at
    # first, and its move read once is counted again all the same
    lookup = Spec(ns=12_000, instructions=50_000,
                  process=((1.0, 0.9992, *_seeds(1, 0.08)), (1.023, 1.003, *_seeds(2, 0.08))))
    clock = FakeClock()
    fake = FakeGo({**SPECS, "BenchmarkLookup": lookup}, clock, noise=100.0)
    got = _by_name(_compare(make_repo({"benchbot.yml": CONFIG}, {"README": "head\n"}), fake, clock))
    c = got["BenchmarkLookup"].counts
    assert suitecount.steady([got[n].counts for n in SPECS])
    assert [r.arm for r in c.runs[:6]] == ["base", "base", "head", "head", "base_again", "head"]
    assert c.head[:2] == pytest.approx((50_000 * 1.023, 50_000 * 1.003), rel=1e-3)
    assert c.base_again == pytest.approx((50_000 * 0.9992,), rel=1e-3)
    assert c.samples == suitecount.SAMPLES  # counted as two samples of processes ...
    assert len(c.base) + len(c.base_again) == len(c.head) == suitecount.SAMPLES
    assert c.reading == "unsteady", c.reading_why  # ... which straddle the 2% parity
    assert "neither inside the 2% parity nor past it" in (c.reading_why or "")
    assert got["BenchmarkLookup"].verdict.outcome not in ("slower", "faster", "level")
    assert got["BenchmarkHash"].verdict.outcome == "slower"  # a real move reads again the same


@pytest.mark.parametrize(("work", "outcome"), [(1.0, "level"), (1.06, "slower")])
def test_counts_that_vary_by_a_seed_are_judged_as_samples_of_processes(
        make_repo: MakeRepo, validate: Any, work: float, outcome: str) -> None:
    # A map lookup whose every process draws its own hash seed (1.2% a process): one
    # difference cannot tell a seed from a change, sixteen processes a build can
    lookup = Spec(ns=12_000, instructions=50_000, head_work=work, head_time=work,
                  process=(_seeds(3, 0.012), _seeds(4, 0.012)))
    clock = FakeClock()
    fake = FakeGo({**SPECS, "BenchmarkLookup": lookup}, clock)
    doc = _compare(make_repo({"benchbot.yml": CONFIG}, {"README": "head\n"}), fake, clock)
    got = _by_name(doc)
    c = got["BenchmarkLookup"].counts
    assert c.samples == suitecount.SAMPLES and len(c.head) == suitecount.SAMPLES
    validate(data := to_json(doc))
    [lookup] = [b for b in data["benchmarks"] if b["name"] == "go/BenchmarkLookup"]
    assert lookup["counts"]["samples"] == suitecount.SAMPLES
    assert c.ratio == pytest.approx(work, abs=0.012)
    assert c.reading == ("same" if work == 1.0 else "up"), c.reading_why
    assert "processes of base's build" in (c.reading_why or "")
    v = got["BenchmarkLookup"].verdict
    assert v.outcome == outcome, v.reason
    if outcome == "level":
        assert v.settled_by == "instructions and time"
        assert f"{suitecount.SAMPLES} processes a build" in (v.reason or "")
    # the further processes are the larger run alone, base's made by base's build
    lookups = [r for r in fake.counted if "-test.bench=^BenchmarkLookup$" in r.argv]
    # (four runs, and base again's where the suite is not steady; then base again and head
    # again where it read a move; a sampled run is never base again's)
    arms = [r.arm for r in c.runs]
    first = 5 if arms[4] == "base_again" else 4
    first += 2 if arms[first:first + 2] == ["base_again", "head"] else 0
    processes = first - 2  # made before the sample: all but the two small runs
    assert len(lookups) == len(c.runs) == first + 2 * suitecount.SAMPLES - processes
    assert all(r.units > fixedwork.SMALL for r in c.runs[first:])


def test_a_sample_that_straddles_parity_but_could_settle_is_counted_further(
        make_repo: MakeRepo) -> None:
    # 1.5% a process: 24 processes a build read +0.7% ± 1.31%, past parity at the band's
    # edge; 48 bring the band within it (docs/verdict.md, "Counts that vary by themselves")
    lookup = Spec(ns=12_000, instructions=50_000,
                  process=(_seeds(65, 0.015), _seeds(1065, 0.015)))
    clock = FakeClock()
    fake = FakeGo({**SPECS, "BenchmarkLookup": lookup}, clock)
    got = _by_name(_compare(make_repo({"benchbot.yml": CONFIG}, {"README": "head\n"}), fake, clock))
    c = got["BenchmarkLookup"].counts
    more = suitecount.SAMPLES_MORE
    assert c.samples == more and len(c.head) == len(c.base) + len(c.base_again) == more
    bases = (*c.base[:1], *c.base_again, *c.base[1:])  # in the order made
    first = signals.read_counts(replace(c, base=bases[:suitecount.SAMPLES], base_again=(),
                                        head=c.head[:suitecount.SAMPLES], samples=suitecount.SAMPLES),
                                {}, parity=0.02)
    assert first.reading == "unsteady", first.reading_why  # the first stage could not tell
    assert c.reading == "same", c.reading_why
    assert got["BenchmarkLookup"].verdict.outcome == "level"
    assert "48 processes a build" in (got["BenchmarkLookup"].verdict.reason or "")


def _seeds(seed: int, spread: float, n: int = 60) -> tuple[float, ...]:
    """The work of n processes, each by its own hash seed (log-normal, ``spread`` a process)."""
    return tuple(float(f) for f in np.random.default_rng(seed).lognormal(0.0, spread, n))


def test_a_counted_run_asks_for_one_benchmark_and_a_fixed_work(make_repo: MakeRepo) -> None:
    clock = FakeClock()
    fake = FakeGo(SPECS, clock)
    _compare(make_repo({"benchbot.yml": CONFIG}, {"README": "head\n"}), fake, clock, budget_s=30.0)
    request = fake.counted[0]
    env = dict(request.env)
    assert env["GOMAXPROCS"] == "1" and env["GOGC"] == "off" and "asyncpreemptoff=1" in env["GODEBUG"]
    assert request.argv[0].endswith("/base/suite.test")  # base's first, its small run
    assert request.argv[1:6] == ("-test.run", "^$", "-test.bench", ".", "-test.benchmem")
    assert "-test.benchtime=2x" in request.argv
    assert "-test.bench=^BenchmarkHash$" in request.argv and "-test.cpu=1" in request.argv
    assert request.harness == "go"
    assert request.timeout_s >= counting.VALGRIND_MIN_TIMEOUT_S


def test_a_failed_counted_run_leaves_its_benchmark_to_time_alone(make_repo: MakeRepo) -> None:
    clock = FakeClock()
    fake = FakeGo(SPECS, clock, fail_counted="BenchmarkSort")
    got = _by_name(_compare(make_repo({"benchbot.yml": CONFIG}, {"README": "head\n"}), fake, clock,
                            budget_s=120.0))
    counts = got["BenchmarkSort"].counts
    assert counts.method is None
    assert "the counted head run" in counts.why and "exited with status 2" in counts.why
    assert got["BenchmarkSort"].verdict.outcome != "level"  # time alone cannot, at ±25% a run
    assert got["BenchmarkHash"].verdict.outcome == "slower"  # the others are counted


def test_counting_stops_when_the_budget_is_spent(make_repo: MakeRepo) -> None:
    clock = FakeClock()
    fake = FakeGo(SPECS, clock)
    # the build-less comparison starts at once: 8 s pay for two benchmarks' counted runs
    # (about 4 s each on the fake clock)
    doc = _compare(make_repo({"benchbot.yml": CONFIG}, {"README": "head\n"}), fake, clock,
                   budget_s=8.0)
    whys = [b.counts.why for b in doc.benchmarks if b.counts.method is None]
    assert 1 <= len(whys) < len(SPECS) and all("budget was spent" in w for w in whys)
    assert all(b.verdict.outcome not in ("slower", "faster") or b.counts.method is not None
               for b in doc.benchmarks)


def test_units_come_from_the_discovery_time() -> None:
    # a fifth of a second of valgrind's work in the larger run
    assert fixedwork.units_for(10_000, "valgrind") == int(0.2 / (10_000e-9 * 40))
    assert fixedwork.units_for(1e9, "valgrind") == 1
    assert fixedwork.units_for(0.0, "valgrind") == fixedwork.units_for(1.0, "valgrind")  # 1 ns at least
    assert fixedwork.units_for(0.0, "perf") == fixedwork.MAX_UNITS
    # Go's heap grows without collection: n is capped by what it allocates
    assert fixedwork.units_for(100, "valgrind", bytes_per_unit=1 << 20, fmt="go") == 256


def test_a_harness_that_ignores_the_work_asked_is_not_counted_and_says_so_in_seconds(
        make_repo: MakeRepo) -> None:
    """Probed by what a run did: the probe asks for 2 iterations and the report says 1000
    (a harness that runs by time whatever it is asked, exiting 0): no counted run is made,
    every benchmark says why in one sentence, and it costs two short runs."""
    clock = FakeClock()
    fake = FakeGo(SPECS, clock, by_time=True)
    doc = _compare(make_repo({"benchbot.yml": CONFIG}, {"README": "head\n"}), fake, clock,
                   budget_s=60.0)
    assert fake.counted == []  # no counted run at all
    whys = {b.counts.why for b in doc.benchmarks}
    assert len(whys) == 1, whys
    [why] = whys
    assert "does not run a fixed amount of work when asked" in why
    assert "ran 1000 iterations, not 2" in why
    [suite] = doc.suites
    assert suite.counted_runs == 0 and (suite.counting or "").startswith("none: ")
    assert (suite.counting_s or 0.0) < 1.0  # one probe, on the fake clock


def test_counting_stops_when_the_first_benchmarks_all_fail_the_same_way(
        make_repo: MakeRepo) -> None:
    clock = FakeClock()
    fake = FakeGo(SPECS, clock, all_fail=True)
    doc = _compare(make_repo({"benchbot.yml": CONFIG}, {"README": "head\n"}), fake, clock,
                   budget_s=120.0)
    counted = {fake._selected(r.argv)[0] for r in fake.counted}
    assert counted == set(list(SPECS)[:suitecount.FAIL_FAST])  # the others never tried
    by = _by_name(doc)
    for name in list(SPECS)[suitecount.FAIL_FAST:]:
        assert by[name].counts.method is None
        assert "all failed the same way" in by[name].counts.why
        # the first ones are named; their own notes give the failure (quoted once)
        assert "(BenchmarkHash, BenchmarkSort, BenchmarkParse)" in by[name].counts.why
    for name in list(SPECS)[:suitecount.FAIL_FAST]:
        assert "exited with status 2" in by[name].counts.why
    [suite] = doc.suites
    assert (suite.counting or "").startswith("stopped: ")


def test_one_failing_benchmark_does_not_stop_the_others_being_counted(make_repo: MakeRepo) -> None:
    clock = FakeClock()
    fake = FakeGo(SPECS, clock, fail_counted="BenchmarkHash")
    doc = _compare(make_repo({"benchbot.yml": CONFIG}, {"README": "head\n"}), fake, clock,
                   budget_s=120.0)
    by = _by_name(doc)
    assert by["BenchmarkHash"].counts.method is None
    assert all(by[n].counts.method == "valgrind" for n in SPECS if n != "BenchmarkHash")


def test_the_suite_s_report_shows_what_each_verdict_rests_on(make_repo: MakeRepo) -> None:
    """Issue 37, through the real engine: a call the counts settled shows the work's move,
    a level settled with them says "same work" and time's reach, and no verdict cell of the
    markdown, the comment or the HTML report shows a figure against its outcome. Encode
    does 3.5% less work in the same time: time's noise (±25% a run) decides which way its
    estimate leans, never the cell's figure."""
    from benchbot.report import render_comment, render_results
    from tests.figurecheck import by_workload, problems

    clock = FakeClock()
    specs = {**SPECS, "BenchmarkEncode": Spec(ns=20_000, instructions=60_000, head_work=0.965)}
    doc = _compare(make_repo({"benchbot.yml": CONFIG}, {"README": "head\n"}),
                   FakeGo(specs, clock), clock)
    md = render_results(doc, "markdown")
    for report in (md, render_results(doc, "html"), render_comment(doc, 60_000)):
        assert problems(report) == []
    shown = by_workload(md)
    led = [b for b in doc.benchmarks if (b.verdict.settled_by or "").startswith("instructions")]
    assert {b.verdict.outcome for b in led} >= {"slower", "level"}, [b.verdict for b in led]
    for bench in led:
        cell = shown[bench.name]
        if bench.verdict.outcome == "level":
            assert cell.text.startswith("level: same work; time within ±"), cell
        else:
            assert cell.text.endswith(" work") and cell.figure == pytest.approx(
                bench.counts.ratio - 1, abs=0.0006), cell


@pytest.mark.parametrize(("noise", "steady"), [(100.0, True), (20_000.0, False)])
def test_a_steady_suites_later_benchmarks_are_counted_without_base_again(
        make_repo: MakeRepo, noise: float, steady: bool) -> None:
    # Counts that move by 100 instructions a run (google-benchmark's timer) are steady:
    # after the first five benchmarks' A/A, the others are counted by four runs, their
    # noise the suite's. At 20,000 (Go's runtime, and base again's place) every benchmark keeps its own
    more = {f"BenchmarkMore{i}": Spec(ns=20_000, instructions=60_000, head_work=w, head_time=w)
            for i, w in enumerate((1.0, 1.0, 1.05))}
    specs = {**SPECS, **more}
    clock = FakeClock()
    fake = FakeGo(specs, clock, noise=noise)
    doc = _compare(make_repo({"benchbot.yml": CONFIG}, {"README": "head\n"}), fake, clock)
    got = _by_name(doc)
    first = list(specs)[:suitecount.POOL_MIN]
    assert suitecount.steady([got[n].counts for n in first]) is steady
    for name in first:  # each with its own A/A
        assert [r.arm for r in got[name].counts.runs][:5] == [
            "base", "base", "head", "head", "base_again"]
    for name, w in zip(more, (1.0, 1.0, 1.05), strict=True):
        c = got[name].counts
        arms = [r.arm for r in c.runs]
        if steady:
            assert arms[:4] == ["base", "base", "head", "head"] and c.pooled_noise is not None
            # the moved one counted again: base again and head again, each once
            assert arms[4:] == ([] if w == 1.0 else ["base_again", "head"])
        else:
            assert arms[:5] == ["base", "base", "head", "head", "base_again"]
        assert got[name].verdict.outcome == ("level" if w == 1.0 else "slower"), got[name].verdict.reason
    planned = sum(len(got[n].counts.runs) for n in specs)
    assert doc.suites[0].counted_runs == planned
