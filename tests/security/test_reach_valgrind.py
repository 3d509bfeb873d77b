"""A counted run is valgrind's guest, and holds valgrind's descriptors: the allow-list
(``tests/security/reach.py``) names them, and nothing else gets in with them.

valgrind, started as benchbot's counting starts it (``counting.valgrind_argv``:
``--trace-children=yes`` and a log file per process), leaves its log files open across
each exec, so a counted run's processes hold descriptors of them at small numbers, and of
valgrind's own from 1024 up. Found by the act tier: a counted run of its hunter read
``inherited descriptor 5 -> .../worker-2/vg.benchbot.20`` and failed with 97.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from benchbot.sandbox import counting
from tests.security import reach

pytestmark = pytest.mark.slow  # valgrind starts Python: seconds

VALGRIND = shutil.which("valgrind")
needs_valgrind = pytest.mark.skipif(VALGRIND is None, reason="valgrind not installed "
                                    "(.ci/run installs it for the slow tier)")

PROBE = """\
import json, os, sys
sys.path.insert(0, {here!r})
import reach
print(json.dumps({{"inherited": reach._fds(os.getpid()),
                  "valgrind": "vgpreload" in os.environ.get("LD_PRELOAD", "")}}))
"""


@needs_valgrind
def test_a_counted_run_holds_valgrind_s_logs_and_the_rules_name_them(tmp_path: Path) -> None:
    assert VALGRIND is not None
    scratch = tmp_path / "worker-0"
    scratch.mkdir()
    probe = tmp_path / "probe.py"
    probe.write_text(PROBE.format(here=str(Path(reach.__file__).parent)))
    script = tmp_path / "run.sh"  # a shell first: its log stays open in the child it execs
    script.write_text(f"#!/bin/sh\n/usr/bin/python3 {probe}\n")
    script.chmod(0o755)
    argv = counting.valgrind_argv(VALGRIND, [str(script)], scratch)
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=300, check=True,
                          stdin=subprocess.DEVNULL, close_fds=True)
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    assert seen["valgrind"], "the probe did not run under valgrind"
    inherited = seen["inherited"]
    logs = {fd: t for fd, t in inherited.items() if Path(t).name.startswith(reach.VALGRIND_LOG)}
    assert logs and all(int(fd) > 2 for fd in logs), inherited  # what the act tier met

    report = {"kind": "run", "valgrind": True, "inherited": inherited}
    places = {"writable": [str(tmp_path)]}
    for fd, target in inherited.items():
        if fd not in ("0", "1", "2"):
            assert reach._valgrinds(fd, target, report, places), (fd, target)
    # Only valgrind's, and only in a counted run: the same log outside a writable place,
    # another file or a pipe at a small number, or any of it without valgrind, is refused.
    fd, log = next(iter(logs.items()))
    assert not reach._valgrinds(fd, log, report, {"writable": ["/nonexistent"]})
    assert not reach._valgrinds("5", "pipe:[12345]", report, places)
    assert not reach._valgrinds("5", str(scratch / "answers"), report, places)
    assert not reach._valgrinds(fd, log, {**report, "valgrind": False}, places)
    assert reach._valgrinds("19992", "pipe:[12345]", report, places)
    assert not reach._valgrinds("19992", "pipe:[12345]", {**report, "valgrind": False}, places)
