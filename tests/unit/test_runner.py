"""The runner's bookkeeping through the Spawner seam: deterministic, no processes."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from benchbot.config import WorkloadConfig
from benchbot.runner import RawRun, SpawnRequest, Target, record, request, run_phase
from benchbot.spawn import find_captures


class FakeSpawner:
    """Answers every spawn from a function of (argv, call index); logs the calls. An answer's
    ``stderr_tail`` is read as the run's whole output, as the real spawner reads its files."""

    def __init__(self, answer) -> None:
        self.answer = answer
        self.calls: list[tuple[str, ...]] = []
        self.requests: list[SpawnRequest] = []

    def spawn(self, req: SpawnRequest) -> RawRun:
        self.calls.append(req.argv)
        self.requests.append(req)
        raw = self.answer(req.argv, len(self.calls))
        return replace(raw, captures=find_captures(req.patterns, raw.stderr_tail, ""))


def ok(wall: int = 1_000_000, stdout: str = "") -> RawRun:
    return RawRun(wall_ns=wall, cpu_ns=wall, maxrss_kib=1000, returncode=0, stderr_tail=stdout)


def captured(raw: RawRun, w: WorkloadConfig) -> RawRun:
    req = request(Target(argv=("p",), cwd=Path(".")), w, {})
    return replace(raw, captures=find_captures(req.patterns, raw.stderr_tail, ""))


def workload(**over) -> WorkloadConfig:
    values = {"name": "w", "run": ("prog",), "runs": 10}
    values.update(over)
    return WorkloadConfig(**values)


def targets(names: Sequence[str], arm: str) -> dict[str, Target]:
    return {n: Target(argv=(f"{arm}/{n}",), cwd=Path(".")) for n in names}


def test_warmups_then_alternating_pairs() -> None:
    spawner = FakeSpawner(lambda argv, i: ok(1_000_000 + i))
    w = workload(warmup=2)
    out = run_phase([w], targets(["w"], "A"), targets(["w"], "B"), spawner=spawner, env={}, seed=1,
                    warm=set(), arm_keys=("A", "B"))
    arms = [c[0].split("/")[0] for c in spawner.calls]
    assert arms[:4] == ["A", "B", "A", "B"]
    assert arms[4:] == ["A", "B", "B", "A"] * 5
    assert out["w"].orders == ["RC", "CR"] * 5
    assert len(out["w"].reference.wall_ns) == 10


def test_failure_stops_only_that_workload() -> None:
    def answer(argv, i):
        if argv[0] == "B/bad" and i > 8:
            return RawRun(wall_ns=5, cpu_ns=5, maxrss_kib=1, returncode=2, stderr_tail="oops")
        return ok()

    out = run_phase([workload(name="good"), workload(name="bad")], targets(["good", "bad"], "A"),
                    targets(["good", "bad"], "B"), spawner=FakeSpawner(answer), env={}, seed=1,
                    warm=set(), arm_keys=("A", "B"))
    assert out["bad"].failure == "run_failed" and out["bad"].failure_kind == "exit_status"
    assert "exited with status 2: oops" in (out["bad"].failure_text or "")
    assert len(out["good"].candidate.wall_ns) == 10


def test_reported_metric_is_read_from_the_output() -> None:
    w = workload(metric="reported", pattern=r"elapsed_ns=(\d+)")
    run = record(captured(ok(stdout="x\nelapsed_ns=1234\n"), w), w)
    assert run.value_ns == 1234 and run.error is None and run.failure is None
    missing = record(captured(ok(stdout="nothing"), w), w)
    assert missing.error and "did not match pattern" in missing.error
    assert missing.failure == "no_metric"
    garbled = record(captured(ok(stdout="elapsed_ns=12x"), w), w)
    assert garbled.failure is None and garbled.value_ns == 12  # the group took the digits
    both = workload(metric="reported", pattern=r"t=(\S+)", expect=r"sum=(\S+)")
    run = record(captured(ok(stdout="t=oops sum=7"), both), both)
    assert run.failure == "bad_metric" and "not a number" in (run.error or "")


def test_only_patterns_keep_stdout() -> None:
    target = Target(argv=("p",), cwd=Path("."))
    assert request(target, workload(), {}).keep_stdout is False
    assert request(target, workload(), {}).patterns == ()
    with_expect = request(target, workload(expect=r"c=(\d)"), {"A": "1"})
    assert with_expect.keep_stdout and with_expect.patterns == (r"c=(\d)",)
    merged = request(target, workload(env=(("A", "2"),)), {"A": "1", "B": "3"})
    assert dict(merged.env) == {"A": "2", "B": "3"}  # the workload's env wins


def test_expect_mismatch_across_arms_marks_the_workload() -> None:
    def answer(argv, i):
        return ok(stdout="checksum=1" if argv[0].startswith("A") else "checksum=2")

    out = run_phase([workload(expect=r"checksum=(\S+)")], targets(["w"], "A"), targets(["w"], "B"),
                    spawner=FakeSpawner(answer), env={}, seed=1, warm=set(), arm_keys=("A", "B"))
    assert out["w"].failure == "expect_mismatch"


def test_random_order_depends_only_on_the_seed() -> None:
    def orders(seed: int) -> list[str]:
        out = run_phase([workload(order="random", runs=40)], targets(["w"], "A"), targets(["w"], "B"),
                        spawner=FakeSpawner(lambda a, i: ok()), env={}, seed=seed, warm=set(), arm_keys=("A", "B"))
        return out["w"].orders

    assert orders(3) == orders(3)
    assert orders(3) != orders(4)
    assert {"RC", "CR"} == set(orders(3))
