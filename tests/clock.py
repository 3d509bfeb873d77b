"""A clock that moves only when told to, for spending a budget without waiting for it."""

from __future__ import annotations


class FakeClock:
    """Seconds, as ``time.monotonic`` gives them; a fake spawner advances it by the time
    each run it reports took, so the engine's budget runs out as it would for real."""

    def __init__(self, start: float = 1000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        """Let ``seconds`` pass."""
        if seconds < 0:
            raise ValueError(f"a clock does not go back ({seconds} s)")
        self.now += seconds
