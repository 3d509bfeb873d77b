"""The workflow a user gets by following docs/github.md: bench.yml, adapted.

docs/github.md tells users to copy this repository's ``.github/workflows/bench.yml`` and
change three things. The lint tests check what that gives, and the act tier runs it.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PINNED = "OWNER/benchbot@" + "0" * 40  # the action as a user pins it (a full commit SHA)


def adapted_workflow(machines: int, action: str = PINNED) -> str:
    """bench.yml with the changes docs/github.md lists: ``uses: ./`` pinned to ``action``,
    no ``config:`` (the default path), and ``shards:``/``max-parallel:`` the number of
    machines (``shards:`` dropped for one)."""
    guide = (ROOT / "docs" / "github.md").read_text()
    assert "uses: OWNER/benchbot@<full commit SHA>" in guide and "drop `shards:`" in guide
    text = (ROOT / ".github" / "workflows" / "bench.yml").read_text()
    text = re.sub(r"uses: \./( .*)?$", f"uses: {action} # v1", text, flags=re.M)
    text = re.sub(r"^ *config: kernels/benchbot.yml\n", "", text, flags=re.M)
    if machines > 1:
        text = re.sub(r"^( *)shards: 2( .*)?$", rf"\g<1>shards: {machines}", text, flags=re.M)
    else:
        text = re.sub(r"^ *shards: 2( .*)?\n", "", text, flags=re.M)
    text = text.replace("max-parallel: 2", f"max-parallel: {machines}")
    assert "uses: ./" not in text and "kernels/benchbot.yml" not in text
    return text
