"""Writes the body of one Triton kernel function for a fused group: indices, masks, loops.

    tmp0 = tl.load(buf0_ptr + (x0), xmask, other=0.0)
    tmp1 = tl.where(xmask & rmask, tmp0, float("-inf"))
    tmp2 = max_reduce(tmp1, 1)[:, None]

Four body kinds: `pointwise` (1-D tile over xnumel), `tiled` (a pointwise [YBLOCK, XBLOCK] tile
over rows x cols, triton_tiled.py), `persistent` (2-D tile [XBLOCK, RBLOCK], RBLOCK >= rnumel,
one pass) and `looped` (2-D tile, `for roffset in range(0, rnumel, RBLOCK)`).
Lines go into *sections* (looped: pre, loop0, post0, loop1, post1, ...): a line lands in the
latest section its operands live in, r-dependent lines at least in the current loop. A node
whose r-dependent work needs a reduction finished in the current loop (softmax's `exp(x - max)`)
is rolled back and re-run in a new loop. Reductions accumulate per lane inside a loop and are
combined across lanes after it; values of stored buffers are forwarded in registers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

import sympy
import torch

from inductor.codegen.index_simplify import simplify_index
from inductor.codegen.triton_group import Coalescing, KernelGroup, dtype_of
from inductor.codegen.triton_online import defer, online_sum
from inductor.codegen.triton_ops import NARROW_INTS, TV, _literal
from inductor.codegen.triton_printer import TritonExprPrinter, compute_dtype, triton_dtype
from inductor.codegen.triton_tiled import anchored, header_lines, tile_dims, tile_mask
from inductor.ops import reduction_identity, reduction_op, use_handler
from prims.opcodes import PrimOp as P
from symbolic import Analyzer
from symbolic.ranges import ValueRange, bounds

_TOKEN = re.compile(r"[A-Za-z_][A-Za-z_0-9]*")
_R_TOKENS = frozenset({"rindex", "rmask", "roffset"})
XINDEX, RINDEX = sympy.Symbol("xindex", integer=True), sympy.Symbol("rindex", integer=True)
FLAT_INDICES = (XINDEX, RINDEX)


class NeedNewLoop(Exception):
    """Raised inside a node when its r-dependent work needs a reduction of the current loop."""


@dataclass
class IndexPlan:
    """Loop structure shared by every body kind of one kernel (decided once per group)."""

    xco: Coalescing
    rco: Coalescing | None
    ranges: dict  # symbol -> ValueRange, loop vars included
    index_dtype: str  # "tl.int32" or "tl.int64"
    xnumel: sympy.Expr
    rnumel: sympy.Expr
    flat_indices: bool = True  # print split-but-contiguous indices as xindex / rindex


@dataclass
class _Section:
    lines: list = field(default_factory=list)


def _identity(op: P, dtype: torch.dtype) -> str:
    return _literal(reduction_identity(op, dtype), dtype)


class KernelWriter:
    """Collects lines for one body kind; `render(fn_name, args)` returns the function text."""

    def __init__(self, group: KernelGroup, kind: str, plan: IndexPlan):
        self.group = group
        self.kind = kind
        # tiled indices print as `x1 + cols*x0`, never as one flat xindex (triton_tiled.py)
        self.plan = replace(plan, flat_indices=False) if kind == "tiled" else plan
        self.printer = TritonExprPrinter(Analyzer(ranges=dict(plan.ranges)))
        self.sections: list[_Section] = [_Section()]
        self.loop = 0 if kind != "looped" else self._new_loop()
        self.cse: dict[tuple[int, str], str] = {}
        self.section_of: dict[str, int] = {}
        self.registers: dict[tuple[str, sympy.Expr], tuple[TV, object]] = {}
        self.internal = frozenset(getattr(group, "internal", ()) or ())
        self.recomputing = False
        self.current_node = None
        self._context = None  # (handler, xvars, rvars) of the node being run
        self.pointers: dict[str, str] = {}  # buffer -> arg name, in first-use order
        self.stored: set[str] = set()
        self.index_exprs: list[sympy.Expr] = []
        self.access_exprs: list[sympy.Expr] = []  # the loads' and stores' (layout votes)
        self.r_names: set[str] = set()  # variables whose value changes along r
        self.indirect: dict[sympy.Symbol, str] = {}  # index symbols holding loaded values
        self.checked: dict[sympy.Symbol, str] = {}  # index symbol -> its in-range mask
        self.masks: list[str] = []  # masks of the enclosing ops.masked bodies
        self.uses_error_flag = False  # writes `symc_err_ptr` (runtime/kernel_errors.py)
        # why this kernel's error cannot show in its outputs as NaN (runtime/error_flags.py:
        # empty, its flag may be read later; else right after the launch)
        self.unpoisoned: list[str] = []
        self.check_bounds = False  # SYMC_DEBUG_BOUNDS: every access checked against extents
        self.counter = 0
        # online softmax sums (triton_online.py): maxes of this loop, deferred `exp(x - c)`
        self.online_max: dict[tuple[str, int], str] = {}  # (value, loop) -> its masked value
        self.deferred: dict[str, tuple] = {}
        self.deferred_rhs: dict[str, str] = {}

    # -- sections --------------------------------------------------------------------------
    def _new_loop(self) -> int:
        self.sections += [_Section(), _Section()]
        return len(self.sections) - 2

    def _floor(self, rhs: str) -> int:
        """Earliest section a line may go in: after its operands, r-dependent ones in a loop."""
        section = 0
        r_dependent = False
        for tok in _TOKEN.findall(rhs):
            if tok in self.deferred:  # a deferred `exp(x - c)` used otherwise: c must be done
                raise NeedNewLoop()
            if tok in self.section_of:
                section = max(section, self.section_of[tok])
            if tok in _R_TOKENS or tok in self.r_names or (tok[0] == "r" and tok[1:].isdigit()):
                r_dependent = True
        if self.kind == "looped":
            if r_dependent and section > self.loop:
                raise NeedNewLoop()
            if r_dependent:
                section = max(section, self.loop)
            elif section == self.loop:  # depends on loop values (an accumulator's operand)
                pass
        return section

    def new_name(self, prefix: str = "tmp") -> str:
        self.counter += 1
        return f"{prefix}{self.counter - 1}"

    def emit(self, rhs: str, section: int | None = None) -> str:
        if section is None:
            deferred = defer(self, rhs)
            if deferred is not None:
                return deferred
        section = self._floor(rhs) if section is None else section
        key = (section, rhs)
        if key in self.cse:
            return self.cse[key]
        name = self.new_name()
        if self._is_r_dependent(rhs):
            self.r_names.add(name)
        self.sections[section].lines.append(f"{name} = {rhs}")
        self.cse[key] = name
        self.section_of[name] = section
        return name

    def _is_r_dependent(self, text: str) -> bool:
        return any(tok in _R_TOKENS or tok in self.r_names or (tok[0] == "r" and tok[1:].isdigit())
                   for tok in _TOKEN.findall(text))

    def raw(self, section: int, line: str, *names: str) -> None:
        self.sections[section].lines.append(line)
        for n in names:
            self.section_of[n] = section

    # -- nodes -----------------------------------------------------------------------------
    def run_node(self, node, handler, xvars, rvars) -> None:
        """Run `node.body(xvars, rvars)` with `handler` installed as `inductor.ops.ops`."""
        self._context = (handler, xvars, rvars)
        for _ in range(64):
            snapshot = self._snapshot()
            try:
                with use_handler(handler):
                    self.current_node = node
                    node.body(handler, xvars, rvars)
                return
            except NeedNewLoop:
                self._restore(snapshot)
                self.loop = self._new_loop()
        raise RuntimeError(f"kernel {self.group.name}: node {node.name} needs too many loops")

    def _snapshot(self):
        return ([len(s.lines) for s in self.sections], dict(self.cse), dict(self.section_of),
                dict(self.registers), dict(self.pointers), set(self.stored),
                dict(self.online_max), dict(self.deferred), dict(self.deferred_rhs))

    def _restore(self, snap) -> None:
        (lengths, self.cse, self.section_of, self.registers, self.pointers, self.stored,
         self.online_max, self.deferred, self.deferred_rhs) = snap
        for section, n in zip(self.sections, lengths):
            del section.lines[n:]

    # -- indices ---------------------------------------------------------------------------
    def rewrite_index(self, index: sympy.Expr) -> sympy.Expr:
        """An index over the group's loop vars as one over the kernel's merged vars, with the
        divisions the merged vars' extents decide removed (index_simplify)."""
        index = self.plan.xco.rewrite(index)
        if self.plan.rco is not None:
            index = self.plan.rco.rewrite(index)
        return _flat_as_index(simplify_index(index, self.loop_extents(), self.printer.an),
                              self.plan)

    def loop_extents(self) -> dict:
        """The kernel's merged loop vars and their trip counts (facts for the Analyzer)."""
        extents = dict(zip(self.plan.xco.new_vars, self.plan.xco.ranges))
        if self.plan.rco is not None:
            extents.update(zip(self.plan.rco.new_vars, self.plan.rco.ranges))
        return extents

    def print_index(self, index: sympy.Expr) -> str:
        index = self.rewrite_index(index)
        self.index_exprs.append(index)
        with self.printer.an.loop_extents(self.loop_extents()):
            return self.printer(index)

    def _depends_on_r(self, index: sympy.Expr) -> bool:
        return any(s.name.startswith("r") or s.name in self.r_names for s in index.free_symbols)

    def indirect_indexing(self, value: TV, size) -> sympy.Symbol:
        """A loaded value used as an index (gather), required in [0, size) (negatives were
        wrapped by the decomposition): outside, the error flag is set and every access through
        the index is masked, so nothing is read out of bounds, even from an empty buffer."""
        size = sympy.sympify(size)
        bound = self.printer(size)
        # as a block (`+ 0 * xindex` folds away): a constant index (cross-entropy's target made
        # by a factory) is 0-d, and the interpreter refuses a mask built from a 0-d comparison
        value = TV(self.emit(f"{value} + 0 * {self._anchor}"), value.dtype)
        ok = self.emit(f"({value} >= 0) & ({value} < ({bound}))")
        self.flag_error(ok, 1, str(value))
        name = self.emit(f"tl.where({ok}, {value}, 0)")
        symbol = sympy.Symbol(name, integer=True)
        hi = self.printer.ranges and _upper(size, self.printer.ranges)
        self.printer.ranges[symbol] = ValueRange(0, hi - 1)
        self.indirect[symbol] = name
        self.checked[symbol] = ok
        return symbol

    def lane_mask(self, text: str) -> str:
        """The mask of the lanes a value computed from `text` is real in (masked lanes hold
        the `other` of their loads, which must not raise errors)."""
        extra = "".join(f" & ({m})" for m in self.masks)
        if self.kind == "tiled":
            return "ymask & xmask" + extra
        if self.kind == "pointwise" or not self._is_r_dependent(f"{text}{extra}"):
            return "xmask" + extra
        return "xmask & rmask" + extra

    def flag_error(self, ok: str, code: int, operands: str) -> None:
        """Store `code` into the error flag in the real lanes where `ok` is false (code 1, an
        index out of range: the loads through the index read NaN, see `load`)."""
        self.uses_error_flag = True
        if code != 1:
            self.unpoisoned.append(f"error code {code} (no value to poison)")
        mask = self.lane_mask(f"{ok} {operands}")
        bad = self.emit(f"(~({ok})) & {mask}")
        line = f"tl.store(symc_err_ptr + 0 * {bad}.to(tl.int32), {code}, mask={bad})"
        section = self._floor(line)
        if line not in self.sections[section].lines:  # `bad` came from the CSE: once
            self.raw(section, line)

    def _access_mask(self, name: str, index: sympy.Expr, text: str, mask: str) -> str:
        """`mask` and the in-range masks of the runtime indices in `index`, and (debug) the
        buffer's extent."""
        extra = [self.checked[s] for s in sorted(index.free_symbols, key=str)
                 if s in self.checked] + list(self.masks)
        if self.check_bounds:
            arg = self.pointers[name]
            ok = self.emit(f"(({text}) >= 0) & (({text}) < {arg[:-len('_ptr')]}_numel)")
            self.flag_error(ok, 3, "")
            extra.append(ok)
        return " & ".join([mask] + [f"({e})" for e in extra])

    @property
    def _anchor(self) -> str:
        """The index a scalar is broadcast with to make it a tile (an interpreter mask must
        be one): per row in a tiled body, per lane elsewhere."""
        return "yindex" if self.kind == "tiled" else "xindex"

    def _tile_dims(self, index: sympy.Expr, store: bool = False) -> str:
        return "yx" if store else tile_dims(index, self.plan.xco, self.indirect)

    def _mask(self, index: sympy.Expr, store: bool = False) -> str:
        if self.kind == "tiled":
            return tile_mask(self._tile_dims(index, store))
        if self.kind == "pointwise" or not self._depends_on_r(index):
            return "xmask"
        return "xmask & rmask"

    # -- memory ----------------------------------------------------------------------------
    def load(self, name: str, index: sympy.Expr) -> TV:
        index = self.rewrite_index(index)
        forwarded = self.registers.get((name, index))
        if forwarded is not None and not self._visible(forwarded[0]):
            self._recompute(forwarded[1])
            forwarded = self.registers.get((name, index))
        if forwarded is not None:
            return forwarded[0]
        if name in self.stored or name in self.internal:
            raise NotImplementedError(
                f"kernel {self.group.name}: {name} is read at {index} after this kernel wrote it "
                "at another index; the scheduler must not fuse these nodes")
        dtype = dtype_of(self.group, name)
        pointer = self._pointer_raw(name, index)
        other = _literal(0, dtype)
        mask = self._access_mask(name, index, self.printer(index), self._mask(index))
        text = f"tl.load({pointer}, {mask}, other={other})"
        if compute_dtype(dtype) != dtype:
            text += f".to({triton_dtype(compute_dtype(dtype))})"
        return TV(self.emit(self._poisoned(text, index, dtype, "read")), dtype)

    def _poisoned(self, text: str, index: sympy.Expr, dtype: torch.dtype, access: str) -> str:
        """A load through a data-dependent index reads NaN where the index is out of range:
        the error shows in the outputs until its flag is read (runtime/error_flags.py). Where
        it cannot (an integer read, a store), the kernel is marked `unpoisoned`."""
        oks = [self.checked[s] for s in sorted(index.free_symbols, key=str) if s in self.checked]
        if not oks:
            return text
        if access == "read" and dtype.is_floating_point:
            return f"tl.where({' & '.join(f'({ok})' for ok in oks)}, {text}, float(\"nan\"))"
        self.unpoisoned.append(f"a {dtype} {access} through a data-dependent index")
        return text

    def _visible(self, value: TV) -> bool:
        """A value of an earlier loop's body is gone; pre and post sections stay visible."""
        if value.name in self.deferred:  # never printed (triton_online.py): recompute it
            return False
        section = self.section_of.get(value.name, 0)
        return self.kind != "looped" or section % 2 == 0 or section == self.loop

    def _recompute(self, node) -> None:
        """Re-run the node that produced a forwarded value, in the current loop, storing nothing."""
        handler, xvars, rvars = self._context
        saved = self.recomputing, self.current_node
        # The values it stores are forwarded as `node`'s: attributing them to the node that asked
        # would make a later loop recompute the asker, which loads the same value again (a loop
        # without end, seen as RecursionError in T5's relative-position bias).
        self.recomputing, self.current_node = True, node
        try:
            with use_handler(handler):
                node.body(handler, xvars, rvars)
        finally:
            self.recomputing, self.current_node = saved

    def _pointer_raw(self, name: str, index: sympy.Expr, store: bool = False) -> str:
        arg = self.pointers.setdefault(name, f"{_ident(name)}_ptr")
        self.index_exprs.append(index)
        self.access_exprs.append(index)
        text = self.printer(index)
        if self.kind == "tiled":
            text = anchored(text, index, self.plan.xco, self._tile_dims(index, store))
        elif not index.free_symbols & (set(self.plan.xco.new_vars) | {XINDEX}):
            text = f"({text}) + 0 * xindex"
        return f"{arg} + ({text})"

    def store(self, name: str, index: sympy.Expr, value: TV, mode=None) -> None:
        if mode not in (None, "store"):
            raise NotImplementedError(f"Triton codegen: store mode {mode!r}")
        index = self.rewrite_index(index)
        self.registers[(name, index)] = (value, self.current_node)
        if self.recomputing or name in self.internal:
            return
        dtype = dtype_of(self.group, name)
        self._poisoned("", index, dtype, "write")
        pointer = self._pointer_raw(name, index, store=True)
        mask = self._access_mask(name, index, self.printer(index), self._mask(index, True))
        if value.const is not None:
            shape = self._tile_shape(index)
            text = f"tl.full({shape}, {_literal(value.const, dtype)}, {triton_dtype(dtype)})"
        else:
            text = f"{value}.to({triton_dtype(dtype)})"
        line = f"tl.store({pointer}, {text}, {mask})"
        section = self._floor(f"{line}")
        self.raw(section, line)
        self.stored.add(name)

    def _tile_shape(self, index) -> str:
        if self.kind == "tiled":  # a store spans the whole tile
            return "[YBLOCK, XBLOCK]"
        if self.kind == "pointwise":
            return "[XBLOCK]"
        return "[XBLOCK, RBLOCK]" if self._depends_on_r(index) else "[XBLOCK, 1]"

    def philox_rand(self, seed_name: str, offset: sympy.Expr, dtype: torch.dtype) -> TV:
        arg = self.pointers.setdefault(seed_name, f"{_ident(seed_name)}_ptr")
        seed = self.emit(f"tl.load({arg})", 0)
        counter = self.printer(self.rewrite_index(offset))
        bits = {torch.float16: 11, torch.bfloat16: 8}.get(dtype, 24)
        return TV(self.emit(f"philox_uniform({seed}, ({counter}), {bits})"), dtype)

    # -- reductions ------------------------------------------------------------------------
    def reduction(self, dtype, src_dtype, reduction_type: str, value):
        if self.kind in ("pointwise", "tiled"):
            raise RuntimeError(f"kernel {self.group.name}: reduction in a pointwise kernel")
        rtype = reduction_op(reduction_type)
        value = value if isinstance(value, TV) else TV(_literal(value, src_dtype), src_dtype, value)
        acc_dtype = compute_dtype(dtype) if rtype not in (P.ARGMAX, P.ARGMIN) else compute_dtype(
            value.dtype)
        if rtype in (P.SUM, P.PROD) and not acc_dtype.is_floating_point and acc_dtype != torch.bool:
            acc_dtype = torch.int64 if dtype == torch.int64 else acc_dtype
        if self.kind == "persistent":
            return self._reduce_persistent(rtype, value, acc_dtype, dtype)
        return self._reduce_looped(rtype, value, acc_dtype, dtype)

    def _masked(self, value: TV, rtype: str, acc_dtype: torch.dtype, section=None) -> str:
        ident = _identity(rtype, acc_dtype)
        if acc_dtype in NARROW_INTS:  # a bare int would make the where int32 (triton_ops.py)
            ident = f"tl.full([], {ident}, {triton_dtype(acc_dtype)})"
        cast = "" if value.dtype == acc_dtype or value.const is not None else \
            f".to({triton_dtype(acc_dtype)})"
        if rtype in (P.ANY, P.ALL):
            return self.emit(f"tl.where(xmask & rmask, ({value} != 0).to(tl.int8), {ident})",
                             section)
        return self.emit(f"tl.where(xmask & rmask, {value}{cast}, {ident})", section)

    def _reduce_persistent(self, rtype, value: TV, acc_dtype, dtype):
        if rtype == P.VAR_MEAN:
            count = self.emit("tl.sum(tl.where(xmask & rmask, 1.0, 0.0), 1)[:, None]")
            total = self.emit(f"tl.sum(tl.where(xmask & rmask, {value}, 0.0), 1)[:, None]")
            mean = self.emit(f"{total} / tl.maximum({count}, 1.0)")
            dev = self.emit(f"tl.where(xmask & rmask, {value} - {mean}, 0.0)")
            m2 = self.emit(f"tl.sum({dev} * {dev}, 1)[:, None]")
            return TV(mean, torch.float32), TV(m2, torch.float32), TV(count, torch.float32)
        masked = self._masked(value, rtype, acc_dtype)
        if rtype in (P.ARGMAX, P.ARGMIN):
            idx = self.emit(f"tl.broadcast_to(rindex, {masked}.shape)")
            return TV(self.emit(f"{rtype}_index({masked}, {idx}, 1)[:, None].to(tl.int64)"),
                      torch.int64)
        return TV(self.emit(self._final(rtype, masked, acc_dtype)), dtype)

    def _final(self, rtype: str, acc: str, acc_dtype) -> str:
        float_acc = acc_dtype.is_floating_point
        if rtype == P.SUM:
            return f"tl.sum({acc}, 1)[:, None]"
        if rtype == P.PROD:
            return f"tl.reduce({acc}, 1, _prod_combine)[:, None]"
        if rtype == P.AMAX:
            return f"max_reduce({acc}, 1)[:, None]" if float_acc else f"tl.max({acc}, 1)[:, None]"
        if rtype == P.AMIN:
            return f"min_reduce({acc}, 1)[:, None]" if float_acc else f"tl.min({acc}, 1)[:, None]"
        if rtype == P.ANY:
            return f"tl.max({acc}, 1)[:, None] != 0"
        if rtype == P.ALL:
            return f"tl.min({acc}, 1)[:, None] != 0"
        raise NotImplementedError(f"Triton codegen: reduction {rtype!r}")

    def _reduce_looped(self, rtype, value: TV, acc_dtype, dtype):
        loop, post = self.loop, self.loop + 1
        entry = self.deferred.get(value.name)
        if entry is not None:
            if entry[0] == "exp" and rtype == P.SUM and acc_dtype.is_floating_point:
                return TV(online_sum(self, entry, acc_dtype), dtype)
            raise NeedNewLoop()
        if self.section_of.get(value.name, 0) > loop:
            raise NeedNewLoop()
        shape = "[XBLOCK, RBLOCK]"
        if rtype == P.VAR_MEAN:
            m, m2, w = self.new_name("acc"), self.new_name("acc"), self.new_name("acc")
            for acc in (m, m2, w):
                self.raw(0, f"{acc} = tl.zeros({shape}, tl.float32)", acc)
            w_new = self.emit(f"{w} + tl.where(xmask & rmask, 1.0, 0.0)", loop)
            delta = self.emit(f"{value} - {m}", loop)
            m_new = self.emit(f"{m} + tl.where(xmask & rmask, {delta} / tl.maximum({w_new}, 1.0), 0.0)",
                              loop)
            self.raw(loop, f"{m2} = {m2} + tl.where(xmask & rmask, {delta} * ({value} - {m_new}), 0.0)")
            self.raw(loop, f"{m} = {m_new}")
            self.raw(loop, f"{w} = {w_new}")
            outs = [self.new_name() for _ in range(3)]
            self.raw(post, f"{', '.join(outs)} = welford_reduce({m}, {m2}, {w}, 1)", *outs)
            return tuple(TV(self.emit(f"{o}[:, None]", post), torch.float32) for o in outs)
        ident = _identity(rtype, acc_dtype)
        acc_type = "tl.int8" if rtype in (P.ANY, P.ALL) else triton_dtype(acc_dtype)
        if rtype in (P.ARGMAX, P.ARGMIN):
            acc, acc_i = self.new_name("acc"), self.new_name("acc")
            self.raw(0, f"{acc} = tl.full({shape}, {ident}, {acc_type})", acc)
            self.raw(0, f"{acc_i} = tl.full({shape}, 2147483647, {self.plan.index_dtype})", acc_i)
            masked = self._masked(value, rtype, acc_dtype, loop)
            idx = self.emit(f"tl.where(xmask & rmask, rindex, 2147483647)", loop)
            self.raw(loop, f"{acc}, {acc_i} = {rtype}_combine({acc}, {acc_i}, {masked}, {idx})")
            return TV(self.emit(f"{rtype}_index({acc}, {acc_i}, 1)[:, None].to(tl.int64)", post),
                      torch.int64)
        acc = self.new_name("acc")
        self.raw(0, f"{acc} = tl.full({shape}, {ident}, {acc_type})", acc)
        masked = self._masked(value, rtype, acc_dtype, loop)
        if rtype == P.AMAX and acc_dtype.is_floating_point and not self.masks:
            self.online_max[(value.name, loop)] = (masked, acc)
        combine = {P.SUM: "{0} + {1}", P.PROD: "{0} * {1}", P.ANY: "tl.maximum({0}, {1})",
                   P.ALL: "tl.minimum({0}, {1})",
                   P.AMAX: "maximum_propagate_nan({0}, {1})" if acc_dtype.is_floating_point
                   else "tl.maximum({0}, {1})",
                   P.AMIN: "minimum_propagate_nan({0}, {1})" if acc_dtype.is_floating_point
                   else "tl.minimum({0}, {1})"}[rtype]
        self.raw(loop, f"{acc} = {combine.format(acc, masked)}")
        self.section_of[acc] = 0
        return TV(self.emit(self._final(rtype, acc, acc_dtype), post), dtype)

    # -- rendering -------------------------------------------------------------------------
    def render(self, fn_name: str, args: list[str]) -> str:
        plan, p = self.plan, self.printer
        lines = [f"def {fn_name}({', '.join(args)}):"]
        int64 = plan.index_dtype == "tl.int64"
        if self.kind == "tiled":
            body = header_lines(plan.xco, p, int64, _var_lines) + self.sections[0].lines
            return "\n".join(lines + ["    " + line for line in body]) + "\n"
        body = [f"xnumel = {p(plan.xnumel)}"]
        pid = "tl.program_id(0).to(tl.int64)" if int64 else "tl.program_id(0)"
        body.append(f"xoffset = {pid} * XBLOCK")
        if self.kind == "pointwise":
            body.append("xindex = xoffset + tl.arange(0, XBLOCK)")
        else:
            body.append(f"rnumel = {p(plan.rnumel)}")
            body.append("xindex = xoffset + tl.arange(0, XBLOCK)[:, None]")
        body.append("xmask = xindex < xnumel")
        body += _var_lines(plan.xco, "xindex", p)
        rbase = "tl.arange(0, RBLOCK)[None, :]" + (".to(tl.int64)" if int64 else "")
        if self.kind == "persistent":
            body.append(f"rindex = {rbase}")
            body.append("rmask = rindex < rnumel")
            body += _var_lines(plan.rco, "rindex", p)
        body += self.sections[0].lines
        for k in range(1, len(self.sections), 2):
            body.append("for roffset in range(0, rnumel, RBLOCK):")
            loop_body = [f"rindex = roffset + {rbase}", "rmask = rindex < rnumel"]
            loop_body += _var_lines(plan.rco, "rindex", p) + self.sections[k].lines
            body += ["    " + line for line in loop_body]
            body += self.sections[k + 1].lines
        return "\n".join(lines + ["    " + line for line in body]) + "\n"


def _var_lines(co: Coalescing | None, flat: str, printer) -> list[str]:
    """`x0 = xindex // 768`, `x1 = xindex % 768` for the (merged) loop dims."""
    if co is None:
        return []
    out = []
    inner = sympy.Integer(1)
    n = len(co.new_vars)
    for pos in range(n - 1, -1, -1):
        size = co.ranges[pos]
        q = flat if inner == 1 else f"({flat} // ({printer(inner)}))"
        out.append(f"{co.new_vars[pos]} = {q}" if pos == 0 else
                   f"{co.new_vars[pos]} = {q} % ({printer(size)})")
        inner = inner * size
    return list(reversed(out))


def _flat_as_index(index: sympy.Expr, plan: IndexPlan) -> sympy.Expr:
    """`768*x0 + x1` (x0 = xindex // 768, x1 = xindex % 768, split because another access
    broadcasts over x0) as `xindex`: no division on the path of this access, and Triton sees a
    contiguous index it can load with vector instructions. Same for r over `rindex`."""
    if not plan.flat_indices:
        return index
    for co, flat_symbol in ((plan.xco, XINDEX), (plan.rco, RINDEX)):
        if co is None or len(co.new_vars) < 2:
            continue
        flat, inner = sympy.Integer(0), sympy.Integer(1)
        for var, size in reversed(list(zip(co.new_vars, co.ranges))):
            flat += var * inner
            inner = inner * size
        rest = sympy.expand(index - flat)
        if not rest.free_symbols & set(co.new_vars):
            index = rest + flat_symbol
    return index


def _upper(expr: sympy.Expr, ranges: dict) -> float:
    return bounds(expr, ranges).hi


def _ident(name: str) -> str:
    text = re.sub(r"[^A-Za-z0-9_]", "_", name)
    return text if text[0].isalpha() else f"b_{text}"
