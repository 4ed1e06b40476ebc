"""`a and b` / `a or b` on an undecided size relation, without deciding it.

    is_causal = q_length > 1 and attention_mask is None and is_causal      (transformers' sdpa)

3.11 compiles `and` to JUMP_IF_FALSE_OR_POP, 3.12 to `COPY 1; POP_JUMP_IF_FALSE join; POP_TOP`
(an operand jump): deciding `q_length > 1` there records the guard `s1 >= 2`, so a length of 1
recompiles although, with a mask, the result is False either way.
When the jump's condition is a SymBool nothing proves, the operand after it is evaluated ahead
if it is pure (locals, constants, `is`, comparisons of non-tensors, nested `and`/`or`); when it
is a bool (or SymBool) the value at the join is `And(a, b)` (`Or(a, b)`), a SymBool decided
only where it is used. Anything else rolls back and the condition is decided as before.
"""

from __future__ import annotations

import sympy

from capture.variables import ConstVariable, SymBoolVariable, TensorVariable

_PURE = frozenset({"LOAD_FAST", "LOAD_CONST", "IS_OP", "COMPARE_OP", "UNARY_NOT", "NOP",
                   "JUMP_IF_FALSE_OR_POP", "JUMP_IF_TRUE_OR_POP", "COPY", "POP_TOP",
                   "EXTENDED_ARG"})
_JUMPS_312 = frozenset({"POP_JUMP_IF_FALSE", "POP_JUMP_IF_TRUE"})  # pure only as operand jumps
_MAX_STEPS = 32


class _Abort(Exception):
    pass


def is_operand_jump(frame, index: int) -> bool:
    """Whether the POP_JUMP_IF_* at `index` is 3.12's `and`/`or`: after COPY 1, before POP_TOP."""
    before = index - 1
    while before >= 0 and frame.instructions[before].opname == "EXTENDED_ARG":
        before -= 1
    after = frame.instructions[index + 1] if index + 1 < len(frame.instructions) else None
    return before >= 0 and frame.instructions[before].opname == "COPY" and \
        frame.instructions[before].arg == 1 and after is not None and after.opname == "POP_TOP"


def merge(frame, ins, is_and: bool, copied: bool = False) -> bool:
    """Run the operand after `ins` ahead and push the merged SymBool; False: nothing done.

    `copied`: 3.12's operand jump, called with the condition and its copy on the stack and
    `frame.ip` at the POP_TOP that drops the condition when the operand runs."""
    cond = frame.stack[-1]
    if not isinstance(cond, SymBoolVariable) or frame.state.env.prove(cond.expr) is not None:
        return False
    target = frame.index_of[ins.argval]
    saved_stack, saved_ip = list(frame.stack), frame.ip
    frame.pop()
    if copied:
        frame.pop()
        frame.ip += 1
    try:
        other = _run_to(frame, target)
    except Exception:  # noqa: BLE001 - anything the pure run could not do: decide as before
        other = None
    if other is None:
        frame.stack[:], frame.ip = saved_stack, saved_ip
        return False
    merged = (sympy.And if is_and else sympy.Or)(cond.expr, other)
    frame.push(ConstVariable(bool(merged)) if merged in (sympy.true, sympy.false)
               else SymBoolVariable(merged))
    return True


def _run_to(frame, target: int):
    depth = len(frame.stack)
    for _ in range(_MAX_STEPS):
        if frame.ip == target:
            break
        ins = frame.instructions[frame.ip]
        pure = ins.opname in _PURE or (ins.opname in _JUMPS_312 and
                                       is_operand_jump(frame, frame.ip))
        if not pure or frame.ip > target:
            raise _Abort(ins.opname)
        if ins.opname in ("COMPARE_OP", "UNARY_NOT") and any(
                isinstance(v, TensorVariable) for v in frame.stack[-2:]):
            raise _Abort("a tensor operation")
        frame.ip += 1
        getattr(frame, f"op_{ins.opname}")(ins)
    else:
        raise _Abort("too long")
    if frame.ip != target or len(frame.stack) != depth + 1:
        raise _Abort("stack")
    value = frame.pop()
    if isinstance(value, SymBoolVariable):
        return value.expr
    if isinstance(value, ConstVariable) and type(value.value) is bool:
        return sympy.true if value.value else sympy.false
    return None


__all__ = ["is_operand_jump", "merge"]
