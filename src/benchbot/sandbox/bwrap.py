"""Where the privilege line is drawn: the code under test gets no secrets and, with
bubblewrap, sees only what it needs of the machine.

benchbot holds a token (on GitHub) and builds and runs code from pull requests. Two
measures keep the second away from the first:

1. **An environment made from an allow-list** (``clean_env``): PATH, HOME, the locale,
   TMPDIR, the usual compiler variables, ``RUNNER_TRACKING_ID`` (the runner ends the
   processes that carry it when the job ends), the config's ``env:`` and the names its
   ``pass_env:`` lists. Names that carry credentials (``NEVER_PASSED``) are never passed,
   even when listed; the config refuses to list them.
2. **A sandbox** (``Sandbox``): with bubblewrap (``bwrap``, the sandbox Flatpak uses)
   the build and the measuring run in their own PID namespace and ``/proc`` (benchbot's
   own process, and the step's shell, cannot be seen), in a file system made from an
   allow-list (``fsview.allowed``): the system directories, the toolchains on PATH,
   benchbot's interpreter and package and the config's ``sandbox.read_only``, all
   read-only; ``/dev``, ``/proc``, an empty ``/tmp`` and home; and writable only the
   comparison's scratch directory (the worktrees). Nothing else exists there: not the
   runner's directory wherever it lives, nor the job's temporary files. Measuring, and
   the build unless ``sandbox.build_network`` allows it, get their own network namespace
   (loopback only). Every run is *not* wrapped: ``bwrap`` costs about 5 ms a start, so
   one worker (``benchbot.sandbox.worker``) is started in a sandbox of its own for each
   worktree (and for the copy of base's build that base again runs from), where only
   that place is writable, and spawns and times that arm's runs there, so that the floor
   of timing does not move and no run can rewrite another arm's program.

What a process in the sandbox can reach is checked by enumeration, not by the paths
someone thought of (``tests/security/test_enumeration.py``, with its allow-list in
``tests/security/reach.py``): every descriptor of every process it can see, every mount,
every directory it can write, the keyrings and every socket. Three rules keep that list
short by construction:

- **No process in reach holds the measuring's pipes but the worker, and the worker is out
  of reach.** The worker is the PID 1 of its sandbox (``--as-pid-1``): there is no
  bubblewrap reaper beside it (that reaper kept the worker's stdin and stdout, and was
  dumpable: a run wrote forged answers into ``/proc/1/fd/1``). The worker is undumpable
  before it reads a request, so a run (the same user, no capability) cannot open its
  ``/proc/1/fd``, ``mem`` or ``environ``, ptrace it or take its descriptors with
  ``pidfd_getfd``; and as its namespace's init it receives no signal from inside the
  namespace that it does not handle (``SIGKILL`` and ``SIGSTOP`` included), so a run can
  neither stop nor kill it. A build keeps bubblewrap's reaper (a shell as PID 1 would
  leave zombies): it holds only ``/dev/null``, the build's own log and bubblewrap's
  eventfd (which tells bubblewrap outside the build's exit status, the build's own).
- **No keyrings** (``benchbot.sandbox.seccomp``): the keyring calls fail inside, and
  ``/proc/keys`` is masked.
- **Nothing else of the machine is there** (``fsview``), and what is writable is the
  worktree, the worker's scratch directory and the config's ``sandbox.writable``
  (where the config's ``sandbox.build_only`` names files only the build reads, the
  workers cover them and do not show the repository's .git: ``benchbot.sandbox.hidden``); the
  fork server's program, built by benchbot outside all of them, is shown read-only; what
  the config adds (``read_only``, ``writable``) is checked against the machine
  (``fsview.refusal``: no home, no runner's place, nothing only its owner may read).

Why one module of about 700 lines: the privilege line in one place, the environment's
allow-list, the mounts and the worker's start, which a security review reads together.
"""

from __future__ import annotations

import contextlib
import fnmatch
import functools
import json
import os
import resource
import select
import shutil
import subprocess
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import benchbot
from benchbot.core.errors import BenchbotError
from benchbot.sandbox import counting, forkserver, fsview, hidden, seccomp
from benchbot.sandbox.spawn import RawRun, SpawnRequest, kill_group

Mode = Literal["auto", "on", "off"]
MODES: tuple[Mode, ...] = ("auto", "on", "off")

# Passed from benchbot's own environment to the build and the workloads.
ALLOWED = (
    "PATH", "HOME", "LANG", "LANGUAGE", "TZ", "TMPDIR", "TERM", "USER", "LOGNAME",
    "CC", "CXX", "CPP", "LD", "AR", "AS", "NM", "RANLIB", "STRIP", "OBJCOPY",
    "CFLAGS", "CXXFLAGS", "CPPFLAGS", "LDFLAGS", "LDLIBS", "MAKEFLAGS",
    "PKG_CONFIG_PATH", "LIBRARY_PATH", "CPATH", "C_INCLUDE_PATH", "CPLUS_INCLUDE_PATH",
    "SOURCE_DATE_EPOCH", "RUNNER_TRACKING_ID",
)  # fmt: skip
ALLOWED_PREFIXES = ("LC_",)
# Never passed, whatever the config lists (shell-style patterns, matched case-insensitively):
# tokens and credentials, the runner's own variables, the action's inputs, and the git
# settings benchbot uses to hand a token to its own fetch.
NEVER_PASSED = (
    "*TOKEN*", "*SECRET*", "*PASSWORD*", "*PASSWD*", "*CREDENTIAL*", "*_KEY", "*APIKEY*",
    "ACTIONS_*", "INPUT_*", "GIT_CONFIG*", "GIT_ASKPASS", "SSH_AUTH_SOCK", "SSH_ASKPASS",
    "BENCHBOT_*", "RUNNER_*", "GITHUB_*",
)  # fmt: skip
# Exceptions to NEVER_PASSED: the runner's orphan cleanup finds a job's leftover processes
# by this variable (it names the job, and holds no secret).
ALWAYS_PASSED = ("RUNNER_TRACKING_ID",)

BWRAP = "bwrap"


class SandboxError(BenchbotError):
    """The sandbox was required (``sandbox: on``, or ``benchbot github``) and cannot be
    used here."""


def is_never_passed(name: str) -> bool:
    """Whether ``name`` is one no config may pass to the code under test."""
    upper = name.upper()
    if upper in ALWAYS_PASSED:
        return False
    return any(fnmatch.fnmatchcase(upper, pattern) for pattern in NEVER_PASSED)


def clean_env(
    source: Mapping[str, str],
    *,
    pass_env: Iterable[str] = (),
    extra: Iterable[tuple[str, str]] = (),
) -> dict[str, str]:
    """The environment the code under test gets: the allow-list, ``pass_env``, then ``extra``.

    ``extra`` (the config's ``env:``) is written by the repository's own config and is set
    as given; names from ``source`` pass only through the allow-list or ``pass_env``, and
    never when ``is_never_passed``.
    """
    wanted = set(ALLOWED) | set(pass_env)
    env = {
        name: value for name, value in source.items()
        if (name in wanted or name.startswith(ALLOWED_PREFIXES)) and not is_never_passed(name)
    }
    env.setdefault("PATH", os.defpath)
    env.update(extra)
    return env


@dataclass(frozen=True, slots=True)
class Probe:
    """Whether bubblewrap works on this machine, and if not, why and what to do."""

    works: bool
    path: str | None
    version: str | None
    problem: str | None = None
    fix: str | None = None


@functools.lru_cache(maxsize=1)
def probe() -> Probe:
    """Try bubblewrap once (a namespace sandbox running /bin/true) and remember the answer."""
    path = shutil.which(BWRAP)
    if path is None:
        return Probe(False, None, None, "bubblewrap (bwrap) is not installed",
                     "install it: apt-get install bubblewrap (dnf/zypper/pacman: bubblewrap)")
    version = _run([path, "--version"]).stdout.strip() or None
    fd = filter_fd()
    try:
        argv = [path, *_namespace_args(network=False, as_pid_1=True, seccomp_fd=fd),
                *_mount_args(fsview.system_view(), writable=(), network=False), "--",
                "/bin/true"]
        proc = _run(argv, pass_fds=(fd,))
    finally:
        os.close(fd)
    if proc.returncode == 0:
        return Probe(True, path, version)
    message = (proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[-1]
    return Probe(False, path, version, f"bwrap cannot make a sandbox here: {message}",
                 _namespace_fix(message))


def _run(argv: list[str], pass_fds: Sequence[int] = ()) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(argv, capture_output=True, text=True, check=False, timeout=30,
                              stdin=subprocess.DEVNULL, pass_fds=pass_fds)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return subprocess.CompletedProcess(argv, 1, "", str(exc))


def _namespace_fix(message: str) -> str:
    userns = Path("/proc/sys/kernel/unprivileged_userns_clone")
    apparmor = Path("/proc/sys/kernel/apparmor_restrict_unprivileged_userns")
    if apparmor.exists() and apparmor.read_text().strip() == "1":
        return ("AppArmor restricts unprivileged user namespaces (Ubuntu 23.10+): allow bwrap "
                "with an AppArmor profile for /usr/bin/bwrap, or "
                "sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0")
    if userns.exists() and userns.read_text().strip() == "0":
        return "unprivileged user namespaces are off: sudo sysctl -w kernel.unprivileged_userns_clone=1"
    if "max_user_namespaces" in message or "No space left" in message:
        return "user namespaces are limited: sudo sysctl -w user.max_user_namespaces=15000"
    return ("allow unprivileged user namespaces (in a container: run it with a seccomp profile "
            "that permits them, e.g. --security-opt seccomp=unconfined)")


def _namespace_args(*, network: bool, as_pid_1: bool, seccomp_fd: int) -> list[str]:
    """The namespaces, capabilities and filter; ``as_pid_1``: the command is its PID
    namespace's init, with no bubblewrap reaper beside it (the module's docstring)."""
    args = ["--die-with-parent", "--new-session", "--cap-drop", "ALL",
            "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
            "--seccomp", str(seccomp_fd)]
    if as_pid_1:
        args.append("--as-pid-1")
    if not network:
        args.append("--unshare-net")
    return args


# Masked in the sandbox's /proc: the keys a process may view, by serial and description
# (the keyring calls themselves fail: benchbot.sandbox.seccomp). bubblewrap binds them nodev, so
# /dev/null there cannot even be opened.
PROC_MASKED = ("/proc/keys", "/proc/key-users")
# Read-only in the sandbox's /proc. bubblewrap covers /proc/sys only where it finds the
# directory writable, and it is not (0555) while its files are: as root, even without
# any capability and in a user namespace of its own, a process could set the host's
# sysctls (kernel.core_pattern runs a program as root at the next crash). The
# enumeration test found it.
PROC_READ_ONLY = ("/proc/sys",)


def filter_fd() -> int:
    """A fresh descriptor holding the seccomp filter (``benchbot.sandbox.seccomp``), at its start,
    for one ``bwrap --seccomp`` to read; the caller passes it on and closes it."""
    fd = os.memfd_create("benchbot-seccomp", os.MFD_CLOEXEC)
    try:
        os.write(fd, seccomp.program())
        os.lseek(fd, 0, os.SEEK_SET)
    except BaseException:
        os.close(fd)
        raise
    return fd


# One mount of the sandbox: its destination, its rank among mounts of equal depth
# (later ranks win), and its bwrap arguments.
_Mount = tuple[str, int, tuple[str, ...]]


def _mount_args(view: fsview.View, *, writable: Sequence[Path], network: bool,
                git_dir: Path | None = None, git_config: Path | None = None,
                read_only: Sequence[Path] = (), masked: Sequence[str] = ()) -> list[str]:
    """bwrap's mount arguments for ``view`` and the writable places, parents before what
    is mounted inside them (bubblewrap applies them in order; a later one covers);
    ``masked`` files (in the writable places: ``benchbot.sandbox.hidden``) become /dev/null, and
    a masked directory (a trailing ``/``) an empty one."""
    mounts: list[_Mount] = [("/dev", 0, ("--dev", "/dev")), ("/proc", 0, ("--proc", "/proc"))]
    mounts += [(path, 2, ("--ro-bind", "/dev/null", path)) for path in PROC_MASKED]
    mounts += [(path, 2, ("--ro-bind", path, path)) for path in PROC_READ_ONLY]
    mounts += [(path, 0, ("--symlink", target, path)) for target, path in view.symlinks]
    mounts += [(path, 0, ("--tmpfs", path)) for path in view.empty]
    mounts += [(dest, 1, ("--ro-bind", src, dest)) for src, dest in view.read_only]
    mounts += [(path, 2, ("--ro-bind", "/dev/null", path)) for path in view.masked_files]
    mounts += [(path, 2, ("--tmpfs", path)) for path in view.masked_dirs]
    if network:  # name resolution, where /etc/resolv.conf points into /run
        resolv = os.path.realpath("/etc/resolv.conf")
        if os.path.isfile(resolv) and not view.shows(resolv):
            mounts.append((resolv, 1, ("--ro-bind", resolv, resolv)))
    if git_dir is not None and git_dir.is_dir():
        mounts.append((str(git_dir), 1, ("--ro-bind", str(git_dir), str(git_dir))))
        if git_config is not None:
            config = str(git_dir / "config")
            mounts.append((config, 2, ("--ro-bind", str(git_config), config)))
        # Submodules' own configs: actions/checkout leaves its token header there too
        # when credentials persist. The worktrees do not use them.
        if (git_dir / "modules").is_dir():
            modules = str(git_dir / "modules")
            mounts.append((modules, 2, ("--tmpfs", modules)))
    mounts += [(str(p), 3, ("--bind", str(p), str(p))) for p in writable]
    mounts += [(str(p), 4, ("--ro-bind", str(p), str(p))) for p in read_only]
    mounts += [(p.rstrip("/"), 5, ("--tmpfs", p.rstrip("/")) if p.endswith("/")
                else ("--ro-bind", "/dev/null", p)) for p in masked]
    mounts.sort(key=lambda m: (len(Path(m[0]).parts), m[1]))
    return [arg for _, _, args in mounts for arg in args]


@dataclass(frozen=True, slots=True, kw_only=True)
class Sandbox:
    """How the code under test is confined in one comparison.

    ``kind`` "none" runs it directly (with the clean environment only); "bubblewrap"
    wraps the build and the measuring worker with ``wrap``, showing them ``view``.
    """

    kind: Literal["bubblewrap", "none"]
    description: str  # one line for the report
    bwrap: str | None = None
    view: fsview.View | None = None
    home: str = "/nonexistent"

    @property
    def active(self) -> bool:
        """Whether the code under test runs inside bubblewrap."""
        return self.kind == "bubblewrap"

    def wrap(self, argv: Sequence[str], *, cwd: Path, writable: Sequence[Path],
             network: bool, seccomp_fd: int, git_dir: Path | None = None,
             git_config: Path | None = None, as_pid_1: bool = False,
             read_only: Sequence[Path] = (), masked: Sequence[str] = ()) -> list[str]:
        """The bwrap command line that runs ``argv`` in ``cwd`` inside the sandbox: the
        view read-only, ``writable`` writable, the repository's git directory read-only
        with ``git_config`` as its config, ``read_only`` (files or directories outside
        the view) read-only over everything, and the host's network only if ``network``.
        ``seccomp_fd`` is a ``filter_fd()`` that the command must inherit; ``as_pid_1``
        makes ``argv`` its PID namespace's init (the measuring worker); ``masked`` files
        cannot be opened there (``benchbot.sandbox.hidden``)."""
        if self.bwrap is None or self.view is None:
            return list(argv)
        return [self.bwrap, *_namespace_args(network=network, as_pid_1=as_pid_1,
                                             seccomp_fd=seccomp_fd),
                *_mount_args(self.view, writable=writable, network=network, git_dir=git_dir,
                             git_config=git_config, read_only=read_only, masked=masked),
                "--remount-ro", "/", "--chdir", str(cwd), "--", *argv]

    def adjust_env(self, env: Mapping[str, str]) -> dict[str, str]:
        """The environment as the sandbox sees it: an empty home, /tmp for temporary files."""
        if not self.active:
            return dict(env)
        return {**env, "HOME": self.home, "TMPDIR": "/tmp"}

    def tool_notes(self, env: Mapping[str, str]) -> list[str]:
        """One line per hidden directory that a tool on ``env``'s PATH leads into (none
        without the sandbox)."""
        if self.view is None:
            return []
        return fsview.notes(fsview.hidden_tools(self.view, env))


def choose(mode: Mode, *, source: Mapping[str, str] | None = None,
           read_only: Sequence[str] = (), require: bool = False) -> Sandbox:
    """The sandbox for ``mode``: ``on`` needs bubblewrap, ``auto`` uses it when it works
    (and with ``require``, as under ``benchbot github``, refuses to go on without it)."""
    if mode == "off":
        return Sandbox(kind="none", description="off (sandbox: off in the config)")
    found = probe()
    if not found.works:
        if mode == "on":
            raise SandboxError(
                f"sandbox: on, but {found.problem}; {found.fix} (benchbot doctor checks this)"
            )
        if require:
            raise SandboxError(
                f"sandbox: auto, but {found.problem}, and a pull request's code is not run "
                f"unconfined: {found.fix}; or set sandbox: off in the config to run it "
                "without the sandbox on purpose (benchbot doctor checks this)"
            )
        return Sandbox(kind="none", description=f"none: {found.problem} (sandbox: auto)")
    env = os.environ if source is None else source
    version = f" {found.version.split()[-1]}" if found.version else ""
    return Sandbox(
        kind="bubblewrap", bwrap=found.path, view=fsview.allowed(env, read_only),
        home=fsview.home_of(env),
        description=f"bubblewrap{version}: own PID, mount and network namespaces; only the "
        "system, the toolchains on PATH and benchbot itself visible (read-only); only the "
        "worktrees writable",
    )


def sanitized_git_config(git_dir: Path, into: Path) -> Path:
    """A copy of the repository's git config with only ``core.*`` and ``extensions.*``
    keys: no remote URLs with credentials, no ``http.*.extraheader`` (where
    actions/checkout leaves its token when credentials persist), no includes.

    git reads the config (one process) and the copy is written here: a ``git config``
    per key cost 13 ms each, and every comparison in the sandbox makes one."""
    proc = subprocess.run(
        ["git", "config", "--file", str(git_dir / "config"), "--list", "-z"],
        capture_output=True, check=False,
    )
    lines = []
    for entry in proc.stdout.decode(errors="replace").split("\0"):
        key, valued, value = entry.partition("\n")  # no newline: a bare key (true)
        if key.startswith(("core.", "extensions.")):
            section, _, rest = key.partition(".")
            sub, _, name = rest.rpartition(".")
            head = f"[{section} {_quoted(sub)}]" if sub else f"[{section}]"
            lines += [head, f"\t{name} = {_quoted(value)}" if valued else f"\t{name}"]
    into.write_text("".join(line + "\n" for line in lines))
    return into


def _quoted(text: str) -> str:
    """``text`` as a double-quoted git config string (a value or a subsection name)."""
    escaped = (text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
               .replace("\t", "\\t").replace("\b", "\\b"))
    return f'"{escaped}"'


def _refuse_shown_git(box: Sandbox, writable: Sequence[Path], git_dir: Path | None) -> None:
    """SandboxError where ``sandbox.build_only`` cannot hold: the view or ``writable``
    shows the repository's .git (its objects hold the hidden files) by a directory that
    holds it or lies in it."""
    if git_dir is None:
        return
    real = os.path.realpath(git_dir)
    shown = [src for src, _ in (box.view.read_only if box.view else ())] + [str(p) for p in writable]
    for path in shown:
        other = os.path.realpath(path)
        if os.path.commonpath([real, other]) in (real, other):  # one holds the other
            raise SandboxError(f"sandbox.build_only: the sandbox shows {path}, and with it the "
                               f"repository's {git_dir}, whose objects hold the files it hides: "
                               "list a directory outside the repository")


_BOOT = ("import sys; sys.path.insert(0, sys.argv.pop(1)); "
         "from benchbot.sandbox.worker import leave, main; leave(main())")


@dataclass(frozen=True, slots=True)
class Confinement:
    """How a measuring worker confines its runs: the directories they may write (its
    place, and the config's ``sandbox.writable``), the repository's git directory and
    config they are shown, and the files they cannot open (``sandbox.build_only``)."""

    writable: tuple[Path, ...] = ()
    git_dir: Path | None = None
    git_config: Path | None = None
    masked: tuple[str, ...] = ()


class WorkerSpawner:
    """A ``Spawner`` whose runs are made by ``benchbot.sandbox.worker`` inside the sandbox: one
    worker for each place (each arm's worktree, and the copy of base's built tree that
    base again runs from), in a sandbox of its own where that place, the worker's
    scratch directory and ``writable`` are the only writable directories and the other
    places are not bound at all. A run goes to the worker of the place that holds its
    working directory; the workers hand the turn to each other directly (the worker
    module says how, and why). ``perf_events`` names the
    events the workers count with (``counting.EVENT_NAMES``; tests: "software-test").

    Making one starts the workers and returns at once: their start-up (bwrap and a Python,
    about 50 ms) overlaps whatever comes next (the builds); ``ready`` waits for them, and
    the first run does if nobody did.
    """

    def __init__(self, sandbox: Sandbox, scratch: Path, env: Mapping[str, str], *,
                 places: Sequence[Path], writable: Sequence[Path] = (),
                 git_dir: Path | None = None, git_config: Path | None = None,
                 perf_events: str = "hardware", build_only: Sequence[str] = ()) -> None:
        if len(places) not in (1, 2, 3):
            raise ValueError(f"one to three places to measure in, not {len(places)}")
        # sandbox.build_only: each place's files it names cannot be opened by a run, nor
        # the repository's .git (benchbot.sandbox.hidden); found now, so after the build.
        try:
            masked = [[f"{place}/{rel}" for rel in hidden.files(Path(place), build_only)]
                      for place in places]
        except hidden.TooMany as exc:
            raise SandboxError(str(exc)) from None
        if build_only:
            _refuse_shown_git(sandbox, writable, git_dir)
            git_dir = git_config = None
        self._places = [Path(p) for p in places]
        self._owners: dict[str, int] = {}  # a run's directory -> its worker
        self._confined = [Confinement(writable=(place, *map(Path, writable)), git_dir=git_dir,
                                      git_config=git_config, masked=tuple(m))
                          for place, m in zip(self._places, masked, strict=True)]
        package_parent = str(Path(benchbot.__file__).resolve().parent.parent)
        # The fork server's program, built here, outside every place a run may write, and
        # shown to the workers read-only: a run can neither replace it nor plant one.
        program = _fork_server_program(scratch / "forkserver")
        server = ([f"--fork-server={program}"] if program is not None else ["--no-fork-server"])
        turns = _turn_pipes(len(places))
        self._workers: list[_Worker] = []
        try:
            for index, (place, fds) in enumerate(zip(self._places, turns, strict=True)):
                work = scratch / f"worker-{index}"
                work.mkdir(exist_ok=True)
                # A mount of its own for valgrind's files (counting.ValgrindPlace).
                counted = work / counting.VALGRIND_ROOT
                counted.mkdir(mode=0o700, exist_ok=True)
                events = [] if perf_events == "hardware" else [f"--perf-events={perf_events}"]
                filter_prog = filter_fd()
                try:
                    argv = sandbox.wrap(
                        [sys.executable, "-I", "-S", "-c", _BOOT, package_parent, *events,
                         *server, str(work),
                         *(f"{peer}:{take}:{give}" for peer, take, give in fds)],
                        cwd=work, writable=[place, work, counted, *writable], network=False,
                        git_dir=git_dir, git_config=git_config, seccomp_fd=filter_prog,
                        as_pid_1=True,
                        read_only=[program.parent] if program is not None else [],
                        masked=masked[index],
                    )
                    self._workers.append(_Worker(
                        argv, sandbox.adjust_env(env), scratch / f"worker-{index}.log",
                        (*(fd for _, take, give in fds for fd in (take, give)), filter_prog)))
                finally:
                    os.close(filter_prog)  # bwrap read it
        finally:
            for fds in turns:  # the workers hold them now; a worker's end is its peers' EOF
                for _, take, give in fds:
                    os.close(take)
                    os.close(give)
        self._ready = False
        self._reaped_cpu_s = 0.0  # what reaping the workers added to this process's children's time

    def ready(self) -> None:
        """Wait until the workers have started (SandboxError with the last words of one that died)."""
        if not self._ready:
            for worker in self._workers:
                worker.expect("ready")
            self._ready = True

    def spawn(self, request: SpawnRequest) -> RawRun:
        """Send one run to its worker and wait for its timings."""
        return self.spawn_many([request])[0]

    def spawn_many(self, requests: Sequence[SpawnRequest]) -> list[RawRun]:
        """Send runs in one exchange; their timings, up to and including the first run that
        failed (``spawn.in_turn``)."""
        return self.spawn_groups([requests], [""])[0] if requests else []

    def spawn_groups(self, groups: Sequence[Sequence[SpawnRequest]],
                     keys: Sequence[str]) -> list[list[RawRun]]:
        """Send groups of runs in one exchange with each worker that makes some of them;
        their timings as ``spawn.in_groups`` gives them."""
        owners = [[self._owner(r.cwd) for r in group] for group in groups]
        first = next((o for group in owners for o in group), None)
        if first is None:
            return [[] for _ in groups]
        self.ready()
        taking = sorted({o for group in owners for o in group}, key=lambda i: i == first)
        for index in taking:  # the worker that makes the first run is told last
            self._workers[index].send(_request_line(groups, owners, keys, index))
        answers: dict[int, object] = {}
        for index in sorted(taking):
            # A worker whose peer stopped says so; reading the peer then says why.
            message = self._workers[index].expect("groups", unless="peer_gone")
            if "groups" in message:
                answers[index] = message["groups"]
        if len(answers) < len(taking):
            raise SandboxError("the measuring workers each said that the other one stopped")
        return _merged(groups, owners, answers)

    def confinement(self, cwd: str) -> Confinement:
        """How the worker whose place holds ``cwd`` confines its runs (the worker's own
        scratch directory aside), for a run made beside it to be confined the same
        (benchbot.profiles.timing: the time profile's runs)."""
        return self._confined[self._owner(cwd)]

    def _owner(self, cwd: str) -> int:
        """The worker whose place holds ``cwd`` (remembered: a workload's runs share one)."""
        owner = self._owners.get(cwd)
        if owner is None:
            found = [i for i, place in enumerate(self._places) if Path(cwd).is_relative_to(place)]
            if not found:
                raise SandboxError(f"a run's directory {cwd} is in none of the places measured in")
            owner = self._owners[cwd] = found[0]
        return owner

    @property
    def unreaped_cpu_s(self) -> float:
        """CPU time of the workers and their runs that reaping them did not add to this
        process's children's time (after ``close``). bubblewrap's PID namespace does not
        pass it up (0.8.0: none of it arrives), so without this the runs would count as
        other processes' work and every sandboxed comparison would warn of a busy machine."""
        return max(0.0, sum(w.cpu_s for w in self._workers) - self._reaped_cpu_s)

    @property
    def maxrss_floor_kib(self) -> int:
        """The larger of the workers' own peak RSS: no run's peak reads below it (see
        ``machine.own_peak_rss_kib``), so a peak near it hides the run's own."""
        return max((w.maxrss_kib for w in self._workers), default=0)

    def close(self) -> None:
        """Stop the workers (closing their input ends them; each sandbox dies with its worker)."""
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        before = children.ru_utime + children.ru_stime
        for worker in self._workers:  # all at once: one may wait for the other's turn
            worker.end_input()
        for worker in self._workers:
            worker.close()
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        self._reaped_cpu_s += children.ru_utime + children.ru_stime - before


def _fork_server_program(into: Path) -> Path | None:
    """The fork server built into ``into`` (None where it cannot be: the workers then start
    the runs themselves, and ``benchbot doctor`` says why)."""
    into.mkdir(exist_ok=True)
    try:
        return forkserver.copy_into(into)  # a file of this comparison's own
    except forkserver.ForkServerError:
        return None


def _turn_pipes(count: int) -> list[list[tuple[int, int, int]]]:
    """Each worker's (peer, take, give) for every other worker: the ends of a pipe from
    that peer and of one to it, over which the two hand each other the turn; nothing for
    a worker alone."""
    pipes = {(i, j): os.pipe() for i in range(count) for j in range(count) if i != j}
    return [[(j, pipes[(j, i)][0], pipes[(i, j)][1]) for j in range(count) if j != i]
            for i in range(count)]


class _Worker:
    """One ``benchbot.sandbox.worker`` in its sandbox, and the pipes benchbot talks to it over."""

    def __init__(self, argv: list[str], env: Mapping[str, str], log: Path,
                 pass_fds: Sequence[int]) -> None:
        self._log = open(log, "w+b")  # closed in close()
        self._proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._log,
            env=dict(env), start_new_session=True, text=True, bufsize=1, pass_fds=pass_fds,
        )
        self.cpu_s = 0.0  # the worker's and its runs' CPU time, as it last reported it
        self.maxrss_kib = 0  # the worker's own peak RSS, as it last reported it

    def send(self, line: str) -> None:
        """Write one request line (a worker that is gone says why in ``expect``)."""
        assert self._proc.stdin is not None
        try:
            self._proc.stdin.write(line)
            self._proc.stdin.flush()
        except BrokenPipeError:
            pass

    def expect(self, key: str, *, unless: str | None = None) -> dict[str, Any]:
        """The worker's next answer, which must hold ``key`` (or ``unless``: the other
        worker stopped, whose own answer says why); SandboxError with what it answered
        otherwise, or with its last words when it stopped."""
        assert self._proc.stdout is not None
        line = self._proc.stdout.readline()
        if not line:
            self._log.seek(0)
            why = self._log.read().decode(errors="replace").strip().splitlines()
            raise SandboxError(
                "the measuring worker in the sandbox stopped: "
                + (why[-1] if why else f"exit {self._proc.poll()}")
            )
        try:
            message = json.loads(line)
        except ValueError:
            raise SandboxError(f"the measuring worker answered a line that is not JSON: "
                               f"{line[:120]!r}") from None
        if isinstance(message, dict) and unless is not None and message.get(unless):
            return {}
        if not isinstance(message, dict) or key not in message:
            raise SandboxError(f"the measuring worker answered {str(message)[:200]} "
                               f"where {key!r} was expected")
        cpu = message.get("cpu_s")
        if isinstance(cpu, (int, float)):
            self.cpu_s = float(cpu)
        peak = message.get("maxrss_kib")
        if isinstance(peak, int):
            self.maxrss_kib = max(self.maxrss_kib, peak)
        return message

    def end_input(self) -> None:
        """Close the worker's input: it ends once its batch is over."""
        if self._proc.stdin is not None and not self._proc.stdin.closed:
            with contextlib.suppress(OSError):
                self._proc.stdin.close()

    def close(self) -> None:
        """Wait for the worker to end (kill its sandbox after 10 s) and close its pipes."""
        self.end_input()
        if self._proc.poll() is None:
            with contextlib.suppress(OSError, subprocess.TimeoutExpired):
                wait_child(self._proc, timeout_s=10)
        if self._proc.poll() is None:
            kill_group(self._proc.pid)
            self._proc.wait()
        if self._proc.stdout is not None and not self._proc.stdout.closed:
            with contextlib.suppress(OSError):
                self._proc.stdout.close()
        self._log.close()


def _request_line(groups: Sequence[Sequence[SpawnRequest]], owners: Sequence[Sequence[int]],
                  keys: Sequence[str], index: int) -> str:
    """The batch as worker ``index`` is sent it: its own requests, and for another's run
    the number of the worker that makes it."""
    shown = [[r.to_json() if o == index else o for r, o in zip(g, og, strict=True)]
             for g, og in zip(groups, owners, strict=True)]
    return json.dumps({"groups": shown, "keys": list(keys)}) + "\n"


def _merged(groups: Sequence[Sequence[SpawnRequest]], owners: Sequence[Sequence[int]],
            answers: Mapping[int, object]) -> list[list[RawRun]]:
    """The batch's runs, each taken from the answer of the worker that made it; a
    SandboxError naming the problem when an answer is not what was asked (another count
    of groups or runs, another shape, a run that is not one)."""
    given = {index: _groups_of(answer, len(groups)) for index, answer in answers.items()}
    out: list[list[RawRun]] = []
    for g, (group, owned) in enumerate(zip(groups, owners, strict=True)):
        counts = {len(answer[g]) for answer in given.values()}
        if len(counts) != 1 or max(counts) > len(group):
            raise SandboxError(f"the measuring workers answered {sorted(counts)} runs for a "
                               f"group of {len(group)}")
        runs = []
        for j in range(counts.pop()):
            made = [given[index][g][j] for index in given]
            if sum(entry is not None for entry in made) != 1 or given[owned[j]][g][j] is None:
                raise SandboxError("the measuring workers' answers disagree on who made a run")
            runs.append(_raw_run(given[owned[j]][g][j]))
        out.append(runs)
    return out


def _groups_of(answer: object, count: int) -> list[list[object]]:
    """A worker's answer as ``count`` groups of entries (SandboxError if it is not one)."""
    if not isinstance(answer, list) or not all(isinstance(g, list) for g in answer):
        raise SandboxError(f"the measuring worker answered {str(answer)[:120]} where a list "
                           "of groups was expected")
    if len(answer) != count:
        raise SandboxError(f"the measuring worker answered {len(answer)} groups for a batch "
                           f"of {count}")
    return answer


def _raw_run(entry: object) -> RawRun:
    try:
        if not isinstance(entry, dict):
            raise TypeError(f"{str(entry)[:80]} is not an object")
        return RawRun.from_json(entry)
    except (KeyError, TypeError, ValueError) as exc:
        raise SandboxError(f"the measuring worker answered a run that is not one: {exc}") from None


def wait_child(proc: subprocess.Popen[Any], *, timeout_s: float) -> int:
    """``proc.wait(timeout_s)``, woken by the exit itself: a poll on the child's pidfd.
    (Python 3.11's wait with a timeout sleeps between its checks for 0.5, 1, 2, 4, 8 ms
    and so on, and so saw the worker end up to 8 ms after it did.)"""
    try:
        fd = os.pidfd_open(proc.pid)
    except OSError:  # no pidfd on this kernel
        return proc.wait(timeout_s)
    try:
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        if not poller.poll(timeout_s * 1000):
            raise subprocess.TimeoutExpired(proc.args, timeout_s)
    finally:
        os.close(fd)
    return proc.wait()
