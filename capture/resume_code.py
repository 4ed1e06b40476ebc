"""Resume code objects: the rest of a frame after a graph break, as a function of its live state.

    why_not_resumable(code, index)                 # None: the frame may be split there
    new = resume_code(code, index, layout=("null", "value"), live=("x", "y"))
    # new(__symc_stack1, x, y): pushes NULL, then __symc_stack1, jumps to instruction `index`

`index` counts `dis.get_instructions(code)`. `layout` is the value stack at the resume point,
bottom first: "null" (pushed by the prologue), "value" (an argument), "iter" (an argument the
prologue turns into an iterator with GET_ITER: a loop's remaining items) or "with" (a with
block's exit, which the prologue first calls with no arguments to re-enter the block). The body is the whole
original code, so loops jump back and `with` blocks keep their exception table; `origin` maps an
instruction of a resume code back to the original, so a break met again (the next iteration of a
loop, a resume function breaking later) builds from the original and reuses the same code object.
Built with the `bytecode` package, for CPython 3.11 and 3.12. Imports neither torch nor the rest
of capture, so it can be checked on any interpreter.
"""

from __future__ import annotations

import dis
import inspect

STACK_PREFIX = "__symc_stack"
_LOADS = frozenset({"LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_FAST_AND_CLEAR", "DELETE_FAST",
                    "LOAD_CLOSURE"})
_NOT_RESUMABLE_FLAGS = (inspect.CO_GENERATOR | inspect.CO_COROUTINE
                        | inspect.CO_ASYNC_GENERATOR | inspect.CO_ITERABLE_COROUTINE)
_PROLOGUE = frozenset({"COPY_FREE_VARS", "RESUME", "MAKE_CELL"})
_CACHE: dict = {}
_ORIGINS: dict = {}   # resume code -> (original code, original position of each position)


def _instructions(code) -> list:
    return list(dis.get_instructions(code))


def _positions(instructions) -> list[int]:
    """Instruction index -> position among the non-EXTENDED_ARG instructions."""
    out, position = [], 0
    for ins in instructions:
        out.append(position)
        if ins.opname != "EXTENDED_ARG":
            position += 1
    return out


def origin(code, index: int) -> tuple[object, int]:
    """(original code, its instruction index) of instruction `index` of `code`."""
    known = _ORIGINS.get(code)
    if known is None:
        return code, index
    original, mapping = known
    position = mapping[_positions(_instructions(code))[index]]
    if position < 0:
        raise ValueError(f"instruction {index} of {code.co_name} is in the resume prologue")
    for i, p in enumerate(_positions(_instructions(original))):
        if p == position and _instructions(original)[i].opname != "EXTENDED_ARG":
            return original, i
    raise ValueError(f"no instruction at position {position} of {original.co_name}")


def _is_with_handler(instructions, index_of, target: int) -> bool:
    at = index_of[target]
    names = [i.opname for i in instructions[at:at + 2]]
    return names == ["PUSH_EXC_INFO", "WITH_EXCEPT_START"]


def why_not_resumable(code, index: int) -> str | None:
    """Why the frame of `code` cannot be split at instruction `index` (None: it can)."""
    instructions = _instructions(code)
    ins = instructions[index]
    if code.co_flags & _NOT_RESUMABLE_FLAGS:
        return "generator or coroutine frame"
    if code.co_cellvars:
        return "the frame has variables captured by inner functions"
    index_of = {i.offset: n for n, i in enumerate(instructions)}
    for entry in dis.Bytecode(code).exception_entries:
        if entry.start <= ins.offset < entry.end and \
                not _is_with_handler(instructions, index_of, entry.target):
            return "inside a try block"
    try:
        import bytecode  # noqa: F401
    except ImportError:
        return "the bytecode package is not installed"
    return None


def live_locals(code, index: int) -> set[str]:
    """Local names the code may read from instruction `index` on (a conservative answer):
    with a backward jump later on (a loop), every name the code reads."""
    instructions = _instructions(code)
    later = instructions[index:]
    loops = any(i.opcode in dis.hasjrel and isinstance(i.argval, int) and i.argval < i.offset
                for i in later)
    return {i.argval for i in (instructions if loops else later) if i.opname in _LOADS}


def stack_names(layout: tuple) -> list[str]:
    return [f"{STACK_PREFIX}{i}" for i, kind in enumerate(layout) if kind != "null"]


def resume_code(code, index: int, layout: tuple, live: tuple, name: str | None = None):
    """A code object running `code` from instruction `index` with the given stack and locals."""
    key = (code, index, layout, live, name)
    made = _CACHE.get(key)
    if made is None:
        made = _CACHE[key] = _build(code, index, layout, live, name)
    return made


def _build(code, index: int, layout: tuple, live: tuple, name: str | None):
    import bytecode
    from bytecode import Bytecode, Instr, Label

    instructions = _instructions(code)
    target = _positions(instructions)[index]
    bc = Bytecode.from_code(code)
    body = list(bc)
    originals = [i for i in instructions if i.opname != "EXTENDED_ARG"]
    position, insert_at, positions = 0, None, {}
    for at, item in enumerate(body):
        if not isinstance(item, Instr):
            continue
        if item.name != originals[position].opname:
            raise ValueError(f"bytecode and dis disagree at {position}: "
                             f"{item.name} != {originals[position].opname}")
        positions[id(item)] = position
        if position == target:
            insert_at = at
        position += 1
    if insert_at is None:
        raise ValueError(f"instruction {index} not found in {code.co_name}")
    label = Label()
    body.insert(insert_at, label)
    lineno = body[insert_at + 1].lineno or code.co_firstlineno
    prologue = []
    if code.co_freevars:
        prologue.append(Instr("COPY_FREE_VARS", len(code.co_freevars), lineno=lineno))
    prologue.append(Instr("RESUME", 0, lineno=lineno))
    for i, kind in enumerate(layout):
        if kind == "null":
            prologue.append(Instr("PUSH_NULL", lineno=lineno))
            continue
        if kind == "with":  # call the block's exit with no arguments: it re-enters the block
            prologue += [Instr("PUSH_NULL", lineno=lineno),
                         Instr("LOAD_FAST", f"{STACK_PREFIX}{i}", lineno=lineno)]
            if "PRECALL" in dis.opmap:
                prologue.append(Instr("PRECALL", 0, lineno=lineno))
            prologue += [Instr("CALL", 0, lineno=lineno), Instr("POP_TOP", lineno=lineno)]
        prologue.append(Instr("LOAD_FAST", f"{STACK_PREFIX}{i}", lineno=lineno))
        if kind == "iter":
            prologue.append(Instr("GET_ITER", lineno=lineno))
    prologue.append(Instr("JUMP_FORWARD", label, lineno=lineno))
    # The original prologue (COPY_FREE_VARS, RESUME) is replaced by ours: drop it.
    while body and isinstance(body[0], Instr) and body[0].name in _PROLOGUE:
        body.pop(0)
    # A local the original proved bound may be unbound here (left out of `live`): checked
    # loads raise UnboundLocalError where 3.12's plain LOAD_FAST would read NULL.
    for item in body:
        if isinstance(item, Instr) and item.name == "LOAD_FAST" and "LOAD_FAST_CHECK" in dis.opmap:
            item.set("LOAD_FAST_CHECK", item.arg)
    new = Bytecode(prologue + body)
    new._copy_attr_from(bc)
    args = stack_names(layout) + list(live)
    new.argnames = args
    new.argcount = len(args)
    new.posonlyargcount = 0
    new.kwonlyargcount = 0
    new.flags = bytecode.CompilerFlags(int(bc.flags) & ~(inspect.CO_VARARGS
                                                          | inspect.CO_VARKEYWORDS))
    new.name = name or f"{code.co_name}_resume"
    if hasattr(new, "qualname"):
        new.qualname = new.name
    new.first_lineno = min(code.co_firstlineno, lineno)
    made = new.to_code()
    mapping = [positions.get(id(i), -1) for i in new if isinstance(i, Instr)]
    emitted = [i.opname for i in _instructions(made) if i.opname != "EXTENDED_ARG"]
    if len(emitted) != len(mapping):
        raise ValueError(f"resume code of {code.co_name}: {len(emitted)} instructions emitted, "
                         f"{len(mapping)} expected")
    _ORIGINS[made] = (code, mapping)
    return made


__all__ = ["live_locals", "origin", "resume_code", "stack_names", "why_not_resumable"]
