"""A google-benchmark suite counted in one process per build (gbsplit, and suitecount's use
of it): the split of a run's dumps into benchmarks, the check against the counts made one
by one, and each way back to counting one by one. The runs are answered by a spawner that
plays a harness under valgrind (its dumps' instructions made up, laid out as callgrind
lays them: tests/sandbox/test_split_record.py reads a real one); the real runs are in
tests/suites/test_gbsplit_live.py."""

from __future__ import annotations

import json
import random
import time
from types import SimpleNamespace
from typing import Any

import pytest

from benchbot.harness import formats
from benchbot.sandbox import callgrind, counting
from benchbot.sandbox.spawn import RawRun, SpawnRequest
from benchbot.suites import fixedwork, gbsplit, suitecount

R = gbsplit.REPETITIONS
HARNESS_START = 500_000  # the harness's start, before the first loop
BETWEEN = 4_000  # the harness's work between two repetitions' loops


def _parts(loops: list[list[int]], between: int = BETWEEN) -> tuple[callgrind.Part, ...]:
    """The dumps of a run whose repetitions' loops are ``loops`` (one list a benchmark),
    chained as callgrind chains them (a basic block every 4 instructions)."""
    parts: list[callgrind.Part] = []
    at = 0

    def add(trigger: int, ir: int) -> None:
        nonlocal at
        parts.append(callgrind.Part(trigger, ir, 10, (at, at + ir // 4)))
        at += ir // 4

    for bench in loops:
        for k, loop in enumerate(bench):
            add(gbsplit.START, HARNESS_START if not parts else between + 300 * (k == 0))
            add(gbsplit.FINISH, loop)
    add(-1, 80_000)
    return tuple(parts)


def _raw(loops: dict[str, list[int]], **kw: Any) -> RawRun:
    order = tuple((name, k) for name, reps in loops.items() for k in range(len(reps)))
    return RawRun(wall_ns=2 * 10**9, cpu_ns=1, maxrss_kib=1, returncode=0,
                  parts=_parts(list(loops.values()), **kw), order=order)


def test_a_benchmark_is_the_span_from_its_first_loop_s_end_to_its_last_s() -> None:
    got = gbsplit.split(_raw({"BM_A": [1200, 1000, 1000], "BM_B": [50_000, 48_000, 48_000]}))
    assert not isinstance(got, str)
    assert got["BM_A"].per_call == BETWEEN + 1000 and got["BM_A"].agree
    assert got["BM_B"].per_call == BETWEEN + 48_000
    assert got["BM_A"].ll_per_call == 20.0  # two parts of 10 misses a repetition
    # loops that do not repeat the same work: that benchmark is not split
    varied = gbsplit.split(_raw({"BM_A": [1200, 1000, 1001], "BM_B": [9, 9, 9]}))
    assert not isinstance(varied, str) and not varied["BM_A"].agree and varied["BM_B"].agree


def test_a_run_whose_dumps_are_not_two_a_repetition_is_not_split() -> None:
    good = _raw({"BM_A": [1000] * R, "BM_B": [2000] * R})
    more = good.parts[:3] + good.parts[1:]  # type: ignore[index]
    for raw, why in (
            (RawRun(**{**_fields(good), "parts": more}), "dumps for 6 repetitions, not 12"),
            (RawRun(**{**_fields(good), "parts": good.parts[2:]}),  # type: ignore[index]
             "dumps for 6 repetitions, not 12"),
            (RawRun(**{**_fields(good), "parts": tuple(
                callgrind.Part(1 - p.trigger if p.trigger >= 0 else -1, p.ir, p.ll_misses,
                               p.blocks) for p in good.parts or ())}), "not each repetition's"),
            (RawRun(**{**_fields(good), "order": good.order[1:] + good.order[:1]}),
             "does not name 3 repetitions"),
            (RawRun(**{**_fields(good), "order": good.order[:2] + good.order[3:]}),
             "does not name 3 repetitions"),
            (RawRun(**{**_fields(good), "parts": None, "count_error": "callgrind: not split: x"}),
             "callgrind: not split: x"),
            (RawRun(**{**_fields(good), "returncode": 1}), "exited with status 1")):
        got = gbsplit.split(raw)
        assert isinstance(got, str) and why in got, (why, got)


def _fields(raw: RawRun) -> dict[str, Any]:
    return {f: getattr(raw, f) for f in RawRun.__dataclass_fields__}


def test_the_check_compares_head_s_move_within_the_noise_and_the_floor() -> None:
    split = {"base": 100_000.0, "base_again": 100_000.0, "head": 105_000.0}
    assert gbsplit.check(split, {"base": 100_500.0, "base_again": 100_502.0,
                                 "head": 105_520.0}) is None  # 20 apart: within 0.1% of work
    problem = gbsplit.check(split, {"base": 100_500.0, "base_again": 100_502.0,
                                    "head": 100_500.0})
    assert problem is not None and "+5,000 instructions a call split and +0" in problem
    # noisier runs one by one allow more
    assert gbsplit.check(split, {"base": 100_500.0, "base_again": 100_900.0,
                                 "head": 106_900.0}) is None


def test_the_split_run_asks_for_every_benchmark_in_three_repetitions() -> None:
    req = gbsplit.request(["./bench", "--benchmark_format=json"], "/w", {"PATH": "/bin"},
                          selects=["BM_A", "BM_B/8"], timeout_s=10.0)
    assert req.count == "callgrind-parts" and req.whole and req.dumps == gbsplit.DUMPS
    assert req.argv[:2] == ("./bench", "--benchmark_format=json")
    assert "--benchmark_filter=^(BM_A|BM_B[/]8)$" in req.argv
    assert "--benchmark_repetitions=3" in req.argv and "--benchmark_min_time=0" in req.argv
    assert SpawnRequest.from_json(req.to_json()) == req


# --- suitecount: the split, its check, and the ways back to counting one by one ---------


NAMES = [f"BM_{c}" for c in "ABCDEFG"]
WORK = {"base": {n: 10_000 * (i + 1) for i, n in enumerate(NAMES)}}
WORK["head"] = {n: round(v * (1.05 if n in ("BM_B", "BM_E") else 1.0))
                for n, v in WORK["base"].items()}
WORK["again"] = dict(WORK["base"])


class _Harness:
    """Answers a probe, a counted run of one benchmark (``iterations`` of its loop on top
    of the harness's start) and a split run (``split``: each benchmark's loops, from its
    build's work; ``cheat``: what the head's split run does instead)."""

    def __init__(self, *, cheat: Any = None, vary: str | None = None) -> None:
        self.cheat = cheat
        self.vary = vary
        self.made: list[SpawnRequest] = []

    def spawn(self, request: SpawnRequest) -> RawRun:
        self.made.append(request)
        build = request.cwd.rsplit("/", 1)[-1]
        work = WORK[build]
        arg = next(a for a in request.argv if a.startswith("--benchmark_filter="))
        chosen = arg.split("(", 1)[1].split(")", 1)[0].split("|")
        if request.count == "callgrind-parts":
            loops = {n: [work[n] + 900] + [work[n]] * (R - 1) for n in NAMES if n in chosen}
            if self.vary in loops:
                loops[self.vary][-1] += 50
            raw = _raw(loops)
            return self.cheat(raw) if self.cheat is not None and build == "head" else raw
        bench = chosen[0]
        n = int(next(a for a in request.argv if a.startswith("--benchmark_min_time="))
                .split("=")[1].rstrip("x"))
        report = formats.parse("google-benchmark", json.dumps({"benchmarks": [
            {"name": bench, "run_name": bench, "run_type": "iteration", "iterations": n,
             "real_time": 1.0, "cpu_time": 1.0, "time_unit": "ns"}]}))
        count = 700_000 + n * (work[bench] + 3) if request.count == "valgrind" else None
        return RawRun(wall_ns=10**9, cpu_ns=1, maxrss_kib=1, returncode=0, report=report,
                      instructions=count)


def _count(spawner: _Harness, seed: int = 5,
           phases: list[tuple[int, int]] | None = None) -> suitecount.Counted:
    workloads = [SimpleNamespace(name=f"gb/{n}", suite="gb", bench=n, select=n, env=(),
                                 pin=None, timeout_s=10.0, counts="auto", parity=0.02)
                 for n in NAMES]
    targets = {b: {"gb": SimpleNamespace(argv=("./bench", "--benchmark_format=json"),
                                         cwd=f"/w/{b}")} for b in ("base", "head", "again")}
    setting = suitecount.Setting(
        config=SimpleNamespace(workloads=workloads),  # type: ignore[arg-type]
        base=targets["base"], head=targets["head"], again=targets["again"],  # type: ignore[arg-type]
        harnesses={"gb": SimpleNamespace(format="google-benchmark", filter=None)},  # type: ignore[dict-item]
        figures={w.name: SimpleNamespace(ns=100.0, index=i, bytes_op=None)  # type: ignore[misc]
                 for i, w in enumerate(workloads)},
        spawner=spawner, env={}, clock=time.monotonic, seed=seed,  # type: ignore[arg-type]
        phase=None if phases is None else lambda b, r: phases.append((b, r)),
        means=counting.Means(perf_problem="no counters", valgrind_problem=None))
    return suitecount.count_all(setting, [w.name for w in workloads], deadline=None)


def _drawn(seed: int = 5) -> str:
    """The benchmark the check draws at this seed (suitecount._split_suite's draw)."""
    return random.Random(seed).choice(sorted(f"gb/{n}" for n in NAMES))


def test_a_suite_is_split_where_the_check_agrees() -> None:
    spawner = _Harness()
    phases: list[tuple[int, int]] = []
    got = _count(spawner, phases=phases)
    # one batch: the suite's benchmarks, three processes and the check's five runs
    assert phases == [(len(NAMES), 3 + len(suitecount.PLAN))]
    splits = [r for r in spawner.made if r.count == "callgrind-parts"]
    assert sorted(r.cwd for r in splits) == ["/w/again", "/w/base", "/w/head"]
    one_by_one = {r.cwd for r in spawner.made if r.count == "valgrind"}
    assert len([r for r in spawner.made if r.count == "valgrind"]) == len(suitecount.PLAN)
    assert one_by_one == {"/w/base", "/w/head", "/w/again"}  # the check's runs alone
    drawn = _drawn()
    for name in (f"gb/{n}" for n in NAMES):  # the check's benchmark too
        c = got.counts[name]
        assert c.method == "valgrind", c.why
        bench = name.split("/")[1]
        assert c.why.startswith("valgrind: one callgrind process per build")
        assert c.base == (BETWEEN + WORK["base"][bench],) == c.base_again
        assert c.head == (BETWEEN + WORK["head"][bench],)
        assert c.units == R - 1 and c.unit == "call" and c.exact is False
        assert c.misses is not None
    how, runs, _ = got.suites["gb"]
    assert how.startswith(f"split: {len(NAMES)} of {len(NAMES)} benchmarks counted in one "
                          "callgrind process per build")
    assert f"{drawn.split('/')[1]} also counted one by one as a check, and agreed" in how
    assert runs == 3 + len(suitecount.PLAN)


def test_a_benchmark_whose_loops_vary_is_counted_one_by_one() -> None:
    vary = "BM_F" if _drawn() != "gb/BM_F" else "BM_G"
    spawner = _Harness(vary=vary)
    got = _count(spawner)
    assert got.counts[f"gb/{vary}"].base == (WORK["base"][vary] + 3,)  # counted one by one
    assert "1 whose loops did not do the same work each repetition counted one by one" in \
        got.suites["gb"][0]
    assert sum(r.count == "valgrind" for r in spawner.made) >= 2 * 4


def _more_dumps(raw: RawRun) -> RawRun:
    parts = raw.parts or ()
    return RawRun(**{**_fields(raw), "parts": parts[:3] + parts[1:]})


def _less_work(raw: RawRun) -> RawRun:
    # the head's loops counted at half their work in its split run alone (parts moved
    # elsewhere): what its benchmarks' own runs count is the whole work
    parts = tuple(callgrind.Part(p.trigger, p.ir // 2 if p.trigger == gbsplit.FINISH else p.ir,
                                 p.ll_misses, p.blocks) for p in raw.parts or ())
    return RawRun(**{**_fields(raw), "parts": parts})


@pytest.mark.parametrize(("cheat", "why"), [
    (_more_dumps, "not split (the head build's run callgrind made 44 dumps for 21 repetitions, not 42)"),
    (_less_work, "its split and its own runs disagree, head moved"),
    (lambda raw: RawRun(**{**_fields(raw), "parts": None,
                           "count_error": "callgrind: not split: a gap"}),
     "not split (the head build's run callgrind: not split: a gap)"),
])
def test_a_head_that_moves_its_split_leaves_the_suite_counted_one_by_one(cheat, why) -> None:
    spawner = _Harness(cheat=cheat)
    got = _count(spawner)
    how = got.suites["gb"][0]
    assert how.startswith("not split (") and why in how, how
    assert "one by one: --benchmark_filter" in how or "one by one: --benchmark_min_time" in how
    made: dict[str, int] = {}
    for r in spawner.made:
        if r.count == "valgrind":
            chosen = next(a for a in r.argv if a.startswith("--benchmark_filter="))
            made[chosen] = made.get(chosen, 0) + 1
    # each once: the check's benchmark keeps its runs (and is confirmed like the others)
    assert len(made) == len(NAMES)
    assert max(made.values()) <= len(suitecount.PLAN) + len(suitecount.CONFIRM)
    for name in (f"gb/{n}" for n in NAMES):  # every benchmark counted one by one
        c = got.counts[name]
        assert c.method == "valgrind" and not c.why.startswith("valgrind: one callgrind")
        bench = name.split("/")[1]
        assert c.head[0] == WORK["head"][bench] + 3
        # a move is confirmed (a second head), the check's benchmark's too
        assert len(c.head) == (2 if WORK["head"][bench] != WORK["base"][bench] else 1)


def test_no_split_where_it_is_off_or_the_suite_is_small() -> None:
    assert fixedwork.SMALL  # the plan's runs, as before
    spawner = _Harness()
    names, real = list(NAMES), NAMES[:]
    try:
        NAMES[:] = names[:gbsplit.SPLIT_MIN - 1]
        got = _count(spawner)
        assert not any(r.count == "callgrind-parts" for r in spawner.made)
        assert not got.suites["gb"][0].startswith(("split", "not split"))
    finally:
        NAMES[:] = real


def test_a_large_suite_is_split_in_runs_of_chunk_benchmarks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gbsplit, "CHUNK", 3)
    spawner = _Harness()
    got = _count(spawner)
    splits = [r for r in spawner.made if r.count == "callgrind-parts"]
    assert len(splits) == 3 * 3  # 7 benchmarks in runs of 3, 3 and 1, in each build's place
    filters = [next(a for a in r.argv if a.startswith("--benchmark_filter=")) for r in splits
               if r.cwd == "/w/base"]
    assert sorted(len(f.split("|")) for f in filters) == [1, 3, 3]
    assert got.suites["gb"][0].startswith(f"split: {len(NAMES)} of {len(NAMES)} benchmarks")
    assert "9 processes" in got.suites["gb"][0]
    for name in (f"gb/{n}" for n in NAMES):
        bench = name.split("/")[1]
        assert got.counts[name].head == (BETWEEN + WORK["head"][bench],)
