"""How suitecount plans and makes a suite's counted runs: which runs a benchmark gets and
which worker makes them (the statistics: test_benchsignals.py; the wiring through the
engine: tests/suites/test_suite_counts.py)."""

from __future__ import annotations

import threading
import time

import pytest

from benchbot.core.model import Counts
from benchbot.sandbox.spawn import RawRun, SpawnRequest
from benchbot.suites import fixedwork, suitecount


def _counts(again: float | None, *, counted: bool = True) -> Counts:
    if not counted:
        return Counts(method=None, why="not counted: a test")
    return Counts(method="valgrind", why="t", unit="iteration", units=100, base=(50_000.0,),
                  base_again=() if again is None else (again,), head=(50_000.0,))


def test_a_suite_is_steady_only_where_its_first_benchmarks_a_a_all_are() -> None:
    # n = 100 units of 50,000 instructions: 5 million of work; google-benchmark's runs
    # differ by a few hundred instructions, Go's by a few thousand
    steady = [_counts(50_000.0 + d / 100) for d in (0.0, 100.0, -450.0, 1000.0, 0.0)]
    assert suitecount.steady(steady)
    assert not suitecount.steady(steady[:4])  # too few to tell
    assert not suitecount.steady([*steady[:4], _counts(50_000.0 + 2500 / 100)])  # Go's runtime
    # a few instructions, but of little work: more than STEADY of it
    few = Counts(method="valgrind", why="t", unit="iteration", units=2, base=(1000.0,),
                 base_again=(1000.4,), head=(1000.0,))
    assert not suitecount.steady([*steady[:4], few])
    assert not suitecount.steady([*steady[:4], _counts(None, counted=False)])
    assert not suitecount.steady([*steady[:4], _counts(None)])  # no A/A of its own


class _Places:
    """A spawner that answers from many threads and records which thread made what."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.seen: dict[str, set[str]] = {}  # thread: working directories
        self.busy = 0
        self.most = 0

    def spawn(self, request: SpawnRequest) -> RawRun:
        with self.lock:
            self.seen.setdefault(threading.current_thread().name, set()).add(request.cwd)
            self.busy += 1
            self.most = max(self.most, self.busy)
        time.sleep(0.02)
        with self.lock:
            self.busy -= 1
        return RawRun(wall_ns=1, cpu_ns=1, maxrss_kib=1, returncode=0)


def test_each_place_has_its_own_stream_made_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    # base's runs, head's and base again's (its own place) made by three threads, one place
    # each, at the same time: a worker per place in the sandbox
    monkeypatch.setattr(suitecount, "in_parallel", lambda spawner: True)
    spawner = _Places()
    places = {"base": "/w/base", "head": "/w/head", "base_again": "/w/again"}

    def plan(bench: str) -> suitecount._Plan:
        return suitecount._Plan(method="valgrind", why="t", n=10, bench=bench, requests=tuple(
            (arm, size, SpawnRequest(argv=("x",), cwd=places[arm], env=(), timeout_s=1.0))
            for arm, size in suitecount.PLAN))

    plans = {f"b{i}": plan(f"b{i}") for i in range(4)}
    setting = suitecount.Setting(config=None, base={}, head={}, harnesses={}, figures={},  # type: ignore[arg-type]
                                 spawner=spawner, env={}, means=None, clock=time.monotonic)  # type: ignore[arg-type]
    made = suitecount._made(setting, plans, None)
    assert all(len(made[name]) == len(suitecount.PLAN) for name in plans)
    assert sorted(len(cwds) for cwds in spawner.seen.values()) == [1, 1, 1]
    assert {c for cwds in spawner.seen.values() for c in cwds} == set(places.values())
    assert spawner.most >= 2  # they overlapped


def test_base_again_is_counted_against_bases_small_run() -> None:
    n = 100
    small, large = fixedwork.SMALL, fixedwork.SMALL + n
    # base: 1,000,000 + 500 a unit; base again's larger run 40 instructions more; head 510
    counts = {("base", small): 1_001_000, ("base", large): 1_051_000,
              ("head", small): 1_001_020, ("head", large): 1_052_020,
              ("base_again", large): 1_051_040}
    plan = suitecount._Plan(method="valgrind", why="t", n=n, bench="BenchmarkB", requests=tuple(
        (arm, size, SpawnRequest(argv=("x",), cwd="/w", env=(), timeout_s=1.0))
        for arm, size in suitecount.PLAN))
    raws = {}
    for i, (arm, size, _) in enumerate(plan.requests):
        units = fixedwork.SMALL + size * n
        raws[i] = RawRun(wall_ns=10**9, cpu_ns=1, maxrss_kib=1, returncode=0,
                         instructions=counts[arm, units], report=_report("BenchmarkB", units))
    got = suitecount._counts(plan, raws, fixedwork.GO)
    assert got.method == "valgrind", got.why
    assert got.base == (500.0,) and got.head == (510.0,) and got.base_again == (500.4,)
    assert len(got.runs or ()) == 5 and got.counted_s == 5.0


def _report(bench: str, n: int):  # type: ignore[no-untyped-def]
    from benchbot.harness import formats

    return formats.parse("go", f"{bench} \t {n} \t 100.0 ns/op\nPASS\n")


def test_the_plan_is_five_runs_and_a_steady_suites_four() -> None:
    assert suitecount.PLAN == (("base", 0), ("base", 1), ("head", 0), ("head", 1),
                               ("base_again", 1))
    assert suitecount.PLAN_STEADY == suitecount.PLAN[:4]
