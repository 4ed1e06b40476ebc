"""If-conversion: an `if` on an undecided size condition whose two arms are pure tensor code
becomes one `torch.where`, with no guard.

    if is_causal:                       # is_causal = q_length > 1 (transformers' T5 sdpa mask)
        mask = arange(q)[:, None] >= arange(kv)[None, :]
        bias = torch.where(mask.view(1, 1, q, kv), bias, min_dtype)
    # else: bias stays                  ->  bias = where(tensor(q - 1) > 0, where(...), bias)

Deciding the condition would record the guard `s >= 2`, so a length of 1 recompiles. Instead
both arms run from the branch's state (`convert`), and the arms' values are merged where they
differ. Only when every rule below holds; otherwise everything the arms did is rolled back and
the branch is decided as before (a guard):

- each arm runs straight to one join (no loop, no return, no nested conversion) through
  `_ALLOWED` instructions, calling only `PURE_CALLS` (no inlined Python, no print, no in-place
  op, no attribute/global/item store, no new graph input);
- the ShapeEnv is untouched (no guard, no runtime assert, no new symbol or fact): an untaken
  arm's size check would fail at sizes eager never checks it;
- every graph node the arms add has a `PURE_CALLS` target: views, indexing, where, add/sub/neg,
  comparisons, casts, factories. Their VJP sends a zero cotangent to exactly zero, so the
  untaken arm (which `where` gives a zero cotangent) adds nothing to any gradient; mul, div,
  log, sqrt, pow are left out since `0 * inf` is NaN. The untaken arm runs too, so it must
  not fail where eager never runs it: no indexing by tensors, no size that may be negative;
- at the join the stack and the live locals (read anywhere outside the arms) hold the same
  Python values, or tensors of provably equal shape with equal dtype, device and
  requires_grad: those are merged by `where` on a 0-d bool tensor computed from the sizes.

A merged tensor may alias an existing tensor in one arm (`else: bias = position_bias`) and
not in the other, so in-place writes to it or to the tensors its arms came from are a graph
break (`NO_WRITES`, read by capture.functionalize.write), and so is `is` on it; a break while
it is live is not resumed (capture/resume.py), which would hand it on apart from its alias.
"""

from __future__ import annotations

import builtins
import copy
import logging
import operator
import types

import sympy
import torch

from capture.errors import Unsupported
from capture.variables import (
    ConstVariable,
    ListVariable,
    NullVariable,
    ObjectVariable,
    SymBoolVariable,
    SymIntVariable,
    TensorMethodVariable,
    TensorVariable,
    TupleVariable,
    Variable,
    sym_value,
)

# Torch calls an arm may make: pure, and a zero cotangent gives exactly zero gradients.
PURE_FUNCTIONS = frozenset({
    torch.arange, torch.where, torch.full, torch.zeros, torch.ones, torch.full_like,
    torch.zeros_like, torch.ones_like, torch.tensor, torch.add, torch.sub, torch.neg,
    torch.gt, torch.ge, torch.lt, torch.le, torch.eq, torch.ne, torch.logical_and,
    torch.logical_or, torch.logical_not, torch.clone, torch.reshape, torch.transpose,
    torch.permute, torch.unsqueeze, torch.squeeze, torch.masked_fill, torch.flatten,
    operator.add, operator.sub, operator.neg, operator.getitem, operator.gt, operator.ge,
    operator.lt, operator.le, operator.eq, operator.ne, operator.and_, operator.or_,
    operator.invert, operator.inv,
})
PURE_METHODS = frozenset(
    "view view_as reshape reshape_as contiguous clone expand expand_as unsqueeze squeeze "
    "transpose permute t flatten unflatten __getitem__ to type_as float double half bfloat16 "
    "bool int long detach masked_fill where add sub neg __neg__ gt ge lt le eq ne __gt__ "
    "__ge__ __lt__ __le__ __eq__ __ne__ __add__ __sub__ __radd__ __rsub__ __and__ __or__ "
    "__invert__ logical_and logical_or logical_not new_zeros new_ones new_full".split()
)
PURE_CALLS = PURE_FUNCTIONS | {getattr(torch.Tensor, name) for name in PURE_METHODS}
_TENSOR_ATTRS = frozenset({"shape", "device", "dtype", "ndim"}) | PURE_METHODS
_ALLOWED = frozenset(
    "NOP RESUME PRECALL EXTENDED_ARG CACHE POP_TOP PUSH_NULL COPY SWAP LOAD_CONST LOAD_FAST "
    "LOAD_FAST_CHECK STORE_FAST LOAD_DEREF LOAD_GLOBAL LOAD_ATTR LOAD_METHOD BINARY_OP "
    "COMPARE_OP UNARY_NEGATIVE UNARY_NOT BINARY_SUBSCR BINARY_SLICE BUILD_SLICE BUILD_TUPLE "
    "KW_NAMES CALL JUMP_FORWARD RETURN_VALUE RETURN_CONST".split()
)
_READS = frozenset({"LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_FAST_AND_CLEAR", "DELETE_FAST"})
_SCALARS = (ConstVariable, SymIntVariable, SymBoolVariable, TensorVariable)
_MAX_STEPS = 400
NO_WRITES = "no_writes"   # the attribute capture.functionalize.write reads
_CONDITIONS = {sympy.StrictGreaterThan: torch.gt, sympy.GreaterThan: torch.ge,
               sympy.StrictLessThan: torch.lt, sympy.LessThan: torch.le,
               sympy.Equality: torch.eq, sympy.Unequality: torch.ne}

_LOG = logging.getLogger(__name__)  # why a branch was not converted (debug level)


class _Abort(Exception):
    pass


def convert(frame, ins, when: bool, cond) -> bool | Variable:
    """Run both arms of the POP_JUMP_IF_`when` `ins` (condition `cond` popped, `frame.ip` after
    the jump) and merge them at their join: True, or the merged value the frame returns where
    both arms return (3.12 copies a short `return` into each arm); False: nothing done."""
    if not isinstance(cond, SymBoolVariable) or getattr(frame, "converting", False) or \
            frame.state.env.prove(cond.expr) is not None:
        return False
    start, target = frame.ip, frame.index_of[ins.argval]
    if target <= start:
        return False
    snapshot = _Snapshot.take(frame)
    frame.converting = True
    try:
        fall = _run_arm(frame, start, target, passes=True)
        join = fall.join
        frame.locals, frame.stack = dict(snapshot.locals), list(snapshot.stack)
        jumped = _run_arm(frame, target, join, passes=False) if target != join else \
            _Arm(dict(snapshot.locals), list(snapshot.stack), join)
        snapshot.check_untouched(frame)
        # POP_JUMP_IF_FALSE falls through when the condition holds
        then, other = (jumped, fall) if when else (fall, jumped)
        live = _live_names(frame, start, join) if join != RETURNS else set()
        merge = _Merge(frame.state, cond.expr)
        stack = merge.values(then.stack, other.stack)
        local_names = (set(then.locals) | set(other.locals)) & live
        values = merge.values([then.locals.get(n) for n in local_names],
                               [other.locals.get(n) for n in local_names])
    except Exception as e:  # noqa: BLE001 - anything the arms could not do: decide as before
        _LOG.debug("if-conversion of %s refused: %s: %s", cond.expr, type(e).__name__, e)
        snapshot.restore(frame)
        return False
    finally:
        frame.converting = False
    if join == RETURNS:
        return stack[-1]
    frame.stack = stack
    frame.locals = {n: v for n, v in zip(local_names, values)}
    frame.locals.update({n: v for n, v in snapshot.locals.items()
                         if n not in live and n not in frame.locals})
    frame.ip = join
    return True


class _Arm:
    def __init__(self, locals_, stack, join):
        self.locals, self.stack, self.join = locals_, stack, join


RETURNS = -1   # the join of two arms that both return: the frame's end


def _run_arm(frame, start: int, stop: int, passes: bool) -> _Arm:
    """Run from `start` until `stop`; with `passes` (the fall-through arm, `stop` the jump's
    target) an unconditional forward jump past `stop` ends it too: its target is the join; so
    does a return, and then the other arm (`stop` RETURNS) must return too."""
    frame.ip = start
    for _ in range(_MAX_STEPS):
        if frame.ip == stop:
            return _Arm(frame.locals, frame.stack, stop)
        ins = frame.instructions[frame.ip]
        _check(frame, ins)
        frame.ip += 1
        frame._locate(ins)
        frame.tx.count_step()
        returned = getattr(frame, f"op_{ins.opname}")(ins)
        if returned is not None:
            if not (passes or stop == RETURNS):
                raise _Abort("one arm returns")
            return _Arm(frame.locals, [*frame.stack, returned], RETURNS)
        if frame.ip < start:
            raise _Abort("a backward jump")
        if frame.ip > stop and stop != RETURNS:
            if not (passes and ins.opname == "JUMP_FORWARD"):
                raise _Abort("past the join")
            return _Arm(frame.locals, frame.stack, frame.ip)
    raise _Abort("too long")


def _check(frame, ins) -> None:
    """Refuse, before it runs, an instruction that could change state outside the arm."""
    name = ins.opname
    if name not in _ALLOWED:
        raise _Abort(name)
    stack = frame.stack
    if name == "LOAD_GLOBAL":
        value = frame.globals[ins.argval] if ins.argval in frame.globals else \
            getattr(builtins, ins.argval, None)
        if not isinstance(value, (types.ModuleType, types.FunctionType,
                                  types.BuiltinFunctionType, type, int, float, bool)):
            raise _Abort(f"global {ins.argval}")
    elif name in ("LOAD_ATTR", "LOAD_METHOD"):
        _check_attr(stack[-1], ins.argval)
    elif name in ("BINARY_OP", "COMPARE_OP"):
        if str(ins.argrepr).endswith("=") and name == "BINARY_OP":
            raise _Abort("an in-place operator")
        if not all(isinstance(v, _SCALARS) for v in stack[-2:]):
            raise _Abort(f"{name} on objects")
    elif name in ("UNARY_NEGATIVE", "UNARY_NOT"):
        if not isinstance(stack[-1], _SCALARS):
            raise _Abort(f"{name} on an object")
    elif name == "BINARY_SUBSCR":
        if not isinstance(stack[-2], (TensorVariable, TupleVariable, ListVariable)):
            raise _Abort("subscript of an object")
        index = stack[-1].items if isinstance(stack[-1], TupleVariable) else [stack[-1]]
        if isinstance(stack[-2], TensorVariable) and any(
                isinstance(i, (TensorVariable, ListVariable, TupleVariable)) for i in index):
            raise _Abort("indexing with tensors (an untaken arm's index may be out of range)")
    elif name == "CALL":
        _check_call(stack, ins.arg)


def _check_attr(obj, attr: str) -> None:
    if isinstance(obj, TensorVariable) and attr in _TENSOR_ATTRS:
        return
    if isinstance(obj, ObjectVariable) and isinstance(obj.value, types.ModuleType):
        value = getattr(obj.value, attr, None)
        if _pure(value) or isinstance(value, (torch.dtype, types.ModuleType)):
            return
    raise _Abort(f"attribute .{attr}")


def _check_call(stack: list, argc: int) -> None:
    second, first = stack[-argc - 1], stack[-argc - 2]
    fn = second if isinstance(first, NullVariable) else first
    if isinstance(fn, TensorMethodVariable) and fn.name in PURE_METHODS:
        return
    if isinstance(fn, ObjectVariable) and _pure(fn.value):
        return
    raise _Abort(f"a call of {fn!r}")


def _pure(value) -> bool:
    try:
        return value in PURE_CALLS
    except TypeError:   # unhashable
        return False


def _live_names(frame, start: int, join: int) -> set[str]:
    """Locals read outside the arms (conservatively: anywhere else in the code; every local
    when a loop after the join goes back before the branch)."""
    code = frame.instructions
    if any(ins.opname.startswith("JUMP_BACKWARD") and i >= join and frame.index_of[ins.argval]
           <= start for i, ins in enumerate(code)):
        return {ins.argval for ins in code if ins.opname in _READS}
    return {ins.argval for i, ins in enumerate(code) if ins.opname in _READS
            and not start <= i < join}


class _Snapshot:
    """What `convert` restores when it gives up: the frame, the graph, the ShapeEnv."""

    @classmethod
    def take(cls, frame) -> _Snapshot:
        self = cls()
        state = frame.state
        self.locals, self.stack, self.ip = dict(frame.locals), list(frame.stack), frame.ip
        self.kw_names = frame.kw_names
        self.where = frame.where, frame.line, state.where, state.line
        self.nodes = set(state.graph.nodes)
        self.inputs = len(state.inputs)
        self.grad_recorded = state.grad_recorded
        env = state.env
        self.env = {f: copy.copy(getattr(env, f)) for f in
                    ("symbols", "ranges", "replacements", "divisible", "guards", "asserts")}
        self.version = env._version
        return self

    def check_untouched(self, frame) -> None:
        state = frame.state
        if state.env._version != self.version or len(state.inputs) != self.inputs:
            raise _Abort("an arm recorded a size fact, guard or assert, or read a new input")
        for node in state.graph.nodes:
            if node in self.nodes or node.op != "call_function":
                continue
            if not _pure(node.target):
                raise _Abort(f"an arm called {node.target}")
            meta = node.meta.get("val")
            if not all(state.env.prove(sympy.Ge(size, 0)) is True
                       for size in getattr(meta, "shape", ())):
                raise _Abort(f"a size of {node.target} may be negative where the arm is not taken")

    def restore(self, frame) -> None:
        state = frame.state
        frame.locals, frame.stack, frame.ip = self.locals, self.stack, self.ip
        frame.kw_names = self.kw_names
        frame.where, frame.line, state.where, state.line = self.where
        for node in reversed(list(state.graph.nodes)):
            if node not in self.nodes and node.op != "placeholder":  # a new input stays
                state.graph.erase_node(node)
        state.grad_recorded = self.grad_recorded
        env = state.env
        if env._version != self.version:
            for name, value in self.env.items():
                setattr(env, name, value)
            env._version += 1    # a fresh key for z3's cache: the facts are the old ones


class _Merge:
    """The join's values: equal ones kept, differing tensors merged by `where(cond, a, b)`."""

    def __init__(self, state, expr):
        self.state, self.expr = state, expr
        self.conds: dict = {}   # device -> the condition as a 0-d bool tensor there
        self.done: dict = {}    # (id(a), id(b)) -> merged: one `where` for a value met twice

    def values(self, then: list, other: list) -> list:
        if len(then) != len(other):
            raise _Abort("stack depths differ")
        return [self._one(a, b) for a, b in zip(then, other)]

    def _one(self, a, b):
        if a is b:
            return a
        if a is None or b is None:
            raise _Abort("a live local is set in one arm only")
        if isinstance(a, ConstVariable) and isinstance(b, ConstVariable) and \
                type(a.value) is type(b.value) and a.value == b.value:
            return a
        if isinstance(a, (SymIntVariable, SymBoolVariable)) and type(a) is type(b) and \
                a.expr == b.expr:
            return a
        if type(a) is TupleVariable and type(b) is TupleVariable:
            # 3.12 builds `return (x if c else y), flag` in each arm: a tuple per arm
            return TupleVariable(self.values(list(a.items), list(b.items)))
        if isinstance(a, TensorVariable) and isinstance(b, TensorVariable):
            if (id(a), id(b)) not in self.done:
                self.done[id(a), id(b)] = self._tensor(a, b)
            return self.done[id(a), id(b)]
        raise _Abort(f"{a!r} and {b!r} differ")

    def _tensor(self, a: TensorVariable, b: TensorVariable) -> TensorVariable:
        ma, mb = a.meta, b.meta
        env = self.state.env
        if (ma.dtype, ma.device, ma.requires_grad, ma.ndim) != \
                (mb.dtype, mb.device, mb.requires_grad, mb.ndim) or not all(
                    env.prove(sympy.Eq(x, y)) is True for x, y in zip(ma.shape, mb.shape)):
            raise _Abort(f"{ma} and {mb} differ")
        if ma.device not in self.conds:
            self.conds[ma.device] = _condition(self.state, self.expr, ma.device)
        result = self.state.call(torch.where, [self.conds[ma.device], a, b], {})
        setattr(result, NO_WRITES, "merged")
        for var in (a.base or a, b.base or b):
            setattr(var, NO_WRITES, getattr(var, NO_WRITES, None) or "arm")
        return result


def _condition(state, expr, device) -> TensorVariable:
    """A 0-d bool tensor holding the size condition `expr`."""
    if isinstance(expr, (sympy.And, sympy.Or)):
        fold = torch.logical_and if isinstance(expr, sympy.And) else torch.logical_or
        parts = [_condition(state, part, device) for part in expr.args]
        result = parts[0]
        for part in parts[1:]:
            result = state.call(fold, [result, part], {})
        return result
    if isinstance(expr, sympy.Not):
        return state.call(torch.logical_not, [_condition(state, expr.args[0], device)], {})
    compare = _CONDITIONS.get(type(expr))
    difference = expr.lhs - expr.rhs if compare is not None else None
    if difference is None or difference.is_integer is not True:
        raise _Abort(f"no tensor for the condition {expr}")
    value = state.call(torch.tensor, [sym_value(difference)],
                       {"dtype": ConstVariable(torch.int64), "device": ConstVariable(device)})
    return state.call(compare, [value, ConstVariable(0)], {})


def merged(t: TensorVariable) -> bool:
    """Whether `t` (or the root it views) is a tensor an if-converted branch merged."""
    return "merged" in (getattr(t, NO_WRITES, None), getattr(t.base, NO_WRITES, None))


def refuse_write(t: TensorVariable, what: str) -> None:
    """A graph break for an in-place write to a tensor an if-converted branch merged."""
    if getattr(t, NO_WRITES, False) or getattr(t.base, NO_WRITES, False):
        raise Unsupported(f"in-place {what} on a tensor that an if-converted size branch "
                          f"merged (in one arm it may alias another tensor)")


__all__ = ["NO_WRITES", "PURE_CALLS", "convert", "merged", "refuse_write"]
