"""Bytecode handlers that build and unpack containers (tuples, lists, dicts, strings).

A mixin of `capture.interpreter.Frame`: the handlers use its stack (`push`, `pop`, `popn`,
`stack`) and `state`, and follow its naming, `op_<OPNAME>`.

    BUILD_TUPLE 2 over [x, y]  ->  [TupleVariable([x, y])]
"""

from __future__ import annotations

from capture import operators as ops
from capture.errors import Unsupported
from capture.variables import (
    ConstVariable,
    DictVariable,
    ListVariable,
    TupleVariable,
    Variable,
)


class ContainerOps:
    def op_BUILD_TUPLE(self, ins):
        self.push(TupleVariable(self.popn(ins.arg)))

    def op_BUILD_LIST(self, ins):
        self.push(ListVariable(self.popn(ins.arg)))

    def op_BUILD_MAP(self, ins):
        flat = self.popn(2 * ins.arg)
        self.push(DictVariable({ops._const(k, "key"): v for k, v in zip(flat[::2], flat[1::2])}))

    def op_BUILD_CONST_KEY_MAP(self, ins):
        keys = self.pop()
        values = self.popn(ins.arg)
        self.push(DictVariable({ops._const(k, "key"): v for k, v in zip(keys.items, values)}))

    def op_BUILD_STRING(self, ins):
        parts = self.popn(ins.arg)
        self.push(ConstVariable("".join(ops._const(p, "string part") for p in parts)))

    def op_FORMAT_VALUE(self, ins):
        spec = self.pop().value if ins.arg & 0x04 else ""
        value = self.pop()
        conversion = {0: None, 1: str, 2: repr, 3: ascii}[ins.arg & 0x03]
        python = self._python_value(value)
        if conversion is not None:
            python = conversion(python)
        self.push(ConstVariable(format(python, spec)))

    def _python_value(self, var: Variable):
        if isinstance(var, ConstVariable):
            return var.value
        from capture.variables import SymFloatVariable, SymIntVariable

        if isinstance(var, SymIntVariable | SymFloatVariable):
            return ops.as_float(self.state, var)   # the example value, guarded
        if isinstance(var, (TupleVariable, ListVariable)):
            return tuple(self._python_value(v) for v in var.items)
        raise Unsupported(f"formatting a {type(var).__name__} into a string")

    def op_LIST_APPEND(self, ins):
        value = self.pop()
        self.stack[-ins.arg].items.append(value)

    def op_LIST_EXTEND(self, ins):
        value = self.pop()
        self.stack[-ins.arg].items.extend(ops.iterate(self.state, value))

    def op_LIST_TO_TUPLE(self, ins):
        self.push(TupleVariable(list(self.pop().items)))

    def op_MAP_ADD(self, ins):
        value, key = self.pop(), self.pop()
        self.stack[-ins.arg].items[ops._const(key, "key")] = value

    def op_DICT_UPDATE(self, ins):
        other = self.pop()
        if not isinstance(other, DictVariable):
            raise Unsupported("dict update from a non-dict")
        self.stack[-ins.arg].items.update(other.items)

    op_DICT_MERGE = op_DICT_UPDATE

    def op_CALL_INTRINSIC_1(self, ins):  # 3.12
        name = ins.argrepr
        if name == "INTRINSIC_LIST_TO_TUPLE":
            self.push(TupleVariable(list(self.pop().items)))
        elif name == "INTRINSIC_UNARY_POSITIVE":
            self.push(ops.unary(self.state, "+", self.pop()))
        else:
            raise Unsupported(f"CALL_INTRINSIC_1 {name}")

    def op_UNPACK_SEQUENCE(self, ins):
        items = ops.iterate(self.state, self.pop())
        if len(items) != ins.arg:
            raise Unsupported(f"unpacking {len(items)} values into {ins.arg} names")
        for item in reversed(items):
            self.push(item)

    def op_UNPACK_EX(self, ins):
        items = ops.iterate(self.state, self.pop())
        before, after = ins.arg & 0xFF, ins.arg >> 8
        if len(items) < before + after:
            raise Unsupported("not enough values to unpack")
        rest = items[before:len(items) - after]
        for item in reversed(items[len(items) - after:]):
            self.push(item)
        self.push(ListVariable(rest))
        for item in reversed(items[:before]):
            self.push(item)
