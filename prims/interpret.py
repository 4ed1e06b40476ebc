"""Running decompositions and prims graphs: infer_meta, decompose, run_reference.

    infer_meta(torch.matmul, (f32[s0, 64], f32[64, 32]), {}, env)  ->  f32[s0, 32]
    decompose(torch_graph, env)   -> prims graph (targets are Prims or prims.getitem)
    run_reference(prims_graph, [x, w])  -> tuple of outputs, every prim run by its ref
"""

from __future__ import annotations

import operator

import sympy
import torch.fx as fx

from prims.autocast import with_autocast
from prims.core import Prim, PrimError, tracing
from prims.decompositions import decomposition_for, has_decomposition
from prims.generators import rng_final
from prims.trace import GraphTracer, MetaTracer, TracedTensor, getitem
from symbolic import TensorMeta, meta_of
from symbolic.binding import bind, symbol_readers



def _map(value, fn):
    if isinstance(value, tuple):
        return tuple(_map(v, fn) for v in value)
    if isinstance(value, list):
        return [_map(v, fn) for v in value]
    if isinstance(value, dict):
        return {k: _map(v, fn) for k, v in value.items()}
    if isinstance(value, slice):
        return slice(_map(value.start, fn), _map(value.stop, fn), _map(value.step, fn))
    return fn(value)


def infer_meta(target, args, kwargs, env):
    """Output meta of the torch call `target(*args, **kwargs)` (args hold TensorMetas).

    Runs the decomposition under a MetaTracer over `env` (the ShapeEnv of the args' symbols),
    so the guards and asserts it needs are recorded there. Returns a TensorMeta, tuple, or scalar.
    """
    kwargs = kwargs or {}
    if target is operator.getitem and not isinstance(args[0], (TensorMeta, TracedTensor)):
        return args[0][args[1]]
    fn = with_autocast(target, decomposition_for(target))
    with tracing(MetaTracer(env)):
        out = fn(*args, **kwargs)
    if any(getattr(v, "requires_grad", False) for v in _leaves((args, kwargs))):
        out = _map(out, _with_grad)
    return out


def _leaves(value):
    if isinstance(value, (tuple, list)):
        return [leaf for v in value for leaf in _leaves(v)]
    if isinstance(value, dict):
        return _leaves(list(value.values()))
    return [value]


def _with_grad(meta):
    """Outputs of a call on tensors that require grad require grad too (float dtypes only)."""
    if isinstance(meta, TensorMeta) and (meta.dtype.is_floating_point or meta.dtype.is_complex):
        return TensorMeta(meta.shape, meta.dtype, meta.device, meta.stride, True)
    return meta


def _as_value(node: fx.Node):
    meta = meta_of(node)
    if isinstance(meta, TensorMeta):
        return TracedTensor(node, meta)
    if isinstance(meta, tuple):
        return tuple(TracedTensor(node, m) for m in meta)  # unusual: no getitem nodes yet
    return meta  # a symbol placeholder: its sympy symbol stands for the value


def decompose(graph: fx.Graph, env) -> fx.Graph:
    """Turn a torch-level fx graph into a prims graph (a new graph; the input is unchanged).

    Placeholders are copied with their meta. When randomness is used, one extra placeholder
    `rng_seed` (a 0-dim int64 tensor, `node.meta["rng_seed"] = True`) is added after them:
    callers pass a fresh seed per run. `out.rng_final` says what torch's generators must look
    like after a run (prims.generators `rng_final`).
    """
    out = fx.Graph()
    tracer = GraphTracer(out, env)
    values: dict[fx.Node, object] = {}
    with tracing(tracer):
        for node in graph.nodes:
            if node.op == "placeholder":
                new = out.placeholder(node.target)
                new.meta.update(node.meta)
                values[node] = _as_value(new)
            elif node.op == "call_function":
                args = _map(node.args, lambda v: values[v] if isinstance(v, fx.Node) else v)
                kwargs = _map(node.kwargs, lambda v: values[v] if isinstance(v, fx.Node) else v)
                values[node] = _call(node.target, args, kwargs)
            elif node.op == "output":
                result = _map(node.args[0], lambda v: _to_node(values[v], out)
                              if isinstance(v, fx.Node) else v)
                out.output(result)
            else:
                raise PrimError(f"decompose: expected placeholder/call_function/output nodes, "
                                f"found {node.op} ({node.format_node()})")
        out.rng_final = rng_final(tracer)
    return out


def _call(target, args, kwargs):
    if target is operator.getitem and not isinstance(args[0], (TensorMeta, TracedTensor)):
        return args[0][args[1]]
    if target is getitem:
        return args[0][args[1]]
    return with_autocast(target, decomposition_for(target))(*args, **kwargs)


def _to_node(value, graph):
    if isinstance(value, TracedTensor):
        return value.node
    if isinstance(value, (tuple, list)):
        return type(value)(_to_node(v, graph) for v in value)
    return value


# --------------------------------------------------------------------------- reference run
def symbol_values(graph: fx.Graph, inputs) -> dict:
    """Each symbol's value, read from the sizes of the inputs (or the symbol placeholders)."""
    placeholders = [n for n in graph.nodes if n.op == "placeholder"][:len(inputs)]
    return bind(symbol_readers([_shape_or_symbol(n.meta.get("val")) for n in placeholders]),
                inputs)


def _shape_or_symbol(meta):
    if isinstance(meta, TensorMeta):
        return tuple(meta.shape)
    return meta if isinstance(meta, sympy.Symbol) else None


def _substitute(value, symbols):
    if isinstance(value, sympy.Basic) and not isinstance(value, sympy.logic.boolalg.BooleanAtom):
        result = sympy.sympify(value.xreplace(symbols) if symbols else value)
        if not result.is_number:
            raise PrimError(f"run_reference: no value for symbols {result.free_symbols}")
        return int(result) if result.is_integer else float(result)
    return value


def run_reference(graph: fx.Graph, inputs, symbol_values_=None) -> tuple:
    """Run a prims graph with every prim's reference implementation; returns its outputs."""
    inputs = list(inputs)
    symbols = dict(symbol_values_ or {})
    symbols.update({k: v for k, v in symbol_values(graph, inputs).items() if k not in symbols})
    env: dict[fx.Node, object] = {}
    placeholders = iter(inputs)
    for node in graph.nodes:
        if node.op == "placeholder":
            try:
                env[node] = next(placeholders)
            except StopIteration:
                raise PrimError(f"run_reference: expected an input for {node.name}, found "
                                f"only {len(inputs)} inputs") from None
        elif node.op == "call_function":
            args = _map(node.args, lambda v: env[v] if isinstance(v, fx.Node)
                        else _substitute(v, symbols))
            kwargs = _map(node.kwargs, lambda v: env[v] if isinstance(v, fx.Node)
                          else _substitute(v, symbols))
            target = node.target
            if not isinstance(target, Prim) and target is not getitem and not (
                    target is operator.getitem):
                if has_decomposition(target):
                    target = decomposition_for(target)
                else:
                    raise PrimError(f"run_reference: expected prims, found {target}")
            with tracing(None):
                env[node] = target(*args, **kwargs)
        elif node.op == "output":
            out = _map(node.args[0], lambda v: env[v] if isinstance(v, fx.Node) else v)
            return tuple(out) if isinstance(out, (tuple, list)) else (out,)
    raise PrimError("run_reference: the graph has no output node")
