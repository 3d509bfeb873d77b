#!/usr/bin/env python3
"""What a process in benchbot's sandbox can reach, enumerated, and the allow-list it is
held to.

Run inside the sandbox by a build (``reach.py build``) and by a workload (``reach.py
run``), it walks everything a pull request's code could use to reach past its own
worktree: every descriptor of every process it can see (``/proc/*/fd/*`` and
``/proc/*/task/*/fd/*``), every mount, every directory it can create a file in (the whole
visible file system) and every writable file of ``/proc`` outside the processes' own
directories, the kernel keyrings, and every socket (unix sockets in the file system,
abstract ones in ``/proc/net/unix``, TCP and UDP listeners, netlink, the network
interfaces). Each finding is checked against ``ALLOWED`` and the rules below; anything
else is a violation, printed as ``REACH: <what>`` on stderr, and the process exits 97.
With a directory as second argument it writes its whole report there as JSON instead
(``<kind>-<worktree>-<random>.json``, violations included) and exits 0, so that the
comparison goes on to the runs, for the slow tier's test to read (``test_enumeration.py``). It
enumerates once per worktree and kind (a marker file there): the walk takes longer than
a workload's run, and every run of an arm is made the same way.

The rules are written without benchbot's code: what is allowed is said by what it is,
not by asking benchbot what it meant to show.

- **Processes.** A run sees its worker (PID 1), the process that started it (the parent
  of its session's leader: the small process that starts and times the runs) and its
  own processes; a build
  sees bubblewrap's reaper (PID 1) and its own (its session). The worker's and the run's
  parent's descriptors, memory and environment cannot be opened, nor their descriptors
  taken with ``pidfd_getfd``. The
  reaper holds ``/dev/null``, the build's own log and bubblewrap's eventfd, nothing else.
  The enumerator's own inherited descriptors are 0, 1 and 2 only: ``/dev/null``, an
  anonymous file, or (a build) its log; its parents (a shell script) hold the same and
  files in the worktree. A counted run (valgrind's guest) also holds valgrind's own:
  descriptors from 1024 up, and valgrind's log files in the worker's scratch.
- **Mounts.** Writable: the worktree, the worker's scratch directory (where the run's
  stderr lives), and the in-memory ``/tmp``, home and ``/dev`` of the sandbox (tmpfs),
  plus what ``.reach.json`` in the worktree declares (the config's ``sandbox.writable``).
  Read-only: the system directories, ``PATH``'s entries (and ``PREFIX`` of a
  ``PREFIX/bin``), Python installations (a ``bin/python3``), benchbot's package, the
  program of the process that started the run (a directory holding that one file), the
  repository's git directory, masks (``/dev/null`` bound over a file, an empty tmpfs) and
  what ``.reach.json`` declares; never a home itself, ``/``-level directories outside the
  system's, nor a directory holding a runner's ``.credentials``/``.runner``.
- **Keyrings.** Every keyring call fails, and ``/proc/keys`` cannot be read (or is empty).
- **Sockets.** None in the file system, no abstract ones, no listener of any protocol,
  netlink only the kernel's own, the loopback interface only.

It needs Python 3.8 and the standard library only: the act tier runs it with the
runner's ``python3``.
"""

from __future__ import annotations

import ctypes
import errno
import json
import os
import platform
import socket
import stat
import sys

SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc")
RUNNER_MARKERS = (".credentials", ".credentials_rsaparams", ".runner")
# Writable files of /proc outside the processes' own directories, with why each is fine.
ALLOWED = {
    "proc_writable": {
        "/proc/pressure/cpu": "a PSI trigger lives as long as the descriptor that made it",
        "/proc/pressure/io": "as /proc/pressure/cpu",
        "/proc/pressure/memory": "as /proc/pressure/cpu",
        "/proc/pressure/irq": "as /proc/pressure/cpu",
        "/proc/mtrr": "the kernel allows writes with CAP_SYS_ADMIN only, which no process here has",
    },
    # The mounts bubblewrap makes for every sandbox (besides the view and the writable places).
    "fixed_mounts": ("/", "/dev", "/dev/null", "/dev/zero", "/dev/full", "/dev/random",
                     "/dev/urandom", "/dev/tty", "/dev/pts", "/dev/shm", "/dev/mqueue", "/proc",
                     "/proc/irq", "/proc/bus", "/proc/sys", "/proc/sysrq-trigger", "/proc/keys",
                     "/proc/key-users"),
    # In-memory, made by bubblewrap for this sandbox alone.
    "private_writable": ("/tmp", "/dev", "/dev/shm", "/dev/pts", "/dev/mqueue"),
    # Writable mounts whose writable files are enumerated on their own (proc_writable,
    # and the processes' own directories, which only hold the sandbox's processes).
    "writable_mounts": ("/proc",),
}
KEYCTL = {"x86_64": (248, 249, 250), "aarch64": (217, 218, 219), "riscv64": (217, 218, 219),
          "ppc64le": (269, 270, 271), "s390x": (278, 279, 280)}  # add_key, request_key, keyctl
PIDFD_OPEN, PIDFD_GETFD = 434, 438  # the same on every architecture (new system calls)
KEY_SPECS = {"@t": -1, "@p": -2, "@s": -3, "@u": -4, "@us": -5, "@g": -6, "@a": -7, "@r": -8}


def main(argv: list[str]) -> int:
    kind = argv[1] if len(argv) > 1 else "run"
    report_dir = argv[2] if len(argv) > 2 else None
    inherited = _fds(os.getpid())  # first, before this process opens anything of its own
    marker = os.path.join(_worktree_top(os.getcwd()), f".reach-{kind}")
    if os.path.exists(marker):
        return 0  # once per worktree: the walk takes longer than a workload's run
    open(marker, "w").close()
    report = enumerate_reach(kind, inherited)
    found = violations(report)
    report["violations"] = found
    if report_dir:
        top = os.path.basename(_worktree_top(os.getcwd()))
        path = os.path.join(report_dir, f"{kind}-{top}-{os.urandom(4).hex()}.json")
        with open(path + ".tmp", "w") as fh:
            json.dump(report, fh, indent=1, sort_keys=True)
        os.rename(path + ".tmp", path)
        return 0  # the test reads the report: the comparison goes on to the runs
    for line in found:
        sys.stderr.write(f"REACH: {kind}: {line}\n")
    return 97 if found else 0


# --- enumeration ------------------------------------------------------------------------


def enumerate_reach(kind: str, inherited: dict[str, str]) -> dict:
    declared = _declared()
    return {
        "kind": kind, "pid": os.getpid(), "cwd": os.getcwd(), "home": os.environ.get("HOME", ""),
        "path": os.environ.get("PATH", ""), "python": [sys.prefix, sys.base_prefix],
        "inherited": inherited, "session": os.getsid(0), "processes": _processes(),
        "pid1": _taken(1), "parent": _parent(), "mounts": _mounts(), "declared": declared, "git_dir": _git_dir(),
        **_walk(), "proc_writable": _proc_writable(), "keyrings": _keyrings(),
        "sockets": _sockets(),
        # A counted run (counts: valgrind) is valgrind's guest: valgrind's preload is in
        # its environment, and valgrind's own descriptors are in its processes.
        "valgrind": "vgpreload" in os.environ.get("LD_PRELOAD", ""),
    }


def _declared() -> dict:
    """What the test declared beyond the defaults (the config's sandbox.writable and
    read_only), from ``.reach.json`` at the worktree's top."""
    top = _worktree_top(os.getcwd())
    try:
        with open(os.path.join(top, ".reach.json")) as fh:
            data = json.load(fh)
    except (OSError, ValueError):
        data = {}
    return {"writable": list(data.get("writable", [])), "read_only": list(data.get("read_only", []))}


def _git_dir() -> dict:
    """The repository's git directory (from the worktree's ``.git`` file) and the sections
    of the config the sandbox shows there."""
    top = _worktree_top(os.getcwd())
    try:
        with open(os.path.join(top, ".git")) as fh:
            line = fh.readline().strip()
    except OSError:
        return {"path": "", "sections": []}
    linked = line.partition("gitdir: ")[2]
    common = os.path.dirname(os.path.dirname(linked)) if "/worktrees/" in linked else linked
    sections = []
    try:
        with open(os.path.join(common, "config"), errors="replace") as fh:
            sections = [row.strip() for row in fh if row.lstrip().startswith("[")]
    except OSError as exc:
        sections = ["!" + errno.errorcode.get(exc.errno or 0, str(exc.errno))]
    return {"path": common, "sections": sections}


def _worktree_top(cwd: str) -> str:
    """The worktree holding ``cwd``: the nearest directory with a ``.git`` entry."""
    here = cwd
    while here != "/":
        if os.path.lexists(os.path.join(here, ".git")):
            return here
        here = os.path.dirname(here)
    return cwd


def _fds(pid: int | str, task: str | None = None) -> dict[str, str]:
    """fd -> what it points to, or ``!ERRNAME`` where it cannot be read; ``!ERRNAME`` under
    the key ``*`` when the directory itself cannot be listed."""
    where = f"/proc/{pid}/task/{task}/fd" if task else f"/proc/{pid}/fd"
    try:
        names = os.listdir(where)
    except OSError as exc:
        return {"*": "!" + errno.errorcode.get(exc.errno or 0, str(exc.errno))}
    out = {}
    for name in names:
        try:
            target = os.readlink(f"{where}/{name}")
        except OSError as exc:
            if exc.errno == errno.ENOENT:
                continue  # closed since the listing (the listing's own descriptor among them)
            target = "!" + errno.errorcode.get(exc.errno or 0, str(exc.errno))
        if target == where or (target.startswith(f"/proc/{os.getpid()}/") and target.endswith("/fd")):
            continue  # the listing's own descriptor
        out[name] = target
    return out


def _stat_of(pid: str) -> tuple[int, int, str]:
    """A process's parent, session and name."""
    with open(f"/proc/{pid}/stat", "rb") as fh:
        data = fh.read()
    fields = data[data.rfind(b")") + 2:].split()
    name = data[data.find(b"(") + 1:data.rfind(b")")].decode(errors="replace")
    return int(fields[1]), int(fields[3]), name


def _cmdline(pid: str) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return fh.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return ""


def _processes() -> list[dict]:
    """Every process visible, with its threads' descriptors and whether its memory and
    environment can be opened."""
    out = []
    for name in sorted((n for n in os.listdir("/proc") if n.isdigit()), key=int):
        try:
            ppid, session, comm = _stat_of(name)
        except OSError:
            continue  # gone meanwhile
        tasks = {}
        try:
            for task in os.listdir(f"/proc/{name}/task"):
                tasks[task] = _fds(name, task)
        except OSError:
            pass
        out.append({"pid": int(name), "ppid": ppid, "session": session, "comm": comm,
                    "cmdline": _cmdline(name),
                    "fds": _fds(name), "tasks": tasks,
                    "opens": {part: _can_open(f"/proc/{name}/{part}")
                              for part in ("environ", "mem", "fd/0", "fd/1")}})
    return out


def _can_open(path: str) -> str:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:
        return "!" + errno.errorcode.get(exc.errno or 0, str(exc.errno))
    os.close(fd)
    return "opened"




def _syscall(number: int, *args: int) -> tuple[int, int]:
    libc = ctypes.CDLL(None, use_errno=True)
    result = libc.syscall(ctypes.c_long(number), *(ctypes.c_long(a) for a in args))
    return int(result), ctypes.get_errno()


def _parent() -> dict:
    """The process that started the run (the parent of its session's leader: a run is
    started in a session of its own): its pid, the program it runs (its first argument),
    what the directory of that program holds, and whether its descriptors can be taken."""
    try:
        pid = _stat_of(str(os.getsid(0)))[0]
    except OSError:
        pid = os.getppid()
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            program = fh.read().split(b"\0")[0].decode(errors="replace")
    except OSError:
        program = ""
    try:
        listing = sorted(os.listdir(os.path.dirname(program))) if program.startswith("/") else []
    except OSError:
        listing = []
    return {"pid": pid, "program": program, "listing": listing, **_taken(pid)}


def _taken(pid: int) -> dict:
    """Whether a process's descriptors can be taken with pidfd_getfd (fds 0 to 9)."""
    fd, err = _syscall(PIDFD_OPEN, pid, 0)
    if fd < 0:
        return {"pidfd_open": errno.errorcode.get(err, str(err)), "taken": []}
    taken = []
    try:
        for target in range(10):
            got, err = _syscall(PIDFD_GETFD, fd, target, 0)
            if got >= 0:
                taken.append(target)
                os.close(got)
    finally:
        os.close(fd)
    return {"pidfd_open": "ok", "taken": taken, "last_error": errno.errorcode.get(err, str(err))}


def _unescape(field: str) -> str:
    """mountinfo's octal escapes (\\040 for a space) undone."""
    out, i = [], 0
    while i < len(field):
        if field[i] == "\\" and field[i + 1:i + 4].isdigit():
            out.append(chr(int(field[i + 1:i + 4], 8)))
            i += 4
        else:
            out.append(field[i])
            i += 1
    return "".join(out)


def _mounts() -> list[dict]:
    out = []
    with open("/proc/self/mountinfo") as fh:
        for line in fh:
            left, _, right = line.partition(" - ")
            fields, more = left.split(), right.split()
            out.append({"point": _unescape(fields[4]), "root": _unescape(fields[3]),
                        "options": fields[5].split(","), "fstype": more[0],
                        "source": _unescape(more[1]) if len(more) > 1 else ""})
    return out


def _walk() -> dict:
    """Every directory of the visible file system (not /proc, /sys) in which a file can
    be created; the sockets found on the way; directories holding a runner's files."""
    writable, sockets, runner_dirs, dirs = [], [], [], 0
    token = f".reach-{os.getpid()}-{os.urandom(4).hex()}"
    stack = ["/"]
    while stack:
        here = stack.pop()
        dirs += 1
        try:
            entries = list(os.scandir(here))
        except OSError:
            entries = []
        names = {e.name for e in entries}
        if names & set(RUNNER_MARKERS):
            runner_dirs.append(here)
        for entry in entries:
            path = entry.path
            if path in ("/proc", "/sys"):
                continue
            try:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(path)
                elif not entry.is_file(follow_symlinks=False) and not entry.is_symlink() \
                        and stat.S_ISSOCK(entry.stat(follow_symlinks=False).st_mode):
                    sockets.append(path)
            except OSError:
                continue
        probe = os.path.join(here, token)
        try:
            fd = os.open(probe, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
        except OSError:
            continue
        os.close(fd)
        os.unlink(probe)
        writable.append(here)
    return {"writable": writable, "fs_sockets": sockets, "runner_dirs": runner_dirs,
            "dirs_walked": dirs}


def _proc_writable() -> list[str]:
    """Files of /proc outside the processes' own directories that this process can open
    for writing (nothing is written: a sysctl or a trigger acts on a write only)."""
    out = []
    for name in os.listdir("/proc"):
        if name.isdigit() or name in ("self", "thread-self"):
            continue
        top = f"/proc/{name}"
        if os.path.isdir(top) and not os.path.islink(top):
            for root, _, files in os.walk(top):
                out += [os.path.join(root, f) for f in files if _opens_for_writing(os.path.join(root, f))]
        elif _opens_for_writing(top):
            out.append(top)
    return sorted(out)


def _opens_for_writing(path: str) -> bool:
    try:
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
    except OSError:
        return False
    os.close(fd)
    return True


def _keyrings() -> dict:
    """What each keyring call answers (an id where it works), and /proc/keys."""
    numbers = KEYCTL.get(platform.machine())
    out: dict = {"machine": platform.machine()}
    if numbers is None:
        out["error"] = "no keyctl numbers for this machine in reach.py"
        return out
    add_key, request_key, keyctl = numbers
    for name, spec in KEY_SPECS.items():
        got, err = _syscall(keyctl, 0, spec, 0)  # KEYCTL_GET_KEYRING_ID, no creating
        out[name] = got if got >= 0 else errno.errorcode.get(err, str(err))
    got, err = _syscall(request_key, 0, 0, 0, 0)  # bad pointers: only ENOSYS says "no keyrings"
    out["request_key"] = errno.errorcode.get(err, str(err)) if got < 0 else got
    got, err = _syscall(add_key, 0, 0, 0, 0, 0)
    out["add_key"] = errno.errorcode.get(err, str(err)) if got < 0 else got
    for path in ("/proc/keys", "/proc/key-users"):
        try:
            with open(path) as fh:
                out[path] = fh.read()
        except OSError as exc:
            out[path] = "!" + errno.errorcode.get(exc.errno or 0, str(exc.errno))
    return out


def _table(path: str) -> list[list[str]]:
    try:
        with open(path) as fh:
            return [line.split() for line in fh.read().splitlines()[1:] if line.strip()]
    except OSError:
        return []


def _sockets() -> dict:
    unix = [row for row in _table("/proc/net/unix")]
    abstract = [row[7] for row in unix if len(row) > 7 and row[7].startswith("@")]
    reached = []
    for name in abstract:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.connect("\0" + name[1:])
            reached.append(name)
        except OSError:
            pass
        finally:
            s.close()
    inet = {name: _table(f"/proc/net/{name}")
            for name in ("tcp", "tcp6", "udp", "udp6", "raw", "raw6", "udplite", "udplite6")}
    netlink = [row for row in _table("/proc/net/netlink")]
    interfaces = [row[0].rstrip(":") for row in _table("/proc/net/dev")[1:]]
    return {"unix": [row[6:] for row in unix], "abstract": abstract, "abstract_reached": reached,
            "inet": {k: v for k, v in inet.items() if v},
            "netlink_not_kernel": [row for row in netlink if len(row) > 2 and row[2] != "0"],
            "interfaces": interfaces}


# --- the allow-list ---------------------------------------------------------------------


def _inside(path: str, parent: str) -> bool:
    return path == parent or path.startswith(parent.rstrip("/") + "/")


def _places(report: dict) -> dict:
    """The directories this sandbox may write, and where the run's own files live: the
    worktree, the scratch directory holding the run's anonymous stderr, what
    ``.reach.json`` declares, and the sandbox's own in-memory mounts (tmpfs at ``/tmp``,
    the home, ``/dev``, and the empty masks inside read-only mounts)."""
    top = _worktree_top(report["cwd"])
    own = [t for t in report["inherited"].values() if t.endswith(" (deleted)")]
    scratch = sorted({os.path.dirname(t[: -len(" (deleted)")]) for t in own})
    home = report["home"]
    private = [home, *ALLOWED["private_writable"]]
    read_only = [m["point"] for m in report["mounts"] if "ro" in m["options"]]
    memory = [m["point"] for m in report["mounts"]
              if m["fstype"] in ("tmpfs", "devpts", "mqueue") and m["root"] == "/"
              and (m["point"] in private
                   or any(_inside(m["point"], r) and m["point"] != r and r != "/"
                          for r in read_only))]
    return {"worktree": top, "scratch": scratch, "home": home, "memory": memory,
            "writable": [top, *scratch, *report["declared"]["writable"], *memory]}


def violations(report: dict) -> list[str]:
    """Everything in ``report`` that the allow-list does not cover, one line each."""
    places = _places(report)
    return [*_process_violations(report, places), *_mount_violations(report, places),
            *_write_violations(report, places), *_key_violations(report),
            *_socket_violations(report, places)]


def _own_target(target: str, report: dict, places: dict) -> bool:
    """A descriptor target a process of the run's own may hold: /dev/null, a file in a
    writable place (an anonymous one included), or a build's log (its stdout)."""
    if target == "/dev/null":
        return True
    if target.endswith(" (deleted)"):
        target = target[: -len(" (deleted)")]
    if any(_inside(target, p) for p in places["writable"]):
        return True
    return report["kind"] == "build" and target == report["inherited"].get("1")


# valgrind keeps its own descriptors from this number up (the top of the descriptor limit,
# which it lowers for its guest); below it only its log files reach a guest.
VALGRIND_FDS_FROM = 1024
VALGRIND_LOG = "vg.benchbot."  # benchbot.sandbox.counting.VALGRIND_LOG, the %p appended


def _valgrinds(fd: str, target: str, report: dict, places: dict) -> bool:
    """A descriptor of valgrind's own in a counted run's process: one in valgrind's range,
    or one of its log files in the run's directory for valgrind's files (in the worker's
    scratch), which valgrind (with --trace-children and --log-file=...%p.%n) leaves open
    across each exec. Nothing of benchbot's: what a run does to valgrind's files is on the
    worker's record, which no run reaches (docs/security.md, "Counts")."""
    if not report.get("valgrind") or fd == "*":
        return False
    if fd.isdigit() and int(fd) >= VALGRIND_FDS_FROM:
        return True
    return (os.path.basename(target).startswith(VALGRIND_LOG)
            and any(_inside(target, p) for p in places["writable"]))


def _process_violations(report: dict, places: dict) -> list[str]:
    found = []
    inherited = report["inherited"]
    for fd, target in sorted(inherited.items()):
        if _valgrinds(fd, target, report, places):
            continue
        if fd not in ("0", "1", "2"):
            found.append(f"inherited descriptor {fd} -> {target}")
        elif not _own_target(target, report, places):
            found.append(f"inherited descriptor {fd} -> {target}, not the run's own")
    if report["kind"] == "build" and (inherited.get("0") != "/dev/null"
                                      or inherited.get("1") != inherited.get("2")):
        found.append(f"a build's descriptors are not /dev/null and its log: {inherited}")
    # The run's own processes: its session (the worker starts every run in a session of
    # its own, bubblewrap the build).
    ours = {p["pid"] for p in report["processes"] if p["session"] == report["session"]}
    by_pid = {p["pid"]: p for p in report["processes"]}
    if 1 not in by_pid:
        found.append("no PID 1 visible: this is not a PID namespace of its own")
    for proc in report["processes"]:
        pid = proc["pid"]
        if pid == report["pid"]:
            continue
        if pid == 1:
            found += _pid1_violations(proc, report)
        elif report["kind"] == "run" and pid == report["parent"]["pid"]:
            found += _out_of_reach(proc, report["parent"], "the process that started the run")
        elif pid in ours:
            for fds in proc["tasks"].values():
                for fd, target in fds.items():
                    if fd == "*" or not (_own_target(target, report, places)
                                         or target in inherited.values()
                                         or _valgrinds(fd, target, report, places)):
                        found.append(f"the run's own process {pid} ({proc['comm']}) holds "
                                     f"{fd} -> {target}")
        else:
            found.append(f"a process the {report['kind']} did not start is visible: {pid} "
                         f"({proc['cmdline'][:120]})")
    return found


def _pid1_violations(proc: dict, report: dict) -> list[str]:
    """PID 1: the worker (a run's) must be out of reach; bubblewrap's reaper (a build's)
    may hold /dev/null, the build's own log and its eventfd."""
    found = []
    if report["kind"] == "run":
        return _out_of_reach(proc, report["pid1"], "PID 1")
    log = report["inherited"].get("1", "")
    for task in [proc["fds"], *proc["tasks"].values()]:
        for fd, target in task.items():
            if target.startswith("!"):
                continue
            if not (target == "/dev/null" or target == log or target == "anon_inode:[eventfd]"):
                found.append(f"PID 1 ({proc['comm']}) holds {fd} -> {target}")
    return found


def _out_of_reach(proc: dict, taken: dict, who: str) -> list[str]:
    """A process a run must not reach into (its worker, its parent): no descriptor, memory
    or environment it can open, no descriptor taken with pidfd_getfd."""
    found = []
    readable = {fd: t for task in [proc["fds"], *proc["tasks"].values()]
                for fd, t in task.items() if not t.startswith("!")}
    if readable:
        found.append(f"{who} ({proc['comm']}) holds descriptors a run can open: {readable}")
    opened = [k for k, v in proc["opens"].items() if v == "opened"]
    if opened:
        found.append(f"{who} ({proc['comm']}): a run can open its {', '.join(opened)}")
    if taken.get("taken"):
        found.append(f"{who}'s descriptors {taken['taken']} taken with pidfd_getfd")
    return found


def _read_only_allowed(mount: dict, report: dict) -> bool:
    """A read-only mount the rules allow (see the module's docstring)."""
    point = mount["point"]
    if point in ALLOWED["fixed_mounts"] or any(_inside(point, d) for d in SYSTEM_DIRS):
        return True
    if mount["root"] == "/null" and mount["fstype"] == "devtmpfs":
        return True  # /dev/null bound over a file: a mask
    entries = [e.rstrip("/") for e in report["path"].split(":") if e.startswith("/")]
    prefixes = [os.path.dirname(e) for e in entries if os.path.basename(e) in ("bin", "sbin")]
    if point in entries or point in prefixes or point in report["declared"]["read_only"]:
        return True
    if any(os.path.exists(os.path.join(point, "bin", n)) for n in ("python3", "python")):
        return True  # a Python installation or virtual environment (benchbot's own)
    if os.path.isfile(os.path.join(point, "worker.py")) and \
            os.path.isfile(os.path.join(point, "sandbox.py")):
        return True  # benchbot's package
    parent = report.get("parent", {})
    if report["kind"] == "run" and parent.get("program") and \
            os.path.dirname(parent["program"]) == point and \
            parent["listing"] == [os.path.basename(parent["program"])]:
        return True  # the program of the process that starts the runs, alone
    git = report["git_dir"]["path"]
    if git and point == git:
        return True  # the repository's objects and refs, for git in a build
    # its config: a copy holding core.* and extensions.* only (checked in _git_violations)
    return bool(git) and point == os.path.join(git, "config")


def _mount_violations(report: dict, places: dict) -> list[str]:
    found = []
    for mount in report["mounts"]:
        point = mount["point"]
        shown = f"{point} ({mount['fstype']} {mount['root']})"
        if point in ("/home", "/root") or os.path.dirname(point) == "/home":
            if point not in places["memory"]:
                found.append(f"a home is shown: {shown}")
        if "rw" in mount["options"]:
            if point in ("/tmp", places["home"], "/dev", "/dev/shm") and \
                    point not in places["memory"]:
                found.append(f"{point} is writable and not the sandbox's own: {shown}")
            elif not any(_inside(point, p) for p in places["writable"]) and \
                    point not in ALLOWED["writable_mounts"]:
                found.append(f"a writable mount that is none of the allowed: {shown}")
        elif not (_read_only_allowed(mount, report) or point in places["memory"]):
            found.append(f"a read-only mount that is none of the allowed: {shown}")
    return found


def _write_violations(report: dict, places: dict) -> list[str]:
    found = [f"writable directory outside the allowed places: {d}" for d in report["writable"]
             if not any(_inside(d, p) for p in places["writable"])]
    found += [f"a runner's own directory is visible: {d}" for d in report["runner_dirs"]]
    found += [f"/proc is writable at {p}" for p in report["proc_writable"]
              if p not in ALLOWED["proc_writable"]]
    git = report["git_dir"]
    found += [f"the git directory's config holds {section}" for section in git["sections"]
              if section.split()[0].strip("[]").split(".")[0] not in ("core", "extensions")
              and not section.startswith("!")]
    return found


def _key_violations(report: dict) -> list[str]:
    keys = report["keyrings"]
    if "error" in keys:
        return [keys["error"]]
    found = [f"keyring {name} answers {value}" for name, value in keys.items()
             if name.startswith("@") and value != "ENOSYS"]
    found += [f"{call} answers {keys[call]}" for call in ("add_key", "request_key")
              if keys[call] != "ENOSYS"]
    found += [f"{path} lists keys: {keys[path][:200]!r}" for path in ("/proc/keys", "/proc/key-users")
              if not keys[path].startswith("!") and keys[path].strip()]
    return found


def _socket_violations(report: dict, places: dict) -> list[str]:
    s = report["sockets"]
    found = [f"a unix socket in the file system: {p}" for p in report["fs_sockets"]
             if not any(_inside(p, w) for w in places["writable"])]
    found += [f"an abstract unix socket: {name}" for name in s["abstract"]]
    found += [f"{proto}: {len(rows)} sockets ({rows[0][1] if rows and len(rows[0]) > 1 else ''})"
              for proto, rows in s["inet"].items()]
    found += [f"a netlink socket of another process: {row}" for row in s["netlink_not_kernel"]]
    found += [f"network interface {name}" for name in s["interfaces"] if name != "lo"]
    return found


if __name__ == "__main__":
    sys.exit(main(sys.argv))
