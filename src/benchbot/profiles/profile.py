"""Where a called change is: each function's instructions, head against base.

After the verdicts, a workload (or a suite's benchmark) called ``slower`` or ``faster``
(every one, where asked: ``--profile``, ``/bench profile``) is run once more per arm
under valgrind's callgrind: base, base again and head (``measure.counted.profile_called``),
in the same protected place as the counted runs (``counting.ValgrindPlace``,
``counting.audit_valgrind``; docs/security.md, "Counts"). This module is the arithmetic
on what those runs recorded (``callgrind.Profile``); no I/O.

- ``inclusive``: each function's instructions with those of everything it called.
- ``folded``: one run's profile as folded stacks (``"main;sort;merge" -> Ir``, Brendan
  Gregg's format: each stack's own instructions), for a flame graph.
- ``compare``: base, base again and head, function by function. A function's noise is
  how far its own instructions moved from base to base again (the same build, another
  run); it is named only where head moved it by more than ``NOISE_FACTOR`` times that and
  by more than ``FLOOR_FRACTION`` of base's total; its share of the change is its own
  instructions' change over the whole run's.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

from benchbot.core.model import FoldedStacks, ProfiledFunction, ProfileTable
from benchbot.sandbox.callgrind import Key, Profile

# A function is named where its own instructions moved by more than this many times its
# noise (base against base again: one difference, a rough measure of it) ...
NOISE_FACTOR = 2.0
# ... and by more than this fraction of base's whole run (0.1%).
FLOOR_FRACTION = 0.001
MAX_ROWS = 20  # the named functions a profile keeps, largest change first
# folded: how deep a stack goes, and how small a share of the run is still expanded
MAX_DEPTH = 64
MIN_STACK_FRACTION = 1e-4
MAX_STACKS = 2_000  # the most stacks kept per arm (the smallest are folded into their parents)


def inclusive(p: Profile) -> dict[Key, int]:
    """Each function's inclusive instructions: its own, and its calls' (a call's cost is
    inclusive already). A call of itself (recursion) adds nothing, its instructions are
    its own already. Functions that call each other in a cycle (mutual recursion) are
    taken together, as one function, so that nothing is counted twice: each gets the
    cycle's own instructions and its calls out of the cycle (at most the run's total)."""
    outs: dict[Key, list[tuple[Key, int]]] = {k: [] for k in p.functions}
    for (caller, callee), call in p.calls.items():
        if caller != callee:
            outs.setdefault(caller, []).append((callee, call.inclusive_ir))
            outs.setdefault(callee, [])
    component = _components(outs)
    members: dict[int, list[Key]] = {}
    for key, c in component.items():
        members.setdefault(c, []).append(key)
    own = {k: f.self_ir for k, f in p.functions.items()}
    by_component: dict[int, int] = {}
    for c, keys in members.items():
        by_component[c] = sum(own.get(k, 0) for k in keys) + sum(
            ir for k in keys for g, ir in outs[k] if component[g] != c)
    cap = max(p.total_ir, sum(own.values()))
    return {k: min(cap, by_component[component[k]]) for k in outs}


def _components(outs: Mapping[Key, Sequence[tuple[Key, int]]]) -> dict[Key, int]:
    """The strongly connected components of the call graph (Tarjan's, without recursion):
    each function's component's number."""
    index: dict[Key, int] = {}
    low: dict[Key, int] = {}
    on_stack: set[Key] = set()
    stack: list[Key] = []
    component: dict[Key, int] = {}
    counter = 0
    components = 0
    for start in outs:
        if start in index:
            continue
        work: list[tuple[Key, int]] = [(start, 0)]
        while work:
            node, at = work.pop()
            if at == 0:
                index[node] = low[node] = counter
                counter += 1
                stack.append(node)
                on_stack.add(node)
            edges = outs[node]
            while at < len(edges):
                child = edges[at][0]
                at += 1
                if child not in index:
                    work.append((node, at))
                    work.append((child, 0))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                if low[node] == index[node]:
                    while True:
                        top = stack.pop()
                        on_stack.discard(top)
                        component[top] = components
                        if top == node:
                            break
                    components += 1
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
    return component


def folded(p: Profile, *, max_depth: int = MAX_DEPTH, min_fraction: float = MIN_STACK_FRACTION,
           max_stacks: int = MAX_STACKS) -> dict[str, int]:
    """The run as folded stacks: ``"main;sort;merge" -> instructions`` of the stack's last
    function itself, names as callgrind gave them (not escaped).

    An approximation: callgrind records calls from one function to another (edges), not
    whole stacks. The stacks are grown from the functions nobody calls (each thread's
    start), and a function's instructions are split over its callers in proportion to
    what each call of it cost (a function called from two places with one cheap and one
    dear argument is drawn as if each call cost the same share). A function already on
    the stack (recursion) ends it; a stack deeper than ``max_depth``, or carrying less
    than ``min_fraction`` of the run, stops growing and keeps its callees' instructions
    as its last function's; a stack that ends with less than that share is folded into its
    parent. At most ``max_stacks``: the smallest are folded into their parents. The stacks
    add up to the run's instructions, rounding aside."""
    outs: dict[Key, list[tuple[Key, int]]] = {k: [] for k in p.functions}
    called: set[Key] = set()
    for (caller, callee), call in p.calls.items():
        if caller != callee and call.inclusive_ir > 0:
            outs.setdefault(caller, []).append((callee, call.inclusive_ir))
            outs.setdefault(callee, [])
            called.add(callee)
    own = {k: f.self_ir for k, f in p.functions.items()}
    local = {k: own.get(k, 0) + sum(ir for _g, ir in edges) for k, edges in outs.items()}
    roots = [k for k in outs if k not in called and local[k] > 0]
    # Functions only ever reached through a cycle nobody enters (no root above them):
    # the cycle's dearest function stands for its start.
    component = _components(outs)
    entered = {component[c] for k in outs for c, _ in outs[k] if component[c] != component[k]}
    entered |= {component[k] for k in roots}
    for c in sorted({component[k] for k in outs} - entered):
        roots.append(max((k for k in outs if component[k] == c), key=lambda k: (local[k], k)))
    minimum = max(p.total_ir, 1) * min_fraction
    stacks: dict[str, float] = {}
    work: list[tuple[str, tuple[Key, ...], Key, float]] = [
        (k[0], (k,), k, float(local[k])) for k in sorted(roots)]
    while work:
        path, above, key, amount = work.pop()
        whole = local[key]
        if whole <= 0 or amount <= 0:
            continue
        if len(above) >= max_depth or amount < minimum:
            stacks[path] = stacks.get(path, 0.0) + amount
            continue
        stacks[path] = stacks.get(path, 0.0) + amount * own.get(key, 0) / whole
        for callee, ir in outs[key]:
            share = amount * ir / whole
            name = callee[0]
            if callee in above:  # recursion through others: the stack ends here
                stacks[f"{path};{name}"] = stacks.get(f"{path};{name}", 0.0) + share
            else:
                work.append((f"{path};{name}", (*above, callee), callee, share))
    return trimmed({s: round(v) for s, v in stacks.items() if round(v) > 0}, max_stacks,
                    minimum)


def trimmed(stacks: dict[str, int], most: int, minimum: float = 0.0) -> dict[str, int]:
    """Each stack below ``minimum`` folded into its parent (deepest first, so that what
    they add up to may stand as the parent's), then at most ``most`` stacks: the smallest
    folded into their parents."""
    for path in sorted(stacks, key=lambda s: -s.count(";")):
        if path in stacks and stacks[path] < minimum and ";" in path:
            parent = path.rsplit(";", 1)[0]
            stacks[parent] = stacks.get(parent, 0) + stacks.pop(path)
    while len(stacks) > most:
        deepest = max(s.count(";") for s in stacks)
        if deepest == 0:
            break
        cut = sorted(stacks.items(), key=lambda kv: kv[1])[: len(stacks) - most]
        moved = False
        for path, value in cut:
            if ";" not in path:
                continue
            parent = path.rsplit(";", 1)[0]
            del stacks[path]
            stacks[parent] = stacks.get(parent, 0) + value
            moved = True
        if not moved:
            break
    return stacks


def _shown_file(path: str, places: Sequence[str]) -> str:
    """A source file as the report shows it: relative to the arm's place where it lies in
    one (the same file reads the same in base's worktree and head's)."""
    for place in places:
        root = place.rstrip("/") + "/"
        if path.startswith(root):
            return path[len(root):]
    return path


def compare(base: Profile, again: Profile, head: Profile, *, seconds: float,
            places: Sequence[str] = (), runs: int = 3,
            stacks: bool = True) -> ProfileTable:
    """Base, base again and head's profiles, function by function (module docstring):
    the functions that moved beyond their noise, largest change first. ``places``: the
    arms' directories, taken off the source files shown; ``stacks``: keep base's and
    head's folded stacks (``folded``) for a flame graph."""
    arms = {"base": base, "again": again, "head": head}
    incl = {arm: inclusive(p) for arm, p in arms.items()}
    keys = sorted({k for p in arms.values() for k in p.functions})
    floor = max(1, round(FLOOR_FRACTION * base.total_ir))
    total_delta = head.total_ir - base.total_ir
    rows: list[ProfiledFunction] = []
    within = 0
    for key in keys:
        own = {arm: p.functions[key].self_ir if key in p.functions else 0
               for arm, p in arms.items()}
        whole = {arm: incl[arm].get(key, 0) for arm in arms}
        delta = own["head"] - own["base"]
        noise = abs(own["again"] - own["base"])
        if delta == 0:
            continue
        if abs(delta) <= max(NOISE_FACTOR * noise, floor):
            within += 1
            continue
        where = head.functions.get(key) or base.functions[key]
        rows.append(ProfiledFunction(
            name=key[0], object=key[1], file=_shown_file(where.file, places),
            base_self=own["base"], head_self=own["head"],
            base_inclusive=whole["base"], head_inclusive=whole["head"], delta=delta,
            share=round(delta / total_delta, 4) if total_delta else None,
            noise=noise, noise_inclusive=abs(whole["again"] - whole["base"])))
    rows.sort(key=lambda r: (-abs(r.delta), r.name, r.object))
    return ProfileTable(
        runs=runs, seconds=round(seconds, 3), base_total=base.total_ir,
        base_again_total=again.total_ir, head_total=head.total_ir, floor=floor,
        functions=tuple(rows[:MAX_ROWS]), more=max(0, len(rows) - MAX_ROWS),
        moved_within_noise=within,
        stacks=FoldedStacks(base=folded(base), head=folded(head)) if stacks else None)


def missing(why: str, *, seconds: float, runs: int) -> ProfileTable:
    """No profile, and why (a run failed, or its record of valgrind's files was refused)."""
    return ProfileTable(runs=runs, seconds=round(seconds, 3), error=why)


def places_of(*paths: str | os.PathLike[str]) -> tuple[str, ...]:
    """The places a profile's source files are shown relative to, deepest first."""
    return tuple(sorted({os.fspath(p) for p in paths}, key=len, reverse=True))
