"""The action installs from a hash-pinned lock (requirements/action.txt).

The jobs that install benchbot hold the write token, so what they install must not be
whatever the package index serves that day: every dependency, and the build backend, is
pinned with its sha256 (``tools/lock_action.py`` writes the lock). The static checks
read the files; ``test_a_fresh_venv_installs_from_the_lock`` needs the package index
(marked ``network``; skipped, saying so, where the index cannot be reached).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    tomllib = pytest.importorskip("tomli", reason="reading pyproject.toml needs tomli before 3.11")
import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]
LOCK = ROOT / "requirements" / "action.txt"


def pins() -> dict[str, tuple[str, list[str]]]:
    """Each locked package: its version and its hashes (the lock's own line format)."""
    found: dict[str, tuple[str, list[str]]] = {}
    text = LOCK.read_text().replace("\\\n", " ")
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        spec, *options = line.split(" --hash=")
        requirement = Requirement(spec.strip())
        (pinned,) = requirement.specifier
        assert pinned.operator == "==", line
        name = canonicalize_name(requirement.name)
        assert name not in found, f"{name} is pinned twice (one version for every Python)"
        found[name] = (pinned.version, [o.split()[0] for o in options])
    return found


def pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_every_requirement_carries_a_hash() -> None:
    locked = pins()
    assert locked, "the lock is empty"
    for name, (version, hashes) in locked.items():
        assert hashes, f"{name}=={version} has no --hash"
        assert all(h.startswith("sha256:") and len(h) == 71 for h in hashes), name


@pytest.mark.parametrize("table", ["dependencies", "build-system"])
def test_the_lock_holds_every_dependency_at_a_version_pyproject_admits(table: str) -> None:
    data = pyproject()
    wanted = data["project"]["dependencies"] if table == "dependencies" else data[
        "build-system"]["requires"]
    locked = pins()
    for text in wanted:
        requirement = Requirement(text)
        name = canonicalize_name(requirement.name)
        assert name in locked, f"{name} is not in {LOCK.name}: run python tools/lock_action.py"
        version = locked[name][0]
        assert requirement.specifier.contains(version, prereleases=True), (
            f"{name}=={version} is not admitted by {text!r}: run python tools/lock_action.py")


def test_the_lock_names_the_command_that_writes_it() -> None:
    assert "#    python tools/lock_action.py" in LOCK.read_text().splitlines()[1]
    assert (ROOT / "tools" / "lock_action.py").is_file()
    assert "python tools/lock_action.py" in (ROOT / "README.md").read_text()


def test_the_action_installs_from_the_lock_only() -> None:
    doc = yaml.safe_load((ROOT / "action.yml").read_text())
    step = next(s for s in doc["runs"]["steps"] if s.get("id") == "install")
    commands = [" ".join(c.split()) for c in step["run"].replace("\\\n", " ").splitlines()
                if "pip install" in c]
    assert len(commands) == 2, commands
    deps, itself = commands
    assert "--require-hashes" in deps and "--only-binary :all:" in deps
    assert '-r "${GITHUB_ACTION_PATH}/requirements/action.txt"' in deps
    assert "--no-deps --no-build-isolation" in itself and itself.endswith('"${GITHUB_ACTION_PATH}"')


def _clean_pip_env() -> dict[str, str]:
    """The environment of a runner: no pip configuration of this machine's own."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "VIRTUAL_ENV"))}
    env.update(PIP_CONFIG_FILE=os.devnull, PIP_DISABLE_PIP_VERSION_CHECK="1")
    return env


@pytest.mark.slow
@pytest.mark.network
def test_a_fresh_venv_installs_from_the_lock(tmp_path: Path) -> None:
    """What action.yml's "Install benchbot" does, in a new virtual environment."""
    env = _clean_pip_env()
    version, _ = pins()["setuptools"]
    probe = subprocess.run(
        [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary",
         ":all:", "-d", str(tmp_path / "probe"), f"setuptools=={version}"],
        env=env, capture_output=True, text=True, timeout=300, check=False)
    if probe.returncode != 0:
        pytest.skip(f"the package index cannot be reached: {probe.stderr.strip()[-200:]}")
    source = tmp_path / "benchbot"  # a copy: an in-tree build writes into the tree
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(
        ".git", ".venv", "build", "*.egg-info", "__pycache__", ".*_cache", ".hypothesis"))
    target = tmp_path / "venv"
    venv.create(target, with_pip=True)
    python = str(target / "bin" / "python")
    for args in (["--require-hashes", "--only-binary", ":all:", "--no-deps", "-r", str(LOCK)],
                 ["--no-deps", "--no-build-isolation", str(source)]):
        proc = subprocess.run([python, "-m", "pip", "install", "--quiet", *args], env=env,
                              capture_output=True, text=True, timeout=900, check=False,
                              cwd=tmp_path)
        assert proc.returncode == 0, proc.stdout + proc.stderr
    check = subprocess.run(
        [python, "-c", "import benchbot.github.api, benchbot.cli, numpy, jsonschema, yaml; "
                       "print(benchbot.__file__)"],
        env=env, capture_output=True, text=True, timeout=120, check=False, cwd=tmp_path)
    assert check.returncode == 0, check.stderr
    assert str(target) in check.stdout  # the installed copy, not the source tree
