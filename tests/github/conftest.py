"""Fixtures shared by the GitHub tests: the fake server with one pull request in it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

PULL_HEAD_SHA = "1f2e3d4c5b6a79881f2e3d4c5b6a79881f2e3d4c"
PULL_BASE_SHA = "0a1b2c3d4e5f60718293a4b5c6d7e8f901234567"


@pytest.fixture
def fake_with_pull() -> Iterator[Any]:
    """A running FakeGitHub holding pull request #7; asserts afterwards that every request
    and response matched GitHub's OpenAPI description."""
    from tests.fakegithub import FakeGitHub  # needs openapi-core, a test dependency

    with FakeGitHub() as fake:
        fake.add_pull(7, head_sha=PULL_HEAD_SHA, base_sha=PULL_BASE_SHA, head_ref="speedup",
                      user_login="alice")
        yield fake
        assert fake.validation_errors == []
