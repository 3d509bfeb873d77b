"""benchbot doctor: findings about this machine, each with a fix where one exists."""

from __future__ import annotations

import io
import shutil
from dataclasses import replace

import pytest

from benchbot import cli, doctor
from benchbot.core.model import Environment
from benchbot.run import machine
from benchbot.sandbox import counting


def test_doctor_reports_cores_load_and_tools() -> None:
    out = io.StringIO()
    assert cli.main(["doctor"], out=out, err=io.StringIO()) == 0
    text = out.getvalue()
    assert "usable CPU cores" in text
    assert "1-minute load average" in text
    assert "git found" in text


def test_a_busy_machine_is_a_warning_with_a_fix(monkeypatch) -> None:
    monkeypatch.setattr(machine, "load_average", lambda: [3.5, 2.0, 1.0])
    findings = doctor.inspect()
    busy = next(f for f in findings if "load average" in f.what)
    assert busy.level == "warn" and busy.fix
    assert "warning(s)" in doctor.format_findings(findings)


def test_environment_warnings_name_other_work_not_the_load() -> None:
    env = Environment(cpu="x", cores=2, kernel="k", python="3", governor="powersave",
                      load_before=(1.7, 1, 1), load_after=(1.2, 0, 0), other_cpu=0.4)
    warnings = machine.warnings(env)
    assert any("other processes kept 0.40 CPUs busy" in w for w in warnings)
    assert any("powersave" in w for w in warnings)
    assert not any("load average" in w for w in warnings)  # benchbot's own load is no warning
    quiet = machine.warnings(replace(env, other_cpu=0.05, governor="performance"))
    assert quiet == []


def test_other_cpu_is_busy_time_less_benchbot_s_own(monkeypatch) -> None:
    """The arithmetic, on made-up clocks: 10 s of wall time, 15 CPU-seconds busy on the
    machine, 12 of them benchbot's and its children's: 0.3 CPUs of other work."""
    clock = {"busy": 100.0, "own": 5.0, "wall": 50.0}
    monkeypatch.setattr(machine, "busy_cpu_seconds", lambda: clock["busy"])
    monkeypatch.setattr(machine, "own_cpu_seconds", lambda: clock["own"])
    monkeypatch.setattr(machine.time, "monotonic", lambda: clock["wall"])
    before = machine.snapshot()
    clock.update(busy=115.0, own=17.0, wall=60.0)
    assert machine.other_cpu(before) == 0.3
    clock.update(own=40.0)  # more of our own than all busy time (clock skew): never negative
    assert machine.other_cpu(before) == 0.0


@pytest.mark.slow
def test_another_process_s_work_counts_as_other_work() -> None:
    import subprocess
    import time

    before = machine.snapshot()
    other = subprocess.Popen(["sh", "-c", "while :; do :; done"], start_new_session=True)
    try:
        time.sleep(1.0)
        theirs = machine.other_cpu(before)  # not reaped yet: not benchbot's own
    finally:
        other.kill()
        other.wait()
    assert theirs is not None and theirs > 0.3, theirs  # more when the machine is busier


def test_doctor_says_whether_instructions_can_be_counted_and_how() -> None:
    found = doctor.counting_findings()
    said = " ".join(f.what for f in found)
    assert all(f.what.startswith("instruction counts: ") for f in found)
    problem = counting.perf_probe()
    if problem is None:
        assert "perf works here" in said
    else:
        assert f"perf cannot count here: {problem}" in said
        if shutil.which("valgrind"):
            assert "valgrind works here" in said, said
        else:
            assert "valgrind is not installed" in said


def test_doctor_says_how_peak_memory_is_measured(monkeypatch, tmp_path) -> None:
    from benchbot.sandbox import forkserver

    found = doctor.memory_findings()
    if forkserver.compiler() is not None:
        assert found[0].level == "ok" and "fork server" in found[0].what
        assert "MiB (the floor of the memory verdict)" in found[0].what
        assert found[0].what.startswith("peak memory: each run's peak RSS (ru_maxrss)")
        assert len(found) == 1
    monkeypatch.setattr(forkserver, "_BUILT", {})
    monkeypatch.setenv("PATH", str(tmp_path))  # no cc there
    [without] = doctor.memory_findings()
    assert without.level == "warn" and "no C compiler" in without.what
    assert without.fix and "install a C compiler" in without.fix
