"""No process of a profiled run can reach, stop or hide from its time profile
(docs/security.md, "Time profiles").

``profile_tricks.c`` switches off the perf counters attached to it
(``PR_TASK_PERF_EVENTS_DISABLE``), renames itself ``bwrap`` (the wrapper, whose samples
are left out), looks through every file it can see for perf's file and through /proc for
perf's process, and then works for 0.3 s of CPU in ``hidden_work``. For real: perf record
around bubblewrap, as ``benchbot.profiles.timeprofile.record`` makes every profile.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from benchbot.profiles import timeprofile
from benchbot.sandbox import bwrap

pytestmark = [
    pytest.mark.slow,  # perf and a sandbox per run, and a walk of the sandbox's files
    pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler"),
    pytest.mark.skipif(not timeprofile.probe().works,
                       reason=f"time profiling does not work here: {timeprofile.probe().reason}"),
    pytest.mark.skipif(not bwrap.probe().works,
                       reason=f"bubblewrap cannot make a sandbox here: {bwrap.probe().problem}"),
]

SOURCE = Path(__file__).with_name("profile_tricks.c")


def test_a_run_can_neither_stop_nor_find_nor_hide_from_its_profile(tmp_path: Path) -> None:
    place = tmp_path / "place"
    place.mkdir()
    subprocess.run(["cc", "-O1", "-o", str(place / "tricks"), str(SOURCE)], check=True)
    box = bwrap.choose("on")
    profile = timeprofile.record(["./tricks"], cwd=place, env=bwrap.clean_env(os.environ),
                                 sandbox=box, writable=[place], runs=1, min_cpu_s=0.0)
    found = (place / "found.txt").read_text().splitlines()
    assert found[0] == "disable -1 22"  # EINVAL: the seccomp filter's answer
    assert [line for line in found[1:] if line.startswith(("file", "process"))] == []
    assert profile.confined and profile.failures == ()
    hidden = profile.self_ns_per_run().get("hidden_work", 0.0)
    assert hidden >= 0.2e9, sorted(profile.self_ns_per_run().items(), key=lambda kv: -kv[1])[:5]


def test_the_counters_are_perfs_so_switching_them_off_reaches_none(tmp_path: Path) -> None:
    """Without the sandbox the prctl is allowed and succeeds, and still every sample is
    taken: it switches off only counters the process opened itself, and perf's are not."""
    place = tmp_path / "place"
    place.mkdir()
    subprocess.run(["cc", "-O1", "-o", str(place / "tricks"), str(SOURCE)], check=True)
    box = bwrap.Sandbox(kind="none", description="off")
    profile = timeprofile.record(["./tricks", "nowalk"], cwd=place, env=bwrap.clean_env(os.environ),
                                 sandbox=box, writable=[place], runs=1, min_cpu_s=0.0)
    assert (place / "found.txt").read_text().splitlines()[0] == "disable 0 0"
    assert not profile.confined
    assert profile.self_ns_per_run().get("hidden_work", 0.0) >= 0.2e9


def test_a_comparisons_time_profiled_run_writes_only_its_own_place(tmp_path: Path) -> None:
    """As a comparison makes them (benchbot.profiles.timing, with the measuring workers'
    confinement): base's profiled runs cannot write head's place, nor head's base's, and
    neither finds the profile; each can write its own place, as its measured runs can."""
    import time

    from benchbot.profiles import timing
    from benchbot.sandbox.spawn import SpawnRequest

    places = {arm: tmp_path / arm for arm in ("base", "head")}
    for place in places.values():
        place.mkdir()
    (tmp_path / "scratch").mkdir()
    box = bwrap.choose("on")
    env = bwrap.clean_env(os.environ)
    spawner = bwrap.WorkerSpawner(box, tmp_path / "scratch", env, places=list(places.values()))
    try:
        assert spawner.confinement(str(places["base"])).writable == (places["base"],)

        def run(arm: str, other: str) -> SpawnRequest:
            script = (f"touch {places[other]}/from-{arm} 2>/dev/null; touch ./own-{arm}; "
                      "find / -name perf.data 2>/dev/null > ./found-" + arm + "; "
                      "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done")
            return SpawnRequest(argv=("/bin/sh", "-c", script), cwd=str(places[arm]),
                                env=tuple(env.items()), timeout_s=60.0)

        made = timing.run({"w": (run("base", "head"), run("base", "head"), run("head", "base"))},
                          sandbox=box, confinement=spawner.confinement, clock=time.monotonic)
    finally:
        spawner.close()
    table = made["w"]
    assert table.error is None and table.confined, table
    assert not (places["head"] / "from-base").exists()
    assert not (places["base"] / "from-head").exists()
    assert (places["base"] / "own-base").exists() and (places["head"] / "own-head").exists()
    assert (places["base"] / "found-base").read_text() == ""
    assert (places["head"] / "found-head").read_text() == ""


def test_perf_script_reads_the_profile_in_a_sandbox_of_the_arms_view(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """perf script reads the run's binaries, untrusted input to its ELF reader: it runs in
    a sandbox of the arm's view where nothing is writable. A stand-in perf, as a flaw in
    perf's reader that the run's binary set off, tries what such a flaw could: write the
    place, the profile and the runner's home, read the runner's environment; it can only
    read the profile (to stdout, which benchbot folds)."""
    place, home = tmp_path / "place", tmp_path / "home"
    place.mkdir()
    home.mkdir()
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    data = private / "perf.data"
    data.write_text("samples\n")
    shim = place / "perf"
    shim.write_text(
        "#!/bin/sh\n"
        f"echo planted > {place}/planted 2>/dev/null && echo wrote-place\n"
        f"echo more >> {data} 2>/dev/null && echo wrote-profile\n"
        f"echo planted > {home}/planted 2>/dev/null && echo wrote-home\n"
        "env\n"
        f"cat {data}\n")
    shim.chmod(0o755)
    monkeypatch.setenv("GITHUB_TOKEN", "ghs_secret")
    monkeypatch.setenv("HOME", str(home))
    seen = timeprofile._script(str(shim), data, box=bwrap.choose("on"), cwd=place,
                               shown=[place])
    assert "samples" in seen  # the profile was read
    assert "wrote-place" not in seen and "wrote-profile" not in seen, seen
    # the home it sees is the sandbox's own, empty and thrown away: the runner's is untouched
    assert not (place / "planted").exists() and not (home / "planted").exists()
    assert data.read_text() == "samples\n"
    assert "ghs_secret" not in seen
    # The same stand-in outside a sandbox (sandbox: off) writes: the sandbox is what stops it.
    timeprofile._script(str(shim), data, box=bwrap.Sandbox(kind="none", description="off"),
                        cwd=place)
    assert (place / "planted").exists()
