"""The fusion scheduler: loop nodes in program order -> fused KernelGroups and extern steps.

Nodes fuse (greedily, in order) into one group over x ranges X and reduction ranges R when:
  - a reduction over (X, R) joins a group over (X, R), or a pointwise group over X + R;
  - a pointwise node over X (an epilogue on the rows) or X + R (a full-space node) joins,
    also when it factors that space more coarsely ((s0*s1, 128) in a group over (s0, s1 | 128));
  - pointwise nodes over one space factored two ways ((s0*s1, 128) and (s0, s1, 128)) share
    a group over the finer factoring, the coarser node's index a combination of its dims;
  - every buffer the new node reads from the group is read at the index it was written
    (so each outer iteration produces what it consumes; backends may forward the value).
A node that fits no open group may join an earlier one, past the steps after it that write
nothing it reads (its result is only computed sooner).
Sizes are compared by the Analyzer (`an.equal`: a proof, never a guard): `s0*s1` matches
`s1*s0`, size-1 dims are ignored.

    schedule(nodes, Analyzer(env)) -> [KernelGroup k0 (s0 | s1): node0 node1 node2, ExternNode]
"""

from __future__ import annotations

from dataclasses import dataclass, field

import sympy

from symbolic import Analyzer, symbol_key
from inductor.codegen.common import GroupNode, KernelGroup
from inductor.codegen.index_simplify import recombine, simplify_index
from inductor.ir import ExternNode, LoopNode, index_vars
from inductor.ops import CountingHandler, use_handler
from inductor.reduction_split import rows_prefix, run_over_rows, sink_finals

ROWS = "rows"  # a placement's third item: pointwise members over a split sum's rows
# reductions a kernel takes: a program runs them one after the other (the final sums of a
# GPT-2 step's split column sums over 768 columns, 72 of them, are 5 kernels, not one long one)
MAX_REDUCTIONS = 16


def dims_match(node_ranges, target, an: Analyzer) -> bool:
    """Equal after dropping size-1 dims."""
    a = [s for s in node_ranges if sympy.sympify(s) != 1]
    b = [s for s in target if sympy.sympify(s) != 1]
    return len(a) == len(b) and all(map(an.equal, a, b))


def _same(a, b) -> bool:
    return sympy.expand(sympy.sympify(a) - sympy.sympify(b)) == 0


def map_vars(node_ranges, target, target_vars) -> tuple:
    """The node's index from the group's variables: size-1 dims get 0. A node dim that is the
    product of consecutive group dims (the node over (s0*s1, 128) in a group over (s0, s1, 128),
    see `refined`) is their row-major combination: x0*s1 + x1."""
    pairs = [(v, s) for v, s in zip(target_vars, target) if sympy.sympify(s) != 1]
    wanted = [s for s in node_ranges if sympy.sympify(s) != 1]
    it = iter(pairs)
    out = []
    for s in node_ranges:
        if sympy.sympify(s) == 1:
            out.append(sympy.Integer(0))
            continue
        var, size = next(it)
        if len(wanted) != len(pairs):  # a regrouped node: combine group dims up to its size
            while not _same(size, s):
                v, n = next(it)
                var, size = var * n + v, size * n
        out.append(var)
    return tuple(out)


def refined(a, b) -> tuple | None:
    """The common refinement of two factorizations of one iteration space (size-1 dims
    dropped): each block of consecutive dims whose products agree takes the finer side's dims.
    (s0, s1, 128) and (s0*s1, 128) -> (s0, s1, 128). None when no such blocks exist."""
    a = [x for x in a if sympy.sympify(x) != 1]
    b = [x for x in b if sympy.sympify(x) != 1]
    out, i, j = [], 0, 0
    while i < len(a) and j < len(b):
        block = _block(a, i, b[j])
        if block is not None:
            out += a[i:block]
            i, j = block, j + 1
            continue
        block = _block(b, j, a[i])
        if block is None:
            return None
        out += b[j:block]
        i, j = i + 1, block
    return tuple(out) if i == len(a) and j == len(b) else None


def _coarser(node_ranges, target) -> bool:
    """Whether `node_ranges` factor `target`'s space more coarsely (each node dim a run of
    target dims): a reduction group over (s0, s1 | 128) takes a node over (s0*s1, 128)."""
    finer = refined(target, node_ranges)
    want = [x for x in target if sympy.sympify(x) != 1]
    return finer is not None and len(finer) == len(want) and all(map(_same, finer, want))


def _block(dims, start, size) -> int | None:
    """The end of the run of `dims` from `start` whose product is `size`, else None."""
    product = sympy.Integer(1)
    for k in range(start, len(dims)):
        product = product * dims[k]
        if _same(product, size):
            return k + 1
    return None


@dataclass
class _Member:
    node: LoopNode
    full: bool  # a pointwise node over X + R
    # (k, split_rows): a pointwise node over (rows, columns) of a split sum's partial kernel,
    # its first k dims the rows (reduction_split.py `run_over_rows`)
    rows: tuple = ()


@dataclass
class _Group:
    xranges: tuple
    rranges: tuple
    members: list = field(default_factory=list)

    def written(self) -> set:
        return {b.name for m in self.members for b in m.node.outputs}

    def reads(self) -> set:
        return {name for m in self.members for name in m.node.reads()}


def _member_body(member: _Member, X, R):
    node = member.node

    def body(handler, xvars, rvars):
        if member.rows:
            with use_handler(handler):
                k, split_rows = member.rows
                run_over_rows(node, split_rows, k, X[1:], xvars, rvars)
        elif node.kind == "reduction":
            node.run(handler, map_vars(node.ranges, X, xvars),
                     map_vars(node.reduction_ranges, R, rvars))
        elif member.full:
            node.run(handler, map_vars(node.ranges, tuple(X) + tuple(R),
                                       tuple(xvars) + tuple(rvars)), ())
        else:
            node.run(handler, map_vars(node.ranges, X, xvars), ())
    return body


def _accesses(member: _Member, X, R) -> CountingHandler:
    counter = CountingHandler()
    body = _member_body(member, X, R)
    body(counter, index_vars("x", len(X)), index_vars("r", len(R)))
    return counter


def _placement(group: _Group | None, node: LoopNode, an: Analyzer):
    """(X, R, full) if `node` can join `group` (ignoring dependencies), else None."""
    if group is None:
        return None
    X, R = group.xranges, group.rranges
    if node.kind == "reduction" and sum(m.node.kind == "reduction"
                                        for m in group.members) >= MAX_REDUCTIONS:
        return None
    if node.kind == "reduction":
        if R:
            ok = dims_match(node.ranges, X, an) and dims_match(node.reduction_ranges, R, an)
            return (X, R, False) if ok else None
        if node.split_rows and all(m.node.kind == "pointwise" for m in group.members):
            # a split sum's partial kernel takes in the pointwise nodes over its rows x columns
            ks = [rows_prefix(m.node.ranges, node.split_rows, node.ranges[1:], an)
                  for m in group.members]
            if None not in ks:
                return (tuple(node.ranges), tuple(node.reduction_ranges), ROWS)
        # a pointwise group over exactly this reduction's full space becomes its prologue
        if all(m.node.kind == "pointwise" for m in group.members) and dims_match(
                tuple(node.ranges) + tuple(node.reduction_ranges), X, an):
            return (tuple(node.ranges), tuple(node.reduction_ranges), False)
        return None
    if dims_match(node.ranges, X, an) or _coarser(node.ranges, X):
        return (X, R, False)
    if R and (dims_match(node.ranges, tuple(X) + tuple(R), an)
              or _coarser(node.ranges, tuple(X) + tuple(R))):
        return (X, R, True)
    split = _split_rows(group)
    if split and rows_prefix(node.ranges, split, X[1:], an) is not None:
        return (X, R, ROWS)  # a pointwise node over the rows x columns a partial kernel sums
    if not R:  # pointwise nodes over one space factored two ways: the finer factoring
        finer = refined(X, node.ranges)
        if finer is not None:
            return (finer, R, False)
    return None


def _same_index(a, b, X, R, an: Analyzer) -> bool:
    """Whether two load/store indices over the group's loop variables are equal: syntactically,
    or after the loop extents fold the FloorDiv/Mod a reshape left (`(64*(s1*x0 + x1) + r0) //
    (64*s1)` is x0 when r0 < 64 and x1 < s1)."""
    if sympy.expand(a - b) == 0 or recombine(a - b) == 0:  # a split sum's FloorDiv/Mod rows
        return True
    extents = dict(zip(index_vars("x", len(X)), X)) | dict(zip(index_vars("r", len(R)), R))
    return sympy.expand(simplify_index(a, extents, an) - simplify_index(b, extents, an)) == 0


def _split_rows(group: _Group) -> tuple:
    """The split_rows of the split sum's partial node in `group`, else ()."""
    return next((m.node.split_rows for m in group.members if m.node.split_rows), ())


def _rows_member(node: LoopNode, split_rows: tuple, X, an: Analyzer) -> _Member:
    return _Member(node, False, (rows_prefix(node.ranges, split_rows, X[1:], an), split_rows))


def _placed_members(group: _Group, node: LoopNode, placement, an: Analyzer) -> list:
    """The group's members, then `node`, as they run once `node` joins at `placement`."""
    X, R, full = placement
    if full is ROWS and not group.rranges:  # the pointwise nodes run over the split's rows
        return [_rows_member(m.node, node.split_rows, X, an) for m in group.members] + \
            [_Member(node, False)]
    if full is ROWS:
        return group.members + [_rows_member(node, _split_rows(group), X, an)]
    if R and not group.rranges:  # the group's pointwise nodes become full-space nodes
        return [_Member(m.node, True) for m in group.members] + [_Member(node, full)]
    return group.members + [_Member(node, full)]


def _can_fuse(members: list, X, R, an: Analyzer) -> bool:
    """Every buffer the last member reads from the others is read where it was written."""
    *members, new = members
    stores = {}
    for m in members:
        for name, index in _accesses(m, X, R).stores:
            stores[name] = index
    written = set(stores)
    for name, index in _accesses(new, X, R).loads:
        if name in written and not _same_index(index, stores[name], X, R, an):
            return False
    return True


def _join(group: _Group | None, node: LoopNode, an: Analyzer) -> bool:
    """Add `node` to `group` if it fits there (ranges, and reads at the written index)."""
    placement = _placement(group, node, an)
    if placement is None:
        return False
    X, R, _ = placement
    members = _placed_members(group, node, placement, an)
    if not _can_fuse(members, X, R, an):
        return False
    group.members = members
    group.xranges, group.rranges = X, R
    return True


def _writes(step) -> set:
    return {b.name for b in step.outputs} if isinstance(step, ExternNode) else step.written()


def _join_earlier(steps: list, node: LoopNode, an: Analyzer) -> bool:
    """Add `node` to an earlier group it fits, across the externs and groups after it that
    write nothing `node` reads (every buffer is written once, and no earlier step reads what
    `node` writes, so running it earlier changes no value): a saved activation or a second
    consumer of a value joins the kernel that already reads or writes its inputs."""
    reads = node.reads()
    for step in reversed(steps):
        # only a group that already touches what `node` reads: the inputs are read once, and a
        # result is never computed far from where it is used (its buffer would live longer)
        if isinstance(step, _Group) and reads & (step.written() | step.reads()) \
                and _join(step, node, an):
            return True
        if _writes(step) & reads:
            return False
    return False


def schedule(nodes, an: Analyzer | None = None) -> list:
    """Fuse `nodes` (LoopNode | ExternNode, program order) into KernelGroups and ExternNodes."""
    an = an if an is not None else Analyzer()
    steps: list = []
    group: _Group | None = None
    for node in sink_finals(list(nodes)):
        if isinstance(node, ExternNode):
            if group is not None:
                steps.append(group)
                group = None
            steps.append(node)
            continue
        if _join(group, node, an):
            continue
        if (group is None or not group.written() & node.reads()) and _join_earlier(
                steps, node, an):
            continue
        if group is not None:
            steps.append(group)
        if node.kind == "reduction":
            group = _Group(tuple(node.ranges), tuple(node.reduction_ranges))
        else:
            group = _Group(tuple(node.ranges), ())
        group.members.append(_Member(node, False))
    if group is not None:
        steps.append(group)
    return steps


def finalize(steps, buffers: dict, live_after: set) -> list:
    """_Groups -> KernelGroups with inputs/outputs/symbols; `live_after` are graph outputs."""
    readers: dict[str, list[int]] = {}
    for i, step in enumerate(steps):
        names = step.reads() if isinstance(step, ExternNode) else {
            name for m in step.members for name, _ in _accesses(
                m, step.xranges, step.rranges).loads}
        for name in names:
            readers.setdefault(name, []).append(i)
    out = []
    for i, step in enumerate(steps):
        if isinstance(step, ExternNode):
            out.append(step)
            continue
        X, R = step.xranges, step.rranges
        loads, stores, symbols = set(), set(), set()
        loop_vars = set(index_vars("x", len(X))) | set(index_vars("r", len(R)))
        for m in step.members:
            acc = _accesses(m, X, R)
            for name, index in acc.loads:
                loads.add(name)
                symbols |= sympy.sympify(index).free_symbols
            for name, index in acc.stores:
                stores.add(name)
                symbols |= sympy.sympify(index).free_symbols
            for expr in acc.exprs:
                symbols |= sympy.sympify(expr).free_symbols
        for s in tuple(X) + tuple(R):
            symbols |= sympy.sympify(s).free_symbols
        symbols = {s for s in symbols - loop_vars if s.name.startswith("s")}
        written = stores
        external_reads = sorted(loads - written)
        outputs = sorted(n for n in written if n in live_after or any(
            j > i for j in readers.get(n, ())))
        internal = frozenset(written - set(outputs))
        names = "_".join(m.node.name for m in step.members)[:40]
        kind = "red" if R else "pw"
        nodes = tuple(GroupNode(_member_body(m, X, R), m.node.name, m.node.kind,
                                m.full or bool(m.rows))
                      for m in step.members)
        dtypes = {n: buffers[n].dtype for n in loads | stores}
        out.append(KernelGroup(f"k{i}_{kind}_{names}", tuple(X), tuple(R), nodes, dtypes,
                               tuple(external_reads), tuple(sorted(written)), internal,
                               tuple(sorted(symbols, key=symbol_key))))
    return out
