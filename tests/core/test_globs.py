"""The glob language of ``paths:`` and ``sandbox.build_only`` (benchbot.core.globs): what
each glob covers, and the globs refused because they could never mean what was meant."""

from __future__ import annotations

import re

import pytest

from benchbot.core.globs import GlobError, check_glob, matches


@pytest.mark.parametrize("glob, path, covered", [
    # ** across segments
    ("src/a/**", "src/a/x.c", True),
    ("src/a/**", "src/a/deep/er/x.c", True),
    ("src/a/**", "src/ab/x.c", False),
    ("src/a/**", "src/a", False),  # a file named like the directory: nothing below it
    ("**/x.c", "x.c", True),
    ("**/x.c", "a/b/x.c", True),
    ("a/**/x.c", "a/x.c", True),
    ("a/**/x.c", "a/b/c/x.c", True),
    ("a/**/x.c", "b/a/x.c", False),
    ("**", "any/file/at/all", True),
    # * and ? within one segment
    ("src/*.c", "src/x.c", True),
    ("src/*.c", "src/d/x.c", False),
    ("src/?.c", "src/xy.c", False),
    # no slash: that name at any depth
    ("*.c", "x.c", True),
    ("*.c", "d/e/x.c", True),
    ("*.c", "x.h", False),
    ("Makefile", "sub/Makefile", True),
    ("Makefile", "Makefile.in", False),
    # a directory covers everything below it; a trailing / only a directory
    ("src/a", "src/a", True),
    ("src/a", "src/a/b/c", True),
    ("src/*", "src/d/x.c", True),
    ("build/", "build", False),
    ("build/", "x/build/y", True),
    ("/build/", "x/build/y", False),  # a leading / anchors at the root
    ("/build/", "build/y", True),
    # sets and escapes
    ("[a-c]?.py", "b1.py", True),
    ("[!a-c]?.py", "b1.py", False),
    ("[!a-c]?.py", "d1.py", True),
    ("a\\*", "a*", True),
    ("a\\*", "ab", False),
    ("\\!x", "!x", True),
    # case-sensitive, literal dots
    ("src/A/**", "src/a/x", False),
    ("*.c", "xxc", False),
])
def test_globs_cover_what_the_docs_say(glob: str, path: str, covered: bool) -> None:
    assert matches(glob, path) is covered


@pytest.mark.parametrize("glob, why", [
    ("", "is empty"),
    ("!src/**", "negation"),
    ("a//b", "empty path segment"),
    ("./src/**", "'.' segment"),
    ("src/../x", "'..' segment"),
    ("src/a**", "** inside a name"),
    ("**b/x", "** inside a name"),
    ("[ab", "[ without its ]"),
    ("src/[a/b]", "[ without its ]"),
    ("[z-a]", "runs backwards"),
    ("x\\", "lone \\"),
    ("/", "names no path"),
    ("a\tb", "control character"),
])
def test_globs_that_could_never_mean_what_was_meant_are_refused(glob: str, why: str) -> None:
    with pytest.raises(GlobError, match=re.escape(why)):
        check_glob(glob)
