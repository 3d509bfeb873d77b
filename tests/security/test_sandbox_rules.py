"""The sandbox's rules beyond what it shows: a build's network, failing closed under
``benchbot github``, and tools on PATH that lead into what it hides.

All run real bubblewrap on real repositories; a machine without bubblewrap is made by a
PATH that lacks ``bwrap`` (every other tool of /usr/bin is there).
"""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchbot.core.errors import BuildError
from benchbot.measure import engine
from benchbot.results.resultsdir import to_json
from benchbot.sandbox import bwrap
from tests.conftest import MakeRepo
from tests.fakegithub import FakeGitHub
from tests.ghenv import CONFIG, Env, make_workspace, sticky

pytestmark = pytest.mark.skipif(
    not bwrap.probe().works,
    reason=f"bubblewrap cannot make a sandbox here: {bwrap.probe().problem} "
    "(.ci/run installs the bubblewrap package)",
)

QUICK = "version: 1\naa: off\nconfirm: off\ndefaults: {runs: 10}\n"


class Notes(engine.Reporter):
    """Records the reporter's lines."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def note(self, message: str) -> None:
        self.lines.append(message)


# --- the build's network ---------------------------------------------------------------


def host_address() -> str:
    """An address of this machine other than loopback, if it has one (no packet is sent:
    a UDP socket's connect only picks the route), else 127.0.0.1. A listener on either is
    out of reach from a network namespace of its own: its loopback is another one."""
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.connect(("192.0.2.1", 9))
        address = str(probe.getsockname()[0])
    except OSError:
        address = "127.0.0.1"
    finally:
        probe.close()
    return "127.0.0.1" if address.startswith("127.") or address == "0.0.0.0" else address


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind((host_address(), 0))
    sock.listen(64)
    try:
        yield sock
    finally:
        sock.close()


def connections(sock: socket.socket) -> int:
    """How many connections reached ``sock`` (they wait in its queue, even once closed)."""
    sock.setblocking(False)
    count = 0
    while True:
        try:
            conn, _ = sock.accept()
        except BlockingIOError:
            return count
        conn.close()
        count += 1


@pytest.mark.slow
@pytest.mark.parametrize("key", ["", "on", "off"])
def test_a_build_reaches_the_host_s_network_only_when_the_config_allows_it(
        make_repo: MakeRepo, listener: socket.socket, key: str) -> None:
    host, port = listener.getsockname()
    knock = f"bash -c 'echo knock > /dev/tcp/{host}/{port}' || true"
    sandbox_config = f"{{mode: on, build_network: {key}}}" if key else "on"
    config = (QUICK + f"sandbox: {sandbox_config}\nbuild: \"{knock}\"\n"
              f"workloads:\n  - {{name: w, run: ['bash', '-c', \"{knock}\"]}}\n")
    repo = make_repo({"benchbot.yml": config})
    doc = engine.compare(engine.Request(repo=repo, base="base", head="HEAD"))
    assert doc.sandbox is not None and doc.sandbox.kind == "bubblewrap"
    # with the key, both builds (base and head) got through; no run ever does
    assert connections(listener) == (2 if key == "on" else 0)


# --- sandbox: auto fails closed under benchbot github ----------------------------------


@pytest.fixture
def no_bwrap(tmp_path: Path) -> Iterator[str]:
    """A PATH holding every tool of /usr/bin but bwrap; the probe's answer is forgotten
    before and after."""
    bin_dir = tmp_path / "no-bwrap-bin"
    bin_dir.mkdir()
    for tool in Path("/usr/bin").iterdir():
        if tool.name != bwrap.BWRAP:
            (bin_dir / tool.name).symlink_to(tool)
    bwrap.probe.cache_clear()
    yield str(bin_dir)
    bwrap.probe.cache_clear()


@pytest.mark.real_runs("what the sandbox lets run: not how long it takes")
def test_auto_without_bubblewrap_refuses_when_the_caller_requires_it(
        make_repo: MakeRepo, no_bwrap: str, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = make_repo({"benchbot.yml": QUICK + "sandbox: auto\nworkloads: [{name: w, run: [true]}]\n"})
    monkeypatch.setenv("PATH", no_bwrap)
    with pytest.raises(bwrap.SandboxError) as caught:
        engine.compare(engine.Request(repo=repo, base="base", head="HEAD", require_sandbox=True))
    message = str(caught.value)
    assert "bubblewrap (bwrap) is not installed" in message  # why
    assert "apt-get install bubblewrap" in message  # the probe's fix
    assert "sandbox: off" in message  # and how to run it unconfined on purpose
    # benchbot compare (nobody requires it) keeps auto's old meaning: unconfined
    doc = engine.compare(engine.Request(repo=repo, base="base", head="HEAD"))
    assert doc.sandbox is not None and doc.sandbox.kind == "none"


@pytest.fixture
def auto_env(tmp_path: Path, fake: FakeGitHub) -> Env:
    """A job whose config says ``sandbox: auto`` (the GitHub tests' own say ``off``)."""
    return Env(tmp_path, fake, make_workspace(tmp_path, config=CONFIG + "sandbox: auto\n"))


@pytest.mark.slow
def test_benchbot_github_says_why_it_did_not_run_without_bubblewrap(
        auto_env: Env, fake: FakeGitHub, no_bwrap: str) -> None:
    env = auto_env
    run = env.run("pull_request", env.pull_request_event(), process=True, PATH=no_bwrap)
    assert run.returncode != 0
    assert "bubblewrap (bwrap) is not installed" in run.stderr and "sandbox: off" in run.stderr
    (check,) = fake.check_runs.values()
    assert (check["status"], check["conclusion"]) == ("completed", "failure")
    assert "sandbox: off" in check["output"]["summary"]
    (comment,) = sticky(fake)
    assert "bubblewrap (bwrap) is not installed" in comment["body"]


@pytest.mark.slow
def test_the_measure_job_without_bubblewrap_fails_closed_and_publish_says_why(
        auto_env: Env, fake: FakeGitHub, no_bwrap: str) -> None:
    env = auto_env
    payload = env.comment_event("/bench runs=10")
    gate = env.run("issue_comment", payload, BENCHBOT_MODE="gate")
    assert gate.outputs["run"] == "true", gate.stderr
    measure = env.run("issue_comment", payload, process=True, BENCHBOT_MODE="measure",
                      BENCHBOT_JOB=gate.outputs["job"], PATH=no_bwrap)
    assert measure.returncode != 0 and "sandbox: off" in measure.stderr
    assert not (measure.results_dir / "results.json").exists()
    publish = env.run("issue_comment", payload, BENCHBOT_MODE="publish",
                      BENCHBOT_JOB=gate.outputs["job"], BENCHBOT_MEASURE_RESULT="failure",
                      BENCHBOT_RESULTS_DIR=str(measure.results_dir))
    assert publish.returncode == 0, publish.stderr
    (check,) = fake.check_runs.values()
    assert (check["status"], check["conclusion"]) == ("completed", "failure")
    assert "bubblewrap (bwrap) is not installed" in check["output"]["summary"]
    (comment,) = sticky(fake)
    assert "sandbox: off" in comment["body"]


# --- tools on PATH that lead into a hidden directory ------------------------------------


class Home:
    """A home directory as pyenv and nvm leave it: a shim (a bash script that execs the
    tool's own program elsewhere under the home) and a symlink into the tool's tree."""

    def __init__(self, tmp: Path) -> None:
        self.path = tmp / "home"
        self.pyenv = self.path / ".fakepyenv"
        self.nvm = self.path / ".fakenvm"
        write(self.pyenv / "libexec" / "fakepy", "#!/bin/sh\necho fakepy ran\n")
        write(self.pyenv / "shims" / "fakepy",
              "#!/usr/bin/env bash\nset -e\nprogram=\"${0##*/}\"\n"
              f'export PYENV_ROOT="{self.pyenv}"\nexec "{self.pyenv}/libexec/fakepy" "$@"\n')
        write(self.nvm / "versions" / "v1" / "bin" / "nodeish", "#!/bin/sh\necho nodeish ran\n")
        local = self.path / ".local" / "bin"
        local.mkdir(parents=True)
        (local / "nodeish").symlink_to(self.nvm / "versions" / "v1" / "bin" / "nodeish")
        self.env = {"HOME": str(self.path), "LANG": "C.UTF-8",
                    "PATH": f"{self.pyenv / 'shims'}:{local}:/usr/local/bin:/usr/bin:/bin"}


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o755)


def hint(home: Path, tool: str, into: Path) -> str:
    return (f"sandbox: {tool} on PATH resolves into {into}, which the sandbox does not show: "
            "list it under sandbox.read_only to use it")


def test_a_build_calling_a_shim_into_the_home_says_which_directory_to_show(
        make_repo: MakeRepo, tmp_path: Path) -> None:
    home = Home(tmp_path)
    config = QUICK + "sandbox: on\nbuild: fakepy\nworkloads: [{name: w, run: [true]}]\n"
    repo = make_repo({"benchbot.yml": config})
    notes = Notes()
    with pytest.raises(BuildError) as caught:
        engine.compare(engine.Request(repo=repo, base="base", head="HEAD"), reporter=notes,
                       source_env=home.env)
    assert caught.value.returncode == 127
    assert hint(home.path, "fakepy", home.pyenv) in str(caught.value)
    # said before the build, for both tools: the shim and the symlink
    assert hint(home.path, "fakepy", home.pyenv) in notes.lines
    assert hint(home.path, "nodeish", home.nvm) in notes.lines


@pytest.mark.real_runs("what the sandbox lets run: not how long it takes")
def test_a_build_calling_a_shim_works_once_its_directory_is_listed(
        make_repo: MakeRepo, tmp_path: Path) -> None:
    home = Home(tmp_path)
    config = (QUICK + f"sandbox: {{mode: on, read_only: ['{home.pyenv}']}}\n"
              "build: fakepy > built.txt && test -s built.txt\n"
              "workloads: [{name: w, run: [cat, built.txt]}]\n")
    repo = make_repo({"benchbot.yml": config})
    notes = Notes()
    doc = engine.compare(engine.Request(repo=repo, base="base", head="HEAD"), reporter=notes,
                         source_env=home.env)
    (benchmark,) = to_json(doc)["benchmarks"]
    assert benchmark["verdict"]["outcome"] != "invalid", benchmark["verdict"]["reason"]
    assert not [line for line in notes.lines if str(home.pyenv) in line]
    assert hint(home.path, "nodeish", home.nvm) in notes.lines  # still hidden, still said


def test_doctor_lists_the_tools_that_lead_into_hidden_directories(tmp_path: Path) -> None:
    home = Home(tmp_path)
    proc = subprocess.run([sys.executable, "-m", "benchbot", "doctor"], capture_output=True,
                          text=True, env=home.env,
                          timeout=120, check=False)
    out = proc.stdout
    assert f"fakepy on PATH leads into {home.pyenv}" in out, out
    assert f"nodeish on PATH leads into {home.nvm}" in out, out
    assert f"list {home.pyenv} under sandbox.read_only" in out


def test_the_suggestion_is_the_tool_s_directory_never_the_whole_home(tmp_path: Path) -> None:
    home = Home(tmp_path)
    (home.path / ".cargo").mkdir()
    (home.path / ".cargo" / "credentials.toml").write_text("token = 'x'\n")
    box = bwrap.choose("on", source=home.env)
    lines = box.tool_notes(home.env)
    assert lines and all(str(home.path) + " " not in line for line in lines)
    assert not [line for line in lines if ".cargo" in line]
