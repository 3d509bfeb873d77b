"""Where the privilege line is drawn: the code under test gets no secrets and, with
bubblewrap, no view of the machine beyond what it needs.

benchbot holds a token (on GitHub) and builds and runs code from pull requests. Two
measures keep the second away from the first:

1. **An environment made from an allow-list** (``clean_env``): PATH, HOME, the locale,
   TMPDIR, the usual compiler variables, the config's ``env:`` and the names its
   ``pass_env:`` lists. Names that carry credentials (``NEVER_PASSED``) are never passed,
   even when listed; the config refuses to list them.
2. **A sandbox** (``Sandbox``): with bubblewrap (``bwrap``, the sandbox Flatpak uses)
   the build and the measuring run in their own PID namespace and ``/proc`` (benchbot's
   own process, and the step's shell, cannot be seen), with the home directories, the
   runner's directory, ``/tmp`` and ``/run`` replaced by empty file systems, the rest of
   the file system read-only, and only the comparison's scratch directory (the
   worktrees) writable. Measuring also gets its own network namespace (loopback only).
   Every run is *not* wrapped: ``bwrap`` costs about 5 ms a start, so one worker
   (``benchbot.worker``) is started inside the sandbox per comparison and spawns and
   times the runs there, so that the floor of timing does not move.
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
    "SOURCE_DATE_EPOCH",
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

BWRAP = "bwrap"
# Files that hold secrets readable by their owner; replaced by /dev/null in the sandbox
# (when benchbot runs as root, the sandboxed process is uid 0 too).
_SECRET_FILES = ("/etc/shadow", "/etc/gshadow", "/etc/sudoers")
_SECRET_DIRS = ("/etc/ssh", "/etc/sudoers.d")
_ALWAYS_HIDDEN = ("/home", "/root", "/tmp", "/var/tmp", "/run", "/var/run", "/mnt", "/media")


class SandboxError(BenchbotError):
    """The sandbox was required (``sandbox: on``) and cannot be used here."""


def is_never_passed(name: str) -> bool:
    """Whether ``name`` is one no config may pass to the code under test."""
    upper = name.upper()
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
    proc = _run([path, *_base_args(network=False), "--", "/bin/true"])
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
            "that permits them, e.g. --security-opt seccomp=unconfined), or set sandbox: off")


def _base_args(*, network: bool) -> list[str]:
    args = [
        "--die-with-parent", "--new-session", "--cap-drop", "ALL",
        "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
        "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
    ]
    if not network:
        args.append("--unshare-net")
    return args


@dataclass(frozen=True, slots=True, kw_only=True)
class Sandbox:
    """How the code under test is confined in one comparison.

    ``kind`` "none" runs it directly (with the clean environment only); "bubblewrap"
    wraps the build and the measuring worker with ``wrap``.
    """

    kind: Literal["bubblewrap", "none"]
    description: str  # one line for the report
    bwrap: str | None = None
    hidden: tuple[str, ...] = ()
    visible: tuple[str, ...] = ()  # read-only again inside hidden directories
    home: str = "/nonexistent"

    @property
    def active(self) -> bool:
        """Whether the code under test runs inside bubblewrap."""
        return self.kind == "bubblewrap"

    def wrap(self, argv: Sequence[str], *, cwd: Path, writable: Sequence[Path],
             network: bool, git_dir: Path | None = None,
             git_config: Path | None = None) -> list[str]:
        """The bwrap command line that runs ``argv`` in ``cwd`` inside the sandbox."""
        if self.bwrap is None:
            return list(argv)
        args = [self.bwrap, *_base_args(network=network)]
        for path in self.hidden:
            args += ["--tmpfs", path]
        for path in _SECRET_FILES:
            if os.path.isfile(path):
                args += ["--ro-bind", "/dev/null", path]
        for path in _SECRET_DIRS:
            if os.path.isdir(path):
                args += ["--tmpfs", path]
        for path in self.visible:
            args += ["--ro-bind", path, path]
        if git_dir is not None and git_dir.is_dir():
            args += ["--ro-bind", str(git_dir), str(git_dir)]
            if git_config is not None:
                args += ["--ro-bind", str(git_config), str(git_dir / "config")]
        for place in writable:
            args += ["--bind", str(place), str(place)]
        args += ["--chdir", str(cwd), "--", *argv]
        return args

    def adjust_env(self, env: Mapping[str, str]) -> dict[str, str]:
        """The environment as the sandbox sees it: an empty home, /tmp for temporary files."""
        if not self.active:
            return dict(env)
        return {**env, "HOME": self.home, "TMPDIR": "/tmp"}


def choose(mode: Mode, *, source: Mapping[str, str] | None = None,
           read_only: Sequence[str] = ()) -> Sandbox:
    """The sandbox for ``mode``: ``on`` needs bubblewrap, ``auto`` uses it when it works."""
    if mode == "off":
        return Sandbox(kind="none", description="off (sandbox: off in the config)")
    found = probe()
    if not found.works:
        if mode == "on":
            raise SandboxError(
                f"sandbox: on, but {found.problem}; {found.fix} (benchbot doctor checks this)"
            )
        return Sandbox(kind="none", description=f"none: {found.problem} (sandbox: auto)")
    env = os.environ if source is None else source
    hidden = hidden_paths(env)
    visible = _reexposed(hidden, env, read_only)
    version = f" {found.version.split()[-1]}" if found.version else ""
    return Sandbox(
        kind="bubblewrap", bwrap=found.path, hidden=hidden, visible=visible,
        home=_home(env),
        description=f"bubblewrap{version}: own PID, mount and network namespaces; home and "
        "runner directories hidden; only the worktrees writable",
    )


def _home(env: Mapping[str, str]) -> str:
    return env.get("HOME") or os.path.expanduser("~")


def hidden_paths(env: Mapping[str, str]) -> tuple[str, ...]:
    """Directories replaced by empty ones in the sandbox: homes, temporary and runtime
    directories, and the GitHub Actions runner's directories (``.credentials``, other
    jobs' work, the job's temporary files)."""
    found: list[str] = list(_ALWAYS_HIDDEN)
    found.append(_home(env))
    for name in ("RUNNER_TEMP", "RUNNER_WORKSPACE", "GITHUB_WORKSPACE", "RUNNER_TOOL_CACHE"):
        value = env.get(name)
        if value:
            found.append(value)
            root = _runner_root(value)
            if root:
                found.append(root)
    real = [os.path.realpath(p) for p in found if p and os.path.isabs(p)]
    existing = sorted({p for p in real if os.path.isdir(p) and p != "/"})
    # A directory inside another hidden one is hidden with it; tmpfs over both would
    # need the outer one's mount point to exist inside the inner tmpfs.
    return tuple(p for p in existing if not any(_inside(p, q) for q in existing if q != p))


def _runner_root(path: str) -> str | None:
    """The runner's own directory (``.credentials``, ``.runner``) above a ``_work`` path."""
    parts = Path(path).parts
    if "_work" in parts:
        return str(Path(*parts[: parts.index("_work")]))
    return None


def _inside(path: str, parent: str) -> bool:
    return path == parent or path.startswith(parent.rstrip("/") + "/")


def _reexposed(hidden: Sequence[str], env: Mapping[str, str],
               read_only: Sequence[str]) -> tuple[str, ...]:
    """Directories inside hidden ones that the build or the worker needs, read-only: the
    interpreter and benchbot itself (for the worker), the tools on PATH, the runner's tool
    cache, and what the config's ``sandbox.read_only`` lists. Never the runner's temporary
    directory (the job's files) or its root (``.credentials``)."""
    package_parent = str(Path(benchbot.__file__).resolve().parent.parent)
    wanted = [sys.base_prefix, sys.prefix, sys.exec_prefix, package_parent, *read_only]
    wanted += [p for p in env.get("PATH", "").split(":") if p]
    if env.get("RUNNER_TOOL_CACHE"):
        wanted.append(env["RUNNER_TOOL_CACHE"])
    secret = [env.get("RUNNER_TEMP", "")]
    for name in ("RUNNER_WORKSPACE", "GITHUB_WORKSPACE"):
        root = _runner_root(env.get(name, ""))
        if root:
            secret.append(root)
    out: list[str] = []
    for path in wanted:
        real = os.path.realpath(path)
        if not os.path.isdir(real) or not any(_inside(real, h) for h in hidden):
            continue
        tool_cache = env.get("RUNNER_TOOL_CACHE", "")
        if any(s and _inside(real, os.path.realpath(s)) for s in secret) and not (
            tool_cache and _inside(real, os.path.realpath(tool_cache))
        ):
            continue
        out.append(real)
    return tuple(dict.fromkeys(sorted(out, key=len)))


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
