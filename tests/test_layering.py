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


# ---------------------------------------------------------------------- no cycles in a package
def _module_name(path: pathlib.Path, root: pathlib.Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def import_graph(root: pathlib.Path, package: str) -> dict[str, set[str]]:
    """Module -> the modules of `package` it imports, anywhere in its body (inside functions
    too): `import a.b`, `import a.b as c`, `from a import b`, `from . import b`, `from .a import b`.

    An import names the deepest module of the package it reaches: `from capture import calls`
    is an edge to capture.calls, `from capture.calls import inline` one to capture.calls,
    `from capture import translate` (a function re-exported by the package) one to capture.
    """
    modules = {_module_name(p, root): p for p in sorted((root / package).rglob("*.py"))}
    graph = {}
    for name, path in modules.items():
        here = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        found = set()
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    parts = alias.name.split(".")
                    while parts and ".".join(parts) not in modules:
                        parts.pop()
                    if parts:
                        found.add(".".join(parts))
            elif isinstance(node, ast.ImportFrom):
                base = here[: len(here) - node.level + 1] if node.level else []
                target = ".".join(base + ([node.module] if node.module else []))
                for alias in node.names:
                    if f"{target}.{alias.name}" in modules:
                        found.add(f"{target}.{alias.name}")
                    elif target in modules:
                        found.add(target)
        graph[name] = found - {name}
    return graph


def find_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One chain `a -> b -> ... -> a` per strongly connected group of modules (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while not group or group[-1] != v:
                group.append(stack.pop())
            if len(group) > 1:
                groups.append(set(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return [_chain(graph, group) for group in groups]


def _chain(graph: dict[str, set[str]], group: set[str]) -> list[str]:
    """A shortest cycle through the group's first module, as a list that ends where it starts."""
    start = min(group)
    previous = {start: None}
    frontier = [start]
    while frontier:
        following = []
        for v in frontier:
            for w in sorted(graph[v] & group):
                if w == start:
                    chain = [v]
                    while previous[chain[-1]] is not None:
                        chain.append(previous[chain[-1]])
                    return [*reversed(chain), start]
                if w not in previous:
                    previous[w] = v
                    following.append(w)
        frontier = following
    raise AssertionError(f"no cycle through {start}")  # a strongly connected group has one


@pytest.mark.parametrize("package", sorted(ALLOWED))
def test_no_import_cycles_inside_package(package):
    cycles = find_cycles(import_graph(ROOT, package))
    assert not cycles, "import cycles (imports inside functions count):\n" + "\n".join(
        " -> ".join(chain) for chain in cycles)


def _write_package(root: pathlib.Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_cycle_detector_finds_function_level_and_relative_imports(tmp_path):
    _write_package(tmp_path, {
        "pkg/__init__.py": "from pkg.a import f\n",
        "pkg/a.py": "from . import b\n\ndef f():\n    return b.g()\n",
        "pkg/b.py": "def g():\n    from .sub import c\n    return c.h()\n",
        "pkg/sub/__init__.py": "",
        "pkg/sub/c.py": "def h():\n    import pkg.a as again\n    return again\n",
        "pkg/d.py": "import pkg.sub.c\nfrom pkg import a\n",
    })
    graph = import_graph(tmp_path, "pkg")
    assert graph["pkg"] == {"pkg.a"}
    assert graph["pkg.a"] == {"pkg.b"}
    assert graph["pkg.b"] == {"pkg.sub.c"}
    assert graph["pkg.sub.c"] == {"pkg.a"}
    assert graph["pkg.d"] == {"pkg.sub.c", "pkg.a"}
    assert find_cycles(graph) == [["pkg.a", "pkg.b", "pkg.sub.c", "pkg.a"]]


def test_cycle_detector_passes_an_acyclic_package(tmp_path):
    _write_package(tmp_path, {
        "pkg/__init__.py": "from pkg.top import run\n",
        "pkg/base.py": "import math\nfrom typing import Any\n",
        "pkg/mid.py": "from .base import Any\n\ndef f():\n    from pkg import base\n",
        "pkg/top.py": "from pkg.mid import f\nimport pkg.base as b\n\ndef run():\n    return f()\n",
    })
    graph = import_graph(tmp_path, "pkg")
    assert graph["pkg.top"] == {"pkg.mid", "pkg.base"}
    assert graph["pkg.mid"] == {"pkg.base"}
    assert find_cycles(graph) == []


def test_cycle_detector_reports_each_cycle(tmp_path):
    _write_package(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/a.py": "from pkg import b\n",
        "pkg/b.py": "def f():\n    from pkg.a import x\n",
        "pkg/c.py": "from .d import y\n",
        "pkg/d.py": "from .c import z\n",
    })
    assert sorted(find_cycles(import_graph(tmp_path, "pkg"))) == [
        ["pkg.a", "pkg.b", "pkg.a"], ["pkg.c", "pkg.d", "pkg.c"]]
