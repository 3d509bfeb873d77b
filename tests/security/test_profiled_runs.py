"""No process of a profiled run can leave a profile that is not its work (docs/security.md,
"Counts"; benchbot.profiles.profiling).

A profiled run is made as a counted run is, under callgrind: in a fresh directory the
worker watches, its record audited before anything there is read. Each trick of
``tricks.c`` (rewrite a forked child's out file after it exits or while it still runs —
callgrind makes the file as the process starts —, kill the child, exec after the work,
exec in a forked child, remove valgrind's preload, link a file of its own in place of the
child's out file) gets no profile, or one that holds all of the work. A profile is always
a whole run's: never a part of one. For real: C programs built with cc, each run made by
the sandbox's worker in bubblewrap, profiled by valgrind.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from benchbot.config.settings import Overrides
from benchbot.measure import engine
from benchbot.sandbox import bwrap
from benchbot.sandbox.spawn import SpawnRequest
from tests.conftest import MakeRepo

pytestmark = [
    pytest.mark.slow,  # valgrind: about a second a profiled run of the 10x head
    pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler"),
    pytest.mark.skipif(shutil.which("valgrind") is None,
                       reason="valgrind not installed (.ci/run installs it for the slow tier)"),
    pytest.mark.skipif(not bwrap.probe().works,
                       reason=f"bubblewrap cannot make a sandbox here: {bwrap.probe().problem}"),
]

SOURCE = Path(__file__).with_name("tricks.c")
TRICKS = ["overwrite", "early", "kill", "exec", "execveat", "setuid", "preload", "link",
          "linkbeside", "forkexec"]
# Refused by the record (a profile must be the whole run's, as a count that settles a
# verdict alone); the others (a setuid program valgrind will not exec, the preload's
# removal before any work — refused too, as an exec after a fork —, a link the sandbox's
# mount refuses) hold all the work.
CAUGHT = ("overwrite", "early", "kill", "exec", "execveat", "linkbeside", "forkexec", "preload")
UNITS = 20000


def _run(cwd: Path, how: str) -> SpawnRequest:
    env = tuple(sorted(bwrap.clean_env(os.environ).items()))
    return SpawnRequest(argv=("./t", str(UNITS), how), cwd=str(cwd), env=env, timeout_s=120.0,
                        count="callgrind", whole=True)


def test_every_trick_gives_no_profile_or_all_of_the_work(tmp_path: Path) -> None:
    place = tmp_path / "place"
    place.mkdir()
    subprocess.run(["cc", "-O1", "-g", "-o", str(place / "t"), str(SOURCE)], check=True)
    (tmp_path / "scratch").mkdir()
    spawner = bwrap.WorkerSpawner(bwrap.choose("on"), tmp_path / "scratch",
                                    bwrap.clean_env(os.environ), places=[place])
    try:
        honest = spawner.spawn(_run(place, "plain"))
        tried = {how: spawner.spawn(_run(place, how)) for how in TRICKS}
    finally:
        spawner.close()
    assert honest.profile is not None and honest.instructions == honest.profile.total_ir
    work = honest.profile.functions[("work", "t")].self_ir
    assert work > UNITS * 1000
    for how, run in tried.items():
        assert run.returncode == 0, (how, run)
        if how in CAUGHT:
            assert run.profile is None and run.instructions is None, (how, run)
            assert (run.count_error or "").startswith("callgrind: not profiled: "), (how, run)
        else:
            assert run.profile is not None, (how, run.count_error)
            assert run.profile.functions[("work", "t")].self_ir >= 0.99 * work, how
    assert "was not made, written and closed once" in (tried["early"].count_error or "")
    assert "never reached its end" in (tried["kill"].count_error or "")


@pytest.mark.parametrize("how", ["overwrite", "early"])
def test_a_head_that_rewrites_its_profile_gets_none_in_a_comparison(
        make_repo: MakeRepo, how: str) -> None:
    config = ("version: 1\nbuild: make\naa: off\n"
              "workloads:\n  - {name: t, run: ./t, metric: instructions, counts: valgrind}\n")
    make = "t: t.c\n\tcc -O1 -DUNITS={units} -DHOW='\"{how}\"' -o t t.c\n"
    repo = make_repo({"benchbot.yml": config, "t.c": SOURCE.read_text(),
                      "Makefile": make.format(units=2000, how="plain")},
                     {"Makefile": make.format(units=20000, how=how)})
    results = engine.compare(engine.Request(repo=repo, base="base", head="HEAD",
                                            overrides=Overrides(profile="all")))
    (bench,) = results.benchmarks
    table = bench.profile
    assert table is not None and table.error is not None, table
    assert "the head run: callgrind: not profiled" in table.error
    assert table.functions == () and table.stacks is None
