"""The worker starts as ``sys.executable``, so every link on the way from it to the
interpreter must exist in the sandbox, and nothing else of the directories they lie in.

Found by running the slow tier in a venv made as `.ci/run` makes it (a ``python3`` from
``tools/bare_path.py``'s directory of links): ``bwrap: execvp …/.venv/bin/python: No such
file or directory`` in every sandboxed test, since the venv's ``python3`` led into
``.bare-path/``, which the sandbox does not show.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from benchbot.sandbox import bwrap, fsview

REAL = os.path.realpath(sys.executable)  # the interpreter itself


def _venv_through_links(tmp_path: Path) -> tuple[Path, Path]:
    """A venv-like ``bin/python`` -> ``python3`` -> a directory of links -> the interpreter."""
    real = REAL
    links = tmp_path / "bare-path"
    links.mkdir()
    (links / "python3").symlink_to(real)
    (links / "notes.txt").write_text("what else lies there stays hidden\n")
    bin_dir = tmp_path / "venv" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "python3").symlink_to(links / "python3")
    (bin_dir / "python").symlink_to("python3")
    return bin_dir / "python", links


def test_each_link_to_the_interpreter_is_made_alone(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    python, links = _venv_through_links(tmp_path)
    monkeypatch.setattr(sys, "executable", str(python))
    chain = fsview.interpreter_links()
    assert chain == [("python3", str(python)),
                     (str(links / "python3"), str(python.parent / "python3")),
                     (REAL, str(links / "python3"))]
    view = fsview.allowed({"PATH": "/usr/bin:/bin", "HOME": str(tmp_path / "home")})
    made = dict((path, target) for target, path in view.symlinks)
    for target, path in chain:  # none of these directories is shown: each link is made
        assert made[path] == target
    seen = view.visibility()
    assert not seen.shows(str(links / "notes.txt")) and not seen.shows(str(links))
    assert seen.shows(REAL)


def test_a_link_in_a_shown_directory_is_not_made_again(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A system interpreter's own link (``/usr/bin/python3 -> python3.11``) is there by its
    bind; making it again inside a read-only bind would stop bubblewrap."""
    link = next((p for p in ("/usr/bin/python3", "/bin/python3") if os.path.islink(p)), None)
    if link is None:
        pytest.skip("no /usr/bin/python3 link on this machine")
    monkeypatch.setattr(sys, "executable", link)
    view = fsview.allowed({"PATH": "/usr/bin:/bin", "HOME": str(tmp_path / "home")})
    assert link not in {path for _, path in view.symlinks}


@pytest.mark.slow
@pytest.mark.skipif(not bwrap.probe().works, reason="bubblewrap cannot make a sandbox here "
                    "(.ci/run installs the bubblewrap package)")
def test_the_interpreter_starts_in_the_sandbox_through_its_links(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    python, links = _venv_through_links(tmp_path)
    monkeypatch.setattr(sys, "executable", str(python))
    box = bwrap.choose("on")
    scratch = tmp_path / "scratch"
    scratch.mkdir()

    def in_sandbox(argv: list[str]) -> subprocess.CompletedProcess[str]:
        fd = bwrap.filter_fd()
        try:
            return subprocess.run(box.wrap(argv, cwd=scratch, writable=[scratch], network=False,
                                           seccomp_fd=fd),
                                  capture_output=True, text=True, timeout=60, check=False,
                                  stdin=subprocess.DEVNULL, pass_fds=(fd,))
        finally:
            os.close(fd)

    proc = in_sandbox([str(python), "-c", "import sys; print(sys.version_info[0])"])
    assert proc.returncode == 0 and proc.stdout.strip() == "3", proc.stderr
    listed = in_sandbox(["/bin/ls", str(links)]).stdout.split()
    assert listed == ["python3"]  # the link alone, not what lies beside it
