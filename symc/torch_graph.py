"""A torch-level fx graph as one generated Python function (the "eager" backend's runner).

Interpreting the graph node by node costs more than the ops of a small model; the generated
function is straight-line code. Targets and constants live in its globals; a sympy size in an
argument (a reshape to `(s0*s1, 64)`) becomes `_int(e3, V)`, this call's value of it.

    run = compile_torch_graph(graph, readers=[SymbolReader(s0, 0, 0), SymbolReader(s1, 1, 1)])
    outputs = run(x, w)
    print(run.source)
        def torch_graph(n0, n1):
            V = {y0: n0.shape[0], y1: n1.shape[1]}
            n2 = t0(n0, n1, None)
            n3 = t1(n2, (_int(e0, V), 64))
            return (n3,)

The symbol values `V` are read from the inputs' sizes (`readers`: symbolic/binding.py's
`SymbolReader`s) only when some argument needs them.
"""

from __future__ import annotations

import math

import sympy
import torch.fx as fx


class TorchGraphError(ValueError):
    """A node the generated runner does not support (only placeholders, calls and output)."""


def _int(expr: sympy.Expr, values: dict) -> int:
    return int(expr.xreplace(values))


class _Writer:
    def __init__(self) -> None:
        self.globals: dict[str, object] = {"_int": _int}
        self.names: dict[fx.Node, str] = {}

    def constant(self, value, prefix: str = "c") -> str:
        name = f"{prefix}{len(self.globals)}"
        self.globals[name] = value
        return name

    def arg(self, value) -> str:
        if isinstance(value, fx.Node):
            return self.names[value]
        if isinstance(value, sympy.Expr):
            if not value.free_symbols:
                return str(int(value))
            return f"_int({self.constant(value, 'e')}, V)"
        if isinstance(value, tuple):
            return "(" + "".join(f"{self.arg(v)}, " for v in value) + ")"
        if isinstance(value, list):
            return "[" + ", ".join(self.arg(v) for v in value) + "]"
        if isinstance(value, dict):
            return "{" + ", ".join(f"{k!r}: {self.arg(v)}" for k, v in value.items()) + "}"
        if isinstance(value, slice):
            return f"slice({self.arg(value.start)}, {self.arg(value.stop)}, {self.arg(value.step)})"
        if value is None or type(value) in (bool, int, str):
            return repr(value)
        if type(value) is float and math.isfinite(value):
            return repr(value)
        return self.constant(value)


def compile_torch_graph(graph: fx.Graph, readers=()):
    """`run(*inputs) -> tuple` executing `graph`; `run.source` is the generated code."""
    w = _Writer()
    placeholders, lines, output = [], [], None
    for i, node in enumerate(graph.nodes):
        name = f"n{i}"
        if node.op == "placeholder":
            w.names[node] = name
            placeholders.append(name)
        elif node.op == "call_function":
            target = w.constant(node.target, "t")
            args = [w.arg(a) for a in node.args]
            args += [f"{k}={w.arg(v)}" for k, v in node.kwargs.items()]
            lines.append(f"{name} = {target}({', '.join(args)})")
            w.names[node] = name
        elif node.op == "output":
            output = w.arg(tuple(node.args[0]))
        else:
            raise TorchGraphError(f"unexpected node {node.format_node()} in a torch-level graph")
    if output is None:
        raise TorchGraphError("graph has no output node")
    values = ", ".join(f"{w.constant(r.symbol, 'y')}: {r.text(placeholders[r.input])}"
                       for r in readers)
    uses_sizes = any("_int(" in line for line in [*lines, output])
    head = [f"    V = {{{values}}}"] if uses_sizes else []
    source = "\n".join([f"def torch_graph({', '.join(placeholders)}):", *head,
                        *(f"    {line}" for line in lines), f"    return {output}"])
    exec(compile(source, "<symc torch_graph>", "exec"), w.globals)  # noqa: S102 - generated
    run = w.globals["torch_graph"]
    run.source = source
    return run
