"""The process layer with real processes: in this process, and in the sandbox's worker."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from benchbot import sandbox
from benchbot.spawn import ProcessSpawner, SpawnRequest

needs_bwrap = pytest.mark.skipif(
    not sandbox.probe().works,
    reason=f"bubblewrap cannot make a sandbox here: {sandbox.probe().problem}",
)


def req(tmp_path: Path, *argv: str) -> SpawnRequest:
    env = sandbox.clean_env(os.environ)
    return SpawnRequest(argv=argv, cwd=str(tmp_path), env=tuple(env.items()), timeout_s=10)


def spawners(tmp_path: Path) -> list[ProcessSpawner | sandbox.WorkerSpawner]:
    made: list[ProcessSpawner | sandbox.WorkerSpawner] = [ProcessSpawner(tmp_path)]
    if sandbox.probe().works:
        made.append(sandbox.WorkerSpawner(sandbox.choose("on"), tmp_path,
                                          sandbox.clean_env(os.environ), places=[tmp_path]))
    return made


def test_runs_in_one_exchange_stop_after_the_first_that_failed(tmp_path: Path) -> None:
    for spawner in spawners(tmp_path):
        try:
            runs = spawner.spawn_many([req(tmp_path, "true"), req(tmp_path, "sh", "-c", "exit 3"),
                                       req(tmp_path, "true")])
            assert [r.returncode for r in runs] == [0, 3], spawner
            assert [r.failed for r in runs] == [False, True]
            assert all(r.wall_ns > 0 for r in runs)
            assert spawner.spawn_many([]) == []
            not_there = spawner.spawn_many([req(tmp_path, "/no/such/program"),
                                            req(tmp_path, "true")])
            assert len(not_there) == 1 and not_there[0].not_started
        finally:
            spawner.close()


def test_a_batch_of_groups_skips_only_the_failed_workload_s_later_groups(tmp_path: Path) -> None:
    fail, true = req(tmp_path, "sh", "-c", "exit 3"), req(tmp_path, "true")
    for spawner in spawners(tmp_path):
        try:
            runs = spawner.spawn_groups([[true, fail, true], [true, true], [true], [true, true]],
                                        ["a", "b", "a", "b"])
            assert [[r.returncode for r in g] for g in runs] == [[0, 3], [0, 0], [], [0, 0]], spawner
            with pytest.raises(ValueError):
                ProcessSpawner(tmp_path).spawn_groups([[true]], ["a", "b"])
        finally:
            spawner.close()


@needs_bwrap
def test_a_worker_that_died_is_an_error_that_says_so(tmp_path: Path) -> None:
    worker = sandbox.WorkerSpawner(sandbox.choose("on"), tmp_path, sandbox.clean_env(os.environ),
                                   places=[tmp_path])
    try:
        worker.ready()
        assert worker.spawn(req(tmp_path, "true")).returncode == 0
        # The run kills the worker that started it, as the OOM killer would. (Killing
        # bubblewrap from outside is not the same: with --new-session the worker outlives
        # it for a moment through --die-with-parent, and may still answer.)
        with pytest.raises(sandbox.SandboxError, match="measuring worker in the sandbox stopped"):
            worker.spawn(req(tmp_path, "sh", "-c", "kill -KILL $PPID; sleep 5"))
    finally:
        worker.close()
