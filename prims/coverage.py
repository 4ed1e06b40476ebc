"""The coverage table, generated from the registries (the README includes it).

    print(coverage_markdown())   # prims by kind, then torch callables with decompositions
"""

from __future__ import annotations

from collections import defaultdict

from prims.core import PRIMS, PrimKind
from prims.decompositions import DECOMPOSITIONS, target_name


def prims_by_kind() -> dict[PrimKind, list[str]]:
    out: dict[PrimKind, list[str]] = defaultdict(list)
    for prim in PRIMS.values():
        out[prim.kind].append(prim.name)
    return {kind: sorted(out[kind]) for kind in PrimKind if out[kind]}


def decomposed_targets() -> dict[str, list[str]]:
    """Names of the decomposed torch callables, grouped by namespace."""
    groups: dict[str, set[str]] = defaultdict(set)
    for target in DECOMPOSITIONS:
        name = target_name(target)
        namespace, _, short = name.rpartition(".")
        groups[namespace].add(short)
    return {ns: sorted(groups[ns]) for ns in sorted(groups)}


def coverage_markdown() -> str:
    """A markdown table of every prim (by kind) and every torch callable with a decomposition."""
    lines = [f"### Prims ({len(PRIMS)})", "", "| kind | prims |", "|---|---|"]
    for kind, names in prims_by_kind().items():
        lines.append(f"| {kind.value} | {', '.join(f'`{n}`' for n in names)} |")
    groups = decomposed_targets()
    total = sum(len(v) for v in groups.values())
    lines += ["", f"### Torch callables with decompositions ({total})", "",
              "| namespace | callables |", "|---|---|"]
    for namespace, names in groups.items():
        lines.append(f"| `{namespace}` | {', '.join(f'`{n}`' for n in names)} |")
    return "\n".join(lines) + "\n"
