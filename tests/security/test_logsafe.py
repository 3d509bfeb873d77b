"""Every line benchbot writes to a job's log is inert, wherever the runner ends a line.

The runner reads a step's output with .NET's ``StreamReader.ReadLine`` (a line ends at
``\\n``, ``\\r\\n`` or a lone ``\\r``), trims .NET's white space and parses ``::command::``
at the start and ``##[command]`` anywhere (actions/runner, ``ActionCommand.TryParseV2``
and ``TryParse``). These tests feed hostile text through ``logsafe.Stream`` in every way
it can be cut into writes, with every line end Python knows, then read the output as the
runner does, comparisons that ignore zero-width characters included.
"""

from __future__ import annotations

import io
import sys
import unicodedata

import pytest

from benchbot.core import logsafe

COMMANDS = ("::add-mask::ghs_secret", "::set-output name=conclusion::success",
            "##[set-output name=x;]y", "x ##[add-mask]ghs_secret", "::stop-commands::tok")
KNOWN = {"add-mask", "set-output", "stop-commands", "error", "warning", "notice", "debug",
         "group", "endgroup", "echo", "save-state", "add-path", "set-env", "add-matcher"}
# .NET's char.IsWhiteSpace: the space, line and paragraph separators and these.
DOTNET_SPACE = {*map(chr, range(9, 14)), "\x85", "\xa0"}
# The runner's line ends, then the rest of str.splitlines' (the test below checks the list).
ENDS = ("\n", "\r\n", "\r", "\v", "\f", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029")


def dotnet_whitespace() -> list[str]:
    return [chr(c) for c in range(sys.maxunicode + 1)
            if chr(c) in DOTNET_SPACE or unicodedata.category(chr(c)) in ("Zs", "Zl", "Zp")]


def runner_lines(log: str) -> list[str]:
    """The lines as StreamReader.ReadLine gives them."""
    return log.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def _ignorable(ch: str) -> bool:
    """What a culture-sensitive comparison (ICU) skips: format and control characters."""
    return unicodedata.category(ch) in ("Cf", "Cc")


def _culture_index(text: str, what: str, start: int = 0) -> int:
    """.NET's culture-sensitive IndexOf, roughly: the index of the first character of a
    match of ``what`` where ignorable characters in ``text`` are skipped."""
    for i in range(start, len(text)):
        j, k = i, 0
        while j < len(text) and k < len(what):
            if text[j] == what[k]:
                j, k = j + 1, k + 1
            elif _ignorable(text[j]) and k > 0:
                j += 1
            else:
                break
        if k == len(what) and not _ignorable(text[i]):
            return i
    return -1


def runner_command(line: str) -> str | None:
    """The command the runner would run for one line, or None (TryParseV2, then TryParse;
    the name taken at a fixed offset after the prefix, as the runner does)."""
    message = line.lstrip("".join(DOTNET_SPACE) + "\u2028\u2029\u3000")
    if _culture_index(message, "::") == 0 or (message and _ignorable(message[0])
                                             and _culture_index(message, "::") > 0):
        end = _culture_index(message, "::", 2)
        if end >= 2:
            name = message[2:end].split(" ")[0]
            if name in KNOWN:
                return name
    at = _culture_index(line, "##[")
    if at >= 0 and "]" in line[at:]:
        name = line[at + 3: line.index("]", at)].split(" ")[0]
        if name in KNOWN:
            return name
    return None


def through_stream(text: str, cuts: list[int]) -> str:
    out = io.StringIO()
    stream = logsafe.Stream(out)
    last = 0
    for cut in [*cuts, len(text)]:
        stream.write(text[last:cut])
        stream.flush()  # the worst case: every write flushed as it comes
        last = cut
    stream.flush()
    return out.getvalue()


def test_python_strips_every_character_dotnet_trims() -> None:
    assert [hex(ord(c)) for c in dotnet_whitespace() if not c.isspace()] == []


def test_the_runner_s_line_ends_are_all_escaped_at() -> None:
    every = {c for c in map(chr, range(sys.maxunicode + 1)) if len(("a" + c + "b").splitlines()) == 2}
    assert set(ENDS) == every | {"\r\n"}
    assert set(logsafe.BOUNDARIES) == set(ENDS)


@pytest.mark.parametrize("end", ENDS, ids=[repr(e) for e in ENDS])
def test_no_line_end_lets_a_command_through(end: str) -> None:
    spaces = ["", " ", "\t", "\u3000", "\xa0", "\x85"]
    text = "build output" + "".join(end + pad + cmd for pad in spaces for cmd in COMMANDS) + end
    assert any(runner_command(line) for line in runner_lines(text))  # hostile as it stands
    cut_sets = [[], list(range(1, len(text))), [len("build output") + 1],
                [i for i, c in enumerate(text) if c in "\r\n"]]
    for cuts in cut_sets:
        log = through_stream(text, cuts)
        assert log.replace(logsafe.ZWSP, "") == text  # nothing lost, nothing moved
        for line in runner_lines(log) + log.splitlines():
            assert runner_command(line) is None, (end, cuts[:3], line)
            assert not line.lstrip().startswith("::") and "##[" not in line, line


def test_escape_text_is_the_stream_s_escaping() -> None:
    text = "a\r::add-mask::x\u2028##[error]y\r\n  ::warning::z"
    out = io.StringIO()
    logsafe.Stream(out).write(text + "\n")
    assert out.getvalue() == logsafe.escape_text(text) + "\n"
    assert all(runner_command(line) is None for line in runner_lines(logsafe.escape_text(text)))


def test_a_lone_carriage_return_at_a_flush_still_ends_the_line() -> None:
    out = io.StringIO()
    stream = logsafe.Stream(out)
    stream.write("progress 10%\r")
    stream.flush()
    stream.write("::add-mask::ghs_x\n")
    assert [runner_command(line) for line in runner_lines(out.getvalue())] == [None] * 3
