"""The sandbox shows the code under test only what is on its allow-list, as deployed.

benchbot runs here as the action installs it: from a virtual environment in the runner's
``RUNNER_TEMP``, with the runner's ``.credentials`` in its root, once with the work
folder under that root (``_work``) and once elsewhere. A build and a workload look for
what they should not see and write it down; the test reads what they saw. The layouts
live outside /tmp (which the old deny-list hid whole), where a runner would.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Iterator
from pathlib import Path

import pytest

import benchbot
from benchbot.sandbox import bwrap
from tests.conftest import MakeRepo

needs_bwrap = pytest.mark.skipif(
    not bwrap.probe().works,
    reason=f"bubblewrap cannot make a sandbox here: {bwrap.probe().problem} "
    "(.ci/run installs the bubblewrap package)",
)
pytestmark = [needs_bwrap, pytest.mark.slow]  # real sandboxes, one bwrap after another

SOURCE_ROOT = Path(__file__).resolve().parents[2]
MARK = "@@spy:"


def _in_tmp_or_a_home(path: Path) -> bool:
    homes = ("/tmp", "/home", "/root", os.path.expanduser("~"))
    return any(path == Path(h) or Path(h) in path.parents for h in homes)


@pytest.fixture
def outside() -> Iterator[Path]:
    """A directory outside /tmp and the home directories, as a runner's would be: beside
    this checkout (where the old deny-list showed everything), else in /var/tmp."""
    parent = SOURCE_ROOT if not _in_tmp_or_a_home(SOURCE_ROOT.resolve()) else Path("/var/tmp")
    base = parent / f".pytest-sandbox-{secrets.token_hex(4)}"
    base.mkdir()
    try:
        yield base
    finally:
        shutil.rmtree(base, ignore_errors=True)


class Runner:
    """A self-hosted runner: its root with ``.credentials``, a work folder (under the root
    as ``_work``, or elsewhere), RUNNER_TEMP with the job's files and benchbot's venv in
    it (as action.yml installs it), a home, and a toolchain under /opt-like ``PREFIX/bin``."""

    def __init__(self, base: Path, *, work_inside_root: bool) -> None:
        self.token = "ghs_" + secrets.token_hex(18)
        self.tracking_id = "github_" + secrets.token_hex(8)
        self.root = base / "opt" / "actions-runner"
        self.work = self.root / "_work" if work_inside_root else base / "srv" / "work"
        self.temp = self.work / "_temp"
        self.home = base / "home" / "runner"
        self.tool = base / "opt" / "cmake"
        for d in (self.root / "bin", self.temp, self.home, self.tool / "bin", self.tool / "share"):
            d.mkdir(parents=True, exist_ok=True)
        (self.root / ".runner").write_text('{"agentName": "bench"}\n')
        (self.root / ".credentials").write_text(f'{{"token": "{self.token}"}}\n')
        (self.temp / "job-secret.txt").write_text(self.token + "\n")
        (self.home / ".git-credentials").write_text(f"https://x:{self.token}@github.com\n")
        (self.tool / "share" / "modules.txt").write_text("cmake's own data\n")
        self.python = make_venv(self.temp / "benchbot-venv")

    def env(self, **extra: str) -> dict[str, str]:
        """benchbot's environment in the job (the step's), with PATH holding the toolchain
        and the runner's own bin (whose prefix is the runner's root)."""
        path = f"{self.tool / 'bin'}:{self.root / 'bin'}:/usr/local/bin:/usr/bin:/bin"
        return {"PATH": path, "HOME": str(self.home), "LANG": "C.UTF-8",
                "RUNNER_TEMP": str(self.temp), "RUNNER_WORKSPACE": str(self.work / "Hello-World"),
                "GITHUB_WORKSPACE": str(self.work / "Hello-World" / "Hello-World"),
                "RUNNER_TRACKING_ID": self.tracking_id, **extra}

    def compare(self, repo: Path, out: Path) -> subprocess.CompletedProcess[str]:
        """``benchbot compare`` run by the venv's interpreter, as the action runs benchbot."""
        return subprocess.run(
            [str(self.python), "-m", "benchbot", "compare", "--repo", str(repo), "--base", "base",
             "--head", "HEAD", "--json", str(out)],
            env=self.env(), cwd=repo, capture_output=True, text=True, timeout=300, check=False,
        )


def make_venv(where: Path) -> Path:
    """A real virtual environment holding a copy of benchbot (its dependencies found
    through a .pth file pointing at this test's own site-packages); its python."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True)
    python = where / "bin" / "python3"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True, capture_output=True, text=True).stdout.strip()
    shutil.copytree(Path(benchbot.__file__).parent, Path(purelib) / "benchbot",
                    ignore=shutil.ignore_patterns("__pycache__"))
    (Path(purelib) / "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    found = subprocess.run([str(python), "-c", "import benchbot; print(benchbot.__file__)"],
                           check=True, capture_output=True, text=True).stdout.strip()
    assert found.startswith(str(where)), found  # the copy, not this checkout's
    return python


def verdicts(out: Path) -> list[str]:
    doc = json.loads(out.read_text())
    assert doc["sandbox"]["kind"] == "bubblewrap"
    return [b["verdict"]["outcome"] for b in doc["benchmarks"]]


def test_benchbot_runs_from_a_venv_in_runner_temp(make_repo: MakeRepo, outside: Path) -> None:
    """action.yml installs benchbot into RUNNER_TEMP/benchbot-venv: the measuring worker
    starts from there inside the sandbox (it used to fail: bwrap: execvp … No such file)."""
    runner = Runner(outside, work_inside_root=True)
    config = ("version: 1\naa: off\nconfirm: off\nsandbox: on\ndefaults: {runs: 10}\n"
              "workloads:\n  - {name: w, run: ['./prog.sh']}\n")
    repo = make_repo({"benchbot.yml": config, "prog.sh": "#!/bin/sh\nexit 0\n"})
    proc = runner.compare(repo, outside / "results.json")
    assert proc.returncode == 0, proc.stderr
    outcomes = verdicts(outside / "results.json")
    assert outcomes and "invalid" not in outcomes


SPY = r"""#!/bin/sh
# Looks for what the sandbox should not show, and writes down what it saw.
out="{out}/$1-$$"
[ "$1" = run ] && [ -n "$(ls {out} | grep '^run-')" ] && exit 0  # one run is enough
{{
  echo "{mark}credentials"; test -r '{root}/.credentials' && echo READABLE; cat '{root}/.credentials'
  echo "{mark}temp"; ls -a '{temp}'; cat '{temp}/job-secret.txt'
  echo "{mark}root"; ls -a '{root}'
  echo "{mark}slash"; ls -1a /
  echo "{mark}home"; ls -1a /home
  echo "{mark}opt"; ls -1a /opt
  echo "{mark}myhome"; ls -1a "$HOME"; cat '{home}/.git-credentials'
  echo "{mark}tool"; cat '{tool}/share/modules.txt'
  echo "{mark}tracking"; echo "$RUNNER_TRACKING_ID"
  echo "{mark}done"
}} > "$out" 2>&1
exit 0
"""


def _parts(text: str) -> dict[str, list[str]]:
    parts: dict[str, list[str]] = {}
    name = ""
    for line in text.splitlines():
        if line.startswith(MARK):
            name = line[len(MARK):]
            parts[name] = []
        elif name:
            parts[name].append(line)
    return parts


SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc")
# benchbot's interpreter and package, as the venv's python sees them
OWN = ("import benchbot, os, sys; print(sys.prefix, sys.base_prefix, "
       "os.path.realpath(sys.executable), os.path.dirname(os.path.realpath(benchbot.__file__)))")


def _children(directory: str, shown: list[str]) -> set[str]:
    """The names in ``directory`` that the allow-list accounts for: the first component,
    under it, of each path shown."""
    names = {".", ".."}
    for path in shown:
        if path != directory and path.startswith(directory.rstrip("/") + "/"):
            names.add(path[len(directory.rstrip("/")) + 1:].split("/")[0])
    return names


@pytest.mark.parametrize("work_inside_root", [True, False], ids=["work-under-root", "work-elsewhere"])
def test_the_code_under_test_sees_only_the_allow_list(make_repo: MakeRepo, outside: Path,
                                                      work_inside_root: bool) -> None:
    runner = Runner(outside, work_inside_root=work_inside_root)
    seen = outside / "seen"
    seen.mkdir()
    spy = SPY.format(out=seen, mark=MARK, root=runner.root, temp=runner.temp, home=runner.home,
                     tool=runner.tool)
    config = (f"version: 1\naa: off\nconfirm: off\nsandbox: {{mode: on, writable: ['{seen}']}}\n"
              "build: ./spy.sh build\ndefaults: {runs: 10}\n"
              "workloads:\n  - {name: spy, run: ['./spy.sh', 'run']}\n")
    repo = make_repo({"benchbot.yml": config, "spy.sh": spy})
    proc = runner.compare(repo, outside / "results.json")
    assert proc.returncode == 0, proc.stderr
    assert "invalid" not in verdicts(outside / "results.json")
    reports = {p.name.split("-")[0]: _parts(p.read_text()) for p in seen.iterdir()}
    assert set(reports) == {"build", "run"}
    # Everything the sandbox shows, from the real venv's point of view (its interpreter
    # and package), so that a listing can be checked name by name.
    own = subprocess.run([str(runner.python), "-c", OWN], check=True, capture_output=True,
                         text=True).stdout.split()
    shown = [*SYSTEM, "/dev", "/proc", "/tmp", str(runner.home), str(seen),
             str(runner.tool), str(runner.root / "bin"), str(repo / ".git"), *own,
             *(os.path.realpath(p) for p in own)]
    for name, parts in reports.items():
        assert "done" in parts, name
        text = "\n".join("\n".join(lines) for lines in parts.values())
        assert runner.token not in text, f"{name} found the token:\n{text}"
        assert "READABLE" not in parts["credentials"], name
        assert parts["tool"] == ["cmake's own data"], name  # PREFIX/bin brings PREFIX
        for listed, directory in (("slash", "/"), ("home", "/home"), ("opt", "/opt"),
                                  ("myhome", str(runner.home))):
            names = {n for n in parts[listed] if not n.startswith(("ls:", "cat:"))}
            assert names <= _children(directory, shown), (name, directory, names)
        assert not [n for n in parts["root"] if n.startswith(".cred")], name
        assert not [n for n in parts["temp"] if n == "job-secret.txt"], name
        assert parts["tracking"] == [runner.tracking_id], name  # the runner's orphan cleanup


def test_runner_tracking_id_reaches_the_code_under_test() -> None:
    """The runner ends a job's leftover processes by this variable; it holds no secret."""
    env = bwrap.clean_env({"RUNNER_TRACKING_ID": "github_1234", "RUNNER_TEMP": "/x",
                             "GITHUB_TOKEN": "ghs_x", "PATH": "/usr/bin"})
    assert env == {"RUNNER_TRACKING_ID": "github_1234", "PATH": "/usr/bin"}
    assert not bwrap.is_never_passed("RUNNER_TRACKING_ID")


def readable_in_sandbox(env: dict[str, str], paths: list[Path], scratch: Path) -> dict[str, bool]:
    """Which of ``paths`` a process in the sandbox made for ``env`` can read (real bwrap)."""
    box = bwrap.choose("on", source=env)
    script = "".join(f"test -r '{p}' && echo '{p}'\n" for p in paths)
    fd = bwrap.filter_fd()
    try:
        argv = box.wrap(["/bin/sh", "-c", script], cwd=scratch, writable=[scratch],
                        network=False, seccomp_fd=fd)
        out = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=60,
                             pass_fds=(fd,)).stdout
    finally:
        os.close(fd)
    return {str(p): str(p) in out.splitlines() for p in paths}


def test_what_each_place_brings_into_view_and_what_it_never_does(outside: Path,
                                                                  tmp_path: Path) -> None:
    runner = Runner(outside, work_inside_root=False)
    cache = runner.work / "_tool" / "node" / "bin"
    local = runner.home / ".local"
    for d in (cache, local / "bin", local / "share"):
        d.mkdir(parents=True)
    for f in (cache / "node", local / "bin" / "tool", local / "share" / "data"):
        f.write_text("x\n")
    opt = runner.root.parent  # a PATH entry that holds the runner's directory
    env = runner.env(RUNNER_TOOL_CACHE=str(runner.work / "_tool"),
                     PATH=f"{opt}:{runner.root / 'bin'}:{local / 'bin'}:{runner.tool / 'bin'}:/usr/bin")
    (runner.root / "bin" / "Runner.Listener").write_text("x\n")
    expected = {
        runner.root / ".credentials": False,  # not through /opt, not through <root>/bin
        runner.root / "bin" / "Runner.Listener": True,  # the PATH entry itself
        runner.temp / "job-secret.txt": False,
        runner.temp / "benchbot-venv" / "pyvenv.cfg": False,  # not this test's interpreter's
        cache / "node": True,  # RUNNER_TOOL_CACHE
        local / "bin" / "tool": True,  # a PATH entry in the home
        local / "share" / "data": False,  # but not its prefix there
        runner.tool / "share" / "modules.txt": True,  # a prefix elsewhere
        runner.home / ".git-credentials": False,
    }
    seen = readable_in_sandbox(env, list(expected), tmp_path)
    assert seen == {str(p): v for p, v in expected.items()}


def test_a_submodule_s_persisted_token_is_not_in_the_sandbox(make_repo: MakeRepo,
                                                              tmp_path: Path) -> None:
    """actions/checkout with submodules and persisted credentials writes its header into
    each submodule's config under .git/modules, beside the repository's own."""
    token = "ghs_" + secrets.token_hex(18)
    seen = tmp_path / "seen"
    seen.mkdir()
    build = ("#!/bin/sh\n"
             f"cat \"$(git rev-parse --git-common-dir)/modules/lib/config\" > '{seen}'/\"${{PWD##*/}}\" 2>&1\n"
             "exit 0\n")
    config = (f"version: 1\naa: off\nconfirm: off\nsandbox: {{mode: on, writable: ['{seen}']}}\n"
              "build: ./build.sh\ndefaults: {runs: 10}\nworkloads: [{name: w, run: [true]}]\n")
    repo = make_repo({"benchbot.yml": config, "build.sh": build})
    module = repo / ".git" / "modules" / "lib"
    module.mkdir(parents=True)
    (module / "config").write_text(f'[http "https://github.com/"]\n\textraheader = basic {token}\n')
    out = tmp_path / "results.json"
    proc = subprocess.run([sys.executable, "-m", "benchbot", "compare", "--repo", str(repo),
                           "--base", "base", "--head", "HEAD", "--json", str(out)],
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    reports = [p.read_text() for p in seen.iterdir()]
    assert len(reports) == 2 and all("No such file" in r for r in reports), reports
    assert not [r for r in reports if token in r]
