"""callgrind's out files, read (benchbot.sandbox.callgrind) and made into inclusive costs and folded
stacks (benchbot.profiles.profile): on real files that valgrind writes here for a small C program
of known work, with each of the layouts callgrind's options give."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from benchbot.profiles import profile
from benchbot.sandbox import callgrind
from benchbot.sandbox.callgrind import Call, CallgrindError, Function, Profile

needs_valgrind = [
    pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler"),
    pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind not installed"),
]

# main calls kernel once, which calls helper N times; rec recurses on itself 5 deep, each
# level calling helper once; ping and pong call each other (mutual recursion) 4 deep.
PROGRAM = r"""
#include <stdio.h>
static volatile unsigned long sink;
__attribute__((noinline)) void helper(int n) { for (int i = 0; i < n; i++) sink += i; }
__attribute__((noinline)) void kernel(int n) { for (int i = 0; i < n; i++) helper(1000); }
__attribute__((noinline)) int rec(int d) { helper(500); return d == 0 ? 0 : 1 + rec(d - 1); }
__attribute__((noinline)) int pong(int d);
__attribute__((noinline)) int ping(int d) { helper(300); return d == 0 ? 0 : pong(d - 1); }
__attribute__((noinline)) int pong(int d) { helper(200); return d == 0 ? 0 : ping(d - 1); }
int main(void) {
    kernel(40);
    printf("%d %d %lu\n", rec(5), ping(4), sink);
    return 0;
}
"""
# The layouts: benchbot's own options, callgrind's defaults (recursion levels kept apart,
# line numbers), and instruction addresses with line numbers (two position columns),
# names not compressed.
LAYOUTS = {
    "benchbot": None,
    "defaults": [],
    "addresses": ["--dump-instr=yes", "--dump-line=yes", "--compress-strings=no",
                  "--compress-pos=no"],
}


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    for mark in needs_valgrind:
        if mark.args[0]:
            pytest.skip(mark.kwargs["reason"])
    where = tmp_path_factory.mktemp("callgrind")
    (where / "t.c").write_text(PROGRAM)
    subprocess.run(["cc", "-O1", "-g", "-o", str(where / "t"), str(where / "t.c")], check=True)
    out = {}
    for name, options in LAYOUTS.items():
        if options is None:
            argv = callgrind.argv("valgrind", [str(where / "t")], str(where), f"cg.{name}", "vg")
        else:
            argv = ["valgrind", "--tool=callgrind", *options,
                    f"--callgrind-out-file={where}/cg.{name}.%p", "--", str(where / "t")]
        subprocess.run(argv, check=True, capture_output=True, cwd=where)
        (path,) = where.glob(f"cg.{name}.*")
        out[name] = path
    return out


def _fn(p: Profile, name: str) -> Function:
    return p.functions[(name, "t")]


def _call(p: Profile, caller: str, callee: str) -> Call:
    return p.calls[((caller, "t"), (callee, "t"))]


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_a_real_file_reads_as_the_program_ran(written: dict[str, Path], layout: str) -> None:
    p = callgrind.read_file(written[layout])
    text = written[layout].read_text()
    summary = int(next(line for line in text.splitlines() if line.startswith(("summary:", "totals:")))
                  .split()[1])
    assert p.total_ir == summary
    # every instruction is some function's own
    assert sum(f.self_ir for f in p.functions.values()) == p.total_ir
    assert _call(p, "main", "kernel").calls == 1
    assert _call(p, "kernel", "helper").calls == 40
    # helper's own instructions: 40 calls of 1000 iterations, 6 of 500, 3 of 300, 2 of 200
    iterations = 40 * 1000 + 6 * 500 + 3 * 300 + 2 * 200
    assert iterations * 3 <= _fn(p, "helper").self_ir <= iterations * 8
    # a call's cost is inclusive: kernel's call holds kernel's own and helper's 40 calls
    assert _call(p, "main", "kernel").inclusive_ir == _fn(p, "kernel").self_ir + \
        _call(p, "kernel", "helper").inclusive_ir
    assert _fn(p, "main").file.endswith("t.c")
    assert ("printf", "libc.so.6") in p.functions


def test_every_layout_reads_the_same_functions(written: dict[str, Path]) -> None:
    read = {name: callgrind.read_file(path) for name, path in written.items()}
    mine = {k: f.self_ir for k, f in read["benchbot"].functions.items() if k[1] == "t"}
    for name, p in read.items():
        theirs = {k: f.self_ir for k, f in p.functions.items() if k[1] == "t"}
        assert theirs == mine, name  # recursion levels (rec'2) read as the function itself


def test_inclusive_costs_guard_recursion(written: dict[str, Path]) -> None:
    p = callgrind.read_file(written["defaults"])
    inclusive = profile.inclusive(p)
    rec, ping = inclusive[("rec", "t")], inclusive[("ping", "t")]
    # one call of rec from main holds everything rec did: adding its calls of itself
    # would count the deeper levels twice
    assert rec == _call(p, "main", "rec").inclusive_ir
    # ping and pong call each other: taken together, entered from main through ping
    assert ping == _call(p, "main", "ping").inclusive_ir
    assert inclusive[("kernel", "t")] == _call(p, "main", "kernel").inclusive_ir
    assert max(inclusive.values()) <= p.total_ir
    assert inclusive[("main", "t")] >= rec + ping + inclusive[("kernel", "t")]


def test_folded_stacks_add_up_and_follow_the_calls(written: dict[str, Path]) -> None:
    p = callgrind.read_file(written["benchbot"])
    # every stack, however small (by default a stack under 0.01% of the run is folded
    # into its parent)
    stacks = profile.folded(p, min_fraction=0.0)
    assert abs(sum(stacks.values()) - p.total_ir) <= len(stacks)
    small = profile.folded(p)
    assert len(small) < len(stacks) and abs(sum(small.values()) - p.total_ir) <= len(stacks)
    assert min(v for s, v in small.items() if ";" in s) >= profile.MIN_STACK_FRACTION * p.total_ir
    under = {s.split(";main;", 1)[1]: v for s, v in stacks.items() if ";main;" in s}
    assert under["kernel;helper"] == _call(p, "kernel", "helper").inclusive_ir
    # helper under rec: rec's own calls of helper, all levels (rec calls rec: the stack
    # ends there, and the deeper levels are rec's)
    assert "rec;helper" in under and "ping;pong;helper" in under
    # main is called once, from one place: its own instructions are one stack's
    assert [v for s, v in stacks.items() if s.endswith(";main")] == [_fn(p, "main").self_ir]


def test_json_round_trip(written: dict[str, Path]) -> None:
    p = callgrind.read_file(written["benchbot"])
    assert Profile.from_json(p.to_json()) == p


def test_several_processes_are_summed(written: dict[str, Path]) -> None:
    p = callgrind.read_file(written["benchbot"])
    both = callgrind.merged([p, p])
    assert both.total_ir == 2 * p.total_ir
    assert _fn(both, "helper").self_ir == 2 * _fn(p, "helper").self_ir
    assert _call(both, "kernel", "helper").calls == 80


def test_a_file_too_large_is_refused(written: dict[str, Path],
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(callgrind, "MAX_FILE_BYTES", 1000)
    with pytest.raises(CallgrindError, match="larger than"):
        callgrind.read_file(written["benchbot"])


@pytest.mark.parametrize(("text", "why"), [
    ("events: Ir\nfn=(3)\n0 5\n", "used before it is defined"),
    ("events: Ir\nfn=a\ncfn=b\ncalls=1 0\n", "ends after a calls= line"),
    ("events: Ir\n0 5\n", "outside any function"),
    ("events: Ir\nfn=a\n0 x\n", "not a count"),
    ("fn=a\n0 5\n", "no events"),
    ("events: Ir\nfn=a\nwhat is this\n", "not callgrind's"),
])
def test_what_is_not_callgrind_s_is_refused(text: str, why: str) -> None:
    with pytest.raises(CallgrindError, match=why):
        callgrind.parse(text.splitlines())


def test_the_format_s_compression_and_several_events() -> None:
    text = """\
# callgrind format
version: 1
positions: instr line
events: Dr Ir
ob=(1) /build/base/prog
fl=(1) /build/base/a.c
fn=(1) main
0x10 3 7 100
+2 * 0 5
cob=(2) /lib/libm.so.6
cfi=(2) m.c
cfn=(2) sqrt
calls=2 0x40 1
+1 * 1 30
fi=(3) inline.h
-1 +2 0 1
fe=(1)
fn=(2)
0x40 1 4 20
cfn=(3) 'quoted' name<with>*odd|chars'2
calls=1 0
* * 0 9
fn=(3)
0x50 2 0 9
totals: 11 135
"""
    p = callgrind.parse(text.splitlines())
    main, sqrt = ("main", "prog"), ("sqrt", "prog")
    assert p.functions[main].self_ir == 106 and p.functions[main].file == "/build/base/a.c"
    assert p.calls[(main, ("sqrt", "libm.so.6"))] == Call(main, ("sqrt", "libm.so.6"), 2, 30)
    # fn=(2) is sqrt's number, in the object set by ob= (prog): another function
    assert p.functions[sqrt].self_ir == 20
    odd = ("'quoted' name<with>*odd|chars", "prog")
    assert p.functions[odd].self_ir == 9 and p.calls[(sqrt, odd)].inclusive_ir == 9
    assert p.total_ir == 135
