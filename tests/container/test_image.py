"""The container image: built from the Dockerfile with podman, then run on a repository
mounted from the host, as the README's "Run it in a container" tells users to.

No image registry is needed. The base image is made from Debian's own packages
(``mmdebstrap --variant=minbase bookworm``, imported with ``podman import``) and handed to
the build as ``BASE_IMAGE``; the Dockerfile's default is the pinned debian:bookworm-slim.
The build itself reaches Debian's mirror and PyPI, as any build of the image does.

Skipped, with the reason, where podman or mmdebstrap is missing, where podman cannot run
containers, and when not root. Both images are removed at the end of the module. Select
or leave out with ``-m container`` / ``-m 'not container'``; about 2½ minutes on a
2-core machine, most of it the base image and the build.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import MakeRepo, git

pytestmark = pytest.mark.container

ROOT = Path(__file__).resolve().parents[2]
_SUFFIX = secrets.token_hex(4)  # names of this session's own images, so that only they are removed
BASE = f"localhost/benchbot-test-base:{_SUFFIX}"
IMAGE = f"localhost/benchbot-test:{_SUFFIX}"
# Explicit limits: without them podman asks runc for its own default open-files limit
# (1048576), which a host that is itself a container may not grant, and runc then
# refuses to start anything ("error setting rlimits"). The same flags serve builds.
LIMITS = ["--ulimit", "nofile=1024:1024", "--ulimit", "nproc=1024:1024"]
# mmdebstrap's minbase keeps documentation and translations; Docker's slim images drop
# them, and so does this, so that the image's size here is near the real one's.
SLIM = ["--dpkgopt=path-exclude=/usr/share/doc/*",
        "--dpkgopt=path-include=/usr/share/doc/*/copyright",
        "--dpkgopt=path-exclude=/usr/share/man/*",
        "--dpkgopt=path-exclude=/usr/share/info/*",
        "--dpkgopt=path-exclude=/usr/share/locale/*"]

PROG_C = """\
#include <time.h>
#ifndef PAUSE_MS
#define PAUSE_MS 2
#endif
int main(void) {
    struct timespec pause = {0, PAUSE_MS * 1000000L};
    return nanosleep(&pause, 0);
}
"""
# A small C project, built with make inside the container; the head sleeps ten times as
# long, so `slower` is certain even with 10 pairs on a loaded machine.
FILES = {
    "prog.c": PROG_C,
    "Makefile": "prog: prog.c\n\tcc -O2 -o prog prog.c\n",
    "benchbot.yml": ("version: 1\nbuild: make\naa: off\nconfirm: off\n"
                     "defaults: {runs: 10}\nworkloads:\n  - {name: pause, run: ./prog}\n"),
}


def _run(argv: list[str], timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, check=False, timeout=timeout)


def _tail(proc: subprocess.CompletedProcess[str], lines: int = 30) -> str:
    return "\n".join((proc.stdout + proc.stderr).splitlines()[-lines:])


@pytest.fixture(scope="module")
def podman() -> list[str]:
    """The podman command line to use, or a skip naming what is missing."""
    for tool in ("podman", "mmdebstrap"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is not installed (apt-get install podman runc mmdebstrap)")
    if os.geteuid() != 0:
        pytest.skip("needs root: this test runs rootful podman and mmdebstrap (rootless "
                    "podman maps the container's user to a subordinate uid; not tried)")
    # runc where it is there: podman prefers crun when both are, and runc is the one
    # this test has been run with.
    command = ["podman", "--runtime", "runc"] if shutil.which("runc") else ["podman"]
    info = _run([*command, "info"])
    if info.returncode != 0:
        pytest.skip(f"podman cannot run here: {_tail(info, 3)}")
    return command


@pytest.fixture(scope="module")
def base_image(podman: list[str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A Debian 12 minbase image made from Debian's packages, once per session."""
    tar = tmp_path_factory.mktemp("base") / "bookworm.tar"
    hooks: list[str] = []
    changes: list[str] = []
    # Where this host reaches PyPI through a TLS-intercepting proxy, its CA bundle holds
    # the proxy's certificate, and pip inside the build must trust it too. The bundle
    # goes into this test's base only; the real Dockerfile never sees it.
    bundle = Path(os.environ.get("PIP_CERT", "/etc/ssl/certs/ca-certificates.crt"))
    if bundle.is_file():
        hooks = ['--customize-hook=mkdir -p "$1/etc/ssl"',
                 f"--customize-hook=upload {bundle} /etc/ssl/host-ca-certificates.crt"]
        changes = ["--change", "ENV PIP_CERT=/etc/ssl/host-ca-certificates.crt"]
    # A file rather than a pipe: a failed mmdebstrap piped into podman import still
    # leaves an (empty) image behind.
    made = _run(["mmdebstrap", "--variant=minbase", "--quiet", *SLIM, *hooks,
                 "bookworm", str(tar)], timeout=600)
    assert made.returncode == 0, f"mmdebstrap failed:\n{_tail(made)}"
    imported = _run([*podman, "import", *changes, str(tar), BASE])
    tar.unlink()
    assert imported.returncode == 0, f"podman import failed:\n{_tail(imported)}"
    try:
        probe = _run([*podman, "run", "--rm", *LIMITS, BASE, "true"])
        if probe.returncode != 0:
            pytest.skip(f"podman cannot start a container here: {_tail(probe, 3)}")
        yield BASE
    finally:
        _run([*podman, "rmi", "--force", BASE])


@pytest.fixture(scope="module")
def image(podman: list[str], base_image: str) -> Iterator[str]:
    """The image built from this checkout's Dockerfile on the local base."""
    # --layers=false: no cached intermediate images to pile up over repeated runs.
    build = _run([*podman, "build", "--layers=false", "--force-rm", *LIMITS,
                  "--build-arg", f"BASE_IMAGE={base_image}", "--tag", IMAGE,
                  "--file", str(ROOT / "Dockerfile"), str(ROOT)], timeout=900)
    try:
        assert build.returncode == 0, f"podman build failed:\n{_tail(build)}"
        yield IMAGE
    finally:
        _run([*podman, "rmi", "--force", IMAGE])


def _shared_repo(make_repo: MakeRepo) -> Path:
    """The throwaway repository, owned by root (this test's user) but writable by the
    container's user, who needs to add worktrees under .git and write the results."""
    repo = make_repo(FILES, {"prog.c": PROG_C.replace("PAUSE_MS 2\n", "PAUSE_MS 20\n")})
    subprocess.run(["chmod", "-R", "a+rwX", str(repo)], check=True)
    return repo


def test_the_container_runs_as_a_user_that_is_not_root(podman: list[str], image: str) -> None:
    proc = _run([*podman, "run", "--rm", *LIMITS, "--entrypoint", "id", image])
    assert proc.returncode == 0, _tail(proc)
    assert proc.stdout.startswith("uid=1000(benchbot) gid=1000(benchbot)"), proc.stdout


def test_compare_in_the_container_finds_the_planted_slowdown(
    podman: list[str], image: str, make_repo: MakeRepo, validate
) -> None:
    repo = _shared_repo(make_repo)
    before = git(repo, "status", "--porcelain")
    proc = _run([*podman, "run", "--rm", *LIMITS, "--volume", f"{repo}:/repo", image,
                 "compare", "--repo", "/repo", "--base", "base", "--head", "HEAD",
                 "--json", "/repo/out.json", "--fail-on", "slower"])
    assert proc.returncode == 3, _tail(proc)  # 3: an outcome named by --fail-on occurred
    doc = json.loads((repo / "out.json").read_text())
    validate(doc)
    (bench,) = doc["benchmarks"]
    assert bench["name"] == "pause"
    assert bench["verdict"]["outcome"] == "slower", bench["verdict"]
    assert "| `pause` |" in proc.stdout  # the report went to stdout
    # the worktrees are gone again and the checkout is as it was (but for the results)
    assert git(repo, "worktree", "list").count("\n") == 0
    assert git(repo, "status", "--porcelain") == (before + "\n?? out.json").strip()


def test_git_would_refuse_the_mounted_repository_without_the_images_setting(
    podman: list[str], image: str, make_repo: MakeRepo
) -> None:
    """The repository belongs to another user than the container's; the image's system
    gitconfig (safe.directory) is what lets git work in it."""
    repo = _shared_repo(make_repo)
    proc = _run([*podman, "run", "--rm", *LIMITS, "--env", "GIT_CONFIG_NOSYSTEM=1",
                 "--volume", f"{repo}:/repo", image,
                 "compare", "--repo", "/repo", "--base", "base", "--head", "HEAD"])
    assert proc.returncode == 1, _tail(proc)
    assert "safe.directory" in proc.stderr, proc.stderr


def test_what_counting_instructions_finds_in_the_container(podman: list[str], image: str) -> None:
    """valgrind is in the image and counts there; perf_event_open answers as the host's
    kernel and podman's seccomp profile let it (this VM: no hardware counters, ENOENT)."""
    proc = _run([*podman, "run", "--rm", *LIMITS, image, "doctor"])
    assert proc.returncode == 0, _tail(proc)
    lines = [line for line in proc.stdout.splitlines() if "instruction counts: " in line]
    assert any("instruction counts: perf" in line for line in lines), proc.stdout
    assert any("instruction counts: valgrind works here" in line for line in lines), proc.stdout
    # Without podman's seccomp profile perf answers as on the host: whatever refused it
    # above was the profile.
    free = _run([*podman, "run", "--rm", *LIMITS, "--security-opt", "seccomp=unconfined",
                 image, "doctor"])
    assert free.returncode == 0, _tail(free)
    freed = [line for line in free.stdout.splitlines() if "instruction counts: perf" in line]
    assert freed and "seccomp" not in freed[0], freed
    print("\n".join([*lines, "unconfined:", *freed]))  # for the record (-s)
