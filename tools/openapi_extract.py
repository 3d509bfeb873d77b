#!/usr/bin/env python3
"""Cut a small OpenAPI extract out of GitHub's full REST description.

The fake GitHub server in ``tests/fakegithub/`` validates every request it
receives and every response it sends against
``tests/fakegithub/openapi-extract.json``.  That file is produced by this
script from ``generated/api.github.com.json`` of the npm package
``@octokit/openapi`` (GitHub's own rest-api-description plus the x-octokit
extension).  Nothing here talks to GitHub.

How to rerun it::

    mkdir -p /tmp/octo && cd /tmp/octo
    npm pack @octokit/openapi            # -> octokit-openapi-<version>.tgz (~29 MB)
    tar xzf octokit-openapi-*.tgz        # -> package/generated/api.github.com.json
    cd /work/main                        # the repository root
    python tools/openapi_extract.py /tmp/octo/package/generated/api.github.com.json

Options: ``-o/--output PATH`` (default ``tests/fakegithub/openapi-extract.json``
in this script's repository), ``--drop-examples`` to leave out
``components/examples`` (kept by default; they are documentation only and add
about 100 KiB).  The extract keeps only the operations in ``OPERATIONS``
plus every ``#/components/...`` object they reference, transitively
(``$ref`` values and discriminator mapping strings alike), so it is a
self-contained, valid OpenAPI 3.0 document.  The source package's version is
recorded in ``info.x-extracted-from``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

#: (method, path) of every operation benchbot's GitHub layer uses.
OPERATIONS: list[tuple[str, str]] = [
    ("get", "/repos/{owner}/{repo}"),
    ("get", "/repos/{owner}/{repo}/pulls/{pull_number}"),
    ("get", "/repos/{owner}/{repo}/pulls/{pull_number}/reviews"),
    ("get", "/repos/{owner}/{repo}/issues/{issue_number}"),
    ("get", "/repos/{owner}/{repo}/issues/{issue_number}/comments"),
    ("post", "/repos/{owner}/{repo}/issues/{issue_number}/comments"),
    ("get", "/repos/{owner}/{repo}/issues/comments/{comment_id}"),
    ("patch", "/repos/{owner}/{repo}/issues/comments/{comment_id}"),
    ("post", "/repos/{owner}/{repo}/issues/comments/{comment_id}/reactions"),
    ("get", "/repos/{owner}/{repo}/collaborators/{username}/permission"),
    ("post", "/repos/{owner}/{repo}/check-runs"),
    ("get", "/repos/{owner}/{repo}/check-runs/{check_run_id}"),
    ("patch", "/repos/{owner}/{repo}/check-runs/{check_run_id}"),
    ("get", "/repos/{owner}/{repo}/commits/{ref}/check-runs"),
    ("post", "/repos/{owner}/{repo}/statuses/{sha}"),
    ("get", "/user"),
    ("get", "/app"),
    # the history branch (publish, after a push) and its issue
    ("get", "/repos/{owner}/{repo}/git/ref/{ref}"),
    ("post", "/repos/{owner}/{repo}/git/refs"),
    ("patch", "/repos/{owner}/{repo}/git/refs/{ref}"),
    ("get", "/repos/{owner}/{repo}/git/commits/{commit_sha}"),
    ("post", "/repos/{owner}/{repo}/git/commits"),
    ("post", "/repos/{owner}/{repo}/git/trees"),
    ("get", "/repos/{owner}/{repo}/tarball/{ref}"),
    ("get", "/repos/{owner}/{repo}/issues"),
    ("post", "/repos/{owner}/{repo}/issues"),
    ("patch", "/repos/{owner}/{repo}/issues/{issue_number}"),
]

PREFIX = "#/components/"
DEFAULT_OUTPUT = Path(__file__).resolve().parent.parent / "tests" / "fakegithub" / "openapi-extract.json"


def _component_refs(node: Any) -> set[str]:
    """Every string in *node* that points into #/components/ ($ref or mapping)."""
    found: set[str] = set()
    stack = [node]
    while stack:
        cur = stack.pop()
        if isinstance(cur, dict):
            stack.extend(cur.values())
        elif isinstance(cur, list):
            stack.extend(cur)
        elif isinstance(cur, str) and cur.startswith(PREFIX):
            found.add(cur)
    return found


def _strip_examples(node: Any) -> Any:
    """Drop ``examples`` maps in media types / parameters (they only $ref examples)."""
    if isinstance(node, dict):
        out = {}
        for k, v in node.items():
            if k == "examples" and isinstance(v, dict) and all(
                isinstance(e, dict) and set(e) <= {"$ref", "value", "summary", "description"}
                for e in v.values()
            ):
                continue
            out[k] = _strip_examples(v)
        return out
    if isinstance(node, list):
        return [_strip_examples(v) for v in node]
    return node


def extract(spec: dict[str, Any], keep_examples: bool = True) -> dict[str, Any]:
    paths: dict[str, Any] = {}
    for method, path in OPERATIONS:
        try:
            op = spec["paths"][path][method]
        except KeyError:
            raise SystemExit(f"operation {method.upper()} {path} not in the source document") from None
        entry = paths.setdefault(path, {})
        # path-level keys (parameters, summary, ...) are kept as they are
        for k, v in spec["paths"][path].items():
            if k not in ("get", "put", "post", "delete", "options", "head", "patch", "trace"):
                entry[k] = v
        entry[method] = op
    if not keep_examples:
        paths = _strip_examples(paths)

    components: dict[str, dict[str, Any]] = {}
    todo = list(_component_refs(paths))
    seen: set[str] = set()
    while todo:
        ref = todo.pop()
        if ref in seen:
            continue
        seen.add(ref)
        parts = ref[len(PREFIX):].split("/")
        if len(parts) != 2:
            raise SystemExit(f"unsupported reference {ref!r}")
        kind, name = (p.replace("~1", "/").replace("~0", "~") for p in parts)
        obj = spec["components"][kind][name]
        if not keep_examples:
            obj = _strip_examples(obj)
        components.setdefault(kind, {})[name] = obj
        todo.extend(_component_refs(obj) - seen)

    for kind in components:
        components[kind] = dict(sorted(components[kind].items()))

    used_tags = {t for p in paths.values() for m, o in p.items() if isinstance(o, dict) for t in o.get("tags", [])}
    info = dict(spec["info"])
    info["x-extracted-from"] = {
        "package": "@octokit/openapi",
        "file": "generated/api.github.com.json",
        "version": spec["info"].get("version"),
        "tool": "tools/openapi_extract.py",
    }
    out: dict[str, Any] = {
        "openapi": spec["openapi"],
        "info": info,
        "servers": spec.get("servers", [{"url": "https://api.github.com"}]),
        "tags": [t for t in spec.get("tags", []) if t.get("name") in used_tags],
        "paths": dict(sorted(paths.items())),
        "components": dict(sorted(components.items())),
    }
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("source", type=Path, help="path to @octokit/openapi generated/api.github.com.json")
    ap.add_argument("-o", "--output", type=Path, default=DEFAULT_OUTPUT)
    ap.add_argument("--drop-examples", action="store_true")
    args = ap.parse_args(argv)

    spec = json.loads(args.source.read_text(encoding="utf-8"))
    out = extract(spec, keep_examples=not args.drop_examples)
    text = json.dumps(out, indent=1, sort_keys=False, ensure_ascii=False) + "\n"
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(text, encoding="utf-8")
    n_comp = sum(len(v) for v in out["components"].values())
    print(
        f"wrote {args.output} ({len(text.encode()) // 1024} KiB): "
        f"{sum(len([m for m in p if m in ('get', 'post', 'patch')]) for p in out['paths'].values())} operations, "
        f"{n_comp} components",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
