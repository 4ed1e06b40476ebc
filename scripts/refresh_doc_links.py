"""Rewrite the line numbers of code links in README.md and docs/*.md from their symbol names.

A code link names its symbol in backticks and points at the line that holds it:

    [prims/decompositions/reductions.py:L226 `softmax`](../prims/decompositions/reductions.py#L226)

When the code moves, this finds the symbol again in the linked file (its definition first: `def`,
`class`, an assignment or a table key; else any line naming it; the one nearest the old line
wins) and rewrites both `:Lnn` in the text and `#Lnn` in the target. `Class.method` looks for
`method` inside `class Class`. tests/test_docs_links.py checks the result.

    python scripts/refresh_doc_links.py           # rewrite in place, list what moved
    python scripts/refresh_doc_links.py --check   # list only; exit 1 if anything would change
"""

from __future__ import annotations

import argparse
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
LINK = re.compile(r"\[([^\]]+)\]\(([^)\s#]+)#L(\d+)\)")
SYMBOL = re.compile(r"`([^`]+)`")
FENCE = re.compile(r"^\s*(```|~~~)")


def documents(root: pathlib.Path = ROOT) -> list[pathlib.Path]:
    return [root / "README.md", *sorted((root / "docs").glob("*.md"))]


def _word(name: str) -> re.Pattern:
    return re.compile(rf"(?<![\w.]){re.escape(name)}(?!\w)")


def _definition(name: str) -> re.Pattern:
    n = re.escape(name)
    return re.compile(rf"^\s*(?:async\s+)?(?:def|class)\s+{n}\b|^\s*{n}\s*(?::[^=]*)?=(?!=)"
                      rf"|^\s*[\"']{n}[\"']\s*:")


def find_symbol(lines: list[str], symbol: str, near: int) -> int | None:
    """1-based line of `symbol` in `lines` (a definition first), the one nearest `near`."""
    start, end = 0, len(lines)
    name = symbol
    if "." in symbol:
        owner, name = symbol.rsplit(".", 1)
        owner_line = find_symbol(lines, owner, near)
        if owner_line is None:
            return None
        start = owner_line  # the members after the class line, up to the next top-level line
        end = next((i for i in range(owner_line, len(lines))
                    if lines[i].strip() and not lines[i][0].isspace()), len(lines))
    for pattern in (_definition(name), _word(name)):
        found = [i + 1 for i in range(start, end) if pattern.search(lines[i])]
        if found:
            return min(found, key=lambda i: (abs(i - near), i))
    return None


def refresh(doc: pathlib.Path, write: bool) -> list[str]:
    """Rewrite `doc`'s code links; returns one line per change or problem."""
    notes = []
    text = doc.read_text()
    out, fenced = [], False
    for number, line in enumerate(text.splitlines(keepends=True), 1):
        if FENCE.match(line):
            fenced = not fenced
        if fenced:
            out.append(line)
            continue

        def fix(match: re.Match) -> str:
            label, target, old = match.group(1), match.group(2), int(match.group(3))
            symbol = SYMBOL.search(label)
            path = (doc.parent / target).resolve()
            where = f"{doc.relative_to(ROOT)}:{number}"
            if symbol is None or not path.is_file():
                notes.append(f"{where}: cannot refresh {match.group(0)} (no `symbol` or no file)")
                return match.group(0)
            new = find_symbol(path.read_text().splitlines(), symbol.group(1), old)
            if new is None:
                notes.append(f"{where}: `{symbol.group(1)}` not found in {target}")
                return match.group(0)
            if new != old:
                notes.append(f"{where}: `{symbol.group(1)}` {target} L{old} -> L{new}")
            label = re.sub(rf":L{old}\b", f":L{new}", label)
            return f"[{label}]({target}#L{new})"

        out.append(LINK.sub(fix, line))
    new_text = "".join(out)
    if write and new_text != text:
        doc.write_text(new_text)
    return notes


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="report only, write nothing")
    args = parser.parse_args(argv)
    notes = [n for doc in documents() if doc.exists() for n in refresh(doc, not args.check)]
    print("\n".join(notes) or "all code links up to date")
    return 1 if args.check and notes else 0


if __name__ == "__main__":
    sys.exit(main())
