"""The runner's bookkeeping through the Spawner seam: deterministic, no processes."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from benchbot.config.config import WorkloadConfig
from benchbot.run.rounds import run_phase
from benchbot.run.runner import RawRun, SpawnRequest, Target, record, request
from benchbot.sandbox.spawn import find_captures, in_groups


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


class BatchingSpawner(FakeSpawner):
    """The FakeSpawner's answers, taken in batches of pairs as the sandbox's worker takes
    them (``spawn.in_groups``); counts the exchanges."""

    def __init__(self, answer) -> None:
        super().__init__(answer)
        self.exchanges: list[list[str]] = []

    def spawn_groups(self, groups, keys) -> list[list[RawRun]]:
        self.exchanges.append(list(keys))
        return in_groups(self.spawn, groups, keys)


def test_pairs_go_in_batches_of_about_100_ms_with_the_same_runs_in_the_same_order() -> None:
    # Runs of 5 ms: each workload's first pair alone (nothing measured yet), then ten pairs
    # an exchange.
    def answer(argv, i):
        return ok(5_000_000 + i)

    ws = [workload(name="a", runs=20), workload(name="b", runs=20)]
    one_by_one, batched = FakeSpawner(answer), BatchingSpawner(answer)
    results = [run_phase(ws, targets(["a", "b"], "A"), targets(["a", "b"], "B"), spawner=s, env={},
                         seed=1, warm=set(), arm_keys=("A", "B"))
               for s in (one_by_one, batched)]
    assert batched.calls == one_by_one.calls
    assert [len(e) for e in batched.exchanges[:3]] == [1, 1, 10]
    assert len(batched.exchanges) < 8  # 40 pairs; one an exchange before
    for name in ("a", "b"):
        assert results[1][name].orders == results[0][name].orders
        assert results[1][name].reference.wall_ns == results[0][name].reference.wall_ns


def test_a_failure_in_a_batch_skips_its_workload_s_later_pairs_and_no_other() -> None:
    # "bad" fails at its fourth pair: the worker skips bad's later pairs in that batch and
    # makes good's; no later batch holds bad; what is recorded is what one pair at a
    # time records.
    def answer_for(spawner):
        def answer(argv, i):
            if argv[0] == "B/bad" and sum(1 for c in spawner.calls if c[0] == "B/bad") == 5:
                return RawRun(wall_ns=5, cpu_ns=5, maxrss_kib=1, returncode=2, stderr_tail="oops")
            return ok(2_000_000)
        return answer

    outs, spawners = [], []
    for make in (FakeSpawner, BatchingSpawner):
        spawner = make(None)
        spawner.answer = answer_for(spawner)
        spawners.append(spawner)
        outs.append(run_phase([workload(name="good"), workload(name="bad")],
                              targets(["good", "bad"], "A"), targets(["good", "bad"], "B"),
                              spawner=spawner, env={}, seed=1, warm=set(), arm_keys=("A", "B")))
    for name in ("good", "bad"):
        for arm in ("reference", "candidate"):
            assert getattr(outs[1][name], arm).wall_ns == getattr(outs[0][name], arm).wall_ns
        assert outs[1][name].orders == outs[0][name].orders
    assert outs[1]["bad"].failure == "run_failed" and len(outs[1]["bad"].orders) == 4
    assert len(outs[1]["good"].candidate.wall_ns) == 10
    # Not one run of bad's after the failure: skipped in its batch, left out of later ones.
    assert [c for c in spawners[1].calls if c[0].endswith("/bad")] == \
        [c for c in spawners[0].calls if c[0].endswith("/bad")]
    assert len(spawners[1].exchanges) < 15  # 20 pairs


def test_a_mismatch_found_after_the_batch_discards_its_workload_s_later_pairs() -> None:
    # The worker cannot see an expect mismatch: the runs after it in the batch are made
    # and then discarded, the first mismatch ends the workload as unbatched.
    def answer(argv, i):
        return ok(2_000_000, stdout="checksum=1" if i < 12 else "checksum=2")

    one_by_one, batched = FakeSpawner(answer), BatchingSpawner(answer)
    results = [run_phase([workload(expect=r"checksum=(\S+)", runs=20)], targets(["w"], "A"),
                         targets(["w"], "B"), spawner=s, env={}, seed=1, warm=set(),
                         arm_keys=("A", "B"))["w"] for s in (one_by_one, batched)]
    assert results[0].failure == results[1].failure == "expect_mismatch"
    assert results[1].orders == results[0].orders
    assert results[1].reference.wall_ns == results[0].reference.wall_ns
    assert results[1].candidate.wall_ns == results[0].candidate.wall_ns


def test_a_failure_quotes_the_last_lines_of_stderr_each_cut_short() -> None:
    """A program that prints a 3,000-character line before it fails: the reason (a note in
    the report) quotes at most 160 characters of each of the last three lines."""
    raw = RawRun(wall_ns=5, cpu_ns=5, maxrss_kib=1, returncode=3,
                 stderr_tail="first\n" + "x" * 3000 + "\nsecond\nboom")
    rec = record(raw, workload())
    assert rec.failure == "exit_status"
    assert rec.error == f"exited with status 3: {'x' * 159}… | second | boom"


def test_a_failure_quotes_a_line_of_stderr_printed_again_once() -> None:
    """A harness that prints the same line after each failing benchmark: the reason quotes
    it once, at its last place, and the last distinct lines before it."""
    raw = RawRun(wall_ns=5, cpu_ns=5, maxrss_kib=1, returncode=1,
                 stderr_tail="setup\nerror: fixture missing\nFAIL\nerror: fixture missing\nFAIL\n")
    rec = record(raw, workload())
    assert rec.error == "exited with status 1: setup | error: fixture missing | FAIL"
