"""The instructions a graph break runs eagerly, between the graph and the resume function.

    step = EagerStep.of(instruction, index_of, next_index, kw_names)
    next_index = EAGER_STEPS[step.opname](step, stack, ctx)   # stack: real values, bottom first

Each rule pops and pushes on `stack` exactly as CPython would, and returns the index of the next
instruction (a branch on a tensor picks its side here, with the tensor's real truth value).
`ctx.call(fn, args, kwargs)` makes calls (symc compiles a user function called there on its own),
`ctx.globals` is the frame's globals. An opcode missing from the table is never resumed.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass

from capture.live_values import NULL_VALUE

BINARY_OPS = {
    "+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
    "//": operator.floordiv, "%": operator.mod, "**": operator.pow, "@": operator.matmul,
    "&": operator.and_, "|": operator.or_, "^": operator.xor, "<<": operator.lshift,
    ">>": operator.rshift,
    "+=": operator.iadd, "-=": operator.isub, "*=": operator.imul, "/=": operator.itruediv,
    "//=": operator.ifloordiv, "%=": operator.imod, "**=": operator.ipow,
    "@=": operator.imatmul, "&=": operator.iand, "|=": operator.ior, "^=": operator.ixor,
    "<<=": operator.ilshift, ">>=": operator.irshift,
}
COMPARE_OPS = {"<": operator.lt, "<=": operator.le, "==": operator.eq, "!=": operator.ne,
               ">": operator.gt, ">=": operator.ge}
BRANCHES_IF_TRUE = frozenset({"POP_JUMP_IF_TRUE", "POP_JUMP_FORWARD_IF_TRUE",
                              "POP_JUMP_BACKWARD_IF_TRUE"})
BRANCHES_IF_FALSE = frozenset({"POP_JUMP_IF_FALSE", "POP_JUMP_FORWARD_IF_FALSE",
                               "POP_JUMP_BACKWARD_IF_FALSE"})


@dataclass(frozen=True)
class EagerStep:
    """One instruction to run eagerly: its operands and the indexes it may continue at."""

    opname: str
    arg: int | None
    argval: object
    argrepr: str
    next_index: int
    jump_index: int | None = None
    kw_names: tuple = ()

    @classmethod
    def of(cls, ins, index_of: dict, next_index: int, kw_names: tuple = ()) -> EagerStep:
        jump = index_of.get(ins.argval) if ins.opcode in _JUMPS else None
        return cls(ins.opname, ins.arg, ins.argval, ins.argrepr, next_index, jump, kw_names)

    @property
    def successors(self) -> tuple[int, ...]:
        if self.opname == "RAISE_VARARGS":
            return ()
        if self.jump_index is None:
            return (self.next_index,)
        return (self.next_index, self.jump_index)


def _jump_opcodes() -> frozenset:
    import dis

    return frozenset(dis.hasjrel) | frozenset(dis.hasjabs)


_JUMPS = _jump_opcodes()


def _popn(stack: list, n: int) -> list:
    if n == 0:
        return []
    items = stack[-n:]
    del stack[-n:]
    return items


def call(step: EagerStep, stack: list, ctx) -> int:
    args = _popn(stack, step.arg or 0)
    second, first = stack.pop(), stack.pop()
    kwargs = {}
    if step.kw_names:
        split = len(args) - len(step.kw_names)
        kwargs = dict(zip(step.kw_names, args[split:]))
        args = args[:split]
    if first is NULL_VALUE:
        stack.append(ctx.call(second, args, kwargs))
    else:
        stack.append(ctx.call(first, [second, *args], kwargs))
    return step.next_index


def call_function_ex(step: EagerStep, stack: list, ctx) -> int:
    kwargs = stack.pop() if step.arg & 1 else {}
    args, fn = stack.pop(), stack.pop()
    if stack and stack[-1] is NULL_VALUE:
        stack.pop()
    stack.append(ctx.call(fn, list(args), dict(kwargs)))
    return step.next_index


def binary_subscr(step: EagerStep, stack: list, ctx) -> int:
    index, container = stack.pop(), stack.pop()
    stack.append(container[index])
    return step.next_index


def binary_op(step: EagerStep, stack: list, ctx) -> int:
    b, a = stack.pop(), stack.pop()
    stack.append(BINARY_OPS[step.argrepr](a, b))
    return step.next_index


def compare_op(step: EagerStep, stack: list, ctx) -> int:
    b, a = stack.pop(), stack.pop()
    symbol = step.argval if isinstance(step.argval, str) else step.argrepr
    stack.append(COMPARE_OPS[symbol](a, b))
    return step.next_index


def unary_not(step: EagerStep, stack: list, ctx) -> int:
    stack.append(not stack.pop())
    return step.next_index


def branch(step: EagerStep, stack: list, ctx) -> int:
    when = step.opname in BRANCHES_IF_TRUE
    return step.jump_index if bool(stack.pop()) == when else step.next_index


def jump_or_pop(step: EagerStep, stack: list, ctx) -> int:  # 3.11's `a and b`, `a or b`
    when = step.opname == "JUMP_IF_TRUE_OR_POP"
    if bool(stack[-1]) == when:
        return step.jump_index
    stack.pop()
    return step.next_index


def store_attr(step: EagerStep, stack: list, ctx) -> int:
    obj, value = stack.pop(), stack.pop()
    setattr(obj, step.argval, value)
    return step.next_index


def store_subscr(step: EagerStep, stack: list, ctx) -> int:
    index, container, value = stack.pop(), stack.pop(), stack.pop()
    container[index] = value
    return step.next_index


def store_global(step: EagerStep, stack: list, ctx) -> int:
    ctx.globals[step.argval] = stack.pop()
    return step.next_index


def raise_varargs(step: EagerStep, stack: list, ctx) -> int:
    if step.arg == 2:
        cause = stack.pop()
        raise stack.pop() from cause
    raise stack.pop()


EAGER_STEPS = {
    "CALL": call, "CALL_FUNCTION_EX": call_function_ex, "BINARY_SUBSCR": binary_subscr,
    "BINARY_OP": binary_op, "COMPARE_OP": compare_op, "UNARY_NOT": unary_not,
    **{name: branch for name in BRANCHES_IF_TRUE | BRANCHES_IF_FALSE},
    "JUMP_IF_TRUE_OR_POP": jump_or_pop, "JUMP_IF_FALSE_OR_POP": jump_or_pop,
    "STORE_ATTR": store_attr, "STORE_SUBSCR": store_subscr, "STORE_GLOBAL": store_global,
}


def can_run_eagerly(ins) -> bool:
    """Whether a break at `ins` can run it eagerly and resume after it."""
    if ins.opname == "RAISE_VARARGS":
        return ins.arg in (1, 2)
    if ins.opname == "BINARY_OP":
        return ins.argrepr in BINARY_OPS
    if ins.opname == "COMPARE_OP":
        symbol = ins.argval if isinstance(ins.argval, str) else ins.argrepr
        return symbol in COMPARE_OPS
    return ins.opname in EAGER_STEPS


EAGER_STEPS["RAISE_VARARGS"] = raise_varargs

__all__ = ["EAGER_STEPS", "EagerStep", "can_run_eagerly"]
