"""The wrapper: generated Python that runs one compiled graph (printable, `exec`'d once).

    def call(in0):
        if deferred:        # a kernel error of an earlier call, read without a sync
            check_pending()
        arg0 = in0 if in0.is_contiguous() else in0.contiguous()
        s0 = arg0.shape[0]
        buf1 = empty((s0,), (1,), dtype=torch.float32, device=dev0)
        k0_red_node0(arg0.data_ptr(), buf1.data_ptr(), s0)
        return (buf1,)

Symbol values come from input sizes (or symbol placeholders) on every call; temporaries are
allocated with their symbolic sizes, and a buffer whose last reader ran is reused by a later
buffer whose size the Analyzer proves equal (`an.equal`: a proof, never a guard). An extern
that is one torch op returning one tensor (mm, bmm, linear: SINGLE_TENSOR_OPS) is called on
its own line, `buf9 = buf9 if (buf9 := extern8(buf5, arg6)).is_contiguous() else ...`;
every other extern through the `run` make_extern generates for it.
"""

from __future__ import annotations

import itertools
import linecache
import os

import sympy
import torch

from inductor.codegen.common import KernelGroup
from inductor.codegen.division import exact_quotient
from inductor.ir import (Buffer, ExternNode, LoweringError, PermutedBuffer, StridedBuffer,
                         index_vars, inverse_dims)
from inductor.ops import CountingHandler
from inductor.runtime import huge_pages
from inductor.runtime.error_flags import DEFERRED_CELLS, check_pending
from symbolic import Analyzer, python_str, symbol_key
from symbolic.binding import binder_lines, symbol_readers, without_unused_reads


def size_text(expr) -> str:
    """Python for an integer size: Python's own // and % (floor semantics, as sympy's), and an
    exact quotient with rational coefficients (`s0/8 + Mod(-s0, 8)/8`) as an int `//`, never
    a float `/`."""
    expr = sympy.sympify(expr)
    quotient = exact_quotient(expr)
    if quotient is not None:
        return f"(({python_str(quotient[0])}) // {int(quotient[1])})"
    return python_str(expr)


def contiguous_strides(size) -> tuple:
    """Row-major strides of `size`, as sympy expressions (`(s0, 4, 8)` -> `(32, 8, 1)`)."""
    strides, step = [], sympy.Integer(1)
    for s in reversed(tuple(size)):
        strides.append(step)
        step = step * sympy.sympify(s)
    return tuple(reversed(strides))


def _map(value, fn):
    if isinstance(value, (tuple, list)):
        return type(value)(_map(v, fn) for v in value)
    if isinstance(value, dict):
        return {k: _map(v, fn) for k, v in value.items()}
    return fn(value)


def _leaves(value) -> list:
    if isinstance(value, (tuple, list)):
        return [leaf for v in value for leaf in _leaves(v)]
    return [value]


# torch ops that return their whole result as one new tensor: an extern calling one is a call
# on the wrapper's own line (`buf9 = extern10(buf5, arg6)`, the op bound to the extern's name:
# no `run` frame, no result tuple); every other extern keeps its generated `run`
SINGLE_TENSOR_OPS = (torch.mm, torch.bmm, torch.nn.functional.linear)
# mm of a transposed weight as `linear` (measured cheaper on the CPU); SYMC_MM_AS_LINEAR=0 keeps
# `mm(a, b.mT)` (linear dispatches linear -> matmul -> mm, which may cost more on a GPU host)
MM_AS_LINEAR = os.environ.get("SYMC_MM_AS_LINEAR", "1") != "0"


class _CallText:
    """The Python text of one extern call's arguments: operands by `operands` (buffer name ->
    the name holding it), symbols by their own names, constants and getters bound in `scope`
    under `prefix` + a number (a getter takes the operands as two tuples: see make_extern)."""

    def __init__(self, node: ExternNode, operands: dict, prefix: str):
        self.names = sorted(node.reads())
        self.position = {name: i for i, name in enumerate(self.names)}
        self.operands, self.prefix = operands, prefix
        self.syms = _extern_symbols(node)
        self.scope: dict = {}
        self.getters = False  # whether an argument needs `(tensors, values)`
        self.ref = node.prim.ref
        self.args = [self.text(v) for v in node.args]
        self.args += [f"{k}={self.text(v)}" for k, v in node.kwargs.items()]
        if _is_linear(node):  # mm(a, b.mT) as linear(a, b): the transpose made in C++
            self.ref = torch.nn.functional.linear
            self.args[1] = operands[node.args[1].buffer.name]

    def text(self, v) -> str:
        """Python for extern argument `v`."""
        if isinstance(v, Buffer):
            return self.operands[v.name]
        if type(v) in (int, bool) or isinstance(v, sympy.Integer):
            return repr(v if type(v) in (int, bool) else int(v))  # a literal
        if isinstance(v, PermutedBuffer):
            view = "" if v.size is None else ".view(" + self.text(
                tuple(sympy.sympify(s) for s in v.size)) + ")"
            return f"{self.operands[v.buffer.name]}{view}{permute_text(tuple(v.dims))}"
        if isinstance(v, StridedBuffer):
            t = self.operands[v.buffer.name]
            size, stride = (self.text(tuple(sympy.sympify(s) for s in part))
                            for part in (v.size, v.stride))
            if sympy.sympify(v.offset) == 0:  # as_strided keeps t's own storage offset
                return f"{t}.as_strided({size}, {stride})"
            offset = self.text(sympy.sympify(v.offset))
            return f"{t}.as_strided({size}, {stride}, {t}.storage_offset() + {offset})"
        if (isinstance(v, sympy.Basic) and not isinstance(v, sympy.logic.boolalg.BooleanAtom)
                and v.free_symbols and v.is_integer):
            text = size_text(v)
            # plain Python over the symbols only (a sympy `floor(s0/2)` is left to the getter)
            if set(compile(text, "<size>", "eval").co_names) <= {s.name for s in self.syms} | {
                    "max", "min"}:
                return f"int({text})"
        if isinstance(v, (tuple, list)) and type(v) in (tuple, list):
            parts = "".join(self.text(x) + ", " for x in v)
            return f"({parts})" if isinstance(v, tuple) else f"[{parts}]"
        if isinstance(v, dict) and all(isinstance(k, str) for k in v):
            return "{" + ", ".join(f"{k!r}: {self.text(x)}" for k, x in v.items()) + "}"
        # anything else (a constant, a float expression of symbols): the getter, bound by name
        name = f"{self.prefix}{len(self.scope)}"
        get = _getter(v, self.position, self.syms)
        if isinstance(v, sympy.Basic) and not v.free_symbols or not isinstance(
                v, (sympy.Basic, tuple, list, dict)):
            self.scope[name] = get(None, None)  # a constant: its value, computed once
            return name
        self.scope[name] = get
        self.getters = True
        return f"{name}(tensors, values)"


def _extern_symbols(node: ExternNode) -> list:
    """The size symbols extern `node`'s arguments use (symbol_key order)."""
    symbols: set = set()

    def collect(v):
        if isinstance(v, sympy.Basic):
            symbols.update(v.free_symbols)
        elif isinstance(v, PermutedBuffer) and v.size is not None:
            for s in v.size:
                symbols.update(sympy.sympify(s).free_symbols)
        elif isinstance(v, StridedBuffer):
            for s in (*v.size, *v.stride, v.offset):
                symbols.update(sympy.sympify(s).free_symbols)
        return v
    _map((node.args, node.kwargs), collect)
    return sorted(symbols, key=symbol_key)


def make_extern(node: ExternNode):
    """A callable `(*tensors, *symbol_values) -> tuple of contiguous tensors` for an extern,
    its buffers (`names`, sorted) then its symbols positionally.

    Generated once per extern as straight-line Python (externs run on every step: matmuls,
    attention): operands named, constants bound, integer sizes computed from their
    expressions; a call builds no argument list, tuple or dict:

        def run(t0, t1, s0):
            out = ref(t0, t1.mT, (s0 * 64), c0)
    """
    names = sorted(node.reads())
    call = _CallText(node, {name: f"t{i}" for i, name in enumerate(names)}, "g")
    syms, args = call.syms, call.args
    scope: dict = {"ref": call.ref, **call.scope}
    params = [f"t{i}" for i in range(len(names))] + [s.name for s in syms]
    # a getter (a float expression, a nested structure) takes the operands as two tuples
    unpack = "".join(f"    {k} = ({''.join(p + ', ' for p in part)})\n" for k, part in (
        ("tensors", params[:len(names)]), ("values", params[len(names):]))) if call.getters \
        else ""
    dims = tuple(node.output_dims) + (None,) * (len(node.outputs) - len(node.output_dims))
    # each output as its buffer holds it (a copy only where the result is not already in the
    # buffer's layout: `is_contiguous()` costs a third of a `contiguous()` that returns self),
    # as a tuple literal: no comprehension frame per call
    views = "".join(f"    o{i} = out[{i}]{'' if d is None else f'.permute({tuple(d)!r})'}\n"
                    for i, d in enumerate(dims))
    fix = "(" + "".join(f"o{i} if o{i}.is_contiguous() else o{i}.contiguous(), "
                        for i in range(len(dims))) + ")"
    source = (f"def run({', '.join(params)}):\n{unpack}"
              f"    out = ref({', '.join(args)})\n"
              f"    if out.__class__ is not tuple and out.__class__ is not list:\n"
              f"        out = (out,)\n"
              f"{views}    return {fix}\n")
    exec(compile(source, f"<symc extern {node.name}>", "exec"), scope)
    run = scope["run"]
    run.source = source
    return run, names, syms


def inline_extern(node: ExternNode) -> tuple | None:
    """(the op, its argument texts over the wrapper's own buffer and symbol names, the
    constants they name) for an extern the wrapper calls on its own line: one output, kept as
    the op returns it (no `output_dims`), an op of SINGLE_TENSOR_OPS, no getter. None for
    any other extern (make_extern's `run` calls it)."""
    if len(node.outputs) != 1 or any(d is not None for d in node.output_dims):
        return None
    call = _CallText(node, {name: name for name in node.reads()}, f"{node.name}_c")
    if call.getters or not any(call.ref is op for op in SINGLE_TENSOR_OPS):
        return None
    return call.ref, call.args, call.scope


def _is_linear(node: ExternNode) -> bool:
    """An `mm` whose second operand is a plain transpose: `linear(a, b)` computes the same
    product (the same matmul call on b's transposed view) without a Python view per call."""
    if (not MM_AS_LINEAR or getattr(node.prim, "name", None) != "mm" or len(node.args) != 2
            or node.kwargs):
        return False
    b = node.args[1]
    return isinstance(b, PermutedBuffer) and b.size is None and tuple(b.dims) == (1, 0)


def permute_text(dims: tuple) -> str:
    """The view `.permute(dims)` as the cheapest call that makes it: none for the identity,
    `.mT` for a swap of the last two dims (half a permute's host time: no list to parse)."""
    n = len(dims)
    if dims == tuple(range(n)):
        return ""
    if n >= 2 and dims == (*range(n - 2), n - 1, n - 2):
        return ".mT"
    return f".permute({dims!r})"


def _getter(v, position: dict, syms: list):
    """`get(tensors, symbol_values)` -> the value of extern argument `v` for one call."""
    if isinstance(v, Buffer):
        i = position[v.name]
        return lambda tensors, values: tensors[i]
    if isinstance(v, PermutedBuffer):
        i, dims = position[v.buffer.name], v.dims
        if v.size is None:
            return lambda tensors, values: tensors[i].permute(dims)
        size = _getter(tuple(sympy.sympify(s) for s in v.size), position, syms)
        return lambda tensors, values: tensors[i].view(size(tensors, values)).permute(dims)
    if isinstance(v, StridedBuffer):
        i = position[v.buffer.name]
        size, stride, offset = (_getter(tuple(sympy.sympify(s) for s in part), position, syms)
                                for part in (v.size, v.stride, (v.offset,)))

        def view(tensors, values):
            t = tensors[i]
            return t.as_strided(size(tensors, values), stride(tensors, values),
                                t.storage_offset() + offset(tensors, values)[0])
        return view
    if isinstance(v, sympy.Basic) and not isinstance(v, sympy.logic.boolalg.BooleanAtom):
        cast = int if v.is_integer else float
        if not v.free_symbols:
            constant = cast(v)
            return lambda tensors, values: constant
        return lambda tensors, values: cast(v.xreplace(dict(zip(syms, values))))
    if isinstance(v, (tuple, list)):
        parts, kind = [_getter(x, position, syms) for x in v], type(v)
        return lambda tensors, values: kind(get(tensors, values) for get in parts)
    if isinstance(v, dict):
        parts = {k: _getter(x, position, syms) for k, x in v.items()}
        return lambda tensors, values: {k: get(tensors, values) for k, get in parts.items()}
    return lambda tensors, values: v


def reshaped(t: torch.Tensor, shape) -> torch.Tensor:
    """Contiguous `t`'s memory at `shape`, as a tensor of its own (not a view: an output of a
    compiled graph may be modified in place like any fresh tensor); `t` is never used again."""
    return t.new_empty(0).set_(t.untyped_storage(), t.storage_offset(), shape)


class WrapperWriter:
    def __init__(self, lowering, steps, kernel_set, an: Analyzer | None = None):
        self.g = lowering
        self.steps = steps
        self.kernel_set = kernel_set
        self.an = an if an is not None else Analyzer()
        self.lines: list[str] = []
        # torch.empty_strided: one signature for torch's argument parser to match, where
        # torch.empty tries several (a third less host time per allocation)
        self.globals: dict = {"torch": torch, "empty": torch.empty_strided}
        self.devices: dict = {}
        self.reused = 0
        self.reused_names: set = set()
        self.scratch: dict = {}
        self.in_place: set = set()  # dead inputs a pointwise kernel's output overwrote
        self.storage: dict = {}  # buffer name -> the buffer whose `empty` made its storage

    def _device(self, device) -> str:
        key = str(device)
        if key not in self.devices:
            self.devices[key] = f"dev{len(self.devices)}"
            self.globals[self.devices[key]] = torch.device(device)
        return self.devices[key]

    def _prologue(self, params) -> None:
        names, shapes = [], []
        for i, (param, (_, item)) in enumerate(zip(params, self.g.inputs)):
            if isinstance(item, Buffer):
                dims = self.g.input_dims.get(i)
                if dims is not None:  # buffer.permute(dims) as saved: back to the buffer
                    self.lines.append(f"    {param} = {param}{permute_text(inverse_dims(dims))}")
                self.lines.append(f"    {item.name} = {param} if {param}.is_contiguous() else "
                                  f"{param}.contiguous()")
            names.append(item.name if isinstance(item, Buffer) else param)
            shapes.append(tuple(item.layout.size) if isinstance(item, Buffer) else item)
        readers = symbol_readers(shapes)  # the one binder (symbolic/binding.py)
        self.reads = [f"    {line}" for line in binder_lines(readers, names)]
        self.lines += self.reads
        # the parameters' own references go: an input dies after its last use when the caller
        # handed it over (`call_boxed`, the backward's saved tensors)
        owned = [p for p, (_, item) in zip(params, self.g.inputs) if isinstance(item, Buffer)]
        if owned:
            self.lines.append(f"    del {', '.join(owned)}")
        known = {r.symbol for r in readers}
        needed: set = set()
        for buf in self.g.buffers.values():
            for s in buf.layout.size:
                needed |= sympy.sympify(s).free_symbols
        for step in self.steps:
            if isinstance(step, KernelGroup):
                needed |= set(step.symbols())
        missing = needed - known
        if missing:
            raise LoweringError(f"expected every size symbol to be an input dimension or a "
                                f"symbol input, found no source for {sorted(map(str, missing))}")

    def _last_uses(self) -> dict:
        last: dict[str, int] = {}
        for i, step in enumerate(self.steps):
            names = step.reads() | {b.name for b in step.outputs} if isinstance(
                step, ExternNode) else set(step.arg_buffers())
            for n in names:
                last[n] = i
        return last

    def _alias(self, buf: Buffer, old: Buffer, why: str, larger: bool = False) -> None:
        """`buf` takes `old`'s storage: `old` itself at the same shape, else the view of its
        first numel elements at `buf`'s shape as one `as_strided` call (`old` is contiguous;
        a chain `.view(-1)[:n].view(shape)` costs three tensor calls, `.view(shape)` more
        host time than `as_strided`, which takes the strides as given)."""
        layout = buf.layout
        self.reused += 1
        same_shape = len(old.layout.size) == len(layout.size) and all(
            self.an.equal(a, b) for a, b in zip(old.layout.size, layout.size))
        view = "" if same_shape and not larger else (
            f".as_strided({self._shape(layout.size)}, "
            f"{self._shape(contiguous_strides(layout.size))})")
        self.lines.append(f"    {buf.name} = {old.name}{view}  # {why} {old.name}")

    def _in_place_source(self, group: KernelGroup, name: str, i: int, last: dict,
                         allocated: set, kept: set) -> str | None:
        """An input of pointwise `group` that dies with it and that `name` can overwrite: the
        same dtype, device and numel (proved), every load of it at the index `name` is stored
        at, so each element is read before the same lane writes it."""
        if not self.kernel_set.allows_in_place or group.is_reduction:
            return None
        loads, stores = self._accesses(group)
        targets = {index for n, index in stores if n == name}
        if len(targets) != 1:
            return None
        (target,) = targets
        out = self.g.buffers[name]
        for cand in group.inputs:
            buf = self.g.buffers.get(cand)
            if (buf is None or cand in kept or cand in self.in_place or last.get(cand) != i
                    or cand not in allocated or buf.dtype != out.dtype
                    or buf.layout.device != out.layout.device
                    or not self.an.equal(buf.layout.numel(), out.layout.numel())
                    or (name in kept and self._covers(self._storage(cand), out) != "same")):
                continue
            at = {index for n, index in loads if n == cand}
            if at and all(sympy.expand(index - target) == 0 for index in at):
                return cand
        return None

    def _storage(self, name: str) -> Buffer:
        """The buffer whose allocation holds `name`'s memory (itself unless it reused one)."""
        return self.storage.get(name, self.g.buffers[name])

    def _accesses(self, group: KernelGroup) -> tuple[list, list]:
        counter = CountingHandler()
        xvars, rvars = index_vars("x", len(group.xranges)), index_vars("r", len(group.rranges))
        for node in group.nodes:
            node.body(counter, xvars, rvars)
        return counter.loads, counter.stores

    def _skipped(self, group: KernelGroup, name: str) -> bool:
        """A buffer the backend never stores (internal to its group) gets no memory."""
        return name in group.internal and (self.kernel_set.skips_internal or
                                           name in self.kernel_set.skipped.get(group.name, ()))

    def _scratch(self, name: str) -> str:
        """A one-element stand-in for a skipped buffer's pointer, one per dtype and device."""
        buf = self.g.buffers[name]
        key = (buf.dtype, str(buf.layout.device))
        if key not in self.scratch:
            self.scratch[key] = f"scratch{len(self.scratch)}"
            scratch = torch.empty(1, dtype=buf.dtype, device=buf.layout.device)
            self.globals[self.scratch[key]] = scratch
            self.globals[f"{self.scratch[key]}_ptr"] = scratch.data_ptr()
        return self.scratch[key]

    def _covers(self, old: Buffer, new: Buffer) -> str | None:
        """"same" when `old`'s storage has exactly `new`'s numel, "larger" when the ShapeEnv
        proves it holds at least as many elements (symbolic sizes, never hints), else None."""
        if old.dtype != new.dtype or old.layout.device != new.layout.device:
            return None
        a, b = old.layout.numel(), new.layout.numel()
        if self.an.equal(a, b):
            return "same"
        if self.an.prove(sympy.Ge(a, b)) is True:  # a proof over every size, never a guard
            return "larger"
        return None

    def _alloc(self, buf: Buffer, pool: list, outlives: bool = False) -> None:
        """Allocate `buf`, reusing a dead buffer of the pool: an exact fit first, else the first
        one proven large enough (a flat view of its first numel elements). A buffer that
        `outlives` the call (a graph output: a gradient, a tensor saved for the backward) takes
        only an exact fit: a view would keep the whole larger storage alive with it."""
        layout = buf.layout
        fits = [(k, self._covers(old, buf)) for k, old in enumerate(pool)]
        if outlives:  # the storage itself, not only the view `old` took of it, must fit
            fits = [(k, how) for k, how in fits
                    if how == "same" and self._covers(self._storage(pool[k].name), buf) == "same"]
        pick = next((f for f in fits if f[1] == "same"), None) or next(
            (f for f in fits if f[1] == "larger"), None)
        if pick is not None:
            k, how = pick
            old = pool.pop(k)
            self.storage[buf.name] = self._storage(old.name)
            self.reused_names.add(old.name)
            self._alias(buf, old, "reuses", larger=how == "larger")
            self.lines.append(f"    del {old.name}")
            return
        self.storage[buf.name] = buf
        self.lines.append(f"    {buf.name} = empty({self._shape(layout.size)}, "
                          f"{self._shape(contiguous_strides(layout.size))}, "
                          f"dtype={buf.dtype}, device={self._device(layout.device)})")
        advice = huge_pages.advice_line(buf.name, layout, buf.dtype, self.an, size_text)
        if advice is not None:  # a CPU buffer that may hold 4 MiB or more
            self.globals["huge_pages"] = huge_pages.huge_pages
            self.lines.append(f"    {advice}")

    @staticmethod
    def _shape(size) -> str:
        parts = [size_text(s) for s in size]
        if len(parts) == 1:
            return f"({parts[0]},)"
        return "(" + ", ".join(parts) + ")"

    def generate(self) -> str:
        params = [f"in{i}" for i in range(len(self.g.inputs))]
        # a kernel error of an earlier call whose flag was read without a sync is raised first
        # (runtime/error_flags.py): the next step, or this step's backward
        # (the list's truth first: no call while no kernel defers its flag)
        self.globals["check_pending"] = check_pending
        self.globals["deferred"] = DEFERRED_CELLS
        self.lines = [f"def call({', '.join(params)}):", "    if deferred:",
                      "        check_pending()"]
        self._prologue(params)
        last = self._last_uses()
        outputs = {b.name for b in self.g.outputs if isinstance(b, Buffer)}
        inputs = {b.name for _, b in self.g.inputs if isinstance(b, Buffer)}
        pool: list[Buffer] = []
        allocated: set = set(inputs)
        freed: list[tuple[str, int]] = []  # (buffer, line position after its last use)
        for i, step in enumerate(self.steps):
            if isinstance(step, KernelGroup):
                for name in step.arg_buffers():
                    if name not in allocated and not self._skipped(step, name):
                        allocated.add(name)
                        dying = self._in_place_source(step, name, i, last, allocated,
                                                      inputs | outputs)
                        if dying is not None:
                            self._alias(self.g.buffers[name], self.g.buffers[dying],
                                        "written in place")
                            self.storage[name] = self._storage(dying)
                            self.in_place.add(dying)
                        else:
                            self._alloc(self.g.buffers[name], pool, name in outputs)
                self._kernel_call(step)
            else:
                self._extern_call(step)
                allocated |= {b.name for b in step.outputs}
            # a dead buffer waits for reuse through one step's allocations only: held longer it
            # would add to the peak what the allocator could have handed out meanwhile
            pool.clear()
            for name, at in last.items():
                if at == i and name in inputs and name not in outputs:
                    freed.append((name, len(self.lines)))  # dropped, never reused: not ours
                    continue
                if at == i and name not in outputs and name not in inputs and name in allocated:
                    if name in self.in_place:  # its storage lives on as the kernel's output
                        self.lines.append(f"    del {name}")
                        continue
                    pool.append(self.g.buffers[name])
                    freed.append((name, len(self.lines)))
        # a dead buffer no later buffer reused is freed right after its last use
        for name, pos in reversed(freed):
            if name not in self.reused_names:
                self.lines.insert(pos, f"    del {name}")
        rets = []
        for i, out in enumerate(self.g.outputs):
            if i in self.g.output_dims:  # a saved value as the view its buffer holds
                dims, size = self.g.output_dims[i]
                view = "" if size is None else f".view({self._shape(size)})"
                rets.append(f"{out.name}{view}{permute_text(dims)}")
            elif isinstance(out, Buffer) and out.layout.size != self.g.buffers[out.name].layout.size:
                self.globals["reshaped"] = reshaped  # an output at another shape (graph.py)
                rets.append(f"reshaped({out.name}, {self._shape(out.layout.size)})")
            elif isinstance(out, Buffer):
                rets.append(out.name)
            elif isinstance(out, sympy.Basic):
                rets.append(size_text(out) if out.is_integer else python_str(out))
            else:
                rets.append(repr(out))
        self.lines.append(f"    return ({', '.join(rets)}{',' if len(rets) == 1 else ''})")
        return "\n".join(without_unused_reads(self.lines, self.reads)) + "\n"

    def boxed(self, source: str) -> str:
        """The same body as `call_boxed(args)`: it takes the caller's list of inputs and empties
        it, so each input is freed after its last use when no one else holds it."""
        params = [f"in{i}" for i in range(len(self.g.inputs))]
        head, _, body = source.partition("\n")
        unpack = f"    {', '.join(params)}{',' if len(params) == 1 else ''} = args\n" if params else ""
        return f"def call_boxed(args):\n{unpack}    args.clear()\n{body}"

    def _kernel_call(self, group: KernelGroup) -> None:
        name = group.name
        self.globals[name] = self.kernel_set.kernels[name]
        buffers = [self._scratch(b) if self._skipped(group, b) else b
                   for b in group.arg_buffers()]
        if self.kernel_set.takes_pointers:  # a scratch's address is a constant of the wrapper
            args = [f"{b}_ptr" if b in self.scratch.values() else f"{b}.data_ptr()"
                    for b in buffers]
        else:
            args = list(buffers)
        args += [s.name for s in group.symbols()]
        if self.kernel_set.passes_extents:  # SYMC_DEBUG_BOUNDS: each buffer's extent
            args += [f"{b}.numel()" for b in buffers]
        self.lines.append(f"    {name}({', '.join(args)})")

    def _extern_call(self, node: ExternNode) -> None:
        views = "".join(f", {a}" for a in _leaves(node.args)
                        if isinstance(a, (PermutedBuffer, StridedBuffer)))
        inline = inline_extern(node)
        if inline is not None:  # the op itself, on this line (see SINGLE_TENSOR_OPS)
            op, args, constants = inline
            self.globals.update(constants)
            self.globals[node.name] = op
            # one line: the result named by the walrus, copied only when not contiguous
            o = node.outputs[0].name
            self.lines.append(f"    {o} = {o} if ({o} := {node.name}({', '.join(args)}))"
                              f".is_contiguous() else {o}.contiguous()"
                              f"  # {node.prim.name}{views}")
            return
        run, names, syms = make_extern(node)
        self.globals[node.name] = run
        outs = "".join(b.name + ", " for b in node.outputs)
        tensors = "".join(n + ", " for n in names)
        values = "".join(s.name + ", " for s in syms)
        self.lines.append(f"    {outs} = {node.name}({tensors}{values})"
                          f"  # {node.prim.name}{views}")


_WRAPPERS = itertools.count()


def _source_name(source: str) -> str:
    """A file name of its own for each wrapper, its source in `linecache`: tracebacks and the
    memory tool (symc/memory_peak.py) show the wrapper's lines."""
    name = f"<symc wrapper {next(_WRAPPERS)}>"
    linecache.cache[name] = (len(source), None, source.splitlines(True), name)
    return name


def build_wrapper(lowering, steps, kernel_set, an: Analyzer | None = None):
    """(python source, the `call` function, buffers reused, `call_boxed`)."""
    writer = WrapperWriter(lowering, steps, kernel_set, an)
    source = writer.generate()
    namespace = dict(writer.globals)
    exec(compile(source, _source_name(source), "exec"), namespace)
    boxed = writer.boxed(source)
    exec(compile(boxed, _source_name(boxed), "exec"), namespace)
    return source, namespace["call"], writer.reused, namespace["call_boxed"]
