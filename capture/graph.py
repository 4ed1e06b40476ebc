"""GraphState: the fx graph, ShapeEnv and guards one capture builds, and how values enter it.

    state = GraphState()
    x = state.add_input(tensor, LocalSource("x"))        # placeholder x: f32[s0, s1]
    y = state.call(torch.relu, [x], {})                  # call_function relu -> f32[s0, s1]

Placeholders are user tensor inputs first, then parameters, buffers and other tensor attributes
(static sizes). Every torch call's output meta comes from `capture.meta.output_meta`.
"""

from __future__ import annotations

import dataclasses
import operator

import sympy
import torch
import torch.fx as fx

from capture.errors import CaptureError, Unsupported
from capture.layout import InputLayout, check_input_kind
from capture.marks import marks_of
from capture.meta import output_meta
from capture.side_effects import AttributeWrites
from capture.variables import (
    StructSeqVariable,
    ConstVariable,
    DictVariable,
    ListVariable,
    ObjectVariable,
    SizeVariable,
    SliceVariable,
    SymBoolVariable,
    SymFloatVariable,
    SymIntVariable,
    TensorItemVariable,
    TensorVariable,
    TupleVariable,
    Variable,
    ViewStep,
)
from guards import GuardSet, IdentityGuard, TensorMatchGuard, ValueGuard
from prims import PRIM_DTYPES, python_scalar_type, structseq_type
from prims.devices import recording_default_device
from symbolic import (
    DefaultDeviceSource,
    ShapeError,
    ShapeEnv,
    SizeSource,
    Source,
    TensorMeta,
    user_location,
)

# Tensor methods/functions whose result aliases their input (in-place ops on either break).
VIEW_NAMES = frozenset(
    "view view_as reshape transpose permute select narrow squeeze unsqueeze expand expand_as t "
    "T mT flatten unflatten split chunk unbind diagonal movedim __getitem__ as_strided "
    "swapaxes swapdims detach".split()
)


class GraphState:
    """Everything one capture accumulates: graph, env, guards, inputs and the current location."""

    def __init__(self, dynamic: bool = True):
        self.graph = fx.Graph()
        self.env = ShapeEnv()
        self.guards = GuardSet(env=self.env)
        self.dynamic = dynamic
        self.inputs: list[Source] = []
        self.input_vars: list[TensorVariable] = []
        self.by_source: dict[str, TensorVariable] = {}
        self.where: str | None = None
        self.line: str | None = None
        self.grad_enabled: bool = torch.is_grad_enabled()
        self.grad_recorded = False   # some op was recorded with grad enabled (see Capture)
        self._names: set[str] = set()
        self._guard_keys: set = set()
        self.attr_writes = AttributeWrites()
        # float arguments kept symbolic: symbol -> (source, example value, 0-d tensor input)
        self.float_inputs: dict = {}

    # ------------------------------------------------------------------ guards
    def guard(self, guard_type, source: Source | None, *args, **fields) -> None:
        """Record `guard_type(source, *args, where=...)`; values with no source go unguarded."""
        if source is None or not _readable(source):
            return
        key = (guard_type, str(source), args, tuple(fields.items()))
        if key in self._guard_keys:  # the first line that needed it is the one shown
            return
        self._guard_keys.add(key)
        self.guards.add(guard_type(source, *args, where=self.where, **fields))

    def evaluate(self, cond) -> bool:
        with user_location(self.where):
            return self.env.evaluate(cond)

    def specialise(self, expr) -> int:
        """The example value of a size expression, with the guard `expr == value`."""
        if isinstance(expr, int):
            return expr
        with user_location(self.where):
            return self.env.evaluate_int(expr)

    def expect(self, cond, message: str = "", error: type = ShapeError) -> None:
        with user_location(self.where):
            self.env.expect(cond, message, error)

    # ------------------------------------------------------------------ inputs
    def _placeholder(self, name: str, meta: TensorMeta) -> fx.Node:
        base = "".join(c if c.isalnum() else "_" for c in name).strip("_") or "input"
        unique, i = base, 1
        while unique in self._names:
            unique, i = f"{base}_{i}", i + 1
        self._names.add(unique)
        first_op = next((n for n in self.graph.nodes if n.op != "placeholder"), None)
        if first_op is None:
            node = self.graph.placeholder(unique)
        else:
            with self.graph.inserting_before(first_op):
                node = self.graph.placeholder(unique)
        node.meta["val"] = meta
        return node

    def add_input(self, t: torch.Tensor, source: Source, *, static: bool = False) -> TensorVariable:
        """A tensor the graph reads: a placeholder, a TensorMatchGuard and size symbols."""
        # One placeholder per source: an aliased input (the same tensor under two names, tied
        # weights) gets two placeholders, which stays correct when later calls pass distinct ones.
        known = self.by_source.get(str(source))
        if known is not None:
            return known
        check_input_kind(t, source)
        if torch._C._dispatch_keys(t).has(torch._C.DispatchKey.Python):
            # AsyncCollectiveTensor and other wrappers whose ops run in Python
            # (__torch_dispatch__): compiled kernels would read the wrapper's storage.
            raise Unsupported(f"input {source} is a {type(t).__name__} (a tensor with "
                              f"__torch_dispatch__): it runs eagerly")
        if t.dtype not in PRIM_DTYPES:
            raise Unsupported(f"input {source} has dtype {t.dtype}, which symc's prims do not "
                              f"support")
        marks = marks_of(t)
        shape, static_sizes = [], []
        for dim, size in enumerate(t.shape):
            mark = marks.get(dim)
            dynamic = self.dynamic and not static
            lo = hi = None
            if mark is not None:
                dynamic, lo, hi = mark.dynamic, mark.min, mark.max
            if mark is not None and mark.dynamic:
                expr = self._marked_symbol(int(size), SizeSource(source, dim), lo, hi)
            else:
                expr = self.env.create_symbol(int(size), SizeSource(source, dim), dynamic=dynamic)
            if expr.is_Integer:
                static_sizes.append((dim, int(size)))
            shape.append(expr)
        meta = TensorMeta.contiguous(tuple(shape), t.dtype, t.device, t.requires_grad)
        self.guard(TensorMatchGuard, source, t.dtype, t.device, t.dim(), t.requires_grad,
                   tuple(static_sizes), type_=type(t))
        node = self._placeholder(str(source).replace("L[", "").replace("G[", ""), meta)
        var = TensorVariable(node, meta, source=source, input_node=node, exact_type=type(t),
                             layout=InputLayout.of(t))
        self.inputs.append(source)
        self.input_vars.append(var)
        self.by_source[str(source)] = var
        return var

    def _marked_symbol(self, size: int, source: Source, lo, hi) -> sympy.Expr:
        # A range given by the user keeps even sizes 0/1 symbolic (create_symbol's rule).
        lo = 0 if lo is None and size == 0 else lo
        lo = 1 if lo is None else lo
        try:
            return self.env.create_symbol(size, source, dynamic=True, min=lo, max=hi)
        except Exception as exc:  # noqa: BLE001 - ShapeError: size outside the declared range
            raise CaptureError(str(exc)) from None

    # ------------------------------------------------------------------ torch calls
    def call(self, target, args: list, kwargs: dict, *, view_of: TensorVariable | None = None):
        """Add `target(*args, **kwargs)` as a call_function node; return its output Variable."""
        try:
            return self._call(target, args, kwargs, view_of)
        except Unsupported:
            from capture.int_args import specialise_int_args

            retry = specialise_int_args(self, args, kwargs)  # an int argument as a dim, ...
            if retry is None:
                raise
            return self._call(target, *retry, view_of)

    def _call(self, target, args: list, kwargs: dict, view_of: TensorVariable | None):
        node_args = tuple(to_arg(a, self) for a in args)
        node_kwargs = {k: to_arg(v, self) for k, v in kwargs.items()}
        meta_args = tuple(to_meta_arg(a, self) for a in args)
        meta_kwargs = {k: to_meta_arg(v, self) for k, v in kwargs.items()}
        with user_location(self.where), recording_default_device() as reads:
            meta = output_meta(target, meta_args, meta_kwargs, self.env)
        if reads:  # a factory call without device=: the entry holds only under this default
            self.guard(ValueGuard, DefaultDeviceSource(), str(reads[0]))
        if meta is None or isinstance(meta, (bool, int, float, sympy.Basic)):
            return self._call_result(meta)
        if isinstance(meta, torch.Size) or _is_size_tuple(meta):  # torch.broadcast_shapes
            return SizeVariable([self._call_result(m) for m in meta])
        node = self.graph.call_function(target, node_args, node_kwargs)
        node.meta["val"] = meta
        node.meta["where"] = self.where
        step = None
        if view_of is not None:
            step = ViewStep(target, tuple(args[1:]), tuple(kwargs.items()), self.grad_enabled)
        out = self._wrap_output(node, meta, view_of, step)
        if not self.grad_enabled:
            out = self._detach(out)
        else:
            self.grad_recorded = True
        scalar = python_scalar_type(target)
        if scalar is not None and isinstance(out, TensorVariable):  # torch.allclose: a bool
            return TensorItemVariable(out, scalar)
        named = structseq_type(target) if isinstance(out, TupleVariable) else None
        return out if named is None else StructSeqVariable(out.items, tuple_type=named)

    @staticmethod
    def _call_result(meta):
        """A call's Python value (no graph node): a constant, a size or a size condition."""
        if isinstance(meta, sympy.Basic) and not isinstance(meta, sympy.Expr):
            return SymBoolVariable(meta)
        if isinstance(meta, sympy.Expr):
            return ConstVariable(int(meta)) if meta.is_Integer else SymIntVariable(meta)
        return ConstVariable(meta)

    def _detach(self, var):
        """Inside `torch.no_grad()`: results are detached, so every backend stops gradients."""
        if isinstance(var, TupleVariable):
            return TupleVariable([self._detach(v) for v in var.items])
        if not isinstance(var, TensorVariable) or not var.meta.dtype.is_floating_point:
            return var
        meta = TensorMeta(var.meta.shape, var.meta.dtype, var.meta.device, var.meta.stride, False)
        node = self.graph.call_function(torch.Tensor.detach, (var.node,))
        node.meta["val"] = meta
        node.meta["where"] = self.where
        if var.base is None:
            return TensorVariable(node, meta)
        # Still a view of the same root (the detach only mirrors eager's no-grad results).
        return var.derive_view(node, meta)

    def _wrap_output(self, node: fx.Node, meta, view_of, step=None):
        if isinstance(meta, TensorMeta):
            if view_of is None:
                return TensorVariable(node, meta)
            return view_of.derive_view(node, meta, step)
        if isinstance(meta, (tuple, list)):
            items = []
            for i, m in enumerate(meta):
                item = self.graph.call_function(operator.getitem, (node, i))
                item.meta["val"] = m
                item.meta["where"] = self.where
                item_step = None if step is None else dataclasses.replace(step, item=i)
                items.append(self._wrap_output(item, m, view_of, item_step))
            return TupleVariable(items)
        raise CaptureError(f"unexpected output meta {meta!r} of {node.target}")

    def output(self, tensors: list[TensorVariable]) -> None:
        self.graph.output(tuple(t.node for t in tensors))


def _is_size_tuple(meta) -> bool:
    """A tuple of symbolic sizes (a shape a decomposition computed), not of tensors."""
    return isinstance(meta, tuple) and any(isinstance(m, sympy.Expr) for m in meta) and all(
        isinstance(m, sympy.Expr) or type(m) is int for m in meta)


def _is_frozen(value) -> bool:
    """An instance of a frozen dataclass of plain constants (nothing in it can change)."""
    params = getattr(type(value), "__dataclass_params__", None)
    if params is None or not params.frozen or isinstance(value, type):
        return False
    plain = (type(None), bool, int, float, str, torch.dtype, torch.device)
    return all(isinstance(getattr(value, f.name), plain) for f in dataclasses.fields(value))


def _readable(source: Source) -> bool:
    return "<" not in str(source)


def to_arg(var: Variable, state: GraphState):
    """A Variable as an fx node argument (nodes, constants, sympy sizes, nested containers)."""
    if isinstance(var, TensorVariable):
        return var.node
    if isinstance(var, SymIntVariable):
        return var.expr
    if isinstance(var, ConstVariable):
        return var.value
    if isinstance(var, SymBoolVariable):
        return state.evaluate(var.expr)
    if isinstance(var, SymFloatVariable):  # a non-tensor argument: specialised (guards)
        from capture.symfloat import specialise_float

        return specialise_float(state, var)
    if isinstance(var, (TupleVariable, ListVariable)):
        items = [to_arg(v, state) for v in var.items]
        return items if isinstance(var, ListVariable) else tuple(items)
    if isinstance(var, DictVariable):
        return {k: to_arg(v, state) for k, v in var.items.items()}
    if isinstance(var, SliceVariable):
        return slice(to_arg(var.start, state), to_arg(var.stop, state), to_arg(var.step, state))
    if isinstance(var, ObjectVariable) and isinstance(var.value, (torch.dtype, torch.device)):
        return var.value
    if isinstance(var, ObjectVariable) and var.source is not None and _is_frozen(var.value):
        # an options record (F.linear_cross_entropy's): fixed for this entry by its identity
        state.guard(IdentityGuard, var.source, id(var.value), repr(var.value))
        return var.value
    raise Unsupported(f"cannot pass {type(var).__name__} ({var!r}) to a torch op")


def to_meta_arg(var: Variable, state: GraphState):
    """Like `to_arg`, with TensorMetas in place of nodes (what `output_meta` reads)."""
    if isinstance(var, TensorVariable):
        return var.meta
    if isinstance(var, (TupleVariable, ListVariable)):
        items = [to_meta_arg(v, state) for v in var.items]
        return items if isinstance(var, ListVariable) else tuple(items)
    if isinstance(var, DictVariable):
        return {k: to_meta_arg(v, state) for k, v in var.items.items()}
    if isinstance(var, SliceVariable):
        return slice(to_meta_arg(var.start, state), to_meta_arg(var.stop, state),
                     to_meta_arg(var.step, state))
    return to_arg(var, state)
