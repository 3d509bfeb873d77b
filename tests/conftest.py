"""Shared fixtures (real git repositories made in a temporary directory, the fake GitHub,
a job's environment, the planted measuring) and the two tiers: which tests the fast tier
leaves out, and the check that keeps real timing out of it (tests/README.md)."""

from __future__ import annotations

import atexit
import dataclasses
import functools
import gc
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Hashable, Iterator, Mapping
from pathlib import Path
from typing import Any, TypeVar, cast

import hypothesis
import pytest

from benchbot.results import resultsdir
from benchbot.sandbox.spawn import RawRun

# init.templateDir empty: a repository without the sample hooks (18 files fewer to write
# and delete for each of the thousands of repositories the tests make).
GIT = ["git", "-c", "user.name=test", "-c", "user.email=test@example.invalid",
       "-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main", "-c", "init.templateDir="]


def git(repo: Path, *args: str) -> str:
    """Run git in repo and return its stdout."""
    return subprocess.run([*GIT, *args], cwd=repo, check=True, capture_output=True, text=True).stdout.strip()


def write_files(repo: Path, files: Mapping[str, str | None]) -> None:
    """Write (or with None, delete) files; a file starting with #! is made executable.

    A benchbot.yml that does not say how to count instructions gets ``counts: off`` at its
    end (the line numbers of what it holds stay the same): ``counts: auto`` would count
    every short workload with valgrind, whose counted runs take about 0.4 s each, and most
    tests are about something else. The tests of counting say ``counts:``."""
    for name, text in files.items():
        path = repo / name
        if text is None:
            path.unlink()
            continue
        if name.endswith("benchbot.yml") and text.startswith("version:") and "counts:" not in text:
            text = text + ("" if text.endswith("\n") else "\n") + "counts: off\n"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        if text.startswith("#!"):
            path.chmod(0o755)


MakeRepo = Callable[..., Path]
_Made = TypeVar("_Made")
_REPOSITORIES: dict[Hashable, tuple[Path, Any]] = {}  # what copied_repo made, by its key


def copied_repo(where: Path, key: Hashable, make: Callable[[Path], _Made]) -> _Made:
    """A copy at ``where`` of the repository ``make`` makes (and what it returned: its
    SHAs, say), made once per session for each ``key`` in a folder of this session's own:
    a copy costs a few milliseconds, making one a dozen git processes. Commits keep their
    SHAs in every copy; a test changes its copy only."""
    if key not in _REPOSITORIES:
        made = Path(tempfile.mkdtemp(dir=_originals())) / "repo"
        _REPOSITORIES[key] = (made, make(made))
    made, returned = _REPOSITORIES[key]
    shutil.copytree(made, where, symlinks=True)
    return cast(_Made, returned)


@functools.cache
def _originals() -> Path:
    """This session's folder of the repositories copied_repo made (removed at its end)."""
    folder = Path(tempfile.mkdtemp(prefix="benchbot-test-repositories-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return folder


# --- property tests: the same examples every run, and no deadline ------------------------

# Loaded before the test modules are, so every @settings there inherits it: the fast tier
# passes or fails the same way each time, and an example slowed down by a loaded machine is
# not a failure (hypothesis' default deadline, 200 ms, is real timing). To look further:
# pytest --hypothesis-profile=explore (new random examples each run).
hypothesis.settings.register_profile(
    "benchbot", derandomize=True, deadline=None, database=None,
    suppress_health_check=[hypothesis.HealthCheck.too_slow])
hypothesis.settings.register_profile(
    "explore", deadline=None, suppress_health_check=[hypothesis.HealthCheck.too_slow])
hypothesis.settings.load_profile("benchbot")

# --- the slow tier --------------------------------------------------------------------

# Every test under these folders is in the slow tier (the container image, a real browser,
# workflows run by act), whether or not it is marked itself.
SLOW_DIRS = ("container", "render", "act")
_TESTS = Path(__file__).parent
_LEFT_OUT = pytest.StashKey[int]()  # how many slow tests this run left out


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--slow", action="store_true",
                     help="run the slow tier too (tests marked slow; also BENCHBOT_SLOW=1)")


def _runs_slow(config: pytest.Config) -> bool:
    """Whether the slow tier runs: asked for with --slow or BENCHBOT_SLOW=1, or named in
    -m (``-m slow`` runs it alone; any -m expression that says ``slow`` decides itself)."""
    return (bool(config.getoption("--slow")) or os.environ.get("BENCHBOT_SLOW") == "1"
            or "slow" in (config.getoption("markexpr") or ""))


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the slow folders' tests, then leave the slow tier out unless it was asked for
    (tryfirst: before -m selects, so that ``-m slow`` sees the folders' marks)."""
    for item in items:
        parts = item.path.relative_to(_TESTS).parts if item.path.is_relative_to(_TESTS) else ()
        if parts and parts[0] in SLOW_DIRS:
            item.add_marker(pytest.mark.slow)
    if _runs_slow(config):
        return
    slow = [item for item in items if item.get_closest_marker("slow")]
    if slow:
        config.hook.pytest_deselected(items=slow)
        items[:] = [item for item in items if not item.get_closest_marker("slow")]
        config.stash[_LEFT_OUT] = len(slow)


@pytest.hookimpl(tryfirst=True, optionalhook=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """What ``-n auto`` (pyproject's addopts) means here: the fast tier in one process per
    core, up to four; the slow tier in this one process, since its measured tests and act's
    runners want the machine to themselves (0: pytest-xdist distributes nothing)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return 0 if _runs_slow(config) or (cores or 1) < 2 else min(cores or 1, 4)


def pytest_sessionfinish(session: pytest.Session) -> None:
    """A pytest-xdist worker hands its counts to the controller, which prints them."""
    output = getattr(session.config, "workeroutput", None)
    if output is not None:
        guard = session.config.stash.get(_GUARD, None)
        output["benchbot"] = {
            "left_out": session.config.stash.get(_LEFT_OUT, 0),
            "allowed": sorted(guard.allowed) if guard is not None else [],
            "allowed_runs": guard.allowed_runs if guard is not None else 0}


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    """The controller's side of ``pytest_sessionfinish``: each worker's counts (every worker
    collects every test, so the slow ones left out are counted once)."""
    got = getattr(node, "workeroutput", {}).get("benchbot")
    config, guard = node.config, node.config.stash.get(_GUARD, None)
    if not got or guard is None:
        return
    config.stash[_LEFT_OUT] = max(config.stash.get(_LEFT_OUT, 0), got["left_out"])
    guard.allowed.update(got["allowed"])
    guard.allowed_runs += got["allowed_runs"]


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    left_out = config.stash.get(_LEFT_OUT, 0)
    if left_out:
        terminalreporter.write_line(
            f"{left_out} slow tests left out: run them with --slow (both tiers) or -m slow")
    guard = config.stash.get(_GUARD, None)
    if guard is not None and guard.allowed:
        terminalreporter.write_line(
            f"real_runs: {len(guard.allowed)} fast tests ran {guard.allowed_runs} real "
            f"processes, each read as {STILL_NS / 1e6:g} ms on benchbot's clock")


# --- real timing stays out of the fast tier -------------------------------------------

# In a fast-tier test every run benchbot's real spawners make reads this long, so that a
# verdict there can rest on planted times alone (tests/clock.py, ghenv.PlantedNap, the
# `planted` fixture), never on this machine's timing.
STILL_NS = 1_000_000
REAL_RUNS_HELP = (
    "Measure with a fake instead (tests/clock.py's FakeClock with a spawner of planted "
    "times, ghenv.PlantedNap, the `planted` fixture), or mark the test slow with a change "
    "large enough to be certain; a test that runs real processes only for what they do "
    "(the order of runs, failures, timeouts, files) says so with "
    "@pytest.mark.real_runs(\"why\"), and its runs then read "
    f"{STILL_NS / 1e6:g} ms each on benchbot's clock.")


class _Guard:
    """Counts the real runs of the test in progress and, in a fast-tier test, sets their
    time to STILL_NS: wrapped around the two spawners that start real processes (the one
    in this process, and the sandbox's workers), and around starting a benchbot command
    that measures as a process of its own, whose runs this process cannot see."""

    def __init__(self) -> None:
        self.fast = False  # the test in progress is in the fast tier
        self.runs = 0  # its real runs so far
        self.children = 0  # and the measuring benchbot processes it started
        self.allowed: set[str] = set()  # fast tests marked real_runs that ran some
        self.allowed_runs = 0

    def seen(self, run: RawRun) -> RawRun:
        if not self.fast:
            return run
        self.runs += 1
        return run if run.not_started is not None else dataclasses.replace(run, wall_ns=STILL_NS)

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        from benchbot.sandbox import bwrap, spawn

        guard, process_spawn = self, spawn.ProcessSpawner.spawn
        worker_groups, popen_init = bwrap.WorkerSpawner.spawn_groups, subprocess.Popen.__init__

        def spawn_(spawner: spawn.ProcessSpawner, request: spawn.SpawnRequest) -> RawRun:
            return guard.seen(process_spawn(spawner, request))

        def spawn_groups(spawner: bwrap.WorkerSpawner, groups: Any, keys: Any) -> Any:
            return [[guard.seen(run) for run in group] for group in worker_groups(spawner, groups, keys)]

        def popen(process: Any, args: Any, *more: Any, **kwargs: Any) -> None:
            if guard.fast and _measures(args):
                guard.children += 1
            popen_init(process, args, *more, **kwargs)

        monkeypatch.setattr(spawn.ProcessSpawner, "spawn", spawn_)
        monkeypatch.setattr(bwrap.WorkerSpawner, "spawn_groups", spawn_groups)
        monkeypatch.setattr(subprocess.Popen, "__init__", popen)

    def complaint(self) -> str:
        """Why the test in progress fails, or "" if it made no real run."""
        said = []
        if self.runs:
            said.append(f"{self.runs} real runs (processes benchbot started and timed)")
        if self.children:
            said.append(f"{self.children} benchbot processes started to measure, whose runs "
                        "are timed for real where this check cannot see them")
        if not said:
            return ""
        return (f"{' and '.join(said)} in a fast-tier test, whose verdicts must not rest on "
                f"this machine's timing. {REAL_RUNS_HELP}")


MEASURING = frozenset({"compare", "github", "bisect", "demo"})  # benchbot's commands that time runs


def _measures(args: Any) -> bool:
    """Whether a command line starts a benchbot command that measures (``python -m
    benchbot compare``, ``benchbot github``, ...), also inside a script handed to a shell
    (``sh -c '... -m benchbot github'``)."""
    words = [str(a) for a in args] if isinstance(args, (list, tuple)) else [str(args)]
    argv = [word for arg in words for word in arg.split()]
    for at, arg in enumerate(argv):
        if Path(arg).name == "benchbot" and (at == 0 or argv[at - 1] == "-m"):
            return bool(MEASURING.intersection(argv[at + 1:]))
    return False


_GUARD = pytest.StashKey[_Guard]()
_UNDO = pytest.StashKey[pytest.MonkeyPatch]()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "real_runs(why): a fast-tier test that runs real processes for what they "
        "do, not how long they take (tests/conftest.py)")
    guard, undo = _Guard(), pytest.MonkeyPatch()
    guard.install(undo)
    config.stash[_GUARD], config.stash[_UNDO] = guard, undo


def pytest_collection_finish(session: pytest.Session) -> None:
    """What collection made (the modules, the items, their fixtures' definitions) is kept
    out of the garbage collector's full passes, which otherwise scan it again and again:
    their time fell from 1.1–1.3 s to 0.75 s a worker over the unit tests and tests/golden
    (gc.callbacks, 2026-12-03)."""
    gc.collect()
    gc.freeze()


def pytest_unconfigure(config: pytest.Config) -> None:
    undo = config.stash.get(_UNDO, None)
    if undo is not None:
        undo.undo()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Any:
    guard = item.config.stash[_GUARD]
    guard.fast, guard.runs, guard.children = item.get_closest_marker("slow") is None, 0, 0
    try:
        return (yield)
    finally:
        guard.fast = False


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """A fast-tier test that ran real processes fails unless it says why (real_runs)."""
    report = yield
    guard = item.config.stash[_GUARD]
    complaint = guard.complaint() if guard.fast and call.when != "setup" else ""
    if not complaint:
        return report
    if item.get_closest_marker("real_runs") is not None:
        guard.allowed.add(item.nodeid)
        guard.allowed_runs += guard.runs + guard.children
    elif report.passed:
        report.outcome = "failed"
        report.longrepr = complaint
    else:
        report.sections.append(("real timing in the fast tier", complaint))
    guard.runs = guard.children = 0
    return report


@pytest.fixture
def make_repo(tmp_path: Path) -> MakeRepo:
    """Factory: a git repo with a `base` tag and a head commit on main."""

    def new(repo: Path, base: Mapping[str, str], head: Mapping[str, str | None] | None) -> None:
        repo.mkdir(parents=True)
        git(repo, "init", "-q")
        write_files(repo, base)
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", "base")
        git(repo, "tag", "base")
        if head:
            write_files(repo, head)
            git(repo, "add", "-A")
            git(repo, "commit", "-q", "-m", "head")

    def make(base: Mapping[str, str], head: Mapping[str, str | None] | None = None, name: str = "repo") -> Path:
        key = ("make_repo", tuple(base.items()), tuple((head or {}).items()))
        copied_repo(tmp_path / name, key, lambda at: new(at, base, head))
        return tmp_path / name

    return make


@pytest.fixture(scope="session")
def results_schema() -> dict[str, Any]:
    return resultsdir.schema()


@pytest.fixture
def validate() -> Callable[[Any], None]:
    """Validate a results document (or a path to one) against the shipped JSON Schema, as
    benchbot checks one it reads (``results.validation_error``: a list of runs whose items
    are all of the allowed kind is checked by its first, as the schema says the same of
    each; 0.9 s for a document of 140 workloads item by item, 20 ms so)."""

    def check(doc: Any) -> None:
        if isinstance(doc, (str, os.PathLike)):
            doc = json.loads(Path(doc).read_text())
        elif not isinstance(doc, dict):
            doc = resultsdir.to_json(doc)
        error = resultsdir.validation_error(doc)
        assert error is None, error

    return check


@pytest.fixture
def fake() -> Iterator[Any]:
    """The fake GitHub server with the webhook examples' repository, Codertocat/Hello-World;
    alice may write, maria maintain, bob read. Every request and response matched GitHub's
    OpenAPI description, or the test fails."""
    from tests.fakegithub import FakeGitHub
    from tests.ghenv import OWNER, REPO

    with FakeGitHub(owner=OWNER, repo=REPO, owner_type="User", default_branch="main") as server:
        server.permissions.update({"alice": "write", "maria": "maintain", "bob": "read"})
        yield server
        assert server.validation_errors == []


@pytest.fixture
def env(tmp_path: Path, fake: Any) -> Any:
    """A GitHub Actions job around `benchbot github` on a fresh workspace (tests/ghenv.py)."""
    from tests.ghenv import Env, make_workspace

    return Env(tmp_path, fake, make_workspace(tmp_path))


@pytest.fixture
def planted(monkeypatch: pytest.MonkeyPatch) -> Any:
    """`benchbot github`, run in this process, measures with ``ghenv.PlantedNap`` on a fake
    clock instead of running nap.sh: the same planted slowdown, decided without waiting or
    a loaded machine's noise, for the tests whose point is what happens around measuring."""
    from benchbot.measure import engine
    from tests.clock import FakeClock
    from tests.ghenv import PlantedNap

    clock = FakeClock()
    real = engine.compare

    def compare(request: engine.Request, **kwargs: Any) -> Any:
        return real(request, **kwargs, spawner_factory=lambda _: PlantedNap(clock), clock=clock)

    monkeypatch.setattr(engine, "compare", compare)
    return clock


@pytest.fixture
def shard_env(tmp_path: Path, fake: Any) -> Any:
    """As ``env``, with two workloads to split over two shards (tests/ghenv.py)."""
    from tests.ghenv import SHARD_CONFIG, Env, make_workspace

    return Env(tmp_path, fake, make_workspace(tmp_path, config=SHARD_CONFIG))
