"""Imports only go down the layer order of DESIGN.md; a wrong import fails here."""

import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]

# package -> packages it may import
ALLOWED = {
    "symbolic": set(),
    "guards": {"symbolic"},
    "prims": {"symbolic"},
    "autograd_aot": {"symbolic", "prims"},
    "inductor": {"symbolic", "prims"},
    "capture": {"symbolic", "guards", "prims"},
    "symc": {"symbolic", "guards", "prims", "autograd_aot", "inductor", "capture"},
}


def imported_packages(path: pathlib.Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names & set(ALLOWED)


@pytest.mark.parametrize("package", sorted(ALLOWED))
def test_imports_follow_layer_order(package):
    bad = []
    for path in sorted((ROOT / package).rglob("*.py")):
        for imported in imported_packages(path) - ALLOWED[package] - {package}:
            bad.append(f"{path.relative_to(ROOT)} imports {imported}")
    assert not bad, "layering violations:\n" + "\n".join(bad)


@pytest.mark.parametrize("package", sorted(ALLOWED))
def test_modules_stay_under_line_cap(package):
    too_long = [
        f"{p.relative_to(ROOT)}: {n} lines"
        for p in sorted((ROOT / package).rglob("*.py"))
        if (n := len(p.read_text().splitlines())) > 1000
    ]
    assert not too_long, "modules over the 1,000-line cap:\n" + "\n".join(too_long)
