"""The bytecode interpreter: runs one code object over Variables (CPython 3.11 and 3.12).

    frame = Frame(translation, code, globals, {"x": TensorVariable(...)}, cells={})
    result = frame.run()          # the Variable the function returns

Each instruction has a handler `op_<OPNAME>`; an opcode without one is a graph break naming it.
Stack conventions shared by both versions: a call site is `[NULL | callable, callable | self,
*args]`; LOAD_ATTR's 3.12 method bit and LOAD_METHOD both push `NULL, bound attribute`.
Calls are resolved by `capture.calls`.
"""

from __future__ import annotations

import dis
import linecache
import os
import importlib.util
import sys

from capture import contexts, objects
from capture import operators as ops
from capture import if_conversion, short_circuit
from capture.calls import python_dunder
from capture.container_ops import ContainerOps
from capture.eager_steps import can_run_eagerly
from capture.errors import MissingKey, Raised, Unsupported
from capture.side_effects import holds_tracked
from capture.torch_ops import setitem
from capture.variables import (
    NULL,
    CellVariable,
    ConstVariable,
    ContextExitVariable,
    DictVariable,
    IteratorVariable,
    ListVariable,
    NewObjectVariable,
    NullVariable,
    ObjectVariable,
    SliceVariable,
    SymBoolVariable,
    TensorVariable,
    TupleVariable,
    UserFunctionVariable,
    UserObjectVariable,
    Variable,
    Yielded,
)
from symbolic import ShapeAssertionError

PY312 = sys.version_info >= (3, 12)
MAX_DEPTH = 48
# Code inside torch (nn.Module forwards we inline) reports its caller's line to the user.
TORCH_DIR = os.path.dirname(os.path.abspath(__import__("torch").__file__))


class Frame(ContainerOps):
    """One code object being interpreted: its stack, locals, cells and position."""

    def __init__(self, translation, code, f_globals: dict, f_locals: dict,
                 cells: dict[str, CellVariable], depth: int = 0, parent: Frame | None = None):
        if depth > MAX_DEPTH:
            raise Unsupported(f"inlining deeper than {MAX_DEPTH} calls (recursion?)")
        self.tx = translation
        self.state = translation.state
        self.code = code
        self.globals = f_globals
        self.locals: dict[str, Variable] = dict(f_locals)
        self.cells = cells
        self.depth = depth
        self.stack: list[Variable] = []
        self.instructions = list(dis.get_instructions(code))
        self.index_of = {ins.offset: i for i, ins in enumerate(self.instructions)}
        self.ip = 0
        self.kw_names: tuple = ()
        self.internal = parent is not None and code.co_filename.startswith(TORCH_DIR)
        self.where: str | None = parent.where if parent is not None else None
        self.line: str | None = parent.line if parent is not None else None
        self.user_inputs = translation.user_inputs
        # Set by translate on the root frame when a break at a call may split the frame.
        self.resumable = False
        # A call made inside the caller's try block: every size check here is inside it too.
        self.outer_try = parent is not None and parent.state.env.asserts_as_guards
        self._try_ranges: list | None = None

    # ------------------------------------------------------------------ driver
    def run(self) -> Variable:
        while True:
            ins = self.instructions[self.ip]
            self.ip += 1
            self._locate(ins)
            self.state.env.asserts_as_guards = self.outer_try or self._in_try_block(ins, False)
            self.tx.count_step()
            handler = getattr(self, f"op_{ins.opname}", None)
            before = self._checkpoint() if self.resumable and can_run_eagerly(ins) else None
            try:
                if handler is None:
                    raise Unsupported(f"bytecode {ins.opname} is not supported")
                result = handler(ins)
            except MissingKey as exc:
                if self._in_try_block(ins):  # eager's KeyError would be caught in this frame
                    raise Unsupported(f"{exc.reason}, inside a try block").locate(
                        self.where, self.line) from None
                raise
            except Unsupported as exc:
                if isinstance(exc, Raised) and self._in_try_block(ins):
                    raise Unsupported(f"{exc.reason}, inside a try block").locate(
                        self.where, self.line) from None
                if self.internal:
                    raise
                exc.locate(self.where, self.line)
                if before is not None and exc.resumable:
                    from capture.resume import break_at

                    raise break_at(self, exc, before) from None
                raise exc from None
            if result is not None:
                return result

    def _checkpoint(self):
        """The state an instruction starts from, to split the frame there if it breaks."""
        from capture.resume import Checkpoint

        return Checkpoint.take(self)

    def _in_try_block(self, ins, with_blocks: bool = True) -> bool:
        """Whether an exception raised at `ins` could be caught in this frame (`with` blocks
        count unless `with_blocks` is False: their handler re-raises unless __exit__ says no)."""
        if self._try_ranges is None:
            self._try_ranges = [(e.start, e.end, e.lasti)
                                for e in dis.Bytecode(self.code).exception_entries]
        return any(start <= ins.offset < end and (with_blocks or not lasti)
                   for start, end, lasti in self._try_ranges)

    def _locate(self, ins) -> None:
        if self.internal:
            self.state.where, self.state.line = self.where, self.line
            return
        lineno = ins.positions.lineno if ins.positions else None
        if lineno is not None:
            self.where = f"{os.path.basename(self.code.co_filename)}:{lineno}"
            self.line = linecache.getline(self.code.co_filename, lineno).strip() or None
        self.state.where, self.state.line = self.where, self.line

    def push(self, var: Variable) -> None:
        assert isinstance(var, Variable), f"pushed a non-Variable {var!r}"
        self.stack.append(var)

    def pop(self) -> Variable:
        return self.stack.pop()

    def popn(self, n: int) -> list[Variable]:
        if n == 0:
            return []
        items = self.stack[-n:]
        del self.stack[-n:]
        return items

    def jump(self, ins) -> None:
        self.ip = self.index_of[ins.argval]

    # ------------------------------------------------------------------ no-ops
    def op_NOP(self, ins):
        pass

    op_RESUME = op_PRECALL = op_EXTENDED_ARG = op_CACHE = op_COPY_FREE_VARS = op_NOP

    # ------------------------------------------------------------------ stack
    def op_POP_TOP(self, ins):
        self.pop()

    def op_PUSH_NULL(self, ins):
        self.push(NULL)

    def op_COPY(self, ins):
        self.push(self.stack[-ins.arg])

    def op_SWAP(self, ins):
        self.stack[-1], self.stack[-ins.arg] = self.stack[-ins.arg], self.stack[-1]

    def op_END_FOR(self, ins):  # 3.12: pops the exhausted iterator and the last value
        self.popn(2)

    # ------------------------------------------------------------------ loads and stores
    def op_LOAD_CONST(self, ins):
        self.push(self._const(ins.argval))

    def _const(self, value) -> Variable:
        if isinstance(value, type(self.code)):
            return ConstVariable(value)
        if isinstance(value, tuple):
            return TupleVariable([self._const(v) for v in value])
        if isinstance(value, frozenset):
            from capture.variables import ObjectVariable

            return ObjectVariable(value)
        return ConstVariable(value)

    def op_RETURN_CONST(self, ins):
        return self._const(ins.argval)

    def op_RETURN_VALUE(self, ins):
        return self.pop()

    def op_LOAD_FAST(self, ins):
        if ins.argval not in self.locals:
            raise Unsupported(f"local variable {ins.argval!r} read before assignment")
        self.push(self.locals[ins.argval])

    op_LOAD_FAST_CHECK = op_LOAD_FAST

    def op_LOAD_FAST_AND_CLEAR(self, ins):
        self.push(self.locals.pop(ins.argval, NULL))

    def op_STORE_FAST(self, ins):
        value = self.pop()
        if isinstance(value, NullVariable):
            self.locals.pop(ins.argval, None)
        else:
            self.locals[ins.argval] = value

    def op_DELETE_FAST(self, ins):
        self.locals.pop(ins.argval, None)

    def op_LOAD_GLOBAL(self, ins):
        if ins.arg & 1:
            self.push(NULL)
        self.push(self.tx.load_global(self.globals, ins.argval))

    def op_STORE_GLOBAL(self, ins):
        value = self.pop()
        if not holds_tracked(value):
            raise Unsupported(f"assignment to global {ins.argval!r} (a side effect)")
        self.tx.global_writes[id(self.globals), ins.argval] = (self.globals, value)

    def op_MAKE_CELL(self, ins):
        name = ins.argval
        if name not in self.cells:
            self.cells[name] = CellVariable(self.locals.get(name))

    def op_LOAD_CLOSURE(self, ins):
        self.push(self.cells[ins.argval])

    def op_LOAD_DEREF(self, ins):
        cell = self.cells.get(ins.argval)
        if cell is None or cell.contents is None:
            raise Unsupported(f"free variable {ins.argval!r} read before assignment")
        self.push(cell.contents)

    def op_STORE_DEREF(self, ins):
        cell = self.cells[ins.argval]
        if getattr(cell, "external", False):
            raise Unsupported(f"assignment to closure variable {ins.argval!r} of an outer function")
        cell.contents = self.pop()

    def op_LOAD_ATTR(self, ins):
        obj = self.pop()
        if PY312 and ins.arg & 1:
            self.push(NULL)
        self.push(self.tx.load_attr(obj, ins.argval))

    def op_LOAD_SUPER_ATTR(self, ins):  # 3.12
        from capture.calls import make_super

        self_var, cls = self.pop(), self.pop()
        self.pop()  # the global `super`
        sup = make_super(self, [cls, self_var])
        if ins.arg & 1:
            self.push(NULL)
        self.push(self.tx.load_attr(sup, ins.argval))

    def op_LOAD_METHOD(self, ins):  # 3.11
        obj = self.pop()
        self.push(NULL)
        self.push(self.tx.load_attr(obj, ins.argval))

    def op_STORE_ATTR(self, ins):
        obj, value = self.pop(), self.pop()
        if isinstance(obj, NewObjectVariable) and getattr(obj, "local", True):
            obj.fields[ins.argval] = value
            return
        if isinstance(obj, UserObjectVariable):
            objects.store_object_attr(self.tx, obj, ins.argval, value)
            return
        if isinstance(obj, ObjectVariable) and self._stores_itself(obj, ins.argval, value):
            return
        if isinstance(obj, ObjectVariable) and not isinstance(obj.value, type) and (
                type(obj.value).__setattr__ is object.__setattr__
                or objects.plain_module_store(obj.value, ins.argval, value)):
            self.state.attr_writes.store(obj, ins.argval, value, self.where, self.line)
            return
        raise Unsupported(f"attribute assignment .{ins.argval} (a side effect on Python state)")

    def op_DELETE_ATTR(self, ins):
        obj = self.pop()
        if not isinstance(obj, UserObjectVariable):
            raise Unsupported(f"del of attribute .{ins.argval} (a side effect on Python state)")
        objects.delete_object_attr(obj, ins.argval)

    def _stores_itself(self, obj, name: str, value) -> bool:
        """`self.count += x`: the input tensor written in place is stored back where it was
        read from (a no-op; its new value reaches the caller through the copy-back)."""
        if not isinstance(value, TensorVariable) or value.input_node is None:
            return False
        try:
            return self.tx.load_attr(obj, name) is value
        except Unsupported:
            return False

    def op_IMPORT_NAME(self, ins):
        fromlist, level = self.pop(), self.pop()
        name = ins.argval
        if level.value:
            name = importlib.util.resolve_name("." * level.value + name,
                                               self.globals.get("__package__"))
        # Only modules already imported: importing one for the first time runs its code.
        if name not in sys.modules:
            raise Unsupported(f"import of {name!r}, not imported yet")
        if isinstance(fromlist, ConstVariable) and fromlist.value is None and level.value == 0:
            name = name.partition(".")[0]
        self.push(ObjectVariable(sys.modules[name]))

    def op_IMPORT_FROM(self, ins):
        self.push(self.tx.load_attr(self.stack[-1], ins.argval))

    # ------------------------------------------------------------------ operators
    def op_BINARY_OP(self, ins):
        b, a = self.pop(), self.pop()
        self.push(ops.binary(self.state, ins.argrepr, a, b))

    def op_UNARY_NEGATIVE(self, ins):
        self.push(ops.unary(self.state, "-", self.pop()))

    def op_UNARY_POSITIVE(self, ins):
        self.push(ops.unary(self.state, "+", self.pop()))

    def op_UNARY_INVERT(self, ins):
        self.push(ops.unary(self.state, "~", self.pop()))

    def op_UNARY_NOT(self, ins):
        value = self.pop()
        if isinstance(value, UserObjectVariable):
            value = ConstVariable(self.truth(value))
        self.push(ops.unary(self.state, "not", value))

    def op_COMPARE_OP(self, ins):
        b, a = self.pop(), self.pop()
        symbol = ins.argval if isinstance(ins.argval, str) else dis.cmp_op[ins.arg >> 4]
        self.push(ops.compare(self.state, symbol, a, b))

    def op_IS_OP(self, ins):
        b, a = self.pop(), self.pop()
        # a SymBool is a Python bool at run time: `cond is True` decides it (a guard)
        a, b = (ConstVariable(ops.truth(self.state, v)) if isinstance(v, SymBoolVariable) else v
                for v in (a, b))
        same = ops.identical(a, b)
        self.push(ConstVariable(same != bool(ins.arg)))

    def op_CONTAINS_OP(self, ins):
        container, item = self.pop(), self.pop()
        method = python_dunder(container, "__contains__")
        if method is not None:
            found = ops.truth(self.state, self.call(ObjectVariable(method), [container, item], {}))
        else:
            found = ops.contains(self.state, item, container)
        self.push(ConstVariable(found != bool(ins.arg)))

    def op_BINARY_SUBSCR(self, ins):
        index, container = self.pop(), self.pop()
        method = python_dunder(container, "__getitem__")
        if method is not None:
            self.push(self.call(ObjectVariable(method), [container, index], {}))
            return
        self.push(ops.subscript(self.state, container, index))

    def op_BINARY_SLICE(self, ins):  # 3.12
        stop, start = self.pop(), self.pop()
        container = self.pop()
        index = SliceVariable(start, stop, ConstVariable(None))
        self.push(ops.subscript(self.state, container, index))

    def op_STORE_SUBSCR(self, ins):
        index, container, value = self.pop(), self.pop(), self.pop()
        self._store_subscript(container, index, value)

    def op_STORE_SLICE(self, ins):  # 3.12
        stop, start = self.pop(), self.pop()
        container, value = self.pop(), self.pop()
        self._store_subscript(container, SliceVariable(start, stop, ConstVariable(None)), value)

    def _store_subscript(self, container, index, value):
        if isinstance(container, TensorVariable):
            setitem(self.state, container, index, value)
        elif isinstance(container, ListVariable) and container.source is None:
            if isinstance(index, SliceVariable):
                raise Unsupported("slice assignment into a list")
            container.items[ops._index_part(self.state, index)] = value
        elif isinstance(container, DictVariable) and container.source is None:
            container.items[ops._const(index, "key")] = value
        else:
            raise Unsupported("item assignment into an input container (a side effect)")

    def op_DELETE_SUBSCR(self, ins):
        index, container = self.pop(), self.pop()
        if isinstance(container, DictVariable) and container.source is None:
            container.items.pop(ops._const(index, "key"), None)
            return
        raise Unsupported("del of a subscript")

    def op_BUILD_SLICE(self, ins):
        step = self.pop() if ins.arg == 3 else ConstVariable(None)
        stop, start = self.pop(), self.pop()
        self.push(SliceVariable(start, stop, step))

    # ------------------------------------------------------------------ control flow
    def op_JUMP_FORWARD(self, ins):
        self.jump(ins)

    op_JUMP_BACKWARD = op_JUMP_BACKWARD_NO_INTERRUPT = op_JUMP = op_JUMP_FORWARD
    op_JUMP_NO_INTERRUPT = op_JUMP_FORWARD

    def _branch(self, ins, when: bool) -> Variable | None:
        cond = self.pop()
        if when and self._is_assert(cond):
            self.state.expect(cond.expr, f"assertion at {self.where}", ShapeAssertionError)
            self.jump(ins)
            return
        done = if_conversion.convert(self, ins, when, cond)  # True, or the value returned
        if done is False and self.truth(cond) == when:
            self.jump(ins)
        return None if isinstance(done, bool) else done

    def truth(self, var) -> bool:
        """`bool(var)`; a tracked object's `__bool__`/`__len__` runs inlined (at this depth)."""
        if isinstance(var, UserObjectVariable):
            var = objects.object_truth(self.tx, var, self)
        return ops.truth(self.state, var)

    def _is_assert(self, cond) -> bool:
        following = self.instructions[self.ip] if self.ip < len(self.instructions) else None
        return isinstance(cond, SymBoolVariable) and following is not None and \
            following.opname == "LOAD_ASSERTION_ERROR"

    def op_POP_JUMP_IF_TRUE(self, ins):
        if not self._merged_operand(ins, is_and=False) and \
                not short_circuit.merge_branch(self, ins, True):
            return self._branch(ins, True)

    def op_POP_JUMP_IF_FALSE(self, ins):
        if not self._merged_operand(ins, is_and=True) and \
                not short_circuit.merge_branch(self, ins, False):
            return self._branch(ins, False)

    def _merged_operand(self, ins, is_and: bool) -> bool:
        """3.12's `a and b` / `a or b` (COPY 1, the jump, POP_TOP): merged as 3.11's OR_POP."""
        return short_circuit.is_operand_jump(self, self.ip - 1) and \
            short_circuit.merge(self, ins, is_and, copied=True)

    op_POP_JUMP_FORWARD_IF_TRUE = op_POP_JUMP_BACKWARD_IF_TRUE = op_POP_JUMP_IF_TRUE
    op_POP_JUMP_FORWARD_IF_FALSE = op_POP_JUMP_BACKWARD_IF_FALSE = op_POP_JUMP_IF_FALSE

    def _is_none(self, var) -> bool:
        return isinstance(var, ConstVariable) and var.value is None

    def op_POP_JUMP_IF_NONE(self, ins):
        if self._is_none(self.pop()):
            self.jump(ins)

    def op_POP_JUMP_IF_NOT_NONE(self, ins):
        if not self._is_none(self.pop()):
            self.jump(ins)

    op_POP_JUMP_FORWARD_IF_NONE = op_POP_JUMP_BACKWARD_IF_NONE = op_POP_JUMP_IF_NONE
    op_POP_JUMP_FORWARD_IF_NOT_NONE = op_POP_JUMP_IF_NOT_NONE
    op_POP_JUMP_BACKWARD_IF_NOT_NONE = op_POP_JUMP_IF_NOT_NONE

    def op_JUMP_IF_TRUE_OR_POP(self, ins):  # 3.11
        if short_circuit.merge(self, ins, is_and=False):
            return
        if self.truth(self.stack[-1]):
            self.jump(ins)
        else:
            self.pop()

    def op_JUMP_IF_FALSE_OR_POP(self, ins):  # 3.11
        if short_circuit.merge(self, ins, is_and=True):
            return
        if not self.truth(self.stack[-1]):
            self.jump(ins)
        else:
            self.pop()

    def op_GET_ITER(self, ins):
        value = self.pop()
        if isinstance(value, UserObjectVariable):
            value = objects.object_iter(self.tx, value, self)
        if not isinstance(value, IteratorVariable):
            value = IteratorVariable(ops.iterate(self.state, value))
        self.push(value)

    def op_FOR_ITER(self, ins):
        iterator = self.stack[-1]
        item = iterator.next()
        if item is not None:
            self.push(item)
            return
        self.pop()
        self.jump(ins)
        if self.instructions[self.ip].opname == "END_FOR":  # 3.12 skips it on exhaustion
            self.ip += 1

    def op_LOAD_ASSERTION_ERROR(self, ins):
        raise Unsupported("assertion failed at capture time (eager raises it)")

    def op_RAISE_VARARGS(self, ins):
        value = self.stack[-1] if ins.arg == 1 else None
        exc = getattr(value, "value", None)
        if isinstance(value, ObjectVariable) and isinstance(exc, BaseException) and \
                not self._in_try_block(self.instructions[self.ip - 1]):
            raise Raised(exc)
        raise Unsupported("raise statement")

    # ------------------------------------------------------------------ with
    def op_BEFORE_WITH(self, ins):
        self.stack.extend(contexts.enter(self.state, self.pop()))

    # ------------------------------------------------------------------ functions
    def op_KW_NAMES(self, ins):
        names = ins.argval if isinstance(ins.argval, tuple) else self.code.co_consts[ins.arg]
        self.kw_names = tuple(names)

    def op_CALL(self, ins):
        args = self.popn(ins.arg)
        second, first = self.pop(), self.pop()
        names, self.kw_names = self.kw_names, ()
        if names:
            kwargs = dict(zip(names, args[len(args) - len(names):]))
            args = args[: len(args) - len(names)]
        else:
            kwargs = {}
        if isinstance(first, NullVariable):
            fn = second
        else:
            fn, args = first, [second, *args]
        self.push(self.call(fn, args, kwargs))

    def op_CALL_FUNCTION_EX(self, ins):
        kwargs_var = self.pop() if ins.arg & 1 else DictVariable({})
        args_var = self.pop()
        fn = self.pop()
        if self.stack and isinstance(self.stack[-1], NullVariable):
            self.pop()
        if not isinstance(kwargs_var, DictVariable):
            raise Unsupported("**kwargs from a non-dict")
        args = ops.iterate(self.state, args_var)
        self.push(self.call(fn, args, dict(kwargs_var.items)))

    def call(self, fn, args, kwargs) -> Variable:
        if isinstance(fn, ContextExitVariable):  # no arguments: a resume prologue re-enters
            return contexts.leave(self.state, fn, args)
        result = self.tx.call(fn, args, kwargs, self)
        self.state.where, self.state.line = self.where, self.line
        return result

    # ------------------------------------------------------------------ generators
    def op_RETURN_GENERATOR(self, ins):
        self.push(ConstVariable(None))  # what the first resumption receives (popped next)

    def op_YIELD_VALUE(self, ins):
        value = self.pop()
        self.push(ConstVariable(None))  # the value sent back in: the consumer only iterates
        return Yielded(value)  # `run()` returns it; the next `run()` goes on from here

    def op_MAKE_FUNCTION(self, ins):
        code = self.pop().value
        closure = self.pop().items if ins.arg & 0x08 else ()
        if ins.arg & 0x04:
            self.pop()
        kwdefaults = self.pop().items if ins.arg & 0x02 else {}
        defaults = tuple(self.pop().items) if ins.arg & 0x01 else ()
        self.push(UserFunctionVariable(code, self.globals, code.co_name, defaults,
                                       dict(kwdefaults), tuple(closure)))


__all__ = ["Frame", "PY312"]
