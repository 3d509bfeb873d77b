"""A harness's report as the spawner reads it: from stdout or the {output} file, which the
code under test controls."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from benchbot.sandbox.spawn import ProcessSpawner, SpawnRequest

pytestmark = pytest.mark.real_runs("the spawner reading a harness's report: not times")


def _run(tmp_path: Path, script: str) -> object:
    spawner = ProcessSpawner(tmp_path)
    try:
        run = spawner.spawn(SpawnRequest(argv=("/bin/sh", "-c", script, "sh", "{output}"),
                                         cwd=str(tmp_path), env=(("PATH", os.defpath),),
                                         timeout_s=30, harness="jsonl"))
    finally:
        spawner.close()
    assert run.report is not None
    return run.report


def test_the_report_is_read_from_the_output_file(tmp_path: Path) -> None:
    report = _run(tmp_path, 'echo \'{"name": "a b", "value": 2.5, "unit": "us"}\' > "$1"; echo noise')
    assert [(e.name, e.value, e.unit) for e in report.entries] == [("a b", 2500.0, "ns")]


def test_from_stdout_without_an_output_mark(tmp_path: Path) -> None:
    spawner = ProcessSpawner(tmp_path)
    run = spawner.spawn(SpawnRequest(argv=("/bin/sh", "-c", 'echo \'{"name": "x", "value": 3, "unit": "ns"}\''),
                                     cwd=str(tmp_path), env=(("PATH", os.defpath),), timeout_s=30,
                                     harness="jsonl"))
    spawner.close()
    assert run.report is not None and [e.name for e in run.report.entries] == ["x"]


@pytest.mark.parametrize("script, words", [
    ('ln -s /etc/passwd "$1"', "wrote no report"),  # a link is not followed
    ('mkfifo "$1"', "not a regular file"),  # nor is a pipe opened for reading (it would block)
    (': ', "wrote no report"),
    ('head -c 17000000 /dev/zero > "$1"', "longer than 16 MiB"),  # refused, not cut
])
def test_a_report_file_the_run_tampered_with_is_refused(tmp_path: Path, script: str, words: str) -> None:
    report = _run(tmp_path, script)
    assert report.entries == () and report.error is not None and words in report.error
