"""GitHub Actions expressions (``${{ … }}``), evaluated as GitHub documents them, for the
parts the shipped workflows use: literals, property paths (``github.event.action``,
``strategy.job-index``), ``==`` and ``!=`` (strings compared ignoring case), ``!``,
``&&`` and ``||`` (which give an operand, not a boolean), parentheses, ``format()`` and
``startsWith()`` (ignoring case).
Anything else is an error, so that a workflow that starts using more makes the test say
so rather than guess.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

_TOKEN = re.compile(r"\s*(?:(?P<str>'(?:[^']|'')*')|(?P<num>-?\d+(?:\.\d+)?)|"
                    r"(?P<op>==|!=|&&|\|\||!|\(|\)|,)|(?P<name>[A-Za-z_][\w.-]*))")


def interpolate(text: str, context: Mapping[str, Any]) -> str:
    """``text`` with every ``${{ expression }}`` replaced by its value as a string."""
    return re.sub(r"\$\{\{(.*?)\}\}", lambda m: _string(evaluate(m.group(1), context)),
                  text, flags=re.S)


def evaluate(expression: str, context: Mapping[str, Any]) -> Any:
    tokens = _tokens(expression)
    parser = _Parser(tokens, context)
    value = parser.either()
    if parser.at < len(tokens):
        raise ValueError(f"unexpected {tokens[parser.at]!r} in {expression!r}")
    return value


def _tokens(expression: str) -> list[tuple[str, str]]:
    out, at = [], 0
    text = expression.strip()
    while at < len(text):
        match = _TOKEN.match(text, at)
        if match is None or match.end() == at:
            raise ValueError(f"cannot read {text[at:]!r}")
        kind = match.lastgroup or ""
        out.append((kind, match.group(kind)))
        at = match.end()
        while at < len(text) and text[at].isspace():
            at += 1
    return out


def _truthy(value: Any) -> bool:
    return value not in (None, False, 0, "") and value == value  # NaN is false


def _string(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _equal(a: Any, b: Any) -> bool:
    if isinstance(a, str) and isinstance(b, str):
        return a.lower() == b.lower()
    return bool(a == b)


class _Parser:
    def __init__(self, tokens: list[tuple[str, str]], context: Mapping[str, Any]) -> None:
        self.tokens, self.context, self.at = tokens, context, 0

    def _peek(self) -> str | None:
        return self.tokens[self.at][1] if self.at < len(self.tokens) else None

    def _take(self, op: str) -> bool:
        if self._peek() == op and self.tokens[self.at][0] == "op":
            self.at += 1
            return True
        return False

    def either(self) -> Any:
        value = self.both()
        while self._take("||"):
            right = self.both()
            value = value if _truthy(value) else right
        return value

    def both(self) -> Any:
        value = self.comparison()
        while self._take("&&"):
            right = self.comparison()
            value = right if _truthy(value) else value
        return value

    def comparison(self) -> Any:
        value = self.unary()
        while self._peek() in ("==", "!="):
            op = self.tokens[self.at][1]
            self.at += 1
            right = self.unary()
            value = _equal(value, right) if op == "==" else not _equal(value, right)
        return value

    def unary(self) -> Any:
        if self._take("!"):
            return not _truthy(self.unary())
        return self.primary()

    def primary(self) -> Any:
        if self._take("("):
            value = self.either()
            if not self._take(")"):
                raise ValueError("a ( without its )")
            return value
        kind, text = self.tokens[self.at]
        self.at += 1
        if kind == "str":
            return text[1:-1].replace("''", "'")
        if kind == "num":
            return float(text) if "." in text else int(text)
        if kind != "name":
            raise ValueError(f"unexpected {text!r}")
        if text in ("true", "false", "null"):
            return {"true": True, "false": False, "null": None}[text]
        if self._take("("):
            args = []
            while not self._take(")"):
                args.append(self.either())
                self._take(",")
            return self._call(text, args)
        value: Any = self.context
        for part in text.split("."):
            value = value.get(part) if isinstance(value, Mapping) else None
        return value

    def _call(self, name: str, args: list[Any]) -> Any:
        if name == "format":
            return re.sub(r"\{(\d+)\}", lambda m: _string(args[1 + int(m.group(1))]), args[0])
        if name == "startsWith":
            return _string(args[0]).lower().startswith(_string(args[1]).lower())
        raise ValueError(f"the function {name}() is not known to tests/expressions.py")
