"""Generated benchmark suites for benchmarks/suites.py: a Go package and a google-benchmark
program of 25 benchmarks each, with realistic kernels (hashing, sorting, parsing, maps,
allocation, arithmetic), as a git repository whose head changes some of them; and a
pytest-benchmark suite of 11 (``pybench``, issue 39: a harness run of about 10 s, below).

Every benchmark's operation runs its kernel ``reps`` times (a package-level variable in Go,
a ``volatile`` in C++, so that the compiler cannot fold the trip count into other code);
base has 20 of every benchmark. The head of the ``changed`` scenario gives 10 benchmarks
21 (5% more work), 3 benchmarks 19 (5% less) and leaves 12 unchanged, one of them
layout-only: a function that never runs, placed before its kernel, is larger at the head,
so the same instructions sit at other addresses. The ``identical`` scenario's head changes
a README only. The ``memory`` scenario adds four memory-bound benchmarks (``MEMORY``) to
the 25, which leaves unchanged: each walks ``k`` elements of a 32 MiB array (four times
the simulated 8 MiB last level of ``counting.SIMULATED_CACHE``), every load's index
depending on the load before, then runs a fixed arithmetic loop seeded by what it read.
Base walks the array in order (``mul`` 1), the head by a multiplicative permutation of it
(``mul`` odd and large): the same instructions, one last-level miss per access instead of
one per four, and its time +8% or +30% on this VM by the number of accesses.

Runs are kept short (Go ``-test.benchtime 20ms``, google-benchmark
``--benchmark_min_time=0.02``), as users keep CI suites short, and single runs vary by
more than ±20% on a shared 2-core VM (benchmarks/README.md gives the spread measured).
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

BASE_REPS = 20
MORE = ("Fnv", "Sha", "SortInts", "ParseInts", "Json", "MapInsert", "Alloc", "MatMul",
        "Base64", "Popcount")  # 21 reps at the head: +5% work
LESS = ("Murmur", "SplitCsv", "Compare")  # 19 reps: -5% work
LAYOUT = "Search"  # the same instructions, other addresses
# Every benchmark, in source order (the layout-only one last: only it moves).
NAMES = ("Fnv", "Crc", "Sha", "XorShift", "Murmur", "SortInts", "InsertionSort",
         "SortStrings", "BinarySearch", "ParseInts", "FormatInts", "Json", "SplitCsv",
         "Tokenize", "MapInsert", "MapLookup", "MapIterate", "Alloc", "Builder", "MatMul",
         "Compare", "Reverse", "Base64", "Popcount", "Search")
SCENARIOS = ("changed", "identical", "memory", "helper", "wide")
# The helper scenario (issue 41, benchmarks/profile.py): these benchmarks also call one
# helper function (``Mix``: MIX_ROUNDS rounds of a xorshift, never inlined) once per
# operation; the head makes it 10% slower (MIX_ROUNDS_HEAD rounds) and changes nothing
# else, so that their profiles must name Mix, and nothing else, as what moved.
HELPED = ("Fnv", "XorShift", "Murmur", "Popcount")
MIX_ROUNDS, MIX_ROUNDS_HEAD = 400, 440
HELPER = "Mix"
# The ``wide`` scenario (google-benchmark only; issue 39's suite across shards): 200
# benchmarks, the 25 kernels WIDE_COPIES times each (``Fnv_0`` ... ``Fnv_7``), the first
# WIDE_CHANGED copies of each as in ``changed`` (so 20 do 5% more work, 6 do 5% less) and
# the other copies unchanged; the 8 copies of the layout-only kernel all call the one
# function that moves at the head (layout-only), so 26 change and 174 do not.
WIDE_COPIES, WIDE_CHANGED = 8, 2
# The memory scenario's benchmarks: (arithmetic loop, accesses an operation in Go, in C++);
# the loop is 4000 rounds of a xorshift (about 7 instructions a round) or of an FNV-style
# multiply (about 4). The accesses were tuned so that the head's time moves by about the
# figure in the name on this VM, loaded (benchmarks/README.md, section 16, gives what they
# read): an access out of order costs 150-300 ns here.
MEMORY: dict[str, tuple[str, int, int]] = {
    "MemXor8": ("MemXor", 2, 3), "MemXor30": ("MemXor", 11, 11),
    "MemFnv8": ("MemFnv", 2, 2), "MemFnv30": ("MemFnv", 6, 9),
}
MEMORY_WORDS = 1 << 22  # 32 MiB of uint64
# The memory benchmarks come first in both harnesses' sources, so first in their listings,
# so that benchbot counts them first: on this VM at load 10-12 a Go benchmark's counted runs
# take 13-27 s, and the 29 of them more than the default budget (benchmarks/README.md,
# section 16); listed last, the memory benchmarks were never counted.
MEMORY_FIRST = True
SEQUENTIAL_MUL, HOSTILE_MUL = 1, 0x9E3779B1  # index = (position * mul + sum) mod the size


def names(harness: str, scenario: str = "changed") -> tuple[str, ...]:
    """Every benchmark of a harness's suite in a scenario, in the order reports list them
    (their short names)."""
    if harness == "pybench":
        return PY_NAMES
    if scenario == "wide":
        return tuple(f"{n}_{c}" for c in range(WIDE_COPIES) for n in NAMES)
    return NAMES + tuple(MEMORY) if scenario == "memory" else NAMES


def expected(name: str, scenario: str) -> str:
    """What the head does to a benchmark: more, less, same (layout: same instructions),
    memory (the same instructions, more last-level misses)."""
    if scenario == "memory":
        return "memory" if name in MEMORY else "same"
    if scenario == "helper":
        return "more" if name in HELPED else "same"
    if scenario == "identical":
        return "same"
    if scenario == "wide":
        kernel, copy = name.rsplit("_", 1)  # every copy of the layout-only kernel calls it
        return expected(kernel, "changed") if int(copy) < WIDE_CHANGED or kernel == LAYOUT else "same"
    if name in MORE:
        return "more"
    if name in LESS:
        return "less"
    return "layout" if name == LAYOUT else "same"


def reps(scenario: str, side: str) -> dict[str, int]:
    """Each benchmark's reps in one side of a scenario."""
    out = dict.fromkeys(names("go", scenario), BASE_REPS)
    if side == "head" and scenario == "changed":
        out.update(dict.fromkeys(MORE, BASE_REPS + 1))
        out.update(dict.fromkeys(LESS, BASE_REPS - 1))
    return out


def pad_bytes(scenario: str, side: str) -> int:
    """The never-run function's size before the layout-only kernel (bytes of nops/code)."""
    return 200 if side == "head" and scenario in ("changed", "wide") else 8


def mix_rounds(side: str) -> int:
    """The helper's rounds in one side of the helper scenario."""
    return MIX_ROUNDS_HEAD if side == "head" else MIX_ROUNDS


def memory_mul(scenario: str, side: str) -> int:
    """The memory benchmarks' index multiplier: in order at base, scattered at the head."""
    return HOSTILE_MUL if side == "head" and scenario == "memory" else SEQUENTIAL_MUL


# --- Go --------------------------------------------------------------------------------

GO_MOD = "module example.com/suite\n\ngo 1.19\n"

GO_KERNELS = r'''// Package suite holds the kernels of a generated benchmark suite (benchbot's benchmarks).
package suite

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"hash/crc32"
	"math/bits"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

var Sink uint64

func Fnv(buf []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range buf {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return h
}

func Crc(buf []byte) uint64 { return uint64(crc32.ChecksumIEEE(buf)) }

func Sha(buf []byte) uint64 { s := sha256.Sum256(buf); return uint64(s[0]) | uint64(s[9])<<8 }

func XorShift(seed uint64) uint64 {
	x := seed | 1
	for i := 0; i < 400; i++ {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	return x
}

func Murmur(v []uint64) uint64 {
	h := uint64(0x9E3779B97F4A7C15)
	for _, k := range v {
		k *= 0xff51afd7ed558ccd
		k ^= k >> 33
		h ^= k
		h = bits.RotateLeft64(h, 27)*5 + 0x52dce729
	}
	return h
}

func SortInts(src, work []int) uint64 { copy(work, src); sort.Ints(work); return uint64(work[7]) }

func InsertionSort(src, work []int) uint64 {
	copy(work, src)
	for i := 1; i < len(work); i++ {
		for j := i; j > 0 && work[j] < work[j-1]; j-- {
			work[j], work[j-1] = work[j-1], work[j]
		}
	}
	return uint64(work[3])
}

func SortStrings(src, work []string) uint64 { copy(work, src); sort.Strings(work); return uint64(len(work[5])) }

func BinarySearch(sorted []int, keys []int) uint64 {
	var n uint64
	for _, k := range keys {
		n += uint64(sort.SearchInts(sorted, k))
	}
	return n
}

func ParseInts(words []string) uint64 {
	var n uint64
	for _, w := range words {
		v, _ := strconv.Atoi(w)
		n += uint64(v)
	}
	return n
}

func FormatInts(vals []int, out []byte) uint64 {
	out = out[:0]
	for _, v := range vals {
		out = strconv.AppendInt(out, int64(v), 10)
	}
	return uint64(len(out))
}

type Record struct {
	Name  string  `json:"name"`
	ID    int     `json:"id"`
	Tags  []string `json:"tags"`
	Score float64 `json:"score"`
}

func Json(doc []byte) uint64 { var r Record; _ = json.Unmarshal(doc, &r); return uint64(r.ID + len(r.Tags)) }

func SplitCsv(line string) uint64 { return uint64(len(strings.Split(line, ","))) }

func Tokenize(text []byte) uint64 { return uint64(len(bytes.Fields(text))) }

func MapInsert(keys []string) uint64 {
	m := make(map[string]int)
	for i, k := range keys {
		m[k] = i
	}
	return uint64(len(m))
}

func MapLookup(m map[int]int, keys []int) uint64 {
	var n uint64
	for _, k := range keys {
		n += uint64(m[k])
	}
	return n
}

func MapIterate(m map[int]int) uint64 {
	var n uint64
	for k, v := range m {
		n += uint64(k ^ v)
	}
	return n
}

func Alloc(n int) uint64 {
	var total uint64
	for i := 0; i < n; i++ {
		b := make([]byte, 64+i%32)
		b[0] = byte(i)
		total += uint64(len(b)) + uint64(b[0])
	}
	return total
}

func Builder(parts []string) uint64 {
	var sb strings.Builder
	for _, p := range parts {
		sb.WriteString(p)
		sb.WriteByte(' ')
	}
	return uint64(sb.Len())
}

func MatMul(a, b, c *[12][12]float64) uint64 {
	for i := 0; i < 12; i++ {
		for j := 0; j < 12; j++ {
			s := 0.0
			for k := 0; k < 12; k++ {
				s += a[i][k] * b[k][j]
			}
			c[i][j] = s
		}
	}
	return uint64(c[3][4])
}

func Compare(x, y []byte) uint64 { return uint64(bytes.Compare(x, y) + 2) }

func Reverse(s string) uint64 {
	r := make([]rune, 0, len(s))
	for _, c := range s {
		r = append(r, c)
	}
	for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
		r[i], r[j] = r[j], r[i]
	}
	return uint64(utf8.RuneLen(r[0]) + len(r))
}

func Base64(src []byte, dst []byte) uint64 { base64.StdEncoding.Encode(dst, src); return uint64(dst[11]) }

func Popcount(v []uint64) uint64 {
	var n int
	for _, x := range v {
		n += bits.OnesCount64(x)
	}
	return uint64(n)
}

'''

# Last in the test file, which the compiler lays out after the package's: the never-run
# function's size moves the layout-only kernel and its benchmark, and nothing else.
GO_LAYOUT = r'''
var PadFlag bool

func pad() uint64 {
	x := Sink
PADBODY	return x
}

//go:noinline
func Search(hay, needle string) uint64 {
	if PadFlag {
		return pad()
	}
	return uint64(strings.Index(hay, needle) + strings.LastIndex(hay, needle))
}
'''

# The memory scenario's kernels (in the test file, before the layout-only one). The array is
# filled with ones, so that every page is written (a page never written reads as the one
# zero page, always in the cache) and each load's index depends on the sum before it.
GO_MEMORY = r'''
var (
	memArr []uint64
	memPos uint64
	memMul uint64 = MEMMUL
)

func memInit() {
	if memArr == nil {
		memArr = make([]uint64, MEMWORDS)
		for i := range memArr {
			memArr[i] = 1
		}
	}
}

func memWalk(k int) uint64 {
	mask := uint64(len(memArr) - 1)
	m, p, s := memMul, memPos, uint64(0)
	for i := 0; i < k; i++ {
		s += memArr[(p*m+s)&mask]
		p++
	}
	memPos = p
	return s
}

func MemXor(k int) uint64 {
	x := 99 + memWalk(k)
	for j := 0; j < 4000; j++ {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	return x
}

func MemFnv(k int) uint64 {
	x := 99 + memWalk(k)
	for j := 0; j < 4000; j++ {
		x = (x ^ uint64(j)) * 1099511628211
	}
	return x
}
'''

GO_TEST = r'''package suite

import (
	"fmt"
	"strings"
	"testing"
)

func xs(seed uint64) uint64 { seed ^= seed << 13; seed ^= seed >> 7; seed ^= seed << 17; return seed }

var (
	buf1k   = make([]byte, 1024)
	buf256  = make([]byte, 256)
	u64s    = make([]uint64, 256)
	ints    = make([]int, 256)
	work    = make([]int, 256)
	small   = make([]int, 48)
	swork   = make([]int, 48)
	strs    = make([]string, 100)
	strw    = make([]string, 100)
	sorted  = make([]int, 4096)
	keys    = make([]int, 200)
	words   = make([]string, 100)
	vals    = make([]int, 100)
	out     = make([]byte, 0, 2048)
	doc     = []byte(`{"name":"benchmark record","id":4242,"tags":["a","bb","ccc","dddd"],"score":3.25}`)
	line    = strings.Repeat("alpha,beta,gamma,delta,", 10)
	text    = []byte(strings.Repeat("the quick  brown fox\tjumps over\nthe lazy dog ", 8))
	skeys   = make([]string, 60)
	imap    = map[int]int{}
	parts   = make([]string, 60)
	ma, mb  [12][12]float64
	mc      [12][12]float64
	cx      = make([]byte, 2048)
	cy      = make([]byte, 2048)
	uni     = strings.Repeat("héllo wörld ✓ ", 12)
	b64src  = make([]byte, 384)
	b64dst  = make([]byte, 512)
	hay     = strings.Repeat("abcdefghij", 200) + "needle" + strings.Repeat("klmnop", 50)
)

func init() {
	s := uint64(7)
	for i := range buf1k { s = xs(s); buf1k[i] = byte(s) }
	copy(buf256, buf1k)
	for i := range u64s { s = xs(s); u64s[i] = s }
	for i := range ints { s = xs(s); ints[i] = int(s % 100000) }
	for i := range small { s = xs(s); small[i] = int(s % 1000) }
	for i := range strs { s = xs(s); strs[i] = fmt.Sprintf("k%08x", s%0xffffffff) }
	for i := range sorted { sorted[i] = i * 3 }
	for i := range keys { s = xs(s); keys[i] = int(s % 12288) }
	for i := range words { s = xs(s); words[i] = fmt.Sprint(s % 1000000) }
	for i := range vals { s = xs(s); vals[i] = int(s % 1000000000) }
	for i := range skeys { skeys[i] = fmt.Sprintf("key-%d", i*7919) }
	for i := 0; i < 300; i++ { imap[i*3] = i }
	for i := range parts { parts[i] = fmt.Sprintf("part%d", i) }
	for i := 0; i < 12; i++ { for j := 0; j < 12; j++ { ma[i][j] = float64(i + j); mb[i][j] = float64(i*j%7) + 0.5 } }
	copy(cx, buf1k); copy(cy, buf1k); copy(cx[1024:], buf1k); copy(cy[1024:], buf1k)
	copy(b64src, buf1k)
}

func run(b *testing.B, reps *int, op func() uint64) {
	for i := 0; i < b.N; i++ {
		for r := 0; r < *reps; r++ {
			Sink += op()
		}
	}
}

BENCHMARKS
'''

GO_BENCH_OPS = {
    "Fnv": "Fnv(buf1k)", "Crc": "Crc(buf1k)", "Sha": "Sha(buf256)",
    "XorShift": "XorShift(Sink)", "Murmur": "Murmur(u64s)", "SortInts": "SortInts(ints, work)",
    "InsertionSort": "InsertionSort(small, swork)", "SortStrings": "SortStrings(strs, strw)",
    "BinarySearch": "BinarySearch(sorted, keys)", "ParseInts": "ParseInts(words)",
    "FormatInts": "FormatInts(vals, out)", "Json": "Json(doc)", "SplitCsv": "SplitCsv(line)",
    "Tokenize": "Tokenize(text)", "MapInsert": "MapInsert(skeys)",
    "MapLookup": "MapLookup(imap, keys)", "MapIterate": "MapIterate(imap)", "Alloc": "Alloc(40)",
    "Builder": "Builder(parts)", "MatMul": "MatMul(&ma, &mb, &mc)", "Compare": "Compare(cx, cy)",
    "Reverse": "Reverse(uni)", "Base64": "Base64(b64src, b64dst)", "Popcount": "Popcount(u64s)",
    "Search": 'Search(hay, "needle")',
}


def go_files(scenario: str, side: str) -> dict[str, str]:
    r = reps(scenario, side)
    pad = "".join(f"\tx = x*31 + {i + 1}\n" for i in range(pad_bytes(scenario, side) // 8))
    def bench(name: str, op: str, setup: str = "") -> str:
        return (f"var reps{name} = {r[name]}\n\n"
                f"func Benchmark{name}(b *testing.B) {{ {setup}run(b, &reps{name}, func() uint64 {{ return {op} }}) }}\n")
    ops = dict(GO_BENCH_OPS)
    if scenario == "helper":
        ops.update({n: f"{ops[n]} + Mix(Sink)" for n in HELPED})
    benches = "\n".join(bench(n, op) for n, op in ops.items() if n != LAYOUT)
    if scenario == "helper":
        benches += GO_HELPER.replace("MIXROUNDS", str(mix_rounds(side)))
    if scenario == "memory":  # first: counted first (MEMORY_FIRST)
        benches = (GO_MEMORY.replace("MEMMUL", str(memory_mul(scenario, side)))
                   .replace("MEMWORDS", str(MEMORY_WORDS)) + "\n"
                   + "\n".join(bench(n, f"{kernel}({k})", "memInit(); b.ResetTimer(); ")
                                for n, (kernel, k, _) in MEMORY.items()) + "\n" + benches)
    benches += GO_LAYOUT.replace("PADBODY", pad) + "\n" + bench(LAYOUT, GO_BENCH_OPS[LAYOUT])
    return {"go.mod": GO_MOD, "suite.go": GO_KERNELS, "suite_test.go": GO_TEST.replace("BENCHMARKS", benches)}


GO_HELPER = """
var mixRounds = MIXROUNDS

//go:noinline
func Mix(seed uint64) uint64 {
	x := seed | 1
	for i := 0; i < mixRounds; i++ {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	return x
}
"""


GO_BUILD = ('GOCACHE="$PWD/.cache/go-build" GOPATH="$PWD/.cache/go" GOFLAGS=-mod=mod '
            "GOTOOLCHAIN=local GOPROXY=off go test -c -o suite.test .")
GO_CONFIG = f"""version: 1
build: '{GO_BUILD}'
suites:
  - name: go
    run: ["./suite.test", "-test.run", "^$", "-test.bench", ".", "-test.benchmem", "-test.benchtime", "20ms"]
    format: go
    filter: ["-test.bench={{regex}}"]
"""


# --- google-benchmark (C++) ----------------------------------------------------------------

CC_SOURCE = r'''// A generated benchmark suite (benchbot's benchmarks): 25 kernels on google-benchmark.
#include <benchmark/benchmark.h>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

REPS

static std::uint64_t xs(std::uint64_t s) { s ^= s << 13; s ^= s >> 7; s ^= s << 17; return s; }

struct Data {
  std::vector<unsigned char> buf1k, buf256, b64src;
  std::vector<std::uint64_t> u64s;
  std::vector<int> ints, small, sorted, keys, vals;
  std::vector<std::string> strs, words, skeys, parts;
  std::string line, text, uni, hay;
  std::unordered_map<int, int> imap;
  std::map<int, int> omap;
  double ma[12][12], mb[12][12];
  Data() {
    std::uint64_t s = 7;
    for (int i = 0; i < 1024; ++i) { s = xs(s); buf1k.push_back((unsigned char)s); }
    buf256.assign(buf1k.begin(), buf1k.begin() + 256);
    b64src.assign(buf1k.begin(), buf1k.begin() + 384);
    for (int i = 0; i < 256; ++i) { s = xs(s); u64s.push_back(s); ints.push_back((int)(s % 100000)); }
    for (int i = 0; i < 48; ++i) { s = xs(s); small.push_back((int)(s % 1000)); }
    for (int i = 0; i < 4096; ++i) sorted.push_back(i * 3);
    for (int i = 0; i < 200; ++i) { s = xs(s); keys.push_back((int)(s % 12288)); }
    for (int i = 0; i < 100; ++i) { s = xs(s); char b[32]; std::snprintf(b, sizeof b, "k%08llx", (unsigned long long)(s % 0xffffffffull)); strs.push_back(b);
      std::snprintf(b, sizeof b, "%llu", (unsigned long long)(s % 1000000)); words.push_back(b); vals.push_back((int)(s % 1000000000)); }
    for (int i = 0; i < 60; ++i) { skeys.push_back("key-" + std::to_string(i * 7919)); parts.push_back("part" + std::to_string(i)); }
    for (int i = 0; i < 10; ++i) line += "alpha,beta,gamma,delta,";
    for (int i = 0; i < 8; ++i) text += "the quick  brown fox\tjumps over\nthe lazy dog ";
    for (int i = 0; i < 12; ++i) uni += "hello world of bytes ";
    for (int i = 0; i < 200; ++i) hay += "abcdefghij";
    hay += "needle";
    for (int i = 0; i < 50; ++i) hay += "klmnop";
    for (int i = 0; i < 300; ++i) { imap[i * 3] = i; omap[i * 3] = i; }
    for (int i = 0; i < 12; ++i) for (int j = 0; j < 12; ++j) { ma[i][j] = i + j; mb[i][j] = (i * j % 7) + 0.5; }
  }
};
static Data& D() { static Data d; return d; }

static std::uint64_t Fnv() { std::uint64_t h = 14695981039346656037ull; for (unsigned char c : D().buf1k) { h ^= c; h *= 1099511628211ull; } return h; }
static std::uint32_t crc_table[256];
static std::uint64_t Crc() {
  if (!crc_table[1]) for (std::uint32_t i = 0; i < 256; ++i) { std::uint32_t c = i; for (int k = 0; k < 8; ++k) c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1; crc_table[i] = c; }
  std::uint32_t c = 0xFFFFFFFFu; for (unsigned char b : D().buf1k) c = crc_table[(c ^ b) & 0xFF] ^ (c >> 8); return ~c;
}
static std::uint64_t Sha() {  // a 64-bit block mixer over 256 bytes, sha-like rounds
  std::uint64_t a = 0x6a09e667f3bcc908ull, b = 0xbb67ae8584caa73bull;
  for (int r = 0; r < 4; ++r) for (unsigned char c : D().buf256) { a += c; b ^= (a << 7) | (a >> 57); a = a * 0x9E3779B97F4A7C15ull + b; }
  return a ^ b;
}
static std::uint64_t XorShift() { std::uint64_t x = 99; for (int i = 0; i < 400; ++i) { x ^= x << 13; x ^= x >> 7; x ^= x << 17; benchmark::DoNotOptimize(x); } return x; }
static std::uint64_t Murmur() { std::uint64_t h = 0x9E3779B97F4A7C15ull; for (std::uint64_t k : D().u64s) { k *= 0xff51afd7ed558ccdull; k ^= k >> 33; h ^= k; h = ((h << 27) | (h >> 37)) * 5 + 0x52dce729; } return h; }
static std::uint64_t SortInts() { std::vector<int> w = D().ints; std::sort(w.begin(), w.end()); return (std::uint64_t)w[7]; }
static std::uint64_t InsertionSort() { std::vector<int> w = D().small; for (size_t i = 1; i < w.size(); ++i) for (size_t j = i; j > 0 && w[j] < w[j - 1]; --j) std::swap(w[j], w[j - 1]); return (std::uint64_t)w[3]; }
static std::uint64_t SortStrings() { std::vector<std::string> w = D().strs; std::sort(w.begin(), w.end()); return w[5].size(); }
static std::uint64_t BinarySearch() { std::uint64_t n = 0; const auto& s = D().sorted; for (int k : D().keys) n += std::lower_bound(s.begin(), s.end(), k) - s.begin(); return n; }
static std::uint64_t ParseInts() { std::uint64_t n = 0; for (const auto& w : D().words) n += std::strtoull(w.c_str(), nullptr, 10); return n; }
static std::uint64_t FormatInts() { char b[32]; std::uint64_t n = 0; for (int v : D().vals) n += std::snprintf(b, sizeof b, "%d", v); return n; }
static std::uint64_t Json() {  // a tiny tokenizer over a JSON record
  static const char* doc = "{\"name\":\"benchmark record\",\"id\":4242,\"tags\":[\"a\",\"bb\",\"ccc\",\"dddd\"],\"score\":3.25}";
  std::uint64_t n = 0; bool in = false;
  for (int r = 0; r < 8; ++r) for (const char* p = doc; *p; ++p) { if (*p == '"') in = !in; else if (!in && (*p == ':' || *p == ',')) ++n; else if (!in && *p >= '0' && *p <= '9') n += *p - '0'; }
  return n;
}
static std::uint64_t SplitCsv() { std::vector<std::string_view> out; std::string_view s = D().line; size_t start = 0; for (size_t i = 0; i <= s.size(); ++i) if (i == s.size() || s[i] == ',') { out.push_back(s.substr(start, i - start)); start = i + 1; } return out.size(); }
static std::uint64_t Tokenize() { std::uint64_t n = 0; bool word = false; for (char c : D().text) { bool sp = c == ' ' || c == '\t' || c == '\n'; if (!sp && !word) ++n; word = !sp; } return n; }
static std::uint64_t MapInsert() { std::unordered_map<std::string, int> m; int i = 0; for (const auto& k : D().skeys) m[k] = i++; return m.size(); }
static std::uint64_t MapLookup() { std::uint64_t n = 0; const auto& m = D().imap; for (int k : D().keys) { auto it = m.find(k); if (it != m.end()) n += it->second; } return n; }
static std::uint64_t MapIterate() { std::uint64_t n = 0; for (const auto& kv : D().omap) n += kv.first ^ kv.second; return n; }
static std::uint64_t Alloc() { std::uint64_t t = 0; for (int i = 0; i < 40; ++i) { auto* b = new unsigned char[64 + i % 32]; b[0] = (unsigned char)i; benchmark::DoNotOptimize(b); t += b[0]; delete[] b; } return t; }
static std::uint64_t Builder() { std::string s; for (const auto& p : D().parts) { s += p; s += ' '; } return s.size(); }
static std::uint64_t MatMul() { static double c[12][12]; for (int i = 0; i < 12; ++i) for (int j = 0; j < 12; ++j) { double s = 0; for (int k = 0; k < 12; ++k) s += D().ma[i][k] * D().mb[k][j]; c[i][j] = s; } benchmark::DoNotOptimize(c); return (std::uint64_t)c[3][4]; }
static std::uint64_t Compare() { const auto& b = D().buf1k; std::uint64_t n = 0; for (int r = 0; r < 8; ++r) n += std::memcmp(b.data(), D().b64src.data(), 384) + 2 + std::equal(b.begin(), b.begin() + 512, D().buf1k.begin()); return n; }
static std::uint64_t Reverse() { std::string s = D().uni; std::reverse(s.begin(), s.end()); return (unsigned char)s[0] + s.size(); }
static std::uint64_t Base64() {
  static const char* a = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"; char out[600]; size_t o = 0; const auto& s = D().b64src;
  for (size_t i = 0; i + 2 < s.size(); i += 3) { unsigned v = (s[i] << 16) | (s[i + 1] << 8) | s[i + 2]; out[o++] = a[v >> 18]; out[o++] = a[(v >> 12) & 63]; out[o++] = a[(v >> 6) & 63]; out[o++] = a[v & 63]; }
  benchmark::DoNotOptimize(out); return (unsigned char)out[11];
}
static std::uint64_t Popcount() { std::uint64_t n = 0; for (int r = 0; r < 4; ++r) for (std::uint64_t x : D().u64s) n += __builtin_popcountll(x ^ r); return n; }

#define BENCH(NAME) \
  static void BM_##NAME(benchmark::State& state) { D(); for (auto _ : state) { int r = reps_##NAME; for (int i = 0; i < r; ++i) benchmark::DoNotOptimize(NAME()); } } \
  BENCHMARK(BM_##NAME);
#define MEMBENCH(NAME) /* the array built before the timed loop */ \
  static void BM_##NAME(benchmark::State& state) { MemArr(); for (auto _ : state) { int r = reps_##NAME; for (int i = 0; i < r; ++i) benchmark::DoNotOptimize(NAME()); } } \
  BENCHMARK(BM_##NAME);

BENCHES
// Never run: its size moves the code after it in a section of their own, the layout-only
// benchmark's and nothing else (g++ orders the functions of .text as it likes).
#define LAST __attribute__((section(".text.zz_last")))
LAST __attribute__((noinline, used)) std::uint64_t never_run_pad(std::uint64_t x) { asm volatile(".fill PADBYTES, 1, 0x90"); return x + 1; }
LAST __attribute__((noinline)) static std::uint64_t Search() { const std::string& h = D().hay; return h.find("needle") + h.rfind("needle"); }
LAST static void BM_Search(benchmark::State& state) { D(); for (auto _ : state) { int r = reps_Search; for (int i = 0; i < r; ++i) benchmark::DoNotOptimize(Search()); } }
BENCHMARK(BM_Search);
BENCHMARK_MAIN();
'''


CC_HELPER = r'''
// The helper scenario's helper: called once per operation by some benchmarks.
static volatile int mix_rounds = MIXROUNDS;
__attribute__((noinline)) std::uint64_t Mix(std::uint64_t x) {
  x |= 1; const int r = mix_rounds;
  for (int i = 0; i < r; ++i) { x ^= x << 13; x ^= x >> 7; x ^= x << 17; }
  return x;
}
#define BENCH_AS(NAME, OP) \
  static void BM_##NAME(benchmark::State& state) { D(); for (auto _ : state) { int r = reps_##NAME; for (int i = 0; i < r; ++i) benchmark::DoNotOptimize(OP()); } } \
  BENCHMARK(BM_##NAME);
'''


CC_MEMORY = r'''
// The memory scenario's kernels: the array is built (every page written) the first time a
// memory benchmark runs, and each load's index depends on the sum before it.
static volatile std::uint64_t mem_mul = MEMMUL;
static std::vector<std::uint64_t>& MemArr() { static std::vector<std::uint64_t> a(MEMWORDS, 1); return a; }
static std::uint64_t mem_pos;
static std::uint64_t mem_walk(int k) {
  const std::vector<std::uint64_t>& a = MemArr(); const std::uint64_t m = mem_mul, mask = a.size() - 1;
  std::uint64_t s = 0, p = mem_pos;
  for (int i = 0; i < k; ++i) { s += a[(p * m + s) & mask]; ++p; }
  mem_pos = p; return s;
}
static std::uint64_t MemXor(int k) { std::uint64_t x = 99 + mem_walk(k); for (int c = 0; c < 4000; ++c) { x ^= x << 13; x ^= x >> 7; x ^= x << 17; } return x; }
static std::uint64_t MemFnv(int k) { std::uint64_t x = 99 + mem_walk(k); for (int c = 0; c < 4000; ++c) x = (x ^ (std::uint64_t)c) * 1099511628211ull; return x; }
'''


def cc_files(scenario: str, side: str) -> dict[str, str]:
    if scenario == "wide":
        return {"bench.cc": _cc_wide(side)}
    r = reps(scenario, side)
    decl = "\n".join(f"static volatile int reps_{n} = {r[n]};" for n in names("gbench", scenario))
    benches = "\n".join(f"BENCH({n})" for n in NAMES if n != LAYOUT)
    if scenario == "helper":  # HELPED's operations call Mix too, once each
        benches = (CC_HELPER.replace("MIXROUNDS", str(mix_rounds(side)))
                   + "".join(f"static std::uint64_t {n}Mixed() {{ std::uint64_t k = {n}(); return k + Mix(k); }}\n"
                             for n in HELPED)
                   + "\n".join(f"BENCH_AS({n}, {n}Mixed)" if n in HELPED else f"BENCH({n})"
                                for n in NAMES if n != LAYOUT))
    if scenario == "memory":  # first: counted first (MEMORY_FIRST)
        benches = (CC_MEMORY.replace("MEMMUL", f"{memory_mul(scenario, side)}ull")
                   .replace("MEMWORDS", str(MEMORY_WORDS))
                   + "".join(f"static std::uint64_t {n}() {{ return {kernel}({k}); }}\nMEMBENCH({n})\n"
                             for n, (kernel, _, k) in MEMORY.items()) + benches)
    src = (CC_SOURCE.replace("REPS", decl).replace("BENCHES", benches)
           .replace("PADBYTES", str(pad_bytes(scenario, side))))
    return {"bench.cc": src}


# The wide scenario's copies of a kernel: one benchmark each, with reps of its own.
CC_COPY = """#define BENCHC(NAME, C) \\
  static void BM_##NAME##_##C(benchmark::State& state) { D(); for (auto _ : state) { int r = reps_##NAME##_##C; for (int i = 0; i < r; ++i) benchmark::DoNotOptimize(NAME()); } } \\
  BENCHMARK(BM_##NAME##_##C);
"""


def _cc_wide(side: str) -> str:
    """The wide scenario's google-benchmark program (WIDE_COPIES copies of each kernel): the
    layout-only benchmark's copy 0 where ``changed`` has it (after the pad), its other
    copies as the rest."""
    changed = reps("changed", side)
    decl = "\n".join(f"static volatile int reps_{n}_{c} = "
                      f"{changed[n] if c < WIDE_CHANGED else BASE_REPS};"
                      for c in range(WIDE_COPIES) for n in NAMES)
    benches = CC_COPY + "\n".join(f"BENCHC({n}, {c})" for c in range(WIDE_COPIES)
                                  for n in NAMES if n != LAYOUT)
    rest = "".join(f"BENCHC({LAYOUT}, {c})\n" for c in range(1, WIDE_COPIES))
    # Json reads nothing but its literal, so g++ takes it for a const function once it is
    # not inlined (eight callers): it calls it once an iteration and leaves an empty loop of
    # ``reps``, and the head's 21 reps read +0.04% of work, not +5% (the first wide run,
    # benchmarks/README.md, section 6). Read through a volatile pointer, it is called reps
    # times.
    return (CC_SOURCE.replace("REPS", decl).replace("BENCHES", benches)
            .replace("static const char* doc = ", "static const char* volatile doc = ")
            .replace("PADBYTES", str(pad_bytes("wide", side)))
            .replace(f"BM_{LAYOUT}", f"BM_{LAYOUT}_0").replace(f"reps_{LAYOUT};", f"reps_{LAYOUT}_0;")
            .replace("BENCHMARK_MAIN();", rest + "BENCHMARK_MAIN();"))


# A project's own main(), as the C library of issue 39 has: it hands benchbot's flags to
# the library but never calls ReportUnrecognizedArguments, so google-benchmark 1.7 exits 0
# on a flag it cannot parse (--benchmark_min_time=2x) and runs by time.
OWN_MAIN = """int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
}
"""


def cc_own_main_files(scenario: str, side: str) -> dict[str, str]:
    return {"bench.cc": cc_files(scenario, side)["bench.cc"].replace("BENCHMARK_MAIN();\n",
                                                                     OWN_MAIN)}


CC_CONFIG = """version: 1
build: g++ -O2 -o bench bench.cc -lbenchmark -lpthread
suites:
  - name: gbench
    run: ["./bench", "--benchmark_format=json", "--benchmark_min_time=0.02"]
    format: google-benchmark
    filter: ["--benchmark_filter={regex}"]
"""

# --- pytest-benchmark (issue 39: a slow harness) ------------------------------------------
#
# A Python library's suite as issue 39 met it: 11 benchmarks in one pytest run of about 10 s
# on this VM at load 12 (2.2 s of CPU), every benchmark a fixed 5 rounds of one call (about
# 36 ms of CPU each), timed by the process's CPU clock (``--benchmark-timer``). Each call
# runs its kernel PY_BASE_CALLS times at base; the head of ``changed`` gives one benchmark
# 40% fewer calls, one 12% fewer and one 25% more (PY_CHANGED), and leaves the other 8 alone.

PY_NAMES = ("fnv", "crc", "sort_ints", "sort_strings", "parse_ints", "format_ints", "json",
            "split_csv", "dict_insert", "matmul", "base64")
# Calls of each kernel per round at base: about 36 ms of CPU a round on this VM.
PY_BASE_CALLS = {"fnv": 2400, "crc": 30000, "sort_ints": 12000, "sort_strings": 14000,
                 "parse_ints": 20000, "format_ints": 9500, "json": 4000, "split_csv": 100000,
                 "dict_insert": 19000, "matmul": 1400, "base64": 45000}
PY_CHANGED = {"sort_ints": 0.60, "json": 0.88, "matmul": 1.25}  # -40%, -12%, +25% of work
PY_ROUNDS = 5

PY_KERNELS = r'''"""Kernels of a generated pytest-benchmark suite (benchbot's benchmarks/suitegen.py)."""
import base64 as b64
import json as js
import zlib

_WORDS = [f"w{i * 7919 % 10007}" for i in range(40)]
_INTS = [(i * 2654435761) % 100003 for i in range(120)]
_DOC = {"name": "suite", "items": [{"id": i, "tags": ["a", "b"], "v": i / 3} for i in range(6)]}
_ROW = ",".join(_WORDS[:12])
_M = [[(i * 3 + j) % 7 for j in range(6)] for i in range(6)]
_BLOB = bytes(range(256)) * 2


def fnv():
    h = 0xcbf29ce484222325
    for b in _BLOB[:160]:
        h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


def crc():
    return zlib.crc32(_BLOB * 8)


def sort_ints():
    return sorted(_INTS)[0]


def sort_strings():
    return sorted(_WORDS, key=str.lower)[0]


def parse_ints():
    return sum(int(s) for s in "12 345 6789 1011 1213 1415 1617 1819 2021 2223".split())


def format_ints():
    return len(" ".join(str(i) for i in _INTS[:40]))


def json():
    return len(js.dumps(_DOC))


def split_csv():
    return len(_ROW.split(","))


def dict_insert():
    d = {}
    for w in _WORDS:
        d[w] = len(w)
    return len(d)


def matmul():
    return sum(sum(a * b for a, b in zip(r, c)) for r in _M for c in zip(*_M))


def base64():
    return len(b64.b64encode(_BLOB))
'''

PY_BENCH = '''"""A generated pytest-benchmark suite (benchbot's benchmarks/suitegen.py)."""
import kernels

CALLS = {calls!r}


def _loop(kernel, calls):
    def run():
        out = 0
        for _ in range(calls):
            out ^= hash(kernel())
        return out
    return run

{tests}
'''


def py_calls(scenario: str, side: str) -> dict[str, int]:
    """Each pytest-benchmark benchmark's calls of its kernel per round, in one side."""
    out = dict(PY_BASE_CALLS)
    if side == "head" and scenario == "changed":
        out.update({n: round(out[n] * f) for n, f in PY_CHANGED.items()})
    return out


def py_expected(name: str, scenario: str) -> str:
    """What the head does to a pytest-benchmark benchmark: less, more, same."""
    if scenario == "identical" or name not in PY_CHANGED:
        return "same"
    return "less" if PY_CHANGED[name] < 1 else "more"


def py_files(scenario: str, side: str) -> dict[str, str]:
    tests = "\n".join(f"\ndef test_{n}(benchmark):\n    benchmark(_loop(kernels.{n}, CALLS[{n!r}]))"
                      for n in PY_NAMES)
    return {"bench/kernels.py": PY_KERNELS,
            "bench/bench_suite.py": PY_BENCH.format(calls=py_calls(scenario, side), tests=tests)}


def set_py_rounds(rounds: int) -> None:
    """Each pytest-benchmark benchmark's rounds a run (PY_ROUNDS), so that a harness run
    takes about as long as a study wants at the load of the day (the config made anew)."""
    global PY_ROUNDS
    PY_ROUNDS = rounds
    HARNESSES["pybench"] = (py_files, py_config(sys.executable))


def py_config(python: str) -> str:
    """The suite's config: the docs' pytest-benchmark example (docs/suites.md), its rounds
    fixed (``--benchmark-min-rounds`` with ``--benchmark-max-time=0``: 5 rounds, no more),
    timed by the process's CPU clock (``--benchmark-timer=time.process_time``: neighbours'
    bursts on a shared runner do not count),
    run by ``python`` (an interpreter with pytest-benchmark; benchbot's own shows its prefix
    in the sandbox)."""
    run = [python, "-m", "pytest", "--rootdir=.", "-o", "testpaths=bench",
           "-o", "python_files=bench_*.py", "-p", "pytest_benchmark.plugin",
           "-p", "no:cacheprovider", "-q", "--benchmark-only", "--benchmark-json={output}",
           "--benchmark-warmup=off", f"--benchmark-min-rounds={PY_ROUNDS}",
           "--benchmark-max-time=0", "--benchmark-timer=time.process_time"]
    return ("version: 1\nbuild: \"true\"\nsuites:\n  - name: py\n"
            f"    run: {run!r}\n".replace("'", '"')
            + "    format: pytest-benchmark\n    filter: [\"{name}\"]\n"
            "    env: {PYTEST_DISABLE_PLUGIN_AUTOLOAD: \"1\", PYTHONDONTWRITEBYTECODE: \"1\"}\n")


HARNESSES = {"go": (go_files, GO_CONFIG), "gbench": (cc_files, CC_CONFIG),
             "gbench-main": (cc_own_main_files, CC_CONFIG),
             "pybench": (py_files, py_config(sys.executable))}


def truth(harness: str, name: str, scenario: str) -> str:
    """What the head does to a benchmark of a harness's suite."""
    return py_expected(name, scenario) if harness == "pybench" else expected(name, scenario)


def bench_name(harness: str, name: str) -> str:
    """A benchmark's workload name as benchbot reports it."""
    if harness == "pybench":
        return f"py/test_{name}"
    return f"go/Benchmark{name}" if harness == "go" else f"gbench/BM_{name}"  # gbench-main too


@dataclass(frozen=True, slots=True)
class Repo:
    path: Path
    harness: str
    scenario: str


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


def _write(root: Path, files: Mapping[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def make(root: Path, harness: str, scenario: str) -> Repo:
    """A repository (tag ``base``, head at HEAD) of one harness's suite in one scenario."""
    files, config = HARNESSES[harness]
    repo = root / f"{harness}-{scenario}"
    repo.mkdir(parents=True)
    _git(repo, "init", "-q")
    _git(repo, "config", "user.email", "bench@example.com")
    _git(repo, "config", "user.name", "bench")
    _write(repo, {"benchbot.yml": config, "README": "a generated suite\n",
                  **files(scenario, "base")})
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "base")
    _git(repo, "tag", "base")
    head = files(scenario, "head")
    if scenario == "identical":
        head = {"README": "a generated suite, its head\n"}
    _write(repo, head)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "head")
    return Repo(path=repo, harness=harness, scenario=scenario)
