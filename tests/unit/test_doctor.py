"""benchbot doctor: findings about this machine, each with a fix where one exists."""

from __future__ import annotations

import io
from dataclasses import replace

from benchbot import cli, doctor, machine
from benchbot.model import Environment


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


def test_other_cpu_leaves_benchbot_s_own_work_out() -> None:
    """benchbot's own busy loop and a child's count as its own; another process's does not."""
    import subprocess
    import time

    before = machine.snapshot()
    end = time.monotonic() + 0.6
    while time.monotonic() < end:  # this process: busy
        pass
    subprocess.run(["sh", "-c", "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done"], check=True)
    mine = machine.other_cpu(before)
    assert mine is not None and mine < 0.5, mine  # other tests' processes may run meanwhile
    before = machine.snapshot()
    other = subprocess.Popen(["sh", "-c", "while :; do :; done"], start_new_session=True)
    try:
        time.sleep(1.0)
        theirs = machine.other_cpu(before)  # not yet reaped: not benchbot's own
    finally:
        other.kill()
        other.wait()
    assert theirs is not None and theirs > 0.6, theirs
