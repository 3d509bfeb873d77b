"""What the code under test sees of the file system in the sandbox: an allow-list.

``allowed`` lists what bubblewrap shows, read-only: the system directories (``/usr``,
``/bin``, ``/lib*``, ``/etc`` with its secret files masked), the toolchains on ``PATH``,
the runner's tool cache, benchbot's own interpreter and package (wherever the action
installed them, ``RUNNER_TEMP`` included) and what the config's ``sandbox.read_only``
names. Nothing else of the machine is there: not the home directories, not the runner's
directory (``.credentials``) wherever it lives, not the job's temporary files, not
``/var``, ``/srv``, ``/opt``, ``/mnt``, ``/run`` (the docker socket) nor ``/sys``. The
caller adds ``/dev``, ``/proc``, an empty ``/tmp`` and home, and the writable places.

``hidden_tools`` finds the tools on ``PATH`` that would not work there because they
resolve into a directory the sandbox does not show (a pyenv shim, a symlink into
``~/.nvm``), so that benchbot can say which directory to list under ``sandbox.read_only``.
"""

from __future__ import annotations

import dataclasses
import os
import re
import stat
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import benchbot

# Shown read-only; one that is a symlink (merged /usr: /bin -> usr/bin) becomes the same symlink.
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc")
# Masked in /etc: they hold secrets readable by their owner (when benchbot runs as root,
# the sandboxed process is uid 0 too). Files become /dev/null, directories empty.
SECRET_FILES = ("/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-", "/etc/sudoers")
SECRET_DIRS = ("/etc/ssh", "/etc/sudoers.d", "/etc/ssl/private", "/etc/pki/tls/private",
               "/etc/letsencrypt")
# A directory holding one of these is an Actions runner's own: never shown, whatever leads to it.
RUNNER_MARKERS = (".runner", ".credentials", ".credentials_rsaparams")
_HOMES = ("/home", "/root")
_SCAN_BYTES = 4096  # how much of a script on PATH is read for the paths it names
_ABSOLUTE = re.compile(rb"/[A-Za-z0-9_.+@-]+(?:/[A-Za-z0-9_.+@-]+)*")


@dataclass(frozen=True, slots=True, kw_only=True)
class View:
    """The file system the sandbox shows, besides /dev, /proc and the writable places."""

    symlinks: tuple[tuple[str, str], ...]  # (target, path)
    read_only: tuple[tuple[str, str], ...]  # (source, destination)
    masked_files: tuple[str, ...]
    masked_dirs: tuple[str, ...]
    empty: tuple[str, ...]  # /tmp and the home directory: empty, in memory

    def shows(self, path: str) -> bool:
        """Whether ``path`` (resolved) can be read in the sandbox."""
        return self.visibility().shows(path)

    def visibility(self) -> Visibility:
        """``shows`` for many paths: the mounts resolved once."""
        mounts = [(src, True) for src, _ in self.read_only]
        mounts += [(p, True) for p in ("/dev", "/proc")]
        mounts += [(p, False) for p in (*self.masked_dirs, *self.masked_files, *self.empty)]
        return Visibility(tuple((os.path.realpath(p), shown) for p, shown in mounts))


@dataclass(frozen=True, slots=True)
class Visibility:
    """The sandbox's mounts, resolved: whether each is shown."""

    mounts: tuple[tuple[str, bool], ...]

    def shows(self, path: str) -> bool:
        """Whether ``path`` (resolved) can be read in the sandbox: the deepest mount that
        holds it decides (a read-only toolchain inside the empty home is shown)."""
        real = os.path.realpath(path)
        holding = [(len(p), shown) for p, shown in self.mounts if _inside(real, p)]
        return max(holding)[1] if holding else False


def system_view() -> View:
    """The system directories alone, read-only, with /etc's secrets masked."""
    pairs: list[tuple[str, str]] = []
    symlinks: list[tuple[str, str]] = []
    for path in SYSTEM_DIRS:
        if os.path.islink(path):
            symlinks.append((os.readlink(path), path))
        elif os.path.isdir(path):
            pairs.append((path, path))
    return View(symlinks=tuple(symlinks), read_only=tuple(pairs),
                masked_files=tuple(p for p in SECRET_FILES if os.path.isfile(p)),
                masked_dirs=tuple(p for p in SECRET_DIRS if os.path.isdir(p)), empty=())


def allowed(env: Mapping[str, str], read_only: Sequence[str] = ()) -> View:
    """The allow-list for a process whose environment is ``env`` (PATH, HOME and the
    runner's variables) with the config's ``sandbox.read_only``."""
    guarded = guarded_places(env)
    system = system_view()
    pairs = list(system.read_only)
    for path in own_paths():
        pairs += _pair(path)
    for path in [*_toolchains(env, guarded), *read_only]:
        pairs += _pair(path)
    cache = env.get("RUNNER_TOOL_CACHE")
    if cache and _is_toolchain(cache, guarded):
        pairs += _pair(cache)
    home = home_of(env)
    view = dataclasses.replace(
        system, read_only=_outermost(pairs),
        empty=("/tmp", *([home] if _can_be_empty(home) else [])),
    )
    seen = view.visibility()
    links = [(target, path) for target, path in interpreter_links()
             if not seen.shows(os.path.dirname(path))]
    return dataclasses.replace(view, symlinks=(*view.symlinks, *links))


def interpreter_links() -> list[tuple[str, str]]:
    """(target, path) of each symlink from ``sys.executable`` to the interpreter itself.
    The worker is started as ``sys.executable`` (a venv's ``bin/python``, whose link leads
    on to the interpreter it was made with); where a link on that way lies outside every
    directory the sandbox shows (a venv made with a ``python3`` from a directory of links,
    as ``tools/bare_path.py`` makes), the sandbox makes that link alone, not its directory."""
    links: list[tuple[str, str]] = []
    path = sys.executable
    while os.path.islink(path) and len(links) < 40:  # 40: the kernel's own limit
        target = os.readlink(path)
        links.append((target, path))
        path = os.path.normpath(os.path.join(os.path.dirname(path), target))
    return links


def _outermost(pairs: Sequence[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    """``pairs`` without repeats, nor a path bound at its own place inside another one
    that is (one bind shows both)."""
    same = [src for src, dest in pairs if src == dest]
    return tuple(
        (src, dest) for src, dest in dict.fromkeys(pairs)
        if src != dest or not any(_inside(src, s) and src != s for s in same)
    )


def own_paths() -> list[str]:
    """benchbot's interpreter and package: the worker runs them inside the sandbox, from
    wherever they were installed (the action puts them in ``RUNNER_TEMP``)."""
    package = str(Path(benchbot.__file__).resolve().parent)
    dirs = [sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix, package]
    found = [os.path.realpath(sys.executable), *dirs]
    if not _inside_any(os.path.realpath(sys.executable), [os.path.realpath(d) for d in dirs]):
        found.append(os.path.dirname(sys.executable))
    return [p for p in dict.fromkeys(found) if p and p != "/" and os.path.exists(p)]


def guarded_places(env: Mapping[str, str]) -> list[str]:
    """Directories no PATH entry or tool cache may bring into view, nor any directory
    above them: the home directories, the runner's work and temporary directories, and
    its root where it can be told (the folder above ``_work``)."""
    found = [*_HOMES, home_of(env)]
    for name in ("RUNNER_TEMP", "RUNNER_WORKSPACE", "GITHUB_WORKSPACE"):
        value = env.get(name, "")
        if os.path.isabs(value):
            found.append(value)
            parts = Path(value).parts
            if "_work" in parts:
                found.append(str(Path(*parts[: parts.index("_work")])))
    return list(dict.fromkeys(os.path.realpath(p) for p in found if os.path.isabs(p)))


def is_safe(path: str, guarded: Sequence[str]) -> bool:
    """Whether ``path`` may be shown: a directory, not ``/``, not holding a guarded place
    or /tmp, not a runner's own directory (its ``.credentials``)."""
    real = os.path.realpath(path)
    if real == "/" or not os.path.isdir(real):
        return False
    if any(_inside(g, real) for g in (*guarded, "/tmp")):
        return False
    return not _is_runner_dir(real)


# Kernel and runtime state (the docker socket lives in /run): never shown from the config.
_PSEUDO = ("/proc", "/sys", "/dev", "/run")
CHECK_LIMIT = 500_000  # entries of a directory sandbox.read_only or writable names, at most


def refusal(path: str, env: Mapping[str, str]) -> str | None:
    """Why the config may not name ``path`` under ``sandbox.read_only`` (or ``writable``),
    or None. An allow-list by what a directory is, checked where it resolves to (a
    symlink counts as its target):

    - not ``/`` nor a directory right below it (``/home``, ``/root``, ``/opt``, ``/tmp`` …:
      name the toolchain's own directory), nothing under ``/proc``, ``/sys``, ``/dev``,
      ``/run``;
    - not a home directory, nor one holding a home (a directory inside one is a
      toolchain's, ``~/.pyenv``);
    - not the runner's own (its root, work folder, ``RUNNER_TEMP``, the workspace), nor
      inside one, nor holding one;
    - nothing in it private to its owner: every file and directory readable by others,
      none of a runner's files. The sandbox runs as the same user, so this is what keeps
      a ``.credentials`` (0600), an ssh key or a registry token (``~/.cargo``'s
      credentials.toml) out of a directory shown whole; a toolchain is world-readable.
    """
    if ".." in Path(path).parts:
        return f"{path} holds `..`: name the directory itself"
    real = os.path.realpath(path)
    named = path if real == path else f"{path} (which resolves to {real})"
    parts = Path(real).parts
    if len(parts) <= 2:
        return (f"{named} is {'the root' if real == '/' else 'a top-level directory'}: "
                "name the toolchain's own directory")
    if _inside_any(real, _PSEUDO):
        return f"{named} is kernel or runtime state, not a toolchain"
    homes = [p for p in {*_HOMES, os.path.realpath(home_of(env)), *_homes_of("/home")}
             if p not in _HOMES]
    if any(real == h or _inside(h, real) for h in homes):
        return f"{named} is a home directory (or holds one): name the tool's own directory in it"
    for place in guarded_places(env):
        if place in _HOMES or os.path.realpath(place) in homes:
            continue
        if _inside(real, place) or _inside(place, real):
            return f"{named} is the runner's own ({place}) or lies in it"
    return _private_in(real, named)


def _private_in(real: str, named: str) -> str | None:
    """The first file or directory under ``real`` that only its owner may read, or a
    runner's file, as a refusal; None when there is none (or ``real`` does not exist)."""
    if not os.path.exists(real):
        return None
    seen = 0
    todo = [real]
    while todo:
        here = todo.pop()
        try:
            entries = list(os.scandir(here))
        except OSError as exc:
            return f"{named}: {here} cannot be read ({exc.strerror})"
        for entry in entries:
            seen += 1
            if seen > CHECK_LIMIT:
                return f"{named} holds more than {CHECK_LIMIT} entries: name a smaller directory"
            if entry.name in RUNNER_MARKERS:
                return f"{named} holds a runner's own file ({entry.path})"
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISLNK(info.st_mode):
                continue  # in the sandbox a link leads only where the sandbox shows
            if not info.st_mode & stat.S_IROTH:
                return (f"{named} holds {entry.path}, which only its owner may read: the "
                        "sandbox would show it to the code under test (name a directory "
                        "without it)")
            if stat.S_ISDIR(info.st_mode):
                todo.append(entry.path)
    return None


def _toolchains(env: Mapping[str, str], guarded: Sequence[str]) -> list[str]:
    """Each PATH entry outside the system directories, and for ``PREFIX/bin`` its PREFIX
    (``/opt/cmake/bin`` brings ``/opt/cmake/share``), unless PREFIX lies in a home, the
    runner's directories or RUNNER_TEMP. Neither may be or hold (one level down) a
    runner's own directory: a PATH entry of /opt must not bring /opt/runner/.credentials."""
    out: list[str] = []
    for entry in path_entries(env):
        if not _is_toolchain(entry, guarded):
            continue
        out.append(entry)
        real = os.path.realpath(entry)
        prefix = os.path.dirname(real)
        if (os.path.basename(real) in ("bin", "sbin") and len(Path(prefix).parts) > 2
                and not _inside_any(real, guarded) and _is_toolchain(prefix, guarded)):
            out.append(prefix)
    return out


def _is_toolchain(path: str, guarded: Sequence[str]) -> bool:
    return is_safe(path, guarded) and not any(_is_runner_dir(str(c)) for c in _subdirs(path))


def path_entries(env: Mapping[str, str]) -> list[str]:
    """PATH's absolute entries that exist and lie outside the system directories."""
    out = []
    for entry in env.get("PATH", "").split(os.pathsep):
        if os.path.isabs(entry) and os.path.isdir(entry) and not _is_system(entry):
            out.append(os.path.normpath(entry))
    return list(dict.fromkeys(out))


def _pair(path: str) -> list[tuple[str, str]]:
    """``path`` bound at its resolved place, and at its own name when that differs (a
    symlinked PATH entry), unless the name lies under a system directory."""
    real = os.path.realpath(path)
    if not os.path.exists(real) or _is_system(real):
        return []
    own = os.path.normpath(path)
    return [(real, real)] + ([(real, own)] if own != real and not _is_system(own) else [])


def _subdirs(path: str) -> Iterable[Path]:
    try:
        return [p for p in Path(path).iterdir() if p.is_dir()]
    except OSError:
        return []


def _is_runner_dir(path: str) -> bool:
    return any(os.path.exists(os.path.join(path, m)) for m in RUNNER_MARKERS)


def _is_system(path: str) -> bool:
    return _inside_any(os.path.normpath(path), SYSTEM_DIRS) or _inside_any(
        os.path.realpath(path), SYSTEM_DIRS)


def home_of(env: Mapping[str, str]) -> str:
    """The home directory of a process whose environment is ``env``."""
    return env.get("HOME") or os.path.expanduser("~")


def _can_be_empty(home: str) -> bool:
    return os.path.isabs(home) and home != "/" and not _is_system(home)


def _inside(path: str, parent: str) -> bool:
    return path == parent or path.startswith(parent.rstrip("/") + "/")


def _inside_any(path: str, parents: Iterable[str]) -> bool:
    return any(_inside(path, p) for p in parents)


@dataclass(frozen=True, slots=True)
class HiddenTool:
    """A tool on PATH that resolves into a directory the sandbox does not show."""

    name: str  # as the build calls it
    into: str  # the directory to list under sandbox.read_only


def hidden_tools(view: View, env: Mapping[str, str]) -> list[HiddenTool]:
    """The tools on PATH (first of each name, in PATH entries outside the system
    directories) that the sandbox shows but that lead into a hidden directory: a symlink
    whose target is hidden, or a script whose interpreter or a path in its first few KB
    is. Cheap: a stat per tool and one small read per script (pyenv's 137 shims: about
    12 ms)."""
    seen = view.visibility()
    found: list[HiddenTool] = []
    names: set[str] = set()
    scanned: dict[bytes, str | None] = {}  # shims share their text
    home = home_of(env)
    for entry in path_entries(env):
        if not seen.shows(entry):
            continue
        for tool in sorted(_executables(entry)):
            if tool.name in names:
                continue
            names.add(tool.name)
            target = _hidden_target(tool, seen, scanned)
            if target is not None:
                found.append(HiddenTool(tool.name, _suggestion(target, home)))
    return found


def _executables(entry: str) -> list[Path]:
    try:
        return [p for p in Path(entry).iterdir() if p.is_file() and os.access(p, os.X_OK)]
    except OSError:
        return []


def _hidden_target(tool: Path, seen: Visibility, scanned: dict[bytes, str | None]) -> str | None:
    """The first existing path that ``tool`` leads to and the sandbox hides, if any."""
    real = os.path.realpath(tool)
    if not seen.shows(real):
        return real
    try:
        with open(real, "rb") as fh:
            head = fh.read(_SCAN_BYTES)
    except OSError:
        return None
    if not head.startswith(b"#!"):
        return None  # a binary: what it opens cannot be told from its first bytes
    if head not in scanned:
        scanned[head] = _hidden_in(head, seen)
    return scanned[head]


def _hidden_in(script: bytes, seen: Visibility) -> str | None:
    """The first absolute path named in ``script`` that exists here and the sandbox hides
    (but not one of its empty places, /tmp or the home, nor a directory above one)."""
    empty = [p for p, shown in seen.mounts if not shown]
    for match in _ABSOLUTE.finditer(script):
        path = os.path.normpath(os.fsdecode(match.group()))
        if (os.path.exists(path) and not seen.shows(path)
                and not any(_inside(e, os.path.realpath(path)) for e in empty)):
            return path
    return None


def _suggestion(target: str, home: str) -> str:
    """The directory to show: under a home, its first component there (``~/.pyenv``, never
    the whole home: ``~/.cargo`` beside it holds a registry token); else the target's own
    directory."""
    real = os.path.realpath(target)
    for base in dict.fromkeys([os.path.realpath(home), "/root", *_homes_of("/home")]):
        if _inside(real, base) and real != base:
            first = Path(real).relative_to(base).parts[0]
            return os.path.join(base, first)
    return real if os.path.isdir(real) else os.path.dirname(real)


def _homes_of(parent: str) -> list[str]:
    return [str(p) for p in _subdirs(parent)]


def by_directory(tools: Sequence[HiddenTool]) -> dict[str, str]:
    """The hidden directories, each with the tools that lead there as a short list."""
    names: dict[str, list[str]] = {}
    for tool in tools:
        names.setdefault(tool.into, []).append(tool.name)
    return {into: _listed(found) for into, found in names.items()}


def notes(tools: Sequence[HiddenTool]) -> list[str]:
    """One line per hidden directory: which tools lead there and what to do."""
    return [f"sandbox: {listed} on PATH {'resolve' if ' ' in listed else 'resolves'} into "
            f"{into}, which the sandbox does not show: list it under sandbox.read_only to use it"
            for into, listed in by_directory(tools).items()]


def _listed(names: Sequence[str]) -> str:
    shown = sorted(names, key=lambda n: (not n.startswith("python"), len(n), n))
    if len(shown) <= 3:
        return ", ".join(shown)
    return f"{', '.join(shown[:3])} and {len(shown) - 3} more"
