"""Three workers (base, head, base again's place) go through one batch in step, each
making its own runs and waiting for the others' (benchbot.sandbox.worker): threads stand for the
workers, a fake spawner for the fork server, real pipes for the turns."""

from __future__ import annotations

import os
import threading
from typing import Any

from benchbot.sandbox import bwrap, worker
from benchbot.sandbox.spawn import RawRun, SpawnRequest


class Log:
    """The runs made, in the order made, across the workers; the run named ``fail`` fails."""

    def __init__(self, fail: str | None = None) -> None:
        self.made: list[str] = []
        self.fail = fail
        self.lock = threading.Lock()

    def spawner(self) -> Any:
        log = self

        class Fake:
            def spawn(self, request: SpawnRequest) -> RawRun:
                with log.lock:
                    log.made.append(request.argv[0])
                return RawRun(wall_ns=1, cpu_ns=1, maxrss_kib=1,
                              returncode=1 if request.argv[0] == log.fail else 0)

        return Fake()


def _batch(groups: list[list[tuple[int, str]]], log: Log) -> list[list[list[Any]]]:
    """Run ``groups`` of (worker, run name) on three workers at once; each one's answer."""
    pipes = bwrap._turn_pipes(3)
    owners = [[o for o, _ in g] for g in groups]
    requests = [[SpawnRequest(argv=(name,), cwd="/", env=(), timeout_s=5.0) for _, name in g]
                for g in groups]
    keys = [f"w{i}" for i in range(len(groups))]
    answers: list[Any] = [None] * 3

    def work(index: int) -> None:
        import json

        turns = {peer: worker.Turn(take, give) for peer, take, give in pipes[index]}
        line = json.loads(bwrap._request_line(requests, owners, keys, index))
        answers[index] = worker.run_batch(log.spawner(), turns, line)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    for fds in pipes:
        for _, take, give in fds:
            os.close(take)
            os.close(give)
    return answers


def test_three_workers_make_a_batch_in_its_order() -> None:
    log = Log()
    groups = [[(0, "b1"), (2, "a1"), (1, "h1")], [(1, "h2"), (0, "b2"), (2, "a2")],
              [(2, "a3"), (1, "h3"), (0, "b3")]]
    answers = _batch(groups, log)
    assert log.made == ["b1", "a1", "h1", "h2", "b2", "a2", "a3", "h3", "b3"]
    for index, answer in enumerate(answers):  # each answers for its own runs only
        for group, made in zip(groups, answer, strict=True):
            assert [entry is not None for entry in made] == [o == index for o, _ in group]


def test_a_failed_run_ends_its_group_and_its_workload_in_every_worker() -> None:
    log = Log(fail="a1")
    groups = [[(0, "b1"), (2, "a1"), (1, "h1")], [(1, "h2"), (0, "b2"), (2, "a2")]]
    answers = _batch(groups, log)
    assert log.made == ["b1", "a1", "h2", "b2", "a2"]  # h1 never ran; w1 goes on
    assert all(len(answer[0]) == 2 for answer in answers)


def test_a_run_for_a_worker_that_is_not_a_peer_is_a_bad_request() -> None:
    take, give = os.pipe()
    try:
        turn = worker.Turn(take, give)
        message = {"groups": [[7]], "keys": ["w"]}
        try:
            worker.run_batch(Log().spawner(), {1: turn}, message)
        except ValueError as exc:
            assert "worker 7" in str(exc)
        else:
            raise AssertionError("no error")
    finally:
        os.close(take)
        os.close(give)


def test_the_worker_that_makes_the_next_run_is_told_last() -> None:
    # the others only note the run and wait again: woken first, they are done before the
    # next run starts, not inside its timed region (benchmarks/README.md, section 14)
    told: list[int] = []

    class Told(worker.Turn):
        def __init__(self, number: int) -> None:
            self.number = number

        def give(self, failed: bool) -> None:
            told.append(self.number)

        def take(self) -> bool:
            return False

    def run(name: str) -> dict[str, Any]:
        return SpawnRequest(argv=(name,), cwd="/", env=(), timeout_s=5.0).to_json()

    message = {"groups": [[run("b1"), 2, 1], [1, run("b2"), 2], [run("b3"), 1, 2], [2, 1, run("b4")]],
               "keys": ["w", "w", "w", "w"]}
    answer = worker.run_batch(Log().spawner(), {1: Told(1), 2: Told(2)}, message)
    assert told == [1, 2, 1, 2, 2, 1, 1, 2]  # b4, the batch's last, tells them in their order
    assert [[entry is not None for entry in g] for g in answer] == [
        [True, False, False], [False, True, False], [True, False, False], [False, False, True]]
