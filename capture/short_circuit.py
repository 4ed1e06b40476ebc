"""`a and b` / `a or b` on an undecided size relation, without deciding it.

    is_causal = q_length > 1 and attention_mask is None and is_causal      (transformers' sdpa)

3.11 compiles `and` to JUMP_IF_FALSE_OR_POP, 3.12 to `COPY 1; POP_JUMP_IF_FALSE join; POP_TOP`
(an operand jump): deciding `q_length > 1` there records the guard `s1 >= 2`, so a length of 1
recompiles although, with a mask, the result is False either way.
When the jump's condition is a SymBool nothing proves, the operand after it is evaluated ahead
if it is pure (locals, constants, `is`, comparisons of non-tensors, nested `and`/`or`); when it
is a bool (or SymBool) the value at the join is `And(a, b)` (`Or(a, b)`), a SymBool decided
only where it is used. Anything else rolls back and the condition is decided as before.

An `if` on `a or b` / `a and b` compiles to two conditional jumps instead (`merge_branch`):

    if (q_length == 1 or kv_length == q_length) and ...:       (transformers' masking_utils)
        a; POP_JUMP_IF_TRUE T; b; POP_JUMP_IF_FALSE F; T: ...      (`and`: both IF_FALSE F)

with `b` pure the branch decides `Or(a, b)` (`And(a, b)`) once: here `kv_length == q_length` is
true, so `q_length == 1` is never guarded and a length of 1 shares the entry.
"""

from __future__ import annotations

import sympy

from capture.variables import ConstVariable, SymBoolVariable, TensorVariable

_PURE = frozenset({"LOAD_FAST", "LOAD_CONST", "IS_OP", "COMPARE_OP", "UNARY_NOT", "NOP",
                   "JUMP_IF_FALSE_OR_POP", "JUMP_IF_TRUE_OR_POP", "COPY", "POP_TOP",
                   "EXTENDED_ARG"})
_JUMPS_312 = frozenset({"POP_JUMP_IF_FALSE", "POP_JUMP_IF_TRUE"})  # pure only as operand jumps
_IF_FALSE = frozenset({"POP_JUMP_IF_FALSE", "POP_JUMP_FORWARD_IF_FALSE"})
_IF_TRUE = frozenset({"POP_JUMP_IF_TRUE", "POP_JUMP_FORWARD_IF_TRUE"})
_IF_NONE = frozenset({"POP_JUMP_IF_NONE", "POP_JUMP_FORWARD_IF_NONE"})
_IF_NOT_NONE = frozenset({"POP_JUMP_IF_NOT_NONE", "POP_JUMP_FORWARD_IF_NOT_NONE"})
_CONDITIONAL = _IF_FALSE | _IF_TRUE | _IF_NONE | _IF_NOT_NONE
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
    cond = _undecided(frame)
    if cond is None:
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
    frame.push(_as_variable(merged))
    return True


def merge_branch(frame, ins, when: bool) -> bool:
    """`if a or b` / `if a and b` (chains too) on an undecided `a` (the POP_JUMP_IF_`when` `ins`,
    `frame.ip` after it) with pure operands after it: decide `Or(a, b, ...)` / `And(a, b, ...)`
    once and jump; False: nothing done."""
    cond = _undecided(frame)
    if cond is None:
        return False
    target = frame.index_of[ins.argval]
    saved_stack, saved_ip = list(frame.stack), frame.ip
    frame.pop()
    exprs, decided = [cond.expr], None  # decided: (condition, where if true, where if false)
    for _ in range(_MAX_STEPS):
        mark = list(frame.stack), frame.ip
        try:
            other, second = _run_to(frame, None)
        except Exception:  # noqa: BLE001 - anything the pure run could not do: stop here
            other = second = None
        if other is None:
            frame.stack[:], frame.ip = mark
            break
        exprs.append(other)
        after, second_target = frame.ip + 1, frame.index_of[second.argval]
        jumps_if_true = second.opname in _IF_TRUE | _IF_NONE   # other: `value is None` for these
        if not when and not jumps_if_true and second_target == target:
            decided = (sympy.And(*exprs), after, target)     # a; IF_FALSE F; b; IF_FALSE F
            frame.ip = after
            continue
        if when and jumps_if_true and second_target == target:
            frame.ip = after                                 # a; IF_TRUE T; b; IF_TRUE T; ...
            continue
        if when and not jumps_if_true and after == target:
            decided = (sympy.Or(*exprs), target, second_target)  # ...; z; IF_FALSE F; T:
        frame.stack[:], frame.ip = mark
        break
    if decided is None:
        frame.stack[:], frame.ip = saved_stack, saved_ip
        return False
    merged, if_true, if_false = decided
    value = _as_variable(merged)
    frame.ip = if_true if frame.truth(value) else if_false
    return True


def _undecided(frame) -> SymBoolVariable | None:
    """The size condition on top of the stack, when the ShapeEnv cannot decide it yet."""
    cond = frame.stack[-1]
    if isinstance(cond, SymBoolVariable) and frame.state.env.prove(cond.expr) is None:
        return cond
    return None


def _as_variable(merged):
    return ConstVariable(bool(merged)) if merged in (sympy.true, sympy.false) \
        else SymBoolVariable(merged)


def _run_to(frame, target: int | None):
    """Run pure instructions up to `target` (None: up to a branch's conditional jump, returned
    with the value, not run) and return the operand's value as a sympy boolean."""
    depth = len(frame.stack)
    stop = None
    for _ in range(_MAX_STEPS):
        if frame.ip == target:
            break
        ins = frame.instructions[frame.ip]
        operand_jump = ins.opname in _JUMPS_312 and is_operand_jump(frame, frame.ip)
        if target is None and ins.opname in _CONDITIONAL and not operand_jump:
            stop = ins
            break
        if not (ins.opname in _PURE or operand_jump) or (target is not None and frame.ip > target):
            raise _Abort(ins.opname)
        if ins.opname in ("COMPARE_OP", "UNARY_NOT") and any(
                isinstance(v, TensorVariable) for v in frame.stack[-2:]):
            raise _Abort("a tensor operation")
        frame.ip += 1
        getattr(frame, f"op_{ins.opname}")(ins)
    else:
        raise _Abort("too long")
    if (frame.ip != target and stop is None) or len(frame.stack) != depth + 1:
        raise _Abort("stack")
    value = frame.pop()
    if stop is not None and stop.opname in _IF_NONE | _IF_NOT_NONE:  # the jump tests `is None`
        value = ConstVariable(isinstance(value, ConstVariable) and value.value is None)
    if isinstance(value, SymBoolVariable):
        expr = value.expr
    elif isinstance(value, ConstVariable) and type(value.value) is bool:
        expr = sympy.true if value.value else sympy.false
    else:
        expr = None
    return expr if target is not None else (expr, stop)


__all__ = ["is_operand_jump", "merge", "merge_branch"]
