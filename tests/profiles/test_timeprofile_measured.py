"""A planted change of time with the same instructions, found by the sampled time
profile (benchbot.profiles.timeprofile) for real: benchmarks/timeprofile.py's kernel, whose head
walks a 64 MiB array out of order (the same instructions, about three times the time in
``walk``), profiled base, head and base again, each run in the sandbox where bubblewrap
works. The benchmark repeats it (benchmarks/README.md, section 19)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from benchbot.profiles import timeprofile
from benchbot.sandbox import bwrap
from benchmarks import timeprofile as bench

pytestmark = [
    pytest.mark.slow,  # nine profiled runs of a quarter second, perf's start each
    pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler"),
    pytest.mark.skipif(not timeprofile.probe().works,
                       reason=f"time profiling does not work here: {timeprofile.probe().reason}"),
]


def test_the_time_profile_names_the_function_whose_memory_access_changed(tmp_path: Path) -> None:
    programs = bench.build(tmp_path)
    if shutil.which("valgrind"):
        assert bench.instructions(programs["base"]) == bench.instructions(programs["head"])
    box = bwrap.choose("auto")
    env = bwrap.clean_env(os.environ)
    profiles = {arm: timeprofile.record([str(programs[side])], cwd=tmp_path, env=env, sandbox=box,
                                        writable=[tmp_path], runs=3, min_cpu_s=0.0)
                for arm, side in (("base", "base"), ("head", "head"), ("base_again", "base"))}
    cmp = timeprofile.compare(profiles["base"], profiles["head"], profiles["base_again"])
    assert cmp.named and cmp.named[0].name == "walk", cmp.functions[:4]
    assert "spin" not in {f.name for f in cmp.named}
    walk = cmp.named[0]
    assert walk.head_ns > 1.5 * walk.base_ns and (walk.share or 0) > 0.8
    assert all(p.runs == 3 and p.confined == box.active and p.wall_s > 0 for p in profiles.values())
