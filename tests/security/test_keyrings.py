"""The kernel's keyrings are out of the sandbox's reach (``benchbot.sandbox.seccomp``).

benchbot compare runs under a session keyring of its own holding a key, as a runner
service's processes may; the build and every run try to find and read that key, and to
leave keys of their own in the session keyring and in the user keyring (``@u`` is the
uid's, shared with every job of the runner's user). Afterwards nothing was read and
nothing was left.
"""

from __future__ import annotations

import ctypes
import json
import platform
import subprocess
import sys
from pathlib import Path

import pytest

from benchbot.sandbox import bwrap
from tests.conftest import MakeRepo

pytestmark = pytest.mark.slow  # real sandboxes

needs_bwrap = pytest.mark.skipif(
    not bwrap.probe().works,
    reason=f"bubblewrap cannot make a sandbox here: {bwrap.probe().problem} "
    "(.ci/run installs the bubblewrap package)",
)
# add_key, request_key, keyctl
NUMBERS = {"x86_64": (248, 249, 250), "aarch64": (217, 218, 219), "riscv64": (217, 218, 219)}
needs_numbers = pytest.mark.skipif(platform.machine() not in NUMBERS,
                                   reason=f"no keyring call numbers for {platform.machine()}")

# Python with ctypes only (no keyutils on a fresh machine): keyring calls by number.
KEYS = r'''
import ctypes, errno, json, platform, sys
ADD_KEY, _, KEYCTL = %(numbers)r[platform.machine()]
libc = ctypes.CDLL(None, use_errno=True)
long, text = ctypes.c_long, ctypes.c_char_p

def call(nr, *args):
    got = libc.syscall(long(nr), *args)
    return got, errno.errorcode.get(ctypes.get_errno(), "?")

def search(ring, name):  # KEYCTL_SEARCH: the key's serial, or the error's name
    got, err = call(KEYCTL, long(10), long(ring), text(b"user"), text(name.encode()), long(0))
    return got if got >= 0 else err

def read(serial):  # KEYCTL_READ
    buf = ctypes.create_string_buffer(256)
    got, err = call(KEYCTL, long(11), long(serial), buf, long(256))
    return buf.raw[:got].decode(errors="replace") if got >= 0 else err

def add(ring, name, payload):
    got, err = call(ADD_KEY, text(b"user"), text(name.encode()), text(payload), long(len(payload)),
                    long(ring))
    return got if got >= 0 else err
'''

INSIDE = KEYS + r'''
found = {ring: search(ring, "benchbot-outside") for ring in (-3, -4, -5)}
seen = {ring: read(k) for ring, k in found.items() if isinstance(k, int)}
left = {ring: add(ring, "benchbot-inside", b"left") for ring in (-3, -4)}
with open(sys.argv[2] + "/" + sys.argv[1] + "-" + str(id(found)), "w") as fh:
    json.dump({"found": found, "read": seen, "left": left}, fh)
'''

# Joins a fresh session keyring with a key in it, runs benchbot compare under it, then
# reports which keys the code under test left, and removes them (not to leave any in
# the runner's user keyring when the test fails).
OUTSIDE = KEYS + r'''
import os, subprocess
got, err = call(KEYCTL, long(1), None)  # KEYCTL_JOIN_SESSION_KEYRING, anonymous
assert got >= 0, err
assert isinstance(add(-3, "benchbot-outside", b"the runner's secret"), int)
proc = subprocess.run(sys.argv[1:], capture_output=True, text=True)
left = {ring: search(ring, "benchbot-inside") for ring in (-3, -4)}
for ring, serial in left.items():
    if isinstance(serial, int):
        call(KEYCTL, long(9), long(serial), long(ring))  # KEYCTL_UNLINK
print(json.dumps({"returncode": proc.returncode, "stderr": proc.stderr[-2000:], "left": left}))
'''


@needs_bwrap
@needs_numbers
def test_the_code_under_test_neither_reads_nor_leaves_keys(make_repo: MakeRepo,
                                                          tmp_path: Path) -> None:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        probe = libc.syscall(ctypes.c_long(NUMBERS[platform.machine()][2]), ctypes.c_long(0),
                             ctypes.c_long(-3), ctypes.c_long(0))
    except OSError:
        probe = -1
    if probe < 0 and ctypes.get_errno() == 38:  # ENOSYS: this machine has no keyrings
        pytest.skip("the kernel here has no keyrings (or a seccomp filter refuses them)")
    seen = tmp_path / "seen"
    seen.mkdir()
    python = sys.executable
    numbers = {"numbers": NUMBERS}
    config = (f"version: 1\naa: off\nconfirm: off\nsandbox: {{mode: on, writable: ['{seen}']}}\n"
              f"build: ['{python}', keys.py, build, '{seen}']\n"
              "defaults: {runs: 10}\n"
              f"workloads:\n  - {{name: keys, run: ['{python}', keys.py, run, '{seen}']}}\n")
    repo = make_repo({"benchbot.yml": config, "keys.py": INSIDE % numbers})
    compare = [python, "-m", "benchbot", "compare", "--repo", str(repo), "--base", "base",
               "--head", "HEAD", "--json", str(tmp_path / "results.json")]
    proc = subprocess.run([python, "-c", OUTSIDE % numbers, *compare], capture_output=True,
                          text=True, timeout=300, check=True)
    outcome = json.loads(proc.stdout)
    assert outcome["returncode"] == 0, outcome["stderr"]
    tries = [json.loads(p.read_text()) for p in seen.iterdir()]
    assert {p.name.split("-")[0] for p in seen.iterdir()} == {"build", "run"}
    assert len(tries) >= 2 + 20  # both builds, every run
    for tried in tries:
        # the outside key was not found (it used to be, in @s, and read); none was left
        assert not [k for k in tried["found"].values() if isinstance(k, int)], tried
        assert tried["read"] == {} and not [k for k in tried["left"].values()
                                            if isinstance(k, int)], tried
        assert set(tried["found"].values()) == {"ENOSYS"}, tried
    assert not [k for k in outcome["left"].values() if isinstance(k, int)], outcome
