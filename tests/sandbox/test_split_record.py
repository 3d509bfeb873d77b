"""A split run's record and parts (counting.audit_parts, callgrind.read_part and chained),
on a recorded run: callgrind 3.19 with --dump-before at google-benchmark's loop start and
end, two benchmarks (BM_Fnv, BM_Crc of benchmarks/suitegen.py) at three repetitions each,
its directory's inotify record as the worker took it and its files (the process's id made
4242). Made by hand from the generated suite's base; how: docs/suites.md, "One process per
build"."""

from __future__ import annotations

import json
import os
import tarfile
from pathlib import Path

import pytest

from benchbot.harness import formats
from benchbot.sandbox import callgrind, counting
from benchbot.sandbox.spawn import RawRun
from benchbot.suites import gbsplit

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "callgrind-split.tar.gz"
PID = 4242
C = counting


@pytest.fixture()
def recorded(tmp_path: Path) -> tuple[list[tuple[int, str]], Path, str]:
    """The record (events), the directory with the run's files, and its JSON report."""
    with tarfile.open(FIXTURE) as tar:
        tar.extractall(tmp_path, filter="data")
    events = [(int(m), str(n)) for m, n in json.loads((tmp_path / "events.json").read_text())]
    return events, tmp_path / "run", (tmp_path / "report.json").read_text()


def _parts(place: Path, k: int) -> list[callgrind.Part]:
    out = place / f"cg.benchbot.{PID}"
    return [*(callgrind.read_part(f"{out}.{n}", number=n, pid=PID, dumps=gbsplit.DUMPS)
              for n in range(1, k + 1)),
            callgrind.read_part(out, number=None, pid=PID, dumps=gbsplit.DUMPS)]


def test_the_record_callgrind_made_is_accepted_and_read(recorded) -> None:
    events, place, report = recorded
    assert C.audit_parts(events, place) == (PID, 12, None)
    parts = _parts(place, 12)
    assert callgrind.chained(parts) is None
    assert [p.trigger for p in parts] == [0, 1] * 6 + [-1]
    # the loops as callgrind counted them: Fnv's first repetition, then the same each time
    assert [p.ir for p in parts[1:12:2]] == [125453, 123602, 123602, 170831, 164683, 164683]
    assert all(p.ll_misses is not None for p in parts)
    raw = RawRun(wall_ns=1, cpu_ns=1, maxrss_kib=1, returncode=0, parts=tuple(parts),
                 order=formats.google_order(report))
    spans = gbsplit.split(raw)
    assert not isinstance(spans, str)
    # the span from the end of the first repetition's loop to the end of the last, a call
    assert spans["BM_Fnv"].per_call == (4403 + 123602 + 3839 + 123602) / 2
    assert spans["BM_Crc"].per_call == (3158 + 164683 + 3839 + 164683) / 2
    assert spans["BM_Fnv"].agree and spans["BM_Crc"].agree
    assert RawRun.from_json(raw.to_json()) == raw


def _without(events: list[tuple[int, str]], name: str) -> list[tuple[int, str]]:
    return [(m, n) for m, n in events if n != name]


def _made(name: str) -> list[tuple[int, str]]:
    return [(C.IN_CREATE, name), (C.IN_OPEN, name), (C.IN_MODIFY, name),
            (C.IN_CLOSE_WRITE, name)]


def _before_end(events: list[tuple[int, str]], more: list[tuple[int, str]]
                ) -> list[tuple[int, str]]:
    """``more`` put in just before callgrind opens the process's own out file to write it."""
    end = max(i for i, (m, n) in enumerate(events) if n == f"cg.benchbot.{PID}" and m & C.IN_OPEN)
    return [*events[:end], *more, *events[end:]]


def test_a_part_touched_again_or_missing_leaves_no_parts(recorded) -> None:
    events, place, _ = recorded
    part = f"cg.benchbot.{PID}.5"
    tricks = {
        "read again": _before_end(events, [(C.IN_OPEN, part), (C.IN_CLOSE_NOWRITE, part)]),
        "written again": _before_end(events, [(C.IN_OPEN, part), (C.IN_MODIFY, part),
                                              (C.IN_CLOSE_WRITE, part)]),
        "written after it was closed": _before_end(events, [(C.IN_MODIFY, part)]),
        "written after the end": [*events, (C.IN_MODIFY, part)],
        "renamed": _before_end(events, [(C.IN_MOVED_FROM, part)]),
        "a gap": _without(events, part),
        "a part made after the end": [*events, *_made(f"cg.benchbot.{PID}.13")],
        "a part of another process": _before_end(events, _made("cg.benchbot.4243.1")),
        "another process": _before_end(events, [(C.IN_CREATE, "vg.benchbot.4243.1"),
                                                (C.IN_OPEN, "vg.benchbot.4243.1"),
                                                (C.IN_MODIFY, "vg.benchbot.4243.1"),
                                                *_made("cg.benchbot.4243")]),
    }
    for why, record in tricks.items():
        if why == "a gap":
            os.rename(place / part, place / "gone")
        pid, k, problem = C.audit_parts(record, place)
        assert (pid, k) == (None, 0) and problem, why
        if why == "a gap":
            assert "no part 5" in problem
            os.rename(place / "gone", place / part)
    assert C.audit_parts(events, place)[2] is None


def test_a_part_made_in_callgrind_s_place_after_its_last_dump_breaks_the_chain(recorded) -> None:
    # A process of the run that writes cg.benchbot.<pid>.13 (a part of its own, with the
    # header callgrind writes) after callgrind's last dump and before the end: the record
    # shows it made once, written and closed, as callgrind's are; its place in the chain
    # of basic blocks gives it away, since the end's part starts where dump 12 ended.
    events, place, _ = recorded
    forged = place / f"cg.benchbot.{PID}.13"
    first, last = callgrind.read_part(place / f"cg.benchbot.{PID}.12", number=12, pid=PID,
                                      dumps=gbsplit.DUMPS).blocks
    text = (place / f"cg.benchbot.{PID}.12").read_text().replace("part: 12", "part: 13")
    record = _before_end(events, _made(forged.name))
    # the range the real part 12 had: it does not follow 12
    forged.write_text(text)
    assert C.audit_parts(record, place) == (PID, 13, None)  # the record alone cannot tell
    assert "part 13 starts at basic block" in (callgrind.chained(_parts(place, 13)) or "")
    # following 12: then the end's part, which callgrind wrote after it, does not follow it
    forged.write_text(text.replace(f"Basic block {first} - {last}",
                                   f"Basic block {last} - {last + 1000}"))
    assert "part 14 starts at basic block" in (callgrind.chained(_parts(place, 13)) or "")
    # nor a part of no blocks between the two
    forged.write_text(text.replace(f"Basic block {first} - {last}", f"Basic block {last} - {last}"))
    assert "ran 0 basic blocks" in (callgrind.chained(_parts(place, 13)) or "")


def test_a_part_must_be_the_one_its_name_says(recorded) -> None:
    _, place, _ = recorded
    part = place / f"cg.benchbot.{PID}.3"
    text = part.read_text()
    for bad, why in ((text.replace("part: 3", "part: 4"), "in the file of part 3"),
                     (text.replace(f"pid: {PID}", "pid: 1"), "not 4242"),
                     (text.replace("StartKeepRunning()", "StartKeepRunning*"), "not one asked"),
                     (text.replace("desc: Timerange", "desc: Time"), "no time range")):
        part.write_text(bad)
        with pytest.raises(callgrind.CallgrindError, match=why):
            callgrind.read_part(part, number=3, pid=PID, dumps=gbsplit.DUMPS)


def test_only_plain_names_are_dumped_before() -> None:
    argv = callgrind.split_argv("valgrind", ["./bench"], "/p", "cg", "vg", gbsplit.DUMPS, [])
    assert "--dump-before=benchmark::State::StartKeepRunning()" in argv
    assert argv[argv.index("--") + 1:] == ["./bench"]
    for name in ("benchmark::State::StartKeepRunning*", "*", "f?()", "a b()", "--x()", "f(int)"):
        with pytest.raises(ValueError, match="not a plain function name"):
            callgrind.split_argv("valgrind", ["./bench"], "/p", "cg", "vg", [name], [])


def test_a_part_made_before_the_one_before_it_was_closed_is_refused(recorded) -> None:
    # callgrind writes one part at a time; a part of the record made while the one before
    # it was still open was made by someone else
    events, place, _ = recorded
    four, five = f"cg.benchbot.{PID}.4", f"cg.benchbot.{PID}.5"
    made_five = [e for e in events if e[1] == five]
    rest = [e for e in events if e[1] != five]
    at = next(i for i, (m, n) in enumerate(rest) if n == four and m & C.IN_OPEN)
    record = [*rest[:at + 1], *made_five, *rest[at + 1:]]
    pid, k, problem = C.audit_parts(record, place)
    assert (pid, k) == (None, 0) and problem and five in problem


@pytest.mark.real_runs("a split run refused before valgrind starts: what it says, not its time")
def test_a_split_run_with_a_wildcard_dump_is_not_started(tmp_path: Path) -> None:
    import shutil

    from benchbot.sandbox.spawn import ProcessSpawner, SpawnRequest

    if shutil.which("valgrind") is None:
        pytest.skip("valgrind is not installed (the name is checked once it is found)")
    spawner = ProcessSpawner(tmp_path, fork_server=False)
    try:
        run = spawner.spawn(SpawnRequest(argv=("/bin/true",), cwd=str(tmp_path),
                                         env=(("PATH", os.environ.get("PATH", "/usr/bin")),),
                                         timeout_s=30.0, count="callgrind-parts",
                                         dumps=("benchmark::State::*",)))
    finally:
        spawner.close()
    assert run.not_started is not None and "not a plain function name" in run.not_started
    assert run.parts is None and run.instructions is None
    assert not list((tmp_path / counting.VALGRIND_ROOT).glob("run-*"))  # its place removed
