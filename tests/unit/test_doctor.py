"""benchbot doctor: findings about this machine, each with a fix where one exists."""

from __future__ import annotations

import io

from benchbot import cli, doctor, machine


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


def test_environment_warnings_name_the_load() -> None:
    env = {"load_before": [1.7, 1, 1], "load_after": [0.2, 0, 0], "governor": "powersave", "cores": 2}
    warnings = machine.warnings(env)
    assert any("1.70 before measuring" in w for w in warnings)
    assert any("powersave" in w for w in warnings)
    assert not any("after measuring" in w for w in warnings)
