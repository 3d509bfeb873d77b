"""The process layer with real processes: in this process, and in the sandbox's worker."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import signal
from pathlib import Path

import pytest

from benchbot.sandbox import bwrap, forkserver, procs
from benchbot.sandbox.spawn import ProcessSpawner, SpawnRequest

pytestmark = pytest.mark.real_runs("the spawner itself: processes, descriptors, the worker's protocol; not times")

needs_bwrap = pytest.mark.skipif(
    not bwrap.probe().works,
    reason=f"bubblewrap cannot make a sandbox here: {bwrap.probe().problem}",
)


def req(tmp_path: Path, *argv: str) -> SpawnRequest:
    env = bwrap.clean_env(os.environ)
    return SpawnRequest(argv=argv, cwd=str(tmp_path), env=tuple(env.items()), timeout_s=10)


def spawners(tmp_path: Path) -> list[ProcessSpawner | bwrap.WorkerSpawner]:
    made: list[ProcessSpawner | bwrap.WorkerSpawner] = [ProcessSpawner(tmp_path)]
    if bwrap.probe().works:
        made.append(bwrap.WorkerSpawner(bwrap.choose("on"), tmp_path,
                                          bwrap.clean_env(os.environ), places=[tmp_path]))
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


def kill_worker(spawner: bwrap.WorkerSpawner, index: int = 0) -> None:
    """SIGKILL a worker from outside its sandbox, as the OOM killer would. (Its runs
    cannot: it is the init of their PID namespace. Killing bubblewrap is not the same:
    with --new-session the worker outlives it for a moment through --die-with-parent,
    and may still answer.)"""
    bwrap_pid = spawner._workers[index]._proc.pid  # the process to find
    killed = 0
    for pid in procs.descendants(bwrap_pid):
        try:
            os.kill(pid, signal.SIGKILL)
            killed += 1
        except ProcessLookupError:
            pass  # the fork server, gone with the worker (its namespace's init) just killed
    assert killed, "no process of the worker's was found to kill"


@needs_bwrap
def test_a_worker_that_died_is_an_error_that_says_so(tmp_path: Path) -> None:
    worker = bwrap.WorkerSpawner(bwrap.choose("on"), tmp_path, bwrap.clean_env(os.environ),
                                   places=[tmp_path])
    try:
        worker.ready()
        assert worker.spawn(req(tmp_path, "true")).returncode == 0
        kill_worker(worker)
        with pytest.raises(bwrap.SandboxError, match="measuring worker in the sandbox stopped"):
            worker.spawn(req(tmp_path, "true"))
    finally:
        worker.close()


@needs_bwrap
def test_a_run_can_neither_kill_nor_stop_its_worker(tmp_path: Path) -> None:
    """The worker is PID 1 of its namespace: no signal from its runs reaches it but those
    it handles, and it ignores SIGINT. (A run used to stop the worker that timed it.) The
    run's parent is the fork server, which a run can kill: that run fails, saying so, and
    a fresh fork server makes the next run."""
    worker = bwrap.WorkerSpawner(bwrap.choose("on"), tmp_path, bwrap.clean_env(os.environ),
                                   places=[tmp_path])
    try:
        signals = "; ".join(f"kill -{s} 1" for s in ("STOP", "INT", "TERM", "KILL"))
        assert worker.spawn(req(tmp_path, "sh", "-c", f"{signals}; exit 0")).returncode == 0
        assert worker.spawn(req(tmp_path, "true")).returncode == 0
        if forkserver.compiler() is not None:  # a fork server is the runs' parent
            parent = worker.spawn(req(tmp_path, "sh", "-c", "kill -KILL $PPID; sleep 5; exit 0"))
            assert parent.failed
            assert "stopped the fork server that timed it" in (parent.not_started or "")
            assert worker.spawn(req(tmp_path, "true")).returncode == 0
            assert worker.maxrss_floor_kib < 2048  # the runs are still the fork server's
    finally:
        worker.close()


def where(place: Path, log: Path | None = None, status: int = 0) -> SpawnRequest:
    """A run in ``place`` that names it on stderr (and appends it to ``log``)."""
    script = 'basename "$PWD" >&2' + (f"; basename \"$PWD\" >> '{log}'" if log else "")
    return req(place, "sh", "-c", f"{script}; exit {status}")


@needs_bwrap
def test_two_workers_take_turns_in_the_batch_s_order(tmp_path: Path) -> None:
    """Each place's runs are made by its own worker, one run at a time in the order of the
    batch, and a failure in one worker's run ends the group and skips its workload's later
    groups in both."""
    a, b, log = tmp_path / "a", tmp_path / "b", tmp_path / "log"
    for d in (a, b, log):
        d.mkdir()
    order = log / "order"
    ok_a, ok_b = where(a, order), where(b, order)
    spawner = bwrap.WorkerSpawner(bwrap.choose("on"), tmp_path, bwrap.clean_env(os.environ),
                                    places=[a, b], writable=[log])
    try:
        runs = spawner.spawn_groups([[ok_a, where(b, order, 3), ok_a], [ok_b, ok_a], [ok_a],
                                     [ok_b, ok_a, ok_b]], ["x", "y", "x", "y"])
        assert [[r.returncode for r in g] for g in runs] == [[0, 3], [0, 0], [], [0, 0, 0]]
        assert [[r.stderr_tail.strip() for r in g] for g in runs] == [
            ["a", "b"], ["b", "a"], [], ["b", "a", "b"]]
        assert order.read_text().split() == ["a", "b", "b", "a", "b", "a", "b"]
        assert spawner.spawn(ok_b).stderr_tail.strip() == "b"  # one worker alone
        assert spawner.spawn_many([ok_a, ok_a])[1].returncode == 0
    finally:
        spawner.close()


@needs_bwrap
def test_a_run_cannot_touch_the_other_place(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    (b / "prog").write_text("original\n")
    spawner = bwrap.WorkerSpawner(bwrap.choose("on"), tmp_path, bwrap.clean_env(os.environ),
                                    places=[a, b])
    try:
        write = req(a, "sh", "-c", f"echo planted > '{b}/prog'")
        read = req(a, "cat", f"{b}/prog")
        runs = spawner.spawn_groups([[write], [read]], ["w", "r"])
        assert [g[0].returncode != 0 for g in runs] == [True, True]
        assert (b / "prog").read_text() == "original\n"
        assert spawner.spawn(req(b, "sh", "-c", "echo mine > prog")).returncode == 0
        assert (b / "prog").read_text() == "mine\n"
        with pytest.raises(bwrap.SandboxError, match="in none of the places"):
            spawner.spawn(req(tmp_path, "true"))
    finally:
        spawner.close()


@needs_bwrap
def test_three_places_take_their_turns_and_none_reaches_another(tmp_path: Path) -> None:
    """Base, head and base again's copy: each place's worker makes its runs of a batch of
    triplets in the triplets' order; a run reaches neither other place, nor a descriptor."""
    places = [tmp_path / name for name in ("base", "head", "agai")]
    for place in places:
        place.mkdir()
        (place / "prog").write_text("original\n")
    spawner = bwrap.WorkerSpawner(bwrap.choose("on"), tmp_path, bwrap.clean_env(os.environ),
                                    places=places)
    try:
        orders = [(0, 2, 1), (1, 0, 2), (2, 1, 0)]
        groups = [[req(places[i], "sh", "-c", "date +%s%N >> when; ls /proc/self/fd >&2")
                   for i in order] for order in orders]
        runs = spawner.spawn_groups(groups, ["w", "w", "w"])
        assert all(run.returncode == 0 and run.stderr_tail.split() == ["0", "1", "2", "3"]
                   for g in runs for run in g)
        when = {i: [int(t) for t in (p / "when").read_text().split()] for i, p in enumerate(places)}
        made = sorted((t, i) for i, ts in when.items() for t in ts)
        assert [i for _, i in made] == [i for order in orders for i in order]
        for i, place in enumerate(places):
            others = [p for p in places if p != place]
            attack = req(place, "sh", "-c", "; ".join(f"echo planted > '{o}/prog'" for o in others))
            assert spawner.spawn(attack).returncode != 0, i
        assert all((p / "prog").read_text() == "original\n" for p in places)
    finally:
        spawner.close()


def test_a_run_inherits_no_descriptor_but_its_three(tmp_path: Path) -> None:
    """Neither benchbot's (or the worker's) pipes nor anything it inherited itself reach a run."""
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    spare_r, spare_w = os.pipe()  # as a parent's pipe that benchbot inherited would be
    os.set_inheritable(spare_w, True)
    made: list[ProcessSpawner | bwrap.WorkerSpawner] = [ProcessSpawner(tmp_path)]
    if bwrap.probe().works:
        made.append(bwrap.WorkerSpawner(bwrap.choose("on"), tmp_path,
                                          bwrap.clean_env(os.environ), places=[a, b]))
    listing = "ls /proc/self/fd >&2"  # ls's own: 0, 1, 2 and 3 (the directory it reads)
    try:
        for spawner in made:
            try:
                for place in (a, b):
                    run = spawner.spawn(req(place, "sh", "-c", listing))
                    assert run.stderr_tail.split() == ["0", "1", "2", "3"], spawner
            finally:
                spawner.close()
    finally:
        os.close(spare_r)
        os.close(spare_w)


class ScriptedWorker:
    """Stands for the sandbox: in place of the worker, a script that says it is ready and
    then answers a batch with ``answer``."""

    active = True

    def __init__(self, answer: str) -> None:
        self.answer = answer

    def wrap(self, argv: object, **_: object) -> list[str]:
        return ["sh", "-c", 'echo \'{"ready": true}\'; read line; printf "%s\\n" "$0"; cat',
                self.answer]

    def adjust_env(self, env: dict[str, str]) -> dict[str, str]:
        return dict(env)


@pytest.mark.parametrize(("answer", "problem"), [
    ("Traceback (most recent call last):", "not JSON"),
    ('{"groups": []}', "0 groups for a batch of 1"),
    ('{"groups": [[], []]}', "2 groups for a batch of 1"),
    ('{"groups": "all"}', "where a list of groups was expected"),
    ('["groups"]', "where 'groups' was expected"),
    ('{"error": "bad request: x"}', "bad request"),
    ('{"groups": [[{"wall_ns": 1}]]}', "a run that is not one"),
    ('{"groups": [[7]]}', "a run that is not one"),
    ('{"groups": [[null]]}', "disagree on who made a run"),
    ('{"groups": [[{}, {}, {}]]}', r"\[3\] runs for a group of 2"),
])
def test_an_answer_that_is_not_what_was_asked_is_a_sandbox_error(tmp_path: Path, answer: str,
                                                                 problem: str) -> None:
    spawner = bwrap.WorkerSpawner(ScriptedWorker(answer), tmp_path,  # type: ignore[arg-type]
                                    bwrap.clean_env(os.environ), places=[tmp_path])
    try:
        with pytest.raises(bwrap.SandboxError, match=problem):
            spawner.spawn_groups([[req(tmp_path, "true"), req(tmp_path, "true")]], ["x"])
    finally:
        spawner.close()


@needs_bwrap
def test_one_of_two_workers_dying_is_an_error_not_a_hang(tmp_path: Path) -> None:
    """The other worker, waiting for the turn, sees the pipe close and answers; benchbot
    says that a worker stopped."""
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    spawner = bwrap.WorkerSpawner(bwrap.choose("on"), tmp_path, bwrap.clean_env(os.environ),
                                    places=[a, b])
    try:
        spawner.ready()
        kill_worker(spawner, 1)
        with pytest.raises(bwrap.SandboxError, match="measuring worker in the sandbox stopped"):
            spawner.spawn_groups([[req(a, "true"), req(b, "true"), req(a, "true")]], ["x"])
    finally:
        spawner.close()


@needs_bwrap
def test_the_worker_reports_the_peak_rss_no_run_reads_below(tmp_path: Path) -> None:
    """A run's peak RSS reads at least what its spawner's runs start from: the worker says
    so, the memory verdict's floor; its fork server's, under 2 MiB, where the sandbox has a
    C compiler, else the worker's own (Linux keeps the replaced address space's high-water
    mark at exec), far above /bin/true's own peak."""
    worker = bwrap.WorkerSpawner(bwrap.choose("on"), tmp_path, bwrap.clean_env(os.environ),
                                   places=[tmp_path])
    try:
        run = worker.spawn(req(tmp_path, "true"))
        floor = worker.maxrss_floor_kib
        assert 0 < floor <= run.maxrss_kib
        if forkserver.compiler() is not None:
            assert floor < 2048 and run.maxrss_kib < 4096
        else:
            assert floor > 4096
    finally:
        worker.close()


@needs_bwrap
@pytest.mark.slow  # close() waits its 10 s for the busy worker first
def test_closing_a_busy_worker_ends_its_namespace(tmp_path: Path) -> None:
    """The worker is its namespace's init; when it does not end (a run of 60 s under way),
    close() kills bubblewrap, whose --die-with-parent signal ends the worker (the kernel
    delivers it from outside the namespace) and the namespace with all its runs."""
    import threading
    import time

    worker = bwrap.WorkerSpawner(bwrap.choose("on"), tmp_path, bwrap.clean_env(os.environ),
                                   places=[tmp_path])
    worker.ready()
    bwrap_pid = worker._workers[0]._proc.pid  # the process to find
    def run() -> None:
        # The worker stops under it, and close() closes the pipe it reads: whichever it
        # meets first (an error, or a closed file) is no concern here.
        with contextlib.suppress(bwrap.SandboxError, ValueError, OSError):
            worker.spawn(dataclasses.replace(req(tmp_path, "sleep", "60"), timeout_s=120))

    busy = threading.Thread(target=run)
    busy.start()
    def text(path: str) -> str:
        try:
            return Path(path).read_text()
        except OSError:
            return ""

    deadline = time.monotonic() + 10
    while not any("sleep" in text(f"/proc/{p}/cmdline") for p in procs.descendants(bwrap_pid)) \
            and time.monotonic() < deadline:
        time.sleep(0.05)
    inside = procs.descendants(bwrap_pid)
    started = time.monotonic()
    worker.close()
    busy.join(timeout=30)
    assert time.monotonic() - started < 20 and not busy.is_alive()
    def alive() -> list[int]:
        return [p for p in inside if text(f"/proc/{p}/stat").split(") ")[-1][:1] not in ("", "Z")]

    deadline = time.monotonic() + 5  # the namespace's end is the kernel's, a moment later
    while alive() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert alive() == []
