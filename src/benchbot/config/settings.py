"""What a user may set over the config: one object, one set of bounds, applied once.

The command line (``--runs``, ``--only`` …), a ``/bench`` comment (``runs=N only=a,b`` …)
and the Action's inputs (``runs``, ``fail-on``) all become an ``Overrides``. Each value is
read by the same function whatever it came from (``read``), with the same bounds and the
same message; the config file checks its own keys with the same bounds (``check_*``) and
adds its file, line and key. There is one parser per kind of value (``switch``,
``seconds``, ``whole``, ``cpu_list``) and one formatter (``switch_word``,
``duration_words``). ``config.Config.with_overrides`` puts an ``Overrides`` over a config.

This module is a leaf: of benchbot's modules it imports only the model.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from benchbot.core.model import OUTCOMES, Outcome, ProfileMode, Shard

MIN_RUNS = 10
MAX_RUNS = 1000
MIN_BUDGET_S = 1.0
MAX_BUDGET_S = 86_400.0  # a day
MAX_SHARDS = 64  # machines one comparison is split over
DEFAULT_PARITY = 0.02  # differences below 2% count as level unless the config says otherwise
# The unit of a throughput (config ``unit``): shown beside its figures, so it holds
# nothing markdown or HTML would read.
UNIT_LABEL = re.compile(r"(?=.*[A-Za-z%µ])[A-Za-z0-9/%µ. ]{1,16}")

UNITS_S = {
    "ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0,
}  # fmt: skip
_NUMBER = r"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)"  # ASCII digits only, as _INT
_DURATION_PART = re.compile(rf"({_NUMBER})(ns|us|µs|μs|ms|s|m|h)")
_DURATION_RE = re.compile(rf"(?:{_NUMBER}(?:ns|us|µs|μs|ms|s|m|h))+")
DURATION_SYNTAX = rf"{_NUMBER}|{_DURATION_RE.pattern}"  # what ``seconds`` reads (stripped)

_INT = re.compile(r"[0-9]+")
_INT_DIGITS = 12  # more digits than any whole-number setting allows (and int() of thousands raises)
_FRACTION = re.compile(r"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(%?)")
WORKLOAD_NAME = re.compile(r"[A-Za-z0-9_.-]+")  # config ``name``
# /bench ``only=``: a workload or suite, or one benchmark of a suite (``core/BM_sort/1024``;
# a benchmark whose name holds other characters is measured with its whole suite).
# No ".." segment: nothing here is a path, and nothing that reads like one is taken.
ONLY_NAME = re.compile(r"(?!(?:.*/)?\.\.(?:/|$))[A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.:=/+-]+)?")
_ON = frozenset({"on", "true", "yes"})
_OFF = frozenset({"off", "false", "no"})
SWITCH_WORDS = _ON | _OFF  # any case; YAML 1.1 reads the same words as booleans
MAX_CPU = 4095  # highest CPU number a pin may name (Linux's default NR_CPUS is 8192 at most)
_CPU_ITEM = re.compile(r"^([0-9]+)(?:-([0-9]+))?$")


class SettingError(ValueError):
    """A value that is not one a setting may take; the message says which values are."""


# --- bounds, shared with the config file ------------------------------------------------


def check_runs(value: int) -> int:
    """Pairs per phase: MIN_RUNS to MAX_RUNS."""
    if isinstance(value, bool) or not isinstance(value, int) or not MIN_RUNS <= value <= MAX_RUNS:
        raise SettingError(
            f"must be from {MIN_RUNS} to {MAX_RUNS} (fewer than {MIN_RUNS} runs a side are "
            f"refused; more would hold the runner too long), got {value!r}"
        )
    return value


def seconds(text: str) -> float:
    """A duration in seconds: "60s", "500ms", "2m", "1m30s", "25us"/"25µs"; a bare number is
    seconds."""
    text = text.strip()
    if re.fullmatch(_NUMBER, text):
        return float(text)
    if _DURATION_RE.fullmatch(text):
        return sum(float(n) * UNITS_S[u] for n, u in _DURATION_PART.findall(text))
    raise SettingError(
        "not a duration: write a number and a unit (ns, us, ms, s, m, h), e.g. 500ms, 60s, "
        f"1m30s, got {_quoted(text)}"
    )


def check_budget(value: float) -> float:
    """The wall time a comparison may take: a second to a day (a bare number is seconds, so
    a budget below a second is a slip, not a plan)."""
    if (isinstance(value, bool) or not isinstance(value, (int, float))
            or not MIN_BUDGET_S <= value <= MAX_BUDGET_S):
        raise SettingError(f"must be from 1s to a day (24h), got {value!r} s")
    return float(value)


def check_max_runs(value: int) -> int:
    """The most pairs a workload is measured with: MIN_RUNS to MAX_RUNS."""
    if isinstance(value, bool) or not isinstance(value, int) or not MIN_RUNS <= value <= MAX_RUNS:
        raise SettingError(f"must be from {MIN_RUNS} to {MAX_RUNS} pairs, got {value!r}")
    return value


def check_design(runs: object, budget: object, max_runs: object,
                 spell: Callable[[str], str] = str) -> None:
    """``runs`` asks for a fixed number of pairs per phase, ``budget`` and ``max_runs`` for
    measuring each workload until it is settled: one source of settings may ask for one
    design only (``spell`` writes a key as that source names it, e.g. ``--max-runs``)."""
    if runs is None:
        return
    for key, value in (("budget", budget), ("max_runs", max_runs)):
        if value is not None:
            raise SettingError(f"{spell('runs')} and {spell(key)} cannot be given together: "
                               f"{designs(spell('runs'), spell(key))}; give one of them")


def designs(runs: str, sequential: str) -> str:
    """Why ``runs`` and a key of sequential measuring exclude each other, in the words of
    the source that gave them (the config names its keys and lines, a comment ``runs=``)."""
    return (f"{runs} asks for a fixed number of pairs per phase, {sequential} for measuring "
            "each workload until it is settled")


def check_shards(value: int) -> int:
    """How many shards a comparison is split into: 1 to MAX_SHARDS."""
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_SHARDS:
        raise SettingError(f"must be a whole number from 1 to {MAX_SHARDS}, got {value!r}")
    return value


def check_shard(value: Shard) -> Shard:
    """One shard of N: 1 <= K <= N <= MAX_SHARDS."""
    check_shards(value.count)
    if not 1 <= value.index <= value.count:
        raise SettingError(f"the shard K/{value.count} must have K from 1 to {value.count}, "
                           f"got {value.index}")
    return value


def check_parity(value: float) -> float:
    """The practical threshold: a fraction above 0 and below 1."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 1:
        raise SettingError(f"must be above 0 and below 1 (0.02 is 2%), got {value!r}")
    return float(value)


# --- reading text (a command line, a comment, an input) --------------------------------


def _quoted(text: str) -> str:
    """A value quoted back in a message: at most 40 characters of it."""
    return repr(text) if len(text) <= 40 else repr(text[:39]) + "…"


def whole(text: str, message: str, digits: int = _INT_DIGITS) -> int:
    """``text`` as a whole number written in at most ``digits`` ASCII digits."""
    if not _INT.fullmatch(text) or len(text) > digits:
        raise SettingError(f"{message}, got {_quoted(text)}")
    return int(text)


def _runs(text: str) -> int:
    return check_runs(whole(text, f"must be a whole number from {MIN_RUNS} to {MAX_RUNS}"))


def _only(text: str) -> tuple[str, ...]:
    names = tuple(n.strip() for n in text.split(","))
    if not names or not all(ONLY_NAME.fullmatch(n) for n in names):
        raise SettingError("must be workload or suite names separated by commas, e.g. "
                           "only=sort,sum (a suite's benchmark: only=core/BM_sort)")
    return tuple(dict.fromkeys(names))


def _parity(text: str) -> float:
    match = _FRACTION.fullmatch(text)
    if not match:
        raise SettingError("must be a fraction above 0 and below 1, e.g. 0.01 (or 1%), got "
                           + _quoted(text))
    return check_parity(float(text.rstrip("%")) / (100 if match.group(1) else 1))


def switch(text: str) -> bool:
    """On or off: on/yes/true or off/no/false, in any case."""
    low = text.lower()
    if low in _ON:
        return True
    if low in _OFF:
        return False
    raise SettingError(f"must be on or off, got {_quoted(text)}")


def _outcomes(text: str) -> tuple[Outcome, ...]:
    items = [x.strip() for x in text.split(",") if x.strip()]
    bad = [x for x in items if x not in OUTCOMES]
    if bad:
        raise SettingError(f"unknown outcome {_quoted(bad[0])}; choose from {', '.join(OUTCOMES)}")
    return tuple(o for o in OUTCOMES if o in items)


def _budget(text: str) -> float:
    return check_budget(seconds(text))


def _max_runs(text: str) -> int:
    return check_max_runs(whole(text, f"must be a whole number from {MIN_RUNS} to {MAX_RUNS}"))


_SHARD = re.compile(r"([0-9]{1,6})/([0-9]{1,6})")


def _shard(text: str) -> Shard:
    match = _SHARD.fullmatch(text)
    if not match:
        raise SettingError(f"must be K/N, the shard K of N (e.g. 2/3), got {_quoted(text)}")
    return check_shard(Shard(index=int(match[1]), count=int(match[2])))


def _shards(text: str) -> int:
    return check_shards(whole(text, f"must be a whole number from 1 to {MAX_SHARDS}", 6))


PROFILE_MODES: tuple[ProfileMode, ...] = ("called", "all", "off")


def _profile(text: str) -> ProfileMode:
    low = text.lower()
    if low not in PROFILE_MODES:
        raise SettingError("must be called (profile the workloads called slower or faster), "
                           f"all or off, got {_quoted(text)}")
    return low


def _seed(text: str) -> int:
    seed = whole(text, "must be a whole number from 0 to 2^63-1", 19)
    if seed >= 2**63:
        raise SettingError(f"must be a whole number from 0 to 2^63-1, got {_quoted(text)}")
    return seed


READERS: dict[str, Callable[[str], Any]] = {
    "runs": _runs, "only": _only, "parity": _parity, "confirm": switch, "aa": switch,
    "fail_on": _outcomes, "seed": _seed, "budget": _budget, "max_runs": _max_runs,
    "shard": _shard, "shards": _shards, "profile": _profile,
}  # fmt: skip


def read(name: str, text: str) -> Any:
    """The value of setting ``name`` written as ``text``; SettingError says what is allowed."""
    return READERS[name](text.strip())


def argparse_type(name: str) -> Callable[[str], Any]:
    """An argparse ``type=`` that reads the setting (and reports its message)."""
    import argparse

    def convert(text: str) -> Any:
        try:
            return read(name, text)
        except SettingError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    convert.__name__ = name
    return convert


# --- the object -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Overrides:
    """Settings put over the config's (None: the config's own)."""

    runs: int | None = None
    only: tuple[str, ...] | None = None
    parity: float | None = None
    confirm: bool | None = None
    aa: bool | None = None
    fail_on: tuple[Outcome, ...] | None = None
    seed: int | None = None
    budget: float | None = None  # seconds of wall time for the whole comparison
    max_runs: int | None = None  # the most pairs a workload is measured with
    all: bool | None = None  # True: measure every workload, whatever its ``paths`` say
    # Which workloads are profiled (benchbot.profiles.profiling): "all" from --profile or
    # /bench profile; None: the config's (those called slower or faster)
    profile: ProfileMode | None = None

    def __post_init__(self) -> None:
        if self.runs is not None:
            check_runs(self.runs)
        if self.parity is not None:
            check_parity(self.parity)
        if self.budget is not None:
            check_budget(self.budget)
        if self.max_runs is not None:
            check_max_runs(self.max_runs)
        check_design(self.runs, self.budget, self.max_runs)

    @property
    def sequential(self) -> bool:
        """Whether these settings ask for sequential measuring (a budget or max_runs, no runs)."""
        return self.runs is None and (self.budget is not None or self.max_runs is not None)

    def over(self, other: Overrides) -> Overrides:
        """These settings, with ``other``'s where it sets one (``other`` wins). Where
        ``other`` asks for the other design (``runs``, or ``budget``/``max_runs``), these
        settings' keys of the first design are dropped with it."""
        mine = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        theirs = {f.name: getattr(other, f.name) for f in dataclasses.fields(other)}
        if other.runs is not None:
            mine.update(budget=None, max_runs=None)
        if other.sequential:
            mine.update(runs=None)
        return Overrides(**{k: theirs[k] if theirs[k] is not None else v for k, v in mine.items()})

    def words(self, names: Sequence[str] = ("all", "profile", "runs", "budget", "max_runs",
                                            "only", "parity", "confirm", "aa")) -> str:
        """The settings as words, as a /bench comment writes them: ``all``, ``key=value``."""
        parts: list[str] = []
        for name in names:
            value = getattr(self, name)
            if value is None:
                continue
            if name == "all":
                parts.extend(["all"] if value else [])
            elif name == "profile":
                parts.extend(["profile"] if value == "all" else [f"profile={value}"])
            elif isinstance(value, bool):
                parts.append(f"{name}={switch_word(value)}")
            elif name == "budget":
                parts.append(f"budget={duration_words(value)}")
            elif isinstance(value, tuple):
                parts.append(f"{name}={','.join(value)}")
            elif isinstance(value, float):
                parts.append(f"{name}={value:g}")
            else:
                parts.append(f"{name}={value}")
        return " ".join(parts)


def duration_words(value: float) -> str:
    """Seconds as a user writes them: 600 -> "10m", 90 -> "1m30s", 2.5 -> "2.5s"."""
    if value >= 60 and float(value).is_integer():
        minutes, rest = divmod(int(value), 60)
        hours, minutes = divmod(minutes, 60)
        text = (f"{hours}h" if hours else "") + (f"{minutes}m" if minutes else "")
        return text + (f"{rest}s" if rest else "")
    return f"{value:g}s"


def switch_word(value: bool) -> str:
    """A switch as a user writes it: on or off."""
    return "on" if value else "off"


def cpu_list(text: str) -> tuple[int, ...]:
    """CPU numbers written as a list such as "0,2-3", sorted and without repeats."""
    cpus: list[int] = []
    for piece in (p.strip() for p in text.split(",")):
        match = _CPU_ITEM.match(piece)
        if match is None:
            raise SettingError(f"bad CPU list {text!r}: {piece!r} is not a CPU number "
                               "or a range like 2-3")
        low, high = int(match[1]), int(match[2] or match[1])
        if high < low:
            raise SettingError(f"bad CPU list {text!r}: range {piece!r} runs backwards")
        if high > MAX_CPU:
            raise SettingError(f"bad CPU list {text!r}: CPU numbers go up to {MAX_CPU}")
        cpus.extend(range(low, high + 1))
    return tuple(sorted(set(cpus)))
