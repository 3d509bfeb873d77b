"""The arithmetic on profiles (benchbot.profiles.profile): base, base again and head compared function
by function, and call graphs folded into stacks, on profiles written out by hand."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from benchbot.profiles import profile
from benchbot.sandbox.callgrind import Call, Function, Profile


def _profile(own: Mapping[str, int], calls: Mapping[tuple[str, str], int] = (),  # type: ignore[assignment]
             files: Mapping[str, str] | None = None) -> Profile:
    key = {name: (name, "prog") for name in own}
    functions = {key[n]: Function(n, "prog", (files or {}).get(n, "/w/base/src/x.c"), ir)
                 for n, ir in own.items()}
    edges = {(key[a], key[b]): Call(key[a], key[b], 1, ir) for (a, b), ir in dict(calls).items()}
    return Profile(functions=functions, calls=edges, total_ir=sum(own.values()))


def _graph(main: int, sort: int, helper: int, other: int) -> Profile:
    """main -> sort -> helper, main -> other (each figure a function's own instructions)."""
    return _profile({"main": main, "sort": sort, "helper": helper, "other": other},
                    {("main", "sort"): sort + helper, ("sort", "helper"): helper,
                     ("main", "other"): other})


def test_only_what_moved_beyond_its_noise_and_the_floor_is_named() -> None:
    base = _graph(1_000, 500_000, 300_000, 200_000)
    again = _graph(1_000, 500_000, 300_000, 200_300)  # other: noise 300
    head = _graph(1_000, 650_000, 300_000, 200_500)  # sort +150k; other +500, within 2x noise
    table = profile.compare(base, again, head, seconds=1.5, places=["/w/base"])
    assert [f.name for f in table.functions] == ["sort"]
    (sort,) = table.functions
    assert sort.delta == 150_000 and sort.base_self == 500_000 and sort.head_self == 650_000
    assert sort.base_inclusive == 800_000 and sort.head_inclusive == 950_000
    assert sort.share == pytest.approx(150_000 / 150_500, abs=1e-4)
    assert sort.noise == 0 and sort.file == "src/x.c"
    assert table.moved_within_noise == 1 and table.more == 0
    assert table.base_total == 1_001_000 and table.head_total == 1_151_500
    assert table.floor == 1_001 and table.seconds == 1.5 and table.runs == 3


def test_a_move_below_the_floor_is_not_named_even_without_noise() -> None:
    base = _graph(1_000, 500_000, 300_000, 200_000)
    head = _graph(1_000, 500_900, 300_000, 200_000)  # +900: under 0.1% of 1,001,000
    table = profile.compare(base, base, head, seconds=0.0)
    assert table.functions == () and table.moved_within_noise == 1


def test_functions_are_sorted_by_the_size_of_their_change_either_way() -> None:
    base = _graph(1_000, 500_000, 300_000, 200_000)
    head = _graph(1_000, 450_000, 400_000, 190_000)
    table = profile.compare(base, base, head, seconds=0.0)
    assert [(f.name, f.delta) for f in table.functions] == [
        ("helper", 100_000), ("sort", -50_000), ("other", -10_000)]
    assert table.functions[0].share == pytest.approx(100_000 / 40_000)


def test_a_function_only_head_has_is_named_and_shares_are_none_when_the_total_holds() -> None:
    base = _profile({"main": 10_000, "old": 5_000})
    head = _profile({"main": 10_000, "new": 5_000})
    table = profile.compare(base, base, head, seconds=0.0)
    assert {(f.name, f.delta) for f in table.functions} == {("new", 5_000), ("old", -5_000)}
    assert all(f.share is None for f in table.functions)


def test_at_most_max_rows_are_kept_and_the_rest_counted() -> None:
    names = [f"f{i}" for i in range(profile.MAX_ROWS + 5)]
    base = _profile(dict.fromkeys(names, 1_000_000))
    head = _profile({n: 1_000_000 + 100_000 * (i + 1) for i, n in enumerate(names)})
    table = profile.compare(base, base, head, seconds=0.0)
    assert len(table.functions) == profile.MAX_ROWS and table.more == 5
    assert table.functions[0].name == names[-1]


def test_a_callee_s_cost_is_split_over_its_callers_by_what_each_call_cost() -> None:
    # helper is called from a (3/4 of its cost) and b (1/4)
    p = _profile({"main": 0, "a": 100, "b": 100, "helper": 800},
                 {("main", "a"): 700, ("main", "b"): 300, ("a", "helper"): 600,
                  ("b", "helper"): 200})
    assert profile.folded(p) == {"main;a": 100, "main;a;helper": 600, "main;b": 100,
                                 "main;b;helper": 200}


def test_recursion_ends_a_stack_and_costs_are_kept() -> None:
    # f and g call each other; main -> f
    p = _profile({"main": 10, "f": 100, "g": 50},
                 {("main", "f"): 150, ("f", "g"): 120, ("g", "f"): 70})
    stacks = profile.folded(p)
    assert set(stacks) == {"main", "main;f", "main;f;g", "main;f;g;f"}
    assert sum(stacks.values()) == pytest.approx(10 + 150, abs=2)
    inclusive = profile.inclusive(p)
    # f and g are one cycle: its own instructions, no call counted twice
    assert inclusive[("f", "prog")] == inclusive[("g", "prog")] == 150
    assert inclusive[("main", "prog")] == 160


def test_a_call_of_itself_adds_nothing_to_a_function() -> None:
    p = _profile({"main": 10, "rec": 100}, {("main", "rec"): 100, ("rec", "rec"): 80})
    assert profile.inclusive(p)[("rec", "prog")] == 100
    assert profile.folded(p) == {"main": 10, "main;rec": 100}


def test_deep_stacks_stop_at_the_depth_cap_with_their_cost() -> None:
    names = [f"f{i}" for i in range(10)]
    own = {n: 10 for n in names}
    calls = {(names[i], names[i + 1]): 10 * (9 - i) for i in range(9)}
    stacks = profile.folded(_profile(own, calls), max_depth=4)
    assert max(s.count(";") for s in stacks) == 3
    assert stacks["f0;f1;f2;f3"] == 70 and sum(stacks.values()) == 100


def test_the_smallest_stacks_fold_into_their_parents() -> None:
    own = {"main": 0, **{f"f{i}": i + 1 for i in range(10)}}
    calls = {("main", f"f{i}"): i + 1 for i in range(10)}
    stacks = profile.folded(_profile(own, calls), max_stacks=5)
    assert len(stacks) <= 5 and sum(stacks.values()) == 55
    assert stacks["main;f9"] == 10 and stacks["main"] > 0


def test_folded_keeps_names_as_they_are() -> None:
    odd = "std::vector<int, std::allocator<int> >::operator[](unsigned long) const"
    p = _profile({"main": 5, odd: 10}, {("main", odd): 10})
    assert profile.folded(p) == {"main": 5, f"main;{odd}": 10}


def test_no_profile_says_why() -> None:
    table = profile.missing("the head run: callgrind: not profiled: …", seconds=2.0, runs=3)
    assert table.error and table.functions == () and table.stacks is None


