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
   one worker (``benchbot.worker``) is started inside the sandbox per comparison and
   spawns and times the runs there, so that the floor of timing does not move.
"""

from __future__ import annotations

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
from typing import IO, Any, Literal

import benchbot
from benchbot import fsview
from benchbot.errors import BenchbotError
from benchbot.spawn import RawRun, SpawnRequest, kill_group

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
    argv = [path, *_namespace_args(network=False),
            *_mount_args(fsview.system_view(), writable=(), network=False), "--", "/bin/true"]
    proc = _run(argv)
    if proc.returncode == 0:
        return Probe(True, path, version)
    message = (proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[-1]
    return Probe(False, path, version, f"bwrap cannot make a sandbox here: {message}",
                 _namespace_fix(message))


def _run(argv: list[str]) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(argv, capture_output=True, text=True, check=False, timeout=30,
                              stdin=subprocess.DEVNULL)
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


def _namespace_args(*, network: bool) -> list[str]:
    args = ["--die-with-parent", "--new-session", "--cap-drop", "ALL",
            "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
    if not network:
        args.append("--unshare-net")
    return args


# One mount of the sandbox: its destination, its rank among mounts of equal depth
# (later ranks win), and its bwrap arguments.
_Mount = tuple[str, int, tuple[str, ...]]


def _mount_args(view: fsview.View, *, writable: Sequence[Path], network: bool,
                git_dir: Path | None = None, git_config: Path | None = None) -> list[str]:
    """bwrap's mount arguments for ``view`` and the writable places, parents before what
    is mounted inside them (bubblewrap applies them in order; a later one covers)."""
    mounts: list[_Mount] = [("/dev", 0, ("--dev", "/dev")), ("/proc", 0, ("--proc", "/proc"))]
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
             network: bool, git_dir: Path | None = None,
             git_config: Path | None = None) -> list[str]:
        """The bwrap command line that runs ``argv`` in ``cwd`` inside the sandbox: the
        view read-only, ``writable`` writable, the repository's git directory read-only
        with ``git_config`` as its config, and the host's network only if ``network``."""
        if self.bwrap is None or self.view is None:
            return list(argv)
        return [self.bwrap, *_namespace_args(network=network),
                *_mount_args(self.view, writable=writable, network=network, git_dir=git_dir,
                             git_config=git_config),
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


class WorkerSpawner:
    """A ``Spawner`` whose runs are made by ``benchbot.worker`` inside the sandbox.

    Making one starts the worker and returns at once: its start-up (bwrap and a Python,
    about 50 ms) overlaps whatever comes next (the builds); ``ready`` waits for it, and
    the first run does if nobody did.
    """

    def __init__(self, sandbox: Sandbox, scratch: Path, env: Mapping[str, str], *,
                 writable: Sequence[Path], git_dir: Path | None = None,
                 git_config: Path | None = None) -> None:
        work = scratch / "worker"
        work.mkdir(exist_ok=True)
        boot = (
            "import sys; sys.path.insert(0, sys.argv.pop(1)); "
            "from benchbot.worker import leave, main; leave(main())"
        )
        package_parent = str(Path(benchbot.__file__).resolve().parent.parent)
        argv = sandbox.wrap(
            [sys.executable, "-I", "-S", "-c", boot, package_parent, str(work)],
            cwd=scratch, writable=writable, network=False, git_dir=git_dir,
            git_config=git_config,
        )
        self._log = open(scratch / "worker.log", "w+b")  # closed in close()
        self._proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._log,
            env=dict(sandbox.adjust_env(env)), start_new_session=True, text=True, bufsize=1,
        )
        self._ready = False
        self._worker_cpu_s = 0.0  # as the worker last reported it
        self._reaped_cpu_s = 0.0  # what reaping it added to this process's children's time

    def ready(self) -> None:
        """Wait until the worker has started (SandboxError with its last words if it died)."""
        if not self._ready:
            self._expect("ready")
            self._ready = True

    def _io(self) -> tuple[IO[str], IO[str]]:
        assert self._proc.stdin is not None and self._proc.stdout is not None
        return self._proc.stdin, self._proc.stdout

    def _expect(self, key: str) -> dict[str, object]:
        _, out = self._io()
        line = out.readline()
        if not line:
            self._log.seek(0)
            why = self._log.read().decode(errors="replace").strip().splitlines()
            self.close()
            raise SandboxError(
                "the measuring worker in the sandbox stopped: "
                + (why[-1] if why else f"exit {self._proc.poll()}")
            )
        message = json.loads(line)
        if key not in message:
            raise SandboxError(f"the measuring worker answered {str(message)[:200]}")
        return dict(message)

    def spawn(self, request: SpawnRequest) -> RawRun:
        """Send one run to the worker and wait for its timings."""
        return self.spawn_many([request])[0]

    def spawn_many(self, requests: Sequence[SpawnRequest]) -> list[RawRun]:
        """Send runs to the worker in one exchange; their timings, up to and including
        the first run that failed (``spawn.in_turn``)."""
        return self.spawn_groups([requests], [""])[0] if requests else []

    def spawn_groups(self, groups: Sequence[Sequence[SpawnRequest]],
                     keys: Sequence[str]) -> list[list[RawRun]]:
        """Send groups of runs to the worker in one exchange; their timings as
        ``spawn.in_groups`` gives them."""
        if not groups:
            return []
        self.ready()
        stdin, _ = self._io()
        try:
            stdin.write(json.dumps({"groups": [[r.to_json() for r in g] for g in groups],
                                    "keys": list(keys)}) + "\n")
            stdin.flush()
        except BrokenPipeError:
            pass  # the worker is gone: _expect reads nothing and says why
        message = self._expect("groups")
        answer = message["groups"]
        assert isinstance(answer, list) and len(answer) == len(groups)
        cpu = message.get("cpu_s")
        if isinstance(cpu, (int, float)):
            self._worker_cpu_s = float(cpu)
        return [[RawRun.from_json(run) for run in runs] for runs in answer]

    @property
    def unreaped_cpu_s(self) -> float:
        """CPU time of the worker and its runs that reaping it did not add to this
        process's children's time (after ``close``). bubblewrap's PID namespace does not
        pass it up (0.8.0: none of it arrives), so without this the runs would count as
        other processes' work and every sandboxed comparison would warn of a busy machine."""
        return max(0.0, self._worker_cpu_s - self._reaped_cpu_s)

    def close(self) -> None:
        """Stop the worker (closing its input ends it; the sandbox dies with it)."""
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        before = children.ru_utime + children.ru_stime
        self._close()
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        self._reaped_cpu_s += children.ru_utime + children.ru_stime - before

    def _close(self) -> None:
        if self._proc.poll() is None:
            try:
                if self._proc.stdin is not None:
                    self._proc.stdin.close()
                wait_child(self._proc, timeout_s=10)
            except (OSError, subprocess.TimeoutExpired):
                pass
        if self._proc.poll() is None:
            kill_group(self._proc.pid)
            self._proc.wait()
        for stream in (self._proc.stdout, self._proc.stdin):
            if stream is not None and not stream.closed:
                try:
                    stream.close()
                except OSError:
                    pass
        self._log.close()


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
