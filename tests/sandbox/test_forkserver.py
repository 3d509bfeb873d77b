"""The fork server with real processes: a run's peak memory is its own, and everything
else a run gets is what the Python spawner gave it."""

from __future__ import annotations

import os
import signal
import stat
import sys
import time
from pathlib import Path

import pytest

from benchbot.sandbox import bwrap, counting, forkserver, procs
from benchbot.sandbox.spawn import ProcessSpawner, SpawnRequest

pytestmark = pytest.mark.real_runs("the fork server itself: exits, signals, descriptors, "
                                   "environments and peak memory; not times")

needs_cc = pytest.mark.skipif(forkserver.compiler() is None, reason="no C compiler (cc) on PATH")


def req(cwd: Path, *argv: str, **kw: object) -> SpawnRequest:
    env = bwrap.clean_env(os.environ)
    return SpawnRequest(argv=argv, cwd=str(cwd), env=tuple(env.items()),
                        **{"timeout_s": 10, **kw})  # type: ignore[arg-type]


@pytest.fixture(params=[True, False], ids=["fork server", "python"])
def spawner(request: pytest.FixtureRequest, tmp_path: Path):  # type: ignore[no-untyped-def]
    if request.param and forkserver.compiler() is None:
        pytest.skip("no C compiler (cc) on PATH")
    made = ProcessSpawner(tmp_path, fork_server=request.param)
    made.start()
    yield made
    made.close()


def peak_of(spawner: ProcessSpawner, cwd: Path, mib: int) -> int:
    code = f"b = bytearray({mib} << 20)"
    return spawner.spawn(req(cwd, sys.executable, "-I", "-S", "-c", code)).maxrss_kib


@needs_cc
def test_a_run_s_peak_memory_is_its_own_not_its_spawner_s(tmp_path: Path) -> None:
    """A Python that allocates 8 MiB more reads 8 MiB more; /bin/true reads its own 1-2 MiB,
    not the tens of MiB of the Python process that asks for it."""
    server = ProcessSpawner(tmp_path)
    here = ProcessSpawner(tmp_path, fork_server=False)
    try:
        server.start()
        assert "fork server" in server.floor_method
        assert 0 < server.maxrss_floor_kib < 2048
        small = server.spawn(req(tmp_path, "true")).maxrss_kib
        assert server.maxrss_floor_kib <= small < 4096
        assert here.spawn(req(tmp_path, "true")).maxrss_kib >= here.maxrss_floor_kib > 2 * small
        more = peak_of(server, tmp_path, 8) - peak_of(server, tmp_path, 0)
        assert 7 << 10 < more < 9 << 10
    finally:
        server.close()
        here.close()


def test_exit_status_output_and_patterns(spawner: ProcessSpawner, tmp_path: Path) -> None:
    run = spawner.spawn(req(tmp_path, "sh", "-c", "echo value=41; echo oops >&2; exit 3",
                            patterns=(r"value=(\d+)", r"(oops)"), keep_stdout=True))
    assert (run.returncode, run.captures, run.stderr_tail) == (3, ("41", "oops"), "oops\n")
    assert run.wall_ns > 0 and run.cpu_ns >= 0 and run.maxrss_kib > 0


def test_a_run_killed_by_a_signal_reads_minus_the_signal(spawner: ProcessSpawner,
                                                         tmp_path: Path) -> None:
    run = spawner.spawn(req(tmp_path, "sh", "-c", "kill -TERM $$"))
    assert run.returncode == -signal.SIGTERM and run.failed


def test_the_timeout_kills_the_run_s_group(spawner: ProcessSpawner, tmp_path: Path) -> None:
    start = time.monotonic()
    run = spawner.spawn(req(tmp_path, "sh", "-c", "sleep 30 & sleep 30", timeout_s=0.3))
    assert run.timed_out and run.failed and time.monotonic() - start < 5


def test_what_cannot_start_is_not_started_with_the_reason(spawner: ProcessSpawner,
                                                          tmp_path: Path) -> None:
    missing = spawner.spawn(req(tmp_path, str(tmp_path / "nothing-here")))
    assert missing.not_started and "No such file" in missing.not_started
    nowhere = spawner.spawn(req(tmp_path / "no-such-dir", "true"))
    assert nowhere.not_started and "No such file" in nowhere.not_started
    nul = spawner.spawn(req(tmp_path, "echo", "a\0b"))
    assert nul.not_started and "null" in nul.not_started


def test_the_run_gets_exactly_its_environment_directory_and_pin(spawner: ProcessSpawner,
                                                                tmp_path: Path) -> None:
    env = (("PATH", os.defpath), ("ONLY", "this one"))
    script = "env | sort; pwd; grep Cpus_allowed_list /proc/self/status"
    run = spawner.spawn(SpawnRequest(argv=("/bin/sh", "-c", script), cwd=str(tmp_path), env=env,
                                     timeout_s=10, pin=(0,), keep_stdout=True,
                                     patterns=(r"(?s)(.*)",)))
    out = run.captures[0] or ""
    assert "ONLY=this one" in out and "HOME=" not in out
    assert str(tmp_path) in out
    assert out.rstrip().endswith("Cpus_allowed_list:\t0")
    assert os.sched_getaffinity(0) != {0} or os.cpu_count() == 1  # the spawner's own is back


def test_what_a_run_left_running_outside_its_group_is_ended(spawner: ProcessSpawner,
                                                            tmp_path: Path) -> None:
    """A double-forked, setsid child: gone before the next run, whoever started it."""
    procs.become_subreaper()  # as the worker and benchbot are (the fork server is its own)
    marker = tmp_path / "pid"
    script = f"setsid sh -c 'echo $$ > {marker}; exec sleep 60' & sleep 0.2"
    assert spawner.spawn(req(tmp_path, "sh", "-c", script)).returncode == 0
    pid = int(marker.read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


@needs_cc
def test_a_run_under_the_fork_server_ignores_no_signal(tmp_path: Path) -> None:
    """A Python ignores SIGPIPE, and an ignored signal stays ignored across exec; the fork
    server hands its runs the defaults, as a shell would."""
    spawner = ProcessSpawner(tmp_path)
    try:
        run = spawner.spawn(req(tmp_path, "grep", "SigIgn", "/proc/self/status",
                                keep_stdout=True, patterns=(r"SigIgn:\s+(\S+)",)))
        assert run.captures == ("0000000000000000",)
    finally:
        spawner.close()


@needs_cc
def test_perf_counts_through_the_fork_server(tmp_path: Path) -> None:
    """The counter is opened by the fork server on itself and handed over: a run that
    touches more pages counts more page faults (the software stand-in for instructions)."""
    spawner = ProcessSpawner(tmp_path, perf_events=counting.SOFTWARE_TEST)
    try:
        small = spawner.spawn(req(tmp_path, sys.executable, "-I", "-S", "-c", "0", count="perf"))
        big = spawner.spawn(req(tmp_path, sys.executable, "-I", "-S", "-c",
                                "b = bytearray(16 << 20)", count="perf"))
        if small.count_error:
            pytest.skip(small.count_error)
        assert small.instructions and big.instructions
        assert big.instructions > small.instructions + 3000  # 16 MiB is 4,096 pages
    finally:
        spawner.close()


@needs_cc
def test_the_program_is_built_once_per_process(tmp_path: Path) -> None:
    first = forkserver.build(tmp_path)
    (tmp_path / "later").mkdir()
    assert forkserver.build(tmp_path / "later") == first
    assert not any((tmp_path / "later").iterdir())


@needs_cc
def test_each_sandbox_gets_its_own_copy_of_one_build(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """One compile a process; each comparison's sandbox binds a file of its own, which
    nothing it does can make the next comparison's."""
    real = forkserver.compiler()
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "calls"
    (bin_dir / "cc").write_text(f'#!/bin/sh\necho "$*" >> {log}\nexec {real} "$@"\n')
    (bin_dir / "cc").chmod(0o755)
    monkeypatch.setattr(forkserver, "_BUILT", {})
    monkeypatch.setattr(forkserver, "_PRIVATE", None)
    path = f"{bin_dir}:{os.defpath}"
    copies = []
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        copies.append(forkserver.copy_into(tmp_path / name, path=path))
    a, b = copies
    assert a.parent == tmp_path / "a" and b.parent == tmp_path / "b"
    assert len(log.read_text().splitlines()) == 1  # built once
    private = forkserver._PRIVATE
    assert private is not None and tmp_path not in private.parents
    assert stat.S_IMODE(private.stat().st_mode) == 0o700
    b.write_bytes(b"#!/bin/sh\nexit 0\n")  # a copy changed does not change the build
    (tmp_path / "c").mkdir()
    c = forkserver.copy_into(tmp_path / "c", path=path)
    assert c.read_bytes() == a.read_bytes() != b.read_bytes()
    assert os.access(c, os.X_OK)
    server = forkserver.start(tmp_path, program=c)
    try:
        assert 0 < server.floor_kib() < 2048
    finally:
        server.close()


def test_without_a_compiler_the_runs_start_here_and_the_floor_says_so(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(forkserver, "_BUILT", {})
    monkeypatch.setenv("PATH", str(tmp_path))  # no cc there
    spawner = ProcessSpawner(tmp_path)
    try:
        run = spawner.spawn(req(tmp_path, "/bin/true"))
        assert run.returncode == 0
        assert "no C compiler" in spawner.floor_method
        assert spawner.maxrss_floor_kib > 2048  # this Python's own peak
        assert spawner.unreaped_cpu_s == 0.0
    finally:
        spawner.close()


@needs_cc
def test_a_fork_server_that_died_is_an_error_that_says_so(tmp_path: Path) -> None:
    server = forkserver.start(tmp_path)
    try:
        os.kill(server.pid, signal.SIGKILL)
        with pytest.raises(forkserver.ForkServerError, match="stopped"):
            server.floor_kib()
    finally:
        server.close()


@needs_cc
def test_a_request_it_does_not_know_is_answered_not_obeyed(tmp_path: Path) -> None:
    server = forkserver.start(tmp_path)
    try:
        assert server._ask(b"Z", b"") == "E an unknown command"
        assert server._ask(b"R", b"0\0\0/\0/bin/true\0" + b"5\0") == "E a bad run request"
        assert server.floor_kib() > 0  # still answering
        assert server.cpu_s() >= 0.0
    finally:
        server.close()


@needs_cc
def test_where_a_static_build_fails_a_dynamic_one_serves(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """A C library without its static archive (Fedora without glibc-static) refuses
    -static; the fork server is then built dynamic, and its floor is still small."""
    real = forkserver.compiler()
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "calls"
    cc = bin_dir / "cc"
    cc.write_text(f'#!/bin/sh\necho "$*" >> {log}\ncase " $* " in *" -static "*) '
                  f'echo "cannot find -lc" >&2; exit 1;; esac\nexec {real} "$@"\n')
    cc.chmod(0o755)
    monkeypatch.setattr(forkserver, "_BUILT", {})
    server = forkserver.start(tmp_path, path=f"{bin_dir}:{os.defpath}")
    try:
        calls = log.read_text().splitlines()
        assert len(calls) == 2 and "-static" in calls[0] and "-static" not in calls[1]
        assert 0 < server.floor_kib() < 2048
    finally:
        server.close()


@needs_cc
def test_a_run_that_stops_the_fork_server_fails_and_the_next_run_is_made(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The fork server is the run's parent (not the sandbox's init, as the worker is): a
    run can stop it. The answer is then awaited for the run's timeout and a grace, no
    longer; the fork server is killed, that run fails saying why, and a fresh fork server
    makes the next run."""
    monkeypatch.setattr(forkserver, "ANSWER_GRACE_S", 0.5)
    spawner = ProcessSpawner(tmp_path)
    try:
        start = time.monotonic()
        run = spawner.spawn(req(tmp_path, "sh", "-c", "kill -STOP $PPID", timeout_s=0.5))
        assert time.monotonic() - start < 5
        assert run.failed and "did not answer" in (run.not_started or "")
        assert "stopped the fork server that timed it" in (run.not_started or "")
        assert spawner.spawn(req(tmp_path, "true")).returncode == 0
        assert spawner.has_fork_server
    finally:
        spawner.close()
