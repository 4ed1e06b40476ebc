"""The docs' links stay valid: every relative link in README.md and docs/*.md names an existing
file, and every `#Lnn` code link points at a line holding the symbol its text names in
backticks, so that a line moved by an edit fails here (scripts/refresh_doc_links.py fixes it)."""

from __future__ import annotations

import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\[([^\]]*)\]\(([^)\s]+)\)")


def links(text: str) -> list[tuple[int, str, str]]:
    """(line number, link text, target) of every Markdown link outside fenced code blocks."""
    found, fenced = [], False
    for number, line in enumerate(text.splitlines(), 1):
        if re.match(r"\s*(```|~~~)", line):
            fenced = not fenced
        elif not fenced:
            found += [(number, m.group(1), m.group(2)) for m in LINK.finditer(line)]
    return found


def problems(doc: pathlib.Path) -> list[str]:
    out = []
    for number, text, target in links(doc.read_text()):
        where = f"{doc.name}:{number}: [{text}]({target})"
        if re.match(r"[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
            continue   # http(s):, mailto:, an anchor in the same page
        path_part, _, anchor = target.partition("#")
        path = (doc.parent / path_part).resolve()
        if not path.is_file():
            out.append(f"{where}: no file {path_part}")
            continue
        line_anchor = re.fullmatch(r"L(\d+)", anchor)
        if not line_anchor:
            continue
        number_in_link = int(line_anchor.group(1))
        symbol = re.search(r"`([^`]+)`", text)
        if symbol is None:
            out.append(f"{where}: a #L link must name its symbol in backticks")
            continue
        lines = path.read_text().splitlines()
        if not 1 <= number_in_link <= len(lines):
            out.append(f"{where}: {path_part} has {len(lines)} lines")
            continue
        name = symbol.group(1).rsplit(".", 1)[-1]
        if not re.search(rf"(?<!\w){re.escape(name)}(?!\w)", lines[number_in_link - 1]):
            out.append(f"{where}: line {number_in_link} does not contain {name!r}: "
                       f"{lines[number_in_link - 1].strip()!r}")
        shown = re.search(r":L(\d+)\b", text)
        if shown and int(shown.group(1)) != number_in_link:
            out.append(f"{where}: the text says L{shown.group(1)}, the link L{number_in_link}")
    return out


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_links_resolve_and_code_links_name_their_line(doc):
    found = problems(doc)
    assert not found, "stale links (run scripts/refresh_doc_links.py):\n" + "\n".join(found)


def test_design_doc_is_linked_from_readme_and_contracts():
    assert "(docs/DESIGN.md)" in (ROOT / "README.md").read_text()
    assert "(DESIGN.md)" in (ROOT / "docs" / "CONTRACTS.md").read_text()


def _write(tmp_path, doc_text, code_text="def alpha():\n    pass\n\n\ndef beta():\n    pass\n"):
    (tmp_path / "docs").mkdir()
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "mod.py").write_text(code_text)
    doc = tmp_path / "docs" / "X.md"
    doc.write_text(doc_text)
    return doc


def test_checker_accepts_good_links(tmp_path):
    doc = _write(tmp_path, "[pkg/mod.py:L5 `beta`](../pkg/mod.py#L5), [file](../pkg/mod.py),\n"
                           "[web](https://example.com), [here](#layers)\n"
                           "```\n[not a link](nowhere.md)\n```\n")
    assert problems(doc) == []


def test_checker_catches_drift_missing_files_and_unnamed_symbols(tmp_path):
    doc = _write(tmp_path, "[pkg/mod.py:L1 `beta`](../pkg/mod.py#L1)\n"
                           "[gone](../pkg/gone.py)\n"
                           "[pkg/mod.py:L5](../pkg/mod.py#L5)\n"
                           "[pkg/mod.py:L4 `beta`](../pkg/mod.py#L5)\n"
                           "[`alphabet`](../pkg/mod.py#L1)\n")
    found = problems(doc)
    assert len(found) == 5, found
    assert "line 1 does not contain 'beta'" in found[0]
    assert "no file ../pkg/gone.py" in found[1]
    assert "must name its symbol" in found[2]
    assert "the text says L4, the link L5" in found[3]
    assert "does not contain 'alphabet'" in found[4]


def test_refresh_script_repairs_drift(tmp_path, monkeypatch):
    import importlib.util

    spec = importlib.util.spec_from_file_location("refresh", ROOT / "scripts" / "refresh_doc_links.py")
    refresh = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(refresh)
    monkeypatch.setattr(refresh, "ROOT", tmp_path)
    doc = _write(tmp_path, "[pkg/mod.py:L1 `beta`](../pkg/mod.py#L1) and "
                           "[`Box.beta`](../pkg/mod.py#L1)\n",
                 "def beta():\n    pass\n\n\nclass Box:\n    x = beta\n\n    def beta(self):\n"
                 "        pass\n")
    (tmp_path / "pkg" / "mod.py").write_text("\n\n\n" + (tmp_path / "pkg" / "mod.py").read_text())
    notes = refresh.refresh(doc, write=True)
    assert len(notes) == 2, notes
    assert doc.read_text() == ("[pkg/mod.py:L4 `beta`](../pkg/mod.py#L4) and "
                               "[`Box.beta`](../pkg/mod.py#L11)\n")
    assert problems(doc) == []
