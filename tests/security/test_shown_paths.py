"""What the config may show the code under test: ``sandbox.read_only`` and ``writable`` are
checked against the machine (``fsview.refusal``), and refused with file, line and key.

``read_only: ["~"]`` used to show the runner's home (its ``.credentials``, a token in
``.git-credentials``) to every build and run; nothing was checked.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from benchbot.config.load import load_config
from benchbot.core.errors import ConfigError


@pytest.fixture
def machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A runner's machine under ``tmp_path``: a home with a toolchain and secrets, the
    runner's root with its work folder and temporary directory."""
    home = tmp_path / "home" / "runner"
    for folder in (home / ".pyenv" / "bin", home / ".ssh", tmp_path / "opt" / "tool" / "bin",
                   tmp_path / "actions-runner" / "_work" / "_temp"):
        folder.mkdir(parents=True)
    (home / ".pyenv" / "bin" / "python3").write_text("#!/bin/sh\n")
    os.chmod(home / ".pyenv" / "bin" / "python3", 0o755)
    (home / ".ssh" / "id_ed25519").write_text("secret\n")
    os.chmod(home / ".ssh" / "id_ed25519", 0o600)
    (tmp_path / "actions-runner" / ".credentials").write_text("{}\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("RUNNER_TEMP", str(tmp_path / "actions-runner" / "_work" / "_temp"))
    return tmp_path


def refused(tmp_path: Path, key: str, value: str) -> str:
    config = tmp_path / "benchbot.yml"
    config.write_text(f"version: 1\nsandbox:\n  {key}: [{value!r}]\n"
                      "workloads: [{name: w, run: ['true']}]\n")
    with pytest.raises(ConfigError) as caught:
        load_config(config)
    message = str(caught.value)
    assert message.startswith(f"{config}:3: sandbox.{key}[0]: "), message
    return message


@pytest.mark.parametrize("key", ["read_only", "writable"])
@pytest.mark.parametrize(("value", "why"), [
    ("~", "home directory"),
    ("/", "the root"),
    ("/home", "top-level"),
    ("/root", "top-level"),
    ("/tmp", "top-level"),
    ("/proc/self", "kernel or runtime state"),
    ("/sys/kernel", "kernel or runtime state"),
    ("/run/docker", "kernel or runtime state"),
    ("/opt/tool/../../etc", "`..`"),
])
def test_places_that_are_never_a_toolchain(machine: Path, key: str, value: str, why: str) -> None:
    assert why in refused(machine, key, value)


@pytest.mark.parametrize("key", ["read_only", "writable"])
def test_the_runner_s_own_places_and_what_holds_them(machine: Path, key: str) -> None:
    runner = machine / "actions-runner"
    assert "the runner's own" in refused(machine, key, str(runner / "_work" / "_temp" / "x"))
    assert "the runner's own" in refused(machine, key, str(runner))
    assert "the runner's own" in refused(machine, key, str(runner / "_work"))  # holds _temp
    assert "home directory" in refused(machine, key, str(machine / "home"))


@pytest.mark.parametrize("key", ["read_only", "writable"])
def test_a_symlink_counts_as_where_it_leads(machine: Path, key: str) -> None:
    link = machine / "opt" / "innocent"
    link.symlink_to(machine / "home" / "runner")
    message = refused(machine, key, str(link))
    assert "resolves to" in message and "home directory" in message


@pytest.mark.parametrize("key", ["read_only", "writable"])
def test_a_directory_holding_what_only_its_owner_may_read_is_refused(machine: Path, key: str) -> None:
    """By what a file is, not by its name: an ssh key, a registry token, .credentials."""
    message = refused(machine, key, str(machine / "home" / "runner" / ".ssh"))
    assert "id_ed25519, which only its owner may read" in message
    tool = machine / "opt" / "tool"
    (tool / "credentials.toml").write_text("token = 'x'\n")
    os.chmod(tool / "credentials.toml", 0o640)
    assert "credentials.toml, which only its owner may read" in refused(machine, key, str(tool))
    (tool / "credentials.toml").unlink()
    (tool / ".runner").write_text("{}\n")
    assert "a runner's own file" in refused(machine, key, str(tool))


def test_a_toolchain_is_shown(machine: Path) -> None:
    config = machine / "benchbot.yml"
    config.write_text(f"version: 1\nsandbox: {{read_only: ['~/.pyenv', '{machine}/opt/tool', "
                      "/opt/not/installed/here], writable: ['/var/cache/mybench']}\n"
                      "workloads: [{name: w, run: ['true']}]\n")
    loaded = load_config(config)
    assert loaded.sandbox.read_only == (str(machine / "home" / "runner" / ".pyenv"),
                                        str(machine / "opt" / "tool"), "/opt/not/installed/here")
